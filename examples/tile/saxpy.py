"""Vector add and saxpy (out = alpha * x + y): the memory-bound baseline of cupric.tile.

python examples/tile/saxpy.py        # checks against NumPy, then times it on the CPU
"""

import cupric as cu
import numpy as np
from cupric import tile as ct


@ct.kernel
def add_kernel(x, y, out, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    b = ct.load(y, index=(i,), shape=(BLOCK,))
    ct.store(out, index=(i,), tile=a + b)


@ct.kernel
def saxpy_kernel(alpha, x, y, out, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(BLOCK,))
    b = ct.load(y, index=(i,), shape=(BLOCK,))
    ct.store(out, index=(i,), tile=alpha * a + b)


def _launcher(kernel, interpret):
    return kernel.interpret if interpret else kernel


def add(x, y, out=None, block=4096, interpret=False):
    out = cu.empty_like(x) if out is None else out
    _launcher(add_kernel, interpret)[(ct.cdiv(x.shape[0], block),)](x, y, out, block)
    return out


def saxpy(alpha, x, y, out=None, block=4096, interpret=False):
    out = cu.empty_like(x) if out is None else out
    _launcher(saxpy_kernel, interpret)[(ct.cdiv(x.shape[0], block),)](alpha, x, y, out, block)
    return out


def reference(alpha, x, y):
    return (alpha * x.astype(np.float32) + y.astype(np.float32)).astype(x.dtype)


def benchmark(n=1 << 24, dtype=np.float32, device="cpu", repeat=5):
    """Seconds and GB/s (3 arrays moved) of saxpy on `device`, and NumPy's time for the same math."""
    from _bench import best_time

    rng = np.random.default_rng(0)
    xn, yn = rng.random(n, dtype=np.float32).astype(dtype), rng.random(n, dtype=np.float32).astype(dtype)
    x, y = cu.asarray(xn, device=device), cu.asarray(yn, device=device)
    out = cu.empty_like(x)
    t = best_time(lambda: saxpy(2.0, x, y, out), repeat)
    t_np = best_time(lambda: np.add(np.multiply(np.float32(2.0), xn, out=np.empty_like(xn)), yn), repeat)
    nbytes = 3 * n * np.dtype(dtype).itemsize
    return {"name": "saxpy", "n": n, "seconds": t, "GB/s": nbytes / t / 1e9, "numpy_seconds": t_np}


if __name__ == "__main__":
    xn, yn = np.random.rand(100_003).astype(np.float32), np.random.rand(100_003).astype(np.float32)
    got = np.asarray(saxpy(3.0, cu.asarray(xn), cu.asarray(yn), block=1000))
    np.testing.assert_allclose(got, reference(3.0, xn, yn), rtol=1e-6)
    print("saxpy ok;", benchmark())
