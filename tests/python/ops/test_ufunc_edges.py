"""Every ufunc of the table at the edges of every dtype, against NumPy: zeros of both signs,
infinities, NaN, the largest and smallest magnitudes, subnormals, the ends of the integer types
and complex numbers built from all of those. Unary ufuncs get every value, binary ones every
pair. Same dtype, same errors, the same NaN/inf pattern and finite values within the table's
tolerance (test_ufuncs.TOLERANCE)."""

import itertools

import cupric as cu
import numpy as np
import pytest
from test_ufuncs import DTYPES, TOLERANCE, UFUNCS, numpy_call

# Where NumPy's own answer is not the one to follow, and why (each entry: ufunc -> dtypes).
# - reciprocal of integer 0: NumPy converts 1/0 = inf to the integer type (undefined in C,
#   platform-dependent, with a warning); cupric returns 0.
# - maximum / minimum / fmax / fmin of zeros of both signs: cupric orders -0.0 below +0.0 in
#   any operand order (scalar_math.h); NumPy's result depends on its SIMD path. The values are
#   equal; test_signed_zero_extrema checks cupric's rule.
# - complex64 products whose two terms both overflow (inf - inf): NumPy's SIMD loop fuses one of
#   them (an FMA) and gets an infinity, the plain formula NaN; the exact part is finite anyway.
# - float16 nextafter(a, b) with a == b: NumPy < 2.5 returned a (so the sign of -0.0 / 0.0 pairs
#   differs); 2.5 returns b, as C and cupric do.
INTEGER_ZERO_DIVISORS = {"reciprocal"}
SIGNED_ZERO_FREE = {"maximum", "minimum", "fmax", "fmin", "clip"}
FUSED_PRODUCTS = {"multiply", "square"}
OLD_HALF_NEXTAFTER = np.lib.NumpyVersion(np.__version__) < "2.5.0"


def special_values(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = {0, 1, 2, 3, 7, info.max, info.max - 1, info.max // 2}
        if dt.kind == "i":
            vals |= {-1, -2, -7, info.min, info.min + 1, info.min // 2}
        return np.array(sorted(vals), dtype=dt)
    f = np.finfo(dt)  # (of a complex dtype: of its parts)
    reals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, float(f.max), -float(f.max),
             float(f.max) / 3, float(f.tiny), -float(f.tiny), float(f.smallest_subnormal),
             float(np.sqrt(f.max)) * 2, float(np.sqrt(f.tiny)) / 2]
    if dt.kind == "f":
        return np.array(reals, dtype=dt)
    parts = [0.0, -0.0, 1.5, -1.0, np.inf, np.nan, float(f.max) / 2, -float(f.max) / 4, float(f.tiny),
             float(f.smallest_subnormal) * 5, float(np.sqrt(f.max)) * 3]
    return np.array([complex(r, i) for r, i in itertools.product(parts, parts)], dtype=dt)


def operands(name, dtype):
    v = special_values(dtype)
    if getattr(cu, name).nin == 1:
        return [v]
    if getattr(cu, name).nin == 2:
        return [np.repeat(v, v.size), np.tile(v, v.size)]
    return [v, v[::-1].copy(), np.roll(v, 1)]


def product_error_bound(name, dtype, args):
    """A complex product's parts are differences of products (ar*br - ai*bi): where they cancel, the
    error is a rounding of the terms, |ar*br| + |ai*bi|, not of the result. Whether the CPU variant
    fuses one product into the subtraction (FMA) or not decides the last bits (NumPy's build fuses
    on AVX-512 machines), so each element is allowed 4 ulp of its largest term."""
    if name not in FUSED_PRODUCTS or np.dtype(dtype).kind != "c":
        return 0.0
    a, b = (args[0], args[0]) if name == "square" else (args[0], args[1])
    a, b = np.broadcast_arrays(a.astype(np.complex128), b.astype(np.complex128))
    with np.errstate(all="ignore"):
        terms = np.abs([a.real * b.real, a.imag * b.imag, a.real * b.imag, a.imag * b.real])
    # the largest finite term (an infinite one makes its part infinite, which is compared apart)
    return 4 * float(np.finfo(dtype).eps) * np.where(np.isfinite(terms), terms, 0.0).max(axis=0)


def assert_same_values(got, want, name, dtype, args):
    assert got.dtype == want.dtype, f"{name}({dtype}): dtype {got.dtype} != NumPy's {want.dtype}"
    if want.dtype.kind not in "fc":
        bad = got != want
        assert not bad.any(), f"{name}({dtype}) at {[a[bad][:4] for a in args]}: {got[bad][:4]} != {want[bad][:4]}"
        return
    rtol, atol = TOLERANCE[want.dtype.name]
    atol = atol + product_error_bound(name, want.dtype, args)
    parts = [(got.real, want.real), (got.imag, want.imag)] if want.dtype.kind == "c" else [(got, want)]
    for g, w in parts:
        # NaN where NumPy has NaN, the same infinities, finite values within tolerance
        bad = (np.isnan(g) != np.isnan(w)) | (np.isinf(w) & (g != w)) | (np.isinf(g) & ~np.isinf(w))
        if name in FUSED_PRODUCTS and want.dtype.kind == "c":
            # an overflowing part: inf - inf is NaN unless one product is fused (FMA) into the
            # subtraction; which happens depends on the CPU variant and NumPy's build
            bad &= ~(np.isnan(g) & np.isinf(w))
        finite = np.isfinite(g) & np.isfinite(w)
        with np.errstate(all="ignore"):
            limit = (atol[finite] if np.ndim(atol) else atol) + rtol * np.abs(w[finite].astype(np.float64))
            far = np.abs(g[finite].astype(np.float64) - w[finite]) > limit
        bad[np.flatnonzero(finite)[far]] = True
        if bad.any():
            where = [a[bad][:4] for a in args]
            raise AssertionError(f"{name}({dtype}) at {where}: cupric {g[bad][:4]}, NumPy {w[bad][:4]}")
        old_nextafter = name == "nextafter" and dtype == "float16" and OLD_HALF_NEXTAFTER
        if name not in SIGNED_ZERO_FREE and want.dtype.kind == "f" and not old_nextafter:
            zeros = (w == 0) & (g == 0)
            wrong_sign = np.signbit(g[zeros]) != np.signbit(w[zeros])
            assert not wrong_sign.any(), f"{name}({dtype}): sign of zero at {[a[zeros][wrong_sign][:4] for a in args]}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UFUNCS)
def test_ufunc_at_the_edges_of_every_dtype(name, dtype):
    args = operands(name, dtype)
    if name in INTEGER_ZERO_DIVISORS and np.dtype(dtype).kind in "iub":
        args = [np.where(a == 0, np.ones_like(a), a) for a in args]
    try:
        want = numpy_call(name, args)
    except (TypeError, ValueError, OverflowError) as err:
        kind = next(k for k in (TypeError, ValueError, OverflowError) if isinstance(err, k))
        with pytest.raises(kind):
            getattr(cu, name)(*[cu.asarray(a) for a in args])
        return
    got = getattr(cu, name)(*[cu.asarray(a) for a in args])
    assert_same_values(np.asarray(got), np.asarray(want), name, dtype, args)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_signed_zero_extrema(name, dtype):
    # -0.0 < +0.0 whatever the operand order: max-like ufuncs give +0.0, min-like -0.0
    a = np.array([0.0, -0.0, 0.0, -0.0], dtype=dtype)
    b = np.array([-0.0, 0.0, 0.0, -0.0], dtype=dtype)
    got = np.asarray(getattr(cu, name)(cu.asarray(a), cu.asarray(b)))
    want_neg = [False, False, False, True] if "max" in name else [True, True, False, True]
    assert np.signbit(got).tolist() == want_neg
    assert (got == 0).all()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["log1p", "expm1", "log", "log2", "log10", "sqrt", "exp", "exp2", "absolute",
                                  "reciprocal", "sign", "square", "arcsinh", "arctanh", "tanh"])
@pytest.mark.parametrize("magnitude", ["huge", "tiny"])
def test_complex_functions_at_huge_and_tiny_magnitudes(name, dtype, magnitude):
    # log1p(1e300+1e300j) was inf: its accurate-near-0 formula squared the parts
    f = np.finfo(dtype)
    scale = float(f.max) / 8 if magnitude == "huge" else float(f.tiny) * 16
    rng = np.random.default_rng(len(name))
    z = (rng.uniform(-1, 1, 64) + 1j * rng.uniform(-1, 1, 64)) * scale
    z = np.concatenate([z, [scale + scale * 1j, scale, 1j * scale, -scale - 0j]]).astype(dtype)
    want = numpy_call(name, [z])
    got = np.asarray(getattr(cu, name)(cu.asarray(z)))
    assert_same_values(got, want, name, dtype, [z])
