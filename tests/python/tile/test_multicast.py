"""Cluster multicast (tma.h: tma_ring_begin<..., true>, tma_copy<..., true>; CUPRIC_TILE_MULTICAST=1):
a producer kernel whose blocks bid(0) = 2i and 2i + 1 load the same tiles of a ring operand is
written for clusters of 2 along grid x; where the launch makes them, each block copies half of
such a tile into both."""

import re
import sys
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from cupric.tile import _cuda
from tile_helpers import BF16, set_ring_mode

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "tile"))

import matmul  # noqa: E402


def _emitted(kernel, mode, monkeypatch, m=512, n=512, k=256, *extra):
    set_ring_mode(monkeypatch, mode)
    monkeypatch.setenv("CUPRIC_TILE_MULTICAST", "1")
    kernel.cache.clear()
    args = (np.zeros((m, k), BF16), np.zeros((k, n), BF16), np.zeros(n, BF16), np.zeros((m, n), BF16), 128, 256, 64)
    args += extra
    key, specs, *_ = kernel._specialise(args)
    e = kernel.compiled(key, specs).cuda()
    kernel.cache.clear()
    return e


@pytest.mark.nvrtc
@pytest.mark.parametrize("mode", ["tma ws", "tma ws plain"])
def test_blocks_that_load_the_same_b_tiles_pair_and_multicast_them(monkeypatch, mode):
    """The pairs kernel (b's tile index is (k, bid(1)): the same in blocks 2i and 2i + 1) is written
    for clusters of 2: b's copies multicast (four boxes of 128 bytes: two each), a's stay local;
    sm_90a without spills, multicast and cluster barriers in the PTX; sm_80 compiles the same source.
    The example's kernel (its grouped order makes b's index depend on bid(0)) is not paired, nor is
    any without CUPRIC_TILE_MULTICAST=1 (the default: measured no faster)."""
    e = _emitted(matmul.matmul_pairs_kernel, mode, monkeypatch)
    src = e["source"]
    assert e["cluster"] == 2
    copies = re.findall(r"tma_copy<(\d+), (\d+)(, true)?>", src)
    assert set(copies) == {("128", "64", ""), ("64", "256", ", true")}
    assert "tma_ring_begin<4, true>" in src and "tma_ring_join<4, true>" in src
    if _cuda.nvrtc_available():
        from cupric.tile import _paths

        hopper = _cuda.compile_source(src, _paths.include_dir(), arch="sm_90a", outputs=("cubin", "ptx"))
        info, _ = _cuda.resources_from_log(hopper["log"])
        assert info["spill_stores"] == 0
        ptx = hopper["ptx"]
        assert "multicast::cluster" in ptx and "barrier.cluster.arrive" in ptx and "mapa.shared::cluster" in ptx
        _cuda.compile_source(src, _paths.include_dir(), arch="sm_80", outputs=("cubin",))
    grouped = _emitted(matmul.matmul_kernel, mode, monkeypatch, 512, 512, 256, 8)
    assert grouped["cluster"] == 1 and ", true>" not in grouped["source"]
    monkeypatch.delenv("CUPRIC_TILE_MULTICAST")
    kernel = matmul.matmul_pairs_kernel
    kernel.cache.clear()
    args = (np.zeros((512, 256), BF16), np.zeros((256, 512), BF16), np.zeros(512, BF16), np.zeros((512, 512), BF16))
    key, specs, *_ = kernel._specialise((*args, 128, 256, 64))
    off = kernel.compiled(key, specs).cuda()
    assert off["cluster"] == 1 and ", true>" not in off["source"]
    kernel.cache.clear()


def test_a_loop_whose_bounds_differ_between_the_pair_is_not_paired(monkeypatch):
    """Blocks whose K loops run different iterations cannot share a ring: a bound read from bid(0)
    (through arithmetic) keeps every block alone."""

    @ct.kernel
    def ragged(a, b, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
        acc = ct.zeros((BM, BN), dtype=ct.float32)
        for k in range(ct.cdiv(a.shape[1], BK) - ct.bid(0) % 2):
            acc = ct.mma(
                ct.load(a, index=(ct.bid(0), k), shape=(BM, BK)), ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN)), acc
            )
        ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=acc)

    set_ring_mode(monkeypatch, "tma ws plain")
    monkeypatch.setenv("CUPRIC_TILE_MULTICAST", "1")
    a, c = np.zeros((512, 256), BF16), np.zeros((512, 512), np.float32)
    key, specs, *_ = ragged._specialise((a, np.zeros((256, 512), BF16), c, 128, 256, 64))
    e = ragged.compiled(key, specs).cuda()
    assert e["cluster"] == 1 and ", true>" not in e["source"]


def test_launches_pair_blocks_only_where_the_grid_allows():
    """Clusters of 2 where grid x and the blocks launched are even and no tile splits."""
    pair = cu._cupric._tile.launch_cluster
    assert pair(2, 4, 4, 1) == 2 and pair(2, 64, 132, 1) == 2
    assert pair(2, 3, 3, 1) == 1  # odd grid x
    assert pair(2, 64, 131, 1) == 1  # odd blocks (a persistent kernel on an odd count of SMs)
    assert pair(2, 4, 132, 5) == 1  # split K
    assert pair(1, 4, 4, 1) == 1 and pair(2, 0, 0, 1) == 1


@pytest.mark.nvrtc
@pytest.mark.parametrize("persistent", ["0", "1"])
def test_the_launch_asks_for_clusters_of_two_where_the_grid_pairs(monkeypatch, cache_dir, persistent):
    """Through the stand-in runtime (132 SMs): an even grid x launches in clusters of (2, 1, 1), an
    odd one without (tile counts split K leaves whole); the kernel index keeps the kernel's cluster
    for a new process."""
    from test_cuda import FakeCudaDLPack, StandInRuntime

    set_ring_mode(monkeypatch, {"0": "tma ws plain", "1": "tma ws persistent"}[persistent])
    monkeypatch.setenv("CUPRIC_TILE_MULTICAST", "1")
    rt = StandInRuntime()
    monkeypatch.setattr(_cuda, "_cuda_module", lambda: rt)
    kernel = matmul.matmul_pairs_kernel
    kernel._forget_plans()
    kernel.cache.clear()
    shapes = ((512, 200), (200, 512), (512,), (512, 512))
    dev = [FakeCudaDLPack(cu.zeros(s, dtype=cu.bfloat16)) for s in shapes]
    kernel[(132, 1)](*dev, 128, 256, 64)
    kernel[(67, 1)](*dev, 128, 256, 64)
    assert [tuple(c.cluster or ()) for _, c, *_ in rt.launches[:2]] == [(2, 1, 1), ()]
    k = next(iter(kernel.cache.values())).cuda_kernels[0]
    assert k.cluster == 2 and k.index_entry["cluster"] == 2
    kernel.cache.clear()  # a new process: from the index
    kernel[(132, 1)](*dev, 128, 256, 64)
    again = next(iter(kernel.cache.values())).cuda_kernels[0]
    assert again.compiled.get("index_hit") and again.cluster == 2
    assert tuple(rt.launches[-1][1].cluster) == (2, 1, 1)
    kernel.cache.clear()


# ---- on the GPU ------------------------------------------------------------------------------------


def _integers(shape, rng, low=-3, high=4):
    return rng.integers(low, high, size=shape).astype(np.float32)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["tma ws", "tma ws plain"])
@pytest.mark.parametrize(
    ("m", "n", "k"),
    [
        (128 * 4, 512, 64 * 12),  # 4 x 2 tiles: pairs
        (128 * 4 - 9, 500, 64 * 12 + 7),  # ragged edges, still pairs
        (128 * 3, 512, 64 * 12),  # odd grid x: no clusters
        (128 * 264, 256, 64 * 10),  # persistent: 264 tiles on 132 SMs, pairs over two waves
        (128 * 2, 256, 64 * 40),  # persistent: 2 tiles, split K (no clusters)
    ],
)
def test_paired_products_are_exact(monkeypatch, mode, m, n, k):
    """Exact integer products of the pairs kernel through the Python path and then the plan (new
    arrays each time), paired or not as the grid allows, against float64."""
    set_ring_mode(monkeypatch, mode)
    monkeypatch.setenv("CUPRIC_TILE_MULTICAST", "1")
    kernel = matmul.matmul_pairs_kernel
    kernel.cache.clear()
    for seed in range(2):
        rng = np.random.default_rng(seed)
        a, b, bias = _integers((m, k), rng), _integers((k, n), rng), _integers((n,), rng)
        out = cu.zeros((m, n), dtype=cu.float32, device="cuda")
        dev = [cu.asarray(x.astype(BF16), device="cuda") for x in (a, b, bias)]
        kernel[(ct.cdiv(m, 128), ct.cdiv(n, 256))](*dev, out, 128, 256, 64)
        want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
        np.testing.assert_array_equal(np.asarray(out.to_device("cpu")), want)
    assert next(iter(kernel.cache.values())).cuda_kernels[0].cluster == 2
    assert len(kernel._plans) >= 1
    kernel.cache.clear()
