"""Cutting graphs into steps: the kernels each pattern of the issue makes."""

import cupric as cu
from jit_helpers import rand
from test_jit import dot, five_op, layer_norm, logsumexp, softmax, variance


def steps(fn, *args):
    f = cu.jit(fn)
    f(*args)
    program = next(iter(f.entries.values()))
    return [(s.kind, len(s.reductions), len(s.tails), len(s.kept)) for s in program.steps]


def test_an_elementwise_chain_is_one_map():
    assert steps(five_op, rand((10,)), rand((10,))) == [("map", 0, 0, 0)]


def test_reduce_then_broadcast_is_one_rows_kernel():
    assert steps(softmax, rand((4, 9))) == [("rows", 2, 1, 0)]
    assert steps(variance, rand((4, 9))) == [("rows", 2, 0, 0)]
    assert steps(layer_norm, rand((4, 9)), rand((9,)), rand((9,))) == [("rows", 2, 1, 0)]
    assert steps(logsumexp, rand((4, 9))) == [("rows", 2, 0, 1)]
    assert steps(dot, rand((10,)), rand((10,))) == [("rows", 1, 0, 0)]


def test_std_keeps_its_square_root_in_the_kernel():
    assert steps(lambda x: x.std(axis=1), rand((4, 9))) == [("rows", 2, 0, 1)]


def test_reductions_over_other_axes_start_another_kernel():
    assert steps(lambda x: (x.sum(0), x.sum(1)), rand((4, 9))) == [("rows", 1, 0, 0), ("rows", 1, 0, 0)]


def test_eager_ops_cut_the_chain():
    assert steps(lambda x: cu.exp(cu.cumsum(x * 2)) - 1, rand((10,))) == [("map", 0, 0, 0), ("eager", 0, 0, 0),
                                                                         ("map", 0, 0, 0)]


def test_an_output_of_a_reduced_shape_mixing_ranks_reads_the_reductions_from_memory():
    # m (4, 1) + s (4,) broadcasts to (4, 4): not an output of the rows kernel
    got = steps(lambda x: x.max(1, keepdims=True) + x.sum(1), rand((4, 9)))
    assert got[0][0] == "rows" and got[-1] == ("map", 0, 0, 0)
