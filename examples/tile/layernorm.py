"""Layer normalisation (forward) over the last axis: y = (x - mean) / sqrt(var + eps) * w + b,
one block per row; also returns each row's mean and 1/std, as training needs them.

    python examples/tile/layernorm.py
"""

import cupric as cu
import numpy as np
from cupric import tile as ct


@ct.kernel
def layernorm_kernel(x, w, b, y, mean, rstd, eps, BLOCK: ct.Constant[int]):
    row = ct.bid(0)
    n = x.shape[1]
    t = ct.load(x, index=(row, 0), shape=(1, BLOCK)).astype(ct.float32)
    mu = ct.sum(t, axis=1, keepdims=True) / n
    centred = ct.where(ct.arange(BLOCK)[None, :] < n, t - mu, 0.0)
    var = ct.sum(centred * centred, axis=1, keepdims=True) / n
    r = 1.0 / ct.sqrt(var + eps)
    wt = ct.load(w, index=(0,), shape=(BLOCK,)).astype(ct.float32)
    bt = ct.load(b, index=(0,), shape=(BLOCK,)).astype(ct.float32)
    ct.store(y, index=(row, 0), tile=centred * r * wt[None, :] + bt[None, :])
    ct.store(mean, index=(row,), tile=ct.reshape(mu, (1,)))
    ct.store(rstd, index=(row,), tile=ct.reshape(r, (1,)))


def layernorm(x, w, b, eps=1e-5, interpret=False):
    rows, cols = x.shape
    y = cu.empty_like(x)
    mean = cu.empty(rows, dtype=cu.float32, device=x.device)
    rstd = cu.empty(rows, dtype=cu.float32, device=x.device)
    launcher = layernorm_kernel.interpret if interpret else layernorm_kernel
    launcher[(rows,)](x, w, b, y, mean, rstd, eps, cols)
    return y, mean, rstd


def reference(x, w, b, eps=1e-5):
    x = x.astype(np.float32)
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    r = 1 / np.sqrt(var + eps)
    return (x - mu) * r * w.astype(np.float32) + b.astype(np.float32), mu[:, 0], r[:, 0]


def benchmark(rows=4096, cols=2048, dtype=np.float32, device="cpu", repeat=5):
    from _bench import best_time

    rng = np.random.default_rng(0)
    xn = rng.standard_normal((rows, cols), dtype=np.float32).astype(dtype)
    wn, bn = rng.random(cols, dtype=np.float32).astype(dtype), rng.random(cols, dtype=np.float32).astype(dtype)
    x, w, b = (cu.asarray(a, device=device) for a in (xn, wn, bn))
    t = best_time(lambda: layernorm(x, w, b), repeat)
    t_np = best_time(lambda: reference(xn, wn, bn), repeat)
    return {
        "name": "layernorm",
        "shape": (rows, cols),
        "seconds": t,
        "GB/s": 2 * xn.nbytes / t / 1e9,
        "numpy_seconds": t_np,
    }


if __name__ == "__main__":
    xn, wn, bn = (
        np.random.randn(100, 333).astype(np.float32),
        np.random.rand(333).astype(np.float32),
        np.random.rand(333).astype(np.float32),
    )
    y, mu, r = layernorm(cu.asarray(xn), cu.asarray(wn), cu.asarray(bn))
    ry, rmu, rr = reference(xn, wn, bn)
    np.testing.assert_allclose(np.asarray(y), ry, rtol=1e-4, atol=1e-5)
    print("layernorm ok;", benchmark())
