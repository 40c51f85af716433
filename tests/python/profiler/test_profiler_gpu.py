"""cupric.profiler and cupric.debug on a GPU: kernels and transfers with device times (CUPTI's
records by default, CUDA events bracketing each launch otherwise), attributed to their ops; those
times agree with the user's own events; compiles recorded; sync and check_finite on device ops
(the CPU backend is the oracle)."""

import json

import cupric as cu
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(23)


def _big(n=1 << 25):
    return cu.asarray(RNG.random(n).astype(np.float32), device="cuda:0")


def test_gpu_ops_record_device_stream_kernels_and_transfers(tmp_path):
    host = RNG.random((1000, 1000))
    with cu.profiler.profile() as prof:
        x = cu.asarray(host, device="cuda:0")
        y = cu.exp(x) + 1.0
        back = np.asarray(y.to_device("cpu"))
    np.testing.assert_allclose(back, np.exp(host) + 1.0, rtol=1e-12)
    ops = [e for e in prof.events if e.kind == "op" and e.name in ("exp", "add")]
    assert {e.device for e in ops} == {0} and all(e.stream > 0 for e in ops)
    kernels = [e for e in prof.events if e.kind == "kernel"]
    assert kernels and all(e.gpu_t1_ns > e.gpu_t0_ns >= 0 for e in kernels)
    transfers = {e.name: e for e in prof.events if e.kind == "transfer"}  # detail: direction, and the timer
    assert transfers["copy HtoD"].bytes == host.nbytes and transfers["copy DtoH"].bytes == host.nbytes
    assert transfers["copy HtoD"].detail.startswith("HtoD") and transfers["copy HtoD"].gpu_ns > 0
    rows = {r["name"]: r for r in prof.table()}
    assert rows["exp"]["timing"] == "device" and rows["exp"]["device"] == "cuda:0"
    assert 0 < rows["exp"]["roof_fraction"] < 1.5
    doc = json.loads(prof.export_chrome_trace(tmp_path / "t.json").read_text())
    assert any(e.get("cat") == "kernel" and e["pid"] == 1 for e in doc["traceEvents"])


def test_kernel_times_agree_with_cuda_events_within_ten_percent():
    x = _big()
    y = cu.empty_like(x)
    for _ in range(3):
        cu.multiply(x, 2.0, out=y)  # compiled and warm
    cu.cuda.Device(0).synchronize()
    with cu.profiler.profile() as prof:
        for _ in range(10):
            cu.multiply(x, 2.0, out=y)
    profiled = sorted(e.gpu_ns for e in prof.events if e.kind == "kernel")
    assert len(profiled) == 10
    # the user's events around 10 launches in a row: the GPU is busy throughout, so the span is the
    # kernels' (one pair around a single launch on an idle GPU also holds the launch's latency)
    measured = []
    for _ in range(5):
        start, end = cu.cuda.Event(), cu.cuda.Event()
        start.record()
        for _ in range(10):
            cu.multiply(x, 2.0, out=y)
        end.record()
        end.synchronize()
        measured.append(start.elapsed_time(end) * 1e6 / 10)
    assert np.median(profiled) == pytest.approx(np.median(measured), rel=0.10)


def test_cupti_kernel_times_agree_with_cuda_events_within_ten_percent():
    """The kernels are still running when the profile stops: CUPTI's records of them must carry
    timestamps (the profile waits for the device before CUPTI's forced flush)."""
    x = _big()
    y = cu.empty_like(x)
    for _ in range(3):
        cu.multiply(x, 2.0, out=y)
    cu.cuda.Device(0).synchronize()
    timed = {}
    for mode in ("cupti", "events"):
        with cu.profiler.profile(device_times=mode) as prof:
            for _ in range(10):
                cu.multiply(x, 2.0, out=y)
        if prof.device_times != mode:
            pytest.skip("; ".join(prof.notes))  # the GPU machine lacks libcupti: install nvidia-cuda-cupti
        assert mode == "events" or not prof.notes, prof.notes  # CUPTI's account of unmatched kernels
        kernels = [e for e in prof.events if e.kind == "kernel"]
        assert len(kernels) == 10 and all(e.gpu_ns > 0 for e in kernels)
        assert all("cupti" in e.detail for e in kernels) == (mode == "cupti")
        timed[mode] = float(np.median([e.gpu_ns for e in kernels]))
        op = next(r for r in prof.table() if r["name"] == "multiply")
        assert op["timing"] == "device"
    assert timed["cupti"] == pytest.approx(timed["events"], rel=0.10)


def test_compiles_are_recorded_with_their_outcome(cache_dir):
    x = cu.asarray(RNG.random(1000).astype(np.float16), device="cuda:0")
    with cu.profiler.profile() as prof:
        cu.arctan2(x, x)  # a kernel this session has not compiled: the cache dir is new
    compiles = [e for e in prof.events if e.kind == "compile"]
    assert any(e.name.startswith("nvrtc") and e.detail == "compiled" for e in compiles)
    assert any(e.name == "cache nvrtc" and e.detail == "miss" for e in compiles)


def test_sync_mode_on_device_ops_matches_the_cpu():
    a = RNG.random((300, 200))
    with cu.debug.sync():
        g = cu.asarray(a, device="cuda:0")
        r = cu.matmul(g, g.T).sum(axis=0)
        c = cu.cumsum(cu.sort(g, axis=1), axis=1)
    np.testing.assert_allclose(np.asarray(r.to_device("cpu")), (a @ a.T).sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(c.to_device("cpu")), np.cumsum(np.sort(a, axis=1), axis=1), rtol=1e-12)


def test_check_finite_finds_the_op_on_the_gpu():
    g = cu.asarray(RNG.random(1000) + 1.0, device="cuda:0")
    with cu.debug.check_finite():
        h = cu.log(g)  # finite
        with pytest.raises(FloatingPointError, match="op 'log'.*\\(1000,\\) float64"):
            cu.log(h - h)
        line = __import__("sys")._getframe().f_lineno - 1
    with cu.debug.check_finite(), pytest.raises(FloatingPointError) as info:
        cu.log(h - h)
    assert "test_profiler_gpu.py:" in str(info.value) and line > 0


def test_benchmark_reports_gpu_times():
    x = _big(1 << 22)
    result = cu.profiler.benchmark(lambda: x * 2.0, n_repeat=20, n_warmup=3, devices=(0,))
    assert len(result.cpu_times) == 20 and len(result.gpu_times[0]) == 20
    assert all(t > 0 for t in result.gpu_times[0])
    assert "GPU-0" in str(result)


def test_library_calls_are_recorded_with_their_library_and_routine():
    a = RNG.random((64, 64))
    spd = a @ a.T + 64 * np.eye(64)
    g = cu.asarray(a, device="cuda:0")
    with cu.profiler.profile() as prof:
        product = g @ g
        chol = cu.linalg.cholesky(cu.asarray(spd, device="cuda:0"))
        spectrum = cu.fft.fft(g)
    np.testing.assert_allclose(np.asarray(product.to_device("cpu")), a @ a, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(chol.to_device("cpu")), np.linalg.cholesky(spd), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(spectrum.to_device("cpu")), np.fft.fft(a), rtol=1e-10, atol=1e-10)
    calls = {e.library: e for e in prof.events if e.kind == "library"}
    assert calls["cuBLAS"].name == "cublasGemmStridedBatchedEx" and "64x64x64" in calls["cuBLAS"].detail
    assert calls["cuSOLVER"].name == "cusolverDn potrf" and "(64, 64) float64" in calls["cuSOLVER"].detail
    assert calls["cuFFT"].name == "cufftExecZ2Z" and calls["cuFFT"].detail.startswith("cuFFT forward")
    assert all(e.gpu_t1_ns > e.gpu_t0_ns >= 0 and e.device == 0 for e in calls.values())
    names = {r["name"] for r in prof.table(group_by="kernel")}
    assert {"cublasGemmStridedBatchedEx", "cusolverDn potrf", "cufftExecZ2Z"} <= names


def test_the_cuda_pools_allocations_and_size_over_time(tmp_path):
    with cu.profiler.profile() as prof:
        x = cu.ones(1 << 20, device="cuda:0")
        y = x * 2.0
        del x
        z = y + 1.0
    assert float(z[0]) == 3.0
    allocs = sorted((e for e in prof.events if e.kind == "alloc" and e.device == 0), key=lambda e: e.t1_ns)
    assert [e.name for e in allocs][:4] == ["alloc", "alloc", "free", "alloc"]
    assert all(e.bytes >= 8 << 20 and e.stream > 0 for e in allocs)
    assert allocs[1].value >= 2 * (8 << 20) and allocs[2].value == allocs[1].value  # a free keeps the block cached
    assert prof.table().memory["cuda:0"]["allocations"] == 3
    doc = json.loads(prof.export_chrome_trace(tmp_path / "t.json").read_text())
    assert [e["args"]["bytes"] for e in doc["traceEvents"] if e["ph"] == "C" and e["pid"] == 1] == [
        e.value for e in allocs]
