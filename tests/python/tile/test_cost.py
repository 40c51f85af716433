"""kernel.cost (python/cupric/tile/_kernel.py over src/tile/cost.cpp): bytes moved and flops per
block from the IR, against values worked out by hand, and the roofline bound they give."""

import cupric as cu
import cupric.tile as ct
import numpy as np
import pytest


@ct.kernel
def copy_kernel(x, out, B: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(out, index=(i,), tile=ct.load(x, index=(i,), shape=(B,)))


@ct.kernel
def matmul_kernel(a, b, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK))
        tb = ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN))
        acc = ct.mma(ta, tb, acc)
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=acc.astype(out.dtype))


@ct.kernel
def softmax_kernel(x, out, BLOCK: ct.Constant[int]):
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, BLOCK), padding=-ct.inf)
    e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
    ct.store(out, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))


@ct.kernel
def scaled_rows_kernel(x, out, n, B: ct.Constant[int]):
    acc = ct.zeros((B,), dtype=ct.float32)
    for i in range(n):  # a trip count from a scalar argument
        acc = acc + ct.load(x, index=(i,), shape=(B,)) * 2.0
    ct.store(out, index=(0,), tile=acc)


def _rand(shape, dtype):
    return cu.asarray(np.random.default_rng(0).random(shape).astype(dtype))


def test_copy_moves_its_tile_in_and_out():
    x = _rand(10000, np.float32)
    c = copy_kernel.cost((10,), x, cu.empty_like(x), 1024)
    assert (c.load_bytes, c.store_bytes, c.flops, c.mma_flops) == (4096, 4096, 0, 0)
    assert (c.blocks, c.bytes, c.total_flops) == (10, 81920, 0)
    assert c.exact and c.limited_by() == "memory"


@pytest.mark.parametrize(("k", "trips"), [(96, 3), (100, 4)])
def test_matmul_counts_its_k_loop_from_the_arguments_shapes(k, trips):
    a, b = _rand((128, k), np.float16), _rand((k, 64), np.float16)
    out = cu.empty((128, 64), dtype=cu.float32)
    c = matmul_kernel.cost((2, 2), a, b, out, 64, 32, 32)
    assert c.load_bytes == trips * (64 * 32 * 2 + 32 * 32 * 2)
    assert c.store_bytes == 64 * 32 * 4
    assert c.mma_flops == trips * 2 * 64 * 32 * 32 and c.flops == 0
    assert c.blocks == 4 and c.total_flops == 4 * c.mma_flops
    assert c.model == "matmul" and c.dtype == "float16"
    peak = c.ceilings.peak_flops("float16", "matmul")
    assert c.bound_gflops() == pytest.approx(min(peak, c.intensity * c.ceilings.bandwidth))


def test_softmax_counts_each_elementwise_op_and_reduction_once_per_element():
    x = _rand((64, 1000), np.float32)
    c = softmax_kernel.cost((64,), x, cu.empty_like(x), 1024)
    # max (1024) + subtract + exp + sum + divide: 5 flops per element of the padded row
    assert (c.load_bytes, c.store_bytes, c.flops) == (4096, 4096, 5 * 1024)
    assert c.intensity == pytest.approx(5120 / 8192)
    bound_s = max(64 * 8192 / (c.ceilings.bandwidth * 1e9), 64 * 5120 / (c.ceilings.peak_flops("float32", "x") * 1e9))
    assert c.bound_seconds() == pytest.approx(bound_s)
    if c.ceilings.source == "table (H200)":
        assert c.bound_gflops() == pytest.approx(0.625 * 4800)
    assert "roofline" in str(c) and "5120 flops" in str(c)


def test_a_loop_bounded_by_a_scalar_argument_uses_its_value():
    x = _rand(4096, np.float32)
    out = cu.empty(512, dtype=cu.float32)
    c = scaled_rows_kernel.cost((1,), x, out, 5, 512)
    assert c.load_bytes == 5 * 512 * 4 and c.store_bytes == 512 * 4
    assert c.flops == 5 * 2 * 512  # multiply and add per element per trip


def test_inspect_with_a_grid_reports_the_cost():
    x = _rand((8, 256), np.float32)
    r = softmax_kernel.inspect(x, cu.empty_like(x), 256, grid=(8,))
    assert r["cost"].bytes == 8 * 2 * 256 * 4
    with pytest.raises(ValueError, match="grid extents must be positive"):
        softmax_kernel.cost((0,), x, cu.empty_like(x), 256)


@pytest.mark.nvrtc
def test_inspect_compile_cuda_reports_registers_and_occupancy():
    x = _rand((8, 1024), np.float32)
    r = softmax_kernel.inspect(x, cu.empty_like(x), 1024, compile_cuda=True, grid=(8,))
    report = r["report"]
    assert report.name == "softmax_kernel" and report.registers == r["registers"] > 0
    assert report.threads == r["cuda"]["threads"]
    assert report.occupancy["blocks_per_sm"] > 0 and report.occupancy["limited_by"]
    assert r["ptx"] and "softmax_kernel" in r["ptx"]
    assert (r["sass"] is None) == ("no SASS" in r["sass_note"])
    assert "softmax_kernel" in str(report) and "roofline" in str(report)


def test_launch_cost_is_what_a_profile_records_for_a_tile_launch():
    x = _rand(4096, np.float32)
    out = cu.empty_like(x)
    assert copy_kernel.launch_cost((4,), (x, out, 1024)) == (4 * 8192, 0)
    with cu.profiler.profile() as prof:
        copy_kernel[(4,)](x, out, 1024)
    (launch,) = [e for e in prof.events if e.kind == "tile_launch"]
    assert launch.bytes == 4 * 8192
    np.testing.assert_array_equal(out.to_device("cpu").__array__(), x.__array__())


def test_a_profiled_tile_launch_records_its_flops_and_the_table_rates_them():
    x = _rand((8, 1024), np.float32)
    out = cu.empty_like(x)
    moved, flops = softmax_kernel.launch_cost((8,), (x, out, 1024))
    assert moved > 0 and flops > 0
    with cu.profiler.profile() as prof:
        softmax_kernel[(8,)](x, out, 1024)
    (launch,) = [e for e in prof.events if e.kind == "tile_launch"]
    assert (launch.bytes, launch.flops) == (moved, flops)
    (row,) = [r for r in prof.table(group_by="kernel") if r["name"] == "softmax_kernel"]
    assert row["flops"] == flops
    assert row["gflops"] == pytest.approx(flops / (row["total_us"] * 1e-6) / 1e9)
    assert row["roof_fraction"] is not None and row["roof_fraction"] > 0
    e = np.exp(x.__array__() - x.__array__().max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.to_device("cpu").__array__(), e / e.sum(axis=1, keepdims=True), rtol=1e-5)
