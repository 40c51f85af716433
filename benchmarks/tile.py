"""cupric.tile side by side, in one process.

    python benchmarks/tile.py [--quick] [--cpu-only] [--markdown]

GPU (when a CUDA device is present; inputs are PyTorch tensors, else CuPy arrays): the example
workloads with cupric.tile, Triton and PyTorch (cuBLAS, SDPA) timed with CUDA events on the
stream each runs on; peers that are not installed are skipped; cupric's results are checked
against PyTorch's. Compile times of the softmax kernel (cold and cached, each in a new process;
NVRTC on the GPU, the host compiler on the CPU). CPU: every example kernel compiled for the CPU
against NumPy doing the same math (ratio = tile time / NumPy time; the target is <= 2), on all
cores and on one thread (smaller sizes when a GPU is present). The whole run stays within
$CUPRIC_TILE_BENCH_BUDGET seconds (default 110): sections past it are skipped. Always exits 0.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "tile"))
import cupric as cu  # noqa: E402
from _bench import best_time  # noqa: E402  (the examples' timing helper)

ROWS = []
BUDGET_S = float(os.environ.get("CUPRIC_TILE_BENCH_BUDGET", "110"))
_START = time.monotonic()


def remaining():
    return BUDGET_S - (time.monotonic() - _START)


def within_budget(what, need_s):
    if remaining() >= need_s:
        return True
    print(f"# skipped {what}: {remaining():.0f} s of the {BUDGET_S:.0f} s budget left", flush=True)
    return False


def row(section, name, **cols):
    ROWS.append((section, name, cols))
    extra = "  ".join(f"{k} {v}" for k, v in cols.items())
    print(f"{section:8s} {name:28s} {extra}", flush=True)


def median_time(fn):
    return best_time(fn, repeat=7, warmup=2)


# ---- CPU: compiled tile kernels against NumPy ----------------------------------------------------


def cpu_workloads(quick):
    import attention
    import layernorm
    import matmul
    import saxpy
    import softmax
    import stencil

    rng = np.random.default_rng(0)
    s = 4 if quick else 1
    n = (1 << 24) // s
    xn, yn = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    x, y, o = cu.asarray(xn), cu.asarray(yn), cu.empty(n, dtype=cu.float32)
    yield (
        "saxpy 2^24 f32" if not quick else "saxpy 2^22 f32",
        lambda: saxpy.saxpy(2.0, x, y, o),
        lambda: np.add(np.multiply(np.float32(2.0), xn), yn),
    )

    r, c = 4096 // s, 2048
    an = rng.standard_normal((r, c), dtype=np.float32)
    a, ao = cu.asarray(an), cu.empty((r, c), dtype=cu.float32)
    yield f"softmax {r}x{c} f32", lambda: softmax.softmax(a, ao), lambda: softmax.reference(an)
    wn, bn = rng.random(c, dtype=np.float32), rng.random(c, dtype=np.float32)
    w, b = cu.asarray(wn), cu.asarray(bn)
    yield f"layernorm {r}x{c} f32", lambda: layernorm.layernorm(a, w, b), lambda: layernorm.reference(an, wn, bn)

    m = 512
    mn, nn, biasn = (rng.standard_normal(sh, dtype=np.float32) for sh in ((m, m), (m, m), (m,)))
    ma, mb, mbias, mo = cu.asarray(mn), cu.asarray(nn), cu.asarray(biasn), cu.empty((m, m), dtype=cu.float32)
    yield (
        f"matmul+bias+relu {m}^3 f32",
        lambda: matmul.matmul_bias_relu(ma, mb, mbias, mo),
        lambda: np.maximum(mn @ nn + biasn, 0),
    )

    bh, seq, d = 8 // s, 512, 64
    qn, kn, vn = (rng.standard_normal((bh, seq, d), dtype=np.float32) for _ in range(3))
    q, k, v = (cu.asarray(t) for t in (qn, kn, vn))
    for causal in (False, True):
        yield (
            f"attention {bh}x{seq}x{d}{' causal' if causal else ''}",
            (lambda c=causal: attention.attention(q, k, v, c)),
            (lambda c=causal: attention.reference(qn, kn, vn, c)),
        )

    g = 2048 // s
    gn = rng.standard_normal((g, g), dtype=np.float32)
    gx = cu.asarray(gn)
    yield f"stencil {g}x{g} f32", lambda: stencil.stencil(gx), lambda: stencil.reference(gn)


def cpu_section(quick):
    with cu.device("cpu"):  # arrays made without a device would go to the GPU where there is one
        _cpu_section(quick)


def _cpu_section(quick):
    print(f"# CPU: cupric.tile compiled for the host vs NumPy ({os.cpu_count()} cores; NumPy {np.__version__})")
    threads = cu.get_num_threads()
    for name, tile_fn, np_fn in cpu_workloads(quick):
        if not within_budget(f"cpu {name}", 10):
            return
        tile_fn()  # compile (or load from the cache) outside the timing
        t_np = median_time(np_fn)
        cu.set_num_threads(threads)
        t_all = median_time(tile_fn)
        cu.set_num_threads(1)
        t_one = median_time(tile_fn)
        cu.set_num_threads(threads)
        row(
            "cpu",
            name,
            tile_ms=f"{t_all * 1e3:8.2f}",
            tile_1thread_ms=f"{t_one * 1e3:8.2f}",
            numpy_ms=f"{t_np * 1e3:8.2f}",
            ratio=f"{t_all / t_np:5.2f}",
            ratio_1thread=f"{t_one / t_np:5.2f}",
            target="<= 2.00",
        )


# ---- compile times --------------------------------------------------------------------------------

_SOFTMAX = textwrap.dedent("""
    import sys, time
    import numpy as np, cupric as cu
    from cupric import tile as ct
    block, device = int(sys.argv[1]), sys.argv[2]
    if device == "cuda":
        try:
            import torch
            x = torch.rand(64, block, device="cuda"); o = torch.zeros(64, block, device="cuda")
        except ImportError:
            import cupy
            x = cupy.random.rand(64, block, dtype=cupy.float32); o = cupy.zeros((64, block), cupy.float32)
        cu.cuda.Device().synchronize()
    else:
        x = cu.asarray(np.random.rand(64, block).astype(np.float32)); o = cu.zeros((64, block), dtype=cu.float32)
    @ct.kernel
    def softmax(x, out, BLOCK: ct.Constant[int]):
        row = ct.bid(0)
        t = ct.load(x, index=(row, 0), shape=(1, BLOCK), padding=-ct.inf)
        e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
        ct.store(out, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))
    t0 = time.perf_counter(); softmax[(64,)](x, o, block); t1 = time.perf_counter()
    t2 = time.perf_counter(); softmax[(64,)](x, o, block); t3 = time.perf_counter()
    t4 = time.perf_counter()
    for _ in range(200):
        softmax[(64,)](x, o, block)
    steady = (time.perf_counter() - t4) / 200
    c = next(iter(softmax.cache.values()))
    if device == "cuda":
        cu.cuda.current_stream().synchronize()
        info = c.cuda_kernels[0].compiled
        hit, seconds = info["cache_hit"], info["seconds"]
    else:
        hit, seconds = c.host["cache_hit"], c.host["compile_seconds"]
    print(t1 - t0, t3 - t2, hit, seconds, c.frontend_seconds, steady)
""")


_MATMUL = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[1])
    import torch, cupric as cu
    from cupric import tile as ct
    from matmul import matmul_kernel
    a = torch.rand(512, 512, device="cuda").to(torch.bfloat16); bias = torch.rand(512, device="cuda").to(torch.bfloat16)
    o = torch.empty_like(a); torch.cuda.synchronize()
    t0 = time.perf_counter(); matmul_kernel[(4, 4)](a, a, bias, o, 128, 128, 64); t1 = time.perf_counter()
    c = next(iter(matmul_kernel.cache.values())).cuda_kernels[0].compiled
    print(t1 - t0, c["seconds"], c["cache_hit"])
""")


def matmul_compile_row():
    """Cold compile of the matmul kernel (bf16, 128 x 128 x 64: the staged ring and wgmma) in a new
    process with an empty cache: first call, and NVRTC's part of it."""
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "matmul_compile.py"
        script.write_text(_MATMUL)
        env = dict(os.environ, CUPRIC_CACHE_DIR=str(Path(d) / "cache"))
        out = subprocess.run(
            [sys.executable, str(script), str(ROOT / "examples" / "tile")],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if out.returncode:
            print(out.stderr[-2000:])
            return
        first, nvrtc, hit = out.stdout.split()[-3:]
        tma = " (CUPRIC_TILE_TMA=1)" if os.environ.get("CUPRIC_TILE_TMA") == "1" else ""
        row(
            "compile-cuda",
            f"matmul bf16 128x128x64 cold, new kernel{tma}",
            first_call_s=f"{float(first):.3f}",
            compiler_s=f"{float(nvrtc):.3f}",
            cache_hit=hit,
            target="<= 0.5 (Triton 0.82)",
        )


def compile_section(device="cpu"):
    what = "NVRTC, the GPU path" if device == "cuda" else "the host compiler, the CPU path"
    print(f"# compile times of the softmax kernel with {what} (each in a new process)")
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "softmax_compile.py"
        script.write_text(_SOFTMAX)
        env = dict(os.environ, CUPRIC_CACHE_DIR=str(Path(d) / "cache"))
        if device == "cpu":  # cupric arrays made without a device go to the GPU where there is one
            env["CUPRIC_DEVICE"] = "cpu"

        def run(block):
            if not within_budget(f"compile ({device})", 15):
                return None
            try:
                out = subprocess.run(
                    [sys.executable, str(script), str(block), device],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=max(10, min(120, remaining())),
                )
            except subprocess.TimeoutExpired:
                print(f"# compile ({device}) timed out")
                return None
            if out.returncode:
                print(out.stderr[-2000:])
                return None
            first, second, hit, compile_s, frontend, steady = out.stdout.split()[-6:]
            return float(first), float(second), hit == "True", float(compile_s), float(frontend), float(steady)

        section = f"compile-{device}"
        r = run(1024) if device == "cpu" else None  # the CPU's first run also builds the PCH
        if r:
            row(section, "cold, empty cache (+PCH build)", first_call_s=f"{r[0]:.3f}", compiler_s=f"{r[3]:.3f}")
        r = run(2048)
        if r:
            row(
                section,
                "cold, new kernel",
                first_call_s=f"{r[0]:.3f}",
                compiler_s=f"{r[3]:.3f}",
                frontend_ms=f"{r[4] * 1e3:.2f}",
                target="<= 0.2 (GPU, NVRTC)",
            )
        r = run(2048)
        if r:
            row(
                section,
                "cached on disk, new process",
                first_call_ms=f"{r[0] * 1e3:.2f}",
                frontend_ms=f"{r[4] * 1e3:.2f}",
                cache_hit=r[2],
                target="<= 1 ms",
            )
            row(
                section,
                "in memory, next launch",
                launch_us=f"{r[1] * 1e6:.0f}",
                steady_launch_us=f"{r[5] * 1e6:.1f}",  # (host time; 200 launches of 64 rows)
                target="<= 20 us",
            )


from tile_gpu import gpu_section  # noqa: E402


def markdown():
    print("\n| section | workload | results |\n|---|---|---|")
    for section, name, cols in ROWS:
        print(f"| {section} | {name} | {', '.join(f'{k} {str(v).strip()}' for k, v in cols.items())} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--cpu-only", action="store_true")
    p.add_argument("--markdown", action="store_true")
    p.add_argument(
        "--only",
        default=None,
        help="comma-separated parts to run: saxpy, softmax (with layer norm), matmul, attention, grouped, compile, cpu",
    )
    args = p.parse_args()
    only = None if args.only is None else set(args.only.split(","))
    gpu = not args.cpu_only and cu.cuda.is_available()

    def wanted(part):
        return only is None or part in only

    for section in (
        (lambda: gpu_section(args.quick, row, within_budget, only)) if not args.cpu_only else None,
        (lambda: compile_section("cuda")) if gpu and wanted("compile") else None,
        matmul_compile_row if gpu and wanted("compile") else None,
        compile_section if wanted("compile") and (not gpu or wanted("cpu")) else None,  # the host compiler's
        (lambda: cpu_section(args.quick or gpu)) if wanted("cpu") else None,  # on the GPU machine a side show
    ):
        if section is None:
            continue
        try:
            section()
        except Exception as err:  # noqa: BLE001 - a benchmark section failing must not stop the others
            print(f"# section failed: {type(err).__name__}: {err}")
    if args.markdown:
        markdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
