"""Matrix products and factorisations, side by side in one process: cupric on the CPU beside
NumPy (both on OpenBLAS), and on a GPU beside PyTorch and CuPy where they are installed.

    python benchmarks/linalg.py [--quick] [--markdown] [--device cpu|cuda]

Prints the median time of each and the ratio peer time / cupric time (> 1: cupric is faster).
"""

import argparse
import statistics
import time

import cupric as cu
import numpy as np


def median_time(fn, repeat, sync=lambda: None):
    fn()  # warm-up (library loading, handles, workspaces)
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def spd(n, dtype, rng):
    x = rng.standard_normal((n, n))
    return (x @ x.T + n * np.eye(n)).astype(dtype)


def cases(quick):
    """(name, dtype, NumPy-side host inputs maker, op on a namespace)."""
    big = 1024 if quick else 2048
    fact = 512 if quick else 1024
    out = []
    for dtype in ("float32", "float64"):
        out.append((f"matmul {big}^3", dtype, lambda r, d=dtype: [r.standard_normal((big, big)).astype(d)] * 2,
                    lambda xp, a, b: a @ b))
        out.append(("batched 4096 x 64^3", dtype,
                    lambda r, d=dtype: [r.standard_normal((4096, 64, 64)).astype(d)] * 2, lambda xp, a, b: a @ b))
        out.append(("matmul 16^3 (host cost)", dtype, lambda r, d=dtype: [r.standard_normal((16, 16)).astype(d)] * 2,
                    lambda xp, a, b: a @ b))
        out.append((f"solve {fact}^2", dtype,
                    lambda r, d=dtype: [spd(fact, d, r), r.standard_normal((fact, 1)).astype(d)],
                    lambda xp, a, b: xp.linalg.solve(a, b)))
        out.append((f"cholesky {fact}^2", dtype, lambda r, d=dtype: [spd(fact, d, r)],
                    lambda xp, a: xp.linalg.cholesky(a)))
        out.append((f"qr {fact}^2", dtype, lambda r, d=dtype: [r.standard_normal((fact, fact)).astype(d)],
                    lambda xp, a: xp.linalg.qr(a)))
        out.append((f"svd {fact}^2", dtype, lambda r, d=dtype: [r.standard_normal((fact, fact)).astype(d)],
                    lambda xp, a: xp.linalg.svd(a)))
        out.append((f"eigh {fact}^2", dtype, lambda r, d=dtype: [spd(fact, d, r)], lambda xp, a: xp.linalg.eigh(a)))
    return out


def peers(device):
    """(name, namespace, to-array, sync) of each peer for the device."""
    if device == "cpu":
        return [("numpy", np, np.asarray, lambda: None)]
    found = []
    try:
        import torch

        found.append(("torch", torch, lambda x: torch.as_tensor(x, device="cuda"), torch.cuda.synchronize))
    except ImportError:
        pass
    try:
        import cupy

        found.append(("cupy", cupy, cupy.asarray, cupy.cuda.runtime.deviceSynchronize))
    except ImportError:
        pass
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = ap.parse_args()
    repeat = 3 if args.quick else 7
    rng = np.random.default_rng(0)
    device = "cpu" if args.device == "cpu" else "cuda:0"
    sync = (lambda: None) if device == "cpu" else (lambda: cu.cuda.Device(0).synchronize())
    others = peers(args.device)
    header = ["case", "dtype", "cupric ms"] + [f"{n} ms" for n, *_ in others] + [f"{n}/cupric" for n, *_ in others]
    rows = []
    for name, dtype, make, op in cases(args.quick):
        host = make(rng)
        ours = [cu.asarray(x, device=device) for x in host]
        t_cu = median_time(lambda op=op, ours=ours: op(cu, *ours), repeat, sync)
        row = [name, dtype, f"{t_cu * 1e3:.3f}"]
        ratios = []
        for _, xp, conv, psync in others:
            theirs = [conv(x) for x in host]
            t = median_time(lambda op=op, xp=xp, theirs=theirs: op(xp, *theirs), repeat, psync)
            row.append(f"{t * 1e3:.3f}")
            ratios.append(f"{t / t_cu:.2f}")
        rows.append(row + ratios)
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
        for r in [header, *rows]:
            print("  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
