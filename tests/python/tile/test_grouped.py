"""Grouped matrix products (examples/tile/grouped_matmul.py): one launch over G problems of
different M, each block reading its problem and tile row from tables the host makes. On the CPU
and in the interpreter against NumPy; the compiler's side without a GPU (the producer warpgroup
reads the tables too, so the K loop keeps its TMA ring and wgmma; it does not where something
before the loop writes memory); exact integer products on the GPU (marked gpu)."""

import sys
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from cupric.tile import _cuda, _paths
from tile_helpers import BF16, assert_close, random, to_cu, to_np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "tile"))

import grouped_matmul as gm  # noqa: E402


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_grouped_products_match_numpy(interpret, dtype):
    rng = np.random.default_rng(5)
    rows, k, n = [32, 96, 16, 64] if not interpret else [16, 32], 72, 40
    a = random((sum(rows), k), dtype, rng)
    b = random((len(rows), k, n), dtype, rng)
    got = to_np(gm.grouped_matmul(to_cu(a), rows, to_cu(b), bm=16, bn=32, bk=16, interpret=interpret))
    tol = {} if dtype == "bfloat16" else dict(rtol=1e-4, atol=1e-4)
    assert_close(got.astype(np.float32), gm.reference(a, rows, b).astype(np.float32), dtype, **tol)


def test_tables_and_bad_inputs():
    tr, tp = gm.tile_tables([32, 16, 48], 16)
    assert tr.tolist() == [0, 1, 2, 3, 4, 5] and tp.tolist() == [0, 0, 1, 2, 2, 2] and tr.dtype == np.int32
    with pytest.raises(ValueError, match="problem 1 has 20 rows, not a multiple of BM=16"):
        gm.tile_tables([32, 20], 16)
    a, b = cu.zeros((48, 8)), cu.zeros((2, 8, 4))
    with pytest.raises(ValueError, match=r"a \(48, 8\) holds 48 rows, the problems 40"):
        gm.grouped_matmul(a, [32, 8], b, bm=8)
    a0, b0 = np.asarray(a).copy(), np.asarray(b).copy()
    with pytest.raises(ValueError, match=r"b \(2, 8, 4\) must be \(3, 8, N\)"):
        gm.grouped_matmul(a, [16, 16, 16], b, bm=8)
    assert np.array_equal(np.asarray(a), a0) and np.array_equal(np.asarray(b), b0)  # inputs untouched


def _source(kernel, *args, mode="tma ws"):
    key, specs, *_ = kernel._specialise(args)
    return kernel.compiled(key, specs).function.emit("cuda", ring=mode)


@ct.kernel
def _grouped_after_a_store(
    a, b, out, tile_row, tile_problem, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]
):
    t, n = ct.bid(0), ct.bid(1)
    ct.store(tile_problem, index=(t,), tile=ct.load(tile_problem, index=(t,), shape=(1,)) + 0)  # a write first
    m = ct.reshape(ct.load(tile_row, index=(t,), shape=(1,)), ())
    g = ct.reshape(ct.load(tile_problem, index=(t,), shape=(1,)), ())
    gm.problem_tile(a, b, out, m, g, n, BM, BN, BK)


def test_the_producer_reads_the_tables():
    a, b, t = np.zeros((512, 256), BF16), np.zeros((2, 256, 512), BF16), np.zeros(4, np.int32)
    e = _source(gm.grouped_matmul_kernel, a, b, a, t, t, 128, 256, 64)
    src = e["source"].split("__global__")[1]
    producer = src[: src.index("return;")]
    assert e["threads"] == 384 and "tma_ring_join<" in producer and "mma_staged<" in src
    assert producer.count("::cu::tile::load<::cu::tile::Dims<1>>") == 2  # the tile row and the problem
    # a store before the loop: the producer may not read what it may write; thread 0 issues the TMA
    e = _source(_grouped_after_a_store, a, b, a, t, t, 128, 256, 64)
    assert e["threads"] == 256 and "tma_ring_begin<" in e["source"] and "tma_ring_join<" not in e["source"]


@pytest.mark.nvrtc
def test_grouped_kernel_compiles_for_sm90a_without_spills():
    if not _cuda.nvrtc_available():
        pytest.skip("NVRTC not found")
    a, b, t = np.zeros((512, 256), BF16), np.zeros((2, 256, 512), BF16), np.zeros(4, np.int32)
    src = _source(gm.grouped_matmul_kernel, a, b, a, t, t, 128, 256, 64)["source"]
    out = _cuda.compile_source(src, _paths.include_dir(), arch="sm_90a", outputs=("cubin", "ptx"))
    assert "cp.async.bulk.tensor.3d" in out["ptx"] and "wgmma.mma_async" in out["ptx"]
    info, _ = _cuda.resources_from_log(out["log"])
    assert info["spill_stores"] == 0


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["tma ws", "cp.async"])
def test_grouped_products_are_exact_on_the_gpu(monkeypatch, mode):
    monkeypatch.setenv("CUPRIC_TILE_TMA", "1" if mode != "cp.async" else "0")
    gm.grouped_matmul_kernel.cache.clear()
    rng = np.random.default_rng(11)
    rows, k, n = [256, 128, 384], 200, 300  # ragged K and N
    a = rng.integers(-3, 4, size=(sum(rows), k)).astype(np.float32)
    b = rng.integers(-3, 4, size=(len(rows), k, n)).astype(np.float32)
    out = cu.zeros((sum(rows), n), dtype=cu.float32, device="cuda")
    gm.grouped_matmul(
        cu.asarray(a.astype(BF16), device="cuda"), rows, cu.asarray(b.astype(BF16), device="cuda"), out=out
    )
    np.testing.assert_array_equal(np.asarray(out.to_device("cpu")), gm.reference(a, rows, b))
    gm.grouped_matmul_kernel.cache.clear()
