"""Streamed loads (src/tile/emit_ops.cpp, plan_streams): a load whose only use is a fused
elementwise loop later in its block, with nothing that writes memory between, is read run by run
inside that loop, and the loop's tile, when it is only stored, is written run by run — so that
neither is ever held whole (layer norm's w, b and y: 140 registers a thread before, 62 after, which
is 4 blocks per SM instead of 1). Without a GPU: what is emitted, where it is not, and that it
compiles with NVRTC; on the GPU (marked gpu): windows inside and across the arrays' edges, strided
and misaligned views (the element-by-element path), against NumPy."""

import sys
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from cupric.tile import _cuda, _paths

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "tile"))

import layernorm  # noqa: E402


def _source(kernel, *args):
    key, specs, *_ = kernel._specialise(args)
    return kernel.compiled(key, specs).cuda()["source"]


def _layernorm_args(rows, cols, block):
    x = np.zeros((rows, cols), np.float32)
    w = np.zeros(cols, np.float32)
    return (x, w, w, x, np.zeros(rows, np.float32), np.zeros(rows, np.float32), 1e-5, block)


def test_layer_norm_streams_w_b_and_y():
    src = _source(layernorm.layernorm_kernel, *_layernorm_args(64, 8192, 8192)).split("__global__")[1]
    assert src.count("::cu::tile::load_run<") == 2 and src.count("::cu::tile::store_run<") == 1
    assert src.count("::cu::tile::load<") == 1  # x: read by both reductions, held whole
    assert "Tile<float, 8192> v45" not in src  # y's tile is never declared


@ct.kernel
def _stored_twice(x, w, y, z, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(1, BLOCK))
    u = t * ct.load(w, index=(0,), shape=(BLOCK,))[None, :]
    ct.store(y, index=(ct.bid(0), 0), tile=u)
    ct.store(z, index=(ct.bid(0), 0), tile=u + 1.0)


@ct.kernel
def _store_between(x, w, y, BLOCK: ct.Constant[int]):
    wt = ct.load(w, index=(0,), shape=(BLOCK,))
    ct.store(w, index=(0,), tile=wt + 1.0)  # writes what the load read: the load stays where it is
    ct.store(y, index=(ct.bid(0), 0), tile=ct.load(x, index=(ct.bid(0), 0), shape=(1, BLOCK)) * wt[None, :])


def test_what_is_not_streamed():
    x, w = np.zeros((4, 256), np.float32), np.zeros(256, np.float32)
    src = _source(_stored_twice, x, w, x, x, 256).split("__global__")[1]
    # x and w stream into u's loop; u is stored twice, so it is held whole
    assert src.count("load_run<") == 2 and "store_run<" not in src
    src = _source(_store_between, x, w, x, 256).split("__global__")[1]
    # w's load is before a store (which may write it): not moved; x's load streams into the product,
    # which is only stored
    assert src.count("::cu::tile::load<") == 1 and src.count("load_run<") == 1 and src.count("store_run<") == 1
    # a tile whose last dimension is not a multiple of the vector width: as before
    src = _source(layernorm.layernorm_kernel, *_layernorm_args(4, 301, 301)).split("__global__")[1]
    assert "load_run<" not in src and "store_run<" not in src


@pytest.mark.nvrtc
def test_streamed_layer_norm_compiles_in_few_registers():
    if not _cuda.nvrtc_available():
        pytest.skip("NVRTC not found")
    src = _source(layernorm.layernorm_kernel, *_layernorm_args(64, 8192, 8192))
    info, _ = _cuda.resources_from_log(_cuda.compile_source(src, _paths.include_dir(), arch="sm_90a")["log"])
    # x's 32 values a thread, the runs and the addresses: 4 blocks of 256 threads per SM fit 64
    assert info["spill_stores"] == 0 and info["registers"] <= 72


# ---- on the GPU ------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("rows", "cols", "block", "view"),
    [(8, 8192, 8192, None), (23, 301, 512, None), (5, 1000, 1024, "strided_w"), (5, 1000, 1024, "offset_y")],
)
def test_streamed_layer_norm_on_the_gpu(rows, cols, block, view):
    rng = np.random.default_rng(rows + cols)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    w, b = rng.standard_normal(cols).astype(np.float32), rng.standard_normal(cols).astype(np.float32)
    dx, db = cu.asarray(x, device="cuda"), cu.asarray(b, device="cuda")
    dw = cu.asarray(np.repeat(w, 2), device="cuda")[::2] if view == "strided_w" else cu.asarray(w, device="cuda")
    if view == "offset_y":  # y's rows start 4 bytes past a 16-byte boundary: element by element
        flat = cu.full(rows * cols + 1, np.nan, dtype=cu.float32, device="cuda")
        y = flat[1:].reshape(rows, cols)
    else:
        y = cu.full((rows, cols), np.nan, dtype=cu.float32, device="cuda")
    mean, rstd = cu.zeros(rows, device="cuda"), cu.zeros(rows, device="cuda")
    layernorm.layernorm_kernel[(rows,)](dx, dw, db, y, mean, rstd, 1e-5, block)
    ry, rm, rr = layernorm.reference(x, w, b)
    np.testing.assert_allclose(np.asarray(y.to_device("cpu")), ry, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(mean.to_device("cpu")), rm, rtol=1e-5, atol=1e-5)
    if view == "offset_y":
        assert np.isnan(np.asarray(flat[:1].to_device("cpu"))).all()  # nothing written before y
