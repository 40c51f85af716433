"""The tile compiler's named stages (src/tile/emit.cpp): kernel.inspect()["stages"] holds the IR
after each, in the order the compiler runs them, and CUPRIC_TILE_DUMP prints it to stderr."""

import re

import cupric as cu
import numpy as np
import pytest
from cupric import _cupric
from cupric import tile as ct
from cupric.tile import _cuda
from cupric.tile._paths import include_dir
from tile_helpers import random, to_cu, to_np

_tile = _cupric._tile
HOST, CUDA = _tile.stage_names("host"), _tile.stage_names("cuda")
HEADER = re.compile(r"^// cupric\.tile: kernel `(\w+)` after stage (\w+) \((\w+)\)$", re.M)


@ct.kernel
def canonical_demo(x, out, B: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(B,))
    six = ct.float32(2.0) * 3  # constants: folded
    ct.exp(t)  # unused: removed
    ct.store(out, index=(ct.bid(0),), tile=t * six + t * six)  # the same product twice: merged


@ct.kernel
def product_loop(a, bt, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK))
        tbt = ct.load(bt, index=(ct.bid(1), k), shape=(BN, BK))
        acc = ct.mma(ta, ct.transpose(tbt), acc)
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=acc)


def demo_args():
    return to_cu(random(16, "float32")), cu.zeros(16, dtype=cu.float32), 16


def product_args(bk):
    a, bt = (to_cu(random((128, 128), "bfloat16")) for _ in range(2))
    return a, bt, cu.zeros((128, 128), dtype=cu.float32), 128, 128, bk


def headers(err):
    return HEADER.findall(err)


def test_inspect_lists_every_registered_stage_in_order():
    info = canonical_demo.inspect(*demo_args())
    assert HOST[0] == "frontend" and CUDA[: len(HOST)] == HOST  # both targets start with the canonical stages
    assert CUDA[len(HOST) :] == [
        "fold_transposes",
        "stage_products",
        "widen_float8_products",
        "pipeline_loads",
        "assign_layouts",
    ]
    assert list(info["stages"]) == HOST + [s for s in CUDA if s not in HOST]
    # the keys from before the stages had names
    assert info["ir"] == info["stages"]["frontend"]
    assert info["ir_canonical"] == info["stages"]["remove_dead_code"]
    assert info["ir_layout"] == info["stages"]["assign_layouts"]


def test_each_stage_shows_the_ir_after_it():
    s = canonical_demo.inspect(*demo_args())["stages"]
    assert "ufunc multiply" in s["frontend"] and "constant 6 : f32" not in s["frontend"]
    assert "constant 6 : f32" in s["fold_constants"]
    same_twice = re.compile(r"ufunc add (%\d+), \1 ")
    assert not same_twice.search(s["fold_constants"]) and same_twice.search(s["merge_common_subexpressions"])
    assert "ufunc exp" in s["merge_common_subexpressions"] and "ufunc exp" not in s["remove_dead_code"]
    # the GPU's stages, on a K loop of bf16 products that can be staged (K tiles of 64)
    g = product_loop.inspect(*product_args(64))["stages"]
    assert "permute" in g["remove_dead_code"] and "b_transposed" not in g["remove_dead_code"]
    assert "permute" not in g["fold_transposes"] and "b_transposed" in g["fold_transposes"]
    assert "staged(" not in g["fold_transposes"]
    assert g["stage_products"].count("staged(ring)") == 2
    assert re.search(r" = for .* staged\(\d stages", g["stage_products"])
    assert "mma(128x128" not in g["pipeline_loads"] and "mma(128x128, warps 8x1)" in g["assign_layouts"]
    # K tiles of 32 are not staged: pipeline_loads issues both loads an iteration ahead instead
    p = product_loop.inspect(*product_args(32))["stages"]
    assert "staged(" not in p["stage_products"]

    def loads_before_loop(ir):
        return ir[: ir.index(" = for ")].count(" = load ")

    assert loads_before_loop(p["stage_products"]) == 0 and loads_before_loop(p["pipeline_loads"]) == 2


def test_dump_prints_the_ir_after_the_named_stage(monkeypatch, capfd):
    monkeypatch.setenv("CUPRIC_TILE_DUMP", "fold_constants")
    stages = canonical_demo.inspect(*demo_args())["stages"]
    err = capfd.readouterr().err
    assert headers(err) == [("canonical_demo", "fold_constants", "host"), ("canonical_demo", "fold_constants", "cuda")]
    first = err.split("\n", 1)[1]
    assert first.startswith(stages["fold_constants"]) and "constant 6 : f32" in first


def test_dump_all_and_lists_of_stages(monkeypatch, capfd):
    monkeypatch.setenv("CUPRIC_TILE_DUMP", "all")
    canonical_demo.inspect(*demo_args())
    got = headers(capfd.readouterr().err)
    assert got == [("canonical_demo", s, "host") for s in HOST] + [("canonical_demo", s, "cuda") for s in CUDA]
    monkeypatch.setenv("CUPRIC_TILE_DUMP", "assign_layouts,frontend")
    canonical_demo.inspect(*demo_args())
    got = headers(capfd.readouterr().err)
    assert [(stage, target) for _, stage, target in got] == [
        ("frontend", "host"),
        ("frontend", "cuda"),
        ("assign_layouts", "cuda"),
    ]


def test_unknown_stage_is_an_error_that_names_the_stages(monkeypatch):
    monkeypatch.setenv("CUPRIC_TILE_DUMP", "frontend,layouts")
    with pytest.raises(ValueError) as err:
        canonical_demo.inspect(*demo_args())
    message = str(err.value)
    assert "CUPRIC_TILE_DUMP: unknown stage 'layouts'" in message
    assert all(name in message for name in CUDA) and message.endswith("or all")


@pytest.mark.skipif(not _tile.host_compiler()["available"], reason="no C++ compiler for the CPU target")
def test_dump_on_launch_compiles_past_the_kernel_index(monkeypatch, capfd):
    """A launch compiles and dumps even where an earlier process left the kernel in the index."""
    monkeypatch.setenv("CUPRIC_TILE_DUMP", "remove_dead_code")
    kernel = ct.kernel(canonical_demo.fn)  # nothing in memory yet
    x, out, n = demo_args()
    kernel[(1,)](x, out, n)
    np.testing.assert_allclose(to_np(out), 12 * to_np(x), rtol=1e-6)
    assert headers(capfd.readouterr().err) == [("canonical_demo", "remove_dead_code", "host")]


@pytest.mark.nvrtc
def test_device_function_target_renders_a_one_thread_device_function():
    """The `device_function` target (FFT callbacks): the canonical stages only, then the host body
    as a __device__ function taking the block and the parameters in order; NVRTC compiles it."""
    assert _tile.stage_names("device_function") == HOST
    b = _tile.Builder("scaled")
    x = b.param_scalar("x", "float32", False)
    out = b.param_array("out", "float32", 1)
    two = b.constant(2.0, "float32")
    b.store(out, [b.constant(0)], b.reshape(b.ufunc("multiply", [x, b.ufunc("add", [two, two])]), [1]), False)
    r = b.finish().emit("device_function")
    src = r["source"]
    assert r["entry"] == "scaled"
    assert "#define CUPRIC_TILE_THREADS 1" in src
    assert re.search(r"__device__ __forceinline__ void scaled\(const ::cu::tile::Block& blk, const float \w+, "
                     r"const ::cu::tile::ArrayRef<float, 1>& \w+\)", src), src
    assert "4.0f" in src and "add" not in src.split("void scaled", 1)[1]  # constants folded first
    caller = src + (
        'extern "C" __global__ void k(float* o) {\n  const ::cu::tile::Block blk{};\n'
        "  scaled(blk, 1.5f, ::cu::tile::ArrayRef<float, 1>{o, {1}, {1}});\n}\n"
    )
    ptx = _cuda._program(caller, include_dir(), "sm_90").compile("ptx").code.decode()
    assert re.search(rf"\b{np.float32(6.0).view(np.int32)}\b", ptx), ptx  # 1.5 * (2 + 2), inlined and folded
