"""The CUDA backend on the edge cases of issue 11's "silent wrong results", with the CPU backend as
the oracle (bit for bit, zero signs included): integer arange to the ends of int64/uint64,
max/min/fmax/fmin of zeros of both signs however a reduction is split, nan_to_num of device
arrays, comparisons with Python ints of any size, integer powers' check and uint64 integers().
Skipped without a GPU."""

import cupric as cu
import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def bits_equal(gpu, cpu):
    assert gpu.device == "cuda:0" and cpu.device == "cpu"
    g, c = (np.asarray(t.astype(cu.float32) if t.dtype == cu.bfloat16 else t) for t in (gpu, cpu))
    assert g.dtype == c.dtype and g.shape == c.shape
    if c.dtype.kind in "fc":
        np.testing.assert_array_equal(np.signbit(g.real), np.signbit(c.real))
    np.testing.assert_array_equal(g, c)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
def test_integer_arange_is_exact(dtype):
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    for start, stop, step in [(hi - 5, hi + 1, 1), (lo, lo + 4, 1), (hi, lo, -((hi - lo) // 7 + 1)), (lo, hi, 3)]:
        n = len(range(start, stop, step))
        if n > 10**6:
            stop = start + step * 10**6
        bits_equal(cu.arange(start, stop, step, dtype=dtype, device="cuda"), cu.arange(start, stop, step, dtype=dtype))
    bits_equal(cu.arange(10**18 + 1, 10**18 + 4, device="cuda"), cu.arange(10**18 + 1, 10**18 + 4))
    bits_equal(cu.arange(0, 300, 100, dtype="int8", device="cuda"), cu.arange(0, 300, 100, dtype="int8"))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("op", ["max", "min", "nanmax", "nanmin"])
def test_extrema_of_signed_zeros_agree_with_the_cpu(op, dtype):
    # -0.0 and +0.0 mixed with values below (max) or above (min) zero, in sizes that split the
    # reduction over threads, blocks and a second pass; rows, columns and whole arrays
    rng = np.random.default_rng(11)
    other = -1.0 if "max" in op else 1.0
    for n in (2, 33, 257, 4099, 1 << 20):
        a = rng.choice(np.array([-0.0, 0.0, other, np.nan if "nan" in op else other]), size=n, p=[0.3, 0.3, 0.3, 0.1])
        a[rng.integers(0, n)] = 0.0 if rng.random() < 0.5 else -0.0
        x = cu.asarray(a).astype(dtype)
        xg = x.to_device("cuda")
        bits_equal(getattr(cu, op)(xg), getattr(cu, op)(x))
        m = (n // 32) * 32
        if m:
            for axis in (0, 1):
                fn = getattr(cu, op)
                bits_equal(fn(xg[:m].reshape(32, -1), axis=axis), fn(x[:m].reshape(32, -1), axis=axis))
    for first, second in [(-0.0, 0.0), (0.0, -0.0)]:  # the rule itself: -0.0 < +0.0 in any order
        x = cu.asarray([first, second], dtype=dtype, device="cuda")
        assert np.signbit(np.asarray(getattr(cu, op)(x)).astype(np.float32)) == ("min" in op)


def test_nan_to_num_of_device_arrays():
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0, 3e38], dtype=np.float32)
    for dtype in ("float16", "float32", "float64", "complex64", "complex128"):
        x = cu.asarray(a).astype(dtype)
        if dtype.startswith("complex"):
            x = x + 1j * cu.asarray(a[::-1]).astype(dtype)
        xg = x.to_device("cuda")
        bits_equal(cu.nan_to_num(xg), cu.nan_to_num(x))
        replace = dict(nan=7.0, posinf=1.0, neginf=-2.0)
        bits_equal(cu.nan_to_num(xg, **replace), cu.nan_to_num(x, **replace))
        y = xg.copy()
        assert cu.nan_to_num(y, copy=False) is not None
        bits_equal(y, cu.nan_to_num(x))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "int64", "float16", "float32", "float64", "complex64"])
def test_comparisons_with_python_ints_of_any_size(dtype):
    x = cu.asarray(np.array([0, 1, 3]).astype(dtype))
    xg = x.to_device("cuda")
    for v in (2**63, 2**64, 2**70, -(2**70), 10**30):
        for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
            try:
                want = getattr(cu, name)(x, v)
            except OverflowError:
                with pytest.raises(OverflowError):
                    getattr(cu, name)(xg, v)
                continue
            bits_equal(getattr(cu, name)(xg, v), want)
    bits_equal(xg == None, x == None)  # noqa: E711
    bits_equal(xg != "x", x != "x")


def test_integer_power_and_uint64_integers():
    xg = cu.asarray([1, 2, 3], device="cuda")
    with pytest.raises(ValueError, match="negative integer powers"):
        xg ** -1
    with pytest.raises(ValueError, match="negative integer powers"):
        cu.power(xg, cu.asarray([1, -1, 2], device="cuda"))
    bits_equal(xg ** 2, cu.asarray([1, 4, 9]))
    g_cpu, g_gpu = cu.random.default_rng(9), cu.random.default_rng(9)
    bits_equal(g_gpu.integers(0, 2**64, size=1000, dtype="uint64", device="cuda"),
               g_cpu.integers(0, 2**64, size=1000, dtype="uint64"))
