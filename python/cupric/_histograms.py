"""Counting on every device, composed of sort and searchsorted: digitize, bincount, histogram,
histogram_bin_edges (NumPy's bin rules), histogram2d and histogramdd. The data stays on its
device; only scalars (ranges, bin widths) come to the host."""

import math as _math
import operator as _operator
import warnings as _warnings

from . import _cupric as _c
from . import _dtypes as _dt
from . import _quantiles

__all__ = ["digitize", "bincount", "histogram", "histogram_bin_edges", "histogram2d", "histogramdd"]


def _one_d(x, what="object"):
    if x.ndim == 0:
        raise ValueError(f"{what} of too small depth for desired array")
    if x.ndim > 1:
        raise ValueError(f"{what} too deep for desired array")


def digitize(x, bins, right=False):
    """numpy.digitize: the index of the bin of each x in the monotonic `bins`."""
    x = _c.asarray(x)
    bins = _c.asarray(bins, device=x.device)
    if _dt.kind(x.dtype) == "c":
        raise TypeError("x may not be complex")
    _one_d(bins)
    side = "left" if right else "right"
    if bins.size > 1:
        up = bool(_c.all(bins[1:] >= bins[:-1]))
        if not up and not bool(_c.all(bins[1:] <= bins[:-1])):
            raise ValueError("bins must be monotonically increasing or decreasing")
        if not up:
            return bins.size - _c.searchsorted(bins[::-1], x, side=side)
    return _c.searchsorted(bins, x, side=side)


def _bin_counts(sorted_values, edges, cumulative=None):
    """Counts (or sums of `cumulative`'s steps) of the sorted values in [e_i, e_i+1), the last
    bin closed."""
    left = _c.searchsorted(sorted_values, edges[:-1], side="left")
    last = _c.searchsorted(sorted_values, edges[-1:], side="right")
    right = _c.concatenate([left[1:], last])
    if cumulative is None:
        return right - left
    return cumulative[right] - cumulative[left]


def _cumulative_weights(weights, order):
    w = weights[order]
    zero = _c.zeros(1, dtype=w.dtype, device=w.device)
    return _c.concatenate([zero, _c.cumsum(w)])


def bincount(x, weights=None, minlength=0):
    """numpy.bincount: how often each non-negative integer occurs in x (or the sum of its weights)."""
    x = _c.asarray(x)
    _one_d(x)
    if x.size == 0 and _dt.kind(x.dtype) not in "iub":
        x = x.astype("int64")
    if _dt.kind(x.dtype) not in "iub" or str(x.dtype) == "uint64":
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype}') to dtype('int64') according to the rule 'safe'")
    minlength = _operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    x = x.astype("int64", copy=False)
    if x.size and int(_c.min(x)) < 0:
        raise ValueError("'list' argument must have no negative elements")
    size = max(int(_c.max(x)) + 1 if x.size else 0, minlength)
    edges = _c.arange(size + 1, dtype="int64", device=x.device)
    if weights is None:
        return _bin_counts(_c.sort(x), edges) if size else _c.zeros(0, dtype="int64", device=x.device)
    weights = _c.asarray(weights, device=x.device)
    if weights.shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    weights = weights.astype("float64")
    if not size:
        return _c.zeros(0, dtype="float64", device=x.device)
    order = _c.argsort(x)
    return _bin_counts(x[order], edges, _cumulative_weights(weights, order))


def _outer_edges(a, range):
    """The first and last edge: `range`, or the data's extremes (widened by 0.5 when equal)."""
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (_math.isfinite(first) and _math.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = _c.min(a).item(), _c.max(a).item()
        if not (_math.isfinite(first) and _math.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _ptp(x):
    return float(_c.max(x).item() - _c.min(x).item())


def _sturges(x):
    return _ptp(x) / (_math.log2(x.size) + 1.0)


def _fd(x):
    q75, q25 = _quantiles.percentile(x, [75, 25]).tolist()
    return 2.0 * (q75 - q25) * x.size ** (-1.0 / 3.0)


def _doane(x):
    if x.size <= 2:
        return 0.0
    sg1 = _math.sqrt(6.0 * (x.size - 2) / ((x.size + 1.0) * (x.size + 3)))
    sigma = float(_c.std(x))
    if sigma <= 0.0:
        return 0.0
    g1 = float(_c.mean(((x - _c.mean(x)) / sigma) ** 3))
    return _ptp(x) / (1.0 + _math.log2(x.size) + _math.log2(1.0 + abs(g1) / sg1))


def _auto(x):
    fd = _fd(x)
    return min(fd, _sturges(x)) if fd else _sturges(x)


def _stone(x, edges_range, range_given):
    """Stone's rule: the width of the bin count (1 to max(100, sqrt(n))) whose histogram
    minimises the cross-validated integrated squared error, NumPy's first minimum."""
    n, ptp_x = x.size, _ptp(x)
    if n <= 1 or ptp_x == 0:
        return 0
    data = _c.sort(x)  # once: each count's histogram is then a search of its edges

    def jhat(nbins):
        p_k = _bin_counts(data, _uniform_edges(x, *edges_range, nbins, range_given)) / n
        return (2 - (n + 1) * float(_c.sum(p_k * p_k))) / (ptp_x / nbins)

    upper = max(100, int(_math.sqrt(n)))
    nbins = min(range(1, upper + 1), key=jhat)
    if nbins == upper:
        _warnings.warn("The number of bins estimated may be suboptimal.", RuntimeWarning, stacklevel=4)
    return ptp_x / nbins


# each rule's bin width from the data (trimmed to the range), the range's (first, last), and
# whether the range was given
_BIN_WIDTHS = {
    "stone": _stone,
    "sqrt": lambda x, r, given: _ptp(x) / _math.sqrt(x.size),
    "sturges": lambda x, r, given: _sturges(x),
    "rice": lambda x, r, given: _ptp(x) / (2.0 * x.size ** (1.0 / 3)),
    "scott": lambda x, r, given: (24.0 * _math.pi**0.5 / x.size) ** (1.0 / 3.0) * float(_c.std(x)),
    "fd": lambda x, r, given: _fd(x),
    "doane": lambda x, r, given: _doane(x),
    "auto": lambda x, r, given: _auto(x),
}


def _bin_edges(a, bins, range, weights):
    """NumPy's _get_bin_edges: (edges, whether they are uniform)."""
    if isinstance(bins, str):
        if bins not in _BIN_WIDTHS:
            raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
        if weights is not None:
            raise TypeError("Automated estimation of the number of bins is not supported for weighted data")
        first, last = _outer_edges(a, range)
        if range is not None:
            a = a[_c.logical_and(a >= first, a <= last)]
        width = _BIN_WIDTHS[bins](a, (first, last), range is not None) if a.size else 0
        if width and _dt.kind(a.dtype) in "iu" and width < 1:
            width = 1  # integer data never gets bins narrower than 1
        count = int(_math.ceil((last - first) / width)) if width else 1
    elif isinstance(bins, (int,)) or (hasattr(bins, "ndim") and bins.ndim == 0) or type(bins).__module__ == "numpy" \
            and not hasattr(bins, "__len__"):
        try:
            count = _operator.index(bins)
        except TypeError:
            raise TypeError("`bins` must be an integer, a string, or an array") from None
        if count < 1:
            raise ValueError("`bins` must be positive, when an integer")
        first, last = _outer_edges(a, range)
    else:
        edges = _c.asarray(bins, device=a.device)
        if edges.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
        if edges.size > 1 and bool(_c.any(edges[:-1] > edges[1:])):
            raise ValueError("`bins` must increase monotonically, when an array")
        return edges
    return _uniform_edges(a, first, last, count, range is not None)


def _uniform_edges(a, first, last, count, range_given):
    """count + 1 evenly spaced edges from first to last, as NumPy computes them: in the dtype of
    the extremes (the data's, or float64 for a range given), rounded to the data's float dtype."""
    dtype = a.dtype if _dt.kind(a.dtype) == "f" else "float64"
    start_dtype = "float64" if range_given else dtype
    first, last = (_c.asarray(v, dtype=start_dtype, device=a.device) for v in (first, last))
    return _c.linspace(first, last, count + 1, endpoint=True, dtype=dtype)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """numpy.histogram_bin_edges: the edges histogram() would use."""
    a = _c.asarray(a).ravel()
    return _bin_edges(a, bins, range, weights)


def histogram(a, bins=10, range=None, density=None, weights=None):
    """numpy.histogram: counts (or weight sums) per bin, and the bin edges."""
    a = _c.asarray(a).ravel()
    if weights is not None:
        weights = _c.asarray(weights, device=a.device)
        if weights.shape != a.shape and weights.size != a.size:
            raise ValueError("weights should have the same shape as a.")
        weights = weights.ravel()
    edges = _bin_edges(a, bins, range, weights)
    if weights is None:
        hist = _bin_counts(_c.sort(a), edges)
    else:
        order = _c.argsort(a)
        hist = _bin_counts(a[order], edges, _cumulative_weights(weights, order))
    if density:
        widths = (edges[1:] - edges[:-1]).astype("float64")
        return hist / widths / _c.sum(hist), edges
    return hist, edges


def _dd_edges(column, bins, range):
    if isinstance(bins, int) or (type(bins).__module__ == "numpy" and not hasattr(bins, "__len__")):
        count = _operator.index(bins)
        if count < 1:
            raise ValueError(f"`bins[i]` must be positive, when an integer (got {count})")
        first, last = _outer_edges(column, range)
        return _c.linspace(first, last, count + 1, device=column.device)
    edges = _c.asarray(bins, device=column.device)
    if edges.ndim != 1:
        raise ValueError("`bins[i]` must be a scalar or 1d array")
    if edges.size > 1 and bool(_c.any(edges[:-1] > edges[1:])):
        raise ValueError("`bins[i]` must be monotonically increasing, when an array")
    return edges


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """numpy.histogramdd: counts in the D-dimensional bins (float64), and each dimension's edges."""
    if isinstance(sample, (list, tuple)):
        columns = [_c.asarray(s).ravel() for s in sample]
    else:
        sample = _c.asarray(sample)
        if sample.ndim == 1:
            sample = sample.reshape(-1, 1)
        columns = [sample[:, i] for i in _builtin_range(sample.shape[1])]
    dims = len(columns)
    if isinstance(bins, (list, tuple)):
        if len(bins) != dims:
            raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    else:
        bins = [bins] * dims
    ranges = range if range is not None else [None] * dims
    edges = [_dd_edges(col, b, r) for col, b, r in zip(columns, bins, ranges, strict=True)]
    counts = [int(e.size) + 1 for e in edges]  # with an outlier bin at each end
    flat = None
    for col, e, n in zip(columns, edges, counts, strict=True):
        pos = _c.searchsorted(e, col, side="right")
        pos = _c.where(col == e[-1], pos - 1, pos)
        flat = pos if flat is None else flat * n + pos
    total = _math.prod(counts)
    w = None if weights is None else _c.asarray(weights, device=columns[0].device).ravel()
    hist = bincount(flat, weights=w, minlength=total).reshape(tuple(counts)).astype("float64")
    hist = hist[(slice(1, -1),) * dims]
    if density:
        s = _c.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * dims
            shape[i] = e.size - 1
            hist = hist / (e[1:] - e[:-1]).astype("float64").reshape(shape)
        hist = hist / s
    return hist, edges


_builtin_range = range


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """numpy.histogram2d: histogramdd of (x, y); returns (hist, x edges, y edges)."""
    if isinstance(bins, (list, tuple)) and len(bins) != 2:
        bins = [bins, bins]  # one array of edges for both
    elif hasattr(bins, "ndim") and bins.ndim == 1:
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
