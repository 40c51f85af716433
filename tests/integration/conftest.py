"""Client tests: third-party libraries run on cupric arrays and are compared with the same call on
NumPy input. The environment the clients read at import is set here, before any test module
imports them: SciPy's array API support (SCIPY_ARRAY_API, read once when scipy is first imported;
scikit-learn's array_api_dispatch refuses to run without it), matplotlib's Agg backend, and the
CPU as cupric's default device. A test that runs on a device makes it the default device for its
duration, as it is for a user who works on that GPU: clients create arrays without saying where
(SciPy's NumPy path ends in xp.asarray(result), array-api-extra's at().min in xp.asarray(0.0))."""

import os
import sys

os.environ.setdefault("CUPRIC_DEVICE", "cpu")
os.environ.setdefault("MPLBACKEND", "Agg")
if "scipy" in sys.modules and os.environ.get("SCIPY_ARRAY_API") != "1":
    raise RuntimeError("scipy was imported before tests/integration/conftest.py could set SCIPY_ARRAY_API=1")
os.environ["SCIPY_ARRAY_API"] = "1"

import cupric as cu  # noqa: E402
import pytest  # noqa: E402
from clients import DEVICES  # noqa: E402


@pytest.fixture(params=DEVICES)
def device(request):
    """'cpu', then 'cuda' when a GPU is present."""
    return request.param


@pytest.fixture(autouse=True)
def default_device_is_the_tests(request):
    callspec = getattr(request.node, "callspec", None)
    device = callspec.params.get("device") if callspec else None
    if device is None:
        yield
        return
    with cu.device(device):
        yield
