"""cupric on several GPUs: weak scaling under Dask (one worker per GPU: cupric.distributed.Cluster)
and NCCL's all-reduce beside PyTorch's, in one run.

    python benchmarks/multi_gpu.py [--gpus 1,2,4,8] [--gib 8] [--quick]

Weak scaling: each GPU holds `--gib` GiB of float32 (`--quick`: 1/16 of it); for 1, 2, 4 ... GPUs
(as many as there are) the same per-GPU work runs — an elementwise chain, a full reduction, and a
blocked matmul — and efficiency = time on 1 GPU / time on N (1.0 is perfect). NCCL: all-reduce of
1 GiB float32 over every GPU of this process (Communicator.init_all), bus bandwidth as nccl-tests
define it (2 (n - 1) / n x bytes / time), beside torch.distributed's all_reduce (one process per GPU,
its NCCL backend). The all-reduce of every GPU worker's partial array: Dask's own transfers against
an NcclGroup (cupric.distributed). Without GPUs (CI) it runs the same graphs on two CPU worker
processes at a small size and checks them against NumPy: correctness, not speed. Always exits 0.
Run on one H200 (2026-12-02); the several-GPU machines are withheld (issue 20).
"""

import argparse
import sys
import time

import numpy as np


def _graphs(da, cu, per_worker_rows, cols, workers):
    rs = da.random.RandomState(0, RandomState=cu.random.default_rng)
    x = rs.standard_normal((per_worker_rows * workers, cols), chunks=(per_worker_rows, cols)).astype("float32")
    return {
        "elementwise chain": lambda: (da.sqrt(x * x + 1.0) * 0.5 - x).sum(axis=1),
        "full reduction": lambda: x.sum(),
        "blocked matmul": lambda: (x @ x[:cols].T).sum(axis=0),
    }


def dask_scaling(gpus, gib, row):
    import cupric as cu
    import dask.array as da
    import distributed

    cols = 4096
    rows = int(gib * (1 << 30) / 4 / cols)
    base = {}
    for n in gpus:
        with cu.distributed.Cluster(devices=list(range(n))) as cluster, distributed.Client(cluster) as client:
            for name, make in _graphs(da, cu, rows, cols, n).items():
                client.compute(make()).result()  # warm: compiles, pools
                t0 = time.perf_counter()
                client.compute(make()).result()
                t = time.perf_counter() - t0
                base.setdefault(name, t)
                row(f"{name}, {gib:g} GiB a GPU", gpus=n, seconds=f"{t:.3f}", efficiency=f"{base[name] / t:.2f}")


def nccl_allreduce(n, row):
    import cupric as cu
    from cupric.cuda import nccl

    count = (1 << 30) // 4
    comms = nccl.Communicator.init_all(list(range(n)))
    bufs = [cu.ones(count, dtype="float32", device=f"cuda:{d}") for d in range(n)]

    def once():
        with nccl.group():
            for c, b in zip(comms, bufs, strict=True):
                c.all_reduce(b)
        for d in range(n):
            cu.cuda.Device(d).synchronize()

    once()
    reps = 10
    t0 = time.perf_counter()
    for _ in range(reps):
        once()
    t = (time.perf_counter() - t0) / reps
    if n > 1:
        bus = 2 * (n - 1) / n * count * 4 / t / 1e9
        row("nccl all_reduce 1 GiB float32 (cupric)", gpus=n, ms=f"{t * 1e3:.2f}", bus_GB_s=f"{bus:.0f}")
    else:  # one rank moves no bytes: the time is NCCL's call overhead
        row("nccl all_reduce 1 GiB float32 (cupric)", gpus=n, ms=f"{t * 1e3:.3f}", note="one rank: no transfer")
    for c in comms:
        c.close()


def _worker_part(r, count):
    import cupric as cu

    return cu.full(count, float(r + 1), dtype="float32")


def _sync(a):
    import cupric as cu

    cu.cuda.Device().synchronize()  # the worker's GPU: the collective done
    return 0


def _dask_sum(*parts):
    out = parts[0].copy()
    for p in parts[1:]:
        out += p
    return out


def dask_vs_nccl_allreduce(n, row, mib=256):
    """The all-reduce of every GPU worker's partial array (mib MiB of float32 each): Dask's own way
    (every part sent to one worker and summed, the result sent back to each) against an NcclGroup's
    all_reduce on the same workers."""
    import cupric as cu
    import distributed

    count = mib * (1 << 20) // 4
    with cu.distributed.Cluster(devices=list(range(n))) as cluster, distributed.Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])

        def parts():
            ps = [client.submit(_worker_part, r, count, workers=[w], pure=False) for r, w in enumerate(workers)]
            distributed.wait(ps)
            return ps

        def dask_way(ps):
            total = client.submit(_dask_sum, *ps, workers=[workers[0]], pure=False)
            back = [client.submit(lambda t: t.copy(), total, workers=[w], pure=False) for w in workers]
            distributed.wait(back)
            return back

        with cu.distributed.NcclGroup(client, workers) as group:

            def nccl_way(ps):
                out = group.all_reduce(ps)
                client.gather(client.map(_sync, out, pure=False))
                return out

            for name, fn in (("dask transfers", dask_way), ("nccl group", nccl_way)):
                fn(parts())  # warm
                ps = parts()
                t0 = time.perf_counter()
                out = fn(ps)
                t = time.perf_counter() - t0
                ok = (
                    float(client.submit(lambda a: float(a[:8].sum()), out[-1], pure=False).result())
                    == 8 * n * (n + 1) / 2
                )
                row(
                    f"all-reduce of {mib} MiB a worker: {name}",
                    gpus=n,
                    ms=f"{t * 1e3:.1f}",
                    check="ok" if ok else "WRONG",
                )


_TORCH_DIST = """
import os, sys, time, torch, torch.distributed as dist
rank, n, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
torch.cuda.set_device(rank)
dist.init_process_group("nccl", rank=rank, world_size=n, init_method="tcp://127.0.0.1:" + sys.argv[4])
x = torch.ones(count, device="cuda", dtype=torch.float32)
for _ in range(2):
    dist.all_reduce(x)
torch.cuda.synchronize(); dist.barrier()
t0 = time.perf_counter()
for _ in range(10):
    dist.all_reduce(x)
torch.cuda.synchronize()
t = (time.perf_counter() - t0) / 10
if rank == 0:
    print(t)
dist.destroy_process_group()
"""


def torch_allreduce(n, row):
    """torch.distributed's all_reduce of 1 GiB float32 on n GPUs, one process per GPU (its NCCL
    backend), beside cupric's above: the same bus bandwidth formula."""
    import socket
    import subprocess
    import tempfile

    count = (1 << 30) // 4
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(_TORCH_DIST)
    procs = [
        subprocess.Popen(
            [sys.executable, f.name, str(r), str(n), str(count), str(port)], stdout=subprocess.PIPE, text=True
        )
        for r in range(n)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    if any(p.returncode for p in procs):
        row("torch.distributed all_reduce 1 GiB float32", gpus=n, error=f"exit codes {[p.returncode for p in procs]}")
        return
    t = float(outs[0].split()[-1])
    if n > 1:
        bus = 2 * (n - 1) / n * count * 4 / t / 1e9
        row("torch.distributed all_reduce 1 GiB float32", gpus=n, ms=f"{t * 1e3:.2f}", bus_GB_s=f"{bus:.0f}")
    else:
        row("torch.distributed all_reduce 1 GiB float32", gpus=n, ms=f"{t * 1e3:.3f}", note="one rank: no transfer")


def cpu_correctness(row):
    import cupric as cu
    import dask.array as da
    import distributed

    with cu.distributed.Cluster(devices=[], n_workers=2) as cluster, distributed.Client(cluster) as client:
        for name, make in _graphs(da, cu, 256, 64, 2).items():
            got = client.compute(make()).result()
            g = make()
            want = g.map_blocks(lambda b: np.asarray(b.to_device("cpu")), dtype=g.dtype).compute(scheduler="threads")
            ok = np.allclose(np.asarray(got.to_device("cpu")), want, rtol=1e-4, atol=1e-3)
            row(f"{name} (2 CPU workers, correctness)", check="ok" if ok else "MISMATCH")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpus", default=None, help="GPU counts to run (default 1, 2, 4, 8 up to those present)")
    p.add_argument("--gib", type=float, default=8.0)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()

    def row(name, **cols):
        print(f"{name:48s} " + "  ".join(f"{k} {v}" for k, v in cols.items()), flush=True)

    import cupric as cu

    present = cu.distributed.gpu_devices()
    if not present:
        print("# no GPU: two CPU worker processes, correctness only")
        cpu_correctness(row)
        return 0
    counts = [int(c) for c in args.gpus.split(",")] if args.gpus else [c for c in (1, 2, 4, 8) if c <= len(present)]
    gib = args.gib / 16 if args.quick else args.gib
    sections = (
        lambda: dask_scaling(counts, gib, row),
        lambda: nccl_allreduce(len(present), row),
        lambda: torch_allreduce(len(present), row),
        lambda: dask_vs_nccl_allreduce(len(present), row),
    )
    for section in sections:
        try:
            section()
        except Exception as err:  # noqa: BLE001 - one section failing must not stop the others
            print(f"# section failed: {type(err).__name__}: {str(err)[:500]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
