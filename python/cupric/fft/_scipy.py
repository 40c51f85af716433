"""cupric.fft as a SciPy FFT backend (the uarray protocol: `scipy.fft.set_backend(cupric.fft)`):
SciPy's fft functions called on cupric arrays run in cupric; anything else (NumPy input, dct/dst,
the Hermitian n-D forms, a `plan=`) answers NotImplemented, so SciPy tries its next backend."""

from .. import _cupric as _c
from . import _transforms

__ua_domain__ = "numpy.scipy.fft"

_ONE_AXIS = ("x", "n", "axis", "norm", "overwrite_x", "workers")
_N_AXES = ("x", "s", "axes", "norm", "overwrite_x", "workers")
_SIGNATURES = {name: _ONE_AXIS for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")}
_SIGNATURES.update({name: _N_AXES for name in ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
                                                 "irfftn")})


def __ua_function__(method, args, kwargs):
    name = getattr(method, "__name__", None)
    names = _SIGNATURES.get(name)
    if names is None or len(args) > len(names):
        return NotImplemented
    bound = dict(zip(names, args, strict=False))  # (args may be fewer)
    for key, value in kwargs.items():
        if key in bound or key not in names + ("plan",):
            return NotImplemented
        bound[key] = value
    if bound.pop("plan", None) is not None or not isinstance(bound.get("x"), _c.ndarray):
        return NotImplemented
    bound.pop("overwrite_x", None)  # a hint; cupric never writes into its input
    bound.pop("workers", None)  # cupric's thread count (cu.set_num_threads) governs
    return getattr(_transforms, name)(bound.pop("x"), **bound)
