"""Fused row softmax: one block per row, the whole row in one tile (any width, not only powers
of two), max / exp / sum / divide without a round trip to memory.

    python examples/tile/softmax.py
"""

import cupric as cu
import numpy as np
from cupric import tile as ct


@ct.kernel
def softmax_kernel(x, out, BLOCK: ct.Constant[int]):
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, BLOCK), padding=-ct.inf).astype(ct.float32)
    e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
    ct.store(out, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))


def softmax(x, out=None, interpret=False):
    out = cu.empty_like(x) if out is None else out
    launcher = softmax_kernel.interpret if interpret else softmax_kernel
    launcher[(x.shape[0],)](x, out, x.shape[1])
    return out


def reference(x):
    x = x.astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def benchmark(rows=4096, cols=2048, dtype=np.float32, device="cpu", repeat=5):
    from _bench import best_time

    xn = np.random.default_rng(0).standard_normal((rows, cols), dtype=np.float32).astype(dtype)
    x = cu.asarray(xn, device=device)
    out = cu.empty_like(x)
    t = best_time(lambda: softmax(x, out), repeat)
    t_np = best_time(lambda: reference(xn), repeat)
    return {
        "name": "softmax",
        "shape": (rows, cols),
        "seconds": t,
        "GB/s": 2 * xn.nbytes / t / 1e9,
        "numpy_seconds": t_np,
    }


if __name__ == "__main__":
    xn = np.random.randn(300, 777).astype(np.float32)
    np.testing.assert_allclose(np.asarray(softmax(cu.asarray(xn))), reference(xn), rtol=1e-5, atol=1e-7)
    print("softmax ok;", benchmark())
