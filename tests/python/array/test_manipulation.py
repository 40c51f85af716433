"""cupric shape manipulation and joining (reshape, transposes, squeeze, ravel, broadcasting,
concatenate, stack, where) against NumPy."""

import itertools

import cupric as cu
import numpy as np
import pytest
from array_helpers import check, check_on, pair, raises_like
from array_helpers import shares_storage as shares
from hypothesis import given, settings
from hypothesis import strategies as st

RNG = np.random.default_rng(99)
AxisError = np.exceptions.AxisError







def strided_views(n, c):
    """(numpy, cupric) views of the same data: contiguous, reversed, sliced, transposed."""
    yield n, c
    yield n[::-1], c[::-1]
    yield n.T, c.T
    if n.ndim >= 2:
        yield n[:, ::2], c[:, ::2]
        yield n[::-1, 1:], c[::-1, 1:]
        yield n.swapaxes(0, -1)[::2], c.swapaxes(0, -1)[::2]


# ---- reshape -------------------------------------------------------------------------------------


def test_reshape_views_exactly_when_numpy_does(device):
    n, c = pair((4, 6, 2), device=device)
    for nv, cv in strided_views(n, c):
        size = nv.size
        shapes = [(size,), (-1,), (2, -1), (-1, 2, 2), (1, size, 1), (nv.shape[0], -1), nv.shape[::-1], (1,) + nv.shape]
        for shape in shapes:
            want = nv.reshape(shape)
            got = cv.reshape(shape)
            check_on(device, got, want)
            assert shares(got, c) == np.shares_memory(want, n), (nv.strides, shape)


def test_reshape_view_writes_through_and_copy_does_not(device):
    n, c = pair((3, 4), device=device)
    v = c.reshape(4, 3)
    v[0, 0] = 1000
    assert np.asarray(c)[0, 0] == 1000
    t = c.T.reshape(12)  # needs a copy
    t[0] = -1000
    assert np.asarray(c)[0, 0] == 1000
    assert not shares(cu.reshape(c, (12,), copy=True), c)
    with pytest.raises(ValueError, match="Unable to avoid creating a copy while reshaping"):
        cu.reshape(c.T, (12,), copy=False)
    assert shares(cu.reshape(c, (2, 6), copy=False), c)


def test_reshape_forms_and_orders(device):
    n, c = pair((2, 3, 4), device=device)
    check_on(device, c.reshape(6, 4), n.reshape(6, 4))
    check_on(device, c.reshape((6, 4)), n.reshape((6, 4)))
    check_on(device, c.reshape([4, -1]), n.reshape([4, -1]))
    check_on(device, c.reshape(shape=(24,)), n.reshape(24))
    check_on(device, cu.reshape(c, (4, 6)), np.reshape(n, (4, 6)))
    check_on(device, cu.reshape(c, -1), np.reshape(n, -1))
    check_on(device, c.reshape(()) if c.size == 1 else c.reshape(24), n.reshape(24))
    check_on(device, cu.asarray([5], device=device).reshape(()), np.array([5]).reshape(()))
    check_on(device, cu.asarray(5, device=device).reshape(1, 1, 1), np.array(5).reshape(1, 1, 1))
    for nv, cv in strided_views(n, c):
        check_on(device, cv.reshape(-1, 2, order="F"), nv.reshape(-1, 2, order="F"))
        check_on(device, cu.reshape(cv, (nv.size,), order="A"), np.reshape(nv, (nv.size,), order="A"))
    check_on(device, cu.zeros((0, 3), device=device).reshape(3, 0, 5), np.zeros((0, 3)).reshape(3, 0, 5))
    check_on(device, cu.zeros((0, 3), device=device).reshape(-1, 6), np.zeros((0, 3)).reshape(-1, 6))


@pytest.mark.parametrize("shape", [(4,), (4, -1), (-1, -1), (5, -1), (0, -1), (7,)])
def test_reshape_errors(shape):
    n, c = pair((6,))
    with pytest.raises(ValueError) as np_err:
        n.reshape(shape)
    with pytest.raises(ValueError) as cu_err:
        c.reshape(shape)
    if "unknown" in str(np_err.value):
        assert str(cu_err.value) == str(np_err.value)
    else:
        assert str(cu_err.value).startswith("cannot reshape array of size 6 into shape")
    with pytest.raises(ValueError, match=r"^cannot reshape array of size 6 into shape \(4,\)$"):
        c.reshape(4)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_random_reshapes_of_random_views(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    n, c = pair(shape)
    steps = [data.draw(st.sampled_from([1, -1, 2, -2])) for _ in shape]
    key = tuple(slice(None, None, s) for s in steps)
    perm = data.draw(st.permutations(range(len(shape))))
    nv, cv = n[key].transpose(perm), c[key].transpose(perm)
    dims = []
    rest = nv.size
    for p in (2, 3, 5, 7):
        while rest % p == 0 and data.draw(st.booleans()):
            dims.append(p)
            rest //= p
    dims.append(rest)
    new = data.draw(st.permutations(dims))
    ones = data.draw(st.integers(0, 2))
    new = tuple(new) + (1,) * ones
    want = nv.reshape(new)
    got = cv.reshape(new)
    check(got, want)
    assert shares(got, c) == np.shares_memory(want, n)


# ---- axes ------------------------------------------------------------------------------------------


def test_transposes(device):
    n, c = pair((2, 3, 4), device=device)
    check_on(device, c.T, n.T)
    check_on(device, c.mT, np.matrix_transpose(n))
    check_on(device, cu.matrix_transpose(c), np.matrix_transpose(n))
    check_on(device, c.transpose(), n.transpose())
    check_on(device, c.transpose(1, 0, 2), n.transpose(1, 0, 2))
    check_on(device, c.transpose((2, 0, 1)), n.transpose((2, 0, 1)))
    check_on(device, cu.transpose(c, (-1, 0, -2)), np.transpose(n, (-1, 0, -2)))
    check_on(device, cu.permute_dims(c, (1, 2, 0)), np.permute_dims(n, (1, 2, 0)))
    check_on(device, c.swapaxes(0, 2), n.swapaxes(0, 2))
    check_on(device, cu.swapaxes(c, -1, 1), np.swapaxes(n, -1, 1))
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (2, 0)), ([2, 0], [0, 1]), ((), ())]:
        check_on(device, cu.moveaxis(c, src, dst), np.moveaxis(n, src, dst))
    assert shares(c.T, c) and shares(cu.moveaxis(c, 0, 2), c)
    check_on(device, cu.asarray(3, device=device).T, np.array(3).T)
    v = c.T
    v[0, 0, 0] = 555
    assert np.asarray(c)[0, 0, 0] == 555


@pytest.mark.parametrize(
    "np_fn, cu_fn",
    [
        (lambda x: x.transpose(0, 0, 1), lambda x: x.transpose(0, 0, 1)),
        (lambda x: x.transpose(0, 1), lambda x: x.transpose(0, 1)),
        (lambda x: x.transpose(0, 1, 3), lambda x: x.transpose(0, 1, 3)),
        (lambda x: np.swapaxes(x, 0, 3), lambda x: cu.swapaxes(x, 0, 3)),
        (lambda x: np.moveaxis(x, (0, 0), (1, 2)), lambda x: cu.moveaxis(x, (0, 0), (1, 2))),
        (lambda x: np.moveaxis(x, (0, 1), (1, 1)), lambda x: cu.moveaxis(x, (0, 1), (1, 1))),
        (lambda x: np.moveaxis(x, (0, 1), (1,)), lambda x: cu.moveaxis(x, (0, 1), (1,))),
        (lambda x: np.moveaxis(x, -4, 0), lambda x: cu.moveaxis(x, -4, 0)),
        (lambda x: np.squeeze(x, 0), lambda x: cu.squeeze(x, 0)),
        (lambda x: np.squeeze(x, 5), lambda x: cu.squeeze(x, 5)),
        (lambda x: np.expand_dims(x, (0, 0)), lambda x: cu.expand_dims(x, (0, 0))),
        (lambda x: np.expand_dims(x, 5), lambda x: cu.expand_dims(x, 5)),
        (lambda x: x[0, 0].mT, lambda x: x[0, 0].mT),
    ],
)
def test_axis_errors_match_numpy(np_fn, cu_fn):
    n, c = pair((2, 3, 4))
    raises_like(lambda: np_fn(n), lambda: cu_fn(c))


def test_axis_errors_are_numpy_axis_errors():
    c = cu.zeros((2, 3))
    with pytest.raises(AxisError, match="^axis2: axis 3 is out of bounds for array of dimension 2$"):
        cu.swapaxes(c, 0, 3)
    with pytest.raises(IndexError):  # AxisError is also an IndexError, as in NumPy
        cu.squeeze(c, -3)


def test_squeeze_and_expand_dims(device):
    n, c = pair((1, 3, 1, 2), device=device)
    check_on(device, c.squeeze(), n.squeeze())
    check_on(device, cu.squeeze(c, 0), np.squeeze(n, 0))
    check_on(device, cu.squeeze(c, (0, -2)), np.squeeze(n, (0, -2)))
    check_on(device, c.squeeze(axis=2), n.squeeze(axis=2))
    check_on(device, cu.squeeze(cu.asarray(4, device=device)), np.squeeze(np.array(4)))
    for axis in [0, -1, 2, (0, 1), (-1, 0), (1, 3, 5)]:
        check_on(device, cu.expand_dims(c, axis), np.expand_dims(n, axis))
    assert shares(cu.expand_dims(c, 0), c) and shares(c.squeeze(), c)
    nv, cv = n[..., ::-1], c[..., ::-1]
    check_on(device, cu.expand_dims(cv, (0, 3)), np.expand_dims(nv, (0, 3)))


def test_ravel_and_flatten(device):
    n, c = pair((3, 4), device=device)
    for nv, cv in strided_views(n, c):
        for order in "CFA":
            check_on(device, cv.ravel(order), nv.ravel(order))
            check_on(device, cu.ravel(cv, order=order), np.ravel(nv, order=order))
            check_on(device, cv.flatten(order), nv.flatten(order))
            assert shares(cv.ravel(order), c) == np.shares_memory(nv.ravel(order), n)
        assert not shares(cv.flatten(), c)
    check_on(device, cu.asarray(7, device=device).ravel(), np.array(7).ravel())
    check_on(device, cu.zeros((2, 0), device=device).flatten(), np.zeros((2, 0)).flatten())
    with pytest.raises(ValueError):
        c.ravel("X")


# ---- broadcasting -------------------------------------------------------------------------------


def test_broadcast_to_is_a_read_only_view(device):
    n, c = pair((3, 1), device=device)
    for shape in [(3, 1), (3, 4), (2, 3, 5), (0, 3, 0)]:
        got = cu.broadcast_to(c, shape)
        check_on(device, got, np.broadcast_to(n, shape))
        assert shares(got, c)
        assert not got.flags["WRITEABLE"]
    check(cu.broadcast_to(5, (2, 2)), np.broadcast_to(5, (2, 2)))
    with pytest.raises(ValueError, match=r"cannot broadcast an array of shape \(3, 1\) to shape \(4, 4\)"):
        cu.broadcast_to(c, (4, 4))
    with pytest.raises(ValueError):
        cu.broadcast_to(c, (1,))


def test_broadcast_arrays_and_shapes(device):
    a, ca = pair((3, 1), device=device)
    b, cb = pair((4,), device=device)
    z, cz = pair((), device=device)
    got = cu.broadcast_arrays(ca, cb, cz)
    want = np.broadcast_arrays(a, b, z)
    assert isinstance(got, list) and len(got) == 3
    for g, w in zip(got, want, strict=True):
        check_on(device, g, w)
    assert shares(got[0], ca)
    assert cu.broadcast_shapes((3, 1), (4,), ()) == np.broadcast_shapes((3, 1), (4,), ())
    with pytest.raises(ValueError, match=r"^cannot broadcast shapes \(3, 1\) and \(2, 2\)$"):
        cu.broadcast_arrays(ca, cu.zeros((2, 2), device=device))
    with pytest.raises(ValueError, match="cannot broadcast shapes"):
        cu.broadcast_arrays(ca, cu.zeros(2, device=device), cb)


# ---- joining ------------------------------------------------------------------------------------


def test_concatenate_along_axes(device):
    a, ca = pair((2, 3, 4), device=device)
    b, cb = pair((2, 5, 4), device=device)
    check_on(device, cu.concatenate([ca, cb], axis=1), np.concatenate([a, b], axis=1))
    check_on(device, cu.concatenate((ca, cb, ca), axis=-2), np.concatenate((a, b, a), axis=-2))
    check_on(device, cu.concatenate([ca, ca]), np.concatenate([a, a]))
    check_on(device, cu.concatenate([ca, cb], axis=None), np.concatenate([a, b], axis=None))
    check_on(device, cu.concat([ca[:, ::-1, :2], cb[..., ::-2][..., :2]], axis=1),
          np.concatenate([a[:, ::-1, :2], b[..., ::-2][..., :2]], axis=1))
    check_on(device, cu.concat([ca.mT, cb.mT], axis=-1), np.concatenate([a.mT, b.mT], axis=-1))
    check_on(device, cu.concatenate([ca[:, :0], cb], axis=1), np.concatenate([a[:, :0], b], axis=1))
    check(cu.concatenate([[1, 2], np.array([3])]), np.concatenate([[1, 2], np.array([3])]))
    check_on(device, cu.concatenate(cu.asarray(a, device=device)), np.concatenate(a))


def test_concatenate_promotes_dtypes(device):
    dtypes = [np.bool_, np.int8, np.uint8, np.int32, np.uint64, np.float16, np.float32, np.complex64]
    for d1, d2 in itertools.product(dtypes, repeat=2):
        a = (RNG.random(3) * 10).astype(d1)
        b = (RNG.random(2) * 10).astype(d2)
        check_on(device, cu.concatenate([cu.asarray(a, device=device), cu.asarray(b, device=device)]),
                 np.concatenate([a, b]))
    a, b = np.arange(3), np.arange(2.0)
    check_on(device, cu.concatenate([cu.asarray(a, device=device), cu.asarray(b, device=device)], dtype=cu.float32),
             np.concatenate([a, b], dtype=np.float32))
    check_on(device, cu.concatenate([cu.asarray(b, device=device)], dtype=cu.int64, casting="unsafe"),
          np.concatenate([b], dtype=np.int64, casting="unsafe"))
    raises_like(lambda: np.concatenate([a, b], dtype=np.int64),
                lambda: cu.concatenate([cu.asarray(a, device=device), cu.asarray(b, device=device)], dtype=cu.int64))


@pytest.mark.parametrize(
    "shapes, axis",
    [([(2, 3), (3,)], 0), ([(2, 3), (3, 2)], 0), ([(2, 3), (2, 4)], 0), ([(2, 3)], 2), ([(), ()], 0), ([], 0)],
)
def test_concatenate_errors_match_numpy(shapes, axis):
    ns = [np.zeros(s) for s in shapes]
    cs = [cu.zeros(s) for s in shapes]
    raises_like(lambda: np.concatenate(ns, axis=axis), lambda: cu.concatenate(cs, axis=axis))


def test_stack(device):
    a, ca = pair((3, 4), device=device)
    b, cb = pair((3, 4), np.float32, device=device)
    for axis in [0, 1, 2, -1, -3]:
        check_on(device, cu.stack([ca, cb, ca], axis=axis), np.stack([a, b, a], axis=axis))
    check_on(device, cu.stack([cu.asarray(1, device=device), cu.asarray(2, device=device)]),
             np.stack([np.array(1), np.array(2)]))
    check_on(device, cu.stack([ca.T, cb.T], dtype=cu.float64), np.stack([a.T, b.T], dtype=np.float64))
    raises_like(lambda: np.stack([a, a[:2]]), lambda: cu.stack([ca, ca[:2]]))
    raises_like(lambda: np.stack([]), lambda: cu.stack([]))
    raises_like(lambda: np.stack([a, a], axis=3), lambda: cu.stack([ca, ca], axis=3))


# ---- where --------------------------------------------------------------------------------------


def test_where_broadcasts_and_selects(device):
    cond = RNG.random((3, 1, 4)) > 0.5
    x, cx = pair((5, 4), device=device)
    y, cy = pair((3, 5, 1), np.int32, device=device)
    ccond = cu.asarray(cond, device=device)
    check_on(device, cu.where(ccond, cx, cy), np.where(cond, x, y))
    check_on(device, cu.where(ccond, cx[::-1], cy), np.where(cond, x[::-1], y))
    check_on(device, cu.where(cx > 0, cx, 0), np.where(x > 0, x, 0))
    check_on(device, cu.where(True, cx, cy), np.where(True, x, y))
    # a non-bool condition is its truth value (nan is true)
    fc = np.array([0.0, -0.0, np.nan, 2.0, 1e-300])
    check_on(device, cu.where(cu.asarray(fc, device=device), 1, 2), np.where(fc, 1, 2))
    u = np.array([0, 3, 0], np.uint8)
    check_on(device, cu.where(cu.asarray(u, device=device), 1.5, -1), np.where(u, 1.5, -1))


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 5), (0, 3), (1,)])
@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.bool_, np.complex64])
def test_nonzero_flatnonzero_argwhere(shape, dtype, device):
    n = (RNG.random(shape) > 0.5) * RNG.integers(-3, 4, size=shape)
    n = n.astype(dtype)
    c = cu.asarray(n, device=device)
    for got, want in zip(cu.nonzero(c), np.nonzero(n), strict=True):
        check_on(device, got, want)
    for got, want in zip(c.nonzero(), n.nonzero(), strict=True):
        check_on(device, got, want)
    for got, want in zip(cu.where(c), np.where(n), strict=True):
        check_on(device, got, want)
    check_on(device, cu.flatnonzero(c), np.flatnonzero(n))
    check_on(device, cu.argwhere(c), np.argwhere(n))
    # a strided view, and NaN (true)
    f = np.array([[0.0, np.nan, -0.0], [2.0, 0.0, 1e-300]])
    cf = cu.asarray(f, device=device)
    check_on(device, cu.argwhere(cf[:, ::-1]), np.argwhere(f[:, ::-1]))


@pytest.mark.parametrize("value", [0, 3])
def test_nonzero_of_0d_arrays(value, device):
    raises_like(lambda: np.nonzero(np.asarray(value)), lambda: cu.nonzero(cu.asarray(value, device=device)))
    check_on(device, cu.argwhere(cu.asarray(value, device=device)), np.argwhere(np.asarray(value)))
    check_on(device, cu.flatnonzero(cu.asarray(value, device=device)), np.flatnonzero(np.asarray(value)))


def test_where_promotes_x_and_y_with_nep50(device):
    cond = np.array([True, False, True])
    ccond = cu.asarray(cond, device=device)
    dtypes = [np.bool_, np.int8, np.uint8, np.int64, np.uint64, np.float16, np.float32, np.float64, np.complex64]
    for d1, d2 in itertools.product(dtypes, repeat=2):
        x = (RNG.random(3) * 5).astype(d1)
        y = (RNG.random(3) * 5).astype(d2)
        check_on(device, cu.where(ccond, cu.asarray(x, device=device), cu.asarray(y, device=device)),
                 np.where(cond, x, y))
    for d in dtypes:
        x = (RNG.random(3) * 5).astype(d)
        for scalar in [True, 1, 2.5, 1j]:
            want = np.where(cond, x, scalar)
            check_on(device, cu.where(ccond, cu.asarray(x, device=device), scalar), want)
            check_on(device, cu.where(ccond, scalar, cu.asarray(x, device=device)), np.where(cond, scalar, x))
    check_on(device, cu.where(ccond, 1, 2.0), np.where(cond, 1, 2.0))
    check_on(device, cu.where(ccond, 1, 2), np.where(cond, 1, 2))
    check_on(device, cu.where(ccond, False, True), np.where(cond, False, True))


def test_where_rejects_python_ints_that_do_not_fit():
    # NumPy wraps 300 to 44 here; cupric applies NEP 50 as its ufuncs do
    with pytest.raises(OverflowError, match="300"):
        cu.where(True, 300, cu.ones(2, dtype=cu.int8))


def test_where_single_argument_is_nonzero(device):
    c = RNG.random((3, 4)) > 0.5
    got = cu.where(cu.asarray(c, device=device))
    want = np.where(c)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        check_on(device, g, w)
    with pytest.raises(ValueError, match="both or neither"):
        cu.where(c, 1)


def test_where_is_the_function_and_the_ufunc_row_is_private():
    assert not isinstance(cu.where, cu.ufunc)
    row = cu._cupric._where  # the ufunc-table row cu.where calls (not in the public namespace)
    assert isinstance(row, cu.ufunc)
    assert row.nin == 3


def test_where_on_empty_and_0d(device):
    check_on(device, cu.where(cu.zeros((0, 2), dtype=cu.bool, device=device), 1.0, 2.0),
             np.where(np.zeros((0, 2), bool), 1.0, 2.0))
    check_on(device, cu.where(cu.asarray(False, device=device), cu.asarray(1, device=device), 2),
             np.where(np.array(False), np.array(1), 2))
