"""`python -m cupric.cache warm|info|clear`: the compile cache of cupric's kernels.

warm   compiles the common array kernels (ufuncs on bool/int32/int64/float32/float64 with array and
       scalar operands, casts, reductions, scans, random, gather) for the current GPU into the
       cache, so that a new process's first calls load them from disk instead of compiling
info   prints the cache folder, its size on disk and this process's hit counts
clear  empties the cache (memory and disk)"""

import sys
import time


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
        n = cu._cupric._cuda_warm_kernels(common_only="--all" not in args)
        print(f"compiled or found {n} kernel sources for {cu.cuda.Device().arch} in {time.perf_counter() - t:.1f} s "
              f"(cache: {cache.directory or 'memory only'})")
    elif command == "info":
        print(f"directory: {cache.directory or '(memory only)'}")
        print(f"disk usage: {cache.disk_usage()} bytes")
        print(f"stats: {cache.stats()}")
    elif command == "clear":
        cache.clear()
        print("cleared")
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
