"""cupric.cuda.launch on a GPU: every argument kind, parameter checks, templates, dynamic shared
memory, occupancy, cooperative and cluster launches, PTX loading, a faulting kernel (in a
subprocess: the context is lost), and graph capture and replay."""

import json
import os
import subprocess
import sys

import cupric as cu
import numpy as np
import pytest
from cuda_helpers import SAXPY, load_kernels, read_int32

pytestmark = pytest.mark.gpu

EVERY_KIND = r"""
extern "C" __global__ void every_kind(int a, unsigned char b, short c, long long d, float e, double f, bool g,
                                      unsigned short h_bits, double2 z, float* out_f, double* out_d,
                                      long long* out_i, const float* src) {
  out_i[0] = a; out_i[1] = b; out_i[2] = c; out_i[3] = d; out_i[4] = g; out_i[5] = h_bits;
  out_f[0] = e; out_f[1] = src[0];
  out_d[0] = f; out_d[1] = z.x; out_d[2] = z.y;
}
"""


class DeviceView:
    """Another library's device array, seen only through __cuda_array_interface__."""

    def __init__(self, buf):
        self.__cuda_array_interface__ = {"shape": (buf.size // 4,), "typestr": "<f4", "data": (buf.ptr, False),
                                         "version": 3, "strides": None}


def test_launch_with_every_argument_kind():
    k = load_kernels(EVERY_KIND)["every_kind"]
    assert k.param_sizes == [4, 1, 2, 8, 4, 8, 1, 2, 16, 8, 8, 8, 8]
    out_f, out_d, out_i, src = cu.cuda.alloc(8), cu.cuda.alloc(24), cu.cuda.alloc(48), cu.cuda.alloc(4)
    src.copy_from(np.float32([3.25]))
    cu.cuda.launch(None, cu.cuda.LaunchConfig(1, 1), k,
                   -7,                      # Python int -> int32
                   np.uint8(200),           # NumPy scalar
                   np.int16(-300),
                   2**40,                   # Python int -> int64
                   1.5,                     # Python float -> float32
                   np.float64(2.25),
                   True,                    # Python bool
                   np.float16(1.0),         # 2-byte scalar: its bits
                   np.complex128(3 + 4j),   # 16-byte, 16-aligned
                   out_f,                   # cupric Buffer
                   DeviceView(out_d),       # __cuda_array_interface__
                   out_i.ptr,               # a raw address as an int
                   src)
    cu.cuda.current_stream().synchronize()
    assert np.frombuffer(out_i.copy_to(), np.int64).tolist() == [-7, 200, -300, 2**40, 1, 0x3C00]
    assert np.frombuffer(out_f.copy_to(), np.float32).tolist() == [1.5, 3.25]
    assert np.frombuffer(out_d.copy_to(), np.float64).tolist() == [2.25, 3.0, 4.0]


def test_arguments_are_checked_against_the_kernel():
    k = load_kernels(SAXPY)["saxpy"]
    x, y = cu.cuda.alloc(16), cu.cuda.alloc(16)
    cfg = cu.cuda.LaunchConfig(1, 4)
    with pytest.raises(TypeError, match=r"argument 0 of kernel 'saxpy': the parameter is 4 bytes but numpy.float64"):
        cu.cuda.launch(None, cfg, k, np.float64(2.0), x, y, 4)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        cu.cuda.launch(None, cfg, k, 2.0, x, y)
    with pytest.raises(TypeError, match="argument 1 is a host buffer"):
        cu.cuda.launch(None, cfg, k, 2.0, np.zeros(4, np.float32), y, 4)
    with pytest.raises(OverflowError, match="4-byte parameter"):
        cu.cuda.launch(None, cfg, k, 2.0, x, y, 2**40)


def test_saxpy_on_streams():
    rng = np.random.default_rng(3)
    n = 10_000
    xs, ys = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    k = load_kernels(SAXPY)["saxpy"]
    s = cu.cuda.Stream()
    x, y = cu.cuda.alloc(4 * n, s), cu.cuda.alloc(4 * n, s)
    x.copy_from(xs, s)
    y.copy_from(ys, s)
    cfg = cu.cuda.LaunchConfig(grid=(n + 255) // 256, block=256)
    cu.cuda.launch(s, cfg, k, 2.0, x, y, n)
    with s:  # None means the current stream
        cu.cuda.launch(None, cfg, k, np.float32(-1.0), x, y, np.int32(n))
    np.testing.assert_allclose(np.frombuffer(y.copy_to(stream=s), np.float32), xs + ys, rtol=1e-6)


def test_templates_through_name_expressions():
    src = "template <typename T> __global__ void fill(T* x, T v, int n) {\n" \
          "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }\n"
    obj = cu.cuda.Program(src).compile("cubin", name_expressions=["fill<double>", "fill<int>"])
    b = cu.cuda.alloc(8 * 100)
    cu.cuda.launch(None, cu.cuda.LaunchConfig(1, 128), obj.get_kernel("fill<double>"), b, 0.5, 100)
    assert np.all(np.frombuffer(b.copy_to(), np.float64) == 0.5)
    cu.cuda.launch(None, cu.cuda.LaunchConfig(2, 128), obj.get_kernel("fill<int>"), b, -3, 200)
    assert np.all(np.frombuffer(b.copy_to(), np.int32) == -3)
    with pytest.raises(ValueError, match="name_expressions"):
        obj.get_kernel("fill<float>")


def test_dynamic_shared_memory_and_attributes():
    src = r"""
extern "C" __global__ void big_smem(long long* out, int n) {
  extern __shared__ int s[];
  for (int j = threadIdx.x; j < n; j += blockDim.x) s[j] = j;
  __syncthreads();
  if (threadIdx.x == 0) { long long acc = 0; for (int j = 0; j < n; ++j) acc += s[j]; out[0] = acc; }
}
"""
    k = load_kernels(src)["big_smem"]
    assert k.num_registers > 0 and k.max_threads_per_block > 0 and k.static_shared_memory == 0
    assert k.local_memory >= 0 and k.ptx_version > 0 and k.binary_version > 0
    assert set(k.attributes()) >= {"num_registers", "max_dynamic_shared_memory"}
    n = 25_600  # 100 KiB of ints: over the 48 KiB default
    out = cu.cuda.alloc(8)
    cfg = cu.cuda.LaunchConfig(1, 256, shared_memory=4 * n)
    with pytest.raises(cu.cuda.CUDAError, match="set_max_dynamic_shared_memory"):
        cu.cuda.launch(None, cfg, k, out, n)
    k.max_dynamic_shared_memory = 4 * n
    assert k.max_dynamic_shared_memory == 4 * n
    cu.cuda.launch(None, cfg, k, out, n)
    assert np.frombuffer(out.copy_to(), np.int64)[0] == n * (n - 1) // 2
    with pytest.raises(ValueError, match="limit"):
        k.max_dynamic_shared_memory = 10**8
    assert k.occupancy(256) >= 1
    assert k.occupancy(256, 4 * n) <= k.occupancy(256)
    with pytest.raises(ValueError):
        k.occupancy(0)


def test_cooperative_and_cluster_launches():
    src = r"""
extern "C" __global__ void cluster_size(unsigned* out) {
  unsigned n = 1;
#if __CUDA_ARCH__ >= 900
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
#endif
  if (threadIdx.x == 0) out[blockIdx.x] = n;
}
"""
    k = load_kernels(src)["cluster_size"]
    out = cu.cuda.alloc(16)
    cu.cuda.launch(None, cu.cuda.LaunchConfig(4, 32, cooperative=True), k, out)
    assert np.frombuffer(out.copy_to(), np.uint32).tolist() == [1, 1, 1, 1]
    if cu.cuda.Device().compute_capability < (9, 0):
        pytest.skip("thread block clusters need compute capability 9.0")
    cu.cuda.launch(None, cu.cuda.LaunchConfig(4, 32, cluster=2), k, out)
    assert np.frombuffer(out.copy_to(), np.uint32).tolist() == [2, 2, 2, 2]


def test_ptx_and_cubin_files_load(tmp_path):
    prog = cu.cuda.Program(SAXPY)
    (tmp_path / "k.ptx").write_bytes(prog.compile("ptx").code)
    (tmp_path / "k.cubin").write_bytes(prog.compile("cubin").code)
    for name in ("k.ptx", "k.cubin"):
        k = cu.cuda.ObjectCode.from_file(str(tmp_path / name)).get_kernel("saxpy")
        y = cu.cuda.alloc(16)
        y.fill(0)
        x = cu.cuda.alloc(16)
        x.copy_from(np.float32([1, 2, 3, 4]))
        cu.cuda.launch(None, cu.cuda.LaunchConfig(1, 4), k, 3.0, x, y, 4)
        assert np.frombuffer(y.copy_to(), np.float32).tolist() == [3, 6, 9, 12]


@pytest.mark.skipif(not cu.cuda.versions()["nvjitlink"]["found"], reason="no nvJitLink")
def test_linked_lto_kernel_runs():
    lib = cu.cuda.Program('extern "C" __device__ int twice(int v) { return 2 * v; }', "lib.cu")
    main = cu.cuda.Program('extern "C" __device__ int twice(int);\n'
                           'extern "C" __global__ void k(int* x) { x[0] = twice(x[0]); }', "main.cu")
    arch = cu.cuda.Device().arch
    k = cu.cuda.Linker(main.compile("ltoir"), lib.compile("ltoir"), arch=arch).link().get_kernel("k")
    b = cu.cuda.alloc(4)
    b.copy_from(np.int32([21]))
    cu.cuda.launch(None, cu.cuda.LaunchConfig(1, 1), k, b)
    assert read_int32(b)[0] == 42


def test_faulting_kernel_raises_a_clear_sticky_error():
    code = r"""
import json
import cupric as cu
src = 'extern "C" __global__ void write_oob(int* p, long long i) { p[i + threadIdx.x] = 1; }'
k = cu.cuda.Program(src).compile("cubin").get_kernel("write_oob")
b = cu.cuda.alloc(64)
s = cu.cuda.Stream()
try:
    # Far out of bounds: p[i] lands in the never-mapped first page of the address space.
    cu.cuda.launch(s, cu.cuda.LaunchConfig(1, 32), k, b, 4 - b.ptr // 4)
    s.synchronize()
    print(json.dumps({"raised": False}))
except cu.cuda.CUDAError as e:
    print(json.dumps({"raised": True, "name": e.name, "code": e.code, "sticky": e.sticky, "message": str(e),
                      "operation": e.operation}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, CUDA_LAUNCH_BLOCKING="0"))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["raised"], result
    assert result["name"] in ("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED")
    assert result["sticky"] is True
    assert "write_oob" in result["message"] and "restart" in result["message"]


def test_graph_capture_and_replay():
    k = load_kernels()
    s = cu.cuda.Stream()
    counter = cu.cuda.alloc(4, s)
    counter.fill(0, s)
    one = cu.cuda.LaunchConfig(1, 1)
    s.begin_capture()
    assert s.is_capturing
    for _ in range(3):
        cu.cuda.launch(s, one, k["add_one"], counter)
    graph = s.end_capture()
    assert not s.is_capturing
    assert graph.num_nodes == 3
    s.synchronize()
    assert read_int32(counter)[0] == 0  # captured, not run
    exe = graph.instantiate()
    for _ in range(5):
        exe.launch(s)
    s.synchronize()
    assert read_int32(counter)[0] == 15


def test_graph_with_stream_ordered_scratch_memory():
    k = load_kernels()
    s = cu.cuda.Stream()
    out = cu.cuda.alloc(4, s)
    out.fill(0, s)
    one = cu.cuda.LaunchConfig(1, 1)
    with cu.cuda.capture(s) as captured:
        scratch = cu.cuda.alloc(4, s)  # becomes part of the graph
        cu.cuda.launch(s, one, k["write_value"], scratch, 5)
        cu.cuda.launch(s, one, k["copy_value"], scratch, out)
        scratch.close()
    exe = captured.graph.instantiate()
    exe.upload(s)
    exe.launch(s)
    exe.launch(s)
    s.synchronize()
    assert read_int32(out)[0] == 5


def test_graph_capture_of_the_default_stream_is_refused():
    with pytest.raises(ValueError, match="default"):
        cu.cuda.default_stream().begin_capture()
