"""Sorting, searching and sets: cupric beside NumPy on the CPU, and beside CuPy and PyTorch on the
GPU (where installed), side by side in one run, with the ratios of their times to cupric's.

    python benchmarks/sort.py            # CPU cases, then GPU cases when a GPU is present
    python benchmarks/sort.py --cpu      # only the CPU cases
    python benchmarks/sort.py --gpu      # only the GPU cases (about a minute on the H200)
    python benchmarks/sort.py --scale 4  # every size divided by 4 (a quick look)
    python benchmarks/sort.py --sweep    # the digit pass's tile shapes, one process each (tuning)

On the GPU cupric runs twice: its default digit pass (kernels/sort_pass.cuh) and, as "cupric old",
the first onesweep pass (CUPRIC_SORT_KERNEL=old); then the profiler's per-kernel times of one
sort of 2^28 float32 (the histogram kernel and each digit pass) and one unique of 2^26 int32
with each.

Cases (issue 14): sort of 2^24 float32 and int64 and argsort of 2^24 float32 on the CPU (all
cores; NumPy's AVX-512 sort is the anchor), sort along the rows of 4096 x 4096 float32, unique of
2^22 int32 with 2^16 distinct values, searchsorted of 2^22 queries in 2^22 sorted values, median
of 2^24 float64; on the GPU sort and argsort of 2^24 and 2^28 int32 and float32, rows of 16384 x
16384 float32, unique of 2^26 int32 with 2^20 distinct values, searchsorted of 2^24 in 2^24,
and median and 5 percentiles of 2^24 float64 (cupric selects the ranks: no sort).
Times are the best of a few runs after a warm-up (which compiles the kernels); a missing peer is
n/a. A ratio column is the peer's time over cupric's: above 1, cupric is faster.

The floor of a GPU sort of 2^28 int32 keys: 4 digit passes each read and write 1 GiB, plus one
read for the digit histograms, ~9 GiB at ~4.0 TB/s: ~2.4 ms (CuPy/CUB measured 7.0 ms for float32)."""

import argparse
import functools
import os
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


def cpu_cases(n, rows, distinct):
    rng = np.random.default_rng(0)
    f32 = rng.standard_normal(n).astype(np.float32)
    i64 = rng.integers(-(2**62), 2**62, n)
    sq = rng.standard_normal((rows, rows)).astype(np.float32)
    ints = rng.integers(0, distinct, n // 4).astype(np.int32)
    hay = np.sort(rng.standard_normal(n // 4))
    queries = rng.standard_normal(n // 4)
    return [
        (f"sort {n:,} float32", lambda xp, d: xp.sort(d(f32))),
        (f"sort {n:,} int64", lambda xp, d: xp.sort(d(i64))),
        (f"argsort {n:,} float32", lambda xp, d: xp.argsort(d(f32))),
        (f"sort rows {rows} x {rows} float32", lambda xp, d: xp.sort(d(sq), axis=-1)),
        (f"unique {ints.size:,} int32 ({distinct:,} distinct)", lambda xp, d: xp.unique(d(ints))),
        (f"searchsorted {queries.size:,} in {hay.size:,}", lambda xp, d: xp.searchsorted(d(hay), d(queries))),
        (f"median {n:,} float64", lambda xp, d: xp.median(d(f32.astype(np.float64)))),
    ]


def gpu_cases(n, rows, distinct):
    rng = np.random.default_rng(0)
    big = {"float32": rng.standard_normal(n).astype(np.float32),
           "int32": rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)}
    sq = rng.standard_normal((rows, rows)).astype(np.float32)
    ints = rng.integers(0, distinct, n // 4).astype(np.int32)
    hay = np.sort(rng.standard_normal(n // 16))
    queries = rng.standard_normal(n // 16)
    f64 = rng.standard_normal(n // 16)
    out = []
    for fn in ("sort", "argsort"):
        for size in (n // 16, n):
            for dtype, data in big.items():
                part = data[:size]
                out.append((f"{fn} {size:,} {dtype}", lambda xp, d, fn=fn, part=part: getattr(xp, fn)(d(part))))
    out += [
        (f"sort rows {rows} x {rows} float32", lambda xp, d: xp.sort(d(sq), axis=-1)),
        (f"unique {ints.size:,} int32 ({distinct:,} distinct)", lambda xp, d: xp.unique(d(ints))),
        (f"searchsorted {queries.size:,} in {hay.size:,}", lambda xp, d: xp.searchsorted(d(hay), d(queries))),
        (f"median {f64.size:,} float64", lambda xp, d: xp.median(d(f64))),
        (f"percentile {f64.size:,} float64 (5 q)", lambda xp, d: xp.percentile(d(f64), [1, 25, 50, 75, 99])),
    ]
    return out


def run(libs, case_list, reps):
    """Prints one row per case: each library's time, then each peer's time over the first's."""
    names = list(libs)
    first, peers = names[0], names[1:]
    print("| case | " + " | ".join(names) + "".join(f" | {p} / {first}" for p in peers) + " |")
    print("|---|" + "---|" * (len(names) + len(peers)))
    for label, make in case_list:
        times = {}
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
                times[name] = best(functools.partial(make, xp, dev), sync, reps)
                data_cache.clear()
            except Exception as e:  # noqa: BLE001
                times[name] = f"n/a ({type(e).__name__})"
        cells = [f"{t * 1e3:.2f} ms" if isinstance(t, float) else t for t in times.values()]
        for p in peers:
            ok = isinstance(times[p], float) and isinstance(times[first], float)
            cells.append(f"{times[p] / times[first]:.2f}x" if ok else "n/a")
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def cpu_libs():
    import cupric as cu

    return {"cupric (cpu)": (cu, lambda a: cu.asarray(a, device="cpu"), lambda: None),
            "numpy": (np, lambda a: a, lambda: None)}


class OldSortPass:
    """cupric's namespace with CUPRIC_SORT_KERNEL=old set while each call launches its kernels."""

    def __init__(self, cu):
        self.cu = cu

    def __getattr__(self, name):
        fn = getattr(self.cu, name)

        def call(*args, **kwargs):
            with sort_kernel("old"):
                return fn(*args, **kwargs)

        return call


class sort_kernel:  # noqa: N801  (a context manager, named as the variable it sets)
    def __init__(self, which):
        self.which = which

    def __enter__(self):
        self.saved = os.environ.get("CUPRIC_SORT_KERNEL")
        if self.which:
            os.environ["CUPRIC_SORT_KERNEL"] = self.which
        else:
            os.environ.pop("CUPRIC_SORT_KERNEL", None)

    def __exit__(self, *exc):
        if self.saved is None:
            os.environ.pop("CUPRIC_SORT_KERNEL", None)
        else:
            os.environ["CUPRIC_SORT_KERNEL"] = self.saved


def gpu_libs():
    import cupric as cu

    libs = {}
    if cu.cuda.is_available():
        to_device = lambda a: cu.asarray(a, device="cuda:0")  # noqa: E731
        sync = lambda: cu.cuda.Device().synchronize()  # noqa: E731
        libs["cupric"] = (cu, to_device, sync)
        libs["cupric old"] = (OldSortPass(cu), to_device, sync)
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
    parser.add_argument("--gpu", action="store_true", help="only the GPU cases")
    parser.add_argument("--scale", type=int, default=1, help="divide every size by this")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--sweep", action="store_true", help="time the sweep pass's tile shapes (GPU)")
    args = parser.parse_args()
    if args.sweep:
        return sweep((1 << 28) // args.scale, args.reps)
    if not args.gpu:
        print("## CPU\n")
        run(cpu_libs(), cpu_cases((1 << 24) // args.scale, 4096 // int(args.scale**0.5), 1 << 16), args.reps)
    if args.cpu:
        return
    libs = gpu_libs()
    if "cupric" not in libs:
        print("\n(no GPU: the GPU cases are skipped)")
        return
    print("\n## GPU\n")
    run(libs, gpu_cases((1 << 28) // args.scale, 16384 // int(args.scale**0.5), 1 << 20), args.reps)
    pass_times((1 << 28) // args.scale)


# the sweep pass's variants: tile shape (threads,items,blocks), how a key's warp peers are found,
# and whether full tiles skip the bound checks (CUPRIC_SORT_SWEEP, _PEERS, _FULL_TILES)
VARIANTS = (("384,12,3", "atomic_or", "1"), ("384,12,3", "atomic_or", "0"), ("256,16,4", "atomic_or", "1"))


def sweep(n, reps):
    """Sorts and argsorts n float32 keys with each variant of the sweep pass (VARIANTS), each in a
    process of its own (the kernels compile per variant)."""
    import subprocess
    import sys

    code = ("import numpy as np, time, cupric as cu\n"
            f"x = cu.asarray(np.random.default_rng(1).standard_normal({n}).astype(np.float32), device='cuda:0')\n"
            "def best(f):\n"
            "    f(); cu.cuda.Device().synchronize(); t = []\n"
            f"    for _ in range({max(reps, 5)}):\n"
            "        s = time.perf_counter(); f(); cu.cuda.Device().synchronize(); t.append(time.perf_counter() - s)\n"
            "    return min(t) * 1e3\n"
            "print(f'sort {best(lambda: cu.sort(x)):.3f}  argsort {best(lambda: cu.argsort(x)):.3f}')\n")
    print(f"sort and argsort of {n:,} float32 by tile shape (threads,items,blocks), peers, full tiles: best ms")
    for shape, peers, full in VARIANTS:
        env = dict(os.environ, CUPRIC_SORT_SWEEP=shape, CUPRIC_SORT_PEERS=peers, CUPRIC_SORT_FULL_TILES=full)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        print(f"sweep {shape} {peers} full={full}: "
              + (r.stdout.strip() if r.returncode == 0 else "failed: " + r.stderr.strip()[-200:]), flush=True)


def pass_times(n):
    """The profiler's device time per kernel of a float32 sort of n keys (each digit pass) and of
    a unique of n / 4 int32 with 2^20 distinct values, with either pass kernel."""
    import cupric as cu

    rng = np.random.default_rng(1)
    host = rng.standard_normal(n).astype(np.float32)
    x = cu.asarray(host, device="cuda:0")
    ints = cu.asarray(rng.integers(0, 1 << 20, n // 4).astype(np.int32), device="cuda:0")
    cases = [(f"sort {n:,} float32", lambda: cu.sort(x)), (f"unique {n // 4:,} int32", lambda: cu.unique(ints))]
    for label, fn in cases:
        for which in (None, "old"):
            with sort_kernel(which):
                fn()  # compiled and warm
                cu.cuda.Device().synchronize()
                try:
                    with cu.profiler.profile() as prof:
                        fn()
                        cu.cuda.Device().synchronize()
                except Exception as e:  # noqa: BLE001
                    print(f"\n(no per-kernel times: {type(e).__name__}: {e})")
                    return
            print(f"\n### {label}, {which or 'default'} kernels: device time per kernel\n")
            print(prof.table(group_by="kernel"))
            if label.startswith("sort"):
                print_pass_times(prof, host)


def print_pass_times(prof, host):
    """Each digit pass's device time beside how its digit spreads over the float32 keys (distinct
    digits, the share of the commonest): the passes run from the low byte up, one launch each
    (normal floats vary in every byte, so none is skipped)."""
    keys = host.view(np.uint32)
    keys = np.where(keys >> 31, ~keys, keys | np.uint32(1 << 31))  # the sort's order-preserving key
    calls = sorted((e for e in prof.events if e.kind == "kernel" and e.name.startswith(("sort_sweep", "sort_pass"))),
                   key=lambda e: e.gpu_t0_ns)
    for k, e in enumerate(calls):
        counts = np.bincount((keys >> np.uint32(8 * k)) & np.uint32(255), minlength=256)
        print(f"pass {k} (bits {8 * k}-{8 * k + 7}): {e.gpu_ns / 1e6:.3f} ms, "
              f"{np.count_nonzero(counts)} distinct digits, commonest {counts.max() / keys.size:.1%}")


if __name__ == "__main__":
    main()
