"""cupric ndarray indexing (__getitem__, __setitem__, __iter__) against NumPy."""

import itertools

import cupric as cu
import numpy as np
import pytest
from array_helpers import check, check_on, pair, raises_like, shares_storage
from hypothesis import given, settings
from hypothesis import strategies as st

RNG = np.random.default_rng(1234)







# ---- basic indexing: slices ----------------------------------------------------------------

BOUNDS = [None, -8, -5, -3, -1, 0, 1, 2, 3, 5, 8]
STEPS = [None, -3, -2, -1, 1, 2, 3]


@pytest.mark.parametrize("size", [0, 1, 4, 5])
def test_every_slice_of_1d_arrays(size, device):
    n, c = pair((size,), device=device)
    for start, stop, step in itertools.product(BOUNDS, BOUNDS, STEPS):
        s = slice(start, stop, step)
        got = c[s]
        check_on(device, got, n[s])
        assert shares_storage(got, c)


def test_slices_of_2d_and_3d_arrays_with_negative_steps(device):
    n2, c2 = pair((4, 5), device=device)
    n3, c3 = pair((3, 4, 5), device=device)
    some = [slice(a, b, s) for a, b, s in itertools.product([None, -2, 1], [None, -1, 3], [None, -1, 2, -2])]
    for s0, s1 in itertools.product(some, some):
        check_on(device, c2[s0, s1], n2[s0, s1])
    for s0, s1, s2 in itertools.product(some[::3], some[::2], some[::3]):
        check_on(device, c3[s0, s1, s2], n3[s0, s1, s2])


def test_out_of_range_slices_are_clipped_like_python(device):
    n, c = pair((5,), device=device)
    for s in [slice(-100, 100), slice(100, -100, -1), slice(2, 100, 3), slice(-100, 2), slice(10, 20), slice(2**70)]:
        check_on(device, c[s], n[s])


def test_slice_strides_match_numpy():
    n, c = pair((6, 7))
    for key in [(slice(None, None, -1),), (slice(1, None, 2), slice(None, None, -3)), (None, slice(1, 4), 2)]:
        assert c[key].strides == n[key].strides
        assert c[key].shape == n[key].shape


# ---- basic indexing: integers, ellipsis, newaxis -------------------------------------------


def test_integer_indices_give_views_and_0d_arrays(device):
    n, c = pair((3, 4), device=device)
    for i, j in itertools.product(range(-3, 3), range(-4, 4)):
        got = c[i, j]
        assert isinstance(got, cu.ndarray) and got.shape == ()
        assert str(got.device).startswith(device)
        assert got.item() == n[i, j]
        assert shares_storage(got, c)
    check_on(device, c[-1], n[-1])
    check_on(device, c[1, ::-1], n[1, ::-1])


def test_ellipsis_and_newaxis_combinations(device):
    n, c = pair((2, 3, 4), device=device)
    keys = [
        (Ellipsis,), (Ellipsis, 1), (1, Ellipsis), (None,), (None, Ellipsis, None), (0, None, 1),
        (Ellipsis, None, slice(None, None, -1)), (slice(1, None), Ellipsis, 2), (None, None, 0, None),
        (0, 1, 2, Ellipsis), (Ellipsis, 0, 1, 2), (cu.newaxis, 1, Ellipsis, cu.newaxis),
        (), 1, -1, Ellipsis, None,
    ]
    for key in keys:
        check_on(device, c[key], n[key])


def test_numpy_and_0d_integer_arrays_act_as_integers(device):
    n, c = pair((4, 3), device=device)
    check_on(device, c[np.int64(2)], n[2])
    check_on(device, c[np.int8(-1), np.uint16(1)], n[-1, 1])
    check_on(device, c[cu.asarray(2, device=device)], n[2])
    assert shares_storage(c[cu.asarray(1, device=device)], c)


def test_0d_arrays():
    n, c = pair(())
    check(c[()], n[()])
    check(c[...], n[...])
    check(c[None], n[None])
    raises_like(lambda: n[0], lambda: c[0])


def test_empty_arrays(device):
    n, c = pair((0, 3), device=device)
    check_on(device, c[:, 1], n[:, 1])
    check_on(device, c[::-1], n[::-1])
    check_on(device, c[..., None], n[..., None])
    raises_like(lambda: n[0], lambda: c[0])


def test_views_share_memory_with_the_base(device):
    n, c = pair((4, 6), device=device)
    v = c[1::2, ::-2]
    v[0, 0] = 999
    n[1::2, ::-2][0, 0] = 999
    check_on(device, c, n)
    w = c[..., None][2, :, 0]
    w[...] = -5
    n[2, :] = -5
    check_on(device, c, n)
    z = c[3, 4]
    z[()] = 77
    assert np.asarray(c)[3, 4] == 77


@pytest.mark.parametrize(
    "shape, key",
    [
        ((3,), 5), ((3,), -4), ((3, 4), (1, 4)), ((3, 4), (-4, 0)), ((3,), (0, 1)), ((2, 3), (0, 0, 0)),
        ((3,), (Ellipsis, Ellipsis)), ((3,), 1.0), ((3,), "a"), ((3,), (slice(None), 2.5)), ((3,), slice(1.0, 2)),
        ((), 0), ((3,), slice(None, None, 0)),
    ],
)
def test_basic_index_errors_match_numpy(shape, key):
    n, c = pair(shape)
    raises_like(lambda: n[key], lambda: c[key])


def test_error_messages_name_the_values():
    c = cu.arange(3)
    with pytest.raises(IndexError, match=r"^index 5 is out of bounds for axis 0 with size 3$"):
        c[5]
    with pytest.raises(IndexError, match=r"array is 1-dimensional, but 2 were indexed"):
        c[0, 0]
    with pytest.raises(IndexError, match=r"single ellipsis"):
        c[..., ...]


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_random_basic_indices_match_numpy(data):
    shape = tuple(data.draw(st.lists(st.integers(0, 5), min_size=0, max_size=3)))
    n, c = pair(shape)
    item = st.one_of(
        st.integers(-6, 6),
        st.builds(slice, st.none() | st.integers(-7, 7), st.none() | st.integers(-7, 7),
                  st.none() | st.integers(-3, 3).filter(lambda s: s != 0)),
        st.just(None),
        st.just(Ellipsis),
    )
    key = tuple(data.draw(st.lists(item, max_size=4)))
    try:
        want = n[key]
    except IndexError as e:
        with pytest.raises(IndexError) as got:
            c[key]
        assert str(got.value) == str(e)
        return
    got = c[key]
    check(got, np.asarray(want))
    assert shares_storage(got, c)


# ---- advanced indexing (copies) --------------------------------------------------------------


def test_integer_array_indices(device):
    n, c = pair((5, 6), device=device)
    for key in [
        [0, 4, -1], np.array([[1, 2], [3, -5]]), (slice(None), [0, 0, 5]), ([1, 2], [3, 4]),
        ([[0], [1]], [2, 3, 4]), (np.array([1, 2], np.int8), slice(None, None, -1)), ([], ), ([[]],),
        (cu.asarray([4, 0], device=device),), (np.uint8(3), [1, 2]), (Ellipsis, [1, -1]), ([2, 2, 2], None),
    ]:
        got = c[key]
        check_on(device, got, n[key])
        assert not shares_storage(got, c)


def test_mixed_advanced_indices_place_dims_like_numpy(device):
    n, c = pair((3, 4, 5), device=device)
    for key in [
        (0, slice(None), [0, 1]), ([0], None, [0]), (slice(None), [0], None, [0]), (Ellipsis, [0, 1]),
        ([1, 2], slice(1, 3), [[0], [4]]), (slice(None), [1, 2], [3, 4]), ([0, 1], [1, 2], [2, 3]),
        (slice(None, None, -1), [[1, 2]], slice(None, None, 2)), (None, [0, 2], 1, slice(None)),
    ]:
        check_on(device, c[key], n[key])


def test_boolean_masks(device):
    n, c = pair((4, 5), device=device)
    mask2 = RNG.random((4, 5)) > 0.5
    mask0 = RNG.random(4) > 0.5
    mask1 = RNG.random(5) > 0.5
    for key in [mask2, mask0, (slice(None), mask1), (mask0, slice(1, 4)), (Ellipsis, mask1),
                cu.asarray(mask2, device=device), n > 0, (1, mask1), list(mask0), True, False, (None, True)]:
        check_on(device, c[key], n[key])
    check_on(device, c[c > 0], n[n > 0])


def test_advanced_indexing_on_views_dtypes_and_empty(device):
    for dt in [np.bool_, np.int8, np.uint16, np.float32, np.float64, np.complex64, np.complex128, np.float16]:
        n = (RNG.random((6, 4)) * 10).astype(dt)
        c = cu.asarray(n, device=device)
        check_on(device, c[::-2][[0, 2]], n[::-2][[0, 2]])
        check_on(device, c.T[[1, 3], 1:], n.T[[1, 3], 1:])
        check_on(device, c[n.real > 5], n[n.real > 5])
    n, c = pair((0, 3), device=device)
    check_on(device, c[[], 1], n[[], 1])
    check_on(device, c[:, [0, 2]], n[:, [0, 2]])
    check_on(device, c[np.zeros((0, 3), bool)], n[np.zeros((0, 3), bool)])


@pytest.mark.parametrize(
    "shape, key",
    [
        ((3,), [3]), ((3,), [-4]), ((3, 4), (slice(None), [0, 4])), ((3,), [[0, 1], [2, 3]]),
        ((3, 4), ([0, 1], [0, 1, 2])), ((3,), np.array([1.0])), ((3,), np.array([True, False])),
        ((3, 4), np.ones((3, 5), bool)), ((3,), (np.array([True, False, True]), 0)),
    ],
)
def test_advanced_index_errors_match_numpy(shape, key):
    n, c = pair(shape)
    raises_like(lambda: n[key], lambda: c[key])


# ---- __setitem__ -------------------------------------------------------------------------------


def test_setitem_broadcasts_scalars_lists_and_arrays(device):
    n, c = pair((3, 4, 5), device=device)
    for key, value in [
        ((0,), 7), ((slice(None), 1), [1, 2, 3, 4, 5]),
        ((Ellipsis, slice(None, None, -2)), np.arange(3)[:, None, None]),
        ((1, slice(1, 3)), cu.asarray([[9], [8]], device=device)), ((), -1), ((2, 3, 4), 42),
        ((slice(None), None, 0), [[[1]]]),
        ((0,), np.ones((1, 1, 4, 5))), ((slice(None, None, -1), slice(None, None, -1)), np.arange(5)),
    ]:
        c[key] = value
        n[key] = value.__array__() if isinstance(value, cu.ndarray) else value
        check_on(device, c, n)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32, np.uint64, np.float16, np.float32,
                                   np.float64, np.complex64])
def test_setitem_casts_unsafely_like_numpy(dtype, device):
    n = np.zeros((4, 3), dtype)
    c = cu.asarray(n, copy=True, device=device)
    # (negative floats into unsigned types are out of range: NumPy's result is platform-defined)
    src = RNG.random((4, 3)) * 50 - (0 if np.dtype(dtype).kind == "u" else 10)
    c[...] = src
    n[...] = src
    check_on(device, c, n)
    c[1] = 2.75
    n[1] = 2.75
    c[2, ::2] = True
    n[2, ::2] = True
    check_on(device, c, n)


def test_setitem_python_ints_out_of_range_raise_and_leave_the_target():
    n, c = pair((3,), np.int8)
    before = np.asarray(c).copy()
    raises_like(lambda: n.__setitem__(0, 300), lambda: c.__setitem__(0, 300))
    raises_like(lambda: n.__setitem__(slice(None), [1, 300, 2]), lambda: c.__setitem__(slice(None), [1, 300, 2]))
    with pytest.raises(OverflowError):
        c[0] = -129
    f = cu.zeros(2, dtype=cu.int64)
    raises_like(lambda: np.zeros(2, np.int64).__setitem__(0, float("nan")), lambda: f.__setitem__(0, float("nan")))
    raises_like(lambda: np.zeros(2, np.int64).__setitem__(0, float("inf")), lambda: f.__setitem__(0, float("inf")))
    check(c, before)


def test_failed_setitem_leaves_the_target_unchanged(device):
    n, c = pair((3, 4), device=device)
    before = np.asarray(c).copy()
    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(3,\) into shape \(3, 4\)"):
        c[...] = [1, 2, 3]
    with pytest.raises(IndexError):
        c[5] = 1
    with pytest.raises(IndexError):
        c[[0, 5]] = 1
    with pytest.raises(ValueError, match=r"^shape mismatch: value array of shape \(3, 4\) could not be broadcast to "
                                         r"indexing result of shape \(2, 4\)$"):
        c[[0, 1]] = np.ones((3, 4))
    with pytest.raises(ValueError):
        c[np.ones((3, 4), bool)] = [1, 2]
    with pytest.raises(ValueError, match="read-only"):
        cu.broadcast_to(c[0], (2, 4))[0, 0] = 1
    with pytest.raises(TypeError, match="complex"):  # NumPy: TypeError from float(1j)
        c[0, 0] = 1j
    check_on(device, c, before)


def test_read_only_views_refuse_assignment():
    c = cu.broadcast_to(cu.arange(3), (2, 3))
    with pytest.raises(ValueError, match="^assignment destination is read-only$"):
        c[0] = 5
    with pytest.raises(ValueError, match="^assignment destination is read-only$"):
        c[0][1:] = 5
    with pytest.raises(ValueError, match="^assignment destination is read-only$"):
        c[[0]] = 5
    ro = np.arange(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        cu.asarray(ro)[0] = 1


def test_setitem_with_overlapping_source(device):
    n, c = pair((10,), device=device)
    c[1:] = c[:-1]
    n[1:] = n[:-1]
    check_on(device, c, n)
    c[::-1] = c
    n[::-1] = n.copy()
    check_on(device, c, n)
    n2, c2 = pair((4, 4), device=device)
    c2[...] = c2.T
    n2[...] = n2.T.copy()
    check_on(device, c2, n2)


def test_setitem_with_masks_and_index_arrays(device):
    n, c = pair((4, 5), np.float32, device=device)
    mask = np.asarray(c) > 0
    c[c > 0] = 0.5
    n[mask] = 0.5
    check_on(device, c, n)
    k = int(mask.sum())
    vals = np.arange(k, dtype=np.float64)
    c[mask] = vals
    n[mask] = vals
    check_on(device, c, n)
    c[[0, 2], 1:3] = [[1], [2]]
    n[[0, 2], 1:3] = [[1], [2]]
    check_on(device, c, n)
    c[:, [4, 0]] = cu.asarray([7.0, 8.0], device=device)
    n[:, [4, 0]] = [7.0, 8.0]
    check_on(device, c, n)
    c[[1, 1, 1], [2, 2, 2]] = [1, 2, 3]  # repeated indices: the last value wins
    n[[1, 1, 1], [2, 2, 2]] = [1, 2, 3]
    check_on(device, c, n)
    c[True] = 3
    n[True] = 3
    check_on(device, c, n)


def test_setitem_on_views_writes_the_base(device):
    n, c = pair((5, 5), device=device)
    v = c[1:, ::-1]
    v[[0, 2]] = -1
    n[1:, ::-1][[0, 2]] = -1
    check_on(device, c, n)


# ---- iteration ---------------------------------------------------------------------------------


def test_iteration_over_the_first_axis(device):
    n, c = pair((3, 2), device=device)
    rows = list(c)
    assert len(rows) == 3
    for got, want in zip(rows, n, strict=True):
        check_on(device, got, want)
        assert shares_storage(got, c)
    assert [x.item() for x in cu.arange(4)] == [0, 1, 2, 3]
    assert list(cu.zeros((0, 3))) == []
    with pytest.raises(TypeError, match="^iteration over a 0-d array$"):
        iter(cu.asarray(1.0))


def test_index_arrays_are_never_modified_and_errors_name_the_first_bad_index(device):
    n, c = pair((6, 5), device=device)
    for idx in [np.array([4, 0, 2]), np.array([-1, 3]), np.array([1, 2], np.int32), np.arange(10)[::3] % 5]:
        keep = idx.copy()
        ci = cu.asarray(idx, device=device)
        check_on(device, c[ci], n[idx])
        check_on(device, c[:, ci], n[:, idx])
        check_on(device, c.T[ci], n.T[idx])
        c[:, ci] = 1
        n[:, idx] = 1
        check_on(device, c, n)
        np.testing.assert_array_equal(np.asarray(ci), keep)
        np.testing.assert_array_equal(idx, keep)
    for bad in [np.array([0, 7, -9]), np.array([1, -7]), np.array([[6]], np.int16)]:
        raises_like(lambda bad=bad: n[bad], lambda bad=bad: c[cu.asarray(bad, device=device)])
        raises_like(lambda bad=bad: n[:, bad], lambda bad=bad: c[:, bad])


def test_boolean_index_reads_any_nonzero_bool_byte_as_true():
    # bool memory filled by other means (a uint8 view, DLPack) may hold bytes other than 0 and 1:
    # each is one true element (the positions were once advanced by the byte's value: a heap overflow)
    raw = np.array([0, 2, 0, 255, 1, 0, 7], dtype=np.uint8)
    x = cu.arange(7)
    np.testing.assert_array_equal(np.asarray(x[cu.asarray(raw.view(np.bool_))]), [1, 3, 4, 6])
    two = raw[:6].reshape(2, 3).view(np.bool_)
    y = cu.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(y[cu.asarray(two)]), [1, 3, 4])
