"""The generated tile sources: their shape on the page (one kernel per pattern, loops per
reduction or one whole-row tile) and, with NVRTC, that every variant the CPU tests make compiles
for the GPU too (the whole-row ones at the GPU's bound, without spills)."""

import math

import cupric as cu
import pytest
from cupric.jit._render import split_count, whole_row_threads
from jit_helpers import rand, rows_kinds
from test_jit import centre, dot, five_op, layer_norm, logsumexp, softmax, variance

CASES = {
    "five_op_flat": (five_op, lambda: (rand((5000,)), rand((5000,))), 1),
    "five_op_nd_views": (five_op, lambda: (rand((40, 60))[::2], rand((60,))), 1),
    "softmax": (softmax, lambda: (rand((8, 3000)),), 1),
    "softmax_whole": (softmax, lambda: (rand((8, 1000)),), 1),
    "variance": (variance, lambda: (rand((8, 3000)),), 1),
    "dot_split": (dot, lambda: (rand((300000,)), rand((300000,))), 1),
    "layer_norm": (layer_norm, lambda: (rand((8, 300)), rand((300,)), rand((300,))), 1),
    "logsumexp": (logsumexp, lambda: (rand((8, 300)),), 1),
    "int_any_all": (lambda a: ((a > 3).any(0), (a * 2).sum(1), a.max(1)), lambda: (rand((9, 40), "int16"),), None),
    "argmax_nan_rows": (lambda x: (x * 2).argmax(1), lambda: (rand((9, 3000)),), 1),
    "argmin_flat_int": (lambda x: (x - 1).argmin(), lambda: (rand((9, 40), "int32"),), 1),
    "column_sum_3d": (lambda x: (x * x).sum((0, 2), keepdims=True), lambda: (rand((5, 6, 70)),), 1),
}


def runners(f, args):
    f(*args)
    f(*args)
    program = next(iter(f.entries.values()))
    return [r for r in program.runners if r is not None]


def sources(f, args):
    return [r.last_launch[0].fn.__code__.co_filename for r in runners(f, args)]


@pytest.mark.parametrize("name", CASES)
def test_each_case_makes_the_kernels_expected(name):
    fn, make, count = CASES[name]
    f = cu.jit(fn)
    rs = runners(f, make())
    if count is not None:
        assert len(rs) == count
    assert all(r.last_launch is not None for r in rs)


def _text(f, args):
    (r,) = runners(f, args)
    return "".join(__import__("linecache").getlines(r.last_launch[0].fn.__code__.co_filename))


def test_long_rows_loop_once_per_reduction_and_once_for_the_output():
    text = _text(cu.jit(softmax), (rand((4, 20000)),))
    # each reduction's loop runs over the full chunks, then the ragged one with a mask
    assert text.count("for c in range(") == 5 and text.count("valid") == 4
    assert "ct.max(acc0)" in text and "ct.sum(acc1)" in text


def test_short_rows_are_loaded_once_as_one_tile():
    text = _text(cu.jit(softmax), (rand((4, 1000)),))
    # one load, one mask of the padding, the exp computed once for the sum and the quotient
    assert "for " not in text and text.count("ct.load(") == 1 and text.count("ct.exp(") == 1
    assert text.count("ct.where(valid") == 2 and text.count("ct.store(t0") == 1
    assert text.splitlines()[0].endswith("BLOCK: ct.Constant[int]):")
    two = _text(cu.jit(lambda a: a - a.mean((0, 2), keepdims=True)), (rand((5, 4, 70)),))
    assert "B0: ct.Constant[int], BLOCK: ct.Constant[int]):" in two and "shape=(B0, 1, BLOCK,)" in two


def test_long_reductions_split_only_when_few_positions_are_kept():
    assert split_count(1, 1 << 24, 1024, "cuda") > 1
    assert split_count(1, 1 << 24, 1024, "cpu", 8) > 1
    assert split_count(4096, 1 << 24, 1024, "cuda") == 1
    assert split_count(1, 1000, 1024, "cuda") == 1


@pytest.mark.nvrtc
@pytest.mark.parametrize("name", CASES)
def test_generated_kernels_compile_with_nvrtc(name):
    fn, make, _ = CASES[name]
    for r in runners(cu.jit(fn), make()):
        kernel, args = r.last_launch
        info = kernel.inspect(*args, compile_cuda=True)
        assert info["registers"] > 0 and info["spill_stores"] == 0, info.get("resources")


# The whole-row kernels a GPU runs, at its bound (16384 elements of 4 bytes or less, 8192 of 8)
WHOLE_CASES = {
    "softmax_8192": (softmax, lambda: (rand((4, 8192)),)),  # the benchmark's rows
    "softmax_16384": (softmax, lambda: (rand((4, 16384)),)),
    "variance_8192": (variance, lambda: (rand((4, 8000)),)),
    "layer_norm_16384": (layer_norm, lambda: (rand((4, 16384)), rand((16384,)), rand((16384,)))),
    "layer_norm_f64_8192": (layer_norm, lambda: tuple(rand(s, "float64") for s in ((4, 8192), (8192,), (8192,)))),
    "logsumexp_f16_16384": (logsumexp, lambda: (rand((4, 16000), "float16"),)),
    "centre_300": (centre, lambda: (rand((4, 300)),)),
    "argmax_3000": (lambda x: (x * 2).argmax(1), lambda: (rand((9, 3000)),)),
    "two_axes": (lambda x: (x * x).sum((0, 2), keepdims=True), lambda: (rand((5, 6, 700)),)),
}


@pytest.mark.nvrtc
@pytest.mark.parametrize("name", WHOLE_CASES)
def test_whole_row_kernels_compile_with_nvrtc_without_spills(name, gpu_row_bounds):
    fn, make = WHOLE_CASES[name]
    f = cu.jit(fn)
    (r,) = runners(f, make())
    assert rows_kinds(f) == ["whole"]
    kernel, args = r.last_launch
    info = kernel.inspect(*args, compile_cuda=True)
    assert info["registers"] > 0 and info["spill_stores"] == 0, info.get("resources")
    assert kernel.num_threads == whole_row_threads(math.prod(args[-len(r.step.axes):]), r.itemsize)
