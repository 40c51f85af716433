"""cupric.tile matrix products: ct.mma / ct.matmul / @ with float32 accumulation for float16,
bfloat16 and float32, float64 and int8, tile shapes that are not multiples of 16."""

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from tile_helpers import BF16, assert_close, np_dtype, random, run, to_cu, to_np


@ct.kernel
def mma_blocked(a, b, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int], ACC: ct.Constant[object]):
    acc = ct.zeros((BM, BN), dtype=ACC)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK))
        tb = ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN))
        acc = ct.mma(ta, tb, acc)
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=acc)


@pytest.mark.parametrize(
    "dtype,acc",
    [
        ("float16", "float32"),
        ("bfloat16", "float32"),
        ("float32", "float32"),
        ("float64", "float64"),
        ("int8", "int32"),
    ],
)
def test_mma_dtypes(dtype, acc, mode):
    rng = np.random.default_rng(11)
    M, K, N = 37, 50, 29
    a, b = random((M, K), dtype, rng), random((K, N), dtype, rng)
    out = cu.zeros((M, N), dtype=cu.dtype(acc))
    run(mma_blocked, mode, (ct.cdiv(M, 16), ct.cdiv(N, 24)), to_cu(a), to_cu(b), out, 16, 24, 20, cu.dtype(acc))
    want = a.astype(np.float64) @ b.astype(np.float64)
    if acc == "int32":
        np.testing.assert_array_equal(to_np(out), want.astype(np.int32))
    else:
        assert_close(
            to_np(out), want, acc, rtol=1e-4 if acc == "float32" else 1e-11, atol=1e-3 if acc == "float32" else 1e-9
        )


@ct.kernel
def matmul_ops(a, b, out1, out2, M: ct.Constant[int], K: ct.Constant[int], N: ct.Constant[int]):
    ta = ct.load(a, index=(0, 0), shape=(M, K))
    tb = ct.load(b, index=(0, 0), shape=(K, N))
    ct.store(out1, index=(0, 0), tile=ct.matmul(ta, tb))
    ct.store(out2, index=(0, 0), tile=(ta @ tb) * 2)


def test_matmul_and_operator(mode):
    a, b = random((9, 13), "bfloat16"), random((13, 11), "bfloat16")
    out1, out2 = cu.zeros((9, 11), dtype=cu.float32), cu.zeros((9, 11), dtype=cu.float32)
    run(matmul_ops, mode, (1,), to_cu(a), to_cu(b), out1, out2, 9, 13, 11)
    want = a.astype(np.float32) @ b.astype(np.float32)
    assert_close(to_np(out1), want, rtol=1e-5, atol=1e-4)
    assert_close(to_np(out2), 2 * want, rtol=1e-5, atol=1e-4)
    assert BF16 is not None


# ---- epilogues on the accumulator (on the GPU it lives in the mma layout: test_gpu.py runs these) ----


@ct.kernel
def mma_epilogues(
    a, b, bias_r, bias_c, out, out16, rsum, rmax, csum, BM: ct.Constant[int], BN: ct.Constant[int],
    BK: ct.Constant[int], TF32: ct.Constant[bool]
):
    i, j = ct.bid(0), ct.bid(1)
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(i, k), shape=(BM, BK))
        tb = ct.load(b, index=(k, j), shape=(BK, BN))
        acc = ct.mma(ta, tb, acc, allow_tf32=TF32)
    r = ct.load(bias_r, index=(i,), shape=(BM,)).astype(ct.float32)  # one value per row
    c = ct.load(bias_c, index=(j,), shape=(BN,)).astype(ct.float32)  # one value per column
    y = ct.maximum(acc + r[:, None] - c[None, :], 0.0)
    ct.store(out, index=(i, j), tile=y)
    ct.store(out16, index=(i, j), tile=y.astype(out16.dtype))
    ct.store(rsum, index=(i, j), tile=ct.sum(y, axis=1, keepdims=True))
    ct.store(rmax, index=(i, j), tile=ct.max(acc, axis=1, keepdims=True))
    ct.store(csum, index=(i, j), tile=ct.sum(y, axis=0, keepdims=True))


def integer_valued(shape, dtype, rng):
    """Small integers in a float dtype: every product and sum of the kernels is exact in float32,
    so a result that differs in any element is a wrong element, whatever the summation order."""
    return rng.integers(-3, 4, size=shape).astype(np.float32).astype(np_dtype(dtype))


def epilogue_inputs(m, k, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (integer_valued((m, k), dtype, rng), integer_valued((k, n), dtype, rng),
            integer_valued(m, dtype, rng), integer_valued(n, dtype, rng))


def epilogue_reference(a, b, bias_r, bias_c, tiles, out16_dtype):
    """What mma_epilogues computes, on the arrays zero-padded to whole tiles (the padding of the
    loads), cut back to the outputs' shapes: out, out16, rsum (M, grid n), rmax, csum (grid m, N)."""
    bm, bn, _ = tiles
    m, n = a.shape[0], b.shape[1]
    mp, np_ = -(-m // bm) * bm, -(-n // bn) * bn
    acc = np.zeros((mp, np_), np.float64)
    acc[:m, :n] = a.astype(np.float64) @ b.astype(np.float64)
    r, c = np.zeros(mp), np.zeros(np_)
    r[:m], c[:n] = bias_r.astype(np.float64), bias_c.astype(np.float64)
    y = np.maximum(acc + r[:, None] - c[None, :], 0.0)
    rsum = y.reshape(mp, np_ // bn, bn).sum(axis=2)
    rmax = acc.reshape(mp, np_ // bn, bn).max(axis=2)
    csum = y.reshape(mp // bm, bm, np_).sum(axis=1)
    f32 = np.float32
    return (y[:m, :n].astype(f32), y[:m, :n].astype(f32).astype(out16_dtype), rsum[:m].astype(f32),
            rmax[:m].astype(f32), csum[:, :n].astype(f32))


def epilogue_outputs(m, n, tiles, out16_dtype, make):
    bm, bn, _ = tiles
    gm, gn = -(-m // bm), -(-n // bn)
    return [make((m, n), "float32"), make((m, n), out16_dtype), make((m, gn), "float32"),
            make((m, gn), "float32"), make((gm, n), "float32")]


EPILOGUE_CASES = [  # dtype, (M, K, N), (BM, BN, BK)
    ("bfloat16", (37, 50, 29), (16, 24, 16)),
    ("float16", (100, 64, 130), (64, 64, 32)),
    ("float32", (40, 24, 72), (32, 40, 8)),  # TF32 on the GPU
]


@pytest.mark.parametrize("dtype,mkn,tiles", EPILOGUE_CASES)
def test_mma_epilogues_exact(dtype, mkn, tiles, mode):
    m, k, n = mkn
    a, b, bias_r, bias_c = epilogue_inputs(m, k, n, dtype)
    out16 = "float16" if dtype == "float32" else dtype
    outs = epilogue_outputs(m, n, tiles, out16, lambda s, d: cu.zeros(s, dtype=cu.dtype(d)))
    grid = (-(-m // tiles[0]), -(-n // tiles[1]))
    run(mma_epilogues, mode, grid, *(to_cu(x) for x in (a, b, bias_r, bias_c)), *outs, *tiles, dtype == "float32")
    for got, want in zip(outs, epilogue_reference(a, b, bias_r, bias_c, tiles, np_dtype(out16)), strict=True):
        np.testing.assert_array_equal(to_np(got), want)


@ct.kernel
def mma_b_transposed(a, bt, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int],
                     TF32: ct.Constant[bool]):
    """out = a @ bt.T; on the GPU the transpose folds into the product (b staged as bt's rows)."""
    acc = ct.zeros((BM, BN), dtype=out.dtype)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK))
        tbt = ct.load(bt, index=(ct.bid(1), k), shape=(BN, BK))
        acc = ct.mma(ta, ct.transpose(tbt), acc, allow_tf32=TF32)
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=acc)


B_TRANSPOSED_CASES = [  # dtype, (M, K, N), (BM, BN, BK)
    ("bfloat16", (37, 50, 29), (32, 24, 16)),
    ("float16", (64, 40, 72), (64, 40, 32)),
    ("float32", (20, 30, 18), (16, 16, 8)),
    ("float64", (9, 10, 11), (8, 8, 8)),
]


@pytest.mark.parametrize("dtype,mkn,tiles", B_TRANSPOSED_CASES)
def test_mma_b_transposed_exact(dtype, mkn, tiles, mode):
    m, k, n = mkn
    rng = np.random.default_rng(3)
    a, bt = integer_valued((m, k), dtype, rng), integer_valued((n, k), dtype, rng)
    acc = "float64" if dtype == "float64" else "float32"
    out = cu.zeros((m, n), dtype=cu.dtype(acc))
    grid = (-(-m // tiles[0]), -(-n // tiles[1]))
    run(mma_b_transposed, mode, grid, to_cu(a), to_cu(bt), out, *tiles, dtype == "float32")
    np.testing.assert_array_equal(to_np(out), (a.astype(np.float64) @ bt.astype(np.float64).T).astype(acc))


@ct.kernel
def mma_invariant_a(a, b, out, BM: ct.Constant[int], BN: ct.Constant[int], K: ct.Constant[int],
                    TF32: ct.Constant[bool]):
    """out = a @ (the sum of b's column blocks): a is loaded once, before the loop (on the GPU it is
    staged in shared memory once, like attention's q)."""
    ta = ct.load(a, index=(ct.bid(0), 0), shape=(BM, K))
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for j in range(ct.cdiv(b.shape[1], BN)):
        acc = ct.mma(ta, ct.load(b, index=(0, j), shape=(K, BN)), acc, allow_tf32=TF32)
    ct.store(out, index=(ct.bid(0), 0), tile=acc)


INVARIANT_A_CASES = [  # dtype, (M, K, N), (BM, BN)
    ("bfloat16", (37, 40, 70), (32, 24)),
    ("float16", (64, 64, 128), (64, 64)),  # GPU: a in panels once, b through the ring (staged.h)
    ("bfloat16", (200, 128, 300), (128, 128)),  # the same, two panels of K, ragged
    ("float32", (20, 12, 50), (16, 16)),
]


def invariant_a_reference(a, b, bn):
    n = b.shape[1]
    padded = np.zeros((b.shape[0], -(-n // bn) * bn))
    padded[:, :n] = b.astype(np.float64)
    return (a.astype(np.float64) @ padded.reshape(b.shape[0], -1, bn).sum(axis=1)).astype(np.float32)


@pytest.mark.parametrize("dtype,mkn,tiles", INVARIANT_A_CASES)
def test_mma_invariant_a_exact(dtype, mkn, tiles, mode):
    m, k, n = mkn
    rng = np.random.default_rng(5)
    a, b = integer_valued((m, k), dtype, rng), integer_valued((k, n), dtype, rng)
    out = cu.zeros((m, tiles[1]), dtype=cu.float32)
    run(mma_invariant_a, mode, (-(-m // tiles[0]),), to_cu(a), to_cu(b), out, *tiles, k, dtype == "float32")
    np.testing.assert_array_equal(to_np(out), invariant_a_reference(a, b, tiles[1]))


# Shapes the GPU stages (cupric/tile/staged.h): a ring of cp.async stages read by wgmma. Ragged
# sizes exercise the edge copies (element by element, zero-padded); K = 130 gives rows that are not
# 16-byte aligned. dtype, (M, K, N), (BM, BN, BK), threads (0: chosen by the compiler).
STAGED_CASES = [
    ("bfloat16", (300, 200, 260), (128, 128, 64), 0),
    ("float16", (130, 256, 200), (64, 128, 64), 0),
    ("bfloat16", (256, 192, 512), (128, 256, 64), 256),  # 256-wide products, one block per SM
    ("bfloat16", (140, 130, 70), (128, 64, 128), 256),  # two panels per stage; unaligned rows
]


@pytest.mark.parametrize("dtype,mkn,tiles,threads", STAGED_CASES)
def test_mma_staged_exact(dtype, mkn, tiles, threads, mode):
    m, k, n = mkn
    a, b, bias_r, bias_c = epilogue_inputs(m, k, n, dtype)
    outs = epilogue_outputs(m, n, tiles, dtype, lambda s, d: cu.zeros(s, dtype=cu.dtype(d)))
    kernel = ct.kernel(mma_epilogues.fn, num_threads=threads) if threads else mma_epilogues
    grid = (-(-m // tiles[0]), -(-n // tiles[1]))
    run(kernel, mode, grid, *(to_cu(x) for x in (a, b, bias_r, bias_c)), *outs, *tiles, False)
    for got, want in zip(outs, epilogue_reference(a, b, bias_r, bias_c, tiles, np_dtype(dtype)), strict=True):
        np.testing.assert_array_equal(to_np(got), want)


def test_staged_products_are_emitted():
    """The GPU source of a K loop of two 16-bit loads and a product keeps a ring of stages and
    calls mma_staged; tiles the ring cannot take (BK 32) keep the register-staged product."""
    a, bias = cu.zeros((256, 256), dtype=cu.bfloat16), cu.zeros(256, dtype=cu.bfloat16)
    outs = epilogue_outputs(256, 256, (128, 128, 64), "bfloat16", lambda s, d: cu.zeros(s, dtype=cu.dtype(d)))
    src = mma_epilogues.inspect(a, a, bias, bias, *outs, 128, 128, 64, False)
    assert "::cu::tile::mma_staged<128, 64, 128, false" in src["cuda_source"]
    assert "copy_async<128, 64>" in src["cuda_source"] and "copy_async<64, 128>" in src["cuda_source"]
    assert src["cuda"]["threads"] == 256 and src["cuda"]["smem_bytes"] >= 3 * 32768
    assert "mma(128x128, warps 8x1)" in src["ir_layout"]
    src = mma_epilogues.inspect(a, a, bias, bias, *outs, 128, 128, 32, False)
    assert "mma_staged" not in src["cuda_source"] and "copy_async" not in src["cuda_source"]
    bt = mma_b_transposed.inspect(a, a, cu.zeros((256, 256), dtype=cu.float32), 128, 128, 64, False)
    assert "::cu::tile::mma_staged<128, 64, 128, true" in bt["cuda_source"]


# ---- ct.mma and cu.matmul agree (the tile language's product and the library's) ----

ACC = {"float16": "float32", "bfloat16": "float32", "float32": "float32", "float64": "float64"}


def mma_and_matmul(dtype, device, launch):
    """(the tile kernel's float32/float64 accumulator, cu.matmul in the accumulator's dtype,
    cu.matmul in the operands' dtype) for 70 x 96 @ 96 x 45 random operands on `device`."""
    rng = np.random.default_rng(23)
    a, b = random((70, 96), dtype, rng), random((96, 45), dtype, rng)
    ca, cb = to_cu(a).to_device(device), to_cu(b).to_device(device)
    acc = cu.dtype(ACC[dtype])
    out = cu.zeros((70, 45), dtype=acc, device=device)
    launch((ct.cdiv(70, 32), ct.cdiv(45, 16)), ca, cb, out, 32, 16, 32, acc)
    return out, cu.matmul(ca, cb, dtype=acc), cu.matmul(ca, cb)


def check_mma_matches_matmul(dtype, out, same_loop, rounded):
    """Products of float16/bfloat16 values are exact in float32, so the accumulator and matmul's
    float32 loop differ only by the order of the sums; matmul in the operands' dtype is the same
    sum rounded once to that dtype."""
    got, want = to_np(out).astype(np.float64), to_np(same_loop).astype(np.float64)
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=0, atol=(1e-12 if dtype == "float64" else 2e-6) * scale)
    if dtype in ("float16", "bfloat16"):
        half = to_np(rounded).astype(np.float64)
        ulp = {"float16": 2**-11, "bfloat16": 2**-8}[dtype]  # half a unit in the last place: one rounding
        assert np.all(np.abs(half - got) <= ulp * np.abs(got) + 2e-6 * scale)


@pytest.mark.parametrize("dtype", list(ACC))
def test_mma_agrees_with_cu_matmul(dtype, mode):
    check_mma_matches_matmul(dtype, *mma_and_matmul(dtype, "cpu", lambda g, *xs: run(mma_blocked, mode, g, *xs)))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_mma_agrees_with_cu_matmul_on_gpu(dtype):
    check_mma_matches_matmul(dtype, *mma_and_matmul(dtype, "cuda:0", lambda g, *xs: mma_blocked[g](*xs)))
