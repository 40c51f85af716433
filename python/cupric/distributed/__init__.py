"""cupric.distributed — cupric arrays under Dask on several processes and GPUs.

cupric does not schedule work across machines itself: Dask does (the task graph, placement,
transfers), and NCCL (cupric.cuda.nccl) does collectives between GPUs. This module is the thin
helper that starts a Dask cluster fit for cupric chunks:

    import cupric as cu, dask.array as da, distributed
    with cu.distributed.Cluster() as cluster, distributed.Client(cluster) as client:
        x = da.random.RandomState(0, RandomState=cu.random.default_rng).standard_normal((8192, 8192), chunks=2048)
        print(client.compute((x * 2 + 1).sum()).result())

On a machine with GPUs it starts one worker process per GPU, each seeing only its GPU
(CUDA_VISIBLE_DEVICES), so that the worker's default device — where its chunks are made — is that
GPU; without GPUs, `n_workers` CPU worker processes. dask_cuda's LocalCUDACluster does the same with
more knobs; this needs only `distributed`. NcclGroup(client) adds an NCCL communicator across such
workers for collectives (an all-reduce of every worker's partial sums) that Dask's own transfers
would route through host memory.
"""

import os

from ._nccl_group import NcclGroup

__all__ = ["Cluster", "NcclGroup", "gpu_devices"]


def gpu_devices():
    """The CUDA device ordinals this process sees (an empty list without GPUs)."""
    from .. import cuda

    return list(range(cuda.device_count())) if cuda.is_available() else []


def Cluster(devices=None, n_workers=None, threads_per_worker=1, **kwargs):  # noqa: N802 - a factory named as a class
    """A local Dask cluster for cupric chunks (use it with `distributed.Client(cluster)`).

    devices: the GPUs to give a worker each (ordinals; default: every GPU visible). With none (no
    GPU, or devices=[]), `n_workers` CPU worker processes (default 2). Other keywords go to the
    cluster (distributed.SpecCluster for GPUs, distributed.LocalCluster for CPUs)."""
    import distributed

    devices = gpu_devices() if devices is None else [int(d) for d in devices]
    kwargs.setdefault("dashboard_address", None)
    if not devices:
        workers = 2 if n_workers is None else int(n_workers)
        if workers < 1:
            raise ValueError(f"cupric.distributed.Cluster: n_workers must be at least 1, got {workers}")
        return distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=threads_per_worker,
            processes=True,
            worker_dashboard_address=None,
            **kwargs,
        )
    if n_workers is not None and int(n_workers) != len(devices):
        raise ValueError(
            f"cupric.distributed.Cluster: one worker per GPU: {len(devices)} devices {devices}, n_workers={n_workers}"
        )
    workers = _gpu_workers(distributed, devices, threads_per_worker)
    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": kwargs.pop("dashboard_address")}}
    return distributed.SpecCluster(workers=workers, scheduler=scheduler, **kwargs)


def _gpu_workers(distributed, devices, threads_per_worker):
    """SpecCluster's worker specs: one Nanny a GPU, its process seeing only that GPU."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    names = visible.split(",") if visible else [str(d) for d in range(max(devices) + 1)]
    for d in devices:
        if d < 0 or d >= len(names):
            raise ValueError(f"cupric.distributed.Cluster: no GPU {d} (this process sees {len(names)})")
    return {
        f"gpu-{d}": {
            "cls": distributed.Nanny,
            "options": {
                "nthreads": threads_per_worker,
                # the worker sees only its GPU: its device 0, where its chunks are made (set, not
                # inherited: a parent's CUPRIC_DEVICE=cpu must not put a GPU worker's chunks on its CPU)
                "env": {
                    "CUDA_VISIBLE_DEVICES": names[d].strip(),
                    "CUPRIC_DEVICE": "cuda:0",
                    "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE", "0"),
                },
                "dashboard_address": None,
            },
        }
        for d in devices
    }
