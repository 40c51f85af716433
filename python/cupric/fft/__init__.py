"""cupric.fft: NumPy's numpy.fft and the Array API's fft extension on every device (pocketfft
through NumPy on the CPU, cuFFT on GPUs), a SciPy backend (scipy.fft.set_backend(cupric.fft)),
the cuFFT plan caches (cupric.fft.config) and nvmath-style plans (cupric.fft.advanced).
See docs/fft.md."""

from . import advanced, config  # noqa: F401
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq  # noqa: F401
from ._scipy import __ua_domain__, __ua_function__  # noqa: F401
from ._transforms import (  # noqa: F401
    fft,
    fft2,
    fftn,
    hfft,
    ifft,
    ifft2,
    ifftn,
    ihfft,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftn,
)

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fft2", "ifft2",
           "rfft2", "irfft2", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
