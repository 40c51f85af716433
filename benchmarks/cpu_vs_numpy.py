"""cupric's CPU backend beside NumPy, in one process: elementwise, reductions, creation and
copies, float32 and float64, 2^16 to 2^24 elements, on one thread and on all cores.

    python benchmarks/cpu_vs_numpy.py [--quick] [--markdown]

Prints the median time of each and the ratio NumPy time / cupric time (> 1: cupric is faster).
NumPy itself is single-threaded for these operations.
"""

import argparse
import os
import platform
import statistics
import sys
import time

import cupric as cu
import numpy as np


def median_time(fn, repeat):
    fn()  # warm-up (caches, page faults, lazy init)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cases(n, dtype):
    rng = np.random.default_rng(0)
    a = rng.random(n).astype(dtype) + 0.5
    b = rng.random(n).astype(dtype) + 0.5
    side = int(np.sqrt(n))
    m = rng.random((side, side)).astype(dtype)
    # the CPU, whatever the default device (host data goes to the default device: a GPU where there is one)
    x, y, xm = (cu.asarray(v, device="cpu") for v in (a, b, m))
    yield "add", (lambda: a + b), (lambda: x + y)
    yield "multiply", (lambda: a * b), (lambda: x * y)
    yield "exp", (lambda: np.exp(a)), (lambda: cu.exp(x))
    yield (
        "5-op expr",
        (lambda: np.sqrt(a * a + b * b) * 0.5 + np.sin(a)),
        (lambda: cu.sqrt(x * x + y * y) * 0.5 + cu.sin(x)),
    )
    yield "sum", (lambda: a.sum()), (lambda: x.sum())
    yield "sum axis=0", (lambda: m.sum(axis=0)), (lambda: xm.sum(axis=0))
    yield "sum axis=1", (lambda: m.sum(axis=1)), (lambda: xm.sum(axis=1))
    yield "max", (lambda: a.max()), (lambda: x.max())
    yield "zeros", (lambda: np.zeros(n, dtype)), (lambda: cu.zeros(n, dtype=dtype, device="cpu"))
    yield "copy", (lambda: a.copy()), (lambda: x.copy())
    yield "astype f64<->f32", (lambda: a.astype(np.float64 if dtype == np.float32 else np.float32)), (
        lambda: x.astype(cu.float64 if dtype == np.float32 else cu.float32))
    yield "transpose copy", (lambda: m.T.copy()), (lambda: xm.T.copy())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args()
    sizes = [2**20, 2**24] if args.quick else [2**16, 2**20, 2**24]
    threads = [1, os.cpu_count() or 1]
    print(f"# cupric {cu.__version__} vs NumPy {np.__version__} on {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, python {sys.version.split()[0]}")
    rows = []
    for nthreads in sorted(set(threads)):
        cu.set_num_threads(nthreads)
        for dtype in (np.float32, np.float64):
            for n in sizes:
                repeat = 5 if n >= 2**24 else 20
                if args.quick:
                    repeat = max(3, repeat // 4)
                for name, f_np, f_cu in cases(n, dtype):
                    t_np = median_time(f_np, repeat)
                    t_cu = median_time(f_cu, repeat)
                    rows.append((nthreads, np.dtype(dtype).name, n, name, t_np, t_cu))
                    if not args.markdown:
                        print(f"threads={nthreads} {np.dtype(dtype).name:7s} n=2^{n.bit_length() - 1:<2d} {name:17s} "
                              f"numpy {t_np * 1e3:9.3f} ms  cupric {t_cu * 1e3:9.3f} ms  ratio {t_np / t_cu:6.2f}",
                              flush=True)
    if args.markdown:
        print("| threads | dtype | n | op | NumPy ms | cupric ms | NumPy/cupric |")
        print("|---|---|---|---|---|---|---|")
        for nthreads, dt, n, name, t_np, t_cu in rows:
            print(f"| {nthreads} | {dt} | 2^{n.bit_length() - 1} | {name} | {t_np * 1e3:.3f} | {t_cu * 1e3:.3f} | "
                  f"{t_np / t_cu:.2f} |")
    worst = min(rows, key=lambda r: r[4] / r[5])
    print(f"# lowest ratio: {worst[4] / worst[5]:.2f} ({worst[3]}, {worst[1]}, 2^{worst[2].bit_length() - 1}, "
          f"{worst[0]} thread(s))")


if __name__ == "__main__":
    main()
