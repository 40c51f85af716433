"""Timing helpers shared by the tile examples' benchmark functions."""

import time

import numpy as np


def best_time(fn, repeat=5, warmup=1):
    """Median wall time of fn() in seconds after `warmup` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def to_numpy(x):
    """A NumPy copy of a cupric or NumPy array (bfloat16 as float32)."""
    import cupric as cu

    if isinstance(x, cu.ndarray) and x.dtype == cu.bfloat16:
        x = x.astype(cu.float32)
    return np.asarray(x)
