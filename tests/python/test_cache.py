"""`python -m cupric.cache`: info and clear work anywhere; warm needs a GPU (it compiles for it)."""

import cupric as cu
import pytest
from cupric import cache


def test_info_and_unknown_command(capsys):
    assert cache.main(["info"]) == 0
    assert "directory" in capsys.readouterr().out
    assert cache.main(["nonsense"]) == 2


@pytest.mark.skipif(cu.cuda.is_available(), reason="checks the message without a GPU")
def test_warm_without_gpu(capsys):
    assert cache.main(["warm"]) == 1
    assert "no CUDA GPU" in capsys.readouterr().out


@pytest.mark.skipif(not cu.cuda.is_available(), reason="no CUDA GPU")
def test_warm_then_first_calls_hit_the_cache(capsys):
    assert cache.main(["warm"]) == 0
    stats = cu.cuda.compile_cache.stats()
    x = cu.arange(10, dtype=cu.float32, device="cuda")
    y = x + x
    z = 2 * y
    after = cu.cuda.compile_cache.stats()
    assert after["misses"] == stats["misses"]  # every kernel above was warmed
    assert float(cu.sum(z)) == 180.0
