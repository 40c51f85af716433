"""NumPy's elementwise helpers, statistics, windows and polynomials composed from cupric's ufuncs,
reductions and views, so each runs on every device: iscomplex/isreal, isposinf, fix, sinc, modf,
frexp/ldexp, divmod, float_power, average, cov/corrcoef, gradient, trapezoid, convolve/correlate,
unwrap, geomspace, vander and the windows (polynomials: _polynomials.py)."""

import functools as _functools
import math as _math
import operator as _op

from . import _cupric as _c
from . import _dtypes as _dt
from ._namespace import finfo as _finfo
from ._operands import device_of, on

__all__ = ["iscomplex", "isreal", "iscomplexobj", "isrealobj", "isneginf", "isposinf", "real_if_close", "fix",
           "sinc", "modf", "frexp", "ldexp", "divmod", "float_power", "spacing", "average", "cov", "corrcoef",
           "gradient", "trapezoid", "convolve", "correlate", "unwrap", "interp", "geomspace", "vander", "bartlett",
           "blackman", "hamming", "hanning", "array_equiv", "euler_gamma"]

euler_gamma = 0.5772156649015329


def _arr(x):
    return x if isinstance(x, _c.ndarray) else _c.asarray(x)


def _is_complex(a):
    return _dt.kind(a.dtype) == "c"


def _float_of(a):
    """The floating dtype NumPy computes an integer or bool input's statistics in."""
    return a.dtype if _dt.kind(a.dtype) in "fc" else _dt.as_dtype("float64")


# ---- classification -------------------------------------------------------------------------------

def iscomplexobj(x):
    dtype = getattr(x, "dtype", None)
    return _dt.kind(dtype if dtype is not None else _c.asarray(x).dtype) == "c"


def isrealobj(x):
    return not iscomplexobj(x)


def iscomplex(x):
    a = _arr(x)
    return _c.imag(a) != 0 if _is_complex(a) else _c.zeros(a.shape, dtype="bool", device=a.device)


def isreal(x):
    a = _arr(x)
    return _c.imag(a) == 0 if _is_complex(a) else _c.ones(a.shape, dtype="bool", device=a.device)


def isposinf(x, out=None):
    a = _arr(x)
    if _is_complex(a):
        raise TypeError("This operation is not supported for complex values because it would be ambiguous.")
    return _c.logical_and(_c.isinf(a), _c.logical_not(_c.signbit(a)), out=out)


def isneginf(x, out=None):
    a = _arr(x)
    if _is_complex(a):
        raise TypeError("This operation is not supported for complex values because it would be ambiguous.")
    return _c.logical_and(_c.isinf(a), _c.signbit(a), out=out)


def real_if_close(a, tol=100):
    x = _arr(a)
    if not _is_complex(x):
        return x
    eps = float(_finfo(x.dtype).eps)
    limit = tol * eps if tol > 1 else tol
    return _c.real(x) if bool(_c.all(_c.abs(_c.imag(x)) < limit)) else x


def array_equiv(a1, a2):
    device = device_of(a1, a2)
    a, b = on(a1, device), on(a2, device)
    try:
        _c.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return bool(_c.all(a == b))


# ---- elementwise compositions -----------------------------------------------------------------------

def fix(x, out=None):
    """Rounds toward zero, keeping the dtype (floats stay floats)."""
    return _c.trunc(_arr(x), out=out)


def sinc(x):
    a = _arr(x)
    a = a if _dt.kind(a.dtype) in "fc" else a.astype("float64")
    y = _math.pi * _c.where(a == 0, _c.asarray(1.0e-20, dtype=a.dtype, device=a.device), a)
    return _c.sin(y) / y


def _check_outs(*outs):
    """Both outputs are checked before either is written (a bad second one leaves the first as it was)."""
    for out in outs:
        if out is not None and not isinstance(out, _c.ndarray):
            raise TypeError(f"out= must be a cupric array, got {type(out).__name__}")


def modf(x, out1=None, out2=None):
    _check_outs(out1, out2)
    a = _arr(x)
    whole = _c.trunc(a)
    frac = _c.where(_c.isinf(a), _c.copysign(_c.zeros_like(a), a), a - whole)
    if out1 is not None:
        out1[...] = frac
        frac = out1
    if out2 is not None:
        out2[...] = whole
        whole = out2
    return frac, whole


def divmod(x1, x2, out1=None, out2=None):
    _check_outs(out1, out2)
    return _c.floor_divide(x1, x2, out=out1), _c.remainder(x1, x2, out=out2)


def float_power(x1, x2):
    device = device_of(x1, x2)
    a, b = on(x1, device), on(x2, device)
    target = "complex128" if _is_complex(a) or _is_complex(b) else "float64"
    return _c.power(a.astype(target), b.astype(target))


def ldexp(x1, x2):
    """x1 * 2**x2, in two steps so that neither power overflows on its own (2**-1074 * 2**2000)."""
    device = device_of(x1, x2)
    a, e = on(x1, device), on(x2, device)
    if _dt.kind(e.dtype) not in "iub":
        raise TypeError("ufunc 'ldexp' not supported for the input types: the exponents must be integers")
    a = a if _dt.kind(a.dtype) == "f" else a.astype("float64")
    half = _c.floor_divide(e, 2).astype(a.dtype)
    rest = e.astype(a.dtype) - half
    two = _c.asarray(2.0, dtype=a.dtype, device=a.device)
    return a * _c.power(two, half) * _c.power(two, rest)


def frexp(x):
    """(mantissa in [0.5, 1), exponent) with x = mantissa * 2**exponent; 0, inf and NaN keep x, 0."""
    a = _arr(x)
    a = a if _dt.kind(a.dtype) == "f" else a.astype("float64")
    finite = _c.logical_and(_c.isfinite(a), a != 0)
    safe = _c.where(finite, _c.abs(a), _c.ones_like(a))
    exp = _c.floor(_c.log2(safe.astype("float64"))).astype("int32") + 1
    mant = ldexp(_c.where(finite, a, _c.ones_like(a)), -exp)
    # log2's rounding can land one off at powers of two: bring the mantissa into [0.5, 1)
    high = _c.abs(mant) >= 1
    mant = _c.where(high, mant / 2, mant)
    exp = _c.where(high, exp + 1, exp)
    low = _c.logical_and(_c.abs(mant) < 0.5, finite)
    mant = _c.where(low, mant * 2, mant)
    exp = _c.where(low, exp - 1, exp)
    return _c.where(finite, mant, a), _c.where(finite, exp, _c.zeros_like(exp))


def spacing(x):
    a = _arr(x)
    a = a if _dt.kind(a.dtype) == "f" else a.astype("float64")
    mag = _c.abs(a)
    inf = _c.asarray(float("inf"), dtype=a.dtype, device=a.device)
    step = _c.nextafter(mag, inf) - mag
    return _c.where(_c.signbit(a), -step, step)


# ---- statistics -----------------------------------------------------------------------------------

def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    x = _arr(a)
    if weights is None:
        avg = _c.mean(x, axis=axis, keepdims=keepdims)
        count = x.size / max(avg.size, 1) if x.size else 0.0
        scl = _c.full(avg.shape, count, dtype=avg.dtype, device=x.device)
        return (avg, scl) if returned else avg
    w = on(weights, x.device)
    if w.shape != x.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != 1:
            raise TypeError("1D weights expected when shapes of a and weights differ.")
        ax = axis if isinstance(axis, int) else None
        if ax is None:
            raise TypeError("1D weights expected when shapes of a and weights differ (a single axis).")
        ax %= x.ndim
        if w.shape[0] != x.shape[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        w = _c.moveaxis(_c.broadcast_to(w, x.shape[:ax] + x.shape[ax + 1:] + (w.shape[0],)), -1, ax)
    result_dtype = _c.result_type(x.dtype, w.dtype, 1.0)
    scl = _c.sum(w, axis=axis, keepdims=keepdims, dtype=result_dtype)
    if bool(_c.any(scl == 0)):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = _c.sum(_c.multiply(x, w, dtype=result_dtype), axis=axis, keepdims=keepdims) / scl
    return (avg, _c.broadcast_to(scl, avg.shape)) if returned else avg


def _rows(v, rowvar, device=None):
    """m (or y) as NumPy's cov reads it: at least 2-D, one variable per row."""
    x = on(v, device)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = x.reshape(1, -1) if x.ndim < 2 else x
    return x.T if not rowvar and x.shape[0] != 1 else x


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    device = device_of(m, y)
    x = _rows(m, rowvar, device)
    if y is not None:
        x = _c.concatenate([x, _rows(y, rowvar, device).astype(x.dtype)], axis=0)
    x = x.astype(dtype or _c.result_type(x.dtype, "float64"))
    ddof = (0 if bias else 1) if ddof is None else ddof
    w = None if fweights is None else on(fweights, x.device).astype("float64")
    if aweights is not None:
        aw = on(aweights, x.device).astype("float64")
        w = aw if w is None else w * aw
    if w is None:
        fact = x.shape[1] - ddof
        xc = x - _c.mean(x, axis=1, keepdims=True)
        xw = xc
    else:
        wsum = float(_c.sum(w))
        xc = x - _c.sum(x * w, axis=1, keepdims=True) / wsum
        xw = xc * w
        if ddof == 0:
            fact = wsum
        elif aweights is None:
            fact = wsum - ddof
        else:
            fact = wsum - ddof * float(_c.sum(w * on(aweights, x.device).astype("float64"))) / wsum
    c = _c.matmul(xw, _c.conj(xc).T) / max(fact, 0.0)
    return c.reshape(()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _c.sqrt(_c.real(c[_diag_idx(c.shape[0], c.device)]))
    c = c / d.reshape(-1, 1) / d.reshape(1, -1)
    return _c.clip(_c.real(c), -1, 1) if not _is_complex(c) else c


def _diag_idx(n, device):
    i = _c.arange(n, device=device)
    return i, i


def _slab(x, ax, lo, hi):
    """x[..., lo:hi, ...] with the slice on axis ax."""
    s = [slice(None)] * x.ndim
    s[ax] = slice(lo, hi)
    return x[tuple(s)]


def gradient(f, *varargs, axis=None, edge_order=1):
    x = _arr(f)
    x = x if _dt.kind(x.dtype) in "fc" else x.astype("float64")
    axes = list(range(x.ndim)) if axis is None else [a % x.ndim for a in (axis if isinstance(axis, (tuple, list))
                                                                          else (axis,))]
    spacings = list(varargs) if varargs else [1.0] * len(axes)
    if len(spacings) == 1 and len(axes) > 1:
        spacings = spacings * len(axes)
    if len(spacings) != len(axes):
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    out = []
    for ax, h in zip(axes, spacings, strict=True):
        n = x.shape[ax]
        if n < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) "
                             "elements are required.")
        if not isinstance(h, (int, float)) and on(h, x.device).ndim == 1:
            out.append(_gradient_uneven(x, on(h, x.device).astype(x.dtype), ax, edge_order))
            continue
        h = float(_arr(h)) if not isinstance(h, (int, float)) else float(h)
        part = _functools.partial(_slab, x, ax)
        interior = (part(2, None) - part(None, -2)) / (2 * h)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / h
            last = (part(n - 1, n) - part(n - 2, n - 1)) / h
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 2) - 0.5 * part(2, 3)) / h
            last = (0.5 * part(n - 3, n - 2) - 2 * part(n - 2, n - 1) + 1.5 * part(n - 1, n)) / h
        out.append(_c.concatenate([first, interior, last], axis=ax))
    return out[0] if len(out) == 1 else tuple(out)


def _gradient_uneven(x, coords, ax, edge_order):
    n = x.shape[ax]
    if coords.shape[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding dimension")
    dx = coords[1:] - coords[:-1]
    shape = [1] * x.ndim
    shape[ax] = -1

    part = _functools.partial(_slab, x, ax)

    d1, d2 = dx[:-1].reshape(shape), dx[1:].reshape(shape)
    a = -d2 / (d1 * (d1 + d2))
    b = (d2 - d1) / (d1 * d2)
    c = d1 / (d2 * (d1 + d2))
    interior = a * part(None, -2) + b * part(1, -1) + c * part(2, None)
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / dx[0]
        last = (part(n - 1, n) - part(n - 2, n - 1)) / dx[-1]
    else:
        h1, h2 = dx[0], dx[1]
        first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * part(0, 1) + (h1 + h2) / (h1 * h2) * part(1, 2)
                 - h1 / (h2 * (h1 + h2)) * part(2, 3))
        h1, h2 = dx[-2], dx[-1]
        last = (h2 / (h1 * (h1 + h2)) * part(n - 3, n - 2) - (h2 + h1) / (h1 * h2) * part(n - 2, n - 1)
                + (2 * h2 + h1) / (h2 * (h1 + h2)) * part(n - 1, n))
    return _c.concatenate([first, interior, last], axis=ax)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    v = _arr(y)
    ax = axis % v.ndim
    n = v.shape[ax]
    lo = [slice(None)] * v.ndim
    hi = [slice(None)] * v.ndim
    lo[ax], hi[ax] = slice(None, -1), slice(1, None)
    if x is None:
        d = dx
    else:
        xs = on(x, v.device)
        if xs.ndim == 1:
            d = (xs[1:] - xs[:-1]).reshape([-1 if i == ax else 1 for i in range(v.ndim)])
        else:
            d = xs[tuple(hi)] - xs[tuple(lo)]
    if n == 0:
        return _c.sum(v, axis=ax) * 0.0
    return _c.sum(d * (v[tuple(hi)] + v[tuple(lo)]) / 2.0, axis=ax)


def _windows(v, m):
    """(n - m + 1, m) sliding windows of a 1-D array, as one gather."""
    n = v.shape[0]
    idx = _c.arange(n - m + 1, device=v.device).reshape(-1, 1) + _c.arange(m, device=v.device).reshape(1, -1)
    return v[idx]


def correlate(a, v, mode="valid"):
    device = device_of(a, v)
    x, y = on(a, device), on(v, device)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError("object too deep for desired array")
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError("a cannot be empty" if x.shape[0] == 0 else "v cannot be empty")
    n, m = x.shape[0], y.shape[0]
    swapped = m > n
    if swapped:
        x, y, n, m = y, x, m, n
    pad = {"valid": 0, "same": m // 2, "full": m - 1}.get(mode)
    if pad is None:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    dtype = _c.result_type(x.dtype, y.dtype)
    right = {"valid": 0, "same": m - 1 - m // 2, "full": m - 1}[mode]
    zeros_l = _c.zeros((pad,), dtype=dtype, device=x.device)
    zeros_r = _c.zeros((right,), dtype=dtype, device=x.device)
    xp = _c.concatenate([zeros_l, x.astype(dtype), zeros_r])
    yy = _c.conj(y.astype(dtype))
    out = _c.sum(_windows(xp, m) * yy.reshape(1, -1), axis=1)
    if swapped:  # correlate(v, a) is the reverse conjugate of correlate(a, v)
        out = _c.conj(out[::-1])
    return out


def convolve(a, v, mode="full"):
    device = device_of(a, v)
    x, y = on(a, device), on(v, device)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError("object too deep for desired array")
    if y.shape[0] > x.shape[0]:
        x, y = y, x
    return correlate(x, _c.conj(y[::-1]), mode)


def unwrap(p, discont=None, axis=-1, *, period=6.283185307179586):
    x = _arr(p)
    x = x if _dt.kind(x.dtype) == "f" else x.astype("float64")
    ax = axis % x.ndim
    discont = period / 2 if discont is None else discont
    lo = [slice(None)] * x.ndim
    hi = [slice(None)] * x.ndim
    lo[ax], hi[ax] = slice(None, -1), slice(1, None)
    dd = x[tuple(hi)] - x[tuple(lo)]
    half = period / 2
    ddmod = _c.remainder(dd + half, period) - half
    ddmod = _c.where(_c.logical_and(ddmod == -half, dd > 0), half, ddmod)
    correct = _c.where(_c.abs(dd) < discont, 0.0, ddmod - dd)
    head = [slice(None)] * x.ndim
    head[ax] = slice(0, 1)
    return _c.concatenate([x[tuple(head)], x[tuple(hi)] + _c.cumsum(correct, axis=ax)], axis=ax)


def interp(x, xp, fp, left=None, right=None, period=None):
    """NumPy's one-dimensional linear interpolation: float64 (complex128 for complex fp) results,
    fp[0] / fp[-1] (or left / right) outside xp, `period` wrapping the coordinates."""
    device = device_of(x, xp, fp)
    xs, xps, fps = on(x, device), on(xp, device), on(fp, device)
    if xps.ndim != 1 or fps.ndim != 1:
        raise ValueError("Data points must be 1-D sequences")
    if xps.shape[0] != fps.shape[0]:
        raise ValueError("fp and xp are not of the same length")
    if xps.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    work = "complex128" if _is_complex(fps) else "float64"
    xs, xps, fps = xs.astype("float64"), xps.astype("float64"), fps.astype(work)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        xs = _c.remainder(xs, period)
        xps = _c.remainder(xps, period)
        order = _c.argsort(xps)
        xps, fps = xps[order], fps[order]
        xps = _c.concatenate([xps[-1:] - period, xps, xps[0:1] + period])
        fps = _c.concatenate([fps[-1:], fps, fps[0:1]])
    n = xps.shape[0]
    j = _c.clip(_c.searchsorted(xps, xs, side="right") - 1, 0, max(n - 2, 0))
    x0, f0 = xps[j], fps[j]
    if n > 1:
        x1, f1 = xps[j + 1], fps[j + 1]
        slope = (f1 - f0) / (x1 - x0)
        y = slope * (xs - x0) + f0
        y = _c.where(xs == x1, f1, y)  # exactly on the next point (also past a zero-width step)
        y = _c.where(_c.logical_and(_c.logical_not(_c.isfinite(slope)), xs == x0), f0, y)
    else:
        y = f0 + 0 * xs
    lo = fps[0] if left is None else _c.asarray(left, dtype=work, device=xs.device)
    hi = fps[-1] if right is None else _c.asarray(right, dtype=work, device=xs.device)
    y = _c.where(xs < xps[0], lo, y)
    y = _c.where(xs > xps[-1], hi, y)
    return y


# ---- creation -------------------------------------------------------------------------------------

def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0, *, device=None):
    a, b = _c.asarray(start, device=device), _c.asarray(stop, device=device)
    if bool(_c.any(a == 0)) or bool(_c.any(b == 0)):
        raise ValueError("Geometric sequence cannot include zero")
    work = "complex128" if _is_complex(a) or _is_complex(b) else "float64"
    a, b = a.astype(work), b.astype(work)
    flip = _c.logical_and(_c.real(a) < 0, _c.real(b) < 0) if work == "float64" else None
    if flip is not None:
        a, b = _c.where(flip, -a, a), _c.where(flip, -b, b)
    out = _c.logspace(_c.log10(a), _c.log10(b), num, endpoint=endpoint, base=10.0, axis=0)
    if num > 0:
        out[0] = a
        if endpoint and num > 1:
            out[-1] = b
    if flip is not None:
        out = _c.where(flip, -out, out)
    out = _c.moveaxis(out, 0, axis) if axis else out
    return out.astype(dtype) if dtype is not None else out.astype(_c.result_type(work, start, stop))


def vander(x, N=None, increasing=False):
    v = _arr(x)
    if v.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = v.shape[0] if N is None else _op.index(N)
    powers = _c.arange(n, device=v.device)
    powers = powers if increasing else powers[::-1]
    out = _c.power(v.reshape(-1, 1), powers.reshape(1, -1).astype(v.dtype))
    return out


def _window(M, fn):
    M = _op.index(M)
    if M < 1:
        return _c.zeros((0,), dtype="float64")
    if M == 1:
        return _c.ones((1,), dtype="float64")
    return fn(_c.arange(M, dtype="float64"), M)


def bartlett(M):
    return _window(M, lambda n, M: 1 - _c.abs(2 * n / (M - 1) - 1))


def hanning(M):
    return _window(M, lambda n, M: 0.5 - 0.5 * _c.cos(2 * _math.pi * n / (M - 1)))


def hamming(M):
    return _window(M, lambda n, M: 0.54 - 0.46 * _c.cos(2 * _math.pi * n / (M - 1)))


def blackman(M):
    return _window(M, lambda n, M: 0.42 - 0.5 * _c.cos(2 * _math.pi * n / (M - 1))
                   + 0.08 * _c.cos(4 * _math.pi * n / (M - 1)))
