"""Sorting, searching and sets: cupric beside NumPy on the CPU, and beside CuPy and PyTorch on the
GPU (where installed), side by side in one run.

    python benchmarks/sort.py            # CPU cases, then GPU cases when a GPU is present
    python benchmarks/sort.py --cpu      # only the CPU cases
    python benchmarks/sort.py --scale 4  # every size divided by 4 (a quick look)

Cases (issue 14): sort of 2^24 float32 and int64 and argsort of 2^24 float32 on the CPU (all
cores; NumPy's AVX-512 sort is the anchor), sort along the rows of 4096 x 4096 float32, unique of
2^22 int32 with 2^16 distinct values, searchsorted of 2^22 queries in 2^22 sorted values, median
of 2^24 float64; on the GPU sort of 2^28 float32, argsort of 2^26 float32, rows of 16384 x 16384
float32, unique of 2^26 int32 with 2^20 distinct values and searchsorted of 2^24 in 2^24. Times are
the best of a few runs after a warm-up (which compiles the kernels); a missing peer is n/a."""

import argparse
import functools
import time

import numpy as np


def best(fn, sync, reps):
    fn()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return min(times)


def cases(n, rows, distinct, gpu):
    rng = np.random.default_rng(0)
    f32 = rng.standard_normal(n).astype(np.float32)
    i64 = rng.integers(-(2**62), 2**62, n)
    sq = rng.standard_normal((rows, rows)).astype(np.float32)
    ints = rng.integers(0, distinct, n // 4).astype(np.int32)
    m = n // (16 if gpu else 4)
    hay = np.sort(rng.standard_normal(m))
    queries = rng.standard_normal(m)
    out = [
        (f"sort {n:,} float32", lambda xp, d: xp.sort(d(f32))),
        (f"argsort {n // (4 if gpu else 1):,} float32", lambda xp, d: xp.argsort(d(f32[: n // (4 if gpu else 1)]))),
        (f"sort rows {rows} x {rows} float32", lambda xp, d: xp.sort(d(sq), axis=-1)),
        (f"unique {ints.size:,} int32 ({distinct:,} distinct)", lambda xp, d: xp.unique(d(ints))),
        (f"searchsorted {queries.size:,} in {hay.size:,}", lambda xp, d: xp.searchsorted(d(hay), d(queries))),
    ]
    if not gpu:
        out.insert(1, (f"sort {n:,} int64", lambda xp, d: xp.sort(d(i64))))
        out.append((f"median {n:,} float64", lambda xp, d: xp.median(d(f32.astype(np.float64)))))
    return out


def run(libs, case_list, reps):
    names = list(libs)
    print("| case | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label, make in case_list:
        cells = []
        for name in names:
            xp, to_device, sync = libs[name]
            try:
                data_cache = {}

                def dev(a, to_device=to_device, data_cache=data_cache):
                    key = id(a)
                    if key not in data_cache:
                        data_cache[key] = to_device(a)
                    return data_cache[key]

                make(xp, dev)  # moves the inputs once, outside the timing
                sync()
                cells.append(f"{best(functools.partial(make, xp, dev), sync, reps) * 1e3:.1f} ms")
            except Exception as e:  # noqa: BLE001
                cells.append(f"n/a ({type(e).__name__})")
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def cpu_libs():
    import cupric as cu

    return {"cupric (cpu)": (cu, lambda a: cu.asarray(a, device="cpu"), lambda: None),
            "numpy": (np, lambda a: a, lambda: None)}


def gpu_libs():
    import cupric as cu

    libs = {}
    if cu.cuda.is_available():
        libs["cupric"] = (cu, lambda a: cu.asarray(a, device="cuda:0"), lambda: cu.cuda.Device().synchronize())
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
        libs["cupy"] = (cp, cp.asarray, lambda: cp.cuda.Device().synchronize())
    except Exception:  # noqa: BLE001
        pass
    try:
        import torch

        if torch.cuda.is_available():
            class TorchNS:  # the calls the cases make, in torch's spelling
                sort = staticmethod(lambda a, axis=-1: torch.sort(a, dim=axis).values)
                argsort = staticmethod(lambda a: torch.argsort(a, stable=True))
                unique = staticmethod(torch.unique)
                searchsorted = staticmethod(torch.searchsorted)

            libs["torch"] = (TorchNS, lambda a: torch.as_tensor(a, device="cuda"), torch.cuda.synchronize)
    except Exception:  # noqa: BLE001
        pass
    return libs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", action="store_true", help="only the CPU cases")
    parser.add_argument("--scale", type=int, default=1, help="divide every size by this")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    print("## CPU\n")
    run(cpu_libs(), cases((1 << 24) // args.scale, 4096 // int(args.scale**0.5), 1 << 16, gpu=False), args.reps)
    if args.cpu:
        return
    libs = gpu_libs()
    if "cupric" not in libs:
        print("\n(no GPU: the GPU cases are skipped)")
        return
    print("\n## GPU\n")
    run(libs, cases((1 << 28) // args.scale, 16384 // int(args.scale**0.5), 1 << 20, gpu=True), args.reps)


if __name__ == "__main__":
    main()
