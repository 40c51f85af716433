"""cupric.tile memory ops: load / store by tile index with padding (out-of-bounds reads give the
padding, writes are dropped), strided and reversed views, element-offset windows, gather /
scatter with masks, and atomics across blocks."""

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from tile_helpers import assert_close, random, run, to_cu, to_np


@ct.kernel
def copy_padded(x, out, pad_out, BM: ct.Constant[int], BN: ct.Constant[int], PAD: ct.Constant[float]):
    t = ct.load(x, index=(ct.bid(0), ct.bid(1)), shape=(BM, BN), padding=PAD)
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=t)
    # the padded part: count the elements equal to PAD in this tile
    ct.store(pad_out, index=(ct.bid(0), ct.bid(1)), tile=ct.reshape(ct.sum(t == PAD), (1, 1)))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int32", "uint8", "float16"])
def test_load_store_out_of_bounds(dtype, mode):
    x = random((23, 17), dtype, low=1, high=3)
    if dtype in ("uint8", "int32"):
        x = (np.abs(x.astype(np.int64)) % 50 + 1).astype(x.dtype)  # no element equals the padding
    out = cu.zeros((23, 17), dtype=cu.dtype(dtype))
    counts = cu.zeros((3, 3), dtype=cu.int64)
    pad = 0.0 if dtype in ("int32", "uint8") else -5.5
    run(copy_padded, mode, (3, 3), to_cu(x), out, counts, 8, 6, pad)
    assert_close(to_np(out), x, dtype)
    padded = np.zeros((24, 18), bool)
    padded[23:, :] = padded[:, 17:] = True
    want = padded.reshape(3, 8, 3, 6).sum(axis=(1, 3))
    np.testing.assert_array_equal(to_np(counts), want)


@ct.kernel
def scale_rows(x, out, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(1, BLOCK))
    ct.store(out, index=(ct.bid(0), 0), tile=t * 3)


def test_strided_and_reversed_views(mode):
    base = random((20, 30), "float32")
    xc = to_cu(base)
    x = np.asarray(base)[::2, ::-3]  # non-contiguous, negative stride
    out_base = cu.zeros((10, 40), dtype=cu.float32)
    # a cupric view: every other row of a larger array, reversed columns
    xv = cu.asarray(np.asarray(xc)[::2, ::-3])
    ov = cu.asarray(np.asarray(out_base)[:, ::4])
    run(scale_rows, mode, (10,), xv, ov, 16)
    assert_close(np.asarray(out_base)[:, ::4], x * 3)
    assert not np.asarray(out_base)[:, 1::4].any()  # untouched


@ct.kernel
def windows(x, out, BM: ct.Constant[int], BN: ct.Constant[int]):
    r = ct.bid(0) * BM
    c = ct.bid(1) * BN
    t = ct.load_offset(x, offset=(r - 2, c + 1), shape=(BM, BN), padding=1.0)
    ct.store_offset(out, offset=(r, c), tile=t)


def test_offset_windows(mode):
    x = random((19, 26), "float32")
    out = cu.zeros((19, 26), dtype=cu.float32)
    run(windows, mode, (ct.cdiv(19, 8), ct.cdiv(26, 10)), to_cu(x), out, 8, 10)
    want = np.ones((19, 26), np.float32)
    want[2:, :-1] = x[:-2, 1:]
    assert_close(to_np(out), want)


@ct.kernel
def gather_scatter(x, idx, out, mask_out, N: ct.Constant[int]):
    i = ct.load(idx, index=(0,), shape=(N,))
    g = ct.gather(x, i, mask=i % 3 != 0, padding=-1.0)
    ct.store(out, index=(0,), tile=g)
    ct.scatter(mask_out, (i,), g * 10, mask=g > 0)


def test_gather_scatter_with_masks(mode):
    x = random(50, "float32")
    idx = np.random.default_rng(2).permutation(60)[:40].astype(np.int32)  # some out of bounds (>= 50)
    out = cu.zeros(40, dtype=cu.float32)
    mask_out = cu.zeros(50, dtype=cu.float32)
    run(gather_scatter, mode, (1,), to_cu(x), to_cu(idx), out, mask_out, 40)
    ok = (idx % 3 != 0) & (idx < 50)
    g = np.where(ok, x[np.minimum(idx, 49)], -1.0).astype(np.float32)
    assert_close(to_np(out), g)
    want = np.zeros(50, np.float32)
    sel = (g > 0) & (idx < 50)
    want[idx[sel]] = g[sel] * 10
    assert_close(to_np(mask_out), want)


@ct.kernel
def gather_2d(x, rows, cols, out, N: ct.Constant[int]):
    r = ct.load(rows, index=(0,), shape=(N,))
    c = ct.load(cols, index=(0,), shape=(N,))
    ct.store(out, index=(0, 0), tile=ct.gather(x, (r[:, None], c[None, :])))


def test_gather_2d_broadcast_indices(mode):
    x = random((12, 9), "float64")
    rows, cols = np.array([0, 11, 3, 5], np.int64), np.array([8, 0, 2, 2], np.int64)
    out = cu.zeros((4, 4), dtype=cu.float64)
    run(gather_2d, mode, (1,), to_cu(x), to_cu(rows), to_cu(cols), out, 4)
    np.testing.assert_array_equal(to_np(out), x[rows[:, None], cols[None, :]])


@ct.kernel
def histogram(x, hist, mx, mn, BLOCK: ct.Constant[int], BINS: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,), padding=-1)
    valid = t >= 0
    ct.atomic_add(hist, t % BINS, 1, mask=valid)
    ct.atomic_max(mx, ct.zeros((1,), dtype=ct.int32), ct.max(t))
    ct.atomic_min(mn, (ct.zeros((BLOCK,), dtype=ct.int32),), ct.where(valid, t, 1 << 30).astype(ct.float32))


def test_atomics_across_blocks(mode):
    x = np.random.default_rng(4).integers(0, 1000, size=1003).astype(np.int32)
    hist = cu.zeros(7, dtype=cu.int32)
    mx = cu.zeros(1, dtype=cu.int32)
    mn = cu.full(1, 1e9, dtype=cu.float32)
    run(histogram, mode, (ct.cdiv(1003, 64),), to_cu(x), hist, mx, mn, 64, 7)
    np.testing.assert_array_equal(to_np(hist), np.bincount(x % 7, minlength=7))
    assert to_np(mx)[0] == x.max()
    assert to_np(mn)[0] == x.min()


@ct.kernel
def float_atomics(x, out, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
    ct.atomic_add(out, (ct.arange(BLOCK) % 4,), t)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_float_atomic_add(dtype, mode):
    x = (np.arange(256) % 5).astype(np.float32).astype(random(1, dtype).dtype)
    out = cu.zeros(4, dtype=cu.dtype(dtype))
    run(float_atomics, mode, (4,), to_cu(x), out, 64)
    want = x.astype(np.float64).reshape(-1, 4).sum(0)
    assert_close(to_np(out).astype(np.float64), want, rtol=0, atol=0)
