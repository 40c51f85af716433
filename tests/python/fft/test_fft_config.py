"""cu.fft.config: the per-GPU cuFFT plan caches (hits and misses, LRU eviction by count and by
workspace bytes, resizing, clearing) and its argument checks (these need no GPU)."""

import cupric as cu
import numpy as np
import pytest
from cupric.fft import config
from fft_helpers import check, random


def test_bounds_are_checked():
    cache = config.get_plan_cache(0)
    with pytest.raises(ValueError, match="-1 .*at least 0, got -2"):
        cache.set_size(-2)
    with pytest.raises(TypeError, match="memsize must be an int"):
        cache.set_memsize(1.5)
    with pytest.raises(ValueError, match="plan caches belong to GPUs"):
        config.get_plan_cache("cpu")


def test_reading_a_cache_needs_no_gpu():
    info = config.get_plan_cache("cuda:3").info()
    assert info["device"] == 3 and info["max_size"] == 16 and info["max_memsize"] == -1
    assert "cuda:3" in repr(config.get_plan_cache(3))


@pytest.fixture
def cache():
    c = config.get_plan_cache(0)
    size, memsize = c.get_size(), c.get_memsize()
    c.clear()
    yield c
    c.clear()
    c.set_size(size)
    c.set_memsize(memsize)


@pytest.mark.gpu
def test_hits_misses_and_lru_eviction(cache):
    cache.set_size(2)
    x = {n: cu.asarray(random((4, n), np.complex64), device="cuda:0") for n in (16, 32, 64)}
    start = cache.info()
    cu.fft.fft(x[16])
    cu.fft.fft(x[16])
    info = cache.info()
    assert (info["misses"] - start["misses"], info["hits"] - start["hits"], info["size"]) == (1, 1, 1)
    cu.fft.fft(x[32])
    cu.fft.fft(x[16])  # 16 is now the most recent: 32 goes first
    cu.fft.fft(x[64])
    plans = [p[0] for p in cache.info()["plans"]]
    assert len(plans) == 2 and "n=(64,)" in plans[0] and "n=(16,)" in plans[1]
    check(cu.fft.fft(x[64]).to_device("cpu"), np.fft.fft(x[64].get()), np.complex64, 64)


@pytest.mark.gpu
def test_memsize_bounds_workspace_and_zero_keeps_nothing(cache):
    cache.set_memsize(0)
    a = random((8, 4099), np.complex64)  # a prime length: Bluestein's plan needs workspace
    check(cu.fft.fft(cu.asarray(a, device="cuda:0")).to_device("cpu"), np.fft.fft(a), np.complex64, 4099)
    info = cache.info()
    assert info["memsize"] == 0 and all(w == 0 for _, w in info["plans"])
    cache.set_memsize(-1)
    cache.set_size(0)
    cu.fft.fft(cu.asarray(a, device="cuda:0"))
    assert cache.get_curr_size() == 0
    cache.set_size(4)
    cu.fft.fft(cu.asarray(a, device="cuda:0"))
    assert cache.get_curr_size() == 1
    assert cache.get_curr_memsize() == sum(w for _, w in cache.info()["plans"])
    cache.clear()
    assert len(cache) == 0
