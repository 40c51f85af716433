"""The GPU part of benchmarks/tile.py: cupric.tile kernels against Triton and PyTorch (cuBLAS, SDPA)
on one device, in one process. Inputs are PyTorch tensors (CuPy arrays when PyTorch is missing:
no bfloat16 then); every time comes from CUDA events recorded on the stream the work runs on, and
every cupric result is checked against PyTorch's before it is timed."""

import functools
import math
import time

import cupric as cu
from cupric import tile as ct

# Tile configurations for the H200 sizes (chosen from ptxas' register and spill report; see
# docs/tile.md). matmul 128x128x32 at 256 threads: the accumulator stays in registers (mma layout,
# warps 4x2 of 2x8 fragments), 201 registers, no spills, 37 KB of shared memory (two staging
# buffers; 128x128x64 spills). Attention at D=128: q staged in shared memory once, k and v
# prefetched; 64x64 fits in 252 registers without spills (64x32: 198, 128x32: 237, 128x64 spills)
# and halves the barriers per key against 64x32 (each runs one block of 8 warps per SM).
SAXPY_BLOCK = 8192
MATMUL_TILES = (128, 256, 64)  # one block per SM: a producer warpgroup fills the TMA ring (sm_90)
ATTENTION_TILES = (128, 128)


def _event_time(fn, stream, target_s=0.3, max_repeat=50):
    """Seconds per call of fn(), from events on `stream` (warm-up first; repeats sized to about
    target_s of GPU time)."""
    fn()
    start, end = cu.cuda.Event(), cu.cuda.Event()
    start.record(stream)
    fn()
    end.record(stream)
    end.synchronize()
    once = max((end - start) / 1e3, 1e-6)
    repeat = int(min(max_repeat, max(3, target_s / once)))
    start.record(stream)
    for _ in range(repeat):
        fn()
    end.record(stream)
    end.synchronize()
    return (end - start) / 1e3 / repeat


class Peers:
    """What is installed, and the stream each library runs on."""

    def __init__(self):
        self.torch = self.triton = self.cupy = None
        try:
            import torch

            if torch.cuda.is_available():
                self.torch = torch
        except ImportError:
            pass
        try:
            import triton  # noqa: F401
            import triton.language  # noqa: F401

            self.triton = triton
        except Exception:  # noqa: BLE001 - a broken Triton install is a missing peer
            pass
        if self.torch is None:
            try:
                import cupy

                self.cupy = cupy
            except ImportError:
                pass
        self.cupric_stream = cu.cuda.current_stream()
        self.torch_stream = cu.cuda.Stream.wrap(self.torch.cuda.current_stream()) if self.torch else None

    def rand(self, shape, dtype="float32", scale=1.0):
        if self.torch is not None:
            t = getattr(self.torch, dtype)
            return (self.torch.randn(shape, device="cuda", dtype=self.torch.float32) * scale).to(t)
        if dtype == "bfloat16":
            return None
        return self.cupy.random.standard_normal(shape, dtype=self.cupy.float32) * scale

    def empty_like(self, x):
        return self.torch.empty_like(x) if self.torch is not None else self.cupy.empty_like(x)

    def sync(self):
        cu.cuda.Device().synchronize()


def _max_error(got, want):
    """max |got - want| / max |want| (PyTorch tensors or CuPy arrays)."""
    got, want = got.float() if hasattr(got, "float") else got, want.float() if hasattr(want, "float") else want
    return float(abs(got - want).max()) / max(float(abs(want).max()), 1e-30)


def _checked_time(p, name, run, got, want, tol):
    """Runs `run` once, checks `got` against `want()` (PyTorch's), then times it on cupric's stream:
    (status, seconds a call)."""
    run()
    p.sync()
    status = _check(name, got, want(), tol)
    return status, _event_time(run, p.cupric_stream, target_s=0.5, max_repeat=10)


def _check(name, got, want, tol):
    err = _max_error(got, want)
    return f"ok ({err:.1e})" if err <= tol else f"MISMATCH (relative error {err:.2e} > {tol:g})"


# ---- Triton peers (defined only when Triton is installed) ---------------------------------------


@functools.lru_cache(maxsize=1)
def _triton_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def saxpy_k(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(o_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    @triton.jit
    def softmax_k(x_ptr, o_ptr, cols, BLOCK: tl.constexpr):
        r = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        t = tl.load(x_ptr + r * cols + offs, mask=offs < cols, other=-float("inf"))
        e = tl.exp(t - tl.max(t, 0))
        tl.store(o_ptr + r * cols + offs, e / tl.sum(e, 0), mask=offs < cols)

    @triton.jit
    def layernorm_k(x_ptr, w_ptr, b_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
        r = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        m = offs < cols
        x = tl.load(x_ptr + r * cols + offs, mask=m, other=0.0)
        mean = tl.sum(x, 0) / cols
        c = tl.where(m, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(c * c, 0) / cols + eps)
        w = tl.load(w_ptr + offs, mask=m)
        b = tl.load(b_ptr + offs, mask=m)
        tl.store(y_ptr + r * cols + offs, c * rstd * w + b, mask=m)

    return triton, saxpy_k, softmax_k, layernorm_k


# ---- the workloads ----------------------------------------------------------------------------------


def _saxpy(p, quick, row):
    import saxpy

    n = 1 << (26 if quick else 28)
    x, y = p.rand(n), p.rand(n)
    o = p.empty_like(x)
    nbytes = 3 * 4 * n

    def run():
        saxpy.saxpy_kernel[(ct.cdiv(n, SAXPY_BLOCK),)](2.0, x, y, o, SAXPY_BLOCK)

    run()
    p.sync()
    status = _check("saxpy", o, 2.0 * x + y, 1e-6)
    t = _event_time(run, p.cupric_stream)
    row(
        "gpu",
        f"saxpy 2^{n.bit_length() - 1} f32 cupric.tile",
        TB_s=f"{nbytes / t / 1e12:.2f}",
        target=">= 3.8",
        check=status,
    )
    if p.torch is not None:
        t = _event_time(lambda: p.torch.add(y, x, alpha=2.0, out=o), p.torch_stream)
        row("gpu", "saxpy torch", TB_s=f"{nbytes / t / 1e12:.2f}")
    if p.triton is not None and p.torch is not None:
        triton, saxpy_k, _, _ = _triton_kernels()
        t = _event_time(lambda: saxpy_k[(triton.cdiv(n, 4096),)](x, y, o, n, BLOCK=4096), p.torch_stream)
        row("gpu", "saxpy triton", TB_s=f"{nbytes / t / 1e12:.2f}")


def _rows(p, quick, row):
    """Softmax and layer norm over rows of 8192 float32."""
    import layernorm
    import softmax

    r, c = (4096, 8192) if quick else (16384, 8192)
    a = p.rand((r, c))
    o = p.empty_like(a)
    nbytes = 2 * r * c * 4

    def run_softmax():
        softmax.softmax_kernel[(r,)](a, o, c)

    run_softmax()
    p.sync()
    want = p.torch.softmax(a, dim=1) if p.torch is not None else None
    status = _check("softmax", o, want, 1e-5) if want is not None else "unchecked"
    t = _event_time(run_softmax, p.cupric_stream)
    row("gpu", f"softmax {r}x{c} f32 cupric.tile", TB_s=f"{nbytes / t / 1e12:.2f}", target=">= 3.0", check=status)
    if p.torch is not None:
        t = _event_time(lambda: p.torch.softmax(a, dim=1), p.torch_stream)
        row("gpu", "softmax torch", TB_s=f"{nbytes / t / 1e12:.2f}")
        if p.triton is not None:
            triton, _, softmax_k, layernorm_k = _triton_kernels()
            t = _event_time(
                lambda: softmax_k[(r,)](a, o, c, BLOCK=triton.next_power_of_2(c), num_warps=8), p.torch_stream
            )
            row("gpu", "softmax triton", TB_s=f"{nbytes / t / 1e12:.2f}")

    w, b = p.rand(c), p.rand(c)
    mean, rstd = p.rand(r), p.rand(r)

    def run_layernorm():
        layernorm.layernorm_kernel[(r,)](a, w, b, o, mean, rstd, 1e-5, c)

    run_layernorm()
    p.sync()
    status = "unchecked"
    if p.torch is not None:
        want = p.torch.nn.functional.layer_norm(a, (c,), w, b, 1e-5)
        status = _check("layernorm", o, want, 1e-4)
    t = _event_time(run_layernorm, p.cupric_stream)
    row("gpu", f"layernorm {r}x{c} f32 cupric.tile", TB_s=f"{nbytes / t / 1e12:.2f}", target=">= 3.0", check=status)
    if p.torch is not None:
        t = _event_time(lambda: p.torch.nn.functional.layer_norm(a, (c,), w, b, 1e-5), p.torch_stream)
        row("gpu", "layernorm torch", TB_s=f"{nbytes / t / 1e12:.2f}")
        if p.triton is not None:
            triton, _, _, layernorm_k = _triton_kernels()
            t = _event_time(
                lambda: layernorm_k[(r,)](a, w, b, o, c, 1e-5, BLOCK=triton.next_power_of_2(c), num_warps=8),
                p.torch_stream,
            )
            row("gpu", "layernorm triton", TB_s=f"{nbytes / t / 1e12:.2f}")


def _cuda_ring():
    from cupric.tile import _cuda

    return _cuda.ring_mode()


class _switches:
    """The compiler's switches set for a block (CUPRIC_TILE_TMA, CUPRIC_TILE_WS), the kernels'
    in-memory caches cleared on the way in and out (the switches are read at each compile)."""

    def __init__(self, env, *kernels):
        import os

        self.os, self.env, self.kernels, self.saved = os, env, kernels, {}

    def __enter__(self):
        for k, v in self.env.items():
            self.saved[k] = self.os.environ.get(k)
            self.os.environ[k] = v
        for k in self.kernels:
            k.cache.clear()
            k._forget_plans()

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                self.os.environ.pop(k, None)
            else:
                self.os.environ[k] = v
        for k in self.kernels:
            k.cache.clear()
            k._forget_plans()


def _matmul(p, quick, row):
    import matmul

    if p.torch is None:
        print("# matmul bf16: needs PyTorch (bfloat16 inputs and cuBLAS); skipped")
        return
    torch = p.torch
    m = 4096 if quick else 8192
    a, b = p.rand((m, m), "bfloat16", 0.1), p.rand((m, m), "bfloat16", 0.1)
    bias = p.rand(m, "bfloat16", 0.1)
    o = torch.empty((m, m), device="cuda", dtype=torch.bfloat16)
    bm, bn, bk = MATMUL_TILES

    def run():
        matmul.matmul_kernel[(ct.cdiv(m, bm), ct.cdiv(m, bn))](a, b, bias, o, bm, bn, bk)

    run()
    p.sync()
    status = _check("matmul", o, torch.relu(a @ b + bias), 2e-2)
    flops = 2 * m**3
    t_tile = _event_time(run, p.cupric_stream, target_s=0.5, max_repeat=10)
    t_blas = _event_time(lambda: a @ b, p.torch_stream, target_s=0.5, max_repeat=20)
    t_fused = _event_time(lambda: torch.relu(torch.addmm(bias, a, b)), p.torch_stream, target_s=0.5, max_repeat=20)
    row(
        "gpu",
        f"matmul+bias+relu bf16 {m}^3 cupric.tile {bm}x{bn}x{bk} ({_cuda_ring()})",
        TFLOP_s=f"{flops / t_tile / 1e12:.0f}",
        vs_cublas=f"{t_blas / t_tile:.2f}",
        target=">= 0.9",
        check=status,
    )
    row("gpu", f"matmul bf16 {m}^3 torch (cuBLAS)", TFLOP_s=f"{flops / t_blas / 1e12:.0f}")
    # the same tiles in plain launch order (one group of all tile rows): what the grouping buys
    t_plain = _event_time(
        lambda: matmul.matmul_kernel[(ct.cdiv(m, bm), ct.cdiv(m, bn))](a, b, bias, o, bm, bn, bk, ct.cdiv(m, bm)),
        p.cupric_stream,
        target_s=0.5,
        max_repeat=10,
    )
    row(
        "gpu",
        "matmul+bias+relu cupric.tile, launch order",
        TFLOP_s=f"{flops / t_plain / 1e12:.0f}",
        vs_cublas=f"{t_blas / t_plain:.2f}",
    )
    # the same kernel with @ct.autotune choosing the tiles (examples/tile/matmul.py's configs)
    try:
        matmul.matmul_bias_relu_tuned(a, b, bias, o)
        p.sync()
        t_tuned = _event_time(
            lambda: matmul.matmul_bias_relu_tuned(a, b, bias, o), p.cupric_stream, target_s=0.5, max_repeat=10
        )
        best = matmul.matmul_tuned.best_config if hasattr(matmul.matmul_tuned, "best_config") else "?"
        row(
            "gpu",
            "matmul+bias+relu cupric.tile autotuned",
            TFLOP_s=f"{flops / t_tuned / 1e12:.0f}",
            vs_cublas=f"{t_blas / t_tuned:.2f}",
            config=str(best).replace(" ", ""),
        )
    except Exception as err:  # noqa: BLE001 - the tuned row is extra
        print(f"# matmul autotuned failed: {type(err).__name__}: {str(err)[:300]}")
    row("gpu", "addmm+relu torch", TFLOP_s=f"{flops / t_fused / 1e12:.0f}")
    # Hopper: the ring filled by TMA from a producer warpgroup (CUPRIC_TILE_TMA=1; docs/tile.md)
    for size in (m, 4096) if not quick else (m,):
        x, y = (a, b) if size == m else (p.rand((size, size), "bfloat16", 0.1), p.rand((size, size), "bfloat16", 0.1))
        bz, oz = bias[:size], o[:size, :size] if size == m else torch.empty_like(x)
        for mode, env in (
            ("tma ws plain", {"CUPRIC_TILE_TMA": "1", "CUPRIC_TILE_PERSISTENT": "0"}),
            ("tma ws persistent", {"CUPRIC_TILE_TMA": "1", "CUPRIC_TILE_PERSISTENT": "1"}),
            ("tma", {"CUPRIC_TILE_TMA": "1", "CUPRIC_TILE_WS": "0"}),
            ("cp.async", {"CUPRIC_TILE_TMA": "0"}),
        ):
            with _switches(env, matmul.matmul_kernel):

                def run_ws(x=x, y=y, bz=bz, oz=oz, size=size):
                    matmul.matmul_kernel[(ct.cdiv(size, 128), ct.cdiv(size, 256))](x, y, bz, oz, 128, 256, 64)

                status, t = _checked_time(p, "matmul", run_ws, oz, lambda x=x, y=y, bz=bz: torch.relu(x @ y + bz), 2e-2)
            # cuBLAS timed beside each row, as for the section's first row: the same kernel read
            # 617-641 TFLOP/s here against 700-711 there (2026-12-02), its ratio then taken to the
            # section's first cuBLAS time; clocks drift over a section (power, temperature)
            t_ref = _event_time(lambda x=x, y=y: x @ y, p.torch_stream, target_s=0.5, max_repeat=20)
            row(
                "gpu",
                f"matmul+bias+relu bf16 {size}^3 tiles 128x256x64 {mode}",
                TFLOP_s=f"{2 * size**3 / t / 1e12:.0f}",
                vs_cublas=f"{t_ref / t:.2f}",
                target=">= 0.9",
                check=status,
            )
        if size != m:
            row("gpu", f"matmul bf16 {size}^3 torch (cuBLAS)", TFLOP_s=f"{2 * size**3 / t_ref / 1e12:.0f}")


def _matmul_shapes(p, quick, row):
    """The issue's other matmul shapes beside cuBLAS: float16 8192^3 and bf16 16384 x 16384 x 4096
    (default ring mode, 128 x 256 x 64 tiles, bias + relu fused)."""
    import matmul

    if p.torch is None:
        print("# matmul shapes: needs PyTorch; skipped")
        return
    torch = p.torch
    shapes = (
        ((8192, 8192, 8192, "float16"), (16384, 16384, 4096, "bfloat16"))
        if not quick
        else ((4096, 4096, 4096, "float16"),)
    )
    for m, n, k, dtype in shapes:
        a, b, bias = p.rand((m, k), dtype, 0.1), p.rand((k, n), dtype, 0.1), p.rand(n, dtype, 0.1)
        o = torch.empty((m, n), device="cuda", dtype=getattr(torch, dtype))

        def run(a=a, b=b, bias=bias, o=o, m=m, n=n):
            matmul.matmul_kernel[(ct.cdiv(m, 128), ct.cdiv(n, 256))](a, b, bias, o, 128, 256, 64)

        status, t = _checked_time(p, "matmul", run, o, lambda a=a, b=b, bias=bias: torch.relu(a @ b + bias), 2e-2)
        t_ref = _event_time(lambda a=a, b=b: a @ b, p.torch_stream, target_s=0.5, max_repeat=20)
        row(
            "gpu",
            f"matmul+bias+relu {dtype} {m}x{n}x{k} cupric.tile 128x256x64 ({_cuda_ring()})",
            TFLOP_s=f"{2 * m * n * k / t / 1e12:.0f}",
            vs_cublas=f"{t_ref / t:.2f}",
            target=">= 0.9" if m == n == k else ">= 0.85",
            check=status,
        )
        row("gpu", f"matmul {dtype} {m}x{n}x{k} torch (cuBLAS)", TFLOP_s=f"{2 * m * n * k / t_ref / 1e12:.0f}")


def _example_matmul(p, kernel, env, args, ref, extra=()):
    """(check, seconds) of one of examples/tile/matmul.py's kernels, 128 x 256 x 64 tiles, on
    args = (a, b, bias, out) under the compiler switches `env`."""
    a, b, bias, o = args
    grid = (ct.cdiv(a.shape[0], 128), ct.cdiv(b.shape[1], 256))
    with _switches(env, kernel):
        return _checked_time(p, "matmul", lambda: kernel[grid](a, b, bias, o, 128, 256, 64, *extra), o, ref, 2e-2)


def _split_k(p, quick, row):
    """Split K: shapes whose 128 x 256 output tiles fill less than half the SMs, or whose last wave
    does (3072 x 3072: 2 waves + 24 tiles on 132 SMs; 4096 x 2560: + 56), the example kernel plain
    (one block per tile) and persistent (those tiles' K loops split over the idle SMs), beside
    cuBLAS on the same data."""
    import matmul

    if p.torch is None:
        print("# split K: needs PyTorch; skipped")
        return
    torch = p.torch
    shapes = ((1024, 1024, 16384), (3072, 3072, 4096), (512, 1024, 8192), (256, 2048, 8192), (4096, 2560, 4096))
    for m, n, k in shapes[:2] if quick else shapes + ((2048, 2048, 4096),):
        a, b, bias = p.rand((m, k), "bfloat16", 0.1), p.rand((k, n), "bfloat16", 0.1), p.rand(n, "bfloat16", 0.1)
        o = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
        t_ref = _event_time(lambda a=a, b=b: a @ b, p.torch_stream, target_s=0.3, max_repeat=50)
        tiles = ct.cdiv(m, 128) * ct.cdiv(n, 256)
        for mode, env in (
            ("tma ws plain", {"CUPRIC_TILE_TMA": "1", "CUPRIC_TILE_PERSISTENT": "0"}),
            ("tma ws: split K", {"CUPRIC_TILE_TMA": "1", "CUPRIC_TILE_PERSISTENT": ""}),
        ):
            ref = lambda a=a, b=b, bias=bias: torch.relu(a @ b + bias)  # noqa: E731
            status, t = _example_matmul(p, matmul.matmul_kernel, env, (a, b, bias, o), ref)
            row(
                "gpu",
                f"matmul+bias+relu bf16 {m}x{n}x{k} ({tiles} tiles) {mode}",
                TFLOP_s=f"{2 * m * n * k / t / 1e12:.0f}",
                us=f"{t * 1e6:.1f}",
                vs_cublas=f"{t_ref / t:.2f}",
                check=status,
            )
        row("gpu", f"matmul bf16 {m}x{n}x{k} torch (cuBLAS)", TFLOP_s=f"{2 * m * n * k / t_ref / 1e12:.0f}")


def _multicast(p, quick, row):
    """Cluster multicast: the pairs kernel (tiles down the columns; blocks 2i and 2i + 1 share b's
    tiles, which each copies half of into both) with and without it, beside the example's grouped
    order and cuBLAS on the same data (bf16 + bias + relu, 128 x 256 x 64 tiles)."""
    import matmul

    if p.torch is None:
        print("# multicast: needs PyTorch; skipped")
        return
    torch = p.torch
    shapes = ((8192, 8192, 8192), (4096, 4096, 4096), (16384, 16384, 4096))
    for m, n, k in shapes[:1] if quick else shapes:
        a, b, bias = p.rand((m, k), "bfloat16", 0.1), p.rand((k, n), "bfloat16", 0.1), p.rand(n, "bfloat16", 0.1)
        o = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
        t_ref = _event_time(lambda a=a, b=b: a @ b, p.torch_stream, target_s=0.3, max_repeat=50)
        ref = lambda a=a, b=b, bias=bias: torch.relu(a @ b + bias)  # noqa: E731
        for name, kernel, env, extra in (
            ("pairs, multicast", matmul.matmul_pairs_kernel, {"CUPRIC_TILE_MULTICAST": "1"}, ()),
            ("pairs, no multicast", matmul.matmul_pairs_kernel, {"CUPRIC_TILE_MULTICAST": ""}, ()),
            ("grouped order (the example)", matmul.matmul_kernel, {"CUPRIC_TILE_MULTICAST": ""}, (8,)),
        ):
            status, t = _example_matmul(p, kernel, env, (a, b, bias, o), ref, extra)
            row(
                "gpu",
                f"matmul+bias+relu bf16 {m}x{n}x{k} {name}",
                TFLOP_s=f"{2 * m * n * k / t / 1e12:.0f}",
                vs_cublas=f"{t_ref / t:.2f}",
                check=status,
            )
        row("gpu", f"matmul bf16 {m}x{n}x{k} torch (cuBLAS)", TFLOP_s=f"{2 * m * n * k / t_ref / 1e12:.0f}")


def _fp8(p, quick, row):
    """FP8 e4m3 (a (M, K), b (N, K), per-tensor scales, bf16 out) against torch._scaled_mm (cuBLASLt's
    fp8 kernels) on the same data."""
    import fp8_matmul as f8

    torch = p.torch
    if torch is None or not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        print("# fp8 matmul: needs PyTorch with float8 and torch._scaled_mm; skipped")
        return

    bm, bn, bk = 128, 256, 128

    def as_cupric(t):  # a view of a float8 tensor's bytes, reinterpreted (no copy)
        return cu.asarray(t.view(torch.uint8)).view(cu.float8_e4m3fn)

    for m in (8192, 4096) if not quick else (4096,):
        a32, b32 = torch.randn((m, m), device="cuda"), torch.randn((m, m), device="cuda")
        sa = (a32.abs().max() / 448).reshape(1).float()
        sb = (b32.abs().max() / 448).reshape(1).float()
        a, b = (a32 / sa).to(torch.float8_e4m3fn), (b32 / sb).to(torch.float8_e4m3fn)  # b: (N, K)
        o = torch.empty((m, m), device="cuda", dtype=torch.bfloat16)
        ca, cb, csa, csb = as_cupric(a), as_cupric(b), cu.asarray(sa), cu.asarray(sb)

        def run(ca=ca, cb=cb, csa=csa, csb=csb, o=o, m=m):
            f8.fp8_matmul_kernel[(ct.cdiv(m, bm), ct.cdiv(m, bn))](ca, cb, csa, csb, o, bm, bn, bk)

        def scaled(a=a, b=b, sa=sa, sb=sb):
            return torch._scaled_mm(a, b.t(), scale_a=sa.reshape(()), scale_b=sb.reshape(()), out_dtype=torch.bfloat16)

        status, t = _checked_time(p, "fp8", run, o, scaled, 2e-2)
        t_ref = _event_time(scaled, p.torch_stream, target_s=0.5, max_repeat=20)
        row(
            "gpu",
            f"matmul fp8 e4m3 {m}^3 scaled, bf16 out, cupric.tile {bm}x{bn}x{bk} ({_cuda_ring()})",
            TFLOP_s=f"{2 * m**3 / t / 1e12:.0f}",
            vs_scaled_mm=f"{t_ref / t:.2f}",
            target=">= 0.85",
            check=status,
        )
        row("gpu", f"matmul fp8 e4m3 {m}^3 torch._scaled_mm (cuBLASLt)", TFLOP_s=f"{2 * m**3 / t_ref / 1e12:.0f}")


def _grouped(p, quick, row):
    """A grouped GEMM of 8 problems (M from 256 to 4096, N = K = 4096, bf16) in one launch against
    the per-problem cuBLAS products one after another (their summed throughput)."""
    import grouped_matmul as gm

    if p.torch is None:
        print("# grouped matmul: needs PyTorch (bfloat16 inputs and cuBLAS); skipped")
        return
    torch = p.torch
    rows = [256, 512, 768, 1024, 1536, 2048, 3072, 4096] if not quick else [256, 512, 1024, 2048]
    k = n = 4096 if not quick else 2048
    a = p.rand((sum(rows), k), "bfloat16", 0.1)
    b = p.rand((len(rows), k, n), "bfloat16", 0.1)
    out = torch.empty((sum(rows), n), device="cuda", dtype=torch.bfloat16)
    tr, tp = (torch.from_numpy(x).to("cuda") for x in gm.tile_tables(rows, 128))
    starts = [sum(rows[:g]) for g in range(len(rows))]

    def run():
        gm.grouped_matmul_kernel[(len(tr), ct.cdiv(n, 256))](a, b, out, tr, tp, 128, 256, 64)

    def per_problem():
        for g, (s0, r) in enumerate(zip(starts, rows, strict=True)):
            torch.matmul(a[s0 : s0 + r], b[g], out=want[s0 : s0 + r])

    want = torch.empty_like(out)
    per_problem()
    status, t = _checked_time(p, "grouped", run, out, lambda: want, 2e-2)
    flops = 2 * sum(rows) * k * n
    t_ref = _event_time(per_problem, p.torch_stream, target_s=0.5, max_repeat=10)
    row(
        "gpu",
        f"grouped matmul bf16, {len(rows)} problems M {rows[0]}..{rows[-1]}, N=K={n} ({_cuda_ring()})",
        TFLOP_s=f"{flops / t / 1e12:.0f}",
        vs_cublas_sum=f"{t_ref / t:.2f}",
        target=">= 0.8",
        check=status,
    )
    row("gpu", "grouped: per-problem torch.matmul (cuBLAS)", TFLOP_s=f"{flops / t_ref / 1e12:.0f}")


def _attention(p, quick, row, within_budget):
    import attention

    if p.torch is None:
        print("# attention bf16: needs PyTorch (bfloat16 inputs and SDPA); skipped")
        return
    torch = p.torch
    B, H, S = (4, 32, 1024) if quick else (4, 32, 4096)
    inputs = {}
    for D, (bm, bn), causal, mode in (
        (128, ATTENTION_TILES, False, None),
        (128, ATTENTION_TILES, True, None),
        (128, ATTENTION_TILES, False, "tma ws persistent"),
        (128, ATTENTION_TILES, True, "tma ws persistent"),
        (64, ATTENTION_TILES, False, None),
        (64, ATTENTION_TILES, True, None),
        (128, ATTENTION_TILES, False, "no ping-pong"),
        (128, ATTENTION_TILES, True, "no ping-pong"),
        (128, ATTENTION_TILES, False, "ping-pong all"),
        (128, ATTENTION_TILES, False, "cp.async"),
        (128, ATTENTION_TILES, False, "multicast"),
        (128, ATTENTION_TILES, False, "overlap"),
        (128, ATTENTION_TILES, True, "overlap"),
    ):
        if D not in inputs:
            q, k, v = (p.rand((B, H, S, D), "bfloat16") for _ in range(3))
            out = torch.empty_like(q)
            inputs[D] = (q, k, v, out, *(t.view(B * H, S, D) for t in (q, k, v, out)))
        q, k, v, out, q3, k3, v3, o3 = inputs[D]
        if not within_budget(f"attention causal={causal}", 8):
            return
        env = {
            None: {},
            "tma ws persistent": {"CUPRIC_TILE_TMA": "1", "CUPRIC_TILE_PERSISTENT": "1"},
            "cp.async": {"CUPRIC_TILE_TMA": "0"},
            "no ping-pong": {"CUPRIC_TILE_PINGPONG": "0"},
            "ping-pong all": {"CUPRIC_TILE_PINGPONG": "all"},
            "multicast": {"CUPRIC_TILE_MULTICAST": "1"},
            "overlap": {"CUPRIC_TILE_OVERLAP": "1"},
        }[mode]
        switches = _switches(env, attention.attention_kernel)
        switches.__enter__()

        def run(c=causal, bm=bm, bn=bn, D=D, q3=q3, k3=k3, v3=v3, o3=o3):
            attention.attention_kernel[(ct.cdiv(S, bm), B * H)](q3, k3, v3, o3, 1.0 / math.sqrt(D), c, bm, bn, D)

        def sdpa(c=causal, q=q, k=k, v=v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=c)

        run()
        p.sync()
        status = _check("attention", out, sdpa(), 3e-2)
        flops = 4 * B * H * S * S * D * (0.5 if causal else 1)
        t_tile = _event_time(run, p.cupric_stream, target_s=0.5, max_repeat=10)
        t_sdpa = _event_time(sdpa, p.torch_stream, target_s=0.5, max_repeat=20)
        switches.__exit__(None, None, None)
        name = f"attention{' causal' if causal else ''} B{B} H{H} S{S} D{D} bf16 tiles {bm}x{bn}"
        name += f" {mode or _cuda_ring()}"
        row(
            "gpu",
            f"{name} cupric.tile",
            TFLOP_s=f"{flops / t_tile / 1e12:.0f}",
            vs_sdpa=f"{t_sdpa / t_tile:.2f}",
            target=">= 0.75",
            check=status,
        )
        row("gpu", f"attention{' causal' if causal else ''} D{D} torch sdpa", TFLOP_s=f"{flops / t_sdpa / 1e12:.0f}")


def gpu_section(quick, row, within_budget, only=None):
    if not cu.cuda.is_available():
        print("# GPU: no CUDA device; skipping the GPU comparison")
        return
    p = Peers()
    dev = cu.cuda.Device()
    print(
        f"# GPU: {dev.name} ({dev.arch}); peers: torch {'yes' if p.torch else 'no'}, triton "
        f"{'yes' if p.triton else 'no'}, cupy {'yes' if p.cupy else 'no (or not needed)'}",
        flush=True,
    )
    if p.torch is None and p.cupy is None:
        print("# GPU: cupric.tile needs device arrays from PyTorch or CuPy here; skipping")
        return
    for name, need_s, fn in (
        ("saxpy", 10, lambda: _saxpy(p, quick, row)),
        ("softmax / layernorm", 15, lambda: _rows(p, quick, row)),
        ("matmul", 15, lambda: _matmul(p, quick, row)),
        ("attention", 15, lambda: _attention(p, quick, row, within_budget)),
        ("grouped", 10, lambda: _grouped(p, quick, row)),
        ("fp8", 10, lambda: _fp8(p, quick, row)),
        ("shapes", 10, lambda: _matmul_shapes(p, quick, row)),
        ("splitk", 10, lambda: _split_k(p, quick, row)),
        ("multicast", 10, lambda: _multicast(p, quick, row)),
    ):
        # --only saxpy,softmax,matmul,attention,grouped,fp8,shapes,splitk,multicast
        if only is not None and name.split()[0] not in only:
            continue
        if not within_budget(f"gpu {name}", need_s):
            continue
        t0 = time.perf_counter()
        try:
            fn()
        except Exception as err:  # noqa: BLE001 - report and go on: the benchmark always exits 0
            print(f"# gpu {name} failed: {type(err).__name__}: {str(err)[:2000]}", flush=True)
        print(f"# gpu {name}: {time.perf_counter() - t0:.1f} s", flush=True)
