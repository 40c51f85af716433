"""The Array API inspection namespace (cupric._info) and the package's lazy attributes."""

import subprocess
import sys

import cupric as cu
import numpy as np
import pytest


def test_version_and_namespace():
    assert cu.__array_api_version__ == "2024.12"
    assert cu.ones(2).__array_namespace__() is cu
    assert cu.ones(2).__array_namespace__(api_version="2024.12") is cu
    with pytest.raises(ValueError, match="2099.01"):
        cu.ones(2).__array_namespace__(api_version="2099.01")


def test_capabilities():
    caps = cu.__array_namespace_info__().capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}
    x = cu.asarray([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(x[x > 0]), [1.0, 3.0])  # what the capabilities promise


def test_devices_and_default_device():
    info = cu.__array_namespace_info__()
    devices = info.devices()
    assert devices[0] == "cpu" and all(str(d).startswith("cuda:") for d in devices[1:])
    assert len(devices) == 1 + cu.cuda.device_count()
    assert info.default_device() in devices and info.default_device() == cu.default_device()
    with cu.device("cpu"):
        assert info.default_device() == "cpu" and cu.asarray([1]).device == info.default_device()


def test_default_dtypes_are_what_creation_uses():
    info = cu.__array_namespace_info__()
    d = info.default_dtypes(device="cpu")
    assert d["real floating"] == cu.asarray(1.0).dtype == cu.zeros(1).dtype
    assert d["integral"] == cu.asarray(1).dtype == cu.arange(3).dtype
    assert d["complex floating"] == cu.asarray(1j).dtype
    assert d["indexing"] == cu.nonzero(cu.ones(2))[0].dtype
    assert all(isinstance(v, np.dtype) for v in d.values())
    with pytest.raises(ValueError, match="cuda:99"):
        info.default_dtypes(device="cuda:99")


@pytest.mark.parametrize(
    "kind, names",
    [
        (None, {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float32", "float64", "complex64", "complex128"}),
        ("bool", {"bool"}),
        ("signed integer", {"int8", "int16", "int32", "int64"}),
        ("unsigned integer", {"uint8", "uint16", "uint32", "uint64"}),
        ("real floating", {"float32", "float64"}),
        ("complex floating", {"complex64", "complex128"}),
        (("bool", "complex floating"), {"bool", "complex64", "complex128"}),
    ],
)
def test_dtypes_by_kind(kind, names):
    got = cu.__array_namespace_info__().dtypes(kind=kind)
    assert set(got) == names
    for name, dt in got.items():
        assert dt == np.dtype(name) and cu.isdtype(dt, kind if kind else "bool") == (kind is not None or name == "bool")


def test_dtypes_bad_kind_is_named():
    with pytest.raises(ValueError, match="'floats'"):
        cu.__array_namespace_info__().dtypes(kind="floats")


def test_tile_is_a_lazy_attribute():
    code = "import cupric as cu, sys\nassert 'cupric.tile' not in sys.modules\nassert callable(cu.tile.kernel)\n"
    subprocess.run([sys.executable, "-c", code], check=True)
