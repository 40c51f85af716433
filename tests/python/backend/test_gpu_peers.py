"""cupric device arrays with CuPy, PyTorch and JAX on a GPU: DLPack (kDLCUDA) and
__cuda_array_interface__ both ways, zero-copy (the same device pointer), views included."""

import cupric as cu
import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def _source(shape=(6, 8), dtype=np.float32):
    return np.random.default_rng(11).standard_normal(shape).astype(dtype)


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


def test_pytorch_reads_and_writes_cupric_memory():
    torch = _torch()
    host = _source()
    x = cu.asarray(host, device="cuda")
    t = torch.from_dlpack(x)
    assert t.is_cuda and t.data_ptr() == x._data_ptr and tuple(t.shape) == host.shape
    t.mul_(2)  # written through PyTorch, seen by cupric
    torch.cuda.synchronize()
    np.testing.assert_array_equal(np.asarray(x), host * 2)
    tv = torch.from_dlpack(x[:, ::2].T)  # a strided view keeps its strides
    np.testing.assert_array_equal(tv.cpu().numpy(), (host * 2)[:, ::2].T)


def test_cupric_reads_pytorch_memory():
    torch = _torch()
    t = torch.arange(48, dtype=torch.float64, device="cuda").reshape(6, 8)
    torch.cuda.synchronize()
    for y in (cu.from_dlpack(t), cu.asarray(t)):
        assert y.device == "cuda:0" and y._data_ptr == t.data_ptr()
        np.testing.assert_array_equal(np.asarray(y + 1), np.arange(48.0).reshape(6, 8) + 1)
    view = cu.from_dlpack(t[1:, 2:5])
    np.testing.assert_array_equal(np.asarray(view), np.arange(48.0).reshape(6, 8)[1:, 2:5])
    b = torch.ones(5, dtype=torch.bfloat16, device="cuda") * 1.5
    torch.cuda.synchronize()
    assert cu.from_dlpack(b).dtype == cu.bfloat16
    np.testing.assert_array_equal(np.asarray(cu.from_dlpack(b).astype(cu.float32)), np.full(5, 1.5, np.float32))


def test_cupy_both_ways():
    cupy = pytest.importorskip("cupy")
    host = _source(dtype=np.float64)
    x = cu.asarray(host, device="cuda")
    for c in (cupy.asarray(x), cupy.from_dlpack(x)):  # __cuda_array_interface__, then DLPack
        assert c.data.ptr == x._data_ptr
        np.testing.assert_array_equal(cupy.asnumpy(c), host)
    c = cupy.asarray(host) * 3
    for y in (cu.asarray(c), cu.from_dlpack(c)):
        assert y._data_ptr == c.data.ptr and y.device == "cuda:0"
        np.testing.assert_array_equal(np.asarray(y), host * 3)
    ct = cu.asarray(c.T)  # CuPy's transposed view: strides carried over
    np.testing.assert_array_equal(np.asarray(ct), (host * 3).T)


def test_jax_both_ways():
    jax = pytest.importorskip("jax")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        pytest.skip("JAX without a GPU")
    import jax.numpy as jnp

    host = _source()
    j = jax.device_put(jnp.asarray(host), gpus[0])
    y = cu.from_dlpack(j)
    assert y.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(y * 2), host * 2)
    x = cu.asarray(host, device="cuda") + 1
    back = jnp.from_dlpack(x)
    np.testing.assert_array_equal(np.asarray(back), host + 1)
