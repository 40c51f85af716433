"""Running programs: launch plans per leaf layout, split reductions, eager fallbacks."""

import cupric as cu
import numpy as np
from cupric.jit import _run
from cupric.jit._run import rows_variant
from jit_helpers import check, rand, rows_kinds


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


def test_rows_variants_split_few_long_rows_and_hold_short_rows_whole():
    # few kept positions of a long reduction: split over blocks (both devices)
    assert rows_variant(1, [1 << 20], 4, "cuda")[0] == "split-reduction"
    assert rows_variant(1, [1 << 22], 4, "cpu")[0] == "split-reduction"
    # many rows that fit: one tile each, padded to its power-of-two bucket
    assert rows_variant(16384, [8192], 4, "cuda") == ("whole", [8192])
    assert rows_variant(16384, [5000], 2, "cuda") == ("whole", [8192])
    assert rows_variant(16384, [16384], 4, "cuda") == ("whole", [16384])
    assert rows_variant(100, [3], 4, "cuda") == ("whole", [256])  # the smallest tile
    assert rows_variant(100, [6, 7], 8, "cuda") == ("whole", [8, 32])  # two reduced dims
    assert rows_variant(1, [10000], 4, "cuda") == ("whole", [16384])  # short even if alone
    # past the bound (64 KiB of the padded row on a GPU, 4 KiB on the CPU): chunked, any length
    assert rows_variant(16384, [16385], 4, "cuda") == ("chunked", None)
    assert rows_variant(16384, [8193], 8, "cuda") == ("chunked", None)
    assert rows_variant(16384, [1025], 4, "cpu") == ("chunked", None)
    assert rows_variant(16384, [1024], 4, "cpu") == ("whole", [1024])
    # a step that cannot split (it writes full-shaped outputs) keeps one block a row
    assert rows_variant(1, [1 << 20], 4, "cuda", splittable=False) == ("chunked", None)
    assert rows_variant(1, [4096], 4, "cuda", splittable=False) == ("whole", [4096])


def test_each_variant_runs_where_it_is_chosen():
    full = cu.jit(lambda x: (x * x).sum())
    rows = cu.jit(lambda x: (x * x).sum(-1))
    for f, shape, kind, split in [(full, (512, 512), "chunked", True), (full, (20, 30), "whole", False),
                                  (rows, (30, 5000), "chunked", False), (rows, (300, 700), "whole", False)]:
        check(f, rand(shape), rtol=1e-5, atol=1e-5)
        plans = runner(f).plans
        assert rows_kinds(f) == [kind] and (plans[next(reversed(plans))].grid[1] > 1) == split
