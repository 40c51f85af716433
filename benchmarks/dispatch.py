"""Per-call host cost of small eager operations: cupric beside NumPy, in one process.

    python benchmarks/dispatch.py [--device cpu|cuda] [--repeat N] [--markdown] [--profile]

For arrays of 1 and 1000 float64 elements, times x+x, x+1, 1.5*x, cu.exp(x), x.sum(), x[0] and
x.reshape(...) and prints the per-call time in microseconds (best of several batches, so a
scheduler hiccup does not count) and the ratio cupric / NumPy (lower is better for cupric).
With --device cuda the cupric arrays live on the GPU: batches are 500 calls (below the driver's
launch queue depth, so the host is never held up by the GPU) and the stream is synchronised
between batches, outside the timing, so the figure is the host cost of an asynchronous launch.
With --profile every cupric batch runs inside cu.profiler.profile() (the recording's cost per op;
the events are taken out after each batch, outside the timing).
With --overhead: what a profile adds per op, cupric's beside PyTorch's profiler (the anchor), on
the same ops and device: each library's per-call time with its profiler off and on, and the
difference.
"""

import argparse
import contextlib
import platform
import sys
import time

import cupric as cu
import numpy as np


def per_call_us(fn, calls, batches, sync=None, around=contextlib.nullcontext):
    for _ in range(max(100, calls // 10)):  # warm-up: caches, kernel tables, lazy init
        fn()
    if sync:
        sync()
    best = float("inf")
    for _ in range(batches):
        with around():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            dt = time.perf_counter() - t0
        if sync:
            sync()
        best = min(best, dt)
    return best / calls * 1e6


def cases(n, device):
    a = np.random.default_rng(0).random(n) + 0.5
    x = cu.asarray(a, device=device)
    shape = (n,) if n == 1 else (n // 10, 10)
    yield "x + x", (lambda: a + a), (lambda: x + x)
    yield "x + 1", (lambda: a + 1), (lambda: x + 1)
    yield "1.5 * x", (lambda: 1.5 * a), (lambda: 1.5 * x)
    yield "exp(x)", (lambda: np.exp(a)), (lambda: cu.exp(x))
    yield "x.sum()", (lambda: a.sum()), (lambda: x.sum())
    yield "x[0]", (lambda: a[0]), (lambda: x[0])
    yield "x.reshape", (lambda: a.reshape(shape)), (lambda: x.reshape(shape))


def overhead(device, calls, repeat, sync, lib=None, device_times="auto"):
    """Per-op cost of recording: cupric's profile and torch.profiler on x + x, exp(x), x.sum(). Each
    library runs in a process of its own: both profilers take CUPTI, which admits one subscriber."""
    if lib is None:
        import subprocess

        print(f"profiler overhead on {device}, 1000 float32, cupric's device_times={device_times} "
              "(us per call: off, on, added)", flush=True)
        for name in ("cupric", "torch"):
            r = subprocess.run([sys.executable, __file__, "--overhead", "--device", device, "--lib", name,
                                "--device-times", device_times],
                               capture_output=True, text=True, timeout=300)
            print(r.stdout.strip() or f"{name}: failed: {r.stderr.strip()[-300:]}", flush=True)
        return
    a = np.random.default_rng(0).random(1000).astype(np.float32)
    if lib == "cupric":
        x = cu.asarray(a, device=device)
        fns, lib_sync = [lambda: x + x, lambda: cu.exp(x), lambda: x.sum()], sync
        prof = lambda: cu.profiler.profile(device_times=device_times)  # noqa: E731
    else:
        try:
            import torch
        except ImportError:
            print("torch: not installed")
            return
        t = torch.as_tensor(a, device="cpu" if device == "cpu" else "cuda")
        kinds = torch.profiler.ProfilerActivity
        acts = [kinds.CPU] + ([] if device == "cpu" else [kinds.CUDA])
        fns = [lambda: t + t, lambda: torch.exp(t), lambda: t.sum()]
        prof = lambda: torch.profiler.profile(activities=acts)  # noqa: E731
        lib_sync = None if device == "cpu" else torch.cuda.synchronize
    for label, fn in zip(("x + x", "exp(x)", "x.sum()"), fns, strict=True):
        off = per_call_us(fn, calls, repeat, lib_sync)
        on = per_call_us(fn, calls, repeat, lib_sync, prof)
        print(f"{lib:<7} {label:<8} {off:8.2f} {on:8.2f} {on - off:+8.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=None, help="batches per case, the best is kept (7; cuda 40)")
    ap.add_argument("--calls", type=int, default=None, help="calls per batch (20000; cuda 500)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--profile", action="store_true", help="time cupric's calls inside cu.profiler.profile()")
    ap.add_argument("--overhead", action="store_true", help="cupric's profiler beside torch.profiler, per op")
    ap.add_argument("--lib", default=None, help=argparse.SUPPRESS)  # --overhead's child process: one library
    ap.add_argument("--device-times", default="auto", help="--overhead: cupric's device_times (auto, cupti, events)")
    args = ap.parse_args()
    sync = None
    if args.device != "cpu":
        sync = cu.cuda.Device().synchronize
    args.calls = args.calls or (20000 if sync is None else 500)
    args.repeat = args.repeat or (7 if sync is None else 40)
    if args.overhead:
        return overhead(args.device, min(args.calls, 2000), min(args.repeat, 10), sync, args.lib, args.device_times)
    print(f"cupric {cu.__version__} vs NumPy {np.__version__} on {platform.machine()}, "
          f"python {sys.version.split()[0]}, cupric device {args.device}"
          + (", inside cu.profiler.profile()" if args.profile else ""))
    head = ("n", "op", "NumPy us", "cupric us", "cupric/NumPy")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(f"{head[0]:>5} {head[1]:<10} {head[2]:>9} {head[3]:>10} {head[4]:>13}")
    for n in (1, 1000):
        for label, np_fn, cu_fn in cases(n, args.device):
            t_np = per_call_us(np_fn, args.calls, args.repeat)
            around = cu.profiler.profile if args.profile else contextlib.nullcontext
            t_cu = per_call_us(cu_fn, args.calls, args.repeat, sync, around)
            if args.markdown:
                print(f"| {n} | `{label}` | {t_np:.2f} | {t_cu:.2f} | {t_cu / t_np:.2f} |")
            else:
                print(f"{n:>5} {label:<10} {t_np:>9.2f} {t_cu:>10.2f} {t_cu / t_np:>13.2f}")


if __name__ == "__main__":
    main()
