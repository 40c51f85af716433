"""cupric.cuda.nccl: NCCL loaded at first use (its version, unique ids, NVLink multicast off), our
declarations against the wheel's nccl.h, the checks made before NCCL is called; on one GPU (marked
gpu) a one-rank communicator and every collective's result."""

import ctypes
import os
import pathlib
import shutil
import subprocess

import cupric as cu
import numpy as np
import pytest
from cupric.cuda import nccl

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _nccl_or_skip():
    """NCCL's version; where it is not installed (CI), the error must name the wheel, then skip."""
    try:
        return nccl.version()
    except cu.cuda.LibraryNotFoundError as e:
        assert "nvidia-nccl-cu13" in str(e)  # the error names the wheel to install
        pytest.skip("NCCL is not installed (pip install nvidia-nccl-cu13)")


def test_version_and_unique_ids():
    major, minor, patch = _nccl_or_skip()
    assert major == 2 and minor >= 18 and patch >= 0
    a, b = nccl.get_unique_id(), nccl.get_unique_id()
    assert isinstance(a, bytes) and len(a) == len(b) == 128 and a != b
    # NVLink multicast stays off unless the environment asked for it (the C environment NCCL reads)
    getenv = ctypes.CDLL(None).getenv
    getenv.restype = ctypes.c_char_p
    assert getenv(b"NCCL_NVLS_ENABLE") == os.environ.get("NCCL_NVLS_ENABLE", "0").encode()


@pytest.mark.skipif(shutil.which("c++") is None, reason="no C++ compiler")
def test_declarations_match_the_wheels_nccl_h():
    import importlib.util

    _nccl_or_skip()
    cuda_include = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
    spec = importlib.util.find_spec("nvidia.nccl") if importlib.util.find_spec("nvidia") else None
    # the wheel's header, else a toolkit's (NCCL may be loaded from either)
    include = pathlib.Path(list(spec.submodule_search_locations)[0]) / "include" if spec else cuda_include
    if not (include / "nccl.h").exists() or not (cuda_include / "cuda_runtime.h").exists():
        pytest.skip("no nccl.h or CUDA runtime headers to compare with")
    check = """
#include <nccl.h>
#include <type_traits>
#include "cupric/cuda/nccl_api.hpp"
namespace c = cupric::cuda;
static_assert(sizeof(::ncclUniqueId) == sizeof(c::ncclUniqueId));
static_assert(c::ncclInt8 == ::ncclInt8 && c::ncclUint8 == ::ncclUint8 && c::ncclInt32 == ::ncclInt32 &&
              c::ncclUint32 == ::ncclUint32 && c::ncclInt64 == ::ncclInt64 && c::ncclUint64 == ::ncclUint64 &&
              c::ncclFloat16 == ::ncclFloat16 && c::ncclFloat32 == ::ncclFloat32 &&
              c::ncclFloat64 == ::ncclFloat64 && c::ncclBfloat16 == ::ncclBfloat16);
static_assert(c::ncclSum == ::ncclSum && c::ncclProd == ::ncclProd && c::ncclMax == ::ncclMax &&
              c::ncclMin == ::ncclMin && c::ncclAvg == ::ncclAvg);
static_assert(c::ncclSuccess == ::ncclSuccess);
static_assert(std::is_same_v<decltype(&::ncclGetVersion), ncclResult_t (*)(int*)>);
static_assert(std::is_same_v<decltype(&::ncclCommInitRank), ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int)>);
int main() {}
"""
    src = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"cupric_nccl_check_{os.getpid()}.cpp"
    src.write_text(check)
    try:
        cmd = [
            "c++",
            "-std=c++20",
            "-fsyntax-only",
            f"-I{ROOT / 'include'}",
            f"-I{include}",
            f"-I{cuda_include}",
            str(src),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        src.unlink()
    assert out.returncode == 0, out.stderr


def test_bad_arguments_are_refused_before_nccl():
    with pytest.raises(ValueError, match="unknown reduction 'mean'"):
        nccl._op("mean")
    with pytest.raises(ValueError, match="a communicator's device is a CUDA device, got 'cpu'"):
        nccl._device_index("cpu")
    assert nccl._device_index("cuda:3") == 3 and nccl._device_index(2) == 2
    _nccl_or_skip()
    uid = nccl.get_unique_id()
    with pytest.raises(ValueError, match="a unique id is 128 bytes, got 5"):
        nccl.Communicator(1, b"short", 0, 0)
    with pytest.raises(ValueError, match="rank 5 of 2 ranks"):
        nccl.Communicator(2, uid, 5, 0)


# ---- one GPU: a one-rank communicator --------------------------------------------------------------


@pytest.fixture
def comm():
    if not cu.cuda.is_available():
        pytest.skip("no CUDA GPU")
    _nccl_or_skip()
    c = nccl.Communicator(1, nccl.get_unique_id(), 0, 0)
    yield c
    c.close()


@pytest.mark.gpu
def test_one_rank_collectives(comm):
    """With one rank every collective is the identity (reduce: op over one rank), so each result is
    the input — on random values of every dtype NCCL takes, cupric arrays on the device."""
    assert comm.size == 1 and comm.rank == 0 and comm.device == 0 and not comm.closed
    rng = np.random.default_rng(0)
    for dtype in ("float32", "float64", "int32", "int64", "uint8", "float16", "bfloat16"):
        x = cu.asarray(rng.standard_normal(1000) * 100, device="cuda:0").astype(dtype)
        want = np.asarray(x.astype("float64").to_device("cpu"))
        for call in (
            lambda r, x=x: comm.all_reduce(x, r),
            lambda r, x=x: comm.reduce(x, r, root=0, op="max"),
            lambda r, x=x: comm.broadcast(x, r, root=0),
            lambda r, x=x: comm.all_gather(x, r),
            lambda r, x=x: comm.reduce_scatter(x, r, op="min"),
        ):
            r = cu.zeros(1000, dtype=dtype, device="cuda:0")
            call(r)
            np.testing.assert_array_equal(np.asarray(r.astype("float64").to_device("cpu")), want)
    y = cu.arange(12, dtype="float32", device="cuda:0").reshape(3, 4)
    np.testing.assert_array_equal(
        np.asarray(comm.all_reduce(y, op="sum").to_device("cpu")), np.arange(12.0).reshape(3, 4)
    )
    out = cu.zeros(12, dtype="float32", device="cuda:0")
    with nccl.group():  # a rank may send to itself inside a group
        comm.send(y, 0)
        comm.recv(out, 0)
    np.testing.assert_array_equal(np.asarray(out.to_device("cpu")), np.arange(12.0))


@pytest.mark.gpu
def test_one_rank_errors_name_the_problem(comm):
    x = cu.zeros(8, dtype="float32", device="cuda:0")
    with pytest.raises(TypeError, match="send is float32, recv int32"):
        comm.all_reduce(x, cu.zeros(8, dtype="int32", device="cuda:0"))
    with pytest.raises(ValueError, match="send has 8 elements, recv 9"):
        comm.all_reduce(x, cu.zeros(9, dtype="float32", device="cuda:0"))
    with pytest.raises(ValueError, match="must be C-contiguous"):
        comm.all_reduce(cu.zeros(16, dtype="float32", device="cuda:0")[::2], x)
    with pytest.raises(TypeError, match="must be a device array"):
        comm.all_reduce(np.zeros(8, np.float32), x)
    with pytest.raises(TypeError, match="no element type for complex64"):
        comm.all_reduce(cu.zeros(8, dtype="complex64", device="cuda:0"))
    with pytest.raises(ValueError, match="root 1 of 1 ranks"):
        comm.broadcast(x, root=1)
    comm.close()
    with pytest.raises(ValueError, match="the communicator was destroyed"):
        comm.all_reduce(x)
