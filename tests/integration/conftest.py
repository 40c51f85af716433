"""Client tests: third-party libraries run on cupric arrays and are compared with the same call on
NumPy input. The environment the clients read at import is set here, before any test module
imports them: SciPy's array API support (SCIPY_ARRAY_API, read once when scipy is first imported;
scikit-learn's array_api_dispatch refuses to run without it), matplotlib's Agg backend, and the
CPU as cupric's default device (the tests pick devices explicitly)."""

import os
import sys

os.environ.setdefault("CUPRIC_DEVICE", "cpu")
os.environ.setdefault("MPLBACKEND", "Agg")
if "scipy" in sys.modules and os.environ.get("SCIPY_ARRAY_API") != "1":
    raise RuntimeError("scipy was imported before tests/integration/conftest.py could set SCIPY_ARRAY_API=1")
os.environ["SCIPY_ARRAY_API"] = "1"

import pytest  # noqa: E402
from clients import DEVICES  # noqa: E402


@pytest.fixture(params=DEVICES)
def device(request):
    """'cpu', then 'cuda' when a GPU is present."""
    return request.param
