"""Order statistics on every device, from one sort along the reduced axes: median, quantile and
percentile with every NumPy method (and NumPy's weights= for inverted_cdf), their nan-variants
(each slice's count of numbers as its length), and ptp. NumPy's formulas (Hyndman & Fan's
virtual indexes, its lerp), NumPy's dtypes. One long column on a GPU is not sorted: the ranks
the formulas read are selected (sorting.hpp's select_ranks, a radix select)."""

import math as _math
import warnings as _warnings

from . import _cupric as _c
from . import _dtypes as _dt
from ._sorting import _axis, take_along_axis

__all__ = ["median", "nanmedian", "quantile", "nanquantile", "percentile", "nanpercentile", "ptp"]

# Hyndman & Fan's (alpha, beta) of the continuous methods: virtual index n*q + alpha + q*(1-alpha-beta) - 1
_CONTINUOUS = {"interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
            "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest")


def _reduced_axes(axis, ndim):
    """The reduced axes as a tuple of non-negative ints, in the order given."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    axes = tuple(_axis(ax, ndim) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    return axes


# the shortest column a GPU selects from rather than sorts, and the most ranks it selects (each
# 8 of them read the data once a key byte)
_SELECT_MIN = 1 << 16
_SELECT_MAX_RANKS = 32


class _Selected:
    """Stands for the sorted (N, 1) slices of one long column on a GPU without sorting it:
    _gather selects the rows asked for; the unsorted column serves what the order does not change
    (the NaN count, the shape)."""

    def __init__(self, flat):
        self.unsorted = flat
        self.shape, self.dtype, self.device = flat.shape, flat.dtype, flat.device


def _selectable(flat, ranks):
    """Whether `ranks` rows of the (N, R) slices come cheaper by selection than by a sort."""
    return (flat.device.type == "cuda" and flat.shape[1] == 1 and flat.shape[0] >= _SELECT_MIN
            and _dt.kind(flat.dtype) != "c" and ranks <= _SELECT_MAX_RANKS)


def _unsorted(s):
    """The slices in some order: the sorted ones, or the column a _Selected stands for."""
    return s.unsorted if isinstance(s, _Selected) else s


def _sorted_slices(a, axis, sort=True, ranks=None):
    """`a` sorted along the reduced axes, moved first and merged: (sorted (N, R), the kept shape,
    the keepdims shape); unsorted when not `sort`; a _Selected when `ranks` (how many rows will
    be gathered) are selected cheaper."""
    axes = _reduced_axes(axis, a.ndim)
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = _c.permute_dims(a, tuple(axes) + tuple(kept)) if a.ndim else a.reshape(1)
    kept_shape = tuple(a.shape[d] for d in kept)
    n = _math.prod(a.shape[d] for d in axes) if a.ndim else 1
    flat = moved.reshape((n, _math.prod(kept_shape)))
    keep_shape = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
    if sort and ranks is not None and _selectable(flat, ranks):
        return _Selected(flat), kept_shape, keep_shape
    return (_c.sort(flat, axis=0) if sort else flat), kept_shape, keep_shape


def _gather(s, *idxs):
    """s[idx[q, r], r] for the sorted (N, R) slices, for each idx ((Q, R) or (Q, 1)); one array
    for one idx, else a list. A _Selected selects all of them at once."""
    if isinstance(s, _Selected):
        flat = _c.concatenate([idx.reshape(-1) for idx in idxs])
        picked = _c._select_ranks(s.unsorted, flat)
        out, at = [], 0
        for idx in idxs:
            out.append(picked[at:at + idx.size].reshape(idx.shape))
            at += idx.size
    else:
        out = [s[idx, _c.arange(s.shape[1], device=s.device)] for idx in idxs]
    return out[0] if len(out) == 1 else out


def _lerp(a, b, t, weak_dtype=None):
    """NumPy's lerp; with `weak_dtype`, t and 1 - t join the arithmetic as weak Python floats
    would: computed in float64, then rounded to the data's dtype."""
    diff = b - a
    one_minus = 1 - t
    upper = t >= 0.5
    if weak_dtype is not None:
        t, one_minus = t.astype(weak_dtype), one_minus.astype(weak_dtype)
    return _c.where(upper, b - diff * one_minus, a + diff * t)


def _virtual_index(method, n, q):
    """NumPy's virtual index of quantile q in n sorted numbers (an int64 array for the
    discrete methods)."""
    if method == "linear":
        return (n - 1) * q
    if method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        return n * q + (alpha + q * (1 - alpha - beta)) - 1
    if method == "averaged_inverted_cdf":
        return n * q - 1
    if method == "midpoint":
        return 0.5 * (_c.floor((n - 1) * q) + _c.ceil((n - 1) * q))
    if method in ("inverted_cdf", "closest_observation"):
        index = n * q - 1 if method == "inverted_cdf" else n * q - 1 - 0.5
        below = _c.floor(index)
        at_order = (index - below) == 0
        if method == "closest_observation":
            at_order = _c.logical_and(at_order, _c.remainder(below, 2) == 1)
        return _c.maximum(_c.where(at_order, below, below + 1).astype("int64"), 0)
    if method == "lower":
        return _c.floor((n - 1) * q).astype("int64")
    if method == "higher":
        return _c.ceil((n - 1) * q).astype("int64")
    return _c.rint((n - 1) * q).astype("int64")  # nearest: round half to even, as np.around


def _quantile_of_sorted(s, q, n, method, weak_q, also=None):
    """Quantiles (Q, R) of the sorted slices s (N, R) holding n numbers each (an int, or an int64
    array (R,) for the nan-variants); q is a float array (Q, 1). also: more rows of s (an index
    array) gathered with them: then (quantiles, those rows)."""
    last = n - 1
    vi = _virtual_index(method, n, q)
    extra = () if also is None else (also,)
    if method in _DISCRETE:
        idx = _c.clip(vi, 0, max(last, 0) if isinstance(last, int) else _c.maximum(last, 0))
        return _gather(s, idx if idx.ndim == 2 else idx.reshape(-1, 1), *extra)
    prev = _c.floor(vi)
    above = _c.logical_or(vi >= last, _c.isnan(vi))
    prev_i = _c.where(above, last, _c.where(vi < 0, 0, prev)).astype("int64")
    next_i = _c.where(above, last, _c.where(vi < 0, 0, prev + 1)).astype("int64")
    gamma = vi - prev
    if method == "averaged_inverted_cdf":
        gamma = _c.where(gamma == 0, 0.5, 1.0).astype(vi.dtype)
    elif method == "midpoint":
        gamma = _c.where(_c.remainder(vi, 1) == 0, 0.0, 0.5).astype(vi.dtype)
    weak_dtype = s.dtype if weak_q and _dt.kind(s.dtype) == "f" else None
    shape = lambda i: i if i.ndim == 2 else i.reshape(-1, 1)  # noqa: E731
    prev_i, next_i = _c.maximum(shape(prev_i), 0), _c.maximum(shape(next_i), 0)
    gamma = gamma if gamma.ndim == 2 else gamma.reshape(-1, 1)
    below, above, *rest = _gather(s, prev_i, next_i, *extra)
    result = _lerp(below, above, gamma, weak_dtype)
    return (result, *rest) if rest else result


def _check_q(q, hi, what):
    if q.size and not bool(_c.all(_c.logical_and(q >= 0, q <= hi))):
        raise ValueError(f"{what} must be in the range [0, {hi}]")


def _finish(result, kept_shape, keep_shape, q_shape, keepdims, out):
    result = result.reshape(q_shape + (keep_shape if keepdims else kept_shape))
    if out is not None:
        out[...] = result
        return out
    return result


def _checked_weights(weights, a, axis):
    """NumPy's _weights_are_valid: weights of a's shape, or of the reduced axes' shapes (in
    `axis` order) broadcast along the kept ones; none negative."""
    w = _c.asarray(weights, device=a.device)
    if w.shape != a.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        axes = _reduced_axes(axis, a.ndim)
        if w.shape != tuple(a.shape[ax] for ax in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        w = _c.permute_dims(w, tuple(sorted(range(len(axes)), key=lambda i: axes[i])))
        w = _c.broadcast_to(w.reshape(tuple(s if ax in axes else 1 for ax, s in enumerate(a.shape))), a.shape)
    if w.size and bool(_c.any(w < 0)):
        raise ValueError("Weights must be non-negative.")
    return w


def _weighted_inverted_cdf(a, w, q, axis, nan):
    """NumPy's weighted inverted_cdf over the slices: the first sorted element whose share of the
    slice's weight, accumulated in float64, reaches q (NaN elements weigh nothing for `nan`).
    Returns (result (Q, R), the sorted slices, their counts of numbers or None, shapes)."""
    flat, kept_shape, keep_shape = _sorted_slices(a, axis, sort=False)
    perm = _c.argsort(flat, axis=0)
    s = take_along_axis(flat, perm, axis=0)
    ws = take_along_axis(_sorted_slices(w, axis, sort=False)[0], perm, axis=0)
    n = s.shape[0]
    if nan and _dt.kind(a.dtype) == "f":
        numbers = _c.logical_not(_c.isnan(s))
        ws = _c.where(numbers, ws, 0)
        n = _c.count_nonzero(numbers, axis=0)
    cdf = _c.cumsum(ws, axis=0, dtype="float64")
    total = cdf[-1:]
    if not isinstance(n, int):
        total = _c.where(n == 0, 1.0, total)  # all-NaN slices: NaN later, not an error
    cdf = cdf / total
    if bool(_c.any(_c.isnan(cdf[-1]))):
        raise ValueError("Weights included NaN, inf or were all zero.")
    if _dt.kind(q.dtype) == "f":
        cdf = cdf.astype(q.dtype)
    cdf = _c.where(cdf == 0, -1, cdf).astype(cdf.dtype)  # leading zero weights: never reach q = 0
    # searchsorted(cdf[:, r], q, side="left") for every slice: the number of cdf values below q
    below = _c.sum(cdf.reshape((1,) + cdf.shape) < q.reshape(-1, 1, 1), axis=1)
    idx = _c.maximum(_c.minimum(below, n - 1), 0)
    return _gather(s, idx), s, (None if isinstance(n, int) else n), kept_shape, keep_shape


def _quantile_weighted(a, q, axis, out, keepdims, weights, nan):
    result, s, n, kept_shape, keep_shape = _weighted_inverted_cdf(a, weights, q, axis, nan)
    if n is not None:
        empty = n == 0
        if bool(_c.any(empty)):
            _warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
            result = _c.where(empty, float("nan"), result).astype(result.dtype)
    elif _dt.kind(a.dtype) == "f":
        result = _c.where(_c.isnan(s[-1]), s[-1], result)
    return _finish(result, kept_shape, keep_shape, q.shape, keepdims, out)


def _quantile(a, q, axis, out, method, keepdims, weights, nan, weak_q):
    if weights is not None:
        if method != "inverted_cdf":
            raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
        weights = _checked_weights(weights, a, axis)
        if q.ndim > 2:
            raise ValueError("q must be a scalar or 1d")
        if _dt.kind(a.dtype) == "c":
            raise TypeError("a must be an array of real numbers")
        if a.size == 0:
            raise IndexError("index -1 is out of bounds for axis 0 with size 0")
        return _quantile_weighted(a, q, axis, out, keepdims, weights, nan)
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {_METHODS}")
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    if _dt.kind(a.dtype) == "c":
        raise TypeError("a must be an array of real numbers")
    s, kept_shape, keep_shape = _sorted_slices(a, axis, ranks=2 * q.size + 1)
    weak_q = weak_q is True or (weak_q == "numpy" and kept_shape == () and not nan)
    if s.shape[0] == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    if _dt.kind(q.dtype) != "f":
        q = q.astype("float64")
    q_col = q.reshape(-1, 1)
    floating = _dt.kind(a.dtype) == "f"
    if nan and floating:
        n = s.shape[0] - _c.count_nonzero(_c.isnan(_unsorted(s)), axis=0)
        result = _quantile_of_sorted(s, q_col, n, method, weak_q)
        empty = n == 0
        if bool(_c.any(empty)):
            _warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
            result = _c.where(empty, float("nan"), result)
    elif floating:  # NaN sorts last: a slice with one has it in its last row
        last_row = _c.full((1, 1), s.shape[0] - 1, dtype="int64", device=a.device)
        result, last = _quantile_of_sorted(s, q_col, s.shape[0], method, weak_q, also=last_row)
        result = _c.where(_c.isnan(last), last, result)
    else:
        result = _quantile_of_sorted(s, q_col, s.shape[0], method, weak_q)
    return _finish(result, kept_shape, keep_shape, q.shape, keepdims, out)


def _q_array(q, a):
    """q as an array, and whether it promotes as a weak scalar: a Python number always; a NumPy
    scalar only when the whole array is reduced (there NumPy's lerp meets NumPy scalars)."""
    if type(q) in (int, float):
        weak = True
    elif type(q).__module__ == "numpy" and type(q).__name__ != "ndarray":  # a NumPy scalar
        weak = "numpy"
    else:
        weak = False
    return _c.asarray(q, device=a.device), weak


def _entry(a, q, axis, out, method, keepdims, weights, interpolation, nan, percent):
    """What quantile, nanquantile, percentile and nanpercentile share: q read as an array (percent:
    divided by 100), checked, then the one _quantile."""
    a = _c.asarray(a)
    q, weak = _q_array(q, a)
    if percent:
        if _dt.kind(a.dtype) == "c":
            raise TypeError("a must be an array of real numbers")
        q = _percent(q)
    _check_q(q, 1, "Percentiles" if percent else "Quantiles")
    return _quantile(a, q, axis, out, interpolation or method, keepdims, weights, nan, weak)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
             interpolation=None):
    """numpy.quantile: the q-th quantiles (0 <= q <= 1) along `axis` by `method`."""
    return _entry(a, q, axis, out, method, keepdims, weights, interpolation, nan=False, percent=False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None, interpolation=None):
    """numpy.nanquantile: quantile ignoring NaN (NaN for slices of only NaN, with a warning)."""
    return _entry(a, q, axis, out, method, keepdims, weights, interpolation, nan=True, percent=False)


def _percent(q):
    return q / 100


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, interpolation=None):
    """numpy.percentile: quantile with q in percent."""
    return _entry(a, q, axis, out, method, keepdims, weights, interpolation, nan=False, percent=True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None):
    """numpy.nanpercentile: nanquantile with q in percent."""
    return _entry(a, q, axis, out, method, keepdims, weights, interpolation, nan=True, percent=True)


def _median(a, axis, out, keepdims, nan):
    a = _c.asarray(a)
    s, kept_shape, keep_shape = _sorted_slices(a, axis, ranks=3)
    floating = _dt.kind(a.dtype) in "fc"
    if nan and _dt.kind(a.dtype) == "f":
        n = s.shape[0] - _c.count_nonzero(_c.isnan(_unsorted(s)), axis=0)
    else:
        n = s.shape[0]
    if s.shape[0] == 0:
        _warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=3)
        result = _c.full((1, s.shape[1]), float("nan"), dtype=_c.mean(s[:0], axis=0).dtype, device=a.device)
    else:
        if isinstance(n, int):
            lo = _c.full((1, 1), (n - 1) // 2, dtype="int64", device=a.device)
            hi = _c.full((1, 1), n // 2, dtype="int64", device=a.device)
        else:
            lo = _c.maximum((n - 1) // 2, 0).reshape(1, -1)
            hi = _c.maximum(n // 2, 0).reshape(1, -1)
        checks_nan = floating and not (nan and _dt.kind(a.dtype) == "f")
        last_row = _c.full((1, 1), s.shape[0] - 1, dtype="int64", device=a.device)
        low, high, *last = _gather(s, lo, hi, *((last_row,) if checks_nan else ()))
        result = _c.mean(_c.concatenate([low, high]), axis=0, keepdims=True)
        if not checks_nan and floating:
            empty = n == 0
            if bool(_c.any(empty)):
                _warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
                result = _c.where(empty, float("nan"), result)
        elif checks_nan:  # NaN sorts last: a slice with one has it in its last row
            result = _c.where(_c.isnan(last[0]), last[0].astype(result.dtype), result)
    return _finish(result, kept_shape, keep_shape, (), keepdims, out)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.median: the mean of the middle one or two of each sorted slice (NaN if it has one)."""
    return _median(a, axis, out, keepdims, False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.nanmedian: median ignoring NaN (NaN for slices of only NaN, with a warning)."""
    return _median(a, axis, out, keepdims, True)


def ptp(a, axis=None, out=None, keepdims=False):
    """numpy.ptp: max - min along `axis`."""
    a = _c.asarray(a)
    result = _c.subtract(_c.max(a, axis=axis, keepdims=keepdims), _c.min(a, axis=axis, keepdims=keepdims))
    if out is not None:
        out[...] = result
        return out
    return result
