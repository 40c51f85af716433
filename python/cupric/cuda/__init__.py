"""cupric.cuda: the CUDA runtime — devices, streams, events, memory, run-time compilation, launch.

Nothing CUDA is loaded at import: the driver, NVRTC and nvJitLink are found and loaded at first use
(pip wheels, CUDA_HOME, /usr/local/cuda). See docs/cuda.md.

    import cupric as cu
    prog = cu.cuda.Program('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1; }')
    kernel = prog.compile("cubin").get_kernel("k")
    buf = cu.cuda.Buffer.allocate(4 * 32)
    cu.cuda.launch(None, cu.cuda.LaunchConfig(grid=1, block=32), kernel, buf)
"""

import os
from contextlib import contextmanager

from .. import _cupric as _top
from .._cupric import _cuda as _c

CUDAError = _c.CUDAError
OutOfMemoryError = _c.OutOfMemoryError
CompileError = _c.CompileError
LibraryNotFoundError = _c.LibraryNotFoundError

is_available = _c.is_available
versions = _c.versions
device_count = _c.device_count
Device = _c.Device
Stream = _c.Stream
Event = _c.Event
Graph = _c.Graph
GraphExec = _c.GraphExec
current_stream = _c.current_stream
default_stream = _c.default_stream
MemoryPool = _c.MemoryPool
memory_pool = _c.memory_pool
memory_info = _c.memory_info
pinned_memory_stats = _c.pinned_memory_stats
free_pinned_blocks = _c.free_pinned_blocks
Buffer = _c.Buffer
Program = _c.Program
ObjectCode = _c.ObjectCode
Linker = _c.Linker
Kernel = _c.Kernel
LaunchConfig = _c.LaunchConfig
launch = _c.launch
compile_cache = _top.compile_cache  # the cache every JIT shares (bind_compile_cache.cpp)
CompileCache = _top.CompileCache
launch_sites_enabled = _c.launch_sites_enabled
_library_candidates = _c._library_candidates  # for tests
_recent_launches = _c._recent_launches  # for tests: the launches a fault report would list
_dropped_streams = _c._dropped_streams  # for tests: streams dropped with work pending, still tracked
_pack_arguments = _c._pack_arguments  # for tests: packs as launch() does


def set_launch_sites(enabled=True):
    """Records the Python file:line of every kernel launch, so that the report of a fault inside a
    kernel names the line that launched it. Off by default (it costs a frame walk per launch);
    CUPRIC_LAUNCH_SITES=1 turns it on at import."""
    _c.set_launch_sites(bool(enabled), os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)


if os.environ.get("CUPRIC_LAUNCH_SITES", "") not in ("", "0"):
    set_launch_sites(True)


def alloc(nbytes, stream=None, kind="device", device=None):
    """A Buffer of `nbytes` from the device's pool ('device'), the pinned pool or managed memory."""
    return Buffer.allocate(nbytes, stream, kind, device)


@contextmanager
def capture(stream, mode="thread_local"):
    """Captures what is enqueued on `stream` in the block; yields a holder whose .graph is set after."""

    class Captured:
        graph = None

    holder = Captured()
    stream.begin_capture(mode)
    try:
        yield holder
    finally:
        holder.graph = stream.end_capture()


__all__ = [name for name in dir() if not name.startswith("_") and name not in ("contextmanager", "os")]
