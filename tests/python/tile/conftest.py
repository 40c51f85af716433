"""Fixtures of the cupric.tile tests (helpers live in tile_helpers.py: test modules cannot import
a module named conftest when several folders have one)."""

import pytest
from tile_helpers import MODES


@pytest.fixture(params=MODES)
def mode(request):
    return request.param
