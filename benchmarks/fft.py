"""Fourier transforms side by side in one process: cupric on the CPU beside NumPy (both pocketfft),
and on a GPU beside CuPy, PyTorch (torch.fft) and nvmath-python where they are installed.

    python benchmarks/fft.py [--quick] [--markdown] [--device cpu|cuda]

Cases: 1-D 2^24 complex64, batched 4096 x 4096 complex64, 2-D 4096^2 real-to-complex float32,
3-D 512^3 complex64 (256^3 on the CPU), and the host cost of a small cached transform (1000
calls queued, per call). Prints median times and the ratio peer time / cupric time (> 1: cupric
is faster).
"""

import argparse
import statistics
import time

import cupric as cu
import numpy as np
from _table import print_table


def median_time(fn, repeat, sync):
    fn()  # warm-up: library loading, plans
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def host_cost(fn, sync, calls=1000):
    """Seconds per call of a small transform, calls queued back to back (the plan cached)."""
    fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    per_call = (time.perf_counter() - t0) / calls
    sync()
    return per_call


def complex64(rng, shape):
    return (rng.standard_normal(shape, dtype=np.float32) + 1j * rng.standard_normal(shape, dtype=np.float32)).astype(
        np.complex64)


def cases(device, quick):
    """(name, host input maker, op(fft module, x), host_cost?)."""
    cpu = device == "cpu"
    n1 = 1 << (20 if quick else 24)
    b = 1024 if quick else 4096
    n3 = 128 if quick else (256 if cpu else 512)
    return [
        (f"1-D 2^{n1.bit_length() - 1} c64", lambda r: complex64(r, (n1,)), lambda m, x: m.fft(x), False),
        (f"batched {b} x {b} c64", lambda r: complex64(r, (b, b)), lambda m, x: m.fft(x), False),
        (f"2-D {b}^2 r2c f32", lambda r: r.standard_normal((b, b), dtype=np.float32), lambda m, x: m.rfft2(x), False),
        (f"3-D {n3}^3 c64", lambda r: complex64(r, (n3, n3, n3)), lambda m, x: m.fftn(x), False),
        ("fft 256 c64 (host us/call)", lambda r: complex64(r, (256,)), lambda m, x: m.fft(x), True),
    ]


class NvmathFFT:
    """nvmath-python's function forms under numpy.fft's names (its operands are CuPy/torch arrays)."""

    def __init__(self, nvmath):
        self.f = nvmath.fft

    def fft(self, x):
        return self.f.fft(x, axes=[x.ndim - 1])

    def rfft2(self, x):
        return self.f.rfft(x, axes=[x.ndim - 2, x.ndim - 1])

    def fftn(self, x):
        return self.f.fft(x, axes=list(range(x.ndim)))


def peers(device):
    """(name, fft module, to-array, sync) of each peer for the device."""
    if device == "cpu":
        return [("numpy", np.fft, np.asarray, lambda: None)]
    found = []
    to_nvmath = None
    try:
        import cupy

        found.append(("cupy", cupy.fft, cupy.asarray, cupy.cuda.runtime.deviceSynchronize))
        to_nvmath = (cupy.asarray, cupy.cuda.runtime.deviceSynchronize)
    except ImportError:
        pass
    try:
        import torch

        found.append(("torch", torch.fft, lambda x: torch.as_tensor(x, device="cuda"), torch.cuda.synchronize))
        to_nvmath = to_nvmath or (lambda x: torch.as_tensor(x, device="cuda"), torch.cuda.synchronize)
    except ImportError:
        pass
    try:
        import nvmath

        if to_nvmath:
            found.append(("nvmath", NvmathFFT(nvmath), *to_nvmath))
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
    header = ["case", "cupric ms"] + [f"{n} ms" for n, *_ in others] + [f"{n}/cupric" for n, *_ in others]
    rows = []
    for name, make, op, per_call in cases(args.device, args.quick):
        host = make(rng)
        timer = host_cost if per_call else (lambda fn, s: median_time(fn, repeat, s))
        unit = 1e6 if per_call else 1e3
        x = cu.asarray(host, device=device)
        t_cu = timer(lambda op=op, x=x: op(cu.fft, x), sync)
        row, ratios = [name, f"{t_cu * unit:.3f}"], []
        for _, module, conv, psync in others:
            theirs = conv(host)
            t = timer(lambda op=op, module=module, theirs=theirs: op(module, theirs), psync)
            row.append(f"{t * unit:.3f}")
            ratios.append(f"{t / t_cu:.2f}")
            del theirs
        del x
        rows.append(row + ratios)
    print_table(header, rows, args.markdown)


if __name__ == "__main__":
    main()
