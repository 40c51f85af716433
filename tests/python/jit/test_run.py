"""Running programs: launch plans per leaf layout, split reductions, eager fallbacks."""

import cupric as cu
import numpy as np
from cupric.jit import _run
from jit_helpers import check, rand


def runner(f):
    program = next(e for e in f.entries.values() if hasattr(e, "work"))
    return next(r for r in program.runners if r is not None)


def test_plans_are_kept_per_shape_and_layout():
    f = cu.jit(lambda x, y: x * y + 1)
    x = rand((30, 40))
    check(f, x, x)
    check(f, x[:, ::2], x[:, ::2])
    check(f, x[:20], x[:20])
    r = runner(f)
    assert len(r.plans) == 3
    assert {k[0] for k in r.variants} == {"map"} and len(r.variants) == 2  # flat and n-d


def test_a_long_full_reduction_is_split_and_finished_eagerly():
    x = rand((1 << 18,))
    f = cu.jit(lambda x: (x * x).sum())
    check(f, x, rtol=1e-5)
    (plan,) = runner(f).plans.values()
    assert plan.grid[1] > 1
    g = cu.jit(lambda x: (x * 2).mean())
    check(g, x, rtol=1e-5, atol=1e-6)


def test_empty_and_mismatched_shapes_run_eagerly():
    f = cu.jit(lambda x, y: (x + 1, y * 2))  # two outputs of one pattern
    check(f, rand((3,)), rand((3,)))
    check(f, rand((3,)), rand((5,)))  # other lengths: the step runs eagerly, correctly
    assert _run._EAGER in runner(f).plans.values()


def test_launch_arguments_are_inspectable():
    f = cu.jit(lambda x: x * 3)
    x = rand((100,))
    f(x)
    f(x)
    kernel, args = runner(f).last_launch
    out = args[1]
    kernel[(1,)](*args)
    np.testing.assert_allclose(out.get(), x.get() * 3, rtol=1e-6)
