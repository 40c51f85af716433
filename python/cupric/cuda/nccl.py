"""cupric.cuda.nccl — collectives between GPUs through NCCL.

NCCL is loaded at first use from the `nvidia-nccl-cu13` wheel (or a CUDA toolkit); a missing library
raises LibraryNotFoundError naming the wheel. NVLink multicast stays off (NCCL_NVLS_ENABLE=0 unless
the environment sets it). Arrays may be cupric arrays, PyTorch tensors, CuPy arrays or anything with
__cuda_array_interface__ / DLPack, C-contiguous and on the communicator's device; each call is
queued on `stream` (the device's current stream by default) after the work that produces its
arrays. Shapes, dtypes and devices are checked before NCCL is called.

    import cupric as cu
    from cupric.cuda import nccl

    uid = nccl.get_unique_id()            # one rank makes it, every rank gets the same bytes
    comm = nccl.Communicator(nranks, uid, rank, device=rank)
    x = cu.ones(1 << 20, device=f"cuda:{rank}")
    comm.all_reduce(x)                     # in place: the sum over the ranks
    comms = nccl.Communicator.init_all([0, 1])   # one process, one rank per device
"""

from contextlib import contextmanager

from .._cupric import _cuda as _c

_OPS = ("sum", "prod", "max", "min", "avg")


def version():
    """NCCL's version as (major, minor, patch)."""
    code = _c.nccl_version()
    return code // 10000, code // 100 % 100, code % 100


def get_unique_id():
    """A new unique id (128 bytes) for Communicator(...): made by one rank, passed to all."""
    return _c.nccl_unique_id()


@contextmanager
def group():
    """The collectives (and send/recv pairs) in the block are issued as one NCCL group: needed when
    one process drives several devices' ranks, or pairs sends with receives."""
    _c.nccl_group_start()
    try:
        yield
    finally:
        _c.nccl_group_end()


class Communicator:
    """One rank of an NCCL communicator on one device: Communicator(nranks, unique_id, rank,
    device) — every rank calls it with the same id, and it returns when all have joined — or
    Communicator.init_all(devices) for one process with a rank per device."""

    def __init__(self, nranks, unique_id, rank, device=None):
        if isinstance(unique_id, _c.NcclCommunicator):  # init_all's
            self._comm = unique_id
            return
        from . import Device

        device = Device.current().index if device is None else _device_index(device)
        self._comm = _c.NcclCommunicator.init_rank(int(nranks), bytes(unique_id), int(rank), device)

    @classmethod
    def init_all(cls, devices):
        """One communicator per device of this process (rank i on devices[i])."""
        return [cls(None, c, None) for c in _c.NcclCommunicator.init_all([_device_index(d) for d in devices])]

    size = property(lambda self: self._comm.size, doc="the number of ranks")
    rank = property(lambda self: self._comm.rank, doc="this member's rank")
    device = property(lambda self: self._comm.device, doc="its CUDA device ordinal")
    closed = property(lambda self: self._comm.closed)

    def all_reduce(self, send, recv=None, op="sum", stream=None):
        """recv = op over the ranks of send (recv defaults to send: in place); returns recv."""
        recv = send if recv is None else recv
        self._comm.all_reduce(send, recv, _op(op), stream)
        return recv

    def reduce(self, send, recv=None, root=0, op="sum", stream=None):
        """recv on rank `root` = op over the ranks of send; returns recv."""
        recv = send if recv is None else recv
        self._comm.reduce(send, recv, int(root), _op(op), stream)
        return recv

    def broadcast(self, send, recv=None, root=0, stream=None):
        """recv on every rank = send of rank `root`; returns recv."""
        recv = send if recv is None else recv
        self._comm.broadcast(send, recv, int(root), stream)
        return recv

    def all_gather(self, send, recv, stream=None):
        """recv (size x send's elements) = every rank's send, in rank order; returns recv."""
        self._comm.all_gather(send, recv, stream)
        return recv

    def reduce_scatter(self, send, recv, op="sum", stream=None):
        """recv = rank's part (send's elements / size) of op over the ranks of send; returns recv."""
        self._comm.reduce_scatter(send, recv, _op(op), stream)
        return recv

    def send(self, array, peer, stream=None):
        """Sends array to rank `peer` (which calls recv): pair them in a group()."""
        self._comm.send(array, int(peer), stream)

    def recv(self, array, peer, stream=None):
        """Receives into array from rank `peer`; returns array."""
        self._comm.recv(array, int(peer), stream)
        return array

    def close(self):
        """Destroys the communicator after its queued work (ncclCommDestroy)."""
        self._comm.destroy()

    def abort(self):
        """Destroys it at once, abandoning queued work (ncclCommAbort: after a failure)."""
        self._comm.abort()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"rank {self.rank} of {self.size}"
        return f"<cupric.cuda.nccl.Communicator {state} on cuda:{self.device}>"


def _op(op):
    if op not in _OPS:
        raise ValueError(f"cupric.cuda.nccl: unknown reduction {op!r} ({', '.join(_OPS)})")
    return op


def _device_index(device):
    """An ordinal from 3, 'cuda:3' or a Device."""
    if isinstance(device, str):
        if not device.startswith("cuda:"):
            raise ValueError(f"cupric.cuda.nccl: a communicator's device is a CUDA device, got {device!r}")
        return int(device.split(":", 1)[1])
    return int(getattr(device, "index", device))
