"""Run by test_cpu_dispatch.py in a subprocess under CUPRIC_CPU_TARGETS=<variant>: the kernels that
are compiled once per instruction set (ufunc loops and vector math, casts, reduction loops,
transposing copies) against NumPy, on arrays long enough for every vector loop, its tail and the
vector math's blocks (one block holds NaN, infinities and huge arguments, so it takes the libm
path), with the ufunc oracle's tolerances. Prints each mismatch; exits 1 when there is one.

    CUPRIC_CPU_TARGETS=avx2 python tests/python/backend/cpu_variant_check.py avx2
"""

import importlib.util
import sys
import warnings
from pathlib import Path

import cupric as cu
import numpy as np

_spec = importlib.util.spec_from_file_location("oracle", Path(__file__).resolve().parents[1] / "ops" /
                                               "test_ufuncs.py")
oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oracle)

N = 1037  # four 256-element blocks of the vector math and a tail; not a multiple of any vector width
DTYPES = ["bool", "uint8", "int16", "int32", "int64", "float32", "float64", "complex64", "complex128"]
FAILURES = []


def expect(what, got, want):
    try:
        if want.dtype.kind in "fc":
            oracle.assert_matches(got, want, what)
        else:
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=what)
            assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    except AssertionError as e:
        FAILURES.append(f"{what}: {str(e).strip()[:600]}")


def with_special_block(a):
    """a with NaN, infinities, a huge argument and signed zeros in its second block."""
    if a.dtype.kind != "f":
        return a
    a = a.copy()
    a[300:306] = [np.nan, np.inf, -np.inf, 3e30 if a.dtype == np.float32 else 3e300, -0.0, 0.0]
    return a


def check_ufuncs():
    for name in oracle.UFUNCS:
        for dtype in DTYPES:
            args = oracle.inputs(name, dtype, (N,))
            if getattr(cu, name).nin == 1:
                args = [with_special_block(args[0])]
            try:
                want = oracle.numpy_call(name, args)
            except TypeError:
                continue
            expect(f"{name}({dtype})", getattr(cu, name)(*[cu.asarray(a) for a in args]), want)


def near_one(dtype, shape, rng):
    """Values whose products of a few thousand stay finite: integers in [-2, 2], floats near 1."""
    if dtype[0] not in "fc":
        return oracle.make(dtype, shape, rng, -2, 2)
    a = rng.uniform(0.99, 1.01, shape)
    if dtype[0] == "c":
        a = a + 1j * rng.uniform(-0.01, 0.01, shape)
    return a.astype(dtype)


def check_reductions():
    rng = np.random.default_rng(7)
    for dtype in DTYPES:
        for shape in [(N,), (37, 129), (129, 37), (5, 7, 33)]:
            a = near_one(dtype, shape, rng)
            x = cu.asarray(a)
            for axis in [None, *range(len(shape))]:
                for op in ["sum", "prod", "min", "max", "any", "all"]:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # NumPy's complex min/max
                        want = getattr(np, op)(a, axis=axis)
                    expect(f"{op}({dtype}{shape}, axis={axis})", getattr(cu, op)(x, axis=axis), np.asarray(want))
        if dtype.startswith("float"):  # NaN: min/max propagate it, fmin/fmax (nanmin) skip it
            a = with_special_block(rng.random(N).astype(dtype))
            for op in ["min", "max"]:
                expect(f"{op}({dtype} with NaN)", getattr(cu, op)(cu.asarray(a)), np.asarray(getattr(np, op)(a)))


def check_casts():
    rng = np.random.default_rng(8)
    for src in DTYPES:
        a = oracle.make(src, (N,), rng, 0, 100)
        for dst in DTYPES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # complex -> real drops the imaginary part
                want = a.astype(dst)
                expect(f"astype({src} -> {dst})", cu.asarray(a).astype(dst), want)
                m = a[: 37 * 28].reshape(37, 28)
                expect(f"astype({src} -> {dst}) of a transposed view", cu.asarray(m).T.astype(dst), m.T.astype(dst))


def check_transposes():
    rng = np.random.default_rng(9)
    for dtype in ["int8", "int16", "float32", "float64", "complex128"]:
        for shape in [(256, 256), (100, 37), (37, 1000), (3, 5000)]:
            m = oracle.make(dtype, shape, rng)
            expect(f"{dtype}{shape}.T.copy()", cu.asarray(m).T.copy(), m.T.copy())
            expect(f"{dtype}{shape} from a transposed view", cu.asarray(m.T).copy(), m.T.copy())


def check_exp_range():
    """exp over its whole finite range, subnormal results included, within 2 ulp of NumPy: each
    variant has its own exp (AVX-512 a table-driven one)."""
    rng = np.random.default_rng(10)
    for dtype, lo, hi in [("float64", -745.0, 709.7), ("float64", -745.0, -700.0), ("float64", -1.0, 1.0),
                          ("float32", -103.0, 88.7), ("float32", -103.0, -85.0)]:
        a = rng.uniform(lo, hi, 4 * N).astype(dtype)
        got, want = np.asarray(cu.exp(cu.asarray(a))), np.exp(a)
        try:
            np.testing.assert_array_max_ulp(got, want, maxulp=2, dtype=np.dtype(dtype))
        except AssertionError as e:
            FAILURES.append(f"exp({dtype} in [{lo}, {hi}]): {str(e).strip()[:600]}")


def check_exp_table_accuracy(variant):
    """The table-driven float64 exps (AVX-512: 16 entries, AVX2: 32) within one ulp of a long
    double reference, across the AVX2 table's lower edge (-707: below it a vector takes the
    scalar code) and the whole range; in-place too (the AVX2 kernel checks its block first)."""
    if variant == "baseline" or np.finfo(np.longdouble).nmant <= 52:
        return
    rng = np.random.default_rng(11)
    for lo, hi in [(-745.0, 709.7), (-708.0, -706.0), (-0.05, 0.05), (700.0, 709.7)]:
        a = rng.uniform(lo, hi, 4 * N)
        exact = np.exp(a.astype(np.longdouble))
        for how, got in [("out of place", np.asarray(cu.exp(cu.asarray(a)))),
                         ("in place", np.asarray(cu.exp(x := cu.asarray(a.copy()), out=x)))]:
            err = np.abs(got.astype(np.longdouble) - exact) / np.spacing(exact.astype(np.float64))
            if not err.max() <= 1.0:
                FAILURES.append(f"exp(float64 in [{lo}, {hi}]) {how}: {float(err.max()):.3f} ulp from the exact "
                                f"value at x = {a[err.argmax()]!r}, more than 1")


def main():
    variant = cu.show_config("dicts")["cpu"]["variant"]
    if variant != sys.argv[1]:
        print(f"the CPU kernels' variant is {variant}, not {sys.argv[1]}")
        return 1
    for check in (check_ufuncs, check_reductions, check_casts, check_transposes, check_exp_range):
        check()
    check_exp_table_accuracy(variant)
    for f in FAILURES:
        print(f)
    print(f"{variant}: {len(FAILURES)} mismatches")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
