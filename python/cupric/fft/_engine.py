"""The transforms themselves, one entry for both devices: `execute` takes an array already in its
compute dtype and the axes and lengths NumPy's rules decided. CPU: NumPy's pocketfft on zero-copy
views, each 1-D pass split over the batch on cupric's thread count (NumPy's fft releases the GIL).
GPU: cuFFT (bind_fft.cpp) over up to three trailing axes per plan, normalised afterwards."""

import concurrent.futures
import math
import threading

from .. import _cupric as _c
from .._lazy import numpy as _np

# A 1-D pass is split over threads only when each thread gets at least this many output elements:
# waking a worker and NumPy's per-call overhead cost tens of microseconds.
_MIN_ELEMENTS_PER_THREAD = 1 << 15

_pool_lock = threading.Lock()
_pool = None
_pool_size = 0


def _executor(threads):
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size != threads:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="cupric-fft")
            _pool_size = threads
        return _pool


def execute(x, kind, axes, lengths, forward, norm, callbacks=None):
    """The transform of `x` ("c2c", "r2c" or "c2r") over `axes` (in NumPy's order; for real
    transforms the last one is the halved axis) with `lengths` points each (x is cropped or
    zero-padded to them; for c2r the last is the real output's length), normalised by `norm`.
    `callbacks`: cuFFT JIT callbacks (GPU only, one plan: at most three distinct axes)."""
    if x.device == "cpu":
        if callbacks:
            raise ValueError("cuFFT callbacks run on GPUs only (on the CPU they are passes before and after)")
        return _cpu(x, kind, axes, lengths, forward, norm)
    return _gpu(x, kind, axes, lengths, forward, norm, callbacks)


def _steps(kind, axes, lengths, forward):
    """The 1-D passes NumPy makes, in its order: (function name, axis, n)."""
    c = "fft" if forward else "ifft"
    pairs = list(zip(axes, lengths, strict=True))
    if kind == "c2c":
        return [(c, a, n) for a, n in reversed(pairs)]
    if kind == "r2c":
        return [("rfft", *pairs[-1])] + [(c, a, n) for a, n in reversed(pairs[:-1])]
    return [(c, a, n) for a, n in pairs[:-1]] + [("irfft", *pairs[-1])]


# ---- CPU: pocketfft through NumPy --------------------------------------------------------------


_REAL_TO_COMPLEX = {"f": "complex64", "d": "complex128"}
_COMPLEX_TO_REAL = {"F": "float32", "D": "float64"}


def _host(x):
    """NumPy's zero-copy view of a CPU array in a compute dtype (never bfloat16)."""
    return _np.asarray(memoryview(x))


def _cpu(x, kind, axes, lengths, forward, norm):
    src, result = _host(x), x
    for name, axis, n in _steps(kind, axes, lengths, forward):
        shape = list(src.shape)
        shape[axis] = n // 2 + 1 if name == "rfft" else n
        char = src.dtype.char
        dtype = _REAL_TO_COMPLEX[char] if name == "rfft" else _COMPLEX_TO_REAL[char] if name == "irfft" else char
        result = _c.empty(tuple(shape), dtype=dtype, device="cpu")
        dst = _host(result)
        if dst.size:
            _cpu_pass(getattr(_np.fft, name), src, dst, n, axis, norm)
        src = dst
    return result


def _cpu_pass(function, src, dst, n, axis, norm):
    """One 1-D pass, the batch split along its longest axis over cupric's threads."""
    others = [d for d in range(dst.ndim) if d != axis and dst.shape[d] > 1]
    threads = min(_c.get_num_threads(), dst.size // _MIN_ELEMENTS_PER_THREAD)
    split = max(others, key=lambda d: dst.shape[d]) if others else None
    if split is not None:
        threads = min(threads, dst.shape[split])
    if threads <= 1 or split is None:
        function(src, n=n, axis=axis, norm=norm, out=dst)
        return
    bounds = [dst.shape[split] * i // threads for i in range(threads + 1)]

    def part(i):
        index = (slice(None),) * split + (slice(bounds[i], bounds[i + 1]),)
        function(src[index], n=n, axis=axis, norm=norm, out=dst[index])

    for future in [_executor(threads).submit(part, i) for i in range(threads)]:
        future.result()


# ---- GPU: cuFFT ----------------------------------------------------------------------------------


def _gpu(x, kind, axes, lengths, forward, norm, callbacks):
    if len(set(axes)) != len(axes):  # an axis twice: NumPy's passes one by one
        if callbacks:
            raise ValueError(f"callbacks need distinct axes, got {tuple(axes)}")
        for name, axis, n in _steps(kind, axes, lengths, forward):
            step = {"rfft": "r2c", "irfft": "c2r"}.get(name, "c2c")
            x = _gpu(x, step, [axis], [n], forward, norm, None)
        return x
    needed = list(lengths)
    if kind == "c2r":
        needed[-1] = lengths[-1] // 2 + 1
    x, fresh = _resized(x, axes, needed)
    nd, k = x.ndim, len(axes)
    trailing = list(range(nd - k, nd))
    y = x if axes == trailing else _c.moveaxis(x, axes, trailing)
    groups = [list(range(max(nd - k, stop - 3), stop)) for stop in range(nd, nd - k, -3)]
    if kind == "c2r":
        groups.reverse()  # the complex axes first, the halved one in the last plan
    if callbacks and len(groups) > 1:
        raise ValueError(f"callbacks need one cuFFT plan: at most 3 axes, got {k}")
    for i, group in enumerate(groups):
        real = (kind == "r2c" and i == 0) or (kind == "c2r" and i == len(groups) - 1)
        step = kind if real else "c2c"
        y = _plan_and_run(y, group, step, lengths[-1] if real else None, forward, callbacks, fresh or i > 0)
    result = y if axes == trailing else _c.moveaxis(y, trailing, axes)
    scale = _scale(norm, forward, math.prod(lengths))
    if scale != 1:
        result *= scale
    return result


def _plan_and_run(y, group, kind, real_length, forward, callbacks, scratch):
    """One cuFFT plan over the (consecutive, trailing-most) axes `group` of y."""
    nd = y.ndim
    tail = list(range(nd - len(group), nd))
    moved = group != tail
    z = _c.moveaxis(y, group, tail) if moved else y
    shape = list(z.shape)
    if kind == "r2c":
        shape[-1] = real_length // 2 + 1
    elif kind == "c2r":
        shape[-1] = real_length
    r = _c._fft_cuda(z, shape, kind, len(group), forward, callbacks, scratch)
    return _c.moveaxis(r, tail, group) if moved else r


def _resized(x, axes, needed):
    """x cropped (a view) or zero-padded (a copy) to `needed` points along each axis, and whether
    the result is a fresh array (cuFFT may then overwrite it)."""
    if all(x.shape[a] == n for a, n in zip(axes, needed, strict=True)):
        return x, False
    crop = [slice(None)] * x.ndim
    shape = list(x.shape)
    for a, n in zip(axes, needed, strict=True):
        crop[a] = slice(0, min(n, x.shape[a]))
        shape[a] = n
    x = x[tuple(crop)]
    if tuple(shape) == tuple(x.shape):
        return x, False
    padded = _c.zeros(tuple(shape), dtype=x.dtype, device=x.device)
    padded[tuple(slice(0, s) for s in x.shape)] = x
    return padded, True


def _scale(norm, forward, n):
    if norm == "ortho":
        return 1 / math.sqrt(n)
    return 1 / n if (norm == "forward") == forward else 1
