"""Fixtures shared by every test: the suite picks devices explicitly, so the default device is the
CPU here even on a GPU machine (CUPRIC_DEVICE); `device` runs a test on the CPU and, when a GPU is
present, again on CUDA, with the CPU backend (and NumPy) as the oracle."""

import os

os.environ.setdefault("CUPRIC_DEVICE", "cpu")

import cupric as cu  # noqa: E402
import pytest  # noqa: E402
from fake_driver import build_fake_driver  # noqa: E402

HAS_GPU = cu.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU"))]


@pytest.fixture(params=DEVICES)
def device(request):
    """'cpu', then 'cuda' when a GPU is present."""
    return request.param


@pytest.fixture(scope="session")
def fake_dir(tmp_path_factory):
    """The directory of the stand-in libcuda.so.1 (fake_driver.py), built once per session."""
    out = build_fake_driver(tmp_path_factory.mktemp("fake_cuda"))
    if out is None:
        pytest.skip("no C compiler for the stand-in driver")
    return out
