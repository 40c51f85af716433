"""Fixtures shared by every test: the suite picks devices explicitly, so the default device is the
CPU here even on a GPU machine (CUPRIC_DEVICE); `device` runs a test on the CPU and, when a GPU is
present, again on CUDA, with the CPU backend (and NumPy) as the oracle. The run is hermetic: the
compile cache of the whole session (subprocesses and pytest-xdist's workers included, through
CUPRIC_CACHE_DIR) is a fresh folder, set before cupric is imported, so a run never reads or writes
the user's cache and a kernel is compiled once per run; `cache_dir` gives one test an empty one."""

import os
import re
import shutil
import tempfile

os.environ.setdefault("CUPRIC_DEVICE", "cpu")
# pytest-xdist's workers inherit the environment of the process that started them, so they find
# its folder here and share it (the cache is safe for concurrent processes); that process removes it.
_OWNS_CACHE = "CUPRIC_TEST_SESSION_CACHE" not in os.environ
_SAVED_CACHE_DIR = os.environ.get("CUPRIC_CACHE_DIR")
if _OWNS_CACHE:
    os.environ["CUPRIC_TEST_SESSION_CACHE"] = tempfile.mkdtemp(prefix="cupric-test-cache-")
SESSION_CACHE = os.environ["CUPRIC_TEST_SESSION_CACHE"]
os.environ["CUPRIC_CACHE_DIR"] = SESSION_CACHE

import cupric as cu  # noqa: E402
import pytest  # noqa: E402
from fake_driver import build_fake_driver  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.fixture(scope="session", autouse=True)
def session_cache():
    """The session's compile cache folder; the environment is restored at the end."""
    cu.cuda.compile_cache.reload_environment()
    yield SESSION_CACHE
    if _SAVED_CACHE_DIR is None:
        os.environ.pop("CUPRIC_CACHE_DIR", None)
    else:
        os.environ["CUPRIC_CACHE_DIR"] = _SAVED_CACHE_DIR


_ALL_ITEMS = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)  # before -k, -m and --deselect take items away
def pytest_collection_modifyitems(config, items):
    """Test ids are the same in every process (pytest-xdist's workers must agree on them): a
    memory address in one (repr of an object) is an error at collection (oracle_helpers.param_id).
    Keeps the whole collection for `collected_items`."""
    config.stash[_ALL_ITEMS] = list(items)
    moving = [item.nodeid for item in items if re.search(r" at 0x[0-9a-fA-F]+", item.nodeid)]
    if moving:
        raise pytest.UsageError(f"test ids with memory addresses (use oracle_helpers.param_id): {moving[:3]}")


def pytest_unconfigure(config):
    """The process that made the session's folder removes it, after its workers (if any) are done."""
    if _OWNS_CACHE:
        os.environ.pop("CUPRIC_TEST_SESSION_CACHE", None)
        shutil.rmtree(SESSION_CACHE, ignore_errors=True)


@pytest.fixture(scope="session")
def collected_items(request):
    """Every test this session collected (before deselection): tools/coverage.py reads them in
    place of collecting the suite again in a process of its own (tests/python/test_coverage.py)."""
    return request.config.stash.get(_ALL_ITEMS, [])


@pytest.fixture
def cache_dir(tmp_path):
    """Points the process-wide compile cache at an empty folder for one test, then back."""
    cache = cu.cuda.compile_cache
    saved = cache.directory
    cache.directory = str(tmp_path / "cache")
    cache.clear()
    yield tmp_path / "cache"
    cache.clear(memory=True, disk=False)
    cache.directory = saved


@pytest.fixture(params=DEVICES)
def device(request):
    """'cpu', then 'cuda' when a GPU is present."""
    return request.param


@pytest.fixture(autouse=True)
def _first_sort_kernels(request, monkeypatch):
    """A test given the device "cuda:old" (the sorting and set tests) runs on CUDA with the first
    onesweep pass and unique kernel (CUPRIC_SORT_KERNEL=old), beside the default ones."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("device") == "cuda:old":
        monkeypatch.setenv("CUPRIC_SORT_KERNEL", "old")


@pytest.fixture(scope="session")
def fake_dir(tmp_path_factory):
    """The directory of the stand-in libcuda.so.1 (fake_driver.py), built once per session."""
    out = build_fake_driver(tmp_path_factory.mktemp("fake_cuda"))
    if out is None:
        pytest.skip("no C compiler for the stand-in driver")
    return out
