"""FP8 matrix product with per-tensor scales: out = (a @ b.T) * scale_a * scale_b, as
torch._scaled_mm computes it. a (M, K) and b (N, K) are float8 (e4m3fn or e5m2) with K contiguous
in both (the layout Hopper's fp8 tensor cores read: the product takes ct.transpose of b's tile);
the scales are one-element float32 arrays (on the device, as a training step's amax scaling makes
them), applied to the float32 accumulator before the one store in out's dtype.

    python examples/tile/fp8_matmul.py
"""

import cupric as cu
import numpy as np
from cupric import tile as ct


@ct.kernel
def fp8_matmul_kernel(
    a,
    b,
    scale_a,
    scale_b,
    out,
    BM: ct.Constant[int],
    BN: ct.Constant[int],
    BK: ct.Constant[int],
    GROUP_M: ct.Constant[int] = 8,
):
    # tiles in groups of GROUP_M tile rows (as examples/tile/matmul.py): blocks running together
    # share rows of a and of b in the L2 cache
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
        tb = ct.load(b, index=(pid_n, k), shape=(BN, BK))
        acc = ct.mma(ta, ct.transpose(tb), acc)
    scale = ct.load(scale_a, index=(0,), shape=(1,)) * ct.load(scale_b, index=(0,), shape=(1,))
    ct.store(out, index=(pid_m, pid_n), tile=(acc * scale[None, :]).astype(out.dtype))


def _check(a, b, scale_a, scale_b):
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"fp8_matmul: a (M, K) and b (N, K) must share K, got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != b.dtype or a.dtype.name not in ("float8_e4m3fn", "float8_e5m2"):
        raise TypeError(f"fp8_matmul: a and b must both be float8_e4m3fn or both float8_e5m2, got {a.dtype}, {b.dtype}")
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if tuple(s.shape) != (1,) or s.dtype != np.float32:
            raise ValueError(
                f"fp8_matmul: {name} must be a float32 array of one element, got {s.dtype} {tuple(s.shape)}"
            )


def fp8_matmul(a, b, scale_a, scale_b, out=None, out_dtype=None, bm=64, bn=64, bk=128, interpret=False):
    """(a @ b.T) * scale_a * scale_b in out_dtype (default bfloat16) for fp8 a (M, K), b (N, K)."""
    _check(a, b, scale_a, scale_b)
    m, n = a.shape[0], b.shape[0]
    if out is None:
        out = cu.empty((m, n), dtype=out_dtype or cu.bfloat16, device=a.device)
    launcher = fp8_matmul_kernel.interpret if interpret else fp8_matmul_kernel
    launcher[(ct.cdiv(m, bm), ct.cdiv(n, bn))](a, b, scale_a, scale_b, out, bm, bn, bk)
    return out


def reference(a, b, scale_a, scale_b):
    """The float32 reference of the scaled inputs (float64 sums)."""
    a64, b64 = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
    return (a64 @ b64.T) * float(np.asarray(scale_a)[0]) * float(np.asarray(scale_b)[0])


if __name__ == "__main__":
    import ml_dtypes

    rng = np.random.default_rng(0)
    f8 = ml_dtypes.float8_e4m3fn
    an = rng.integers(-4, 5, (96, 256)).astype(f8)
    bn_ = rng.integers(-4, 5, (80, 256)).astype(f8)
    sa, sb = np.array([0.5], np.float32), np.array([0.25], np.float32)
    got = fp8_matmul(cu.asarray(an), cu.asarray(bn_), cu.asarray(sa), cu.asarray(sb), out_dtype=cu.float32)
    np.testing.assert_array_equal(np.asarray(got), reference(an, bn_, sa, sb))
    print("fp8 matmul ok")
