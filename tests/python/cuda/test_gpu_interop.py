"""cupric.cuda with CuPy and PyTorch on a GPU: their streams and memory in cupric launches, and
cupric streams and buffers in theirs."""

import cupric as cu
import numpy as np
import pytest
from cuda_helpers import SAXPY, load_kernels

pytestmark = pytest.mark.gpu


def saxpy_kernel():
    return load_kernels(SAXPY)["saxpy"]


def test_cupy_streams_and_arrays():
    cupy = pytest.importorskip("cupy")
    n = 4096
    rng = np.random.default_rng(5)
    xs, ys = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    cs = cupy.cuda.Stream(non_blocking=True)
    s = cu.cuda.Stream.wrap(cs)
    assert s.handle == cs.ptr and not s.owned
    with cs:
        x, y = cupy.asarray(xs), cupy.asarray(ys)
    cu.cuda.launch(s, cu.cuda.LaunchConfig((n + 255) // 256, 256), saxpy_kernel(), 2.0, x, y, n)
    cs.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(y), 2 * xs + ys, rtol=1e-6)
    with cs:  # CuPy's current stream, wrapped
        assert cu.cuda.Stream.wrap(cupy.cuda.get_current_stream()).handle == cs.ptr
    b = cu.cuda.alloc(4 * n)
    b.copy_from(x)  # from a CuPy array (__cuda_array_interface__)
    np.testing.assert_array_equal(np.frombuffer(b.copy_to(), np.float32), xs)
    view = cupy.asarray(b).view(cupy.float32)  # CuPy reads a cupric Buffer
    np.testing.assert_array_equal(cupy.asnumpy(view), xs)
    from_dlpack = cupy.from_dlpack(b).view(cupy.float32)
    np.testing.assert_array_equal(cupy.asnumpy(from_dlpack), xs)


def test_pytorch_streams_and_tensors():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    n = 4096
    ts = torch.cuda.Stream()
    s = cu.cuda.Stream.wrap(ts)
    assert s.handle == ts.cuda_stream
    with torch.cuda.stream(ts):
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        expected = 2 * x + y
    cu.cuda.launch(s, cu.cuda.LaunchConfig((n + 255) // 256, 256), saxpy_kernel(), 2.0, x, y, n)
    ts.synchronize()
    torch.testing.assert_close(y, expected)
    # A cupric stream in PyTorch.
    mine = cu.cuda.Stream()
    with torch.cuda.stream(torch.cuda.ExternalStream(mine.handle)):
        z = x * 3
    mine.synchronize()
    torch.testing.assert_close(z, x * 3)
    # Memory both ways.
    b = cu.cuda.alloc(4 * n)
    b.copy_from(x)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(np.frombuffer(b.copy_to(), np.float32), x.cpu().numpy())
    t = torch.from_dlpack(b).view(torch.float32)
    torch.testing.assert_close(t, x)
