"""joblib's Parallel returning cupric arrays: threads share them as they are; worker processes
(loky) get their arguments and send their results pickled."""

import cupric as cu
import numpy as np
import pytest
from clients import CAN_PICKLE, check, needs_feature

joblib = pytest.importorskip("joblib")

RNG = np.random.default_rng(13)
CHUNKS = [RNG.standard_normal((5, 4)) for _ in range(4)]


def work(x):
    """Runs in the worker: a cupric computation on a cupric argument."""
    return cu.cumsum(cu.sin(x) * 2 + 1, axis=0)


def expected(n):
    return np.cumsum(np.sin(n) * 2 + 1, axis=0)


def run(backend, n_jobs=2):
    return joblib.Parallel(n_jobs=n_jobs, backend=backend)(joblib.delayed(work)(cu.asarray(c)) for c in CHUNKS)


def test_threads():
    for got, n in zip(run("threading"), CHUNKS, strict=True):
        check(got, expected(n), rtol=1e-12)


@needs_feature(CAN_PICKLE, "cupric arrays pickle (loky sends arguments and results between processes)")
def test_loky_processes():
    got = run("loky")
    assert len(got) == len(CHUNKS)
    for g, n in zip(got, CHUNKS, strict=True):
        check(g, expected(n), rtol=1e-12)


@needs_feature(CAN_PICKLE, "cupric arrays pickle (loky sends arguments and results between processes)")
def test_loky_generators_and_ufuncs_cross_too():
    """A Generator and a ufunc as arguments: each worker continues the same stream."""
    rng = cu.random.default_rng(21)
    got = joblib.Parallel(n_jobs=2, backend="loky")(
        joblib.delayed(lambda g, f: f(g.standard_normal(8)))(rng, cu.exp) for _ in range(2)
    )
    want = cu.exp(cu.random.default_rng(21).standard_normal(8))
    for g in got:
        check(g, np.asarray(want))
