"""array-api-compat's helpers on cupric arrays: cupric is a namespace of its own to them (no
wrapper), so array_namespace returns cupric itself; each answer is compared with NumPy's."""

import cupric as cu
import numpy as np
import pytest
from clients import check, needs_feature, on_device

aac = pytest.importorskip("array_api_compat")

A = np.random.default_rng(4).standard_normal((3, 4))

TO_DEVICE_STREAM = True
try:
    cu.ones(1).to_device("cpu", stream=None)
except TypeError:
    TO_DEVICE_STREAM = False


def test_array_namespace_is_cupric(device):
    x = on_device(A, device)
    assert aac.array_namespace(x) is cu
    assert aac.array_namespace(x, x[0], 1.5) is cu
    assert aac.array_namespace(x, api_version="2024.12") is cu
    assert aac.get_namespace(x) is cu
    with pytest.raises(TypeError, match="Multiple namespaces"):
        aac.array_namespace(x, A)


def test_predicates(device):
    x = on_device(A, device)
    assert aac.is_array_api_obj(x) and not aac.is_array_api_obj(A.tolist())
    assert not any(
        getattr(aac, f"is_{lib}_array")(x)
        for lib in ("numpy", "cupy", "torch", "dask", "jax", "pydata_sparse", "ndonnx", "dpnp")
    )
    assert not aac.is_lazy_array(x)  # shapes and values are known without a compute step
    assert aac.is_writeable_array(x) == aac.is_writeable_array(A)


def test_device_and_size(device):
    x = on_device(A, device)
    assert aac.device(x) == x.device and str(aac.device(x)).startswith(device)
    assert aac.size(x) == aac.size(A) == 12
    assert aac.size(x[:, :0]) == 0


@needs_feature(TO_DEVICE_STREAM, "to_device(device, /, *, stream=None) as the standard writes it")
def test_to_device(device):
    x = on_device(A, device)
    back = aac.to_device(x, "cpu")
    check(back, A, "cpu")
    check(aac.to_device(back, x.device), A, device)


def test_common_helpers_run_on_cupric(device):
    """array-api-compat's own generic implementations, called with cupric as the namespace."""
    from array_api_compat.common import _aliases

    x = on_device(A, device)
    check(_aliases.std(x, axis=0, correction=1, xp=cu), A.std(axis=0, ddof=1), device)
    check(_aliases.var(x, xp=cu), A.var(), device)
    check(
        _aliases.cumulative_sum(x, axis=1, include_initial=True, xp=cu),
        np.cumulative_sum(A, axis=1, include_initial=True),
        device,
    )
    check(_aliases.clip(x, -0.5, 0.5, xp=cu), np.clip(A, -0.5, 0.5), device)
    check(_aliases.matrix_transpose(x, xp=cu), A.T, device)
