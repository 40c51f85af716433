"""A 2-D five-point stencil, out = c0*x + c1*(north + south + west + east), zero outside the grid.
Each block loads five overlapping windows of x at element offsets (ct.load_offset); reads outside
the array give the padding value, so the boundary needs no special case.

    python examples/tile/stencil.py
"""

import cupric as cu
import numpy as np
from cupric import tile as ct


@ct.kernel
def stencil_kernel(x, out, c0, c1, BM: ct.Constant[int], BN: ct.Constant[int]):
    r = ct.bid(0) * BM
    c = ct.bid(1) * BN
    centre = ct.load_offset(x, offset=(r, c), shape=(BM, BN))
    north = ct.load_offset(x, offset=(r - 1, c), shape=(BM, BN))
    south = ct.load_offset(x, offset=(r + 1, c), shape=(BM, BN))
    west = ct.load_offset(x, offset=(r, c - 1), shape=(BM, BN))
    east = ct.load_offset(x, offset=(r, c + 1), shape=(BM, BN))
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=c0 * centre + c1 * (north + south + west + east))


def stencil(x, c0=0.5, c1=0.125, bm=32, bn=64, interpret=False):
    out = cu.empty_like(x)
    launcher = stencil_kernel.interpret if interpret else stencil_kernel
    launcher[(ct.cdiv(x.shape[0], bm), ct.cdiv(x.shape[1], bn))](x, out, c0, c1, bm, bn)
    return out


def reference(x, c0=0.5, c1=0.125):
    p = np.pad(x.astype(np.float64 if x.dtype == np.float64 else np.float32), 1)
    return (c0 * p[1:-1, 1:-1] + c1 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])).astype(x.dtype)


def benchmark(n=2048, m=2048, dtype=np.float32, device="cpu", repeat=5):
    from _bench import best_time

    xn = np.random.default_rng(0).standard_normal((n, m), dtype=np.float32).astype(dtype)
    x = cu.asarray(xn, device=device)
    t = best_time(lambda: stencil(x), repeat)
    t_np = best_time(lambda: reference(xn), repeat)
    return {"name": "stencil", "shape": (n, m), "seconds": t, "GB/s": 2 * xn.nbytes / t / 1e9, "numpy_seconds": t_np}


if __name__ == "__main__":
    xn = np.random.randn(101, 203).astype(np.float32)
    np.testing.assert_allclose(np.asarray(stencil(cu.asarray(xn))), reference(xn), rtol=1e-5, atol=1e-6)
    print("stencil ok;", benchmark())
