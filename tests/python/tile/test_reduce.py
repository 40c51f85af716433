"""cupric.tile reductions (sum, prod, max, min, argmax, argmin) over each axis with and without
keepdims, scans (cumsum, cumprod), NaN handling and dtype rules, against NumPy."""

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from tile_helpers import assert_close, random, run, to_cu, to_np

SHAPE = (6, 37)  # tile == whole array; 37 is prime


@ct.kernel
def reduce_axes(x, s0, s1, mx0, mn1, pr1, sall, R: ct.Constant[int], C: ct.Constant[int]):
    t = ct.load(x, index=(0, 0), shape=(R, C))
    ct.store(s0, index=(0, 0), tile=ct.sum(t, axis=0, keepdims=True))
    ct.store(s1, index=(0,), tile=ct.sum(t, axis=1))
    ct.store(mx0, index=(0,), tile=ct.max(t, axis=0))
    ct.store(mn1, index=(0, 0), tile=ct.min(t, axis=-1, keepdims=True))
    ct.store(pr1, index=(0,), tile=ct.prod(t * 0.5, axis=1))
    ct.store(sall, index=(0,), tile=ct.sum(t))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "int8", "uint16"])
def test_reductions(dtype, mode):
    x = random(SHAPE, dtype)
    R, C = SHAPE
    acc = "int64" if dtype in ("int32", "int8") else "uint64" if dtype == "uint16" else dtype
    half = dtype in ("float16", "bfloat16")
    outs = [
        cu.zeros((1, C), dtype=cu.dtype(acc)),
        cu.zeros(R, dtype=cu.dtype(acc)),
        cu.zeros(C, dtype=cu.dtype(dtype)),
        cu.zeros((R, 1), dtype=cu.dtype(dtype)),
        cu.zeros(R, dtype=cu.float64 if dtype.startswith(("int", "uint")) else cu.dtype(acc)),
        cu.zeros(1, dtype=cu.dtype(acc)),
    ]
    run(reduce_axes, mode, (1,), to_cu(x), *outs, R, C)
    xf = x.astype(np.float32) if half else x
    tol = {"float16": dict(rtol=4e-3, atol=4e-3), "bfloat16": dict(rtol=3e-2, atol=6e-2)}.get(dtype, {})
    assert_close(to_np(outs[0]), xf.sum(0, keepdims=True).astype(x.dtype if half else acc), dtype, **tol)
    assert_close(to_np(outs[1]), xf.sum(1).astype(x.dtype if half else acc), dtype, **tol)
    assert_close(to_np(outs[2]), x.max(0), dtype)
    assert_close(to_np(outs[3]), x.min(-1, keepdims=True), dtype)
    pr = (xf * 0.5).prod(1)
    assert_close(to_np(outs[4]), pr, dtype, rtol=5e-2 if half else 1e-5, atol=1e-6)
    assert_close(
        to_np(outs[5]),
        np.array([xf.sum()]).astype(x.dtype if half else acc),
        dtype,
        **({"rtol": 1e-2, "atol": 0.5} if half else {}),
    )


@ct.kernel
def arg_and_nan(x, amax, amin, mx, am_all, R: ct.Constant[int], C: ct.Constant[int]):
    t = ct.load(x, index=(0, 0), shape=(R, C))
    ct.store(amax, index=(0,), tile=ct.argmax(t, axis=1))
    ct.store(amin, index=(0, 0), tile=ct.argmin(t, axis=0, keepdims=True))
    ct.store(mx, index=(0,), tile=ct.max(t, axis=1))
    ct.store(am_all, index=(0,), tile=ct.argmax(t))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int16"])
def test_argmax_argmin_and_nan(dtype, mode):
    R, C = 5, 19
    x = random((R, C), dtype)
    x[1, 4] = x[1, 9] = x[1].max() + 1  # ties: the first index wins
    if dtype != "int16":
        x[2, 7] = np.nan
        x[3, 2] = x[3, 11] = np.nan
    outs = [
        cu.zeros(R, dtype=cu.int32),
        cu.zeros((1, C), dtype=cu.int32),
        cu.zeros(R, dtype=cu.dtype(dtype)),
        cu.zeros(1, dtype=cu.int32),
    ]
    run(arg_and_nan, mode, (1,), to_cu(x), *outs, R, C)
    xf = x.astype(np.float32) if dtype == "bfloat16" else x
    np.testing.assert_array_equal(to_np(outs[0]), xf.argmax(1))
    np.testing.assert_array_equal(to_np(outs[1]), xf.argmin(0, keepdims=True))
    assert_close(to_np(outs[2]), x.max(1), dtype)
    np.testing.assert_array_equal(to_np(outs[3]), [xf.argmax()])


@ct.kernel
def scans(x, cs0, cs1, cp, csf, R: ct.Constant[int], C: ct.Constant[int]):
    t = ct.load(x, index=(0, 0), shape=(R, C))
    ct.store(cs0, index=(0, 0), tile=ct.cumsum(t, axis=0))
    ct.store(cs1, index=(0, 0), tile=ct.cumsum(t, axis=1))
    ct.store(cp, index=(0, 0), tile=ct.cumprod(t * 0.25 + 1, axis=1))
    ct.store(csf, index=(0,), tile=ct.cumsum(t))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bfloat16"])
def test_scans(dtype, mode):
    R, C = 4, 23
    x = random((R, C), dtype)
    acc = "int64" if dtype == "int32" else dtype
    outs = [
        cu.zeros((R, C), dtype=cu.dtype(acc)),
        cu.zeros((R, C), dtype=cu.dtype(acc)),
        cu.zeros((R, C), dtype=cu.float64 if dtype == "int32" else cu.dtype(dtype)),
        cu.zeros(R * C, dtype=cu.dtype(acc)),
    ]
    run(scans, mode, (1,), to_cu(x), *outs, R, C)
    xf = x.astype(np.float32) if dtype == "bfloat16" else x
    tol = dict(rtol=3e-2, atol=0.2) if dtype == "bfloat16" else {}
    assert_close(to_np(outs[0]), np.cumsum(xf, 0).astype(acc if dtype != "bfloat16" else x.dtype), dtype, **tol)
    assert_close(to_np(outs[1]), np.cumsum(xf, 1).astype(acc if dtype != "bfloat16" else x.dtype), dtype, **tol)
    assert_close(to_np(outs[2]), np.cumprod(xf * 0.25 + 1, 1), dtype, **(tol or {"rtol": 1e-5}))
    assert_close(to_np(outs[3]), np.cumsum(xf).astype(acc if dtype != "bfloat16" else x.dtype), dtype, **tol)


@ct.kernel
def row_sums(x, out, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(1, BLOCK))
    ct.store(out, index=(ct.bid(0),), tile=ct.sum(t, axis=1))


def test_reduction_over_padding_uses_padding_value(mode):
    """A tile wider than the row reads padding (0 by default), which does not change a sum."""
    x = random((7, 45), "float32")
    out = cu.zeros(7, dtype=cu.float32)
    run(row_sums, mode, (7,), to_cu(x), out, 64)
    assert_close(to_np(out), x.sum(1), rtol=1e-5, atol=1e-5)
