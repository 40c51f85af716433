"""python/cupric/_shape_functions.py against NumPy: random inputs of several dtypes and shapes, every
axis, views as inputs, and NumPy's errors; on the CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle_helpers import PROPERTIES, assert_same_outcome

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(12)


def rand(shape, dtype="float64"):
    if np.dtype(dtype).kind == "b":
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-50 if np.dtype(dtype).kind == "i" else 0, 50, shape).astype(dtype)
    return (RNG.standard_normal(shape) * 10).astype(dtype)


def same(got, want):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w)
        return
    assert isinstance(got, cu.ndarray), type(got)
    w = np.asarray(want)
    g = np.asarray(got)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_array_equal(g, w)


def both(fn_name, *args, device="cpu", np_fn=None, **kwargs):
    """Calls cu.<fn_name> and np.<fn_name> on the same inputs (NumPy arrays moved to `device`)."""
    conv = [cu.asarray(a, device=device) if isinstance(a, np.ndarray) else a for a in args]
    got = getattr(cu, fn_name)(*conv, **kwargs)
    want = (np_fn or getattr(np, fn_name))(*args, **kwargs)
    same(got, want)
    return got


SHAPES = [(), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 2)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES)
def test_atleast(shape, device):
    a = rand(shape)
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        both(name, a, device=device)
        both(name, a, rand((2,)), device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_stacks(dtype, device):
    for shapes in ([(4,), (3,)], [(2, 3), (2, 5)], [(2, 3, 4), (2, 1, 4)]):
        arrs = [rand(s, dtype) for s in shapes]
        both("hstack", arrs, device=device)
    for shapes in ([(4,), (4,)], [(2, 3), (5, 3)], [(), ()]):
        both("vstack", [rand(s, dtype) for s in shapes], device=device)
    for shapes in ([(4,), (4,)], [(2, 3), (2, 3)], [(), ()], [(2, 3, 1), (2, 3, 2)]):
        both("dstack", [rand(s, dtype) for s in shapes], device=device)
    for shapes in ([(4,), (4,)], [(2, 3), (2, 1)]):
        both("column_stack", [rand(s, dtype) for s in shapes], device=device)
    both("column_stack", [rand((3,), dtype), rand((3, 2), dtype)], device=device)
    with pytest.raises(TypeError):
        cu.hstack(cu.asarray(rand((3,))))


@pytest.mark.parametrize("device", DEVICES)
def test_block(device):
    a, b, c, d = rand((2, 2)), rand((2, 3)), rand((1, 2)), rand((1, 3))
    dev = [cu.asarray(x, device=device) for x in (a, b, c, d)]
    same(cu.block([[dev[0], dev[1]], [dev[2], dev[3]]]), np.block([[a, b], [c, d]]))
    same(cu.block([dev[0], dev[0]]), np.block([a, a]))
    with pytest.raises(ValueError, match="depths"):
        cu.block([[dev[0]], dev[1]])


@pytest.mark.parametrize("device", DEVICES)
def test_splits(device):
    a = rand((6, 8, 4))
    for axis in (0, 1, -1):
        for sections in (1, 2, [1, 3], [0, 5, 100], []):
            if not isinstance(sections, list) and a.shape[axis] % sections:
                continue
            both("split", a, sections, axis=axis, device=device)
        for sections in (3, 5, [2, 2, 7]):
            both("array_split", a, sections, axis=axis, device=device)
    both("hsplit", a, 2, device=device)
    both("vsplit", a, [1, 4], device=device)
    both("dsplit", a, 2, device=device)
    both("unstack", a, axis=1, device=device, np_fn=lambda x, axis: tuple(np.moveaxis(x, axis, 0)))
    with pytest.raises(ValueError, match="equal division"):
        cu.split(cu.asarray(a, device=device), 5, axis=1)
    with pytest.raises(ValueError, match="larger than 0"):
        cu.array_split(cu.asarray(a, device=device), 0)
    with pytest.raises(cu.AxisError):
        cu.split(cu.asarray(a, device=device), 2, axis=3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "int16", "complex64"])
def test_flip_roll_rot90(dtype, device):
    a = rand((3, 4, 5), dtype) if dtype != "complex64" else (rand((3, 4, 5)) + 1j * rand((3, 4, 5))).astype(dtype)
    view = a[:, ::2]
    for x in (a, view):
        for axis in (None, 0, -1, (0, 2)):
            both("flip", x, axis, device=device)
        for shift, axis in ((2, None), (-7, 0), (3, 2), ((1, 2), (0, 1)), (5, (1, 1))):
            both("roll", x, shift, axis=axis, device=device)
        for k in range(-2, 6):
            both("rot90", x, k, device=device)
            both("rot90", x, k, axes=(2, 0), device=device)
    both("fliplr", a, device=device)
    both("flipud", a, device=device)
    for axis, start in ((0, 3), (2, 0), (-1, 1), (1, -1)):
        both("rollaxis", a, axis, start, device=device)
    with pytest.raises(ValueError, match="Axes must be different"):
        cu.rot90(cu.asarray(a, device=device), axes=(1, 1))
    with pytest.raises(cu.AxisError):
        cu.flip(cu.asarray(a, device=device), 3)


@pytest.mark.parametrize("device", DEVICES)
def test_repeat_and_tile(device):
    a = rand((3, 4), "int32")
    for repeats, axis in ((3, None), (2, 0), (0, 1), ([1, 0, 2], 0), ([2, 1, 1, 3], 1), (np.array(2), None)):
        both("repeat", a, repeats, axis=axis, device=device)
    for reps in (2, (2, 1), (1, 3, 2), (0, 2), ()):
        both("tile", a, reps, device=device)
        both("tile", a[:, ::-1], reps, device=device)
    both("tile", rand(()), (2, 3), device=device)
    assert callable(cu.tile) and callable(cu.tile.kernel)  # the tile language is still there
    with pytest.raises(ValueError, match="negative"):
        cu.repeat(cu.asarray(a, device=device), -1)
    with pytest.raises(ValueError):
        cu.repeat(cu.asarray(a, device=device), [1, 2], axis=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool"])
def test_diff(dtype, device):
    a = rand((4, 6), dtype)
    for n in (0, 1, 2, 5, 9):  # 9: past both axes' lengths (empty, as NumPy)
        for axis in (0, -1):
            both("diff", a, n, axis, device=device)
    assert cu.diff(cu.asarray(a, device=device), 2**62).shape == (4, 0)  # passes stop at the length
    if dtype != "bool":
        both("diff", a, prepend=a[:, :1], append=0, device=device)
        both("ediff1d", a, device=device)
        if dtype != "uint8":
            both("ediff1d", a, to_begin=[7], to_end=[1, 2], device=device)
        else:
            with pytest.raises(TypeError, match="same_kind"):
                cu.ediff1d(cu.asarray(a, device=device), to_begin=[7])
    with pytest.raises(ValueError, match="non-negative"):
        cu.diff(cu.asarray(a, device=device), -1)


@pytest.mark.parametrize("device", DEVICES)
def test_append_insert_delete(device):
    a = rand((3, 4), "int64")
    both("append", a, rand((2, 4), "int64"), axis=0, device=device)
    both("append", a, [1, 2], device=device)
    for obj, axis in ((1, None), ([0, 2], 1), (slice(None, None, 2), 0), (-1, 1), ([0, 0, 3], 1)):
        both("delete", a, obj, axis=axis, device=device)
    for obj, values, axis in ((1, 99, None), (2, [5, 6, 7], 1), ([1, 1, 4], [7, 8, 9], 1), (0, [1, 2, 3, 4], 0),
                              (slice(1, 3), 0, 0), (4, rand((3,), "int64"), 1)):
        both("insert", a, obj, values, axis=axis, device=device)
    with pytest.raises(IndexError):
        cu.delete(cu.asarray(a, device=device), 7, axis=1)
    with pytest.raises(IndexError):
        cu.insert(cu.asarray(a, device=device), 9, 0, axis=1)


@pytest.mark.parametrize("device", DEVICES)
def test_diag_trim_resize(device):
    v = rand((4,))
    m = rand((4, 6))
    for k in (-5, -1, 0, 2, 6):
        both("diag", v, k, device=device)
        both("diag", m, k, device=device)
        both("diagflat", m[:2, :2], k, device=device)
    z = np.array([0, 0, 3, 0, 4, 0, 0])
    for trim in ("fb", "f", "b"):
        both("trim_zeros", z, trim, device=device)
    both("trim_zeros", np.zeros(3), device=device)
    for shape in ((2, 3), 11, (0,), (3, 3, 2)):
        both("resize", m, shape, device=device)
    with pytest.raises(ValueError, match="1- or 2-d"):
        cu.diag(cu.asarray(rand((2, 2, 2)), device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_index_helpers(device):
    for dims in ((2, 3), (4,), (2, 1, 3)):
        got = cu.indices(dims, device=device)
        same(got, np.indices(dims))
        same(list(cu.indices(dims, sparse=True, device=device)), list(np.indices(dims, sparse=True)))
    a = rand((4, 5))
    rows, cols = [0, 3], [1, 2, 4]
    got = cu.asarray(a, device=device)[cu.ix_(cu.asarray(rows, device=device), cu.asarray(cols, device=device))]
    same(got, a[np.ix_(rows, cols)])
    assert cu.s_[1:3] == np.s_[1:3] and cu.index_exp[1:3] == np.index_exp[1:3]
    assert cu.s_[1:3, ::2] == np.s_[1:3, ::2]


@pytest.mark.parametrize("device", DEVICES)
def test_layout_functions(device):
    a = rand((3, 4))[:, ::2]
    for fn in ("ascontiguousarray", "asfortranarray"):
        got = getattr(cu, fn)(cu.asarray(a, device=device))
        same(got, a)
    assert cu.ascontiguousarray(cu.asarray(a, device=device)).flags["C_CONTIGUOUS"]
    assert cu.asfortranarray(cu.asarray(a, device=device)).flags["F_CONTIGUOUS"]
    r = cu.require(cu.asarray(a, device=device), requirements=["C", "W"])
    assert r.flags["C_CONTIGUOUS"] and r.flags["WRITEABLE"]
    with pytest.raises(ValueError, match="both"):
        cu.require(cu.asarray(a, device=device), requirements="CF")


@pytest.mark.parametrize("device", DEVICES)
def test_copyto(device):
    dst_np = rand((3, 4))
    src_np = rand((4,))
    mask = rand((3, 4), "bool")
    dst = cu.asarray(dst_np, device=device)
    cu.copyto(dst, cu.asarray(src_np, device=device), where=cu.asarray(mask, device=device))
    np.copyto(dst_np, src_np, where=mask)
    same(dst, dst_np)
    before = np.asarray(dst).copy()
    with pytest.raises(TypeError, match="Cannot cast"):
        cu.copyto(cu.asarray(rand((3,), "int32"), device=device), cu.asarray(rand((3,)), device=device))
    same(dst, before)  # the failed call wrote nothing


# ---- properties (hypothesis): splits, insert and delete against NumPy ------------------------------------------


@st.composite
def arrays_and_axis(draw, max_side=6):
    shape = tuple(draw(st.lists(st.integers(0, max_side), min_size=1, max_size=3)))
    axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    return RNG.integers(-50, 50, shape).astype(draw(st.sampled_from(["int64", "float32"]))), axis


INDEX_LISTS = st.lists(st.integers(-8, 8), max_size=4)


@PROPERTIES
@given(case=arrays_and_axis(), sections=st.one_of(st.integers(1, 7), st.just(-1), INDEX_LISTS))
def test_split_properties_match_numpy(case, sections):
    a, axis = case
    axis = 0 if axis is None else axis
    x = cu.asarray(a)
    for cu_split, np_split in ((cu.split, np.split), (cu.array_split, np.array_split)):
        assert_same_outcome(lambda f=cu_split: f(x, sections, axis=axis), lambda f=np_split: f(a, sections, axis=axis))


POSITIONS = st.one_of(st.integers(-8, 8), INDEX_LISTS,
                      st.builds(slice, st.one_of(st.none(), st.integers(-8, 8)),
                                st.one_of(st.none(), st.integers(-8, 8)), st.sampled_from([None, 1, 2, -1, 3])))


@PROPERTIES
@given(case=arrays_and_axis(max_side=5), obj=POSITIONS,
       values=st.one_of(st.integers(-9, 9), st.lists(st.integers(-9, 9), min_size=1, max_size=3)))
def test_insert_and_delete_properties_match_numpy(case, obj, values):
    a, axis = case
    x = cu.asarray(a)
    assert_same_outcome(lambda: cu.delete(x, obj, axis=axis), lambda: np.delete(a, obj, axis=axis))
    n = a.size if axis is None else a.shape[axis]
    if isinstance(obj, list) and len(obj) > 1 and not all(-n <= i <= n for i in obj):
        # NumPy checks no bounds for several positions: they wrap or fail in its assignment
        with pytest.raises(IndexError, match="out of bounds"):
            cu.insert(x, obj, values, axis=axis)
    else:
        assert_same_outcome(lambda: cu.insert(x, obj, values, axis=axis),
                            lambda: np.insert(a, obj, values, axis=axis))
    mask = RNG.random(n) < 0.5
    assert_same_outcome(lambda: cu.delete(x, mask, axis=axis), lambda: np.delete(a, mask, axis=axis))
