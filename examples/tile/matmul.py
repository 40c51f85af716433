"""Matrix product with a fused epilogue: out = relu(a @ b + bias). Tiles of (BM, BK) x (BK, BN)
accumulate in float32 through ct.mma (tensor cores for float16/bfloat16 on the GPU); the bias and
the relu are applied to the accumulator before the one store. `matmul_bias_relu_tuned` lets
@ct.autotune pick the tile sizes (timed once per shape and dtype, the choice kept on disk).

    python examples/tile/matmul.py
"""

import cupric as cu
import numpy as np
from cupric import tile as ct


@ct.kernel
def matmul_kernel(
    a, b, bias, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int], GROUP_M: ct.Constant[int] = 8
):
    # The blocks, in launch order, take their tiles in groups of GROUP_M tile rows: blocks running
    # at the same time share rows of a and columns of b, which then stay in the L2 cache.
    assert GROUP_M >= 1, "GROUP_M (tile rows per group) must be at least 1"
    grid_m, grid_n = ct.num_blocks(0), ct.num_blocks(1)
    pid = ct.bid(0) + ct.bid(1) * grid_m
    first_m = pid // (GROUP_M * grid_n) * GROUP_M
    rows = ct.minimum(grid_m - first_m, GROUP_M)
    pid_m = first_m + pid % (GROUP_M * grid_n) % rows
    pid_n = pid % (GROUP_M * grid_n) // rows
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(pid_m, k), shape=(BM, BK))
        tb = ct.load(b, index=(k, pid_n), shape=(BK, BN))
        acc = ct.mma(ta, tb, acc)
    acc = acc + ct.load(bias, index=(pid_n,), shape=(BN,)).astype(ct.float32)[None, :]
    ct.store(out, index=(pid_m, pid_n), tile=ct.maximum(acc, 0.0).astype(out.dtype))


@ct.kernel
def matmul_pairs_kernel(a, b, bias, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    # Tiles in launch order, down the columns: blocks bid(0) = 2i and 2i + 1 load the same tiles of
    # b, so on Hopper (with CUPRIC_TILE_MULTICAST=1) the compiler pairs them in a cluster and each
    # copies half of b's tile into both (TMA multicast): the L2 cache serves b once per pair.
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK))
        acc = ct.mma(ta, ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN)), acc)
    acc = acc + ct.load(bias, index=(ct.bid(1),), shape=(BN,)).astype(ct.float32)[None, :]
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=ct.maximum(acc, 0.0).astype(out.dtype))


def matmul_bias_relu(a, b, bias, out=None, bm=64, bn=64, bk=32, interpret=False):
    m, n = a.shape[0], b.shape[1]
    out = cu.empty((m, n), dtype=a.dtype, device=a.device) if out is None else out
    launcher = matmul_kernel.interpret if interpret else matmul_kernel
    launcher[(ct.cdiv(m, bm), ct.cdiv(n, bn))](a, b, bias, out, bm, bn, bk)
    return out


# The same kernel with its tiles chosen by timing: once per device, dtypes and shapes of a and b;
# the winner is kept in the compile cache, so a new process launches it without timing again.
matmul_tuned = ct.autotune(
    configs=[
        {"BM": 64, "BN": 64, "BK": 32},
        {"BM": 32, "BN": 64, "BK": 32},
        ct.Config({"BM": 128, "BN": 64, "BK": 32}, num_threads=256),
        ct.Config({"BM": 128, "BN": 128, "BK": 32}, num_threads=256),
        # K steps of 64: the GPU keeps a ring of stages and uses wgmma (docs/tile.md)
        ct.Config({"BM": 128, "BN": 128, "BK": 64}, num_threads=256),
        ct.Config({"BM": 128, "BN": 256, "BK": 64}, num_threads=256),
    ],
    key=["a", "b"],
)(matmul_kernel)


def matmul_bias_relu_tuned(a, b, bias, out=None):
    m, n = a.shape[0], b.shape[1]
    out = cu.empty((m, n), dtype=a.dtype, device=a.device) if out is None else out
    matmul_tuned[lambda meta: (ct.cdiv(m, meta["BM"]), ct.cdiv(n, meta["BN"]))](a, b, bias, out)
    return out


def reference(a, b, bias):
    r = a.astype(np.float32) @ b.astype(np.float32) + bias.astype(np.float32)
    return np.maximum(r, 0).astype(a.dtype)


def benchmark(m=512, n=512, k=512, dtype=np.float32, device="cpu", repeat=3):
    from _bench import best_time

    rng = np.random.default_rng(0)
    an, bn_ = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    biasn = rng.standard_normal(n, dtype=np.float32)
    a, b, bias = (cu.asarray(x, device=device).astype(dtype) for x in (an, bn_, biasn))
    out = cu.empty((m, n), dtype=dtype, device=device)
    t = best_time(lambda: matmul_bias_relu(a, b, bias, out), repeat)
    t_np = best_time(lambda: np.maximum(an @ bn_ + biasn, 0), repeat)
    return {
        "name": "matmul+bias+relu",
        "shape": (m, n, k),
        "seconds": t,
        "TFLOP/s": 2 * m * n * k / t / 1e12,
        "numpy_seconds": t_np,
    }


if __name__ == "__main__":
    an, bn_, biasn = (
        np.random.randn(100, 70).astype(np.float32),
        np.random.randn(70, 90).astype(np.float32),
        np.random.randn(90).astype(np.float32),
    )
    got = np.asarray(matmul_bias_relu(cu.asarray(an), cu.asarray(bn_), cu.asarray(biasn)))
    np.testing.assert_allclose(got, reference(an, bn_, biasn), rtol=1e-4, atol=1e-4)
    got = np.asarray(matmul_bias_relu_tuned(cu.asarray(an), cu.asarray(bn_), cu.asarray(biasn)))
    np.testing.assert_allclose(got, reference(an, bn_, biasn), rtol=1e-4, atol=1e-4)
    print("matmul ok; tuned tiles:", matmul_tuned.best_config, benchmark())
