"""cupric.tile matrix products: ct.mma / ct.matmul / @ with float32 accumulation for float16,
bfloat16 and float32, float64 and int8, tile shapes that are not multiples of 16."""

import cupric as cu
import numpy as np
import pytest
from tile_helpers import BF16, assert_close, random, run, to_cu, to_np
from cupric import tile as ct


@ct.kernel
def mma_blocked(a, b, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int], ACC: ct.Constant[object]):
    acc = ct.zeros((BM, BN), dtype=ACC)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK))
        tb = ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN))
        acc = ct.mma(ta, tb, acc)
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=acc)


@pytest.mark.parametrize(
    "dtype,acc",
    [
        ("float16", "float32"),
        ("bfloat16", "float32"),
        ("float32", "float32"),
        ("float64", "float64"),
        ("int8", "int32"),
    ],
)
def test_mma_dtypes(dtype, acc, mode):
    rng = np.random.default_rng(11)
    M, K, N = 37, 50, 29
    a, b = random((M, K), dtype, rng), random((K, N), dtype, rng)
    out = cu.zeros((M, N), dtype=cu.dtype(acc))
    run(mma_blocked, mode, (ct.cdiv(M, 16), ct.cdiv(N, 24)), to_cu(a), to_cu(b), out, 16, 24, 20, cu.dtype(acc))
    want = a.astype(np.float64) @ b.astype(np.float64)
    if acc == "int32":
        np.testing.assert_array_equal(to_np(out), want.astype(np.int32))
    else:
        assert_close(
            to_np(out), want, acc, rtol=1e-4 if acc == "float32" else 1e-11, atol=1e-3 if acc == "float32" else 1e-9
        )


@ct.kernel
def matmul_ops(a, b, out1, out2, M: ct.Constant[int], K: ct.Constant[int], N: ct.Constant[int]):
    ta = ct.load(a, index=(0, 0), shape=(M, K))
    tb = ct.load(b, index=(0, 0), shape=(K, N))
    ct.store(out1, index=(0, 0), tile=ct.matmul(ta, tb))
    ct.store(out2, index=(0, 0), tile=(ta @ tb) * 2)


def test_matmul_and_operator(mode):
    a, b = random((9, 13), "bfloat16"), random((13, 11), "bfloat16")
    out1, out2 = cu.zeros((9, 11), dtype=cu.float32), cu.zeros((9, 11), dtype=cu.float32)
    run(matmul_ops, mode, (1,), to_cu(a), to_cu(b), out1, out2, 9, 13, 11)
    want = a.astype(np.float32) @ b.astype(np.float32)
    assert_close(to_np(out1), want, rtol=1e-5, atol=1e-4)
    assert_close(to_np(out2), 2 * want, rtol=1e-5, atol=1e-4)
    assert BF16 is not None
