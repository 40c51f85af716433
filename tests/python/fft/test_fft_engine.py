"""The transform engine: the CPU splits each 1-D pass over cupric's threads (checked to happen and
to give NumPy's result for every split), the 1-D passes of real n-D transforms, and the GPU path
against the CPU (tests marked gpu)."""

import numpy as np
import pytest
from fft_helpers import check, random

import cupric as cu
from cupric.fft import _engine


@pytest.fixture
def threads():
    before = cu.get_num_threads()
    yield cu.set_num_threads
    cu.set_num_threads(before)


@pytest.fixture
def parts(monkeypatch):
    """Counts the pieces each threaded pass is split into."""
    seen = []
    real = _engine._executor

    def counting(n):
        seen.append(n)
        return real(n)

    monkeypatch.setattr(_engine, "_executor", counting)
    return seen


@pytest.mark.parametrize("count", [1, 2, 3, 5])
@pytest.mark.parametrize("name, shape, kwargs", [
    ("fft", (67, 1024), {}),
    ("fft", (1024, 67), {"axis": 0}),
    ("rfft", (3, 70, 2000), {"axis": 1}),
    ("irfft", (130, 513), {}),
    ("fft2", (300, 256), {}),
    ("rfftn", (8, 130, 256), {}),
])
def test_threaded_passes_match_numpy(threads, parts, count, name, shape, kwargs):
    threads(count)
    a = random(shape, np.float64 if name.startswith("r") else np.complex128)
    check(getattr(cu.fft, name)(cu.asarray(a), **kwargs), getattr(np.fft, name)(a, **kwargs), a.dtype, 1024)
    assert all(2 <= p <= count for p in parts)
    if count > 1:
        assert parts, "a large batch should be split over threads"


def test_small_transforms_stay_on_one_thread(threads, parts):
    threads(4)
    cu.fft.fft(cu.ones((8, 16), dtype=cu.complex64))
    assert parts == []


def test_real_nd_passes_follow_numpys_order():
    steps = _engine._steps("c2r", [0, 2, 1], [4, 5, 6], False)
    assert steps == [("ifft", 0, 4), ("ifft", 2, 5), ("irfft", 1, 6)]
    steps = _engine._steps("r2c", [0, 2, 1], [4, 5, 6], True)
    assert steps == [("rfft", 1, 6), ("fft", 2, 5), ("fft", 0, 4)]


def test_cpu_refuses_gpu_callbacks():
    with pytest.raises(ValueError, match="GPUs only"):
        _engine.execute(cu.ones(4, dtype=cu.complex64), "c2c", [0], [4], True, "backward", [(b"", "f", 0, 0)])


# ---- GPU against the CPU ---------------------------------------------------------------------

GPU_CASES = [
    ("fft", (3, 17), {}), ("fft", (8, 4096), {"n": 5000}), ("ifft", (16, 9), {"axis": 0, "norm": "ortho"}),
    ("rfft", (4, 30), {}), ("rfft", (7, 31), {"axis": 0, "n": 40}), ("irfft", (5, 9), {"norm": "forward"}),
    ("irfft", (6, 8), {"n": 15}), ("hfft", (3, 10), {}), ("ihfft", (3, 11), {}),
    ("fftn", (4, 6, 8, 10), {}), ("ifftn", (4, 6, 8, 10), {"axes": (3, 0)}),
    ("rfftn", (4, 6, 8, 10), {}), ("irfftn", (4, 6, 8, 10), {"s": (5, 7, 9, 12), "axes": (0, 1, 2, 3)}),
    ("fft2", (2, 64, 97), {}), ("rfft2", (2, 64, 97), {"axes": (0, 2)}), ("irfft2", (3, 32, 17), {}),
    ("fftn", (6, 5), {"axes": (1, 1)}), ("fft", (0, 8), {}), ("rfftn", (3, 0, 8), {"axes": (0, 2)}),
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["single", "double"])
@pytest.mark.parametrize("name, shape, kwargs", GPU_CASES)
def test_gpu_matches_cpu(name, shape, kwargs, dtype):
    real = name in ("rfft", "ihfft", "rfftn", "rfft2")
    np_dtype = {("single", True): np.float32, ("single", False): np.complex64,
                ("double", True): np.float64, ("double", False): np.complex128}[dtype, real]
    a = random(shape, np_dtype)
    expected = getattr(cu.fft, name)(cu.asarray(a), **kwargs)
    got = getattr(cu.fft, name)(cu.asarray(a, device="cuda:0"), **kwargs)
    assert got.device == "cuda:0"
    check(got.to_device("cpu"), expected.get(), np_dtype, max(a.size, 2))


@pytest.mark.gpu
@pytest.mark.parametrize("view", [lambda x: x.T, lambda x: x[::-1, ::2], lambda x: x[1:, 3:],
                                  lambda x: x[:, None, :].swapaxes(0, 2)])
@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "rfftn", "irfftn"])
def test_gpu_views(view, name):
    a = random((24, 40), np.float32 if name.startswith("rfft") else np.complex64)
    x = view(cu.asarray(a, device="cuda:0"))
    expected = getattr(np.fft, name)(view(a))
    check(getattr(cu.fft, name)(x), expected.astype(expected.dtype), np.float32, 960)
    np.testing.assert_array_equal(cu.asarray(a, device="cuda:0").get(), a)


@pytest.mark.gpu
def test_gpu_half_precision_computes_in_float32():
    a = random((4, 64), np.float16)
    check(cu.fft.fft(cu.asarray(a, device="cuda:0")).to_device("cpu"), np.fft.fft(a), np.float16, 64)
    check(cu.fft.irfft(cu.asarray(a, device="cuda:0")).to_device("cpu"), np.fft.irfft(a), np.float16, 64)


@pytest.mark.gpu
def test_gpu_out_and_streams():
    a = random((16, 256), np.complex64)
    s = cu.cuda.Stream()
    with s:
        x = cu.asarray(a, device="cuda:0")
        out = cu.empty((16, 256), dtype=cu.complex64, device="cuda:0")
        assert cu.fft.fft(x, out=out) is out
    s.synchronize()
    check(out.to_device("cpu"), np.fft.fft(a), np.complex64, 256)
