"""The transform engine: the CPU splits each 1-D pass over cupric's threads (checked to happen and
to give NumPy's result for every split), the 1-D passes of real n-D transforms, and the GPU path
against the CPU (tests marked gpu)."""

import cupric as cu
import numpy as np
import pytest
from cupric.fft import _engine
from fft_helpers import check, random


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
    ("ifft2", (3, 20, 9), {"norm": "forward"}),
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
def test_gpu_frequencies_and_shifts():
    for n, d in [(1, 1.0), (8, 0.5), (9, 2.0)]:
        for name in ("fftfreq", "rfftfreq"):
            got = getattr(cu.fft, name)(n, d, device="cuda:0")
            assert got.device == "cuda:0"
            np.testing.assert_allclose(got.get(), getattr(np.fft, name)(n, d), rtol=1e-15)
    a = random((5, 8, 7), np.complex64)
    for axes in (None, 1, (0, 2)):
        x = cu.asarray(a, device="cuda:0")
        np.testing.assert_array_equal(cu.fft.fftshift(x, axes=axes).get(), np.fft.fftshift(a, axes=axes))
        np.testing.assert_array_equal(cu.fft.ifftshift(x, axes=axes).get(), np.fft.ifftshift(a, axes=axes))


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


def test_cuda_layer_checks_its_operands_before_loading_cufft():
    x = cu.ones((2, 8), dtype=cu.complex64)
    with pytest.raises(ValueError, match="one GPU"):
        cu._cupric._fft_cuda(x, [2, 8], "c2c", 1, True)
    with pytest.raises(ValueError, match="unknown FFT kind 'x2y'"):
        cu._cupric._fft_cuda(x, [2, 8], "x2y", 1, True)
    with pytest.raises(ValueError, match="an FFT callback is"):
        cu._cupric._fft_cuda(x, [2, 8], "c2c", 1, True, [(b"", "f")])


# ---- the GPU engine's Python half, on the CPU, with NumPy standing in for cuFFT ------------------


@pytest.fixture
def numpy_cufft(monkeypatch):
    """_fft_cuda's contract (unnormalised, the last `rank` <= 3 axes, a new C-contiguous result of
    out_shape) served by NumPy, so that the engine's grouping, moves, crops, pads and scaling run
    without a GPU."""
    calls = []

    def fake(z, out_shape, kind, rank, forward, callbacks=None, input_is_scratch=False):
        assert 1 <= rank <= 3 and len(out_shape) == z.ndim
        calls.append((kind, rank))
        a = z.get()
        axes = tuple(range(z.ndim - rank, z.ndim))
        if kind == "c2c":
            r = np.fft.fftn(a, axes=axes) if forward else np.fft.ifftn(a, axes=axes, norm="forward")
        elif kind == "r2c":
            r = np.fft.rfftn(a, axes=axes)
        else:
            r = np.fft.irfftn(a, s=out_shape[-rank:], axes=axes, norm="forward")
        assert r.shape == tuple(out_shape)
        return cu.asarray(np.ascontiguousarray(r))

    monkeypatch.setattr(cu._cupric, "_fft_cuda", fake)
    return calls


@pytest.mark.parametrize("name, shape, kwargs", GPU_CASES)
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_gpu_engine_logic_with_numpy_as_cufft(numpy_cufft, name, shape, kwargs, norm):
    from cupric.fft import _transforms

    real = name in ("rfft", "ihfft", "rfftn", "rfft2")
    a = random(shape, np.float64 if real else np.complex128)
    kwargs = dict(kwargs, norm=norm)
    original = _engine._cpu
    try:
        _engine._cpu = lambda x, *rest: _engine._gpu(x, *rest, None)  # the GPU path on CPU arrays
        got = getattr(_transforms, name)(cu.asarray(a), **kwargs)
    finally:
        _engine._cpu = original
    check(got, getattr(np.fft, name)(a, **kwargs), a.dtype, max(a.size, 2))
    if a.size and got.size:
        assert numpy_cufft, "the transform should go through _fft_cuda"


def test_gpu_engine_groups_four_axes_into_two_plans(numpy_cufft):
    a = random((3, 4, 5, 6), np.float64)
    _engine._gpu(cu.asarray(a), "r2c", [0, 1, 2, 3], [3, 4, 5, 6], True, "backward", None)
    assert numpy_cufft == [("r2c", 3), ("c2c", 1)]
    numpy_cufft.clear()
    x = cu.asarray(random((3, 4, 5, 4), np.complex128))
    _engine._gpu(x, "c2r", [0, 1, 2, 3], [3, 4, 5, 6], False, "backward", None)
    assert numpy_cufft == [("c2c", 1), ("c2r", 3)]
