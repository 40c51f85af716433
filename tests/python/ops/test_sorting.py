"""cupric sort, argsort, ndarray.sort and searchsorted (src/ops/sorting.cpp and each backend's
sort/search_sorted) against NumPy: every dtype, sizes from 0 past a GPU block, duplicates, sorted
and reversed input, NaN/inf/signed zeros, views, every axis, stability, descending, errors. GPU
runs compare with the CPU backend."""

import cupric as cu
import ml_dtypes
import numpy as np
import pytest

# "cuda:old": the GPU with the first sort and unique kernels (CUPRIC_SORT_KERNEL=old, set by conftest.py)
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu), pytest.param("cuda:old", marks=pytest.mark.gpu)]
REAL = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
        "float64"]
ALL = REAL + ["bfloat16", "complex64", "complex128"]
SIZES = [0, 1, 2, 31, 32, 33, 255, 256, 257, 1000, 4097, 70_000]


def as_numpy_dtype(dtype):
    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)


def rand(dtype, shape, rng, spread=1000):
    dt = as_numpy_dtype(dtype)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -spread), min(info.max, spread)
        return rng.integers(lo, hi + 1, size=shape).astype(dt)
    x = rng.standard_normal(shape) * 10
    if np.dtype(dt).kind == "c":
        x = np.round(x) + 1j * np.round(rng.standard_normal(shape) * 3)
    return np.asarray(x).astype(dt)


def with_specials(x):
    """NaN, both infinities and both zeros sprinkled into a float array (in place)."""
    flat = x.reshape(-1)
    if flat.size >= 8:
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, np.nan, -np.nan, 0.0]
        flat[[i * (flat.size // 8) for i in range(8)]] = np.array(specials).astype(x.dtype)
    return x


def oracle(x):
    """What NumPy sorts (bfloat16 as float32, which it converts to exactly)."""
    return x.astype(np.float32) if x.dtype == ml_dtypes.bfloat16 else x


def to_host(a):
    return np.asarray(a.to_device("cpu"))


def on(x, device):
    return cu.asarray(x).to_device(device.removesuffix(":old"))


def check_sorted(x, axis, device):
    got_values = to_host(cu.sort(on(x, device), axis=axis))
    got_order = to_host(cu.argsort(on(x, device), axis=axis))
    want_order = np.argsort(oracle(x), axis=axis, kind="stable")
    np.testing.assert_array_equal(got_order, want_order)
    want = np.sort(oracle(x), axis=axis).astype(x.dtype)
    assert got_values.dtype == x.dtype and got_values.shape == want.shape
    # compared as float32: numpy.testing of some NumPy versions does not see bfloat16's NaNs as NaN
    np.testing.assert_array_equal(oracle(got_values), oracle(want))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", SIZES)
def test_sort_and_argsort_match_numpy(dtype, n, device):
    rng = np.random.default_rng(n)
    x = rand(dtype, n, rng)
    if np.dtype(as_numpy_dtype(dtype)).kind == "f" or dtype == "bfloat16":
        x = with_specials(x)
    check_sorted(x, -1, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "int64", "uint8", "complex64"])
@pytest.mark.parametrize("pattern", ["sorted", "reversed", "all_equal", "few_distinct", "two_values"])
def test_sort_patterns(dtype, pattern, device):
    rng = np.random.default_rng(7)
    n = 5000
    x = rand(dtype, n, rng)
    if pattern == "sorted":
        x = np.sort(x)
    elif pattern == "reversed":
        x = np.sort(x)[::-1].copy()
    elif pattern == "all_equal":
        x = np.full(n, x[0])
    elif pattern == "few_distinct":
        x = x[rng.integers(0, 3, n)]
    else:
        x = np.where(rng.random(n) < 0.5, x[0], x[1]).astype(x.dtype)
    check_sorted(x, -1, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "float16"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, None])
def test_every_axis(dtype, axis, device):
    x = rand(dtype, (6, 35, 9), np.random.default_rng(1), spread=5)
    check_sorted(x, axis, device)


@pytest.mark.parametrize("device", DEVICES)
def test_batched_rows_of_many_lengths(device):
    rng = np.random.default_rng(2)
    for shape in [(1000, 3), (300, 300), (3, 20_000), (2, 1, 0), (0, 5)]:
        check_sorted(rand("float32", shape, rng, spread=50), -1, device)


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_views(device):
    x = rand("int64", (40, 60), np.random.default_rng(3))
    c = on(x, device)
    for view, want in [(c[::2, ::-3], x[::2, ::-3]), (c.T, x.T), (c[5:, 7], x[5:, 7])]:
        np.testing.assert_array_equal(to_host(cu.sort(view)), np.sort(want))
        np.testing.assert_array_equal(to_host(cu.argsort(view, axis=0)), np.argsort(want, axis=0, kind="stable"))


# the GPU sort's tiles hold 4608 keys (3072 of 8-byte keys; 6144 before 2026-12-02;
# CUPRIC_SORT_KERNEL=old: 4096 and 2048): sizes around one, two and many tiles of each
TILE_SIZES = [2047, 2048, 2049, 3071, 3072, 3073, 4095, 4096, 4097, 4607, 4608, 4609, 6143, 6144, 6145, 8191, 8193,
              3 * 4096 + 1, 2 * 4608 + 1, 2 * 6144 + 1]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL)
def test_sizes_around_gpu_tiles(dtype, device):
    rng = np.random.default_rng(11)
    floating = np.dtype(as_numpy_dtype(dtype)).kind == "f" or dtype == "bfloat16"
    for n in TILE_SIZES:
        x = rand(dtype, n, rng, spread=10**6)
        if floating:
            x = with_specials(x)
        check_sorted(x, -1, device)
    check_sorted(np.full(4097, rand(dtype, 1, rng)[0]), -1, device)  # every key in one bucket


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_many_tiles_of_negative_floats_nan_and_signed_zeros(dtype, device):
    rng = np.random.default_rng(12)
    x = -np.abs(rand(dtype, (1 << 20) + 3, rng))
    x[rng.integers(0, x.size, 2000)] = np.array(np.nan).astype(x.dtype)
    x[rng.integers(0, x.size, 2000)] = np.array(-0.0).astype(x.dtype)
    x[rng.integers(0, x.size, 2000)] = np.array(0.0).astype(x.dtype)
    check_sorted(x, -1, device)
    got = to_host(cu.argsort(on(x, device), descending=True))
    want = np.argsort(-oracle(x), kind="stable")  # NaN first, equal keys in input order
    nan = np.isnan(oracle(x))
    np.testing.assert_array_equal(got, np.concatenate([np.flatnonzero(nan), want[: (~nan).sum()]]))


@pytest.mark.gpu
@pytest.mark.parametrize("device", ["cuda", "cuda:old"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint16", "int8"])
def test_large_sorts_on_the_gpu(dtype, device):
    # 2^24 keys: thousands of tiles in each pass's look-back; few distinct values, so stability counts
    rng = np.random.default_rng(14)
    x = rand(dtype, 1 << 24, rng, spread=10**9 if dtype == "int64" else 300)
    if dtype == "float32":
        x = with_specials(x)
    check_sorted(x, -1, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int64", "uint32", "float64", "uint8"])
@pytest.mark.parametrize("values", ["small", "one_byte_varies", "all_equal"])
def test_passes_over_a_shared_digit_are_skipped(dtype, values, device):
    # past 2^16 keys in one row the GPU runs only the passes whose digit differs between keys:
    # none but one when all are equal, the first or a middle one alone, a first and a last one
    rng = np.random.default_rng(15)
    n = (1 << 17) + 5
    x = rand(dtype, n, rng, spread=100)
    if values == "one_byte_varies" and dtype != "float64":
        x = (x.astype(np.int64) % 7 * 256 + 3).astype(dtype)  # the second byte alone varies
    elif values == "all_equal":
        x = np.full(n, x[0])
    check_sorted(x, -1, device)
    got = to_host(cu.argsort(on(x, device), descending=True))
    np.testing.assert_array_equal(got, np.argsort(-x.astype(np.float64), kind="stable"))


@pytest.mark.parametrize("device", DEVICES)
def test_more_rows_than_one_batch_of_scratch(device):
    # the GPU sorts rows in batches whose scratch stays bounded (about 26,000 rows of int64)
    rng = np.random.default_rng(13)
    check_sorted(rand("int64", (60_000, 3), rng, spread=10**12), -1, device)
    check_sorted(rand("float32", (30_001, 5), rng), -1, device)


def test_long_row_is_split_over_threads():
    rng = np.random.default_rng(4)
    for dtype in ["float32", "int64", "complex64"]:
        x = rand(dtype, 600_000, rng, spread=10**9)
        check_sorted(x, -1, "cpu")


@pytest.mark.parametrize("device", DEVICES)
def test_stability_by_sorting_pairs(device):
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 20, 3000).astype(np.float32)
    order = to_host(cu.argsort(on(keys, device)))
    # among equal keys the original positions must come in increasing order
    pairs = list(zip(keys[order].tolist(), order.tolist(), strict=True))
    assert pairs == sorted(pairs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "int32", "uint16", "complex64", "bool"])
def test_descending_is_stable_with_nan_first(dtype, device):
    rng = np.random.default_rng(6)
    x = rand(dtype, (4, 300), rng, spread=10)
    if dtype.startswith("float"):
        x[:, ::13] = np.nan
    # the Array API's descending order, as array-api-strict builds it from a stable ascending sort
    flipped = np.flip(np.argsort(np.flip(x, axis=1), axis=1, kind="stable"), axis=1)
    want_order = x.shape[1] - 1 - flipped
    got = to_host(cu.argsort(on(x, device), descending=True))
    np.testing.assert_array_equal(got, want_order)
    got = cu.sort(on(x, device), descending=True)
    np.testing.assert_array_equal(to_host(got), np.take_along_axis(x, want_order, 1))


@pytest.mark.parametrize("device", DEVICES)
def test_ndarray_sort_in_place(device):
    x = rand("float32", (7, 11), np.random.default_rng(8))
    c = on(x, device)
    view = c[:, 2:9]
    assert view.sort(axis=0) is None
    want = x.copy()
    want[:, 2:9].sort(axis=0)
    np.testing.assert_array_equal(to_host(c), want)
    c.sort()
    want.sort()
    np.testing.assert_array_equal(to_host(c), want)
    np.testing.assert_array_equal(to_host(c.argsort(axis=0)), want.argsort(axis=0, kind="stable"))


def test_kind_and_stable_are_accepted():
    x = cu.asarray([3, 1, 2])
    for kind in ["quicksort", "mergesort", "heapsort", "stable", None]:
        np.testing.assert_array_equal(cu.sort(x, kind=kind), [1, 2, 3])
    np.testing.assert_array_equal(cu.argsort(x, stable=False), [1, 2, 0])
    with pytest.raises(ValueError, match="sort kind"):
        cu.sort(x, kind="bogus")


def test_sort_errors_are_numpys():
    x = cu.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        cu.sort(x, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        cu.argsort(cu.asarray(1.0))
    ro = cu.broadcast_to(cu.arange(3), (2, 3))
    with pytest.raises(ValueError, match="read-only"):
        ro.sort()
    with pytest.raises(ValueError, match="order"):
        cu.sort(x, order="f0")


# ---- searchsorted ---------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(dtype, side, device):
    rng = np.random.default_rng(9)
    hay = rand(dtype, 500, rng, spread=40)
    needles = rand(dtype, (7, 13), rng, spread=45)
    if np.dtype(as_numpy_dtype(dtype)).kind == "f" or dtype == "bfloat16":
        hay = with_specials(hay)
        needles = with_specials(needles)
    hay = np.sort(oracle(hay)).astype(hay.dtype)
    want = np.searchsorted(oracle(hay), oracle(needles), side=side)
    got = to_host(cu.searchsorted(on(hay, device), on(needles, device), side=side))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted_sorter_scalars_and_promotion(device):
    rng = np.random.default_rng(10)
    a = rng.integers(0, 50, 40).astype(np.int16)
    sorter = np.argsort(a, kind="stable")
    v = rng.standard_normal(9) * 30
    np.testing.assert_array_equal(to_host(cu.searchsorted(on(a, device), on(v, device), sorter=on(sorter, device))),
                                  np.searchsorted(a, v, sorter=sorter))
    s = np.sort(a)
    assert to_host(cu.searchsorted(on(s, device), 25)) == np.searchsorted(s, 25)
    assert to_host(cu.searchsorted(on(s, device), 25.5, side="right")) == np.searchsorted(s, 25.5, side="right")
    np.testing.assert_array_equal(to_host(on(s, device).searchsorted(on(v, device))), s.searchsorted(v))
    assert to_host(cu.searchsorted(on(s[:0], device), 3)) == 0


def test_searchsorted_errors_are_numpys():
    a = cu.arange(5)
    with pytest.raises(ValueError, match="1-dimensional"):
        cu.searchsorted(cu.ones((2, 2)), 1)
    with pytest.raises(ValueError, match="sorter.size must equal a.size"):
        cu.searchsorted(a, 2, sorter=cu.asarray([0, 1]))
    with pytest.raises(ValueError, match="Sorter index out of range"):
        cu.searchsorted(a, 2, sorter=cu.asarray([0, 1, 2, 3, 5]))
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        cu.searchsorted(a, 2, side="middle")
    with pytest.raises(TypeError):
        cu.searchsorted(a, 2, sorter=cu.asarray([0.0, 1, 2, 3, 4]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_nan_classes_order_as_numpy(dtype, device):
    # NumPy's complex order: numbers, then R + nanj by R, then nan + Rj by R, then nan + nanj
    nan = np.nan
    z = np.array([complex(0, nan), 1 + 1j, complex(nan, 0), complex(2, nan), complex(nan, -1), 3 + 0j,
                  complex(nan, nan), complex(-1, nan), complex(-0.0, 1), 0j] * 5, dtype=dtype)
    z = z[np.random.default_rng(11).permutation(z.size)]
    check_sorted(z, -1, device)
    for side in ["left", "right"]:
        got = to_host(cu.searchsorted(cu.sort(on(z, device)), on(z, device), side=side))
        np.testing.assert_array_equal(got, np.searchsorted(np.sort(z), z, side=side))
