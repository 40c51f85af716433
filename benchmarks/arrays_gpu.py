"""Arrays on the GPU: cupric beside CuPy and PyTorch (where installed), in one process.

    python benchmarks/arrays_gpu.py

Cases (issue 4; targets in docs/TARGETS.md): `2*x + y` and sqrt(x*x + y*y)*0.5 + sin(x) on 2^28
float32; sum of 16384^2 float32 in full, per row and per column; the seed demo (100 random
5000x5000 float32 generated, then summed with a += loop); astype float32 -> float16; transpose-copy;
the latency of a small op (x + x on one element); a kernel's first call cold and from the disk
cache; `import` time. GB/s count the bytes each case must move at least (inputs read once, output
written once). Missing peers are n/a; the script exits 0 and stays well under two minutes."""

import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

N = 1 << 28
SQ = 16384
SEED_N, SEED_SIDE = 100, 5000
REPS = 5


def load_libs():
    libs = {}
    try:
        import cupric as cu

        if cu.cuda.is_available():
            libs["cupric"] = cu
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
        libs["cupy"] = cp
    except Exception:  # noqa: BLE001
        pass
    try:
        import torch

        if torch.cuda.is_available():
            libs["torch"] = torch
    except Exception:  # noqa: BLE001
        pass
    return libs


def sync(name, lib):
    if name == "cupric":
        lib.cuda.Device().synchronize()
    elif name == "cupy":
        lib.cuda.Device().synchronize()
    else:
        lib.cuda.synchronize()


def best_time(name, lib, fn, reps=REPS):
    fn()
    sync(name, lib)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync(name, lib)
        times.append(time.perf_counter() - t)
    return min(times)


# ---- per-library array helpers ------------------------------------------------------------------


def rand(name, lib, shape):
    if name == "cupric":
        return lib.random.default_rng(0).random(shape, dtype=lib.float32, device="cuda")
    if name == "cupy":
        return lib.random.default_rng(0).random(shape, dtype=lib.float32)
    return lib.rand(shape, device="cuda", dtype=lib.float32)


def total_sum(name, lib, x, axis=None):
    if name == "torch":
        return x.sum() if axis is None else x.sum(dim=axis)
    return lib.sum(x, axis=axis)


def cases(name, lib):
    """(case, bytes moved, callable) for one library."""
    x, y = rand(name, lib, (N,)), rand(name, lib, (N,))
    m = rand(name, lib, (SQ, SQ))
    f16 = lib.float16
    sqrt, sin = lib.sqrt, lib.sin
    out = [
        ("2*x + y (2^28 f32)", 3 * 4 * N, lambda: 2 * x + y),
        ("sqrt(x*x+y*y)*0.5+sin(x)", 3 * 4 * N, lambda: sqrt(x * x + y * y) * 0.5 + sin(x)),
        ("sum 16384^2 full", 4 * SQ * SQ, lambda: total_sum(name, lib, m)),
        ("sum per row (axis 1)", 4 * SQ * SQ, lambda: total_sum(name, lib, m, 1)),
        ("sum per column (axis 0)", 4 * SQ * SQ, lambda: total_sum(name, lib, m, 0)),
        ("astype f32 -> f16 (2^28)", 6 * N, lambda: x.astype(f16) if name != "torch" else x.to(f16)),
        ("transpose copy 16384^2", 8 * SQ * SQ, lambda: m.T.copy() if name != "torch" else m.t().contiguous()),
    ]
    return out


def seed_demo(name, lib):
    """100 random 5000x5000 float32 matrices generated, then summed with a += loop."""
    shape = (SEED_SIDE, SEED_SIDE)
    if name == "cupric":
        gen = lib.random.default_rng(1)
        make = lambda: gen.random(shape, dtype=lib.float32, device="cuda")  # noqa: E731
    elif name == "cupy":
        gen = lib.random.default_rng(1)
        make = lambda: gen.random(shape, dtype=lib.float32)  # noqa: E731
    else:
        g = lib.Generator(device="cuda").manual_seed(1)
        make = lambda: lib.rand(shape, device="cuda", generator=g)  # noqa: E731
    make()
    sync(name, lib)
    t = time.perf_counter()
    mats = [make() for _ in range(SEED_N)]
    sync(name, lib)
    t_gen = time.perf_counter() - t
    acc = mats[0] * 0
    sync(name, lib)
    t = time.perf_counter()
    for a in mats:
        acc += a
    sync(name, lib)
    t_sum = time.perf_counter() - t
    del mats
    # the same generation again, the library's memory pool now holding the blocks: what the
    # generator's kernels cost apart from the first growth of the pool
    sync(name, lib)
    t = time.perf_counter()
    mats = [make() for _ in range(SEED_N)]
    sync(name, lib)
    t_gen2 = time.perf_counter() - t
    del mats
    nbytes = SEED_N * SEED_SIDE * SEED_SIDE * 4
    return t_gen, nbytes, t_sum, 3 * nbytes, t_gen2


def small_op_us(name, lib, op=lambda x: x + x):
    x = rand(name, lib, (1,))
    for _ in range(200):
        op(x)
    sync(name, lib)
    n = 20000
    t = time.perf_counter()
    for _ in range(n):
        op(x)
    dt = (time.perf_counter() - t) / n
    sync(name, lib)
    return dt * 1e6


FIRST_CALL = """
import sys, time, cupric as cu
x = cu.ones(1000, dtype=getattr(cu, sys.argv[2]), device="cuda")
cu.cuda.Device().synchronize()
op = getattr(cu, sys.argv[1])  # a kernel nothing else here launches
t = time.perf_counter()
y = op(x, x)
cu.cuda.Device().synchronize()
print(time.perf_counter() - t)
"""


def first_call_ms(op="copysign", dtype="float32"):
    """(cold, from the disk cache) ms of a kernel's first call, each in a fresh process."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, CUPRIC_CACHE_DIR=d)
        runs = [float(subprocess.run([sys.executable, "-c", FIRST_CALL, op, dtype], env=env, capture_output=True,
                                     text=True, timeout=60, check=True).stdout.strip()) for _ in range(2)]
    return runs[0] * 1e3, runs[1] * 1e3


def import_s(module):
    times = []
    for _ in range(3):
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, timeout=60)
        if r.returncode != 0:
            return None
        times.append(time.perf_counter() - t)
    base = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], capture_output=True, timeout=60)
        base.append(time.perf_counter() - t)
    return statistics.median(times) - statistics.median(base)


def fmt_row(label, values, unit, ref="cupric"):
    cells = []
    for lib in ("cupric", "cupy", "torch"):
        v = values.get(lib)
        cells.append(f"{v:10.1f}" if isinstance(v, (int, float)) else f"{'n/a':>10}")
    ratios = []
    if isinstance(values.get(ref), (int, float)):
        for peer in ("cupy", "torch"):
            if isinstance(values.get(peer), (int, float)) and values[peer]:
                ratios.append(f"{peer} {values[ref] / values[peer]:.2f}x")
    print(f"{label:28s} {unit:5s} " + " ".join(cells) + "   " + ", ".join(ratios))


def main():
    t_start = time.perf_counter()
    libs = load_libs()
    if "cupric" not in libs:
        print("no GPU (or cupric's CUDA backend unavailable): nothing to measure")
        return 0
    import cupric as cu

    print(f"device: {cu.cuda.Device().name}; peers: {', '.join(k for k in libs if k != 'cupric') or 'none'}")
    print(f"{'case':28s} {'unit':5s} {'cupric':>10} {'cupy':>10} {'torch':>10}   cupric/peer (GB/s: >1 is faster)")
    table = {}
    for name, lib in libs.items():
        try:
            for label, nbytes, fn in cases(name, lib):
                table.setdefault(label, {})[name] = nbytes / best_time(name, lib, fn) / 1e9
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        try:
            t_gen, b_gen, t_sum, b_sum, t_gen2 = seed_demo(name, lib)
            table.setdefault("seed demo: generate", {})[name] = b_gen / t_gen / 1e9
            table.setdefault("  generate again (pool warm)", {})[name] = b_gen / t_gen2 / 1e9
            table.setdefault("seed demo: += loop", {})[name] = b_sum / t_sum / 1e9
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        try:
            table.setdefault("small op x + x", {})[name] = small_op_us(name, lib)
            table.setdefault("small op x * 2.0", {})[name] = small_op_us(name, lib, lambda x: x * 2.0)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        if name != "cupric":
            del lib
    for label, values in table.items():
        fmt_row(label, values, "us" if label.startswith("small") else "GB/s")
    try:
        for op, dtype in (("copysign", "float32"), ("arctan2", "float64")):
            cold, cached = first_call_ms(op, dtype)
            print(f"{'first call ' + op + ' ' + dtype + ', cold':34s} ms {cold:10.1f}   (target <= 100)")
            print(f"{'first call ' + op + ' ' + dtype + ', disk cache':34s} ms {cached:10.1f}   (target <= 1 + launch)")
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    imports = {m: import_s(m) for m in ("cupric", "cupy", "torch")}
    print("import s".ljust(34) + " ".join(f"{v:10.3f}" if v is not None else f"{'n/a':>10}" for v in imports.values()))
    print(f"(ran in {time.perf_counter() - t_start:.0f} s; small op: lower is better)")
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    sys.exit(0)
