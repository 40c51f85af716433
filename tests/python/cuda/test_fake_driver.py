"""The runtime and its bindings against a stand-in driver (tests/fake_cuda/fake_libcuda.c: host
memory, no kernels run), so that machines without a GPU still exercise devices, streams, events,
the pool, buffers, launches (the packed parameters the driver receives), graphs and error paths.
Each check runs in a subprocess whose library path puts the fake libcuda.so.1 first."""


import pytest
from fake_driver import run_with_fake_driver

PRELUDE = """
import ctypes, os
import numpy as np
import cupric as cu
fake = ctypes.CDLL("libcuda.so.1")
assert cu.cuda.is_available()
src = 'extern "C" __global__ void k(float a, const float* x, float* y, int n) {}'
kernel = cu.cuda.Program(src, arch="sm_90").compile("cubin").get_kernel("k")
"""


def run_fake(fake_dir, body, **env):
    return run_with_fake_driver(fake_dir, PRELUDE + body, env)


pytestmark = pytest.mark.nvrtc


def test_devices_and_properties(fake_dir):
    run_fake(fake_dir, """
d = cu.cuda.Device()
assert d.name == "Fake H200" and d.arch == "sm_90" and d.compute_capability == (9, 0)
assert d.multiprocessor_count == 132 and d.max_shared_memory_per_block_optin == 232448
assert d.properties()["pci_bus_id"] == "0000:01:00.0"
free, total = cu.cuda.memory_info()
assert total == 1 << 34 and free <= total and d.memory_info()[1] == total
assert cu.cuda.device_count() == 1 and cu.cuda.versions()["driver"]["version"] == (13, 0)
assert d.stream_priority_range() == (0, -5)
with d:
    assert cu.cuda.Device() == d
try:
    cu.cuda.Device(1)
    raise AssertionError("no error")
except ValueError as e:
    assert "has 1 device" in str(e)
""")


def test_streams_events_and_current_stream(fake_dir):
    run_fake(fake_dir, """
s = cu.cuda.Stream(priority=-3, non_blocking=False)
assert s.priority == -3 and not s.non_blocking and s.owned and s.handle
with s:
    assert cu.cuda.current_stream() == s
    with cu.cuda.Stream() as inner:
        assert cu.cuda.current_stream() == inner
    assert cu.cuda.current_stream() == s
assert cu.cuda.current_stream().handle == 0
w = cu.cuda.Stream.wrap(s.handle)
assert w == s and not w.owned
class Foreign:
    def __init__(self, h): self.h = h
    def __cuda_stream__(self): return (0, self.h)
class TorchLike:
    cuda_stream = s.handle
assert cu.cuda.Stream.wrap(Foreign(s.handle)) == s and cu.cuda.Stream.wrap(TorchLike()) == s
try:
    cu.cuda.Stream.wrap("nope")
    raise AssertionError
except TypeError as e:
    assert "__cuda_stream__" in str(e)
a, b = cu.cuda.Event(), cu.cuda.Event()
a.record(s); b.record(s); b.synchronize()
assert b.query() and (b - a) >= 0
e = s.record()
assert e.timing is False
s.wait(e); s.wait(cu.cuda.Stream()); s.synchronize(); assert s.query()
""")


def test_direct_pool_gives_each_block_its_own_exact_allocation(fake_dir):
    """CUPRIC_POOL=direct (python -m cupric.sanitize sets it): no size classes, no cache, so that
    compute-sanitizer sees each array's own bounds."""
    run_fake(fake_dir, """
pool = cu.cuda.memory_pool()
s = cu.cuda.Stream()
b = cu.cuda.alloc(1000, s)
assert pool.stats()["bytes_in_use"] == 1000
b.close()
st = pool.stats()
assert st["bytes_cached"] == 0 and st["bytes_in_use"] == 0 and st["driver_allocations"] == 1
x = cu.empty(3, device="cuda:0")  # (the fake driver runs no kernels)
assert pool.stats()["bytes_in_use"] == 24, pool.stats()
c = cu.cuda.alloc(1000, s)
assert pool.stats()["cache_hits"] == 0 and pool.stats()["driver_allocations"] == 3
""", CUPRIC_POOL="direct")


def test_the_pools_allocations_are_profiled(fake_dir):
    run_fake(fake_dir, """
s = cu.cuda.Stream()
with cu.profiler.profile() as prof:
    b = cu.cuda.alloc(1000, s)
    b.close()
    c = cu.cuda.alloc(1000, s)
events = [(e.name, e.detail, int(e.bytes), e.value, e.device) for e in prof.events if e.kind == "alloc"]
assert events == [("alloc", "pool", 1024, 1024, 0), ("free", "into the cache", 1024, 1024, 0),
                  ("alloc", "pool", 1024, 1024, 0)], events
assert len({e.stream for e in prof.events if e.kind == "alloc"}) == 1
memory = prof.table().memory["cuda:0"]
assert memory["allocations"] == 2 and memory["frees"] == 1 and memory["peak_bytes"] == 1024
""")


def test_pool_reuse_stats_and_out_of_memory(fake_dir):
    run_fake(fake_dir, """
pool = cu.cuda.memory_pool()
s = cu.cuda.Stream()
b = cu.cuda.alloc(1000, s)
p = b.ptr
b.close()
st = pool.stats()
assert st["bytes_cached"] == 1024 and st["bytes_in_use"] == 0
assert cu.cuda.alloc(1000, s).ptr == p  # freed and reused at once: the temporary dies
assert cu.cuda.alloc(1024, s).ptr == p  # same size class
assert pool.stats()["cache_hits"] == 2
other = cu.cuda.alloc(1000, cu.cuda.Stream())
assert other.ptr != p
del other
try:
    cu.cuda.alloc(1 << 40)
    raise AssertionError("no error")
except cu.cuda.OutOfMemoryError as e:
    assert e.requested == 1 << 40 and 0 < e.free <= 1 << 34 and isinstance(e, MemoryError)
    assert "out of memory on CUDA device 0" in str(e) and e.name == "CUDA_ERROR_OUT_OF_MEMORY"
assert pool.stats()["oom_retries"] == 1 and pool.stats()["bytes_cached"] == 0
big = cu.cuda.alloc(int(0.6 * (1 << 34)), s)
big.close()
assert pool.stats()["bytes_cached"] == 0  # a large block goes back to the driver's pool when freed
again = cu.cuda.alloc(int(0.7 * (1 << 34)), s)  # so the driver can give it out again: no retry
assert pool.stats()["oom_retries"] == 1
del again
del s  # the stream's cached blocks go back before it is destroyed
pool.free_all_blocks()
assert pool.stats()["bytes_cached"] == 0 and pool.stats()["bytes_in_use"] == 0
""")


def test_buffers_copies_fill_and_exports(fake_dir):
    run_fake(fake_dir, """
data = np.random.default_rng(0).random(100).astype(np.float32)
for kind in ("device", "pinned", "managed"):
    b = cu.cuda.alloc(data.nbytes, kind=kind)
    b.copy_from(data)
    assert np.array_equal(np.frombuffer(b.copy_to(), np.float32), data), kind
    out = np.zeros(10, np.float32)
    b.copy_to(out, offset=8)
    assert np.array_equal(out, data[2:12])
    c = cu.cuda.alloc(data.nbytes)
    c.copy_from(b)
    assert c.copy_to() == b.copy_to()
b = cu.cuda.alloc(8)
b.fill(7); assert b.copy_to() == bytes([7] * 8)
b.fill(np.uint16(0x0102)); assert b.copy_to() == bytes([2, 1] * 4)
class CAI:
    def __init__(self, buf):
        self.__cuda_array_interface__ = {"shape": (2,), "typestr": "<u4", "data": (buf.ptr, False),
                                         "version": 3, "strides": None}
d = cu.cuda.alloc(8); d.copy_from(CAI(b)); assert d.copy_to() == b.copy_to()
cap = b.__dlpack__()
assert "dltensor" in repr(cap) and b.__dlpack_device__() == (2, 0)
del cap  # unconsumed: the capsule's destructor frees the export
assert b.__cuda_array_interface__["data"][0] == b.ptr
b.close()
for call in (lambda: b.copy_to(), lambda: b.fill(0), lambda: b.__dlpack__()):
    try:
        call(); raise AssertionError
    except ValueError as e:
        assert "closed" in str(e)
""")


def test_launch_packs_what_the_driver_receives(fake_dir):
    run_fake(fake_dir, """
assert kernel.param_sizes == [4, 8, 8, 4]
x, y = cu.cuda.alloc(16), cu.cuda.alloc(16)
s = cu.cuda.Stream()
cu.cuda.launch(s, cu.cuda.LaunchConfig(2, 64), kernel, 2.5, x, y, 7)
args = np.ctypeslib.as_array(ctypes.cast(fake.fake_last_args, ctypes.POINTER(ctypes.c_uint64)), (4,))
assert ctypes.c_int.in_dll(fake, "fake_last_nargs").value == 4
assert np.frombuffer(args[0].tobytes()[:4], np.float32)[0] == 2.5
assert args[1] == x.ptr and args[2] == y.ptr and args[3] == 7
with s:
    cu.cuda.launch(None, cu.cuda.LaunchConfig(1, 1, cooperative=True), kernel, np.float32(1), x.ptr, y, np.int32(-1))
args = np.ctypeslib.as_array(ctypes.cast(fake.fake_last_args, ctypes.POINTER(ctypes.c_uint64)), (4,))
assert args[1] == x.ptr and np.frombuffer(args[3].tobytes()[:4], np.int32)[0] == -1
for bad, err in (((np.float64(1), x, y, 1), TypeError), ((1.0, x, y), TypeError), ((1.0, x, y, 2**40), OverflowError)):
    try:
        cu.cuda.launch(s, cu.cuda.LaunchConfig(1, 1), kernel, *bad)
        raise AssertionError(bad)
    except err as e:
        assert "kernel 'k'" in str(e) or "argument" in str(e)
try:
    cu.cuda.launch(s, cu.cuda.LaunchConfig(1, 1, shared_memory=100_000), kernel, 1.0, x, y, 1)
    raise AssertionError
except cu.cuda.CUDAError as e:
    assert "set_max_dynamic_shared_memory(100000)" in str(e) and "kernel 'k'" in str(e)
kernel.max_dynamic_shared_memory = 100_000
cu.cuda.launch(s, cu.cuda.LaunchConfig(1, 1, shared_memory=100_000), kernel, 1.0, x, y, 1)
assert kernel.occupancy(256) == 8
""", FAKE_PARAM_SIZES="4,8,8,4")


def test_unknown_parameter_sizes_use_wide_types(fake_dir):
    run_fake(fake_dir, """
assert kernel.param_sizes is None
b = cu.cuda.alloc(8)
cu.cuda.launch(None, cu.cuda.LaunchConfig(1, 1), kernel, 1.5, b, b, 3)  # not checked: double, int64
""")


def test_graph_capture_paths(fake_dir):
    run_fake(fake_dir, """
s = cu.cuda.Stream()
out = cu.cuda.alloc(4, s)
with cu.cuda.capture(s) as captured:
    assert s.is_capturing
    tmp = cu.cuda.alloc(4, s)  # a graph allocation (bypasses the cache)
    cu.cuda.launch(s, cu.cuda.LaunchConfig(1, 1), kernel, 1.0, tmp, out, 1)
    tmp.close()
assert not s.is_capturing and captured.graph.num_nodes == 3
exe = captured.graph.instantiate()
exe.upload(s); exe.launch(s); exe.launch(); s.synchronize()
assert cu.cuda.memory_pool().stats()["bytes_in_use"] == 512
try:
    cu.cuda.default_stream().begin_capture()
    raise AssertionError
except ValueError:
    pass
""")


def test_sticky_errors_name_the_last_kernel(fake_dir):
    run_fake(fake_dir, """
s = cu.cuda.Stream()
cu.cuda.launch(s, cu.cuda.LaunchConfig(1, 1), kernel, 1.0, 0, 0, 1)
try:
    s.synchronize()
    raise AssertionError
except cu.cuda.CUDAError as e:
    assert e.name == "CUDA_ERROR_ILLEGAL_ADDRESS" and e.code == 700 and e.sticky
    assert e.operation == "cuStreamSynchronize"
    assert "'k'" in str(e) and "restart" in str(e)
""", FAKE_STICKY="1")
