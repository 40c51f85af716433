"""The founding demo: create 100 random 5000x5000 matrices and sum them, with cupric and with
NumPy side by side (and CuPy and PyTorch on the GPU, where installed), then a short tour. Runs on
the GPU when cupric has one, else on the CPU.

    make demo          (or: python examples/demo.py [--count N] [--size N])

100 float32 matrices are 10 GB; where memory is short the demo lowers the count to fit and says so.
"""

import argparse
import functools
import os
import time

import cupric as cu
import numpy as np


def available_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    sync = getattr(out, "device", None)
    if sync is not None and str(sync) != "cpu":
        float(out.reshape(-1)[0]) if hasattr(out, "reshape") else None  # wait for the device
    return out, time.perf_counter() - t0


def founding_story(n, count, dtype, device):
    itemsize = np.dtype(dtype).itemsize
    gb = count * n * n * itemsize / 1e9
    print(f"\n== {count} random {n}x{n} {dtype} matrices ({gb:.1f} GB), then their sum ==")

    rng = np.random.default_rng(0)
    mats, t_np_gen = timed(lambda: [rng.random((n, n), dtype=dtype) for _ in range(count)])

    def np_sum(mats):
        total = np.zeros((n, n), dtype)
        for m in mats:
            total += m
        return total

    np_total, t_np_sum = timed(functools.partial(np_sum, mats))
    np_check = float(np_total[0, 0])
    del mats, np_total

    # the first use of each kernel compiles it (NVRTC on the GPU), once per machine: done before
    # the clock starts, and said
    t0 = time.perf_counter()
    warm = cu.random.default_rng(1).random((n, n), dtype=getattr(cu, dtype), device=device)
    warm += warm * 0
    float(warm.mean())
    del warm
    t_first = time.perf_counter() - t0

    g = cu.random.default_rng(0)
    cmats, t_cu_gen = timed(lambda: [g.random((n, n), dtype=getattr(cu, dtype), device=device) for _ in range(count)])

    def cu_sum(cmats):
        total = cu.zeros((n, n), dtype=getattr(cu, dtype), device=device)
        for m in cmats:
            total += m
        return total

    cu_total, t_cu_sum = timed(functools.partial(cu_sum, cmats))
    mean_cu = float(cu_total.mean()) / count
    del cmats

    gen_bytes = count * n * n * itemsize  # written
    sum_bytes = 3 * count * n * n * itemsize  # read m, read and write total
    rows = [("NumPy", t_np_gen, t_np_sum), ("cupric", t_cu_gen, t_cu_sum)]
    if device != "cpu":
        rows += peer_rows(n, count, dtype)
    print(f"{'':10s}{'generate':>12s}{'GB/s':>8s}{'sum (+= loop)':>16s}{'GB/s':>8s}")
    for who, tg, ts in rows:
        where = f"   on {device}" if who == "cupric" else ""
        print(f"{who:10s}{tg:11.3f}s{gen_bytes / tg / 1e9:8.1f}{ts:15.3f}s{sum_bytes / ts / 1e9:8.1f}{where}")
    for who, tg, ts in rows:
        if who != "cupric":
            print(f"{'cupric vs ' + who:18s} generate {tg / t_cu_gen:6.2f}x   sum {ts / t_cu_sum:6.2f}x   "
                  f"({who} time / cupric time)")
    print(f"check: mean of the sum / count = {mean_cu:.4f} (expect ~0.5); NumPy total[0,0] = {np_check:.2f}; "
          f"cupric's warm-up (first use of its kernels: NVRTC compiles on a GPU) took {t_first:.2f} s, "
          "before the clock started")


def peer_rows(n, count, dtype):
    """The same story with CuPy and PyTorch on the GPU, where installed."""
    rows = []
    try:
        import cupy

        def sync():
            cupy.cuda.Device().synchronize()

        rng = cupy.random.default_rng(0)
        make = lambda: rng.random((n, n), dtype=dtype)  # noqa: E731
        rows.append(("CuPy", *_peer_times(make, sync, count)))
    except Exception:  # noqa: BLE001 - a missing or broken peer is left out
        pass
    try:
        import torch

        if torch.cuda.is_available():
            gen = torch.Generator(device="cuda").manual_seed(0)
            tdt = getattr(torch, dtype)
            make = lambda: torch.rand((n, n), device="cuda", dtype=tdt, generator=gen)  # noqa: E731
            rows.append(("PyTorch", *_peer_times(make, torch.cuda.synchronize, count)))
    except Exception:  # noqa: BLE001
        pass
    return rows


def _peer_times(make, sync, count):
    w = make()  # the kernels the timed part uses, compiled (or loaded) first, as cupric's are
    w += w * 0
    sync()
    del w
    t0 = time.perf_counter()
    mats = [make() for _ in range(count)]
    sync()
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    total = mats[0] * 0
    for m in mats:
        total += m
    sync()
    t_sum = time.perf_counter() - t0
    del mats, total
    return t_gen, t_sum


def tour(device):
    print("\n== a short tour ==")
    x = cu.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    print("x =", x)
    print("x.sum(axis=0) =", x.sum(axis=0), "  x.mean() =", float(x.mean()), "  x.argmax() =", int(x.argmax()))
    print("cu.sqrt(x * x + 1) * 0.5 + cu.sin(x) =\n", cu.sqrt(x * x + 1) * 0.5 + cu.sin(x))
    print("x.T[::-1] =\n", x.T[::-1])
    y = cu.arange(12, dtype=cu.int32, device=device).reshape(3, 4)
    print("cu.arange(12).reshape(3, 4).cumsum(axis=1) =\n", y.cumsum(axis=1))
    print("NEP 50: int8 array + 1 ->", (cu.asarray([1, 2], dtype=cu.int8, device=device) + 1).dtype,
          "; float32 array * 2.5 ->", (cu.ones(2, dtype=cu.float32, device=device) * 2.5).dtype)
    print("NumPy sees cupric CPU arrays without a copy:", np.asarray(cu.zeros(3)).base is not None)
    print("np.sum(cupric array) stays in cupric:", type(np.sum(cu.ones(4))).__module__.startswith("cupric"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--size", type=int, default=5000)
    ap.add_argument("--dtypes", default="float32,float64")
    args = ap.parse_args()
    device = str(cu._cupric._get_default_device())
    print(f"cupric {cu.__version__}, NumPy {np.__version__}; device: {device}; CPU threads: {cu.get_num_threads()}")
    for dtype in args.dtypes.split(","):
        per = args.size * args.size * np.dtype(dtype).itemsize
        budget = int(available_bytes() * 0.35)  # one library's matrices at a time, plus headroom
        count = min(args.count, max(2, budget // per))
        if count < args.count:
            print(f"\n[{args.count} {dtype} matrices need {args.count * per / 1e9:.1f} GB; this machine has "
                  f"{available_bytes() / 1e9:.1f} GB available, so the demo uses {count}]")
        founding_story(args.size, count, dtype, device)
    tour(device)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
