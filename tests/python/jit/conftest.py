"""Fixtures of the jit tests."""

import pytest


@pytest.fixture
def gpu_row_bounds(monkeypatch):
    """The CPU's whole-row bound set to the GPU's, so that the CPU runs the rows kernels a GPU would."""
    from cupric.jit import _render

    monkeypatch.setitem(_render.WHOLE_ROW_BYTES, "cpu", _render.WHOLE_ROW_BYTES["cuda"])
