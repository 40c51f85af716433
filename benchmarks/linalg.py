"""Matrix products and factorisations, side by side in one process: cupric on the CPU beside
NumPy (both on OpenBLAS), and on a GPU beside PyTorch, CuPy and nvmath-python where installed.

    python benchmarks/linalg.py [--quick | --full] [--markdown] [--device cpu|cuda] [--only TEXT]

--quick: small sizes (matmul 1024³, factorisations 512²); default: matmul 2048³, factorisations
1024²; --full: the sizes of issue 13 (matmul 8192³ bf16/f16/tf32/f32/f64, 4096 batched 64³ f32,
1024 batched 256³ bf16, matmul + bias + relu bf16 8192³ through the epilogue, factorisations
4096²; on the CPU matmul 2048³ and solve/svd 1024²). Rows marked [cuBLASLt] run cupric's plain
products through cuBLASLt instead of cuBLAS (cu.linalg._set_gemm_library) to compare the two.
Each time is the median of several batches of back-to-back calls (one synchronisation per batch,
so launch latency is amortised as in a real program); the ratio table (peer time / cupric time,
> 1: cupric is faster) is printed last.
"""

import argparse
import contextlib
import math
import statistics
import time

import cupric as cu
import numpy as np
from _table import print_table


def measure(fn, sync, repeat, budget=0.02):
    """Seconds per call: a warm-up, then `repeat` batches of calls sized to about `budget` s."""
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t0, 1e-7)
    if one > 10 * budget:  # a long call (a 4096² svd): that one timing is the answer
        return one
    inner = max(1, min(2000, math.ceil(budget / one)))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def spd(n, dtype, rng):
    x = rng.standard_normal((n, n)).astype(np.float32)
    return (x @ x.T + n * np.eye(n, dtype=np.float32)).astype(dtype)


def normal(*shape, dtype="float32", rng):
    import ml_dtypes  # noqa: F401  (bfloat16)

    return rng.standard_normal(shape, dtype=np.float32).astype(dtype)


@contextlib.contextmanager
def tf32(lib, on):
    """TF32 float32 products for one library while the block runs (a no-op when off)."""
    if not on:
        yield
        return
    if lib == "cupric":
        cu.linalg.set_matmul_precision("tf32")
    elif lib == "torch":
        import torch

        torch.backends.cuda.matmul.allow_tf32 = True
    else:
        raise NotImplementedError(f"{lib} has no per-call TF32 switch here")
    try:
        yield
    finally:
        if lib == "cupric":
            cu.linalg.set_matmul_precision("highest")
        elif lib == "torch":
            torch.backends.cuda.matmul.allow_tf32 = False


@contextlib.contextmanager
def gemm_library(name):
    old = cu._cupric._get_gemm_library()
    cu._cupric._set_gemm_library(name)
    try:
        yield
    finally:
        cu._cupric._set_gemm_library(old)


def product(tf=False, lt=False):
    """A @ B for every library; tf: TF32 for float32; lt: cupric through cuBLASLt only."""

    def build(lib, xp, a, b):
        if lt and lib != "cupric":
            return None

        def run():
            with tf32(lib, tf), (gemm_library("cublaslt") if lt else contextlib.nullcontext()):
                return a @ b

        return run

    return build


def generic(op):
    return lambda lib, xp, *xs: (lambda: op(xp, *xs))


def bias_relu(lib, xp, a, b, bias):
    """epilogue(a @ b + bias) fused where the library can: cupric's and nvmath's planned Matmul
    with RELU_BIAS (bias along rows), PyTorch's addmm then relu (bias along columns: the same
    work for a square product)."""
    if lib == "cupric":
        from cupric.linalg.advanced import Matmul, MatmulEpilog

        mm = Matmul(a, b, epilogue=MatmulEpilog.RELU_BIAS, epilogue_inputs={"bias": bias})
        mm.plan()
        return mm.execute
    if lib == "nvmath":
        from nvmath.linalg.advanced import Matmul, MatmulEpilog

        mm = Matmul(a, b)
        mm.plan(epilogue=MatmulEpilog.RELU_BIAS, epilogue_inputs={"bias": bias})
        return mm.execute
    if lib == "torch":
        return lambda: xp.relu(xp.addmm(bias, a, b))
    return None


def gpu_cases(size):
    big, fact = {"quick": (1024, 512), "default": (2048, 1024), "full": (8192, 4096)}[size]
    out = []
    for dtype in ("bfloat16", "float16", "float32", "tf32", "float64"):
        if dtype in ("bfloat16", "float16", "tf32") and size != "full":
            continue
        real = "float32" if dtype == "tf32" else dtype
        make = lambda r, d=real: [normal(big, big, dtype=d, rng=r), normal(big, big, dtype=d, rng=r)]  # noqa: E731
        out.append((f"matmul {big}³", dtype, make, product(tf=dtype == "tf32")))
        if dtype in ("bfloat16", "float32"):
            out.append((f"matmul {big}³ [cuBLASLt]", dtype, make, product(tf=dtype == "tf32", lt=True)))
    batched = [(4096, 64, "float32"), (4096, 64, "float64")] + ([(1024, 256, "bfloat16")] if size == "full" else [])
    for count, n, dtype in batched:
        make = lambda r, c=count, n=n, d=dtype: [normal(c, n, n, dtype=d, rng=r), normal(c, n, n, dtype=d, rng=r)]  # noqa: E731
        out.append((f"batched {count} × {n}³", dtype, make, product()))
        out.append((f"batched {count} × {n}³ [cuBLASLt]", dtype, make, product(lt=True)))
    if size == "full":
        make = lambda r: [normal(big, big, dtype="bfloat16", rng=r), normal(big, big, dtype="bfloat16", rng=r),  # noqa: E731
                          normal(big, dtype="bfloat16", rng=r)]
        out.append((f"matmul + bias + relu {big}³", "bfloat16", make, bias_relu))
    for dtype in ("float32", "float64"):
        out.append(("matmul 16³ (host cost)", dtype, lambda r, d=dtype: [normal(16, 16, dtype=d, rng=r)] * 2,
                    product()))
        out += factorisations(fact, dtype)
    return out


def factorisations(n, dtype):
    return [
        (f"solve {n}²", dtype, lambda r: [spd(n, dtype, r), normal(n, 1, dtype=dtype, rng=r)],
         generic(lambda xp, a, b: xp.linalg.solve(a, b))),
        (f"cholesky {n}²", dtype, lambda r: [spd(n, dtype, r)], generic(lambda xp, a: xp.linalg.cholesky(a))),
        (f"qr {n}²", dtype, lambda r: [normal(n, n, dtype=dtype, rng=r)], generic(lambda xp, a: xp.linalg.qr(a))),
        (f"svd {n}²", dtype, lambda r: [normal(n, n, dtype=dtype, rng=r)], generic(lambda xp, a: xp.linalg.svd(a))),
        (f"eigh {n}²", dtype, lambda r: [spd(n, dtype, r)], generic(lambda xp, a: xp.linalg.eigh(a))),
    ]


def cpu_cases(size):
    big, fact = {"quick": (1024, 512), "default": (2048, 1024), "full": (2048, 1024)}[size]
    out = []
    for dtype in ("float32", "float64"):
        make = lambda r, d=dtype: [normal(big, big, dtype=d, rng=r), normal(big, big, dtype=d, rng=r)]  # noqa: E731
        out.append((f"matmul {big}³", dtype, make, product()))
        out.append(("matmul 16³ (host cost)", dtype, lambda r, d=dtype: [normal(16, 16, dtype=d, rng=r)] * 2,
                    product()))
        out += [c for c in factorisations(fact, dtype) if size != "full" or c[0].split()[0] in ("solve", "svd")]
    return out


def libraries(device):
    """(name, namespace, host array -> library array, sync) of cupric and each peer installed."""
    if device == "cpu":
        return [("cupric", cu, lambda x: cu.asarray(x, device="cpu"), lambda: None),
                ("numpy", np, np.asarray, lambda: None)]
    found = [("cupric", cu, lambda x: cu.asarray(x, device="cuda:0"), lambda: cu.cuda.Device(0).synchronize())]
    try:
        import torch

        def to_torch(x):
            if x.dtype.name == "bfloat16":
                return torch.as_tensor(x.view(np.uint16), device="cuda").view(torch.bfloat16)
            return torch.as_tensor(x, device="cuda")

        found.append(("torch", torch, to_torch, torch.cuda.synchronize))
        try:
            import nvmath  # noqa: F401

            found.append(("nvmath", None, to_torch, torch.cuda.synchronize))
        except ImportError:
            pass
    except ImportError:
        pass
    try:
        import cupy

        found.append(("cupy", cupy, cupy.asarray, cupy.cuda.runtime.deviceSynchronize))
    except ImportError:
        pass
    return found


def run_case(lib, xp, conv, sync, host, build, repeat):
    """Seconds per call, or None when the library does not run this case."""
    if lib == "nvmath" and build is not bias_relu:  # nvmath-python runs the epilogue row only
        return None
    if lib == "cupy" and any(x.dtype.name == "bfloat16" for x in host):
        return None
    try:
        fn = build(lib, xp, *[conv(x) for x in host])
    except (ImportError, NotImplementedError, TypeError):
        return None
    if fn is None:
        return None
    try:
        return measure(fn, sync, repeat)
    except NotImplementedError:
        return None


def main():
    ap = argparse.ArgumentParser()
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    group.add_argument("--full", action="store_true", help="the sizes of issue 13 (about 6 minutes on an H200)")
    ap.add_argument("--markdown", action="store_true", help="print markdown tables")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--only", default="", help="run only the cases whose name contains this text")
    args = ap.parse_args()
    size = "quick" if args.quick else "full" if args.full else "default"
    repeat = 3 if args.quick else 5
    rng = np.random.default_rng(0)
    libs = libraries(args.device)
    names = [n for n, *_ in libs]
    cases = cpu_cases(size) if args.device == "cpu" else gpu_cases(size)
    rows, ratios = [], []
    for name, dtype, make, build in cases:
        if args.only not in name:
            continue
        host = make(rng)
        big = host[0].size >= 4096 * 4096
        t = {lib: run_case(lib, xp, conv, sync, host, build, 2 if big and "matmul" not in name else repeat)
             for lib, xp, conv, sync in libs}
        ms = lambda s: "—" if s is None else f"{s * 1e3:.3f}"  # noqa: E731
        rows.append([name, dtype] + [ms(t[n]) for n in names])
        ours = t["cupric"]
        ratios.append([name, dtype] + ["—" if t[n] is None or not ours else f"{t[n] / ours:.2f}" for n in names[1:]])
        print(f"  {name} {dtype}: " + ", ".join(f"{n} {ms(t[n])} ms" for n in names), flush=True)
    print()
    print_table(["case", "dtype"] + [f"{n} ms" for n in names], rows, args.markdown)
    print_table(["case", "dtype"] + [f"{n} / cupric" for n in names[1:]], ratios, args.markdown)


if __name__ == "__main__":
    main()
