"""FP8 (float8_e4m3fn / float8_e5m2) products in cupric.tile (examples/tile/fp8_matmul.py): a (M, K)
and b (N, K), float32 accumulation, per-tensor scales on the accumulator. On the CPU and in the
interpreter: exact integer-valued products against a float64 reference of the scaled inputs. Without
a GPU: the generated CUDA for sm_90a (wgmma k32 e4m3/e5m2 from K-major panels, TMA boxes of 128
one-byte columns) and sm_80 (the same ring, fragments widened to float16 for mma.sync), and fp8
products no ring stages (b given as (K, N)) widened to float16. On the GPU (marked gpu): exact at
every ring mode, ragged edges, both fp8 types, tile counts below and above the SM count."""

import sys
from pathlib import Path

import cupric as cu
import ml_dtypes
import numpy as np
import pytest
from cupric import tile as ct
from cupric.tile import _cuda
from tile_helpers import RING_MODES, set_ring_mode

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "tile"))

import fp8_matmul as f8m  # noqa: E402

FP8 = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def _integers(shape, rng, lo=-4, hi=5):
    return rng.integers(lo, hi, shape).astype(np.float32)


def _inputs(m, n, k, kind, seed):
    rng = np.random.default_rng(seed)
    a, b = _integers((m, k), rng).astype(FP8[kind]), _integers((n, k), rng).astype(FP8[kind])
    return a, b, np.array([0.5], np.float32), np.array([0.25], np.float32)


@pytest.mark.parametrize("kind", list(FP8))
@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize(("m", "n", "k"), [(64, 64, 128), (70, 50, 300)])
def test_fp8_products_are_exact_on_the_cpu(kind, interpret, m, n, k):
    a, b, sa, sb = _inputs(m, n, k, kind, m + n + k)
    got = f8m.fp8_matmul(
        cu.asarray(a), cu.asarray(b), cu.asarray(sa), cu.asarray(sb), out_dtype=cu.float32, interpret=interpret
    )
    np.testing.assert_array_equal(np.asarray(got), f8m.reference(a, b, sa, sb))


def test_fp8_products_round_like_numpy_into_bfloat16():
    a, b, sa, sb = _inputs(64, 64, 256, "e4m3", 3)
    got = f8m.fp8_matmul(cu.asarray(a), cu.asarray(b), cu.asarray(sa), cu.asarray(sb))
    assert got.dtype == cu.bfloat16
    want = f8m.reference(a, b, sa, sb).astype(np.float32).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))


def test_bad_inputs_are_refused_with_their_values_and_left_as_they_were():
    a, b, sa, sb = _inputs(64, 64, 128, "e4m3", 4)
    ca, cb, csa, csb = (cu.asarray(x) for x in (a, b, sa, sb))
    before = [np.asarray(x).copy() for x in (ca, cb, csa, csb)]
    with pytest.raises(
        TypeError, match="must both be float8_e4m3fn or both float8_e5m2, got float8_e4m3fn, float8_e5m2"
    ):
        f8m.fp8_matmul(ca, cu.asarray(b.astype(np.float32).astype(ml_dtypes.float8_e5m2)), csa, csb)
    with pytest.raises(ValueError, match=r"must share K, got \(64, 128\) and \(64, 96\)"):
        f8m.fp8_matmul(ca, cb[:, :96], csa, csb)
    with pytest.raises(ValueError, match=r"scale_b must be a float32 array of one element, got float32 \(2,\)"):
        f8m.fp8_matmul(ca, cb, csa, cu.asarray(np.ones(2, np.float32)))
    for x, x0 in zip((ca, cb, csa, csb), before, strict=True):
        np.testing.assert_array_equal(np.asarray(x).view(np.uint8), x0.view(np.uint8))


@ct.kernel
def _mixed(a, b, out):
    acc = ct.zeros((16, 16), dtype=ct.float16)
    ct.store(
        out,
        index=(0, 0),
        tile=ct.mma(ct.load(a, index=(0, 0), shape=(16, 32)), ct.load(b, index=(0, 0), shape=(32, 16)), acc),
    )


def test_mma_names_the_accumulator_fp8_products_need():
    a = np.zeros((16, 32), ml_dtypes.float8_e4m3fn)
    b = np.zeros((32, 16), ml_dtypes.float8_e4m3fn)
    with pytest.raises(ct.CompileError, match="accumulator of float8_e4m3fn inputs must be float32, got float16"):
        _mixed[(1,)](a, b, np.zeros((16, 16), np.float16))
    with pytest.raises(ct.CompileError, match="same dtype, got float8_e4m3fn and float8_e5m2"):
        _mixed[(1,)](a, b.astype(np.float32).astype(ml_dtypes.float8_e5m2), np.zeros((16, 16), np.float16))


# ---- the generated CUDA, without a GPU -------------------------------------------------------------


def _emitted(mode, bm=128, bn=256, bk=128, m=300, n=200, k=384, kind="e4m3", kernel=None):
    t = FP8[kind]
    a, b = np.zeros((m, k), t), np.zeros((n, k), t)
    s = np.ones(1, np.float32)
    kernel = kernel or f8m.fp8_matmul_kernel
    args = (a, b, s, s, np.zeros((m, n), ml_dtypes.bfloat16), bm, bn, bk, 8)
    key, specs, *_ = kernel._specialise(args)
    return kernel.compiled(key, specs).function.emit("cuda", ring=mode)


def _compile(src, arch):
    from cupric.tile import _paths

    return _cuda.compile_source(src, _paths.include_dir(), arch=arch, outputs=("cubin", "ptx"))


@pytest.mark.nvrtc
@pytest.mark.parametrize("kind", list(FP8))
@pytest.mark.parametrize("mode", ["tma ws", "tma ws persistent", "cp.async"])
def test_staged_fp8_products_compile_to_wgmma_k32_and_fall_back_on_sm80(kind, mode):
    if not _cuda.nvrtc_available():
        pytest.skip("NVRTC not found")
    e = _emitted(mode, kind=kind)
    src = e["source"]
    assert f"mma_staged<128, 128, 256, true, 1, ::cu::tile::f8{kind}" in src  # b as (N, K): K-major
    if mode != "cp.async":  # TMA boxes of 128 one-byte columns; the bfloat16 epilogue's, 64 columns
        assert [m[2] for m in e["tensor_maps"]] == [128, 128, 64]
    ptx = _compile(src, "sm_90a")["ptx"]
    assert f"wgmma.mma_async.sync.aligned.m64n256k32.f32.{kind}.{kind}" in ptx
    ampere = _compile(src, "sm_80")["ptx"]
    assert "wgmma" not in ampere and "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ampere


@ct.kernel
def _fp8_kn(a, b, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], BK)):
        acc = ct.mma(
            ct.load(a, index=(ct.bid(0), k), shape=(BM, BK)), ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN)), acc
        )
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=acc)


def _kn_inputs(m, n, k, seed=5):
    rng = np.random.default_rng(seed)
    return _integers((m, k), rng).astype(FP8["e4m3"]), _integers((k, n), rng).astype(FP8["e4m3"])


@pytest.mark.nvrtc
def test_fp8_products_no_ring_stages_are_widened_to_float16():
    """b given as (K, N): wgmma reads no MN-major 8-bit operand, so the product takes float16 casts of
    its tiles (exact) on the mma.sync path."""
    if not _cuda.nvrtc_available():
        pytest.skip("NVRTC not found")
    a, b = _kn_inputs(128, 128, 256)
    args = (a, b, np.zeros((128, 128), np.float32), 64, 64, 128)
    key, specs, *_ = _fp8_kn._specialise(args)
    e = _fp8_kn.compiled(key, specs).function.emit("cuda", ring="tma ws")
    assert "mma_staged" not in e["source"] and "convert<::cu::tile::f16>" in e["source"]
    for arch in ("sm_90a", "sm_80"):
        assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in _compile(e["source"], arch)["ptx"]


def test_fp8_products_with_b_as_k_by_n_are_exact_on_the_cpu():
    a, b = _kn_inputs(100, 70, 300)
    out = np.zeros((100, 70), np.float32)
    _fp8_kn[(ct.cdiv(100, 64), ct.cdiv(70, 64))](a, b, out, 64, 64, 128)
    np.testing.assert_array_equal(out, a.astype(np.float64) @ b.astype(np.float64))


# ---- on the GPU ------------------------------------------------------------------------------------

MODES = RING_MODES


def _mode(monkeypatch, mode):
    set_ring_mode(monkeypatch, mode)
    f8m.fp8_matmul_kernel.cache.clear()


@pytest.mark.gpu
@pytest.mark.parametrize("kind", list(FP8))
@pytest.mark.parametrize("mode", list(MODES))
# whole tiles; ragged M, N and K; 4 x 66 = 264 tiles (twice the H200's 132 SMs: persistent blocks
# take two each); a K that is not a whole number of 16-byte chunks (rows of 1001 bytes: TMA cannot
# describe them, the cp.async fallback)
@pytest.mark.parametrize(("m", "n", "k"), [(256, 512, 512), (300, 200, 384), (512, 16896, 256), (129, 65, 1001)])
def test_fp8_products_are_exact_on_the_gpu(monkeypatch, kind, mode, m, n, k):
    _mode(monkeypatch, mode)
    a, b, sa, sb = _inputs(m, n, k, kind, m + n + k)
    dev = [cu.asarray(x, device="cuda") for x in (a, b, sa, sb)]
    got = f8m.fp8_matmul(*dev, out_dtype=cu.float32, bm=128, bn=256, bk=128)
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), f8m.reference(a, b, sa, sb))


@pytest.mark.gpu
def test_fp8_products_with_b_as_k_by_n_are_exact_on_the_gpu():
    a, b = _kn_inputs(300, 200, 384)
    out = cu.zeros((300, 200), dtype=cu.float32, device="cuda")
    _fp8_kn[(ct.cdiv(300, 64), ct.cdiv(200, 64))](
        cu.asarray(a, device="cuda"), cu.asarray(b, device="cuda"), out, 64, 64, 128
    )
    np.testing.assert_array_equal(np.asarray(out.to_device("cpu")), a.astype(np.float64) @ b.astype(np.float64))
