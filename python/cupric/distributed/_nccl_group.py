"""NCCL between the GPU workers of one Dask cluster (cupric.distributed.NcclGroup).

Dask moves a chunk between workers by pickling it through the scheduler's comms (host memory, TCP
or UCX): fine for a task graph, slow for a collective over large arrays, such as the all-reduce of
every worker's partial sums. An NcclGroup makes one NCCL communicator with a rank per worker, set
up through the workers themselves (the client makes the unique id; `client.run` has every worker
join at once, since NCCL's init returns only when all ranks have), and then runs collectives as
Dask tasks pinned to their workers, on arrays those workers hold, in place on their GPUs.
"""

import threading
import uuid

_GROUPS = {}  # on each worker: group name -> its Communicator
_LOCK = threading.Lock()
_OPS = ("sum", "prod", "max", "min", "avg")


class NcclGroup:
    """An NCCL communicator over Dask GPU workers, one rank per worker (cu.distributed.Cluster()
    starts such workers, one per GPU):

        with cu.distributed.NcclGroup(client) as group:
            parts = [client.submit(partial_sums, i, workers=[w]) for i, w in enumerate(group.workers)]
            summed = group.all_reduce(parts)      # futures: on each worker, the sum over all workers

    workers: the worker addresses to include (default: every worker, in address order; rank i is
    workers[i]). Each worker's arrays must be on its GPU (its cuda:0) and C-contiguous.
    """

    def __init__(self, client, workers=None):
        from ..cuda import nccl

        present = client.scheduler_info()["workers"]
        workers = sorted(present) if workers is None else list(workers)
        if not workers:
            raise ValueError("cupric.distributed.NcclGroup: no workers")
        missing = [w for w in workers if w not in present]
        if missing:
            raise ValueError(
                f"cupric.distributed.NcclGroup: no such workers {missing} (the cluster has {sorted(present)})"
            )
        if len(set(workers)) != len(workers):
            raise ValueError(f"cupric.distributed.NcclGroup: a worker is listed twice: {workers}")
        # every worker must be able to join before any does: a rank that never joins leaves the
        # others waiting in NCCL's init
        without = [w for w, ok in client.run(_has_gpu, workers=workers).items() if not ok]
        if without:
            raise RuntimeError(f"cupric.distributed.NcclGroup: workers without a GPU: {sorted(without)}")
        self.client, self.workers = client, workers
        self.name = f"cupric-nccl-{uuid.uuid4().hex}"
        ranks = {w: r for r, w in enumerate(workers)}
        client.run(_join, self.name, len(workers), nccl.get_unique_id(), ranks, workers=workers)
        self._open = True

    @property
    def size(self):
        return len(self.workers)

    def all_reduce(self, parts, op="sum"):
        """parts: one Dask future (or delayed value) per worker of the group, in the group's order,
        each a device array of the same shape and dtype; returns one future per worker: that
        worker's array, reduced over the group in place (op: sum, prod, max, min or avg)."""
        parts = list(parts)
        _check_parts(parts, self.workers, op, self._open)
        return [
            self.client.submit(_all_reduce, self.name, part, op, workers=[w], allow_other_workers=False, pure=False)
            for part, w in zip(parts, self.workers, strict=True)
        ]

    def close(self):
        """Destroys the communicator on every worker (idempotent)."""
        if self._open:
            self._open = False
            self.client.run(_leave, self.name, workers=self.workers)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<cupric NcclGroup {self.name}: {self.size} workers{'' if self._open else ', closed'}>"


def _check_parts(parts, workers, op, open_):
    """Refuses what can be checked on the client before any task runs."""
    if not open_:
        raise ValueError("cupric.distributed.NcclGroup: the group is closed")
    if op not in _OPS:
        raise ValueError(f"cupric.distributed.NcclGroup: op must be one of {', '.join(_OPS)}, got {op!r}")
    if len(parts) != len(workers):
        raise ValueError(
            f"cupric.distributed.NcclGroup: one part per worker: {len(workers)} workers, {len(parts)} parts"
        )


# ---- on the workers --------------------------------------------------------------------------


def _has_gpu():
    from .. import cuda

    return cuda.is_available()


def _join(name, nranks, unique_id, ranks, dask_worker=None):
    from ..cuda import nccl

    comm = nccl.Communicator(nranks, unique_id, ranks[dask_worker.address], device=0)
    with _LOCK:
        _GROUPS[name] = comm
    return comm.rank


def _leave(name):
    with _LOCK:
        comm = _GROUPS.pop(name, None)
    if comm is not None:
        comm.close()


def _all_reduce(name, array, op):
    with _LOCK:
        comm = _GROUPS.get(name)
    if comm is None:
        raise RuntimeError(f"cupric.distributed.NcclGroup: this worker is not in group {name} (or it was closed)")
    return comm.all_reduce(array, op=op)
