"""cupric.tile elementwise ops: every function of the ufunc table on tiles, dtype sweeps (bfloat16
and float16 included), NumPy promotion with Python scalars, where / astype / broadcasting, on the
compiled CPU path and in the interpreter, against NumPy."""

import warnings

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from tile_helpers import BF16, assert_close, np_dtype, random, run, to_cu, to_np

N = 203  # not a multiple of any tile size below

UNARY_FLOAT = (
    "negative",
    "positive",
    "absolute",
    "fabs",
    "sign",
    "square",
    "reciprocal",
    "sqrt",
    "cbrt",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "floor",
    "ceil",
    "trunc",
    "rint",
    "deg2rad",
    "rad2deg",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "logical_not",
    "conjugate",
)
BINARY_FLOAT = (
    "add",
    "subtract",
    "multiply",
    "divide",
    "floor_divide",
    "remainder",
    "fmod",
    "power",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "arctan2",
    "hypot",
    "copysign",
    "logaddexp",
    "logaddexp2",
    "heaviside",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
)
UNARY_INT = ("negative", "absolute", "sign", "square", "invert", "logical_not", "floor", "ceil", "trunc")
BINARY_INT = (
    "add",
    "subtract",
    "multiply",
    "floor_divide",
    "remainder",
    "fmod",
    "maximum",
    "minimum",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    "gcd",
    "lcm",
    "equal",
    "less",
    "greater_equal",
    "logical_xor",
    "divide",
    "power",
)


@ct.kernel
def apply_unary(x, out, FUNCS: ct.Constant[tuple], BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
    for k in ct.static_range(len(FUNCS)):
        r = getattr(ct, FUNCS[k])(t)
        ct.store(out, index=(k, ct.bid(0)), tile=ct.reshape(r.astype(ct.float64), (1, BLOCK)))


@ct.kernel
def apply_binary(x, y, out, FUNCS: ct.Constant[tuple], BLOCK: ct.Constant[int]):
    a = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
    b = ct.load(y, index=(ct.bid(0),), shape=(BLOCK,))
    for k in ct.static_range(len(FUNCS)):
        r = getattr(ct, FUNCS[k])(a, b)
        ct.store(out, index=(k, ct.bid(0)), tile=ct.reshape(r.astype(ct.float64), (1, BLOCK)))


def _reference(funcs, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.stack([getattr(np, f)(*args).astype(np.float64) for f in funcs])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_unary_float(dtype, mode):
    x = random(N, dtype, low=-2.5, high=2.5)
    x[:4] = [0.0, -0.0, 1.0, 1.5]
    out = cu.zeros((len(UNARY_FLOAT), N), dtype=cu.float64)
    run(apply_unary, mode, (ct.cdiv(N, 64),), to_cu(x), out, UNARY_FLOAT, 64)
    want = _reference(UNARY_FLOAT, x)
    got = to_np(out)
    for k, f in enumerate(UNARY_FLOAT):
        assert_close(got[k], want[k], dtype, err_msg=f) if dtype != "bfloat16" else assert_close(
            got[k].astype(np.float32), want[k].astype(np.float32), dtype, err_msg=f
        )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_binary_float(dtype, mode):
    rng = np.random.default_rng(7)
    x, y = random(N, dtype, rng), random(N, dtype, rng, low=0.5, high=2.0)
    y[::3] = -y[::3]
    x[:3] = y[:3]  # ties for comparisons and equal-argument paths
    out = cu.zeros((len(BINARY_FLOAT), N), dtype=cu.float64)
    run(apply_binary, mode, (ct.cdiv(N, 64),), to_cu(x), to_cu(y), out, BINARY_FLOAT, 64)
    want = _reference(BINARY_FLOAT, x, y)
    got = to_np(out)
    for k, f in enumerate(BINARY_FLOAT):
        assert_close(got[k], want[k], dtype, err_msg=f)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint64"])
def test_integer_ops(dtype, mode):
    rng = np.random.default_rng(3)
    x = random(N, dtype, rng)
    y = random(N, dtype, rng)
    y[y == 0] = 3
    if np_dtype(dtype).kind == "u":
        y = (y % 7).astype(dtype)
    y_shift = (np.abs(y.astype(np.int64)) % 8).astype(dtype)
    binary = [f for f in BINARY_INT if f not in ("left_shift", "right_shift", "power")]
    if np_dtype(dtype).itemsize < 4:
        binary.remove("lcm")  # overflows; NumPy wraps before its abs, scalar_math after (array core too)
    out = cu.zeros((len(binary), N), dtype=cu.float64)
    run(apply_binary, mode, (ct.cdiv(N, 50),), to_cu(x), to_cu(y), out, tuple(binary), 50)
    assert_close(to_np(out), _reference(binary, x, y), "int")
    out = cu.zeros((3, N), dtype=cu.float64)
    run(
        apply_binary, mode, (ct.cdiv(N, 50),), to_cu(x), to_cu(y_shift), out, ("left_shift", "right_shift", "power"), 50
    )
    assert_close(to_np(out), _reference(("left_shift", "right_shift", "power"), x, y_shift), "int")
    unary = [f for f in UNARY_INT if not (f == "negative" and dtype.startswith("u"))]
    out = cu.zeros((len(unary), N), dtype=cu.float64)
    run(apply_unary, mode, (ct.cdiv(N, 50),), to_cu(x), out, tuple(unary), 50)
    assert_close(to_np(out), _reference(unary, x), "int")


@ct.kernel
def scalar_mix(x, out, alpha, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
    r = (t * 2 + 1) * alpha - t / 4 + (t > 0.5) + t**2 - (-t) % 3
    ct.store(out, index=(ct.bid(0),), tile=r)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_python_scalars_are_weak(dtype, mode):
    """NEP 50: Python numbers (literals and scalar arguments) take the tile's dtype."""
    x = random(N, dtype)
    out = cu.zeros(N, dtype=cu.dtype(dtype))
    run(scalar_mix, mode, (ct.cdiv(N, 32),), to_cu(x), out, 0.75, 32)
    with np.errstate(all="ignore"):
        want = (x * 2 + 1) * 0.75 - x / 4 + (x > 0.5) + x**2 - (-x) % 3
    assert want.dtype == x.dtype or dtype == "bfloat16"  # ml_dtypes promotes bf16 + bool to float32
    assert_close(to_np(out), want, dtype, rtol=TOL2[dtype], atol=TOL2[dtype])


TOL2 = {"float16": 1e-2, "bfloat16": 8e-2, "float32": 1e-5, "float64": 1e-12}


@ct.kernel
def where_cast(x, y, out_f, out_i, BLOCK: ct.Constant[int]):
    a = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
    b = ct.load(y, index=(ct.bid(0),), shape=(BLOCK,))
    w = ct.where(a > b, a, b * 2)
    ct.store(out_f, index=(ct.bid(0),), tile=w)
    ct.store(out_i, index=(ct.bid(0),), tile=ct.astype(w * 10, ct.int32))


@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "float64"])
def test_where_and_astype(dtype, mode):
    rng = np.random.default_rng(5)
    x, y = random(N, dtype, rng), random(N, dtype, rng)
    out_f, out_i = cu.zeros(N, dtype=cu.dtype(dtype)), cu.zeros(N, dtype=cu.int32)
    run(where_cast, mode, (ct.cdiv(N, 40),), to_cu(x), to_cu(y), out_f, out_i, 40)
    w = np.where(x > y, x, y * 2)
    assert_close(to_np(out_f), w, dtype)
    np.testing.assert_array_equal(to_np(out_i), (w * 10).astype(np.int32))


@ct.kernel
def broadcasting(x, col, row, out, R: ct.Constant[int], C: ct.Constant[int]):
    t = ct.load(x, index=(0, 0), shape=(R, C))
    c = ct.load(col, index=(0, 0), shape=(R, 1))
    r = ct.load(row, index=(0,), shape=(C,))
    s = ct.sum(t)  # a scalar
    ct.store(out, index=(0, 0), tile=t * c + r - s / (R * C) + ct.broadcast_to(c, (R, C)))


def test_broadcasting(mode):
    rng = np.random.default_rng(9)
    x, col, row = random((5, 7), "float32", rng), random((5, 1), "float32", rng), random(7, "float32", rng)
    out = cu.zeros((5, 7), dtype=cu.float32)
    run(broadcasting, mode, (1,), to_cu(x), to_cu(col), to_cu(row), out, 5, 7)
    assert_close(to_np(out), x * col + row - x.sum() / 35 + col, rtol=1e-5, atol=1e-5)


@ct.kernel
def creation(out_f, out_i, out_b, fill, N: ct.Constant[int]):
    a = ct.arange(N)
    f = ct.full((N,), fill, dtype=ct.float32) + ct.zeros((N,)) + ct.ones((N,), dtype=ct.float32)
    ct.store(out_f, index=(0,), tile=f * a)
    ct.store(out_i, index=(0,), tile=ct.arange(3, N + 3, dtype=ct.int64) * 2)
    ct.store(out_b, index=(0,), tile=ct.full((N,), True) & (a % 2 == 0))


def test_creation(mode):
    out_f, out_i, out_b = cu.zeros(13, dtype=cu.float32), cu.zeros(13, dtype=cu.int64), cu.zeros(13, dtype=cu.bool_)
    run(creation, mode, (1,), out_f, out_i, out_b, 2.5, 13)
    a = np.arange(13)
    assert_close(to_np(out_f), (3.5 * a).astype(np.float32))
    np.testing.assert_array_equal(to_np(out_i), (a + 3) * 2)
    np.testing.assert_array_equal(to_np(out_b), a % 2 == 0)


def test_bfloat16_round_trip(mode):
    """bf16 arithmetic computes in float32 and rounds to nearest even, as ml_dtypes does."""
    x = (np.arange(N, dtype=np.float32) / 7 - 13).astype(BF16)
    out = cu.zeros(N, dtype=cu.bfloat16)
    run(scalar_mix, mode, (ct.cdiv(N, 32),), to_cu(x), out, 1.25, 32)
    with np.errstate(all="ignore"):
        want = (x * 2 + 1) * 1.25 - x / 4 + (x > 0.5) + x**2 - (-x) % 3
    assert_close(to_np(out).astype(np.float32), want.astype(np.float32), rtol=8e-2, atol=8e-2)


@ct.kernel
def ternary_and_rare(x, lo, out_clip, out_next, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(BLOCK,))
    ct.store(out_clip, index=(0,), tile=ct.clip(t, lo, 0.5))
    ct.store(out_next, index=(0,), tile=ct.nextafter(t, ct.full((BLOCK,), 10.0, dtype=t.dtype)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_and_nextafter(dtype, mode):
    x = random(N, dtype)
    out_clip, out_next = cu.zeros(N, dtype=cu.dtype(dtype)), cu.zeros(N, dtype=cu.dtype(dtype))
    run(ternary_and_rare, mode, (1,), to_cu(x), -0.25, out_clip, out_next, N)
    np.testing.assert_array_equal(to_np(out_clip), np.clip(x, x.dtype.type(-0.25), x.dtype.type(0.5)))
    np.testing.assert_array_equal(to_np(out_next), np.nextafter(x, x.dtype.type(10)))


@ct.kernel
def exp2_kernel(x, out, FTZ: ct.Constant[bool], BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
    ct.store(out, index=(ct.bid(0),), tile=ct.exp2(t, flush_to_zero=FTZ))


def exp2_cases(dtype):
    """Random exponents across the whole range, those whose results are subnormal included."""
    x = random(N, dtype, low=-160.0 if dtype == "float32" else -1080.0, high=20.0)
    x[:6] = [-126.5, -149.0, -np.inf, np.inf, np.nan, 0.0]
    return x


def exp2_reference(x, ftz):
    with np.errstate(all="ignore"):
        r = np.exp2(x)
    return np.where(r < np.finfo(x.dtype).tiny, 0, r) if ftz else r


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ftz", [False, True])
def test_exp2_flush_to_zero(dtype, ftz, mode):
    """ct.exp2(x, flush_to_zero=True): results below the smallest normal number are 0 (cuTile's
    option; the GPU's one ex2.approx.ftz); without it subnormal results are kept."""
    x = exp2_cases(dtype)
    out = cu.zeros(N, dtype=dtype)
    run(exp2_kernel, mode, (ct.cdiv(N, 64),), to_cu(x), out, ftz, 64)
    got, want = to_np(out), exp2_reference(x, ftz)
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13, atol=0)
    assert ((got == 0) == (want == 0)).all()


def test_exp2_flush_to_zero_errors():
    @ct.kernel
    def bad_flag(x, out):
        ct.store(out, index=(0,), tile=ct.exp2(ct.load(x, index=(0,), shape=(8,)), flush_to_zero=1))

    @ct.kernel
    def bad_op(x, out):
        ct.store(out, index=(0,), tile=ct.exp(ct.load(x, index=(0,), shape=(8,)), flush_to_zero=True))

    x, out = cu.ones(8, dtype=cu.float32), cu.zeros(8, dtype=cu.float32)
    with pytest.raises(Exception, match="flush_to_zero must be True or False, got 1"):
        bad_flag[(1,)](x, out)
    with pytest.raises(Exception, match="flush_to_zero"):
        bad_op[(1,)](x, out)
    np.testing.assert_array_equal(to_np(out), 0)


@pytest.mark.nvrtc
def test_exp2_flush_to_zero_is_one_instruction_on_the_gpu():
    from cupric.tile import _cuda, _paths

    if not _cuda.nvrtc_available():
        pytest.skip("NVRTC not found")
    x = np.zeros(64, np.float32)
    for ftz, want in ((True, "ex2.approx.ftz.f32"), (False, "ex2.approx.f32")):
        exp2_kernel.cache.clear()
        key, specs, *_ = exp2_kernel._specialise((x, x, ftz, 64))
        src = exp2_kernel.compiled(key, specs).cuda()["source"]
        ptx = _cuda.compile_source(src, _paths.include_dir(), arch="sm_90a", outputs=("ptx",))["ptx"]
        assert want in ptx and ptx.count("ex2.approx") == ptx.count(want)
    exp2_kernel.cache.clear()


@pytest.mark.gpu
@pytest.mark.parametrize("ftz", [False, True])
def test_exp2_flush_to_zero_on_the_gpu(ftz):
    x = exp2_cases("float32")
    out = cu.zeros(N, dtype=cu.float32, device="cuda:0")
    exp2_kernel[(ct.cdiv(N, 64),)](cu.asarray(x, device="cuda:0"), out, ftz, 64)
    got, want = np.asarray(out.to_device("cpu")), exp2_reference(x, ftz)
    np.testing.assert_allclose(got, want, rtol=3e-7 * 4, atol=0)  # ex2.approx: 2 ulp
    assert ((got == 0) == (want == 0)).all()
