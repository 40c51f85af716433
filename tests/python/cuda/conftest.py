"""Fixtures for the cupric.cuda tests: the compile cache lives in a temporary folder for the whole
session (subprocesses inherit it through CUPRIC_CACHE_DIR), and `cache_dir` gives one test an
empty one."""

import os

import cupric as cu
import pytest


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("cupric-cache"))
    saved = os.environ.get("CUPRIC_CACHE_DIR")
    os.environ["CUPRIC_CACHE_DIR"] = folder
    cu.cuda.compile_cache.reload_environment()
    yield folder
    if saved is None:
        os.environ.pop("CUPRIC_CACHE_DIR", None)
    else:
        os.environ["CUPRIC_CACHE_DIR"] = saved
    cu.cuda.compile_cache.reload_environment()


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
