"""cupric.tile shape ops: reshape, permute / transpose / .T, expand_dims and t[:, None],
broadcast_to, on tiles whose extents are not powers of two."""

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from tile_helpers import assert_close, random, run, to_cu, to_np


@ct.kernel
def shapes(x, r, p, t, e, b, A: ct.Constant[int], B: ct.Constant[int], C: ct.Constant[int]):
    v = ct.load(x, index=(0, 0, 0), shape=(A, B, C))
    ct.store(r, index=(0, 0), tile=ct.reshape(v, (A * B, -1)))
    ct.store(p, index=(0, 0, 0), tile=ct.permute(v, (2, 0, 1)))
    m = ct.reshape(v, (A, B * C))
    ct.store(t, index=(0, 0), tile=m.T + ct.transpose(m))
    row = ct.sum(m, axis=0)
    ct.store(e, index=(0, 0, 0), tile=ct.expand_dims(row, 0)[:, None, :] + row[None, None, :])
    ct.store(b, index=(0, 0), tile=ct.broadcast_to(row[None, :], (A, B * C)) - m)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int16"])
def test_shape_ops(dtype, mode):
    A, B, C = 3, 5, 7
    x = random((A, B, C), dtype)
    outs = [
        cu.zeros((A * B, C), dtype=cu.dtype(dtype)),
        cu.zeros((C, A, B), dtype=cu.dtype(dtype)),
        cu.zeros((B * C, A), dtype=cu.dtype(dtype)),
    ]
    acc = "int64" if dtype == "int16" else dtype
    outs += [cu.zeros((1, 1, B * C), dtype=cu.dtype(acc)), cu.zeros((A, B * C), dtype=cu.dtype(acc))]
    run(shapes, mode, (1,), to_cu(x), *outs, A, B, C)
    m = x.reshape(A, B * C)
    row = m.astype(np.float32).sum(0).astype(x.dtype) if dtype == "bfloat16" else m.sum(0)
    tol = {"rtol": 3e-2, "atol": 0.1} if dtype == "bfloat16" else {}
    assert_close(to_np(outs[0]), x.reshape(A * B, C), dtype)
    assert_close(to_np(outs[1]), np.transpose(x, (2, 0, 1)), dtype)
    assert_close(to_np(outs[2]), (m.T.astype(np.float32) * 2).astype(x.dtype), dtype)
    assert_close(to_np(outs[3]), (row.astype(np.float32) * 2).astype(row.dtype)[None, None, :], dtype, **tol)
    assert_close(to_np(outs[4]), (row[None, :].astype(np.float64) - m).astype(row.dtype), dtype, **tol)


@ct.kernel
def transpose_2d(x, out, BM: ct.Constant[int], BN: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1)), shape=(BM, BN))
    ct.store(out, index=(ct.bid(1), ct.bid(0)), tile=ct.transpose(t))


def test_blocked_transpose_non_multiple(mode):
    x = random((45, 29), "float64")
    out = cu.zeros((29, 45), dtype=cu.float64)
    run(transpose_2d, mode, (ct.cdiv(45, 16), ct.cdiv(29, 12)), to_cu(x), out, 16, 12)
    np.testing.assert_array_equal(to_np(out), x.T)
