"""cupric.cuda loading: nothing at import, versions, clear errors where the driver is missing."""

import os
import subprocess
import sys

import cupric as cu
import pytest


def run_python(code, **env):
    full_env = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_loads_no_cuda_library():
    maps = run_python("import cupric, cupric.cuda; print(open('/proc/self/maps').read())")
    for lib in ("libcuda.so", "libnvrtc", "libnvJitLink"):
        assert lib not in maps


def test_import_is_fast():
    code = "import time; t = time.perf_counter(); import cupric; print(time.perf_counter() - t)"
    best = min(float(run_python(code)) for _ in range(3))
    assert best < 1.0  # the target is 0.3 s on the GPU machine; this machine is slower and busy


def test_versions_report_each_library():
    v = cu.cuda.versions()
    assert set(v) == {"driver", "nvrtc", "nvjitlink"}
    for info in v.values():
        assert set(info) == {"found", "version", "path", "error"}
        if info["found"]:
            assert os.path.exists(info["path"])
            major, minor = info["version"]
            assert major >= 12 and minor >= 0
            assert info["error"] is None
        else:
            assert info["version"] is None and info["error"]
    if v["nvrtc"]["found"]:
        assert "nvrtc" in os.path.basename(v["nvrtc"]["path"])


def test_is_available_is_a_bool_and_never_raises():
    assert cu.cuda.is_available() in (True, False)
    if cu.cuda.is_available():
        assert cu.cuda.versions()["driver"]["found"] and cu.cuda.device_count() > 0


def test_search_order_prefers_wheels_then_cuda_home():
    out = run_python(
        "import cupric as cu; print('\\n'.join(cu.cuda._library_candidates('libnvrtc.so.13', ['cu13/lib'])))",
        CUDA_HOME="/opt/my-cuda",
        CUDA_PATH="",
    )
    candidates = out.splitlines()
    wheel = [i for i, c in enumerate(candidates) if c.endswith("/nvidia/cu13/lib/libnvrtc.so.13")]
    home = candidates.index("/opt/my-cuda/lib64/libnvrtc.so.13")
    system = candidates.index("/usr/local/cuda/lib64/libnvrtc.so.13")
    assert wheel and max(wheel) < home < system
    assert candidates[-1] == "libnvrtc.so.13"  # finally the dynamic linker's own search
    assert any("site-packages" in c for c in candidates[: len(wheel)])


@pytest.mark.skipif(cu.cuda.is_available(), reason="a driver is present")
@pytest.mark.parametrize(
    "call",
    [
        lambda: cu.cuda.Device(0),
        lambda: cu.cuda.Device(),
        lambda: cu.cuda.Stream(),
        lambda: cu.cuda.Event(),
        lambda: cu.cuda.alloc(16),
        lambda: cu.cuda.memory_pool(),
        lambda: cu.cuda.memory_info(),
        lambda: cu.cuda.ObjectCode(b"", "cubin").get_kernel("k"),
    ],
)
def test_missing_driver_errors_are_clear(call):
    with pytest.raises(cu.cuda.LibraryNotFoundError) as info:
        call()
    e = info.value
    assert isinstance(e, cu.cuda.CUDAError) and isinstance(e, RuntimeError)
    assert "libcuda.so.1 not found" in str(e) and "NVIDIA driver" in str(e)
    assert e.library == "libcuda.so.1" and e.name == "LIBRARY_NOT_FOUND" and e.sticky is False


@pytest.mark.skipif(cu.cuda.is_available(), reason="a driver is present")
@pytest.mark.nvrtc
def test_program_without_device_needs_an_arch():
    with pytest.raises(ValueError, match="arch="):
        cu.cuda.Program('extern "C" __global__ void k() {}').compile("ptx")


def test_exception_hierarchy():
    assert issubclass(cu.cuda.OutOfMemoryError, cu.cuda.CUDAError)
    assert issubclass(cu.cuda.OutOfMemoryError, MemoryError)
    assert issubclass(cu.cuda.CompileError, cu.cuda.CUDAError)
    assert issubclass(cu.cuda.LibraryNotFoundError, cu.cuda.CUDAError)
    assert issubclass(cu.cuda.CUDAError, RuntimeError)


@pytest.mark.skipif(cu.cuda.is_available(), reason="a driver is present")
def test_no_driver_means_no_devices():
    assert cu.cuda.device_count() == 0
    assert cu.__array_namespace_info__().devices() == ["cpu"]
    assert cu.default_device() == "cpu"

