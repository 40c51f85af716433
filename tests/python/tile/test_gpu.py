"""cupric.tile on the GPU: every example kernel of examples/tile launched with PyTorch and CuPy
arrays (through __cuda_array_interface__ and DLPack) against its NumPy reference, with shapes that
are not multiples of the tiles, float32, float16 and bfloat16; streams, views, inspection.
Skipped without a CUDA GPU; `make gpu-check` runs it on the device."""

import math
import sys
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from tile_helpers import BF16, assert_close, random

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "tile"))

import attention  # noqa: E402
import layernorm  # noqa: E402
import matmul  # noqa: E402
import saxpy  # noqa: E402
import softmax  # noqa: E402
import stencil  # noqa: E402
import test_mma  # noqa: E402

pytestmark = pytest.mark.gpu


class Lib:
    """PyTorch or CuPy: NumPy arrays in, device arrays out, and back."""

    def __init__(self, name):
        self.name = name
        self.m = pytest.importorskip(name)

    def put(self, a):
        a = np.asarray(a)
        if self.name == "torch":
            t = self.m.from_numpy(np.ascontiguousarray(a.astype(np.float32) if a.dtype == BF16 else a)).to("cuda")
            return t.to(self.m.bfloat16) if a.dtype == BF16 else t
        if a.dtype == BF16:
            pytest.skip("CuPy has no bfloat16")
        return self.m.asarray(np.ascontiguousarray(a))

    def garbage(self, shape, dtype):
        """An output filled with NaN, so that an element the kernel misses shows."""
        return self.put(np.full(shape, np.nan, np.float32).astype(np.dtype(dtype) if dtype != "bfloat16" else BF16))

    def get(self, t):
        cu.cuda.current_stream().synchronize()
        self.sync()
        if self.name == "torch":
            return (t.float() if t.dtype == self.m.bfloat16 else t).cpu().numpy()
        return self.m.asnumpy(t)

    def sync(self):
        if self.name == "torch":
            self.m.cuda.synchronize()
        else:
            self.m.cuda.Device().synchronize()


@pytest.fixture(params=["torch", "cupy"])
def lib(request):
    return Lib(request.param)


def dtype_of(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("n,block", [(100_003, 4096), (1000, 300)])
def test_saxpy(lib, dtype, n, block):
    rng = np.random.default_rng(1)
    x, y = random(n, dtype, rng), random(n, dtype, rng)
    out = lib.garbage(n, dtype)
    saxpy.saxpy_kernel[(ct.cdiv(n, block),)](1.5, lib.put(x), lib.put(y), out, block)
    assert_close(lib.get(out).astype(np.float32), saxpy.reference(1.5, x, y).astype(np.float32), dtype)
    out = lib.garbage(n, dtype)
    saxpy.add_kernel[(ct.cdiv(n, block),)](lib.put(x), lib.put(y), out, block)
    want = (x.astype(np.float32) + y.astype(np.float32)).astype(x.dtype).astype(np.float32)
    assert_close(lib.get(out).astype(np.float32), want, dtype)


@pytest.mark.parametrize("dtype,shape", [("float32", (37, 1000)), ("bfloat16", (9, 333)), ("float32", (16, 8192))])
def test_softmax(lib, dtype, shape):
    x = random(shape, dtype)
    out = lib.garbage(shape, dtype)
    softmax.softmax_kernel[(shape[0],)](lib.put(x), out, shape[1])
    want = softmax.reference(x).astype(x.dtype).astype(np.float32)
    tol = dict(rtol=1e-4, atol=1e-6) if dtype == "float32" else {}
    assert_close(lib.get(out).astype(np.float32), want, dtype, **tol)


@pytest.mark.parametrize("dtype,shape", [("float32", (23, 301)), ("bfloat16", (23, 301)), ("float32", (8, 8192))])
def test_layernorm(lib, dtype, shape):
    rng = np.random.default_rng(3)
    rows, cols = shape
    x, w, b = random(shape, dtype, rng), random(cols, dtype, rng), random(cols, dtype, rng)
    y, mean, rstd = lib.garbage(shape, dtype), lib.garbage(rows, "float32"), lib.garbage(rows, "float32")
    layernorm.layernorm_kernel[(rows,)](lib.put(x), lib.put(w), lib.put(b), y, mean, rstd, 1e-5, cols)
    ry, rm, rr = layernorm.reference(x, w, b)
    tol = dict(rtol=3e-2, atol=6e-2) if dtype == "bfloat16" else dict(rtol=1e-4, atol=1e-4)
    assert_close(lib.get(y).astype(np.float32), ry.astype(x.dtype).astype(np.float32), **tol)
    assert_close(lib.get(mean), rm, rtol=1e-5, atol=1e-5)
    assert_close(lib.get(rstd), rr, rtol=1e-4, atol=1e-5)


MATMUL_TOL = {
    "float32": dict(rtol=1e-4, atol=1e-3),
    "bfloat16": dict(rtol=2e-2, atol=0.25),
    "float16": dict(rtol=2e-3, atol=2e-2),
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("mkn,tiles", [((130, 100, 90), (32, 48, 16)), ((257, 200, 300), (64, 64, 32))])
def test_matmul_bias_relu(lib, dtype, mkn, tiles):
    rng = np.random.default_rng(4)
    m, k, n = mkn
    bm, bn, bk = tiles
    a, b, bias = random((m, k), dtype, rng), random((k, n), dtype, rng), random(n, dtype, rng)
    out = lib.garbage((m, n), dtype)
    matmul.matmul_kernel[(ct.cdiv(m, bm), ct.cdiv(n, bn))](lib.put(a), lib.put(b), lib.put(bias), out, bm, bn, bk)
    want = matmul.reference(a, b, bias)
    assert_close(lib.get(out).astype(np.float32), want.astype(np.float32), **MATMUL_TOL[dtype])


@pytest.mark.parametrize(
    "dtype,mkn,tiles,threads",
    [
        *((d, mkn, t, 0) for d, mkn, t in test_mma.EPILOGUE_CASES),
        ("bfloat16", (130, 96, 200), (128, 128, 32), 256),  # the benchmark's tiles: 4 x 2 warps of 2 x 8 fragments
        ("bfloat16", (70, 40, 50), (64, 32, 32), 256),  # attention's S tile: 4 x 2 warps of 1 x 2
        ("float16", (33, 17, 9), (32, 16, 16), 64),  # 2 warps; K padded to 32
        ("bfloat16", (150, 64, 90), (128, 64, 64), 512),  # 16 warps
        ("float32", (50, 20, 30), (48, 24, 12), 128),  # TF32, K padded to 16
    ],
)
def test_mma_epilogues_exact(dtype, mkn, tiles, threads):
    """The accumulator in mma.sync's fragment layout, with the epilogues that read it by (row, column):
    broadcasts of row and column vectors, relu, astype, stores, row / column reductions. Inputs are small
    integers, so every result is exact: any element in the wrong place fails."""
    lib = Lib("torch")
    m, k, n = mkn
    a, b, bias_r, bias_c = test_mma.epilogue_inputs(m, k, n, dtype, seed=7)
    out16 = "float16" if dtype == "float32" else dtype
    outs = test_mma.epilogue_outputs(m, n, tiles, out16, lib.garbage)
    kernel = ct.kernel(test_mma.mma_epilogues.fn, num_threads=threads) if threads else test_mma.mma_epilogues
    grid = (ct.cdiv(m, tiles[0]), ct.cdiv(n, tiles[1]))
    kernel[grid](*(lib.put(x) for x in (a, b, bias_r, bias_c)), *outs, *tiles, dtype == "float32")
    want = test_mma.epilogue_reference(a, b, bias_r, bias_c, tiles, dtype_of(out16))
    for name, got, w in zip(("out", "out16", "rsum", "rmax", "csum"), outs, want, strict=True):
        np.testing.assert_array_equal(lib.get(got), w.astype(np.float32), err_msg=name)


@pytest.mark.parametrize("view", [False, True])
@pytest.mark.parametrize("dtype,mkn,tiles,threads", test_mma.STAGED_CASES)
def test_mma_staged_exact(dtype, mkn, tiles, threads, view):
    """K loops whose operands go through the ring of cp.async stages into wgmma (staged.h), with the
    epilogues of test_mma_epilogues_exact; `view`: a and b are column slices of wider arrays (rows
    not 16-byte aligned: the copies fall back to elements at every chunk that is not)."""
    lib = Lib("torch")
    m, k, n = mkn
    a, b, bias_r, bias_c = test_mma.epilogue_inputs(m, k, n, dtype, seed=11)
    outs = test_mma.epilogue_outputs(m, n, tiles, dtype, lib.garbage)
    kernel = ct.kernel(test_mma.mma_epilogues.fn, num_threads=threads) if threads else test_mma.mma_epilogues
    if view:
        wide_a, wide_b = lib.put(np.pad(a, ((0, 0), (3, 2)))), lib.put(np.pad(b, ((0, 0), (1, 4))))
        da, db = wide_a[:, 3 : 3 + k], wide_b[:, 1 : 1 + n]
    else:
        da, db = lib.put(a), lib.put(b)
    assert "mma_staged" in kernel.inspect(da, db, lib.put(bias_r), lib.put(bias_c), *outs, *tiles, False)["cuda_source"]
    grid = (ct.cdiv(m, tiles[0]), ct.cdiv(n, tiles[1]))
    kernel[grid](da, db, lib.put(bias_r), lib.put(bias_c), *outs, *tiles, False)
    want = test_mma.epilogue_reference(a, b, bias_r, bias_c, tiles, dtype_of(dtype))
    for name, got, w in zip(("out", "out16", "rsum", "rmax", "csum"), outs, want, strict=True):
        np.testing.assert_array_equal(lib.get(got), w.astype(np.float32), err_msg=name)


@pytest.mark.parametrize("dtype,mkn,tiles",
                         test_mma.B_TRANSPOSED_CASES + [("bfloat16", (200, 192, 136), (128, 128, 64))])
def test_mma_b_transposed_exact(dtype, mkn, tiles):
    """mma(a, transpose(x)): the transpose folds into the product (x staged as its rows, ldmatrix
    without .trans for 16-bit inputs); exact for integer-valued inputs."""
    lib = Lib("torch")
    m, k, n = mkn
    rng = np.random.default_rng(3)
    a, bt = test_mma.integer_valued((m, k), dtype, rng), test_mma.integer_valued((n, k), dtype, rng)
    acc = "float64" if dtype == "float64" else "float32"
    out = lib.garbage((m, n), acc)
    grid = (ct.cdiv(m, tiles[0]), ct.cdiv(n, tiles[1]))
    kernel = ct.kernel(test_mma.mma_b_transposed.fn, num_threads=256) if tiles[2] == 64 else test_mma.mma_b_transposed
    kernel[grid](lib.put(a), lib.put(bt), out, *tiles, dtype == "float32")
    np.testing.assert_array_equal(lib.get(out), (a.astype(np.float64) @ bt.astype(np.float64).T).astype(acc))


@pytest.mark.parametrize("dtype,mkn,tiles", test_mma.INVARIANT_A_CASES)
def test_mma_invariant_a_exact(dtype, mkn, tiles):
    """A loop-invariant a operand, staged in shared memory once before the loop (mma_stage_a)."""
    lib = Lib("torch")
    m, k, n = mkn
    rng = np.random.default_rng(5)
    a, b = test_mma.integer_valued((m, k), dtype, rng), test_mma.integer_valued((k, n), dtype, rng)
    out = lib.garbage((m, tiles[1]), "float32")
    test_mma.mma_invariant_a[(ct.cdiv(m, tiles[0]),)](lib.put(a), lib.put(b), out, *tiles, k, dtype == "float32")
    np.testing.assert_array_equal(lib.get(out), test_mma.invariant_a_reference(a, b, tiles[1]))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "dtype,shape,tiles",
    [
        ("float32", (3, 100, 32), (16, 24)),
        ("bfloat16", (3, 100, 32), (16, 24)),
        ("bfloat16", (2, 300, 128), (64, 64)),  # the benchmark's tiles
        ("bfloat16", (2, 300, 128), (128, 32)),  # > 48 KiB of dynamic shared memory
        ("bfloat16", (2, 300, 128), (128, 64)),  # k and v through the ring of stages, wgmma (staged.h)
        ("float16", (3, 260, 64), (128, 64)),
    ],
)
def test_attention(lib, causal, dtype, shape, tiles):
    rng = np.random.default_rng(5)
    bh, seq, d = shape
    bm, bn = tiles
    q, k, v = (random(shape, dtype, rng) for _ in range(3))
    out = lib.garbage(shape, dtype)
    attention.attention_kernel[(ct.cdiv(seq, bm), bh)](
        lib.put(q), lib.put(k), lib.put(v), out, 1.0 / math.sqrt(d), causal, bm, bn, d
    )
    want = attention.reference(q, k, v, causal)
    tol = {"bfloat16": dict(rtol=3e-2, atol=3e-2), "float16": dict(rtol=4e-3, atol=4e-3)}.get(
        dtype, dict(rtol=1e-4, atol=1e-4))
    assert_close(lib.get(out).astype(np.float32), want.astype(np.float32), **tol)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_stencil(lib, dtype):
    x = random((101, 203), dtype)
    out = lib.garbage(x.shape, dtype)
    stencil.stencil_kernel[(ct.cdiv(101, 32), ct.cdiv(203, 64))](lib.put(x), out, 0.5, 0.125, 32, 64)
    assert_close(lib.get(out).astype(np.float32), stencil.reference(x).astype(np.float32), dtype)


# ---- launch mechanics -------------------------------------------------------------------------------


def test_views_and_strides():
    """Transposed and sliced PyTorch views: strides reach the kernel in elements."""
    torch = pytest.importorskip("torch")
    x = random((64, 50), "float32")
    xt = torch.from_numpy(x).cuda().t()  # (50, 64), strides (1, 50)
    out = torch.full((50, 64), float("nan"), device="cuda")
    softmax.softmax_kernel[(50,)](xt, out, 64)
    assert_close(Lib("torch").get(out), softmax.reference(x.T), rtol=1e-4, atol=1e-6)
    y = torch.from_numpy(random(3000, "float32")).cuda()
    out = torch.full((1000,), float("nan"), device="cuda")
    saxpy.add_kernel[(4,)](y[::3], y[1::3], out, 256)
    yn = y.cpu().numpy()
    assert_close(Lib("torch").get(out), yn[::3] + yn[1::3])


def test_streams(lib):
    x, y = random(5000, "float32"), random(5000, "float32", np.random.default_rng(9))
    dx, dy, out = lib.put(x), lib.put(y), lib.garbage(5000, "float32")
    lib.sync()  # the inputs were written on the library's stream
    s = cu.cuda.Stream()
    with s:
        saxpy.saxpy_kernel[(5,)](2.0, dx, dy, out, 1024)
    s.synchronize()
    assert_close(lib.get(out), saxpy.reference(2.0, x, y))
    out2 = lib.garbage(5000, "float32")
    lib.sync()
    ct.launch(s, (5,), saxpy.saxpy_kernel, 3.0, dx, dy, out2, 1024)
    s.synchronize()
    assert_close(lib.get(out2), saxpy.reference(3.0, x, y))


def test_compiled_once_and_inspected():
    torch = pytest.importorskip("torch")
    x = torch.rand(4096, device="cuda")
    for _ in range(3):
        saxpy.saxpy_kernel[(4,)](2.0, x, x, x, 1024)
    cu.cuda.current_stream().synchronize()
    found = [c for c in saxpy.saxpy_kernel.cache.values() if c.cuda_kernels]
    assert found and all(len(c.cuda_kernels) == 1 for c in found)
    info = saxpy.saxpy_kernel.inspect(2.0, x, x, x, 1024, compile_cuda=True)
    assert info["attributes"]["num_registers"] > 0 and ".entry saxpy_kernel" in info["ptx"]


def test_grid_and_device_errors():
    torch = pytest.importorskip("torch")
    x = torch.zeros(16, device="cuda")
    with pytest.raises(ValueError, match="y and z up to 65535"):
        saxpy.add_kernel[(1, 70000)](x, x, x, 16)
    with pytest.raises(ValueError, match="different devices"):
        saxpy.add_kernel[(1,)](x, cu.zeros(16, dtype=cu.float32, device="cpu"), x, 16)
    saxpy.add_kernel[(0,)](x, x, x, 16)  # an empty grid launches nothing
