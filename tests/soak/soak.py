"""Soak test (not in CI; `make soak`): a million mixed operations over every available device, good
inputs and bad ones, while host RSS (and each GPU's memory pool) must stay flat once warm.

    python tests/soak/soak.py [--ops N] [--seed S] [--max-growth-mib M]

Exits 1 when memory grows by more than --max-growth-mib between the end of the warm-up (the first
tenth of the operations) and the end, or when an operation raises something unexpected.
"""

import argparse
import os
import random
import sys
import time

import cupric as cu
import numpy as np
from cupric import tile as ct

PAGE = os.sysconf("SC_PAGE_SIZE")
EXPECTED = (ValueError, TypeError, IndexError, OverflowError, MemoryError, ZeroDivisionError)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def pool_bytes(devices):
    """Bytes each GPU's pool holds (in use + cached)."""
    out = {}
    for d in devices:
        if d != "cpu":
            s = cu.cuda.memory_pool(int(d.split(":")[1])).stats()
            out[d] = s["bytes_in_use"] + s["bytes_cached"]
    return out


@ct.kernel
def scale(x, out, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
    ct.store(out, index=(ct.bid(0),), tile=t * 2)


def operations(rng, devices):
    """The mix: (name, function of (device, size)). Sizes stay small, with a few large ones from a
    fixed set (the host cache then reuses the same blocks instead of growing)."""
    dtypes = [cu.float32, cu.float64, cu.int32, cu.int64, cu.bool, cu.float16, cu.complex64, cu.uint8]

    def array(d, n, dt=None):
        return cu.arange(n, dtype=dt or rng.choice(dtypes[:4]), device=d)

    def bad(fn):  # an operation that must fail cleanly
        def run(d, n):
            try:
                fn(d, n)
            except EXPECTED:
                return
            raise AssertionError(f"no error from {fn}")
        return run

    ops = [
        ("add", lambda d, n: array(d, n) + 1),
        ("mixed dtypes", lambda d, n: array(d, n, cu.int8) * array(d, n, cu.float32)),
        ("reduce", lambda d, n: array(d, n).sum()),
        ("reduce axis", lambda d, n: array(d, n * 4).reshape(4, n).max(axis=1)),
        ("cumsum", lambda d, n: array(d, n).cumsum()),
        ("getitem", lambda d, n: array(d, n)[1::3]),
        ("fancy get", lambda d, n: array(d, n)[cu.asarray([0, n - 1], device=d)]),
        ("setitem", lambda d, n: array(d, n).__setitem__(slice(0, n, 2), 7)),
        ("mask", lambda d, n: array(d, n)[array(d, n) % 3 == 0]),
        ("astype", lambda d, n: array(d, n).astype(rng.choice(dtypes))),
        ("concatenate", lambda d, n: cu.concatenate([array(d, n), array(d, n)])),
        ("where", lambda d, n: cu.where(array(d, n) > 3, 1.0, array(d, n))),
        ("from numpy", lambda d, n: cu.asarray(np.arange(n), device=d)),
        ("from list", lambda d, n: cu.asarray([[1, 2], [3, 4]], device=d)),
        ("to numpy", lambda d, n: np.asarray(array(d, n).to_device("cpu"))),
        ("linspace", lambda d, n: cu.linspace(0, 1, n, device=d)),
        ("random", lambda d, n: cu.random.default_rng(n).random(n, device=d)),
        ("transpose copy", lambda d, n: array(d, n * 2).reshape(2, n).T.copy()),
        ("tile kernel", lambda d, n: scale[(ct.cdiv(n, 64),)](array(d, n, cu.float32), array(d, n, cu.float32), 64)),
        ("threads", lambda d, n: cu.set_num_threads(rng.choice([1, 2, 3, 0]))),
        ("too big", bad(lambda d, n: cu.empty((2**40, 2**40), device=d))),
        ("too many dims", bad(lambda d, n: cu.zeros([1] * 65, device=d))),
        ("deep list", bad(lambda d, n: cu.asarray([[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]] * 5 + [1], device=d))),
        ("bad index", bad(lambda d, n: array(d, n)[n + 5])),
        ("bad broadcast", bad(lambda d, n: array(d, 2 * n) + array(d, 2 * n + 1))),
        ("bad reshape", bad(lambda d, n: array(d, n).reshape(n + 1))),
        ("bad grid", bad(lambda d, n: scale[(2.5,)](array(d, n, cu.float32), array(d, n, cu.float32), 64))),
        ("too many threads", bad(lambda d, n: cu.set_num_threads(10**6))),
        ("bad interface", bad(lambda d, n: cu.asarray(type("A", (), {"__array_interface__": {
            "shape": (3,), "typestr": "<f8", "data": (0, False), "version": 3}})(), device=d))),
        ("failed set", bad(lambda d, n: array(d, n).__setitem__(slice(None), array(d, n + 1)))),
    ]
    if len(devices) > 1:
        ops.append(("move", lambda d, n: array(d, n).to_device(rng.choice(devices))))
    return ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-growth-mib", type=float, default=16.0)
    args = ap.parse_args()
    devices = ["cpu"] + [f"cuda:{i}" for i in range(cu.cuda.device_count())] if cu.cuda.is_available() else ["cpu"]
    rng = random.Random(args.seed)
    ops = operations(rng, devices)
    sizes = [1, 2, 3, 7, 64, 100, 1000, 4096] * 8 + [1 << 17, 1 << 18]  # 1 MiB and 2 MiB float64: the cached sizes
    warm = max(1, args.ops // 10)
    counts = {name: 0 for name, _ in ops}
    start = time.perf_counter()
    base_rss = base_pools = None
    for i in range(args.ops):
        if i == warm:
            base_rss, base_pools = rss_bytes(), pool_bytes(devices)
        name, fn = ops[rng.randrange(len(ops))]
        fn(rng.choice(devices), rng.choice(sizes))
        counts[name] += 1
        if (i + 1) % (args.ops // 10 or 1) == 0:
            print(f"{i + 1:>9} ops  {time.perf_counter() - start:7.1f} s  rss {rss_bytes() / 2**20:8.1f} MiB  "
                  f"pools {pool_bytes(devices)}", flush=True)
    growth = (rss_bytes() - base_rss) / 2**20 if base_rss is not None else 0.0
    pools_growth = {d: (b - base_pools.get(d, 0)) / 2**20 for d, b in pool_bytes(devices).items()} if base_pools else {}
    per_op = growth * 2**20 / max(1, args.ops - warm)
    print(f"{args.ops} ops over {devices} in {time.perf_counter() - start:.1f} s; "
          f"host RSS grew {growth:.1f} MiB after warm-up ({per_op:.2f} bytes/op); pools grew {pools_growth} MiB")
    print("ops:", ", ".join(f"{k} {v}" for k, v in counts.items()))
    bad = growth > args.max_growth_mib or any(g > args.max_growth_mib for g in pools_growth.values())
    if bad:
        print(f"FAIL: memory grew by more than {args.max_growth_mib} MiB")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
