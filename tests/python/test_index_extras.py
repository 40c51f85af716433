"""python/cupric/_index_extras.py against NumPy, on the CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle_helpers import PROPERTIES, assert_same_outcome

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(33)


def same(got, want):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
    if w.dtype.kind in "fc":  # sums on a GPU add in another order than NumPy's
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(g, w)


def dev(a, device):
    return cu.asarray(a, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_matrix_part_indices(device):
    for n, k, m in ((4, 0, None), (4, 1, 6), (5, -2, 3), (3, 5, None), (0, 0, None)):
        same(cu.tril_indices(n, k, m, device=device), np.tril_indices(n, k, m))
        same(cu.triu_indices(n, k, m, device=device), np.triu_indices(n, k, m))
    a = RNG.standard_normal((4, 6))
    same(cu.tril_indices_from(dev(a, device), 1), np.tril_indices_from(a, 1))
    same(cu.triu_indices_from(dev(a, device), -1), np.triu_indices_from(a, -1))
    same(cu.diag_indices(3, 3, device=device), np.diag_indices(3, 3))
    same(cu.diag_indices_from(dev(np.ones((3, 3, 3)), device)), np.diag_indices_from(np.ones((3, 3, 3))))
    same(cu.mask_indices(4, cu.triu, 1), np.mask_indices(4, np.triu, 1))
    with pytest.raises(ValueError, match="equal length"):
        cu.diag_indices_from(dev(np.ones((2, 3)), device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape, wrap", [((4, 4), False), ((7, 3), False), ((7, 3), True), ((3, 5), False),
                                         ((3, 3, 3), False)])
def test_fill_diagonal(shape, wrap, device):
    a = RNG.standard_normal(shape)
    for val in (5.0, [1.0, 2.0]):
        want = a.copy()
        np.fill_diagonal(want, val, wrap=wrap)
        got = dev(a, device)
        cu.fill_diagonal(got, val, wrap=wrap)
        same(got, want)


@pytest.mark.parametrize("device", DEVICES)
def test_selection(device):
    a = RNG.integers(-9, 9, (3, 5))
    cond = np.array([True, False, True])
    same(cu.compress(dev(cond, device), dev(a, device), axis=0), np.compress(cond, a, axis=0))
    same(cu.compress([0, 1, 1], dev(a, device)), np.compress([0, 1, 1], a))
    same(cu.extract(dev(a > 0, device), dev(a, device)), np.extract(a > 0, a))
    for vals in ([100], [1, 2, 3]):
        want, got = a.copy(), dev(a, device)
        np.place(want, want < 0, vals)
        cu.place(got, dev(a < 0, device), vals)
        same(got, want)
        want, got = a.copy(), dev(a, device)
        np.putmask(want, want > 2, vals)
        cu.putmask(got, dev(a > 2, device), vals)
        same(got, want)
    view = dev(a, device)[:, ::2]
    cu.place(view, dev(a[:, ::2] > 0, device), [0])
    same(view, np.where(a[:, ::2] > 0, 0, a[:, ::2]))
    idx = RNG.integers(0, 3, (3, 5))
    choices = [RNG.integers(0, 9, (3, 5)), RNG.integers(0, 9, 5), 7]
    same(cu.choose(dev(idx, device), [dev(np.asarray(c), device) for c in choices]), np.choose(idx, choices))
    for mode in ("wrap", "clip"):
        same(cu.choose(dev(idx + 2, device), choices[:2], mode=mode), np.choose(idx + 2, choices[:2], mode=mode))
    with pytest.raises(ValueError, match="invalid entry"):
        cu.choose(dev(idx + 5, device), choices)
    x = RNG.standard_normal(10)
    conds, picks = [x < -0.5, x > 0.5], [x * 2, x ** 2]
    same(cu.select([dev(c, device) for c in conds], [dev(p, device) for p in picks], default=-1),
         np.select(conds, picks, default=-1))
    same(cu.piecewise(dev(x, device), [dev(x < 0, device), dev(x >= 0, device)], [lambda v: -v, lambda v: v * 3]),
         np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 3]))
    same(cu.piecewise(dev(x, device), [dev(x < 0, device)], [0, lambda v: v + 1]),
         np.piecewise(x, [x < 0], [0, lambda v: v + 1]))


def test_grids_and_concatenators():
    same(cu.mgrid[0:5], np.mgrid[0:5])
    same(cu.mgrid[0:3, 1:4:2], np.mgrid[0:3, 1:4:2])
    same(cu.mgrid[-1:1:5j, 0:2:3j], np.mgrid[-1:1:5j, 0:2:3j])
    same(list(cu.ogrid[0:3, 0:4]), list(np.ogrid[0:3, 0:4]))
    same(cu.r_[cu.asarray([1, 2]), 0, 0, cu.asarray([4, 5])], np.r_[np.array([1, 2]), 0, 0, np.array([4, 5])])
    same(cu.r_[0:4, 7], np.r_[0:4, 7])
    same(cu.c_[cu.asarray([1, 2, 3]), cu.asarray([4, 5, 6])], np.c_[np.array([1, 2, 3]), np.array([4, 5, 6])])


@pytest.mark.parametrize("device", DEVICES)
def test_apply_and_iterate(device):
    a = RNG.standard_normal((3, 4, 2))
    for axis in (0, 1, -1):
        same(cu.apply_along_axis(lambda v: v * 2, axis, dev(a, device)), np.apply_along_axis(lambda v: v * 2, axis, a))
        same(cu.apply_along_axis(cu.sum, axis, dev(a, device)), np.apply_along_axis(np.sum, axis, a))
    same(cu.apply_over_axes(cu.sum, dev(a, device), [0, 2]), np.apply_over_axes(np.sum, a, [0, 2]))
    assert list(cu.ndindex(2, 3)) == list(np.ndindex(2, 3)) and list(cu.ndindex((2,))) == [(0,), (1,)]
    small = RNG.integers(0, 9, (2, 2))
    assert list(cu.ndenumerate(dev(small, device))) == list(np.ndenumerate(small))


# ---- properties (hypothesis): the index helpers against NumPy on random sizes and offsets ----------------------


@PROPERTIES
@given(n=st.integers(0, 7), k=st.integers(-8, 8), m=st.one_of(st.none(), st.integers(0, 7)))
def test_triangle_indices_properties_match_numpy(n, k, m):
    for cu_fn, np_fn in ((cu.tril_indices, np.tril_indices), (cu.triu_indices, np.triu_indices)):
        assert_same_outcome(lambda f=cu_fn: f(n, k, m), lambda f=np_fn: f(n, k, m))
    a = RNG.standard_normal((n, n if m is None else m))
    for cu_fn, np_fn in ((cu.tril_indices_from, np.tril_indices_from), (cu.triu_indices_from, np.triu_indices_from)):
        assert_same_outcome(lambda f=cu_fn: f(cu.asarray(a), k), lambda f=np_fn: f(a, k))


@PROPERTIES
@given(n=st.integers(0, 5), ndim=st.integers(1, 4), square=st.booleans())
def test_diagonal_indices_properties_match_numpy(n, ndim, square):
    assert_same_outcome(lambda: cu.diag_indices(n, ndim), lambda: np.diag_indices(n, ndim))
    shape = (n,) * ndim if square else (n,) * (ndim - 1) + (n + 1,)
    a = np.zeros(shape)
    assert_same_outcome(lambda: cu.diag_indices_from(cu.asarray(a)), lambda: np.diag_indices_from(a))
