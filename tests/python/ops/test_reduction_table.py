"""The reduction table (include/cupric/reduction_table.def) on every path, one parametrised check per row:
the CPU backend against NumPy's reduce of the row's ufunc, the CUDA backend against the CPU backend
(where a GPU exists), and cupric.tile (compiled for the CPU, interpreted, and on the GPU where one
exists) against the CPU backend. Adding a row to the table adds its cases here; the scans of the
table are checked the same way."""

import cupric as cu
import cupric.tile as ct
import numpy as np
import pytest
from cupric import _cupric as _c
from cupric.tile import _ops as tile_ops

ROWS, SCANS = _c._reduction_table()
BY_NAME = {r["name"]: r for r in ROWS}
GPU = pytest.mark.gpu
DTYPES = ["bool", "int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64", "complex64",
          "complex128"]
AXES = [None, 0, -1, (0, 2)]
SHAPE = (6, 5, 33)


def data(row, dtype, shape=SHAPE, seed=7):
    """Random values of `dtype` (not zeros) with NaNs and both signed zeros among the floats; near 1
    for products, so that they stay finite."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        x = rng.random(shape) < (0.97 if row["name"] == "all" else 0.03 if row["name"] == "any" else 0.5)
    elif dt.kind in "iu":
        x = rng.integers(0 if dt.kind == "u" else -60, 60, size=shape).astype(dt)
    else:
        lo, hi = (0.9, 1.1) if row["acc"] == "product" else (-4.0, 4.0)
        x = rng.uniform(lo, hi, size=shape)
        if dt.kind == "c":
            x = x + 1j * rng.uniform(lo, hi, size=shape)
        x = x.astype(dt)
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, 9, replace=False)] = np.nan
        flat[rng.choice(flat.size, 9, replace=False)] = 0.0
        flat[rng.choice(flat.size, 9, replace=False)] = -0.0
        flat[: shape[-1]] = np.nan  # a whole run of NaN: fmin/fmax of only NaNs is NaN
    return x


def result_dtype(row, dtype):
    if row["acc"] == "boolean":
        return np.dtype(bool)
    if row["acc"] in ("sum", "product"):
        return np.sum(np.zeros(1, dtype)).dtype  # NumPy's sum dtype
    return np.dtype(dtype)


def numpy_reduce(row, x, axis):
    """NumPy's ufunc.reduce of the row's ufunc, in the row's result dtype (16-bit floats in float32)."""
    acc = result_dtype(row, x.dtype)
    compute = np.float32 if acc == np.float16 else acc
    return getattr(np, row["ufunc"]).reduce(x.astype(compute), axis=axis).astype(acc)


def assert_matches(row, got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if row["acc"] in ("sum", "product") and got.dtype.kind in "fc":
        rtol = {"float16": 2e-3, "float32": 1e-5, "complex64": 1e-5}.get(got.dtype.name, 1e-12)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    else:  # combining picks one of the values: exact (NaN where NumPy has NaN)
        np.testing.assert_array_equal(got, want)


def test_rows_are_numpy_reductions():
    """Each row names a ufunc of cupric and NumPy, and its identity is NumPy's."""
    assert [r["name"] for r in ROWS][:8] == ["sum", "prod", "min", "max", "fmin", "fmax", "any", "all"]
    for row in ROWS:
        assert isinstance(getattr(cu, row["ufunc"]), cu.ufunc), row
        identity = getattr(np, row["ufunc"]).identity
        assert {"zero": 0, "one": 1}.get(row["identity"]) == (None if identity is None else int(identity)), row
        assert row["seed"] == ("data" if identity is None else "identity"), row  # idempotent extremes only
        with np.errstate(invalid="ignore"):
            number_wins = getattr(np, row["ufunc"])(np.float64(1.0), np.nan) == 1.0
        assert row["nan"] == ("none" if identity is not None else "skip" if number_wins else "propagate"), row
    assert [reduction for _, reduction in SCANS] == ["sum", "prod"]


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(BY_NAME))
def test_cpu_matches_numpy(name, dtype, axis):
    row = BY_NAME[name]
    x = data(row, dtype)
    assert_matches(row, _c._reduce(name, cu.asarray(x), axis), numpy_reduce(row, x, axis))


@pytest.mark.parametrize("name", list(BY_NAME))
def test_cpu_long_runs_and_columns(name):
    """The lane, pairwise and column paths (long contiguous runs, outer axes, several threads)."""
    row = BY_NAME[name]
    for dtype in ("float32", "int64", "bool"):
        x = data(row, dtype, shape=(3, 70001))
        for axis in (None, 0, 1):
            assert_matches(row, _c._reduce(name, cu.asarray(x), axis), numpy_reduce(row, x, axis))
            xt = np.ascontiguousarray(x.T)
            assert_matches(row, _c._reduce(name, cu.asarray(xt), axis), numpy_reduce(row, xt, axis))


@pytest.mark.parametrize("name", list(BY_NAME))
def test_empty_reductions_give_the_identity_or_raise(name):
    row = BY_NAME[name]
    x = cu.zeros((0, 3), dtype=cu.float32)
    if row["identity"] in ("zero", "one"):
        got = np.asarray(_c._reduce(name, x, 0))
        np.testing.assert_array_equal(got, numpy_reduce(row, np.zeros((0, 3), np.float32), 0))
        assert not np.signbit(got).any()  # an empty sum is +0.0, though sums start from -0.0
    else:
        with pytest.raises(ValueError, match="identity"):
            _c._reduce(name, x, 0)


@GPU
@pytest.mark.parametrize("axis", AXES + [(1, 2), 1], ids=str)
@pytest.mark.parametrize("dtype", DTYPES + ["bfloat16"])
@pytest.mark.parametrize("name", list(BY_NAME))
def test_gpu_matches_cpu(name, dtype, axis):
    row = BY_NAME[name]
    x = cu.asarray(data(row, "float32" if dtype == "bfloat16" else dtype)).astype(cu.dtype(dtype))
    for shape in (SHAPE, (2, 3, 40000)):  # (40000: split over blocks, a second pass over partials)
        x = x if x.shape == shape else cu.asarray(data(row, "float64", shape)).astype(x.dtype)
        want = _c._reduce(name, x, axis)
        got = _c._reduce(name, x.to_device("cuda"), axis).to_device("cpu")
        if dtype == "bfloat16":  # compared in float64 (NumPy has no bfloat16 arithmetic of its own)
            want, got = want.astype(cu.float64), got.astype(cu.float64)
        assert_matches(row, got, np.asarray(want))


# ---- cupric.tile ---------------------------------------------------------------------------------

R, C = 6, 37  # 37 is prime


def tile_kernel(op):
    @ct.kernel
    def reduce_both_axes(x, out0, out1, R: ct.Constant[int], C: ct.Constant[int]):
        t = ct.load(x, index=(0, 0), shape=(R, C))
        ct.store(out0, index=(0,), tile=op(t, axis=0))
        ct.store(out1, index=(0,), tile=op(t, axis=1))

    return reduce_both_axes


KERNELS = {name: tile_kernel(tile_ops.reductions[name]) for name in BY_NAME}


def tile_case(name, dtype, device, interpret):
    row = BY_NAME[name]
    x = cu.asarray(data(row, dtype, shape=(R, C)))
    want = [_c._reduce(name, x, axis) for axis in (0, 1)]
    outs = [cu.zeros(w.shape, dtype=w.dtype, device=device) for w in want]
    launch = KERNELS[name].interpret if interpret else KERNELS[name]
    launch[(1,)](x.to_device(device), *outs, R, C)
    for got, w in zip(outs, want, strict=True):
        assert_matches(row, got.to_device("cpu"), w)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpret"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint16"])
@pytest.mark.parametrize("name", list(BY_NAME))
def test_tile_on_cpu_matches_the_backend(name, dtype, interpret):
    tile_case(name, dtype, "cpu", interpret)


@GPU
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint16"])
@pytest.mark.parametrize("name", list(BY_NAME))
def test_tile_on_gpu_matches_the_backend(name, dtype):
    tile_case(name, dtype, "cuda", False)


# ---- scans -------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=GPU)])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("scan", [s for s, _ in SCANS])
def test_scans_match_numpy(scan, dtype, device):
    row = BY_NAME[dict(SCANS)[scan]]
    x = data(row, dtype, shape=(7, 300))
    x = np.where(np.isnan(x), 1, x).astype(dtype) if x.dtype.kind in "fc" else x
    ufunc = getattr(np, row["ufunc"])
    for axis in (0, 1):
        got = getattr(cu, scan)(cu.asarray(x).to_device(device), axis=axis).to_device("cpu")
        want = ufunc.accumulate(x.astype(result_dtype(row, x.dtype)), axis=axis)  # float16: rounded every step
        assert_matches(row, got, want)
