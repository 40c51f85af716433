"""cupric.emath against numpy.emath: real and out-of-domain inputs of several dtypes (the result
turns complex as a whole), on the CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest
from oracle_helpers import assert_same

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(71)
UNARY = ["sqrt", "log", "log2", "log10", "arccos", "arcsin", "arctanh"]


def inputs(dtype):
    """Inside the real domain of every function, then with values outside it (negative, |x| > 1)."""
    inside = RNG.uniform(0.05, 0.95, 7).astype(dtype)
    outside = (RNG.uniform(-3, 3, 7) * (4 if np.dtype(dtype).kind in "iu" else 1)).astype(dtype)
    return inside, outside


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "int64", "complex64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_functions_match_numpy(name, dtype, device):
    for a in inputs(dtype):
        if np.dtype(dtype).kind in "iu" and name.startswith("arc"):
            a = a.astype(dtype)  # integers: |x| > 1 except 0 and ±1
        with np.errstate(all="ignore"):
            want = getattr(np.emath, name)(a)
        got = getattr(cu.emath, name)(cu.asarray(a, device=device))
        assert got.device == device
        assert_same(got, want)


@pytest.mark.parametrize("device", DEVICES)
def test_logn_and_power_match_numpy(device):
    x = RNG.uniform(-4, 4, 6)
    n = np.array([2.0, -3.0, 10.0, 0.5, 4.0, 7.0])
    on_device = cu.asarray(x, device=device)
    assert_same(cu.emath.logn(cu.asarray(n, device=device), on_device), np.emath.logn(n, x))
    assert_same(cu.emath.logn(2, cu.asarray(np.abs(x), device=device)), np.emath.logn(2, np.abs(x)))
    p = np.array([2, -1, 3, 0, -2, 1])
    assert_same(cu.emath.power(on_device, cu.asarray(p, device=device)), np.emath.power(x, p))
    assert_same(cu.emath.power(cu.asarray(np.abs(x), device=device), 0.5), np.emath.power(np.abs(x), 0.5))
    ints = np.array([2, 3, 4])
    assert_same(cu.emath.power(cu.asarray(ints, device=device), cu.asarray([-1, 2, 1], device=device)),
                np.emath.power(ints, [-1, 2, 1]))


def test_scalars_lists_and_empty_inputs():
    assert complex(cu.emath.sqrt(-4)) == 2j
    assert_same(cu.emath.log([-1.0, 1.0]), np.emath.log([-1.0, 1.0]))
    assert_same(cu.emath.arcsin(cu.asarray(np.zeros(0))), np.emath.arcsin(np.zeros(0)))
    assert_same(cu.emath.sqrt(cu.asarray(np.array([4.0, 9.0]))[::-1]), np.emath.sqrt(np.array([9.0, 4.0])))
