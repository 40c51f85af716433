"""Eager elementwise kernels on the GPU, cupric beside PyTorch eager in one process, kernel by kernel.

    python benchmarks/elementwise_gpu.py [--log2n 28] [--markdown]

Times `2*x + y`, `x + y`, `x * 2.0`, `2 * x`, `sqrt(x*x + y*y)*0.5 + sin(x)` and each of that
expression's seven kernels on the same inputs (float32, 2^28 by default), with `out=` rows that leave
the allocator out, and a copy as the ceiling. Both libraries read the same memory (PyTorch's tensors
imported through DLPack) and cupric's results are checked against PyTorch's first (bit for bit where
the math is exact). Times: CUDA events around batches of calls, median of trials that alternate the
two libraries. `torch / cupric` >= 1 means cupric is at least as fast. Floor: bytes / 4.8 TB/s (the
H200's datasheet bandwidth). Exits 0 with a note when cupric's GPU or PyTorch is missing."""

import argparse
import statistics
import sys

from _table import print_table

PEAK_TBS = 4.8
BATCH, TRIALS = 10, 7


def timed(start, end, fn):
    """Milliseconds per call of fn over one batch, between two events on the current stream."""
    start.record()
    for _ in range(BATCH):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / BATCH


def compare(cu_fn, th_fn, cu, torch):
    cu_events = (cu.cuda.Event(), cu.cuda.Event())
    th_events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
    for _ in range(3):
        cu_fn(), th_fn()
    cu.cuda.Device().synchronize()
    torch.cuda.synchronize()
    a, b = [], []
    for _ in range(TRIALS):  # alternate, so that clock and thermal drift fall on both alike
        a.append(timed(*cu_events, cu_fn))
        b.append(timed(*th_events, th_fn))
    return statistics.median(a), statistics.median(b)


def cases(cu, torch, x, y, xt, yt, n):
    """(name, arrays read + written, cupric call, torch call); intermediates are made once."""
    t1, t2 = x * x, y * y
    t3 = t1 + t2
    t4 = cu.sqrt(t3)
    t5, t6 = t4 * 0.5, cu.sin(x)
    s1, s2 = xt * xt, yt * yt
    s3 = s1 + s2
    s4 = torch.sqrt(s3)
    s5, s6 = s4 * 0.5, torch.sin(xt)
    out, out_t = cu.empty(n, dtype=cu.float32, device="cuda"), torch.empty_like(xt)
    return [
        ("copy (ceiling)", 2, lambda: x.copy(), lambda: xt.clone()),
        ("x + y", 3, lambda: x + y, lambda: xt + yt),
        ("x + y, out=", 3, lambda: cu.add(x, y, out=out), lambda: torch.add(xt, yt, out=out_t)),
        ("x * 2.0", 2, lambda: x * 2.0, lambda: xt * 2.0),
        ("2 * x", 2, lambda: 2 * x, lambda: 2 * xt),
        ("x * 2.0, out=", 2, lambda: cu.multiply(x, 2.0, out=out), lambda: torch.mul(xt, 2.0, out=out_t)),
        ("2*x + y (2 kernels)", 5, lambda: 2 * x + y, lambda: 2 * xt + yt),
        ("5-op: x*x", 2, lambda: x * x, lambda: xt * xt),
        ("5-op: y*y", 2, lambda: y * y, lambda: yt * yt),
        ("5-op: x*x + y*y", 3, lambda: t1 + t2, lambda: s1 + s2),
        ("5-op: sqrt(.)", 2, lambda: cu.sqrt(t3), lambda: torch.sqrt(s3)),
        ("5-op: (.) * 0.5", 2, lambda: t4 * 0.5, lambda: s4 * 0.5),
        ("5-op: sin(x)", 2, lambda: cu.sin(x), lambda: torch.sin(xt)),
        ("5-op: (.) + sin(x)", 3, lambda: t5 + t6, lambda: s5 + s6),
        ("5-op: whole (7 kernels)", 16, lambda: cu.sqrt(x * x + y * y) * 0.5 + cu.sin(x),
         lambda: torch.sqrt(xt * xt + yt * yt) * 0.5 + torch.sin(xt)),
    ]


def check(cu, torch, x, y, xt, yt):
    """cupric computes what PyTorch does on the same memory (else the timings compare nothing)."""
    import numpy as np

    k = 1 << 20
    got = np.asarray(2 * x[:k] + y[:k])
    want = (2 * xt[:k] + yt[:k]).cpu().numpy()
    assert np.array_equal(got, want), "2*x + y differs from PyTorch's"
    got = np.asarray(cu.sqrt(x[:k] * x[:k] + y[:k] * y[:k]) * 0.5 + cu.sin(x[:k]))
    want = (torch.sqrt(xt[:k] * xt[:k] + yt[:k] * yt[:k]) * 0.5 + torch.sin(xt[:k])).cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=28)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    try:
        import cupric as cu
        import torch

        if not (cu.cuda.is_available() and torch.cuda.is_available()):
            raise RuntimeError("no GPU")
    except Exception as e:  # noqa: BLE001
        print(f"elementwise_gpu: skipped ({e}): needs a GPU, cupric and PyTorch")
        return 0
    n = 1 << args.log2n
    gen = torch.Generator(device="cuda").manual_seed(0)
    xt = torch.rand(n, device="cuda", dtype=torch.float32, generator=gen) * 4 - 2
    yt = torch.rand(n, device="cuda", dtype=torch.float32, generator=gen) * 4 - 2
    torch.cuda.synchronize()
    x, y = cu.from_dlpack(xt), cu.from_dlpack(yt)
    check(cu, torch, x, y, xt, yt)
    rows = []
    for name, arrays, cu_fn, th_fn in cases(cu, torch, x, y, xt, yt, n):
        ms_cu, ms_th = compare(cu_fn, th_fn, cu, torch)
        nbytes = arrays * n * 4
        rows.append([name, f"{ms_cu:.4f}", f"{ms_th:.4f}", f"{ms_th / ms_cu:.3f}", f"{nbytes / ms_cu / 1e9:.2f}",
                     f"{nbytes / ms_th / 1e9:.2f}", f"{nbytes / (PEAK_TBS * 1e12) * 1e3:.4f}"])
    print(f"float32, n = 2^{args.log2n}; {torch.cuda.get_device_name()}; PyTorch {torch.__version__}")
    print_table(["case", "cupric ms", "torch ms", "torch / cupric", "cupric TB/s", "torch TB/s", "floor ms"], rows,
                args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
