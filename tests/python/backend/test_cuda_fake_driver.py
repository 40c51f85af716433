"""The CUDA array backend's host side against the stand-in driver (tests/fake_cuda/fake_libcuda.c:
host memory, kernels do not run): transfers both ways for every dtype and layout, memset fills,
and every op family dispatching through render -> NVRTC -> module load -> launch without errors.
Each check runs in a subprocess whose library path puts the fake libcuda.so.1 first."""


import pytest
from fake_driver import run_with_fake_driver

pytestmark = pytest.mark.nvrtc

PRELUDE = """
import numpy as np
import cupric as cu
assert cu.cuda.is_available()
rng = np.random.default_rng(0)
"""


def run_fake(fake_dir, body, **env):
    return run_with_fake_driver(fake_dir, PRELUDE + body, env, drop=("CUPRIC_DEVICE",))


def test_transfers_round_trip_every_dtype_and_layout(fake_dir):
    run_fake(fake_dir, """
for dt in ["bool", "int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64", "complex64",
           "complex128"]:
    a = (rng.standard_normal((6, 7)) * 50).astype(dt)
    x = cu.asarray(a, device="cuda")
    assert x.device == "cuda:0" and x.dtype == dt and x.shape == (6, 7)
    assert np.array_equal(np.asarray(x), a), dt          # np.asarray copies device arrays
    assert np.array_equal(x.get(), a) and isinstance(x.get(), np.ndarray)
    back = x.to_device("cpu")
    assert back.device == "cpu" and np.array_equal(np.asarray(back), a)
    v = cu.asarray(a[::2, ::-3], device="cuda")           # a strided source is packed on the host
    assert np.array_equal(np.asarray(v), a[::2, ::-3])
    z = cu.asarray(a[:0], device="cuda")
    assert z.shape == (0, 7) and np.asarray(z).shape == (0, 7)
    s = cu.asarray(a[1, 2], device="cuda")
    assert s.shape == () and s.item() == a[1, 2].item()
    big = (rng.standard_normal(10_000_003) * 50).astype(dt)  # through pinned staging blocks of 16 MB
    assert np.array_equal(np.asarray(cu.asarray(big, device="cuda")), big), dt
    try:
        np.asarray(x, copy=False)
        raise AssertionError("no error")
    except ValueError as e:
        assert "copy" in str(e)
""")


def test_out_of_memory(fake_dir):
    run_fake(fake_dir, """
pool = cu.cuda.memory_pool()
before = pool.stats()["bytes_in_use"]
held = []
try:
    for _ in range(100):
        held.append(cu.empty((3 << 30,), dtype=cu.uint8, device="cuda"))  # the stand-in has 16 GiB
    raise AssertionError("no error")
except cu.cuda.OutOfMemoryError as e:
    assert e.requested == 3 << 30 and "out of memory" in str(e)
    assert str(e).startswith("Unable to allocate 3.00 GiB for an array with shape (3221225472,) "
                             "and data type uint8 on cuda:0")
assert len(held) == 5
del held
assert pool.stats()["bytes_in_use"] == before
""")


def test_default_device_and_context_manager(fake_dir):
    run_fake(fake_dir, """
assert cu.zeros(3).device == "cuda:0"      # the first GPU when there is one
with cu.device("cpu"):
    assert cu.ones(2).device == "cpu"
    with cu.device("cuda:0"):
        assert cu.asarray([1, 2]).device == "cuda:0"
    assert cu.arange(3).device == "cpu"
assert cu.zeros(3).device == "cuda:0"
""")
    run_fake(fake_dir, "assert cu.zeros(3).device == 'cpu'", CUPRIC_DEVICE="cpu")


def test_memset_fills_and_interfaces(fake_dir):
    run_fake(fake_dir, """
for dt, v in [("float32", 1.5), ("int32", -7), ("int16", 300), ("uint8", 9), ("bool", True), ("float64", 0.0),
              ("complex128", 0)]:
    x = cu.full((5, 3), v, dtype=dt, device="cuda")
    assert np.array_equal(np.asarray(x), np.full((5, 3), v, dtype=dt)), dt
assert np.array_equal(np.asarray(cu.zeros((4, 4), device="cuda")), np.zeros((4, 4)))
x = cu.ones((3, 4), dtype=cu.float32, device="cuda")
cai = x.__cuda_array_interface__
assert cai["version"] == 3 and cai["shape"] == (3, 4) and cai["typestr"] == "<f4" and cai["strides"] is None
assert cai["data"][0] == x._data_ptr and cai["stream"] == 1
t = x.T.__cuda_array_interface__
assert t["strides"] == (4, 16)
assert not hasattr(cu.ones(2, device="cpu"), "__cuda_array_interface__")
assert x.__dlpack_device__() == (2, 0)
class Foreign:  # a producer with only __cuda_array_interface__ (as Numba's arrays)
    def __init__(self, a):
        self.keep = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__
f = cu.asarray(Foreign(x))
assert f.device == "cuda:0" and f._data_ptr == x._data_ptr and f.shape == (3, 4)
assert np.array_equal(np.asarray(f), np.ones((3, 4), np.float32))
ft = cu.asarray(Foreign(x.T))
assert ft.shape == (4, 3) and ft.strides == x.T.strides and ft._data_ptr == x._data_ptr
""")


def test_every_family_dispatches(fake_dir):
    # results are garbage (no kernel runs); what is checked is the host path: loop resolution,
    # plans, rendering, NVRTC, module loading, argument packing and launching
    run_fake(fake_dir, """
x = cu.asarray(rng.standard_normal((8, 6)).astype(np.float32), device="cuda")
y = cu.asarray(rng.standard_normal((6,)).astype(np.float32), device="cuda")
i = cu.asarray(rng.integers(0, 5, (8, 6)), device="cuda")
for r in [x + y, 2 * x + 1.5, x[::2, ::-1] * y[::-1], cu.sqrt(x * x + y * y) * 0.5 + cu.sin(x), x < 0.5,
          cu.add(x, 1.0, out=cu.empty((8, 6), dtype=cu.float32, device="cuda"), where=x > 0),
          cu.add(x, 1.0, where=True), i // 2, x.astype(cu.int8), x.T.astype(cu.float64), cu.arange(10, device="cuda"),
          cu.sum(x), cu.sum(x, axis=0), cu.sum(x, axis=1), cu.max(x, axis=(0, 1)), cu.any(x > 0, axis=0),
          cu.argmax(x, axis=1), cu.argmin(x), cu.cumsum(x, axis=0), cu.cumprod(i, axis=1),
          cu.sum(cu.ones((1 << 20,), dtype=cu.float32, device="cuda")), x[cu.asarray([0, 3, 3], device="cuda")],
          cu.random.default_rng(1).random((100,), dtype=cu.float32, device="cuda"),
          cu.random.default_rng(1).integers(0, 10, (100,), device="cuda"),
          cu.random.default_rng(1).standard_normal((7,), device="cuda"), cu.linspace(0, 1, 11, device="cuda"),
          cu.linspace(np.zeros(2), np.ones(2), 3, device="cuda"), cu.logspace(0, 2, 5, device="cuda"),
          cu.eye(3, device="cuda"), cu.tri(3, device="cuda"), cu.concatenate([x, x]), cu.mean(x, axis=0),
          cu.var(x), cu.where(x > 0, x, 0.0), cu.clip(x, -1, 1), x.T.reshape(-1),
          cu.ones((64, 40), device="cuda").T.copy(), cu.ones((64, 40), device="cuda").T.astype(cu.float16)]:
    assert r.device == "cuda:0"
x[cu.asarray([1, 2], device="cuda")] = 0.0
x[::2, 1::3] = 1.5                                           # a cast from a broadcast device scalar
f = cu.full((3, 3), 1.5, dtype=cu.float64, device="cuda")    # the fill kernel (not a byte pattern)
f[:, 1] = cu.full((3,), -2.0, dtype=cu.complex64, device="cuda").real
try:
    x + cu.ones(6, device="cpu")
    raise AssertionError("no error")
except ValueError as e:
    assert "to_device" in str(e)
""")
