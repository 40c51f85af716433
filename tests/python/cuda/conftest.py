"""Fixtures for the cupric.cuda tests: an isolated compile-cache folder."""

import pytest

import cupric as cu


@pytest.fixture
def cache_dir(tmp_path):
    """Points the process-wide compile cache at an empty folder for one test, then restores it."""
    cache = cu.cuda.compile_cache
    saved = cache.directory
    cache.directory = str(tmp_path / "cache")
    cache.clear()
    yield tmp_path / "cache"
    cache.clear(memory=True, disk=False)
    cache.directory = saved
