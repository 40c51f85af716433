"""Hand-offs between cupric and PyTorch, CuPy, JAX and numba-cuda on a GPU, both ways, through
DLPack and __cuda_array_interface__: the producer's kernel spins a few milliseconds before it
writes, on a stream other than the default one, and the consumer reads on a non-default stream
of its own, so a hand-off that does not order the consumer after the producer reads stale
values. Also: cupric work on another library's stream, streams dropped with work pending, and a
fault that names its kernel. The plumbing is checked without a GPU in test_stream_handoffs_fake.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from cuda_helpers import cycles_for, load_kernels

pytestmark = pytest.mark.gpu
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would take most of the memory

N = 1 << 20
SPIN_SECONDS = 0.005
SPIN_FILL = r"""
extern "C" __global__ void spin_fill(long long cycles, float* y, float value, int n) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = value;
}
"""
GRID = cu.cuda.LaunchConfig((N + 255) // 256, 256)


@pytest.fixture(autouse=True)
def on_the_gpu():
    """The suite's default device is the CPU (conftest.py); these hand-offs are about GPU arrays."""
    with cu.device("cuda:0"):
        yield


def import_or_skip(module):
    """Like pytest.importorskip, but a library that fails at import for any reason (numba beside a
    NumPy newer than it knows: np.row_stack is gone in NumPy 2.5) is skipped too, with its error."""
    try:
        return __import__(module, fromlist=["_"])
    except Exception as err:  # noqa: BLE001 - any import failure means the peer is unusable here
        pytest.skip(f"{module} does not import here: {type(err).__name__}: {err}")


@pytest.fixture(scope="module")
def spin_fill():
    return load_kernels(SPIN_FILL)["spin_fill"]


def cupric_producer(spin_fill, value):
    """A cupric array that a spinning kernel fills with `value` on a new non-default stream."""
    s = cu.cuda.Stream()
    with s:
        y = cu.zeros(N, dtype=cu.float32)
    cu.cuda.launch(s, GRID, spin_fill, cycles_for(SPIN_SECONDS), y, value, N)
    return y, s


def need(module):
    lib = import_or_skip(module)
    if module == "torch" and not lib.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return lib


# ---- cupric -> peers ---------------------------------------------------------------------------


def test_to_torch_through_dlpack(spin_fill):
    torch = need("torch")
    for value in (3.0, 5.0):
        y, s = cupric_producer(spin_fill, value)
        ts = torch.cuda.Stream()
        with torch.cuda.stream(ts):
            t = torch.from_dlpack(y)  # passes ts: cupric makes ts wait for s
            lo, hi = t.min(), t.max()
        ts.synchronize()
        assert lo.item() == hi.item() == value


def test_to_torch_after_the_stream_is_dropped(spin_fill):
    torch = need("torch")
    y, s = cupric_producer(spin_fill, 4.0)
    del s  # work pending: the stream lives on until it is done, and y still waits for it
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        t = torch.from_dlpack(y)
        lo, hi = t.min(), t.max()
    ts.synchronize()
    assert lo.item() == hi.item() == 4.0


def test_to_cupy_through_dlpack_and_the_array_interface(spin_fill):
    cupy = need("cupy")
    for via in ("dlpack", "cai"):
        y, s = cupric_producer(spin_fill, 6.0)
        cs = cupy.cuda.Stream(non_blocking=True)
        with cs:
            a = cupy.from_dlpack(y) if via == "dlpack" else cupy.asarray(y)  # CAI v3: CuPy honours "stream"
            lo, hi = float(a.min()), float(a.max())
        assert lo == hi == 6.0, via


def test_to_jax_through_dlpack(spin_fill):
    need("jax")
    import jax.numpy as jnp

    y, s = cupric_producer(spin_fill, 7.0)
    j = jnp.from_dlpack(y)
    assert float(j.min()) == float(j.max()) == 7.0


def test_to_numba_through_the_array_interface(spin_fill):
    numba_cuda = import_or_skip("numba.cuda")
    y, s = cupric_producer(spin_fill, 8.0)
    ns = numba_cuda.stream()
    d = numba_cuda.as_cuda_array(y)  # numba synchronises on the exported stream
    host = d.copy_to_host(stream=ns)
    ns.synchronize()
    assert host.min() == host.max() == 8.0


# ---- peers -> cupric ---------------------------------------------------------------------------


def test_from_torch_through_dlpack():
    torch = need("torch")
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        t = torch.zeros(N, device="cuda")
        torch.cuda._sleep(cycles_for(SPIN_SECONDS))
        t.fill_(3.0)
        s = cu.cuda.Stream()
        with s:
            y = cu.from_dlpack(t)  # passes s: PyTorch makes s wait for ts
            lo, hi = float(cu.min(y)), float(cu.max(y))
    assert lo == hi == 3.0


def test_cupric_work_on_torchs_stream():
    torch = need("torch")
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        t = torch.zeros(N, device="cuda")
        torch.cuda._sleep(cycles_for(SPIN_SECONDS))
        t.fill_(2.0)
        with cu.cuda.Stream.from_external(torch.cuda.current_stream()) as s:
            assert s.handle == ts.cuda_stream
            y = cu.from_dlpack(t) * 3  # ordered by the stream itself
            back = torch.from_dlpack(y)
            lo, hi = back.min(), back.max()
    ts.synchronize()
    assert lo.item() == hi.item() == 6.0


def test_from_cupy_through_dlpack_and_the_array_interface():
    cupy = need("cupy")
    spin = cupy.RawKernel(SPIN_FILL, "spin_fill")
    for via in ("dlpack", "cai"):
        cs = cupy.cuda.Stream(non_blocking=True)
        with cs:
            a = cupy.zeros(N, dtype=cupy.float32)
            spin(((N + 255) // 256,), (256,), (np.int64(cycles_for(SPIN_SECONDS)), a, np.float32(5.0), np.int32(N)))

            class OnlyCAI:  # the array interface alone (CuPy exports its current stream)
                __cuda_array_interface__ = a.__cuda_array_interface__

            with cu.cuda.Stream():
                y = cu.from_dlpack(a) if via == "dlpack" else cu.asarray(OnlyCAI())
                lo, hi = float(cu.min(y)), float(cu.max(y))
        assert lo == hi == 5.0, via


def test_from_jax_through_dlpack():
    jax = need("jax")
    from jax import lax

    steps = 3000  # a few milliseconds of small kernels before the values are final
    run = jax.jit(lambda v: lax.fori_loop(0, steps, lambda i, a: a + 1.0, v))
    j = run(jax.numpy.zeros(N, dtype=jax.numpy.float32))
    with cu.cuda.Stream():
        y = cu.from_dlpack(j)
        lo, hi = float(cu.min(y)), float(cu.max(y))
    assert lo == hi == float(steps)


def test_from_numba_through_the_array_interface(spin_fill):
    numba_cuda = import_or_skip("numba.cuda")
    # numba's array, written on numba's stream (a spinning kernel launched there, since numba's own
    # JIT does not import beside NumPy 2.5 on the GPU machine); the array interface names that stream
    ns = numba_cuda.stream()
    d = numba_cuda.device_array(N, dtype=np.float32, stream=ns)
    handle = int(ns.handle.value if hasattr(ns.handle, "value") else ns.handle)
    cu.cuda.launch(cu.cuda.Stream.from_external(handle), GRID, spin_fill, cycles_for(SPIN_SECONDS), d, 9.0, N)
    assert d.__cuda_array_interface__.get("stream")  # numba exports the stream it wrote on
    with cu.cuda.Stream():
        y = cu.asarray(d)
        lo, hi = float(cu.min(y)), float(cu.max(y))
    assert lo == hi == 9.0


# ---- stream lifetime and faults ----------------------------------------------------------------


def test_streams_dropped_with_work_pending():
    """1,000 streams, each dropped while a spinning kernel and stream-ordered frees are pending:
    no illegal address, and every result is right (tools/check_dropped_streams.py, which
    tools/gpu_check.sh also runs under compute-sanitizer)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
    try:
        import check_dropped_streams
    finally:
        sys.path.pop(0)
    assert check_dropped_streams.run(1000) == 1000


FAULT = r"""
import json
import cupric as cu
src = 'extern "C" __global__ void oob_write(float* p, long long i) { p[i + threadIdx.x] = 1; }'
k = cu.cuda.Program(src).compile("cubin").get_kernel("oob_write")
x = cu.ones(1000, dtype=cu.float32)
y = x + 1                                   # add_vec compiled and loaded before the fault
s = cu.cuda.Stream()
# far out of bounds: p[i] lands in the never-mapped first page of the address space
cu.cuda.launch(s, cu.cuda.LaunchConfig(1, 32), k, x, 4 - x.__cuda_array_interface__["data"][0] // 4)
try:
    z = x + 2                               # a kernel launched after the faulting one, elsewhere
    print(float(z.sum()), float(cu.sum(y)))   # the fault surfaces here, in another call
    s.synchronize()
    print(json.dumps({"raised": False}))
except cu.cuda.CUDAError as e:
    print(json.dumps({"raised": True, "sticky": e.sticky, "message": str(e), "stream": hex(s.handle)}))
"""


def test_a_fault_names_its_kernel_and_stream():
    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="0", CUPRIC_LAUNCH_SITES="1", CUPRIC_DEVICE="cuda:0")
    out = subprocess.run([sys.executable, "-c", FAULT], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["raised"] and result["sticky"], result
    message = result["message"]
    assert f"'oob_write' on stream {result['stream']}" in message, message
    assert "<string>:10" in message, message  # the line that launched it
    assert "restart" in message and "CUDA_LAUNCH_BLOCKING=1" in message
