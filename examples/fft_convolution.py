"""FFT convolution two ways: the plain three steps (forward transform, pointwise product with the
filter's spectrum, inverse transform) and the same with the product fused into the forward
transform as its epilog, a Python function compiled into cuFFT's kernel (on the CPU, a compiled
pass after the transform). Checks that they agree and times both side by side.

    python examples/fft_convolution.py [--batch B] [--n N] [--dtype float32|float64] [--device cpu|cuda:0]
"""

import argparse
import time

import cupric as cu
import numpy as np
from cupric import tile as ct
from cupric.fft import advanced, callbacks


def filtered(value, offset, spectrum):
    """The epilog: each output element of the forward transform times the filter's spectrum at
    its frequency (the spectrum holds one row; `offset` runs over the whole batch). The offset is
    int64; its remainder is taken in int32 (the batch here has fewer than 2**31 elements), since
    64-bit division costs a GPU several times more instructions."""
    row = spectrum.shape[0]
    return callbacks.cmul(value, spectrum[offset.astype(ct.int32) % row.astype(ct.int32)])


def three_step(x, spectrum, n):
    return cu.fft.irfft(cu.fft.rfft(x, axis=-1) * spectrum, n, axis=-1)


def fused_plan(x, spectrum):
    """The forward transform with the product as its epilog, planned once (the callback compiled,
    cuFFT's plan made with it linked in): nvmath-python's stateful form."""
    return advanced.FFT(x, axes=[-1], epilog={"function": filtered, "operands": [spectrum]}).plan()


def fused(plan, n):
    return cu.fft.irfft(plan.execute(), n, axis=-1)


def wait(a):
    if a.device != "cpu":
        cu.cuda.current_stream().synchronize()
    return a


def timed(fn, repeats):
    wait(fn())  # the first call compiles the callback and makes the plans
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        wait(fn())
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--n", type=int, default=1 << 14)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--device", default=None, help="cpu or cuda:N (default: cupric's default device)")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    device = args.device or ("cuda:0" if cu.cuda.is_available() else "cpu")

    rng = np.random.default_rng(0)
    signal = rng.standard_normal((args.batch, args.n)).astype(args.dtype)
    kernel = np.zeros(args.n, args.dtype)
    kernel[:31] = np.hanning(31) / np.hanning(31).sum()  # a smoothing filter
    x = cu.asarray(signal, device=device)
    spectrum = cu.fft.rfft(cu.asarray(kernel, device=device))

    plain = three_step(x, spectrum, args.n)
    plan = fused_plan(x, spectrum)
    with_epilog = fused(plan, args.n)
    want = np.fft.irfft(np.fft.rfft(signal.astype(np.float64)) * np.fft.rfft(kernel.astype(np.float64)), args.n)
    tol = 1e-4 if args.dtype == "float32" else 1e-10
    for name, got in (("three steps", plain), ("epilog", with_epilog)):
        err = float(np.abs(np.asarray(got.to_device("cpu")) - want).max())
        print(f"{name:12s} max |error| against NumPy (float64): {err:.2e}")
        assert err < tol, f"{name} disagrees with NumPy: {err}"

    t_plain = timed(lambda: three_step(x, spectrum, args.n), args.repeats)
    t_fused = timed(lambda: fused(plan, args.n), args.repeats)
    print(f"\n{args.batch} x {args.n} {args.dtype} on {device}, median of {args.repeats}:")
    print(f"  three steps      {t_plain * 1e3:9.3f} ms")
    print(f"  epilog (fused)   {t_fused * 1e3:9.3f} ms")
    print(f"  ratio (three steps / fused): {t_plain / t_fused:.2f}x")


if __name__ == "__main__":
    main()
