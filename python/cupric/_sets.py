"""Set functions on every device, composed of sort, argsort and searchsorted: unique (and the
Array API's unique_all/counts/inverse/values; real elements through the core's one-pass
unique_flat, complex ones composed here), isin, in1d, intersect1d, union1d, setdiff1d,
setxor1d. NumPy's results, element for element (values sorted)."""

from collections import namedtuple as _namedtuple

from . import _cupric as _c
from . import _dtypes as _dt
from ._sorting import _axis, lexsort

__all__ = ["unique", "unique_all", "unique_counts", "unique_inverse", "unique_values", "isin", "in1d",
           "intersect1d", "union1d", "setdiff1d", "setxor1d"]

UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _firsts(aux, equal_nan):
    """The mask of the first element of each run of equal elements of the sorted 1-d `aux`
    (with equal_nan, every NaN after the first belongs to its run, as NumPy's)."""
    n = aux.shape[0]
    mask = _c.empty(n, dtype="bool", device=aux.device)
    if n == 0:
        return mask
    mask[:1] = True
    if equal_nan and _dt.kind(aux.dtype) in "cf" and bool(_c.isnan(aux[-1])):
        if _dt.kind(aux.dtype) == "c":
            first_nan = int(_c.searchsorted(_c.isnan(aux), True))
        else:
            first_nan = int(_c.searchsorted(aux, aux[-1:])[0])
        if first_nan > 0:
            mask[1:first_nan] = aux[1:first_nan] != aux[: first_nan - 1]
        mask[first_nan] = True
        mask[first_nan + 1:] = False
    else:
        mask[1:] = aux[1:] != aux[:-1]
    return mask


def _unique1d(ar, return_index, return_inverse, return_counts, equal_nan, inverse_shape):
    ar = ar.ravel()
    plain = not (return_index or return_inverse or return_counts)
    if plain and equal_nan and _dt.kind(ar.dtype) == "c":
        # NumPy's hash path: every value with a NaN part is one value, its first occurrence, last
        nans = _c.isnan(ar)
        numbers = _unique1d(ar[_c.logical_not(nans)], False, False, False, False, None)[0]
        return (_c.concatenate([numbers, ar[nans][:1]]),)
    if _dt.kind(ar.dtype) != "c":  # one sort and one pass over it (sorting.hpp's unique_flat)
        values, index, inverse, counts = _c._unique_flat(ar, return_index, return_inverse, return_counts, equal_nan)
        ret = (values,)
        ret += (index,) if return_index else ()
        ret += (inverse.reshape(inverse_shape),) if return_inverse else ()
        return ret + ((counts,) if return_counts else ())
    if return_index or return_inverse:
        perm = _c.argsort(ar)
        aux = ar[perm]
    else:
        aux = _c.sort(ar)
    mask = _firsts(aux, equal_nan)
    ret = (aux[mask],)
    if return_index:
        ret += (perm[mask],)
    if return_inverse:
        inv = _c.empty(mask.shape, dtype="int64", device=ar.device)
        inv[perm] = _c.cumsum(mask) - 1
        ret += (inv.reshape(inverse_shape),)
    if return_counts:
        starts = _c.nonzero(mask)[0]
        ends = _c.concatenate([starts[1:], _c.full(1, mask.size, dtype="int64", device=ar.device)])
        ret += (ends - starts,)
    return ret


def _unique_rows(ar, axis, return_index, return_inverse, return_counts, equal_nan):
    """unique along an axis: the sub-arrays compared lexicographically (first element first)."""
    moved = _c.moveaxis(ar, axis, 0)
    n = moved.shape[0]
    rows = moved.reshape(n, -1)
    width = rows.shape[1]
    perm = lexsort([rows[:, j] for j in reversed(range(width))]) if width else _c.arange(n, device=ar.device)
    aux = rows[perm]
    mask = _c.empty(n, dtype="bool", device=ar.device)
    if n:
        mask[:1] = True
        diff = aux[1:] != aux[:-1]
        if equal_nan and _dt.kind(ar.dtype) in "cf":
            diff = _c.logical_and(diff, _c.logical_not(_c.logical_and(_c.isnan(aux[1:]), _c.isnan(aux[:-1]))))
        mask[1:] = _c.any(diff, axis=1) if width else False
    uniq = aux[mask].reshape((-1,) + moved.shape[1:])
    ret = (_c.moveaxis(uniq, 0, axis),)
    if return_index:
        ret += (perm[mask],)
    if return_inverse:
        inv = _c.empty(n, dtype="int64", device=ar.device)
        inv[perm] = _c.cumsum(mask) - 1
        ret += (inv,)
    if return_counts:
        starts = _c.nonzero(mask)[0]
        ends = _c.concatenate([starts[1:], _c.full(1, n, dtype="int64", device=ar.device)])
        ret += (ends - starts,)
    return ret


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           sorted=True):
    """numpy.unique: the sorted unique elements (or sub-arrays along `axis`), with the first
    indices, the inverse (of the input's shape for axis=None) and the counts on request."""
    ar = _c.asarray(ar)
    if axis is None:
        ret = _unique1d(ar, return_index, return_inverse, return_counts, equal_nan, ar.shape)
    else:
        ret = _unique_rows(ar, _axis(axis, ar.ndim), return_index, return_inverse, return_counts, equal_nan)
    return ret[0] if len(ret) == 1 else ret


def unique_all(x):
    """Array API unique_all: values, first indices, inverse indices (x's shape), counts."""
    v, i, inv, c = unique(x, True, True, True, equal_nan=False)
    return UniqueAllResult(v, i, inv, c)


def unique_counts(x):
    """Array API unique_counts: values and counts."""
    v, c = unique(x, return_counts=True, equal_nan=False)
    return UniqueCountsResult(v, c)


def unique_inverse(x):
    """Array API unique_inverse: values and inverse indices (x's shape)."""
    v, inv = unique(x, return_inverse=True, equal_nan=False)
    return UniqueInverseResult(v, inv)


def unique_values(x):
    """Array API unique_values: the unique elements (sorted here)."""
    return unique(x, equal_nan=False)


def _isin_flat(element, test, invert):
    """For each element: is it in `test`? (sort the test elements once, then search)."""
    device = element.device
    if test.size == 0:
        found = _c.zeros(element.shape, dtype="bool", device=device)
    else:
        hay = _c.sort(test.ravel())
        pos = _c.searchsorted(hay, element)
        found = hay[_c.minimum(pos, hay.size - 1)] == element
    return _c.logical_not(found) if invert else found


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """numpy.isin: element-wise membership of `element` in `test_elements` (NaN is in nothing)."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    element = _c.asarray(element)
    test = _c.asarray(test_elements, device=element.device)
    return _isin_flat(element, test, invert)


def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
    """numpy.in1d (removed from NumPy 2.4): isin over the flattened `ar1`."""
    return isin(_c.asarray(ar1).ravel(), ar2, assume_unique, invert, kind=kind)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """numpy.intersect1d: the sorted common values, with their first indices on request."""
    ar1 = _c.asarray(ar1)
    ar2 = _c.asarray(ar2, device=ar1.device)
    if not assume_unique:
        if return_indices:
            ar1, ind1 = unique(ar1, return_index=True)
            ar2, ind2 = unique(ar2, return_index=True)
        else:
            ar1, ar2 = unique(ar1), unique(ar2)
    else:
        ar1, ar2 = ar1.ravel(), ar2.ravel()
    aux = _c.concatenate([ar1, ar2])
    if return_indices:
        order = _c.argsort(aux)
        aux = aux[order]
    else:
        aux = _c.sort(aux)
    mask = aux[1:] == aux[:-1]
    common = aux[:-1][mask]
    if not return_indices:
        return common
    i1 = order[:-1][mask]
    i2 = order[1:][mask] - ar1.size
    if not assume_unique:
        i1, i2 = ind1[i1], ind2[i2]
    return common, i1, i2


def union1d(ar1, ar2):
    """numpy.union1d: the sorted unique values of both."""
    ar1 = _c.asarray(ar1)
    return unique(_c.concatenate([ar1.ravel(), _c.asarray(ar2, device=ar1.device).ravel()]))


def setdiff1d(ar1, ar2, assume_unique=False):
    """numpy.setdiff1d: the unique values of ar1 not in ar2."""
    ar1 = _c.asarray(ar1).ravel() if assume_unique else unique(ar1)
    ar2 = _c.asarray(ar2, device=ar1.device)
    return ar1[_isin_flat(ar1, ar2, True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """numpy.setxor1d: the sorted values in exactly one of the two."""
    if not assume_unique:
        ar1, ar2 = unique(ar1), unique(ar2)
    ar1 = _c.asarray(ar1)
    aux = _c.sort(_c.concatenate([ar1.ravel(), _c.asarray(ar2, device=ar1.device).ravel()]))
    if aux.size == 0:
        return aux
    edge = _c.ones(1, dtype="bool", device=aux.device)
    flag = _c.concatenate([edge, aux[1:] != aux[:-1], edge])
    return aux[_c.logical_and(flag[1:], flag[:-1])]
