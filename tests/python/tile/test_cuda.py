"""The CUDA side of cupric.tile without a GPU: the CUDA C++ generated for every example kernel and
a set of op kernels compiles for sm_90a with NVRTC (cupric.cuda.Program, through the shared
compile cache; skipped without NVRTC); cache hits skip compilation; CUDA array arguments
(__cuda_array_interface__, DLPack) and scalars are turned into the kernel's parameters. Running
the kernels needs a GPU: test_gpu.py."""

import json
import sys
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from cupric.tile import _cuda, _kernel
from tile_helpers import random, to_cu, to_np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "tile"))

import attention  # noqa: E402
import layernorm  # noqa: E402
import matmul  # noqa: E402
import saxpy  # noqa: E402
import softmax  # noqa: E402
import stencil  # noqa: E402
import test_elementwise as ew  # noqa: E402
import test_memory as mem  # noqa: E402
import test_mma  # noqa: E402
import test_reduce as red  # noqa: E402
import test_shape as shp  # noqa: E402


def f32(*s):
    return to_cu(random(s, "float32"))


def bf(*s):
    return to_cu(random(s, "bfloat16"))


CASES = {
    "saxpy": lambda: (saxpy.saxpy_kernel, (2.0, f32(1000), f32(1000), f32(1000), 1024)),
    "softmax_f32": lambda: (softmax.softmax_kernel, (f32(4, 777), f32(4, 777), 777)),
    "softmax_bf16_8192": lambda: (softmax.softmax_kernel, (bf(4, 8192), bf(4, 8192), 8192)),
    "layernorm": lambda: (
        layernorm.layernorm_kernel,
        (f32(4, 333), f32(333), f32(333), f32(4, 333), f32(4), f32(4), 1e-5, 333),
    ),
    "matmul_bf16": lambda: (matmul.matmul_kernel, (bf(100, 64), bf(64, 128), bf(128), bf(100, 128), 64, 64, 32)),
    "matmul_f32": lambda: (matmul.matmul_kernel, (f32(100, 64), f32(64, 128), f32(128), f32(100, 128), 32, 48, 16)),
    "attention_causal_bf16": lambda: (
        attention.attention_kernel,
        (bf(2, 100, 64), bf(2, 100, 64), bf(2, 100, 64), bf(2, 100, 64), 0.125, True, 64, 64, 64),
    ),
    "attention_f32": lambda: (
        attention.attention_kernel,
        (f32(2, 100, 32), f32(2, 100, 32), f32(2, 100, 32), f32(2, 100, 32), 0.125, False, 32, 32, 32),
    ),
    "stencil": lambda: (stencil.stencil_kernel, (f32(100, 100), f32(100, 100), 0.5, 0.1, 32, 64)),
    "unary_all_bf16": lambda: (
        ew.apply_unary,
        (bf(64), cu.zeros((len(ew.UNARY_FLOAT), 64), dtype=cu.float64), ew.UNARY_FLOAT, 64),
    ),
    "binary_all_f64": lambda: (
        ew.apply_binary,
        (
            to_cu(random(64, "float64")),
            to_cu(random(64, "float64")),
            cu.zeros((len(ew.BINARY_FLOAT), 64), dtype=cu.float64),
            ew.BINARY_FLOAT,
            64,
        ),
    ),
    "reductions_f16": lambda: (
        red.reduce_axes,
        (
            to_cu(random((6, 37), "float16")),
            *(
                cu.zeros((1, 37), dtype=cu.float16),
                cu.zeros(6, dtype=cu.float16),
                cu.zeros(37, dtype=cu.float16),
                cu.zeros((6, 1), dtype=cu.float16),
                cu.zeros(6, dtype=cu.float16),
                cu.zeros(1, dtype=cu.float16),
            ),
            6,
            37,
        ),
    ),
    "argmax": lambda: (
        red.arg_and_nan,
        (
            f32(5, 19),
            cu.zeros(5, dtype=cu.int32),
            cu.zeros((1, 19), dtype=cu.int32),
            cu.zeros(5, dtype=cu.float32),
            cu.zeros(1, dtype=cu.int32),
            5,
            19,
        ),
    ),
    "scans": lambda: (
        red.scans,
        (
            to_cu(random((4, 23), "int32")),
            cu.zeros((4, 23), dtype=cu.int64),
            cu.zeros((4, 23), dtype=cu.int64),
            cu.zeros((4, 23), dtype=cu.float64),
            cu.zeros(92, dtype=cu.int64),
            4,
            23,
        ),
    ),
    "shapes": lambda: (
        shp.shapes,
        (
            f32(3, 5, 7),
            cu.zeros((15, 7), dtype=cu.float32),
            cu.zeros((7, 3, 5), dtype=cu.float32),
            cu.zeros((35, 3), dtype=cu.float32),
            cu.zeros((1, 1, 35), dtype=cu.float32),
            cu.zeros((3, 35), dtype=cu.float32),
            3,
            5,
            7,
        ),
    ),
    "gather_scatter": lambda: (
        mem.gather_scatter,
        (f32(50), to_cu(np.arange(40, dtype=np.int32)), f32(40), f32(50), 40),
    ),
    "atomics": lambda: (
        mem.histogram,
        (
            to_cu(np.arange(100, dtype=np.int32)),
            cu.zeros(7, dtype=cu.int32),
            cu.zeros(1, dtype=cu.int32),
            cu.zeros(1, dtype=cu.float32),
            64,
            7,
        ),
    ),
    "bf16_atomic_add": lambda: (mem.float_atomics, (bf(256), bf(4), 64)),
    **{
        f"mma_b_transposed_{dtype}": (
            lambda dtype=dtype, mkn=mkn, tiles=tiles: (
                test_mma.mma_b_transposed,
                (
                    to_cu(random(mkn[:2], dtype)),
                    to_cu(random((mkn[2], mkn[1]), dtype)),
                    cu.zeros((mkn[0], mkn[2]), dtype=cu.float64 if dtype == "float64" else cu.float32),
                    *tiles,
                    dtype == "float32",
                ),
            )
        )
        for dtype, mkn, tiles in test_mma.B_TRANSPOSED_CASES
    },
    **{
        f"mma_invariant_a_{dtype}": (
            lambda dtype=dtype, mkn=mkn, tiles=tiles: (
                test_mma.mma_invariant_a,
                (
                    to_cu(random(mkn[:2], dtype)),
                    to_cu(random(mkn[1:], dtype)),
                    cu.zeros((mkn[0], tiles[1]), dtype=cu.float32),
                    *tiles,
                    mkn[1],
                    dtype == "float32",
                ),
            )
        )
        for dtype, mkn, tiles in test_mma.INVARIANT_A_CASES
    },
    **{
        f"mma_epilogues_{dtype}": (lambda dtype=dtype, mkn=mkn, tiles=tiles: _epilogue_case(dtype, mkn, tiles))
        for dtype, mkn, tiles in test_mma.EPILOGUE_CASES
    },
    **{  # the ring of stages and wgmma (cupric/tile/staged.h)
        f"mma_staged_{i}": (lambda dtype=dtype, mkn=mkn, tiles=tiles, t=t: _epilogue_case(dtype, mkn, tiles, t))
        for i, (dtype, mkn, tiles, t) in enumerate(test_mma.STAGED_CASES)
    },
}


def _epilogue_case(dtype, mkn, tiles, threads=0):
    m, k, n = mkn
    ins = [to_cu(x) for x in test_mma.epilogue_inputs(m, k, n, dtype)]
    out16 = "float16" if dtype == "float32" else dtype
    outs = test_mma.epilogue_outputs(m, n, tiles, out16, lambda s, d: cu.zeros(s, dtype=cu.dtype(d)))
    kernel = ct.kernel(test_mma.mma_epilogues.fn, num_threads=threads) if threads else test_mma.mma_epilogues
    return kernel, (*ins, *outs, *tiles, dtype == "float32")


def _compile(src, entry):
    # with the PTX (the same NVRTC run), so later tests that read the PTX of these kernels hit the cache
    r = _cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a", outputs=("cubin", "ptx"))
    assert r["compiler"] == "nvrtc"
    assert r["cubin"][:4] == b"\x7fELF"
    assert f"Compiling entry function '{entry}' for 'sm_90a'" in r["log"]
    return r


@pytest.mark.nvrtc
@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_cuda_compiles_for_sm90a(name):
    kernel, args = CASES[name]()
    info = kernel.inspect(*args)
    _compile(info["cuda_source"], info["cuda"]["entry"])


@pytest.mark.nvrtc
def test_mma_accumulator_stays_in_registers():
    """bf16 128x128x32 at 256 threads (the benchmark's tiles): the layout pass keeps the loop-carried
    accumulator in the mma layout with no conversion, the a and b tiles are loaded one iteration
    ahead (pipeline_loads); the PTX has the 2 (k16 steps) x 2 x 8 (fragments
    per warp) mma.sync of the K loop, reads fragments with ldmatrix, and moves no float32 through
    shared memory (the accumulator is never staged); ptxas fits it in registers without spills."""
    args = (bf(256, 256), bf(256, 256), cu.zeros((256, 256), dtype=cu.float32), 128, 128, 32, cu.float32)
    info = test_mma.mma_blocked.inspect(*args, compile_cuda=True)
    loop = info["ir_layout"][info["ir_layout"].index(" = for ") :].splitlines()[0]
    assert ": f32[128, 128] mma(128x128, warps 4x2), bf16[128, 32], bf16[32, 128]" in loop  # a and b prefetched
    assert "convert_layout" not in info["ir_layout"]
    ptx = info["ptx"]
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") == 32
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 2 * 2
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 2 * 4
    assert "st.shared.f32" not in ptx and "ld.shared.f32" not in ptx and "st.shared.v2.f32" not in ptx
    # a and b staged into two buffers by turns: one barrier per K step, one after the loop
    assert ptx.count("bar.sync") == 2 and "_phase ^= 1;" in info["cuda_source"]
    assert info["registers"] <= 255 and info["spill_stores"] == 0 and info["spill_loads"] == 0
    # attention's q @ k^T: the transpose folds into the product, k and v are loaded an iteration ahead
    q = bf(2, 100, 128)
    ir = attention.attention_kernel.inspect(q, q, q, q, 0.1, False, 64, 32, 128)["ir_layout"]
    assert "b_transposed" in ir and "permute" not in ir and ir.count("load %") == 5
    src = attention.attention_kernel.inspect(q, q, q, q, 0.1, False, 64, 32, 128)["cuda_source"]
    assert src.count("::cu::tile::mma_stage_a<64, 128, 32, false,") == 1 and "StagedA<::cu::tile::bf16>" in src
    # the example with its bias + relu epilogue, as benchmarked: no spills, 37 KiB of shared memory
    m = matmul.matmul_kernel.inspect(bf(256, 256), bf(256, 256), bf(256), bf(256, 256), 128, 128, 32, compile_cuda=True)
    assert m["cuda"]["threads"] == 256 and m["cuda"]["smem_bytes"] < 48 * 1024
    assert m["registers"] <= 255 and m["spill_stores"] == 0 and m["spill_loads"] == 0


@pytest.mark.nvrtc
def test_debug_kernel_compiles_for_cuda():
    from test_frontend import debug_kernel

    dk = ct.kernel(debug_kernel.fn, debug=True)
    info = dk.inspect(f32(8), 4)
    assert "PrintLine" in info["cuda_source"] and "check(blk" in info["cuda_source"]
    _compile(info["cuda_source"], info["cuda"]["entry"])


def test_tf32_mma_compiles_for_cuda():
    @ct.kernel
    def tf32_mma(a, b, out, M: ct.Constant[int], K: ct.Constant[int], N: ct.Constant[int]):
        ta = ct.load(a, index=(0, 0), shape=(M, K))
        tb = ct.load(b, index=(0, 0), shape=(K, N))
        ct.store(out, index=(0, 0), tile=ct.mma(ta, tb, ct.zeros((M, N)), allow_tf32=True))

    a, b, out = f32(20, 12), f32(12, 10), f32(20, 10)
    tf32_mma[(1,)](a, b, out, 20, 12, 10)  # the CPU computes exact float32 products
    np.testing.assert_allclose(np.asarray(out), np.asarray(a) @ np.asarray(b), rtol=1e-5, atol=1e-5)
    src = tf32_mma.inspect(a, b, out, 20, 12, 10)["cuda_source"]
    assert "float, true>(blk" in src
    if _cuda.nvrtc_available():
        _compile(src, "tf32_mma")


# ---- the compile cache and inspection ----------------------------------------------------------


@pytest.mark.nvrtc
def test_cache_hit_skips_compilation(cache_dir):
    cache = cu.cuda.compile_cache
    kernel, args = CASES["softmax_f32"]()
    src = kernel.inspect(*args)["cuda_source"]
    first = _cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a")
    misses = cache.stats()["misses"]
    second = _cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a")
    assert not first["cache_hit"] and second["cache_hit"]
    assert cache.stats()["misses"] == misses  # NVRTC did not run again
    assert second["cubin"] == first["cubin"]
    assert second["seconds"] < first["seconds"]
    cache.clear(memory=True, disk=False)  # a new process: the disk tier answers
    third = _cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a")
    assert third["cache_hit"] and third["cubin"] == first["cubin"]
    # the header library is part of the key (NVRTC's key covers the source only)
    prog = _cuda._program(src, _kernel.include_dir(), "sm_90a")
    assert prog.source.startswith("// cupric.tile headers ")
    assert _cuda._headers_digest(_kernel.include_dir()) in prog.source


def test_unused_module_globals_leave_the_ptx():
    """Module-scope variables the code never names leave the PTX (the driver sets up a global
    segment for a module that has any: ~0.2-0.4 ms of a first launch); named ones, extern
    declarations and everything else stay."""
    ptx = (
        ".version 9.0\n.target sm_90a\n.address_size 64\n\n"
        ".extern .global .align 4 .u32 outside;\n"
        ".global .align 4 .u32 _ZN2cu4tile8kThreadsE = 128;\n"
        ".global .align 1 .u8 _ZNSt17integral_constantIbLb0EE5valueE;\n"
        ".visible .global .align 8 .b8 table[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};\n"
        ".global .align 4 .u32 counter;\n"
        ".global .align 4 .b8 unused_array[8] = {0, 0, 0, 0, 0, 0, 0, 1};\n\n"
        ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
        "\tld.global.u32 \t%r1, [counter+4];\n\tmov.u64 \t%rd1, table;\n\tld.global.u32 \t%r2, [outside];\n\tret;\n}\n"
    )
    out = _cuda._without_unused_globals(ptx)
    kept = [ln for ln in out.splitlines() if ".global" in ln and not ln.startswith("\t")]
    assert kept == [
        ".extern .global .align 4 .u32 outside;",
        ".visible .global .align 8 .b8 table[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};",
        ".global .align 4 .u32 counter;",
    ]
    assert out.replace("\n", "") == "".join(
        ln for ln in ptx.splitlines() if "kThreads" not in ln and "integral_constant" not in ln and "unused" not in ln
    )
    assert _cuda._without_unused_globals(out) == out  # nothing more to take


@pytest.mark.nvrtc
@pytest.mark.skipif(_cuda.ptxas_path() is None, reason="no ptxas (CUDA toolkit or nvidia-cuda-nvcc)")
def test_tile_cubins_hold_no_unused_globals(cache_dir, monkeypatch):
    """NVRTC's PTX goes through ptxas without the constants the headers declare: the same machine
    code as NVRTC's own cubin, without a global segment; where no ptxas is found, NVRTC's cubin."""
    kernel, args = CASES["softmax_f32"]()
    src = kernel.inspect(*args)["cuda_source"]
    ours = _cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a", outputs=("cubin", "ptx"))
    assert ours["cubin"][:4] == b"\x7fELF" and b".nv.global" not in ours["cubin"]
    assert ".global .align" not in ours["ptx"]
    monkeypatch.setattr(_cuda, "ptxas_path", lambda: None)
    nvrtc = _cuda.compile_source(src + "\n// again\n", _kernel.include_dir(), arch="sm_90a")
    assert nvrtc["cubin"][:4] == b"\x7fELF" and b".nv.global" in nvrtc["cubin"]  # NVRTC's, globals and all
    text = [_elf_section(c, ".text." + _cuda._entry_name(src)) for c in (ours["cubin"], nvrtc["cubin"])]
    assert text[0] and text[0] == text[1]  # the same machine code
    assert _cuda.resources_from_log(ours["log"])[0] == _cuda.resources_from_log(nvrtc["log"])[0]  # ptxas' report
    monkeypatch.undo()
    monkeypatch.setattr(_cuda, "_assembled", lambda *_: None)  # a ptxas that refuses NVRTC's PTX (an older one)
    refused = _cuda.compile_source(src + "\n// once more\n", _kernel.include_dir(), arch="sm_90a")
    assert b".nv.global" in refused["cubin"]
    assert _elf_section(refused["cubin"], ".text." + _cuda._entry_name(src)) == text[1]


def _elf_section(elf, name):
    """The bytes of one section of a 64-bit little-endian ELF file (a cubin)."""
    import struct

    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    size, count, names = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * size) for i in range(count)]
    table = headers[names][4]
    for h in headers:
        if elf[table + h[0] : elf.index(b"\0", table + h[0])].decode() == name:
            return elf[h[4] : h[4] + h[5]]
    return b""


@pytest.mark.nvrtc
def test_an_option_nvrtc_refuses_is_dropped(monkeypatch):
    """Optional options (-minimal, ptxas' report) are dropped, in order, by an NVRTC that does not
    know them; the kernel still compiles."""
    bogus = "--no-such-nvrtc-option"
    monkeypatch.setattr(_cuda, "_OPTIONAL", (bogus, *_cuda._OPTIONAL))
    monkeypatch.setattr(_cuda, "_EXTRA", [*_cuda._EXTRA, bogus])
    kernel, args = CASES["saxpy"]()
    r = _cuda.compile_source(kernel.inspect(*args)["cuda_source"], _kernel.include_dir(), arch="sm_90a")
    assert r["cubin"][:4] == b"\x7fELF" and bogus not in _cuda._EXTRA
    assert "-minimal" in _cuda._EXTRA and "registers" in r["log"]  # the others stay


@pytest.mark.nvrtc
def test_inspect_reports_ptx_and_resources():
    x = f32(1000)
    info = saxpy.saxpy_kernel.inspect(2.0, x, x, x, 1024, compile_cuda=True)
    assert ".entry saxpy_kernel" in info["ptx"] and ".target sm_90a" in info["ptx"]
    assert info["compiler"] == "nvrtc"
    assert 0 < info["registers"] <= 255
    assert info["spill_stores"] == 0 and info["spill_loads"] == 0
    assert "registers" in info["resources"]
    assert info["dynamic_shared_memory"] >= 16
    a = bf(64, 64)
    info = matmul.matmul_kernel.inspect(a, a, bf(64), a, 64, 64, 32, compile_cuda=True)
    assert info["cuda"]["smem_bytes"] > 0 and info["dynamic_shared_memory"] == info["cuda"]["smem_bytes"]


def test_resources_from_log():
    log = (
        "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
        "ptxas         .     584 bytes stack frame, 892 bytes spill stores, 792 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 584 bytes cumulative stack size\n"
    )
    info, text = _cuda.resources_from_log(log)
    assert info == {"registers": 255, "spill_stores": 892, "spill_loads": 792}
    assert "Compiling" not in text and "255 registers" in text


# ---- CUDA arguments (no GPU needed: nothing is dereferenced) ---------------------------------------


class FakeCudaArray:
    """An object with __cuda_array_interface__ (as CuPy and PyTorch have) at a made-up address."""

    def __init__(self, shape, typestr, strides=None, ptr=0x7F0000001000, stream=None):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (ptr, False),
            "strides": strides,
            "version": 3,
        }
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream


def test_device_array_from_cuda_array_interface():
    a = _cuda.device_array(FakeCudaArray((3, 5), "<f4"))
    assert (a.ptr, a.dtype, a.shape, a.strides, a.ndim) == (0x7F0000001000, cu.float32, (3, 5), (5, 1), 2)
    b = _cuda.device_array(FakeCudaArray((4, 6), "<f8", strides=(8, 64)))  # Fortran order
    assert b.dtype == cu.float64 and b.strides == (1, 8)
    c = _cuda.device_array(FakeCudaArray((7,), "<i8", strides=(-8,)))  # reversed view
    assert c.dtype == cu.int64 and c.strides == (-1,)
    assert _cuda.device_array(FakeCudaArray((2, 0), "<f2")).strides == (1, 1)
    assert a.stream is None  # no producer stream to wait for
    assert _cuda.device_array(FakeCudaArray((3,), "<f4", stream=1)).stream == 0  # the legacy default stream
    assert _cuda.device_array(FakeCudaArray((3,), "<f4", stream=0x1234)).stream == 0x1234
    with pytest.raises(ValueError, match="not multiples of the item size 4"):
        _cuda.device_array(FakeCudaArray((3,), "<f4", strides=(6,)))
    with pytest.raises(TypeError, match="typestr"):
        _cuda.device_array(FakeCudaArray((3,), "|V3"))


def test_host_arrays_are_not_device_arrays():
    x = np.ones(4, np.float32)
    assert _cuda.device_array(x) is None
    assert _cuda.device_array(cu.asarray(x)) is None

    class HostDLPack:  # e.g. a PyTorch CPU tensor
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None):
            return x.__dlpack__()

    assert _cuda.device_array(HostDLPack()) is None


def test_kernel_specialises_on_cuda_arrays():
    """CUDA arrays choose the CUDA device and specialise on their dtype and ndim."""
    x, y = FakeCudaArray((1000,), "<f4"), FakeCudaArray((1000,), "<f4", ptr=0x7F0000100000)
    key, specs, runtime, device = saxpy.saxpy_kernel._specialise((2.0, x, y, y, 1024))
    assert device == "cuda:0" if not cu.cuda.is_available() else device.startswith("cuda:")
    assert key[1] == ("A", "float32", 1) and specs[1][1][1] == cu.float32
    assert [type(v).__name__ for v in runtime] == ["float", "ForeignArray", "ForeignArray", "ForeignArray"]
    with pytest.raises(ValueError, match="different devices"):
        saxpy.saxpy_kernel._specialise((2.0, x, cu.ones(1000, dtype=cu.float32, device="cpu"), y, 1024))


# the emitter's description of a kernel taking a 2-d float32 array and float64, bfloat16, bool scalars
PARAMS = _cuda.kernel_params(
    [("data", "float32"), *[("extent", "int64")] * 2, *[("stride", "int64")] * 2]
    + [("scalar", "float64"), ("scalar", "bfloat16"), ("scalar", "bool")]
)


def test_flatten_arguments_follow_the_parameter_types():
    x = _cuda.device_array(FakeCudaArray((3, 4), "<f4"))
    flat = _cuda.flatten_arguments([x, 0.5, 1.5, True], PARAMS)
    assert flat[:5] == [0x7F0000001000, 3, 4, 4, 1]
    assert flat[5] == 0.5 and flat[5].dtype == np.float64
    assert flat[6].dtype == np.uint16 and flat[6] == 0x3FC0  # bfloat16 1.5
    assert flat[7].dtype == np.bool_ and flat[7].nbytes == 1
    assert _cuda.pack_scalar(1.0, np.dtype("float16")) == 0x3C00
    assert _cuda.pack_scalar(-3, np.dtype("int32")).dtype == np.int32
    assert _cuda.pack_scalar(3.0, np.dtype("float32")).dtype == np.float32
    with pytest.raises(TypeError, match="no CUDA packing"):
        _cuda.pack_scalar(1j, np.dtype("complex64"))
    with pytest.raises(TypeError, match="kernel parameters packed"):
        _cuda.flatten_arguments([x], PARAMS)


def test_the_emitter_describes_parameters_by_role_and_dtype():
    """Launches read the parameters as (role, dtype) pairs; the C types are for reading only."""
    x = f32(1000)
    info = saxpy.saxpy_kernel.inspect(2.0, x, x, x, 1024)["cuda"]
    assert info["params"][:4] == [
        ("scalar", np.float64),
        ("data", np.float32),
        ("extent", np.int64),
        ("stride", np.int64),
    ]
    assert info["param_types"][:4] == ["double", "float*", "long long", "long long"]
    assert len(info["params"]) == len(info["param_types"]) == 10


def test_grid_limits_are_checked_before_launch():
    k = _cuda.CudaKernel.__new__(_cuda.CudaKernel)
    k.threads, k.smem, k._configs = 128, 16, {}
    with pytest.raises(ValueError, match="y and z up to 65535"):
        k.config((1, 70000, 1))


class FakeCudaDLPack:
    """A DLPack producer that says kDLCUDA (as a bfloat16 PyTorch tensor does); its memory is host
    memory that nothing reads."""

    def __init__(self, base):
        self.base = base

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        import ctypes

        capsule = self.base.__dlpack__()  # a legacy capsule: DLManagedTensor, device at byte 8
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        ctypes.c_int32.from_address(get(capsule, b"dltensor") + 8).value = 2  # kDLCUDA
        return capsule


def test_device_array_from_dlpack_on_cuda():
    base = cu.asarray(np.arange(12, dtype=np.float32).reshape(3, 4)).astype(cu.bfloat16)[:, ::2]
    a = _cuda.device_array(FakeCudaDLPack(base))
    assert (a.ptr, a.dtype, a.shape, a.strides, a.device) == (base._data_ptr, cu.bfloat16, (3, 2), (4, 2), "cuda:0")


def test_packed_bytes_match_the_kernel_parameters():
    """What cupric.cuda.launch receives: 8-byte pointers, shapes and strides, then each scalar in
    its own C type's bytes."""
    x = _cuda.device_array(FakeCudaArray((3, 4), "<f4"))
    flat = _cuda.flatten_arguments([x, 0.5, 1.5, True], PARAMS)
    for sizes in ([8, 8, 8, 8, 8, 8, 2, 1], None):  # driver tells the sizes, or cannot
        data, offsets = cu.cuda._pack_arguments(sizes, *flat)
        assert offsets == [0, 8, 16, 24, 32, 40, 48, 50]
        assert np.frombuffer(data[:40], np.int64).tolist() == [0x7F0000001000, 3, 4, 4, 1]
        assert np.frombuffer(data[40:48], np.float64)[0] == 0.5
        assert data[48:50] == b"\xc0\x3f" and data[50:51] == b"\x01"


class StandInRuntime:
    """cupric.cuda with NVRTC for real and the GPU parts recorded: what a launch would do on a
    device (the compile, the kernel's shared memory limit, the config, the packed arguments)."""

    def __init__(self):
        real = cu.cuda
        self.real, self.launches = real, []
        self.CompileError, self.CompileCache = real.CompileError, real.CompileCache
        self.versions, self.compile_cache, self.LaunchConfig, self.Stream = (
            real.versions,
            real.compile_cache,
            real.LaunchConfig,
            real.Stream,
        )
        runtime = self

        class Device:
            arch, index, multiprocessor_count, compute_capability = "sm_90", 0, 132, (9, 0)

            def __init__(self, index=0):
                self.index = index

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        class Kernel:
            def __init__(self, obj, name):
                self.obj, self.name, self.max_dynamic_shared_memory = obj, name, 48 * 1024

        class Object:
            def __init__(self, obj):
                self.obj, self.code, self.log = obj, obj.code, obj.log

            def get_kernel(self, name, device=None):
                return Kernel(self.obj, name)

        class Program:
            def __init__(self, *args, **kwargs):
                assert kwargs["arch"] == "sm_90a"  # Hopper: the 'a' target
                self.prog = real.Program(*args, **kwargs)
                self.source = self.prog.source

            def compile(self, target, with_ptx=False):
                return Object(self.prog.compile(target, with_ptx=with_ptx))

        class CurrentStream:
            handle = 0

        self.Device, self.Program = Device, Program
        self.ObjectCode = lambda code, kind, name="": Object(real.ObjectCode(code, kind, name))
        self.current_stream = lambda device=None: CurrentStream()
        self.is_available = lambda: True
        self.launch = lambda stream, config, kernel, *args: runtime.launches.append((stream, config, kernel, args))


@pytest.fixture
def stand_in_runtime(monkeypatch):
    rt = StandInRuntime()
    monkeypatch.setattr(_cuda, "_cuda_module", lambda: rt)
    for k in (saxpy.saxpy_kernel, matmul.matmul_kernel):  # launch plans of a real GPU would bypass it
        k._forget_plans()
    yield rt
    for k in (saxpy.saxpy_kernel, matmul.matmul_kernel):  # forget the stand-in kernels (test_gpu.py)
        k._forget_plans()
        for c in k.cache.values():
            c.cuda_kernels.clear()


@pytest.mark.nvrtc
def test_launch_path_with_a_stand_in_runtime(stand_in_runtime, monkeypatch):
    rt = stand_in_runtime
    monkeypatch.setenv("CUPRIC_TILE_TMA", "0")  # the cp.async ring (the stand-in is an sm_90: TMA by default)
    x = FakeCudaArray((1000,), "<f4")
    saxpy.saxpy_kernel[(1,)](0.125, x, x, x, 1024)
    saxpy.saxpy_kernel[(1,)](0.5, x, x, x, 1024)  # loaded once, launched twice
    assert len(rt.launches) == 2
    stream, config, kernel, args = rt.launches[0]
    assert stream.handle == 0 and config.grid == (1, 1, 1) and config.block == (128, 1, 1)
    assert kernel.name == "saxpy_kernel" and rt.launches[1][2] is kernel
    # the driver checks each argument's size against the kernel's parameters: do the same here
    data, offsets = cu.cuda._pack_arguments([8] * 10, *args)
    assert np.frombuffer(data, np.float64)[0] == 0.125
    assert np.frombuffer(data[8:], np.int64).tolist() == [0x7F0000001000, 1000, 1] * 3
    assert rt.launches[1][3][0] == 0.5

    a, b, bias = FakeCudaArray((200, 64), "<f2"), FakeCudaArray((64, 300), "<f2"), FakeCudaArray((300,), "<f2")
    matmul.matmul_kernel[(2, 3)](a, b, bias, a, 128, 128, 128)  # BK=128: a and b staged in 68 KiB
    _, config, kernel, args = rt.launches[-1]
    assert config.grid == (2, 3, 1) and config.block == (256, 1, 1)
    assert config.shared_memory > 48 * 1024 and kernel.max_dynamic_shared_memory == config.shared_memory
    data, _ = cu.cuda._pack_arguments([8] * 18, *args)
    assert np.frombuffer(data, np.int64)[5:10].tolist() == [0x7F0000001000, 64, 300, 300, 1]
    with pytest.raises(ValueError, match="y and z up to 65535"):
        matmul.matmul_kernel[(1, 70000)](a, b, bias, a, 128, 128, 128)
    matmul.matmul_kernel[(0, 3)](a, b, bias, a, 128, 128, 128)
    assert len(rt.launches) == 3  # an empty grid launches nothing


@pytest.mark.nvrtc
def test_new_process_launches_from_the_index(stand_in_runtime, cache_dir):
    """A specialisation compiled before is launched from the disk index: no frontend, no NVRTC."""
    rt = stand_in_runtime
    x = FakeCudaArray((1000,), "<f4")
    saxpy.saxpy_kernel.cache.clear()
    saxpy.saxpy_kernel[(1,)](0.25, x, x, x, 512)
    first = next(iter(saxpy.saxpy_kernel.cache.values()))
    assert not first.cuda_kernels[0].compiled.get("index_hit")
    assert list((cache_dir / "v2" / "index").rglob("*.bin"))
    saxpy.saxpy_kernel.cache.clear()  # as in a new process
    saxpy.saxpy_kernel[(1,)](0.25, x, x, x, 512)
    again = next(iter(saxpy.saxpy_kernel.cache.values()))
    k = again.cuda_kernels[0]
    assert k.compiled["index_hit"] and again._function is None  # the frontend did not run
    assert k.params == first.cuda_kernels[0].params and k.threads == first.cuda_kernels[0].threads
    assert rt.launches[-1][3] == rt.launches[-2][3]  # the same packed arguments
    assert k.kernel.obj.code == first.cuda_kernels[0].kernel.obj.code  # the same cubin


@pytest.mark.nvrtc
def test_index_entries_not_of_the_expected_form_are_rebuilt(stand_in_runtime, cache_dir):
    """An index entry names its cubin by a cache key and holds exactly the launch facts: one that
    names anything else (a path, another folder) or holds other facts is deleted with a warning,
    and the kernel is compiled and indexed again."""
    x = FakeCudaArray((1000,), "<f4")
    saxpy.saxpy_kernel.cache.clear()
    saxpy.saxpy_kernel[(1,)](0.25, x, x, x, 512)
    key = _cuda._index_key(next(iter(saxpy.saxpy_kernel.cache.values())), stand_in_runtime, 0)
    good = json.loads(cu.cuda.compile_cache.get("index", key))
    bad_entries = [
        {**good, "cubin": "../../../../tmp/elsewhere"},
        {**good, "path": "/tmp/elsewhere.cubin"},
        {**good, "threads": 0},
        {k: v for k, v in good.items() if k != "entry"},
        {**good, "entry": "saxpy(); system(\"x\")"},
        {**good, "params": [["data", "float32*"], *good["params"][1:]]},  # a C type, not a dtype name
        {**good, "params": [["pointer", "float32"], *good["params"][1:]]},
    ]
    for bad in bad_entries:
        cu.cuda.compile_cache.put("index", key, json.dumps(bad).encode())
        saxpy.saxpy_kernel.cache.clear()
        with pytest.warns(RuntimeWarning, match="deleted the kernel index entry"):
            saxpy.saxpy_kernel[(1,)](0.25, x, x, x, 512)
        k = next(iter(saxpy.saxpy_kernel.cache.values())).cuda_kernels[0]
        assert not k.compiled.get("index_hit") and k.threads == good["threads"]
        assert json.loads(cu.cuda.compile_cache.get("index", key)) == good  # indexed again


@pytest.mark.skipif(_cuda.nvcc_path() is None, reason="nvcc is not installed")
def test_nvcc_fallback_compiles():
    """Where NVRTC cannot be loaded, nvcc compiles the same source (with its own std headers)."""
    kernel, args = CASES["softmax_f32"]()
    src = kernel.inspect(*args)["cuda_source"]
    r = _cuda._compile_with_nvcc(src, _kernel.include_dir(), "sm_90a", ("cubin",), _cuda.nvcc_path())
    assert r["compiler"] == "nvcc" and r["cubin"][:4] == b"\x7fELF"
    assert _cuda.resources_from_log(r["log"])[0]["registers"] > 0


def test_header_hash_is_kept_by_listing_and_follows_changes(tmp_path, cache_dir):
    """The device headers' hash (part of every CUDA cache key) is memoised under the cache folder
    by the headers' names, sizes and modification times: a new process lists them instead of
    hashing them, and a changed header gives a new hash."""
    import hashlib
    import shutil

    inc = tmp_path / "include"
    shutil.copytree(_kernel.include_dir(), inc)

    def content_hash():
        h = hashlib.sha256()
        for p in sorted(inc.rglob("*")):
            if p.is_file():
                h.update(str(p.relative_to(inc)).encode() + b"\0" + p.read_bytes() + b"\0")
        return h.hexdigest()[:32]

    digest = _cuda._headers_digest.__wrapped__  # without the in-process cache
    first = digest(str(inc))
    assert first == content_hash() and len(list((cache_dir / "v2" / "headers").rglob("*.bin"))) == 1
    assert digest(str(inc)) == first  # from the memo
    with open(inc / "cupric" / "tile" / "tile.h", "a") as f:
        f.write("\n// changed\n")
    second = digest(str(inc))
    assert second != first and second == content_hash()


def test_index_keys_follow_the_header_listing(tmp_path):
    """The kernel index names the headers by their listing (names, sizes, modification times, made
    in C++ once per process at the first launch), not by their content: an edited header gives
    another hash; the CUDA backend's own kernel bodies (cupric/kernels, which tile kernels never
    include) do not count."""
    import shutil
    import subprocess
    import sys

    inc = tmp_path / "include"
    shutil.copytree(_kernel.include_dir(), inc)
    code = "import sys, cupric; print(cupric._cupric._tile.headers_hash(sys.argv[1]))"

    def listing():  # a new process each time: the hash is made once per process
        out = subprocess.run([sys.executable, "-c", code, str(inc)], capture_output=True, text=True, check=True)
        return out.stdout.strip()

    first = listing()
    assert len(first) == 64 and listing() == first
    (inc / "cupric" / "kernels" / "extra.h").write_text("// not a tile header\n")
    assert listing() == first
    with open(inc / "cupric" / "tile" / "memory.h", "a") as f:
        f.write("\n// edited\n")
    assert listing() != first


def test_installed_headers_are_named_by_the_build_stamp(monkeypatch):
    """An installed copy of the headers (beside the extension) changes only with the extension, so
    the index names it by the build stamp without listing it; a checkout's headers are listed."""
    import os

    from cupric.tile import _paths

    installed = os.path.join(os.path.dirname(os.path.abspath(cu._cupric.__file__)), "device_include")
    checkout = str(Path(_kernel.include_dir()).resolve())
    listed = cu._cupric._tile.headers_hash(checkout)

    def no_listing(include):
        raise AssertionError(f"listed {include}")

    monkeypatch.setattr(cu._cupric._tile, "headers_hash", no_listing)
    assert _paths.headers_identity(installed) == f"installed with {_paths.build_stamp()}"
    monkeypatch.undo()
    if os.path.dirname(checkout) != os.path.dirname(installed):  # (a checkout: its headers are listed)
        assert _paths.headers_identity(checkout) == listed


def test_attention_keeps_its_row_statistics_in_registers():
    """At tiles the GPU stages (k and v through the ring, wgmma), attention's running max and sum
    are slices of the accumulator layout: the row reductions, the masks and the broadcasts back
    need no shared memory, so the loop has one barrier (the ring's)."""
    q = cu.zeros((2, 256, 128), dtype=cu.bfloat16)
    info = attention.attention_kernel.inspect(q, q, q, q, 0.1, False, 128, 64, 128)
    src, ir = info["cuda_source"], info["ir_layout"]
    assert "convert_layout" not in ir
    assert "reduce max" in ir and "f32[128] rows of mma(128x_, warps 8x1)" in ir
    assert "b1[1, 64] columns of mma(_x64, warps 8x1)" in ir
    assert src.count("mma_staged<") == 2 and "_panels" in src
    loop = src[src.index("for (::cu::tile::i64") :]
    assert loop.count("stage_ready") == 1 and loop[: loop.index("staged_loop_end")].count("__syncthreads") == 0


@ct.kernel
def _a_in_two_loops(a, b, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    ta = ct.load(a, index=(ct.bid(0), 0), shape=(BM, BK))
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for j in range(ct.cdiv(b.shape[1], BN)):
        acc = ct.mma(ta, ct.load(b, index=(0, j), shape=(BK, BN)), acc)
    for j in range(2):
        acc = ct.mma(ta, ct.load(b, index=(1, j), shape=(BK, BN)), acc)
    ct.store(out, index=(ct.bid(0), 0), tile=acc)


@pytest.mark.nvrtc
def test_an_operand_shared_by_two_loops_is_not_staged():
    """A loop-invariant a that products of two loops read stays a register tile (staging it into
    panels for one loop would leave the other without it); the kernel compiles and runs on the CPU."""
    an, bn = (random((128, 256), "bfloat16", np.random.default_rng(i)) for i in range(2))
    a, b = to_cu(an), to_cu(bn)
    out = cu.zeros((128, 64), dtype=cu.float32)
    info = _a_in_two_loops.inspect(a, b, out, 128, 64, 64)
    assert "mma_staged" not in info["cuda_source"]
    _compile(info["cuda_source"], "_a_in_two_loops")
    _a_in_two_loops[(1,)](a, b, out, 128, 64, 64)
    an, bn = an.astype(np.float32), bn.astype(np.float32)
    want = an[:, :64] @ (sum(bn[:64, 64 * j : 64 * j + 64] for j in range(4)) + bn[64:128, :64] + bn[64:128, 64:128])
    np.testing.assert_allclose(to_np(out), want, rtol=1e-4, atol=1e-3)


@pytest.mark.nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_staged_products_compile_for_every_arch(arch):
    """The generated CUDA is arch-neutral: staged products compile to wgmma on sm_90a and to the
    ldmatrix + mma.sync fallback (from the same panels) elsewhere."""
    q = cu.zeros((2, 256, 128), dtype=cu.bfloat16)
    kernels = [(attention.attention_kernel, (q, q, q, q, 0.1, True, 128, 64, 128))]
    for dtype, mkn, tiles, threads in test_mma.STAGED_CASES[:2]:
        kernels.append(_epilogue_case(dtype, mkn, tiles, threads))
    for kernel, args in kernels:
        src = kernel.inspect(*args)["cuda_source"]
        assert "mma_staged" in src
        r = _cuda.compile_source(src, _kernel.include_dir(), arch=arch, outputs=("cubin", "ptx"))
        assert r["cubin"][:4] == b"\x7fELF"
        assert ("wgmma.mma_async" in r["ptx"]) == (arch == "sm_90a")
        assert ("mma.sync.aligned.m16n8k16" in r["ptx"]) == (arch != "sm_90a")
