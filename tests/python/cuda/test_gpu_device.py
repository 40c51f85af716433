"""cupric.cuda on a GPU: device properties, streams (ordering, priorities, `with`), events."""

import time

import cupric as cu
import pytest
from cuda_helpers import cycles_for, load_kernels, read_int32

pytestmark = pytest.mark.gpu


def test_device_properties():
    assert cu.cuda.device_count() >= 1 and cu.cuda.Device.count() == cu.cuda.device_count()
    d = cu.cuda.Device(0)
    assert d == cu.cuda.Device() and d.index == 0
    major, minor = d.compute_capability
    assert major >= 5 and d.arch == f"sm_{major}{minor}"
    assert d.name and isinstance(d.name, str)
    assert d.multiprocessor_count > 0 and d.warp_size == 32
    assert d.total_memory > 1 << 30 and d.l2_cache_size > 0
    assert d.max_shared_memory_per_block == 48 * 1024
    assert d.max_shared_memory_per_block_optin >= d.max_shared_memory_per_block
    assert d.max_shared_memory_per_multiprocessor >= d.max_shared_memory_per_block_optin
    assert d.clock_rate_khz > 0 and d.max_threads_per_block == 1024
    assert d.max_block_dim[0] == 1024 and d.max_grid_dim[0] == 2**31 - 1
    props = d.properties()
    assert props["arch"] == d.arch and props["multiprocessor_count"] == d.multiprocessor_count
    assert props["compute_capability"] == (major, minor)
    free, total = d.memory_info()
    assert 0 < free <= total and abs(total - d.total_memory) <= d.total_memory // 10
    assert cu.cuda.memory_info() == pytest.approx((free, total), rel=0.1)
    least, greatest = d.stream_priority_range()
    assert greatest <= least
    d.synchronize()
    with pytest.raises(ValueError, match="does not exist"):
        cu.cuda.Device(cu.cuda.device_count())


def test_device_properties_match_pytorch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    p = torch.cuda.get_device_properties(0)
    d = cu.cuda.Device(0)
    assert d.name == p.name
    assert d.multiprocessor_count == p.multi_processor_count
    assert d.total_memory == p.total_memory
    assert d.compute_capability == (p.major, p.minor)


def test_streams_and_current_stream():
    s = cu.cuda.Stream(priority=0)
    assert s.handle != 0 and s.owned and s.non_blocking and s.device == 0
    assert cu.cuda.Stream(non_blocking=False).non_blocking is False
    least, greatest = cu.cuda.Device().stream_priority_range()
    assert cu.cuda.Stream(priority=greatest).priority == greatest
    default = cu.cuda.default_stream()
    assert default.handle == 0 and cu.cuda.current_stream() == default
    with s:
        assert cu.cuda.current_stream() == s
        inner = cu.cuda.Stream()
        with inner:
            assert cu.cuda.current_stream() == inner
        assert cu.cuda.current_stream() == s
    assert cu.cuda.current_stream() == default
    assert s.__cuda_stream__() == (0, s.handle)
    wrapped = cu.cuda.Stream.from_handle(s.handle)
    assert wrapped == s and not wrapped.owned and wrapped.device == 0
    assert cu.cuda.Stream.wrap(s) == s and cu.cuda.Stream.wrap(s.handle) == s


def test_stream_ordering_with_events():
    k = load_kernels()
    slow, fast = cu.cuda.Stream(), cu.cuda.Stream()
    src, dst = cu.cuda.alloc(4, slow), cu.cuda.alloc(4, fast)
    src.fill(0, slow)
    dst.fill(0, fast)
    one = cu.cuda.LaunchConfig(1, 1)
    cu.cuda.launch(slow, one, k["spin_then_write"], cycles_for(0.2), src, 42)
    done = slow.record()
    assert not slow.query()  # 0.2 s of spinning is still running
    fast.wait(done)
    cu.cuda.launch(fast, one, k["copy_value"], src, dst)
    fast.synchronize()
    assert read_int32(dst)[0] == 42
    assert slow.query() and done.query()


def test_stream_waits_on_stream():
    k = load_kernels()
    a, b = cu.cuda.Stream(), cu.cuda.Stream()
    src, dst = cu.cuda.alloc(4, a), cu.cuda.alloc(4, b)
    one = cu.cuda.LaunchConfig(1, 1)
    cu.cuda.launch(a, one, k["spin_then_write"], cycles_for(0.1), src, 7)
    b.wait(a)
    cu.cuda.launch(b, one, k["copy_value"], src, dst)
    b.synchronize()
    assert read_int32(dst)[0] == 7


def test_event_timing():
    k = load_kernels()
    s = cu.cuda.Stream()
    start, end = cu.cuda.Event(), cu.cuda.Event()
    start.record(s)
    cu.cuda.launch(s, cu.cuda.LaunchConfig(1, 1), k["spin"], cycles_for(0.05))
    end.record(s)
    t = time.perf_counter()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert 25 < ms < 1000 and (end - start) == ms
    assert time.perf_counter() - t < 5
    no_timing = cu.cuda.Event(timing=False).record(s)
    with pytest.raises(ValueError, match="timing"):
        start.elapsed_time(no_timing)
    with pytest.raises(ValueError, match="recorded"):
        cu.cuda.Event().elapsed_time(end)
    cu.cuda.Event(blocking_sync=True).record(s).synchronize()
