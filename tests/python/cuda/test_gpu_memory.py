"""cupric.cuda memory on a GPU: pool reuse and statistics, out-of-memory, Buffer copies, fills,
pinned and managed memory, DLPack and __cuda_array_interface__ export."""

import cupric as cu
import numpy as np
import pytest
from cuda_helpers import cycles_for, load_kernels, read_int32

pytestmark = pytest.mark.gpu


def test_freed_block_is_reused_on_the_same_stream():
    s = cu.cuda.Stream()
    pool = cu.cuda.memory_pool()
    first = cu.cuda.alloc(1 << 20, s)
    ptr = first.ptr
    first.close()
    before = pool.stats()
    assert before["bytes_cached"] >= 1 << 20
    again = cu.cuda.alloc(1 << 20, s)
    after = pool.stats()
    assert again.ptr == ptr
    assert after["cache_hits"] == before["cache_hits"] + 1
    assert after["bytes_in_use"] == before["bytes_in_use"] + (1 << 20)
    other = cu.cuda.alloc(1 << 20, cu.cuda.Stream())  # another stream never takes this stream's blocks
    assert other.ptr != again.ptr
    del again, other
    pool.free_all_blocks()
    assert pool.stats()["bytes_cached"] == 0


def test_reuse_across_streams_is_ordered():
    k = load_kernels()
    slow, fast = cu.cuda.Stream(), cu.cuda.Stream()
    old = cu.cuda.alloc(4096, slow)
    cu.cuda.launch(slow, cu.cuda.LaunchConfig(1, 1), k["spin_then_write"], cycles_for(0.1), old, 42)
    old.close()  # freed in slow's order: still in use by the spinning kernel
    new = cu.cuda.alloc(4096, fast)
    cu.cuda.launch(fast, cu.cuda.LaunchConfig(1, 1), k["write_value"], new, 7)
    slow.synchronize()
    fast.synchronize()
    assert read_int32(new)[0] == 7


def test_out_of_memory_raises_with_sizes():
    pool = cu.cuda.memory_pool()
    free, total = cu.cuda.memory_info()
    retries = pool.stats()["oom_retries"]
    with pytest.raises(cu.cuda.OutOfMemoryError) as info:
        cu.cuda.alloc(2 * total)
    e = info.value
    assert isinstance(e, MemoryError) and isinstance(e, cu.cuda.CUDAError)
    assert e.requested == 2 * total and 0 < e.free <= total
    assert e.name == "CUDA_ERROR_OUT_OF_MEMORY" and "out of memory" in str(e) and str(2 * total) in str(e)
    assert pool.stats()["oom_retries"] == retries + 1
    cu.cuda.alloc(1024)  # the pool still works


def test_large_blocks_return_to_the_driver_pool_and_serve_other_sizes():
    pool = cu.cuda.memory_pool()
    s = cu.cuda.Stream()
    big = cu.cuda.alloc(64 << 20, s)
    base = big.ptr
    big.close()
    before = pool.stats()
    assert before["bytes_cached"] < 64 << 20  # not in cupric's exact-size cache
    parts = [cu.cuda.alloc(20 << 20, s) for _ in range(3)]  # smaller blocks carved from the same memory
    after = pool.stats()
    assert after["driver_reserved_bytes"] == before["driver_reserved_bytes"], (before, after)
    assert after["driver_allocations"] == before["driver_allocations"] + 3
    del parts, base


def test_cached_blocks_are_released_before_giving_up():
    pool = cu.cuda.memory_pool()
    pool.free_all_blocks()
    free, _ = cu.cuda.memory_info()
    big = cu.cuda.alloc(int(free * 0.45))
    big.close()  # large: back in the driver's pool, still reserved by it
    cu.cuda.Device().synchronize()
    assert pool.stats()["driver_reserved_bytes"] >= int(free * 0.45)
    bigger = cu.cuda.alloc(int(free * 0.8))  # needs the reserved memory back
    assert bigger.size == int(free * 0.8)
    del bigger
    pool.free_all_blocks()


@pytest.mark.parametrize("kind", ["device", "pinned", "managed"])
def test_buffer_round_trip(kind):
    rng = np.random.default_rng(1)
    data = rng.random(1000).astype(np.float32)
    s = cu.cuda.Stream()
    b = cu.cuda.alloc(data.nbytes, s, kind=kind)
    assert b.size == data.nbytes == len(b) and b.kind == kind and b.device == 0 and b.stream == s
    b.copy_from(data, s)
    out = np.empty_like(data)
    b.copy_to(out, s)
    np.testing.assert_array_equal(out, data)
    assert np.array_equal(np.frombuffer(b.copy_to(), np.float32), data)
    part = np.zeros(10, np.float32)
    b.copy_to(part, s, offset=40)
    np.testing.assert_array_equal(part, data[10:20])
    b.copy_from(np.full(5, -1, np.float32), s, offset=8)
    np.testing.assert_array_equal(np.frombuffer(b.copy_to(), np.float32)[2:7], -1)
    copy = cu.cuda.alloc(data.nbytes, s)
    copy.copy_from(b, s)
    assert copy.copy_to(stream=s) == b.copy_to(stream=s)
    with pytest.raises(ValueError, match="do not fit"):
        b.copy_from(np.zeros(1001, np.float32), s)
    b.close()
    assert b.closed
    with pytest.raises(ValueError, match="closed"):
        b.copy_to()


def test_fill_patterns():
    b = cu.cuda.alloc(64)
    b.fill(0xAB)
    assert b.copy_to() == b"\xab" * 64
    b.fill(np.uint16(0x1234))
    assert np.all(np.frombuffer(b.copy_to(), np.uint16) == 0x1234)
    b.fill(np.float32(1.5))
    assert np.all(np.frombuffer(b.copy_to(), np.float32) == 1.5)
    with pytest.raises(ValueError, match="0, 255"):
        b.fill(256)
    with pytest.raises(ValueError, match="does not divide"):
        cu.cuda.alloc(6).fill(np.uint32(1))
    with pytest.raises(TypeError):
        b.fill(np.float64(1.0))


def test_pinned_pool_reuses_blocks():
    s = cu.cuda.Stream()
    a = cu.cuda.alloc(4096, s, kind="pinned")
    ptr = a.ptr
    a.close()
    s.synchronize()
    assert cu.cuda.alloc(4096, s, kind="pinned").ptr == ptr
    assert cu.cuda.pinned_memory_stats()["cache_hits"] >= 1


def test_managed_memory_is_visible_to_kernels():
    k = load_kernels()
    b = cu.cuda.alloc(4, kind="managed")
    cu.cuda.launch(None, cu.cuda.LaunchConfig(1, 1), k["write_value"], b, 99)
    cu.cuda.current_stream().synchronize()
    assert read_int32(b)[0] == 99


def test_cuda_array_interface_and_dlpack_export():
    b = cu.cuda.alloc(16)
    b.copy_from(bytes(range(16)))
    cai = b.__cuda_array_interface__
    assert cai["data"] == (b.ptr, False) and cai["shape"] == (16,) and cai["typestr"] == "|u1"
    assert b.__dlpack_device__() == (2, 0)
    assert cu.cuda.alloc(16, kind="managed").__dlpack_device__() == (13, 0)
    torch = pytest.importorskip("torch")
    t = torch.from_dlpack(b)
    assert t.device.type == "cuda" and t.dtype == torch.uint8
    assert t.cpu().tolist() == list(range(16))
    t += 1  # shares memory
    assert b.copy_to() == bytes(range(1, 17))
