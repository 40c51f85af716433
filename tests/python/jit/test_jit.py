"""cu.jit / cu.fuse on the CPU: every fused function against its eager result, signatures and
retracing, static and scalar arguments, views, 0-d and empty arrays, and bad functions."""

import cupric as cu
import numpy as np
import pytest
from cupric.jit import JitError
from cupric.jit._run import compiled_count
from jit_helpers import check, rand, rows_kinds


def five_op(x, y):
    return cu.sqrt(x * x + y * y) * 0.5 + cu.sin(x)


def saxpy(x, y):
    return 2 * x + y


def softmax(x):
    e = cu.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def variance(x):
    return ((x - x.mean(1, keepdims=True)) ** 2).mean(1)


def dot(x, y):
    return cu.sum(x * y)


def layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) * (x - m)).mean(-1, keepdims=True)
    return (x - m) / cu.sqrt(v + 1e-5) * w + b


def logsumexp(x):
    m = x.max(axis=1, keepdims=True)
    return m + cu.log(cu.sum(cu.exp(x - m), axis=1, keepdims=True))


def centre(x):
    return x - x.mean(1, keepdims=True)


@pytest.mark.parametrize("fn", [five_op, saxpy, dot])
@pytest.mark.parametrize("shape", [(1000,), (37, 129), (3, 5, 70)])
def test_two_operand_functions_match_eager(fn, shape):
    check(cu.jit(fn), rand(shape), rand(shape), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("fn", [softmax, variance, logsumexp])
def test_reduce_then_broadcast_patterns_match_eager(fn):
    check(cu.jit(fn), rand((33, 2500)), rtol=1e-5, atol=1e-6)


# Row lengths at the edges of the whole-row kernels (with the GPU's bound): the smallest tile (256),
# the next bucket, the largest tile (16384 elements of 4 bytes or less, 8192 of 8) and one past it,
# where the chunked kernel takes over.
ROW_EDGES = {"float32": ((255, 257, 16383, 16384), 16385), "float16": ((256, 16384), 16385),
             "float64": ((8191, 8192), 8193)}
ROW_TOLERANCE = {"float16": 1e-2, "float32": 2e-5, "float64": 1e-12}


@pytest.mark.parametrize("dtype", ROW_EDGES)
@pytest.mark.parametrize("fn", [softmax, variance, logsumexp, centre, layer_norm])
def test_row_patterns_at_the_whole_row_edges(fn, dtype, gpu_row_bounds):
    whole, chunked = ROW_EDGES[dtype]
    tol = ROW_TOLERANCE[dtype]
    for n in (*whole, chunked):
        f = cu.jit(fn)
        args = [rand((3, n), dtype)] + ([rand((n,), dtype), rand((n,), dtype)] if fn is layer_norm else [])
        check(f, *args, rtol=tol, atol=tol)
        assert rows_kinds(f) == ["chunked" if n == chunked else "whole"]


def test_whole_rows_of_views_and_of_other_axes(gpu_row_bounds):
    x = rand((600, 3000))
    for view in (x[::2, ::2], x[::-3, 7:2007], x.T[:40]):  # strided rows, reversed, rows across the columns
        f = cu.jit(softmax)
        check(f, view, rtol=1e-5)
        assert rows_kinds(f) == ["whole"]
    columns = cu.jit(lambda a: (a - a.mean(0, keepdims=True), (a * a).sum(0)))
    check(columns, x[:, 5:12], rtol=1e-5, atol=1e-5)  # a (1024, 1) tile down each column
    two = cu.jit(lambda a, w: (a - a.mean((0, 2), keepdims=True)) * w)
    y = rand((5, 4, 70))
    check(two, y, rand((5, 1, 70)), rtol=1e-5, atol=1e-6)  # a (8, 1, 128) tile over two reduced dims
    check(two, y[:, ::2, ::-1], rand((70,)), rtol=1e-5, atol=1e-6)
    assert rows_kinds(columns) == rows_kinds(two) == ["whole"]
    z = (np.random.default_rng(3).standard_normal((3, 5, 40)) * 4).astype(np.int16)  # ties
    flat = cu.jit(lambda a: ((a * 2).argmax(), (a - 1).argmin(keepdims=True)))
    out = check(flat, cu.asarray(z))
    assert int(out[0]) == (z * 2).argmax() and int(out[1][0, 0, 0]) == (z - 1).argmin()
    assert rows_kinds(flat) == ["whole"]  # both in one kernel


def test_layer_norm_with_broadcast_weights():
    check(cu.jit(layer_norm), rand((20, 300)), rand((300,)), rand((300,)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod", "var", "std", "any", "all"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_over_axes(op, axis, keepdims):
    x = rand((6, 7, 300)) * 0.3

    @cu.jit
    def f(x):
        y = x * 1.5 + 0.25
        return getattr(y, op)(axis=axis, keepdims=keepdims)

    check(f, x, rtol=1e-4, atol=1e-5)


def test_integer_and_bool_reductions_keep_numpys_dtypes():
    @cu.jit
    def f(a, m):
        return (a * 3).sum(1), a.mean(0), (a > 2).any(1), m.all(0), a.max(1)

    check(f, rand((9, 40), "int8"), rand((9, 40), "bool"), rtol=1e-12, atol=0)


@pytest.mark.parametrize("shapes", [((40, 50), (50,)), ((40, 50), (40, 1)), ((1, 50), (40, 1)), ((40, 50), ()),
                                    ((3, 1, 5), (4, 1)), ((7,), (1,))])
def test_broadcasting_patterns(shapes):
    f = cu.jit(lambda x, y: cu.where(x > y, x - y, y * 2.0) + 1)
    check(f, rand(shapes[0]), rand(shapes[1]))


def test_zero_d_and_empty_arrays():
    f = cu.jit(lambda x, y: x * y + cu.exp(x))
    check(f, rand(()), rand(()))
    check(f, rand((0, 4)), rand((4,)))
    g = cu.jit(lambda x: x.sum(0) + x.max(0, keepdims=False) * 0)
    check(g, rand((3, 0)))
    with pytest.raises(ValueError):  # NumPy's: max of an empty axis has no identity
        g(rand((0, 3)))


def test_non_contiguous_views():
    x = rand((40, 60))
    f = cu.jit(five_op)
    check(f, x[::2, 1::3], x[1::2, ::3], rtol=1e-5, atol=1e-5)
    check(f, x.T, x.T)
    check(cu.jit(softmax), x[:, ::2])
    check(cu.jit(lambda a: a.sum(0)), x[::-1])


def test_mixed_dtypes_follow_nep50():
    f = cu.jit(lambda a, b: a * 3 + b)
    check(f, rand((50,), "int8"), rand((50,), "int8"))
    out = check(cu.jit(lambda a: a + 2.5), rand((50,), "int32"))
    assert out.dtype == np.float64
    out = check(cu.jit(lambda a, b: a * b), rand((50,), "float16"), np.float32(2.0))
    assert out.dtype == np.float32
    out = check(cu.jit(lambda a, s: a * s), rand((50,), "float32"), 3.0)
    assert out.dtype == np.float32
    check(cu.jit(lambda a, b: (a + b).astype(cu.int16)), rand((50,), "float64") * 100, rand((50,), "uint8"))


def test_python_scalars_are_traced_values():
    f = cu.jit(lambda x, alpha, beta: alpha * beta * x + alpha)
    x = rand((1000,))
    for alpha, beta in [(2.0, 3.0), (-1.5, 0.25), (7.0, 1.0)]:
        np.testing.assert_allclose(f(x, alpha, beta).get(), (alpha * beta * x + alpha).get(), rtol=1e-6, atol=1e-6)
    assert f.trace_count == 1
    f(x, 2, 3)  # ints are another weak kind: another signature
    assert f.trace_count == 2


def test_static_arguments_are_constants_of_the_trace():
    @cu.jit(static_argnames="axis")
    def f(x, axis):
        return x.sum(axis=axis) * 2

    x = rand((30, 40))
    for axis in (0, 1, 0):
        # sums of 30-40 values in another order: absolute error ~1e-6 where they cancel
        np.testing.assert_allclose(f(x, axis=axis).get(), (x.sum(axis=axis) * 2).get(), rtol=1e-5, atol=1e-5)
    assert f.trace_count == 2

    g = cu.jit(lambda x, n: x * n, static_argnums=1)
    assert g(x, 3).dtype == x.dtype and g.trace_count == 1


def test_static_floats_are_constants_by_their_exact_value():
    """-0.0 and 0.0 are equal in Python but not as constants (-0.0 + -0.0 is -0.0, -0.0 + 0.0 is
    +0.0): each static value traces its own program, through the Python path and the prepared C++
    one alike; a NaN finds its own entry again, inside a tuple too."""
    f = cu.jit(lambda x, c: x + c[0], static_argnums=1)
    x = cu.asarray(np.full(4, -0.0, dtype=np.float32))
    for c in (0.0, -0.0, 0.0, -0.0, 0.0):
        got = f(x, (c,)).get()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.float32(-0.0) + np.float32(c)))
    assert f.trace_count == 2
    for _ in range(3):
        assert np.isnan(f(x, (float("nan"),)).get()).all()
    assert f.trace_count == 3


def test_a_new_length_of_the_same_rank_compiles_nothing(gpu_row_bounds):
    # maps and chunked rows (rows past the whole-row bound) take every length; whole rows every
    # length of their power-of-two bucket (2049..4096 here)
    f = cu.jit(five_op)
    g = cu.jit(softmax)
    for _ in range(2):
        f(rand((5000,)), rand((5000,)))
        g(rand((8, 3000)))
        g(rand((3, 40000)))
    before = compiled_count()
    for n in (12345, 777, 100000):
        check(f, rand((n,)), rand((n,)), rtol=1e-5, atol=1e-5)
        check(g, rand((n % 50 + 2, n % 2048 + 2049)), rtol=1e-5)
        check(g, rand((n % 5 + 2, n + 17000)), rtol=1e-5)
    assert compiled_count() == before
    assert f.trace_count == 1 and g.trace_count == 1
    assert rows_kinds(g) == ["chunked"]
    check(g, rand((4, 3500)))
    assert rows_kinds(g) == ["whole"] and compiled_count() == before


def test_whole_rows_compile_once_per_power_of_two_bucket(gpu_row_bounds):
    # kernels are shared by source across jit functions: a function no other test has
    @cu.jit
    def g(x):
        e = cu.exp(x - x.min(1, keepdims=True))
        return e / e.sum(1, keepdims=True) * 3.25

    x = rand((6, 1100))
    g(x)
    before = compiled_count()
    for n in (1025, 1100, 2048, 1500):  # one bucket: 2048
        check(g, x[:, :n] if n <= 1100 else rand((6, n)), rtol=1e-5)
    assert compiled_count() == before + 1
    for n in (2049, 4000):  # the next one
        check(g, rand((5, n)), rtol=1e-5)
    assert compiled_count() == before + 2
    for n in (3, 100, 256):  # every row up to WHOLE_ROW_MIN shares the smallest tile
        check(g, rand((4, n)), rtol=1e-5)
    assert compiled_count() == before + 3
    assert len(g.explain(x).kernels) == 1 and g.trace_count == 1


def test_fuse_is_jit_with_cupys_spelling():
    @cu.fuse
    def a(x, y):
        return x * y + 1

    @cu.fuse(kernel_name="b")
    def b(x):
        return x.sum()

    check(a, rand((100,)), rand((100,)))
    check(b, rand((100,)), rtol=1e-5)


def test_outputs_keep_their_structure():
    f = cu.jit(lambda x, y: {"s": x + y, "pair": (x * y, [x - y]), "x": x, "n": 3})
    x, y = rand((10,)), rand((10,))
    out = f(x, y)
    out = f(x, y)
    assert out["x"] is x and out["n"] == 3
    np.testing.assert_allclose(out["pair"][1][0].get(), (x - y).get())


def test_numpy_functions_on_traced_arrays():
    f = cu.jit(lambda x: np.sin(x) + np.sum(x, axis=0))
    check(f, rand((20, 30)), rtol=1e-5)


def test_unsupported_op_runs_eagerly_and_is_named():
    @cu.jit
    def f(x):
        y = cu.sort(x * 2, axis=-1)
        return cu.exp(y) + 1

    x = rand((10, 50))
    check(f, x)
    report = f.explain(x)
    assert [s["kind"] for s in report.steps] == ["map", "eager", "map"]
    eager = report.eager[0]
    assert eager["ops"] == ["cu.sort"] and "test_jit.py" in eager["lines"][0] and "not fused" in eager["why"]
    assert "cu.sort" in str(report)


def test_writing_into_an_argument_raises_at_trace_time():
    @cu.jit
    def f(x):
        x += 1
        return x

    x = rand((10,))
    before = x.get().copy()
    with pytest.raises(JitError, match=r"writes into its argument 'x'.*test_jit.py:\d+"):
        f(x)
    np.testing.assert_array_equal(x.get(), before)

    @cu.jit
    def g(x):
        x[0] = 1
        return x

    with pytest.raises(JitError, match="item assignment"):
        g(x)

    @cu.jit
    def h(x):
        y = x * 2
        y += 1  # an intermediate: rebinding is fine
        return y

    check(h, x)


def test_out_argument_is_refused():
    f = cu.jit(lambda x: cu.add(x, 1, out=x))
    with pytest.raises(JitError, match="out="):
        f(rand((4,)))


def test_shape_errors_name_the_users_line():
    @cu.jit
    def f(x, y):
        z = x * 2
        return z + y  # the line the error names

    f(rand((5, 4)), rand((4,)))
    with pytest.raises(ValueError, match=r"cannot broadcast.*test_jit.py:\d+.*return z \+ y"):
        f(rand((5, 4)), rand((3,)))


def test_value_dependent_control_flow_runs_eagerly():
    @cu.jit
    def f(x):
        if x.sum() > 0:
            return x * 2
        return -x

    x = rand((100,))
    check(f, x)
    assert "bool()" in str(f.explain(x)) and "runs eagerly" in str(f.explain(x))


def test_reading_a_shape_specialises_on_shapes():
    @cu.jit
    def f(x):
        return x * x.shape[0]

    check(f, rand((4, 3)))
    check(f, rand((6, 3)))
    assert f.trace_count == 2


def test_arrays_captured_from_the_enclosing_scope():
    w = rand((30,))
    f = cu.jit(lambda x: x * w + cu.ones(30))
    check(f, rand((5, 30)))


def test_varargs_and_sequences_of_arrays():
    f = cu.jit(lambda *a: a[0] * a[1] + a[2])
    check(f, rand((10,)), rand((10,)), 2.0)
    g = cu.jit(lambda pair, scale=1.0: (pair[0] - pair[1]) * scale)
    check(g, (rand((10,)), rand((10,))), scale=3.0)
    h = cu.jit(lambda **kw: kw["x"] + kw["y"])
    check(h, x=rand((4,)), y=rand((4,)))


def test_square_by_the_power_operator_keeps_powers_dtypes():
    for dtype in ("int8", "uint16", "float32", "bool"):
        x = rand((20,), dtype)
        for e in (2, 2.0, 3):
            check(cu.jit(lambda x, e=e: x**e), x, rtol=1e-6)


@pytest.mark.parametrize("bounds", ["cpu", "gpu"])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_argmax_and_argmin_pick_the_first_extreme(op, dtype, bounds, request):
    if bounds == "gpu":  # rows of 1100 in one tile, as a GPU runs them
        request.getfixturevalue("gpu_row_bounds")
    xn = (np.random.default_rng(5).standard_normal((6, 4, 1100)) * 10).astype(dtype)  # ints: many ties
    if dtype == "float32":
        xn[2, 3, 17] = np.nan  # NumPy: the first NaN wins
        xn[4, 1, 5] = np.inf
    x = cu.asarray(xn)
    for axis in (None, 0, 2, -2):
        for keepdims in (False, True):
            f = cu.jit(lambda x, axis=axis, keepdims=keepdims: getattr(x + 1, op)(axis=axis, keepdims=keepdims),
                       static_argnames=("axis", "keepdims"))
            out = check(f, x)
            np.testing.assert_array_equal(out.get(), getattr(xn + 1, op)(axis=axis, keepdims=keepdims))
            assert [s["kind"] for s in f.explain(x).steps] == ["rows"]
