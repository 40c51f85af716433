"""The CUDA C++ that cupric.tile generates for every example kernel and a set of op kernels
compiles for sm_90a (through cupric.cuda.Program once it exists, else nvcc; skipped without
either). Running it needs a GPU: see `make gpu-check`."""

import sys
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from tile_helpers import random, to_cu
from cupric import tile as ct
from cupric.tile import _cuda, _kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "tile"))

import attention  # noqa: E402
import layernorm  # noqa: E402
import matmul  # noqa: E402
import saxpy  # noqa: E402
import softmax  # noqa: E402
import stencil  # noqa: E402
import test_tile_elementwise as ew  # noqa: E402
import test_memory as mem  # noqa: E402
import test_reduce as red  # noqa: E402
import test_shape as shp  # noqa: E402

pytestmark = pytest.mark.skipif(
    _cuda.nvcc_path() is None and _cuda._program_class() is None,
    reason="neither nvcc nor cupric.cuda.Program is available",
)


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
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_cuda_compiles_for_sm90a(name):
    kernel, args = CASES[name]()
    info = kernel.inspect(*args)
    src = info["cuda_source"]
    program = _cuda._program_class()
    if program is not None:  # cupric.cuda, after the merge: NVRTC in-process
        try:
            program(src, options=_cuda.nvrtc_options(_kernel.include_dir())).compile("cubin")
            return
        except (TypeError, AttributeError):
            if _cuda.nvcc_path() is None:
                raise  # the Program API differs from what this test assumes: see _cuda.py
    r = _cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a")
    assert r["cubin"][:4] == b"\x7fELF"
    assert f"Compiling entry function '{info['cuda']['entry']}' for 'sm_90a'" in r["log"]


def test_debug_kernel_compiles_for_cuda():
    from test_frontend import debug_kernel

    dk = ct.kernel(debug_kernel.fn, debug=True)
    src = dk.inspect(f32(8), 4)["cuda_source"]
    assert "PrintLine" in src and "check(blk" in src
    if _cuda._program_class() is None:
        _cuda.compile_source(src, _kernel.include_dir())


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
    if _cuda._program_class() is None:
        r = _cuda.compile_source(src, _kernel.include_dir())
        assert "Compiling entry function 'tf32_mma'" in r["log"]
