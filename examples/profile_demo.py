"""Profiling with cupric: the founding demo (random matrices summed) and a tile softmax under
cu.profiler, then the three outputs: the table, a Perfetto trace and the roofline picture.

    python examples/profile_demo.py [--size N] [--count N] [--out PREFIX]

Open PREFIX.trace.json in https://ui.perfetto.dev; PREFIX.png is the roofline (matplotlib).
"""

import argparse
import os
import sys

import cupric as cu
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tile"))
from softmax import softmax  # noqa: E402  (examples/tile/softmax.py)


def founding_demo(n, count, device):
    g = cu.random.default_rng(0)
    with cu.profiler.range("generate"):
        mats = [g.random((n, n), dtype=cu.float32, device=device) for _ in range(count)]
    with cu.profiler.range("sum"):
        total = cu.zeros((n, n), dtype=cu.float32, device=device)
        for m in mats:
            total += m
    return float(total.mean()) / count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=None, help="matrix side (default 5000 on a GPU, 1000 on the CPU)")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--out", default="profile_demo")
    args = ap.parse_args()
    device = "cuda:0" if cu.cuda.is_available() else "cpu"
    n = args.size or (5000 if device != "cpu" else 1000)
    x = cu.asarray(np.random.default_rng(1).standard_normal((4096, 2048), dtype=np.float32), device=device)
    softmax(x)  # compiled before the profile: the first launch builds the kernel
    founding_demo(64, 2, device)  # and the array kernels
    with cu.profiler.profile() as prof:
        mean = founding_demo(n, args.count, device)
        with cu.profiler.range("softmax"):
            for _ in range(5):
                y = softmax(x)
        row_sums = y.sum(axis=1)
    print(f"mean of the sum / count: {mean:.4f} (expected about 0.5); softmax rows sum to "
          f"{float(row_sums.min()):.4f}..{float(row_sums.max()):.4f}\n")
    print(prof.table(sort_by="total", group_by="op"))
    print()
    print(prof.table(sort_by="total", group_by="kernel"))
    written = [prof.export_chrome_trace(args.out + ".trace.json"), prof.export_json(args.out + ".json")]
    try:
        written.append(prof.roofline(args.out + ".png"))
    except ImportError:
        print("(matplotlib is not installed: no roofline picture)")
    print("\nwrote " + ", ".join(written))


if __name__ == "__main__":
    main()
