"""cupric.debug on the CPU: check_finite raises at the first op whose output holds NaN or Inf,
naming the op, its inputs and the caller's line; sync mode leaves results as they are; both
restore the previous state as context managers and follow their environment variables."""

import os
import subprocess
import sys

import cupric as cu
import numpy as np
import pytest

RNG = np.random.default_rng(11)


def test_check_finite_names_the_first_op_that_makes_nan_and_the_line():
    x = cu.asarray(RNG.random((4, 5)) + 0.5)
    zero = cu.zeros((4, 5))
    with cu.debug.check_finite():
        y = x * 2.0  # fine
        with pytest.raises(FloatingPointError) as info:
            zero / zero  # the NaN is born here
        line = sys._getframe().f_lineno - 1
    message = str(info.value)
    assert "op 'divide'" in message and "(4, 5) float64, (4, 5) float64" in message
    assert f"test_debug.py:{line}" in message
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x) * 2.0)
    assert not cu._cupric._profiler.mode("check_finite")
    assert np.isnan(np.asarray(zero / zero)).all()  # off again: no error


@pytest.mark.parametrize("make", [
    lambda x: cu.log(x - x),                     # -inf from log(0)
    lambda x: cu.exp(x * 1000.0),                # overflow
    lambda x: cu.sqrt(x - 10.0),                 # NaN from a negative
    lambda x: (x * 1e300 * 1e300).sum(),         # the multiply overflows first
])
def test_check_finite_finds_inf_and_nan_from_several_ops(make):
    x = cu.asarray(RNG.random(64) + 1.0)
    with cu.debug.check_finite(), pytest.raises(FloatingPointError, match="produced NaN or Inf"):
        make(x)


def test_check_finite_ignores_integers_and_existing_nans_pass_through_reductions_once():
    with cu.debug.check_finite():
        i = cu.arange(10) // 3
        assert int(i.sum()) == sum(k // 3 for k in range(10))
        bad = cu.asarray(np.array([1.0, np.nan]))  # created from NumPy: not an op
        with pytest.raises(FloatingPointError, match="op 'sum'"):
            bad.sum()


def test_sync_mode_keeps_results_and_restores_the_previous_state():
    a = RNG.random((20, 30))
    x = cu.asarray(a)
    assert not cu._cupric._profiler.mode("sync")
    with cu.debug.sync():
        assert cu._cupric._profiler.mode("sync")
        np.testing.assert_allclose(np.asarray(cu.matmul(x, x.T).sum(axis=1)), (a @ a.T).sum(axis=1))
    assert not cu._cupric._profiler.mode("sync")
    on = cu.debug.sync()  # a plain call leaves it on
    try:
        assert cu._cupric._profiler.mode("sync") and bool(on)
    finally:
        cu.debug.sync(False)


@pytest.mark.parametrize("variable", ["CUPRIC_SYNC", "CUPRIC_CHECK_FINITE"])
def test_environment_variables_turn_the_modes_on_at_import(variable):
    code = ("import cupric as cu; m = cu._cupric._profiler; "
            "print(m.mode('sync'), m.mode('check_finite'))")
    env = {**os.environ, variable: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == (["True", "False"] if variable == "CUPRIC_SYNC" else ["False", "True"])
