"""The generated tile sources: their shape on the page (one kernel per pattern, loops per
reduction) and, with NVRTC, that every variant the CPU tests make compiles for the GPU too."""

import cupric as cu
import pytest
from cupric.jit._render import split_count
from jit_helpers import rand
from test_jit import dot, five_op, layer_norm, logsumexp, softmax, variance

CASES = {
    "five_op_flat": (five_op, lambda: (rand((5000,)), rand((5000,))), 1),
    "five_op_nd_views": (five_op, lambda: (rand((40, 60))[::2], rand((60,))), 1),
    "softmax": (softmax, lambda: (rand((8, 3000)),), 1),
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


def test_softmax_is_one_rows_kernel_with_a_loop_per_reduction_and_one_for_the_output():
    f = cu.jit(softmax)
    (r,) = runners(f, (rand((4, 2000)),))
    source = r.last_launch[0].fn.__code__
    text = "".join(__import__("linecache").getlines(source.co_filename))
    # each reduction's loop runs over the full chunks, then the ragged one with a mask
    assert text.count("for c in range(") == 5 and text.count("valid") == 4
    assert "ct.max(acc0)" in text and "ct.sum(acc1)" in text


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
