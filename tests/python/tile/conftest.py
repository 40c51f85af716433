"""Fixtures of the cupric.tile tests (helpers live in tile_helpers.py: a module named
conftest would clash with tests/python/cuda/conftest.py when the whole suite runs)."""

import pytest
from tile_helpers import MODES


@pytest.fixture(params=MODES)
def mode(request):
    return request.param
