"""`python -m cupric.cache warm|info|clear`: the compile cache of everything cupric compiles at run
time (NVRTC output, tile kernels for the GPU and the CPU, GCC's precompiled header, kernel
indexes, autotune choices, compiler probes). See docs/security.md for how it is protected.

warm   compiles the common array kernels (ufuncs on bool/int32/int64/float32/float64 with array and
       scalar operands, casts, reductions, scans, random, gather) for the current GPU into the
       cache, so that a new process's first calls load them from disk instead of compiling
info   prints the cache folder, the entries and bytes of each kind, and this process's hit counts
clear  empties the cache, every kind (memory and disk, and what earlier versions left there)"""

import os
import sys
import time


def _size(n):
    if n < 1024:
        return f"{n} bytes"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}"


def _print_info(cache):
    info = cache.info()
    print(f"directory: {info['directory'] or '(memory only)'}")
    if info["note"]:
        print(f"note: {info['note']}")
    total = sum(k["bytes"] for k in info["kinds"].values())
    print(f"disk usage: {total} bytes ({_size(total)} of at most {_size(info['max_disk_bytes'])})")
    for name, k in info["kinds"].items():
        print(f"  {name:<19} {k['entries']:>6} entries {_size(k['bytes']):>11}  {k['description']}")
    legacy = info["legacy"]
    if legacy["entries"]:
        print(f"  {'(older versions)':<19} {legacy['entries']:>6} files   {_size(legacy['bytes']):>11}  "
              "never read; `clear` removes them")
    print(f"stats: {cache.stats()}")


def _warm(cu, common_only):
    """Compiles the array kernels for the current GPU into the cache, one NVRTC program per
    worker thread (NVRTC releases the GIL), with progress on a terminal; returns their count."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from ._progress import Progress

    c = cu._cupric
    arch = c._kernel_analysis.kernel_arch(cu.cuda.Device().index)
    sources = c._cuda_kernel_sources(common_only=common_only)
    workers = max(1, min(16, os.cpu_count() or 1))
    with Progress(f"compiling array kernels for {arch}", total=len(sources)) as progress, \
            ThreadPoolExecutor(workers) as pool:
        futures = {pool.submit(c._cuda_compile_kernel_source, src, arch): label for label, src in sources}
        for done in as_completed(futures):
            done.result()  # a CompileError stops the warm-up with NVRTC's log
            progress.step(futures[done])
    return len(sources)


def main(argv=None):
    import cupric as cu

    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else "info"
    cache = cu.cuda.compile_cache
    if command == "warm":
        if not cu.cuda.is_available():
            print("no CUDA GPU: nothing to warm (kernels are compiled for the GPU they run on)")
            return 1
        t = time.perf_counter()
        n = _warm(cu, common_only="--all" not in args)
        print(f"compiled or found {n} kernel sources for {cu.cuda.Device().arch} in {time.perf_counter() - t:.1f} s "
              f"(cache: {cache.directory or 'memory only'})")
    elif command == "info":
        _print_info(cache)
    elif command == "clear":
        before = cache.info()
        cache.clear()
        files = sum(k["entries"] for k in before["kinds"].values()) + before["legacy"]["entries"]
        print(f"cleared {files} files from {before['directory'] or '(memory only)'} and the memory tier")
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
