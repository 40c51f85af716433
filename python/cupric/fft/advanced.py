"""cupric.fft.advanced: stateful FFT plans after nvmath-python's `nvmath.fft` (FFT, fft, ifft,
rfft, irfft), on either device. Transforms are unnormalised in both directions (as nvmath's), over
up to three axes, with optional prolog / epilog callbacks: Python functions compiled by
cupric.fft._callbacks (cuFFT JIT LTO callbacks on GPUs, elementwise passes on the CPU).

A callback is given as a function, or as {"function": fn, "operands": [arrays]}; it sees the
elements of the operand with the transform axes moved last, in C order (docs/fft.md)."""

import dataclasses

from .. import _cupric as _c
from .._shape_functions import ascontiguousarray as _contiguous
from . import _engine

__all__ = ["FFT", "FFTOptions", "fft", "ifft", "rfft", "irfft"]

_KINDS = {"C2C": "c2c", "R2C": "r2c", "C2R": "c2r"}


@dataclasses.dataclass
class FFTOptions:
    """fft_type: "C2C", "R2C" or "C2R" (None: R2C for real input, C2C for complex);
    last_axis_parity: "even" or "odd", the C2R output's last length 2 (m - 1) or 2 (m - 1) + 1."""

    fft_type: str | None = None
    last_axis_parity: str = "even"

    def __post_init__(self):
        if self.fft_type is not None and self.fft_type not in _KINDS:
            raise ValueError(f"fft_type must be 'C2C', 'R2C' or 'C2R', got {self.fft_type!r}")
        if self.last_axis_parity not in ("even", "odd"):
            raise ValueError(f"last_axis_parity must be 'even' or 'odd', got {self.last_axis_parity!r}")


def _options(options):
    if options is None:
        return FFTOptions()
    if isinstance(options, FFTOptions):
        return options
    if isinstance(options, dict):
        return FFTOptions(**options)
    raise TypeError(f"options must be an FFTOptions or a dict, got {type(options).__name__}")


def _compile_callback(spec, which, element):
    """(compiled callback, its operands) for a prolog or epilog given by the user, or None."""
    if spec is None:
        return None
    try:
        from ._callbacks import compile_callback
    except ModuleNotFoundError as err:
        if err.name != f"{__package__}._callbacks":
            raise
        raise NotImplementedError(f"FFT {which} callbacks need cupric.fft._callbacks (compile_callback), which "
                                  "this build of cupric lacks") from None
    fn, operands = (spec.get("function"), tuple(spec.get("operands", ()))) if isinstance(spec, dict) else (spec, ())
    return compile_callback(fn, which, element, operands), operands


class FFT:
    """A transform of one operand's layout: plan() once (compiles callbacks, makes the cuFFT plan),
    execute() as often as wanted, reset_operand() to run it on new data of the same layout."""

    def __init__(self, x, *, axes=None, options=None, prolog=None, epilog=None, stream=None):
        self._options = _options(options)
        self._prolog, self._epilog = prolog, epilog
        self._set_operand(x)
        nd = self._x.ndim
        axes = tuple(range(max(nd - 3, 0), nd)) if axes is None else tuple(axes)
        if not 1 <= len(axes) <= 3:
            raise ValueError(f"FFT transforms 1 to 3 axes, got axes={axes}")
        for a in axes:
            if not -nd <= a < nd:
                raise _c.AxisError(f"axis {a} is out of bounds for array of dimension {nd}")
        self._axes = tuple(a % nd for a in axes)
        if len(set(self._axes)) != len(self._axes):
            raise ValueError(f"FFT axes must be distinct, got {axes}")
        kind = self._options.fft_type or ("C2C" if self._x.dtype.kind == "c" else "R2C")
        self._kind = _KINDS[kind]
        real = self._x.dtype.kind != "c"
        if (self._kind == "r2c") != real:
            raise TypeError(f"a {kind} transform needs {'real' if self._kind == 'r2c' else 'complex'} input, "
                            f"got {self._x.dtype}")
        self._lengths = [self._x.shape[a] for a in self._axes]
        if self._kind == "c2r":
            self._lengths[-1] = 2 * (self._lengths[-1] - 1) + (self._options.last_axis_parity == "odd")
        if min(self._lengths) < 1:
            raise ValueError(f"Invalid number of FFT data points ({min(self._lengths)}) specified.")
        self._planned = None

    def _set_operand(self, x):
        x = x if isinstance(x, _c.ndarray) else _c.asarray(x)
        if x.dtype.name not in ("float32", "float64", "complex64", "complex128"):
            raise TypeError(f"FFT takes float32, float64, complex64 or complex128 operands, got {x.dtype}")
        self._x = x

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()

    def _element(self, which):
        x = self._x.dtype
        single = x.name in ("float32", "complex64")
        complex_ = {True: "complex64", False: "complex128"}[single]
        real = {True: "float32", False: "float64"}[single]
        if which == "prolog":
            return real if self._kind == "r2c" else complex_
        return real if self._kind == "c2r" else complex_

    def plan(self, *, prolog=None, epilog=None, stream=None):
        """Compiles the callbacks (given here or to the constructor): on a GPU to LTO-IR, with the
        device words of their operands, kept with the plan (cuFFT reads them as long as its plan
        lives; the cuFFT plan itself is made at the first execute and kept in the plan cache)."""
        prolog = prolog if prolog is not None else self._prolog
        epilog = epilog if epilog is not None else self._epilog
        self._planned = {"prolog": _compile_callback(prolog, "prolog", self._element("prolog")),
                         "epilog": _compile_callback(epilog, "epilog", self._element("epilog"))}
        self._cufft_callbacks, self._caller_info = None, []
        if self._x.device != "cpu":
            self._cufft_callbacks = self._gpu_callbacks() or None
        return self

    def _moved(self):
        nd, k = self._x.ndim, len(self._axes)
        y = _c.moveaxis(self._x, self._axes, list(range(nd - k, nd)))
        return y, list(range(nd - k, nd))

    def _gpu_callbacks(self):
        entries = []
        for which in ("prolog", "epilog"):
            compiled = self._planned[which]
            if compiled is None:
                continue
            cb, operands = compiled
            info = cb.caller_info(operands)
            self._caller_info.append((info, operands))
            pointer = _c._import_array(info).ptr if info is not None else 0  # the importer reads it
            entries.append((cb.ltoir(), cb.symbol, cb.cufft_type, pointer))
        return entries

    def execute(self, *, direction=None, stream=None, release_workspace=False):
        """The transform of the current operand: direction "forward" or "inverse" (C2C; R2C is
        forward and C2R inverse only), unnormalised. Returns a new array."""
        if self._planned is None:
            self.plan()
        forward = self._direction(direction)
        y, axes = self._moved()
        callbacks = self._cufft_callbacks
        if y.device == "cpu" and self._planned["prolog"]:
            cb, operands = self._planned["prolog"]
            y = cb.apply(y, operands)
        elif callbacks:
            y = _contiguous(y)  # callbacks see C-order offsets
        norm = "backward" if forward else "forward"  # no scaling either way
        r = _engine.execute(y, self._kind, axes, self._lengths, forward, norm, callbacks)
        if y.device == "cpu" and self._planned["epilog"]:
            cb, operands = self._planned["epilog"]
            r = cb.apply(r, operands)
        return _c.moveaxis(r, axes, self._axes)

    def _direction(self, direction):
        if direction is None:
            return self._kind != "c2r"
        if direction not in ("forward", "inverse"):
            raise ValueError(f"direction must be 'forward' or 'inverse', got {direction!r}")
        forward = direction == "forward"
        if self._kind == "r2c" and not forward:
            raise ValueError("an R2C transform runs forward only (direction='forward')")
        if self._kind == "c2r" and forward:
            raise ValueError("a C2R transform runs in the inverse direction only (direction='inverse')")
        return forward

    def reset_operand(self, operand=None, *, stream=None):
        """Points the plan at new data of the same shape, dtype and device."""
        if operand is None:
            return
        new = operand if isinstance(operand, _c.ndarray) else _c.asarray(operand)
        old = self._x
        if new.shape != old.shape or new.dtype != old.dtype or new.device != old.device:
            raise ValueError(f"reset_operand needs an operand like the plan's: {old.dtype} {old.shape} on "
                             f"{old.device}, got {new.dtype} {new.shape} on {new.device}")
        self._x = new

    reset_operands = reset_operand

    def free(self):
        """Lets go of the operand and the compiled callbacks (cached cuFFT plans stay in the cache)."""
        self._planned = self._cufft_callbacks = None
        self._caller_info = []
        self._x = None


def _function(x, axes, options, prolog, epilog, direction, kind):
    opts = _options(options)
    if kind is not None:
        opts = dataclasses.replace(opts, fft_type=kind)
    with FFT(x, axes=axes, options=opts, prolog=prolog, epilog=epilog) as f:
        return f.plan().execute(direction=direction)


def fft(x, axes=None, direction=None, options=None, prolog=None, epilog=None, stream=None):
    """C2C (complex input) or R2C (real input) transform over `axes`, unnormalised."""
    return _function(x, axes, options, prolog, epilog, direction, None)


def ifft(x, axes=None, options=None, prolog=None, epilog=None, stream=None):
    """The unnormalised inverse C2C transform over `axes`."""
    return _function(x, axes, options, prolog, epilog, "inverse", "C2C")


def rfft(x, axes=None, options=None, prolog=None, epilog=None, stream=None):
    """The R2C transform of real input over `axes` (the last one halved), unnormalised."""
    return _function(x, axes, options, prolog, epilog, "forward", "R2C")


def irfft(x, axes=None, options=None, prolog=None, epilog=None, stream=None):
    """The unnormalised C2R transform (options' last_axis_parity picks the output's last length)."""
    return _function(x, axes, options, prolog, epilog, "inverse", "C2R")
