"""The markers of every test folder (registered in pyproject.toml): `gpu` (needs a CUDA GPU) and
`nvrtc` (compiles with NVRTC, no GPU needed) become skips where the machine lacks them, so a
test says what it needs once, and `pytest -m gpu` selects the GPU tests (tools/gpu_check.sh).
cupric is imported only once collection is done: tests/python/conftest.py sets the environment
it reads first."""

import pytest


def pytest_collection_modifyitems(config, items):
    import cupric as cu

    missing = {
        "gpu": None if cu.cuda.is_available() else "no CUDA GPU",
        "nvrtc": None if cu.cuda.versions()["nvrtc"]["found"] else "NVRTC is not installed",
    }
    for item in items:
        for marker, reason in missing.items():
            if reason and item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=f"{reason} (marked {marker})"))
                break
