"""NumPy fallbacks: NumPy functions and ufunc methods that cupric lacks (or whose arguments its own
function refuses) run in NumPy on the same memory for CPU arrays and give what NumPy gives on
NumPy input, as cupric arrays; the modes of cu.set_fallback; fallback_stats; device arrays (the
stand-in driver here, a real GPU when present)."""

import os
import subprocess
import sys
import warnings

import cupric as cu
import numpy as np
import pytest
from fake_driver import run_with_fake_driver

RNG = np.random.default_rng(7)
A = RNG.standard_normal(40)
B = RNG.standard_normal((6, 7))
C = RNG.standard_normal(40)
INTS = RNG.integers(0, 9, 30)
SQUARE = RNG.standard_normal((5, 5)) + 5 * np.eye(5)
PHASES = np.cumsum(RNG.uniform(0, 2.5, 30))
XP = np.sort(RNG.uniform(-3, 3, 12))

# a NumPy function cupric lacks, the example of a fallback (complex powers of negative reals)
LACKING = np.emath.power

# (label, function, NumPy arguments): each runs on cupric copies of the arguments and on the
# NumPy ones, and the answers must agree
CASES = [
    ("atleast_1d", np.atleast_1d, (A,)),
    ("atleast_1d-0d", np.atleast_1d, (A[3:4].reshape(()),)),
    ("atleast_1d-many", np.atleast_1d, (A, B, 3.0)),
    ("atleast_2d", np.atleast_2d, (A,)),
    ("atleast_3d", np.atleast_3d, (B,)),
    ("broadcast_arrays-None", np.broadcast_arrays, (A[:6, None], B, None)),
    ("broadcast_arrays-scalars", np.broadcast_arrays, (B, 2.0, [1.0] * 7)),
    ("histogram", np.histogram, (A,), {"bins": 7}),
    ("histogram-density", np.histogram, (A,), {"bins": 5, "range": (-1, 1), "density": True}),
    ("histogram2d", np.histogram2d, (A, C), {"bins": 4}),
    ("histogram_bin_edges", np.histogram_bin_edges, (A,), {"bins": "auto"}),
    ("interp", np.interp, (A, XP, np.sin(XP))),
    ("interp-lists", np.interp, (A, [-1.0, 0.0, 1.0], [0.0, 10.0, 5.0])),
    ("polyfit", np.polyfit, (A, 3 * A**2 - C, 3)),
    ("polyval", np.polyval, ([1.0, -2.0, 0.5], A)),
    ("unwrap", np.unwrap, (PHASES,)),
    ("convolve", np.convolve, (A, C[:5])),
    ("correlate", np.correlate, (A, C[:7], "full")),
    ("diff", np.diff, (B,), {"axis": 0}),
    ("gradient", np.gradient, (B,)),
    ("trapezoid", np.trapezoid, (A,)),
    ("cov", np.cov, (B,)),
    ("corrcoef", np.corrcoef, (B,)),
    ("median", np.median, (B,), {"axis": 1}),
    ("median-view", np.median, (B[::-1, ::2],)),
    ("percentile", np.percentile, (A, [10, 50, 90])),
    ("quantile", np.quantile, (A, 0.3)),
    ("sort", np.sort, (B,), {"axis": 0}),
    ("argsort", np.argsort, (A,)),
    ("searchsorted", np.searchsorted, (XP, A)),
    ("unique", np.unique, (INTS,), {"return_counts": True}),
    ("cross", np.cross, (B[:, :3], B[::-1, 3:6])),
    ("outer", np.outer, (A[:5], C[:4])),
    ("kron", np.kron, (B[:2, :2], SQUARE[:3, :3])),
    ("tile", np.tile, (B, (2, 1))),
    ("repeat", np.repeat, (A, 2)),
    ("pad", np.pad, (B, 2)),
    ("roll", np.roll, (A, 3)),
    ("flip", np.flip, (B, 1)),
    ("dot", np.dot, (B, B.T)),
    ("linalg.solve", np.linalg.solve, (SQUARE, A[:5])),
    ("emath.power", np.emath.power, (A, 3)),
    ("split", np.split, (A, 4)),
    ("array_split", np.array_split, (A, 3)),
    ("digitize", np.digitize, (A, XP)),
    ("bincount", np.bincount, (INTS,)),
    ("ptp", np.ptp, (B,), {"axis": 0}),
    ("average", np.average, (A,), {"weights": np.abs(C)}),
    ("isin", np.isin, (INTS, INTS[:5])),
    ("lexsort", np.lexsort, ((A[:30], INTS),)),
    ("apply_along_axis", np.apply_along_axis, (np.sum, 0, B)),
    ("frexp", np.frexp, (A,)),
    ("modf", np.modf, (A,)),
    ("add.reduceat", np.add.reduceat, (A, [0, 5, 20])),
    ("maximum.accumulate", np.maximum.accumulate, (A,)),
]


def to_cupric(obj):
    if isinstance(obj, np.ndarray):
        return cu.asarray(obj)
    if type(obj) in (list, tuple):
        return type(obj)(to_cupric(o) for o in obj)
    return obj


def cupric_has(label):
    """Whether cupric has the function a case names ("linalg.solve" looks in cu.linalg)."""
    obj = cu
    for part in label.split("-")[0].split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return True


def same(result, expected, where, own=False):
    """result (from cupric arrays) is NumPy's answer: the same structure, cupric arrays for
    NumPy's arrays of dtypes cupric has, bit-identical values. `own`: cupric's own function
    answered, whose sequences may be the Array API's lists where NumPy has tuples."""
    if type(expected) is np.ndarray and expected.dtype != object:
        assert isinstance(result, cu.ndarray), f"{where}: {type(result).__name__}"
        assert result.dtype == expected.dtype and result.shape == expected.shape, where
        if own and expected.dtype.kind in "fc":  # cupric's own composition: NumPy's answer to rounding
            np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-12, atol=1e-12, err_msg=where)
        else:  # NumPy ran on the same memory: bit-identical
            np.testing.assert_array_equal(np.asarray(result), expected, err_msg=where)
    elif type(expected) in (list, tuple):
        assert type(result) is type(expected) or (own and type(result) in (list, tuple)), where
        assert len(result) == len(expected), where
        for i, (r, e) in enumerate(zip(result, expected, strict=True)):
            same(r, e, f"{where}[{i}]", own)
    elif own and isinstance(expected, np.generic) and isinstance(result, cu.ndarray):
        # cupric's own reductions return 0-d arrays where NumPy returns scalars
        assert result.shape == () and result.dtype == expected.dtype, where
        np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-12, atol=1e-12, err_msg=where)
    else:  # scalars and object arrays stay NumPy's
        assert type(result) is type(expected), f"{where}: {type(result).__name__}"
        np.testing.assert_array_equal(result, expected, err_msg=where)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_numpy_runs_what_cupric_lacks(case):
    label, func, args, kwargs = (case + ({},))[:4]
    expected = func(*args, **kwargs)
    before = cu.fallback_stats().get(f"numpy.{label}", {}).get("cpu", 0)
    result = func(*to_cupric(args), **to_cupric(kwargs))
    own = cupric_has(label)
    same(result, expected, label, own)
    if not own:  # cupric lacks it: counted as a fallback
        counts = cu.fallback_stats()
        assert sum(c["cpu"] for c in counts.values()) > 0
        name = f"numpy.{label.split('-')[0]}"
        if name in counts:
            assert counts[name]["cpu"] > before and counts[name]["bytes"] == 0


def test_results_share_memory_with_their_inputs():
    x = cu.asarray(B.copy())
    assert np.atleast_1d(x) is x and np.atleast_2d(x) is x  # NumPy hands back its argument: so do we
    flipped = np.flip(x, 0)
    assert isinstance(flipped, cu.ndarray) and np.shares_memory(np.asarray(flipped), np.asarray(x))
    rows = np.split(x, 3)
    rows[0][0, 0] = 99.0  # a view of x's memory, as NumPy's split gives
    assert float(x[0, 0]) == 99.0


def test_bfloat16_and_views_reach_numpy_without_copies():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = cu.asarray(B.astype(np.float32)).astype("bfloat16")
    rolled = np.roll(x, 2, axis=1)
    assert rolled.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(rolled.astype("float32")),
                                  np.roll(np.asarray(x).astype(ml_dtypes.bfloat16).astype(np.float32), 2, axis=1))
    view = cu.asarray(B)[::-2, 1::3]
    np.testing.assert_array_equal(np.asarray(np.median(view, axis=0)), np.median(B[::-2, 1::3], axis=0))


def test_out_arguments_receive_the_result():
    x = cu.asarray(B)
    out = cu.zeros((6, 6))
    assert np.dot(x, x.T, out=out) is out
    np.testing.assert_allclose(np.asarray(out), B @ B.T, rtol=1e-12)
    taken = cu.zeros(3)
    assert np.take(cu.asarray(A), [4, 0, 9], out=taken) is taken
    np.testing.assert_array_equal(np.asarray(taken), A[[4, 0, 9]])
    mantissa, exponent = cu.zeros(40), cu.zeros(40, dtype=cu.int32)
    res = np.frexp(cu.asarray(A), out=(mantissa, exponent))
    assert res[0] is mantissa and res[1] is exponent
    np.testing.assert_array_equal(np.asarray(mantissa), np.frexp(A)[0])
    np.testing.assert_array_equal(np.asarray(exponent), np.frexp(A)[1])


def test_functions_that_write_into_their_arguments():
    for func, args in [(np.fill_diagonal, (0.0,)), (np.copyto, (5.0,)), (np.put, ([0, 3, 8], [9.0, 8.0, 7.0])),
                       (np.place, (B > 0, [1.0, 2.0]))]:
        ref, x = B.copy(), cu.asarray(B.copy())
        func(ref, *args)
        assert func(x, *to_cupric(args)) is None
        np.testing.assert_array_equal(np.asarray(x), ref, err_msg=func.__name__)
    ref, x = np.zeros(5), cu.zeros(5)
    np.add.at(ref, [0, 0, 2], 1.0)
    np.add.at(x, cu.asarray([0, 0, 2]), 1.0)
    np.testing.assert_array_equal(np.asarray(x), ref)
    with pytest.raises(ValueError, match="read-only"):  # as NumPy with a read-only array
        np.fill_diagonal(cu.broadcast_to(cu.zeros(3), (3, 3)), 1.0)


def test_numpy_errors_stay_numpys():
    errors = []
    for a, c in ((cu.asarray(A), cu.asarray(C[:5])), (A, C[:5])):
        with pytest.raises(TypeError) as caught:  # NumPy's TypeError for lengths that differ
            np.polyfit(a, c, 2)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] == "expected x and y to have same length"


@pytest.fixture
def mode():
    """Sets a fallback mode for one test and restores the previous one."""
    saved = cu.get_fallback()
    yield cu.set_fallback
    cu.set_fallback(saved)


def test_modes(mode):
    mode("strict")
    assert cu.get_fallback() == "strict"
    x = cu.asarray(A)
    strict_error = r"cupric does not implement numpy\.lib\.scimath\.power \(cu\.set_fallback\('strict'\)"
    with pytest.raises(TypeError, match=strict_error):
        LACKING(x, 3)
    with pytest.raises(TypeError, match=r"numpy\.isnat"):
        np.isnat(x)
    with pytest.raises(TypeError, match="cannot convert 'NoneType' to a cupric array"):
        np.broadcast_arrays(x, None)  # cupric's own error for what its function refuses
    np.testing.assert_allclose(np.asarray(np.sin(x)), np.sin(A), rtol=1e-15)  # what cupric has still runs
    for m in ("raise", "warn", "allow"):
        mode(m)
        same(LACKING(x, 3), LACKING(A, 3), m)  # CPU arrays run in NumPy in every mode but strict
    with pytest.raises(ValueError, match=r"unknown fallback mode 'loud' in set_fallback\(\); choose one of 'strict'"):
        mode("loud")
    assert cu.get_fallback() == "allow"


def test_fallback_stats_count_per_function():
    cu.fallback_stats(reset=True)
    x = cu.asarray(A)
    LACKING(x, 3)
    LACKING(x, 5)
    np.add.reduceat(x, [0, 5])
    np.sin(x)  # cupric's own: not counted
    assert cu.fallback_stats(reset=True) == {
        "numpy.lib.scimath.power": {"cpu": 2, "device": 0, "bytes": 0},
        "numpy.add.reduceat": {"cpu": 1, "device": 0, "bytes": 0}}
    assert cu.fallback_stats() == {}


def run_python(code, **env):
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)


def test_environment_variable_sets_the_mode():
    env = {k: v for k, v in os.environ.items() if k != "CUPRIC_FALLBACK"}
    out = subprocess.run([sys.executable, "-c", "import cupric as cu; print(cu.get_fallback())"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.stdout.strip() == "raise", out.stderr  # the default
    out = run_python("import cupric as cu; print(cu.get_fallback())", CUPRIC_FALLBACK="warn")
    assert out.returncode == 0 and out.stdout.strip() == "warn", out.stderr
    out = run_python("import cupric as cu, numpy as np; np.emath.power(cu.zeros(4), 2)", CUPRIC_FALLBACK="noisy")
    assert out.returncode != 0
    assert "unknown fallback mode 'noisy' in the environment variable CUPRIC_FALLBACK" in out.stderr


# ---- device arrays ----------------------------------------------------------------------------------

_DEVICE_SCRIPT = """
import warnings, numpy as np, cupric as cu
windows = np.emath.power  # a NumPy function cupric lacks
cu.fallback_stats(reset=True)
cu._fallback._warned.clear()  # (when run inside the test process: warnings come once per function)
a = np.random.default_rng(1).standard_normal(40)
x = cu.asarray(a).to_device("cuda:0")
try:
    windows(x, 3)
    raise AssertionError("no error")
except TypeError as e:
    msg = str(e)
    for part in ("numpy.lib.scimath.power", "cuda:0", "x.to_device('cpu')",
                 "cu.set_fallback('warn')", "CUPRIC_FALLBACK=warn"):
        assert part in msg, msg
try:
    np.broadcast_arrays(x, None)
    raise AssertionError("no error")
except TypeError as e:
    assert "cannot convert 'NoneType'" in str(e) and "cu.set_fallback('warn')" in str(e), str(e)
assert cu.set_fallback("warn") == "raise"
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    w5 = windows(x, 5)
    w3 = windows(x, 3)
    sums = np.add.reduceat(x, [0, 5, 20])
assert [str(w.category.__name__) for w in caught] == ["FallbackWarning", "FallbackWarning"], caught
assert "numpy.lib.scimath.power" in str(caught[0].message) and "numpy.add.reduceat" in str(caught[1].message)
assert caught[0].filename == "<string>", caught[0].filename  # points at the caller
for got, want in ((w5, windows(a, 5)), (w3, windows(a, 3)), (sums, np.add.reduceat(a, [0, 5, 20]))):
    assert isinstance(got, cu.ndarray) and got.device == "cuda:0", got.device
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), want)
stats = cu.fallback_stats()["numpy.lib.scimath.power"]
assert stats["device"] == 2 and stats["cpu"] == 0 and stats["bytes"] == 2 * 320 + 2 * 640, stats
square = cu.asarray(np.ones((3, 3))).to_device("cuda:0")
try:
    np.add.at(square, [0], 1.0)
    raise AssertionError("no error")
except TypeError as e:
    assert "numpy.add.at writes into an argument that lives on cuda:0" in str(e), str(e)
cu.set_fallback("allow")
with warnings.catch_warnings():
    warnings.simplefilter("error")
    np.add.reduceat(x, [0, 5])
"""


def test_device_arrays_with_the_stand_in_driver(fake_dir):
    # the stand-in driver copies memory (it runs no kernels): enough for host round trips
    run_with_fake_driver(fake_dir, _DEVICE_SCRIPT, env={"CUPRIC_DEVICE": "cpu"})


@pytest.mark.gpu
def test_device_arrays_on_a_gpu(mode):
    exec(compile(_DEVICE_SCRIPT.replace('assert cu.set_fallback("warn") == "raise"', 'cu.set_fallback("warn")'),
                 "<string>", "exec"), {})
    mode("allow")
    x = cu.asarray(B).to_device("cuda:0")
    out = cu.zeros((6, 6), device="cuda:0")
    assert np.dot(x, x.T, out=out) is out  # out= on the device receives the result
    np.testing.assert_allclose(np.asarray(out.to_device("cpu")), B @ B.T, rtol=1e-12)
    for case in CASES:
        label, func, args, kwargs = (case + ({},))[:4]
        on_gpu = lambda o: cu.asarray(o).to_device("cuda:0") if isinstance(o, np.ndarray) else o  # noqa: E731
        gpu_args = tuple(on_gpu(a) if not isinstance(a, tuple) else tuple(on_gpu(b) for b in a) for a in args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = func(*gpu_args, **{k: on_gpu(v) for k, v in kwargs.items()})
        host = result.to_device("cpu") if isinstance(result, cu.ndarray) else result
        if isinstance(host, (tuple, list)):
            host = type(host)(r.to_device("cpu") if isinstance(r, cu.ndarray) else r for r in host)
        same(host, func(*args, **kwargs), label, cupric_has(label))


def test_results_cupric_cannot_hold_are_refused():
    x = cu.ones(3)
    with pytest.raises(TypeError, match="cannot hold"):  # structured: refused, as CuPy does
        np.empty_like(x, dtype=[("a", "f8"), ("i", "i8")])
    assert isinstance(np.empty_like(x, dtype=object), np.ndarray)  # NumPy's own objects stay NumPy's
    np.testing.assert_array_equal(np.asarray(x), np.ones(3))  # the input is untouched
