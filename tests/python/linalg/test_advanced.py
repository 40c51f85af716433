"""cupric.linalg.advanced (python/cupric/linalg/advanced.py): plans, reset_operands, alpha/beta/c,
every epilogue against a NumPy reference, and the errors of bad plans."""

import math

import cupric as cu
import numpy as np
import pytest
from cupric.linalg.advanced import Matmul, MatmulEpilog, matmul

RNG = np.random.default_rng(11)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def gelu_grad(x):
    t = np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x)


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)


A, B = RNG.standard_normal((2, 6, 5)), RNG.standard_normal((5, 4))
BIAS = RNG.standard_normal(6)
P = A @ B
MASK = RNG.random((2, 6, 4)) < 0.5
PRE = RNG.standard_normal((2, 6, 4))
REFERENCE = {
    "DEFAULT": (P, {}),
    "RELU": (np.maximum(P, 0), {}),
    "GELU": (gelu(P), {}),
    "BIAS": (P + BIAS[:, None], {}),
    "RELU_BIAS": (np.maximum(P + BIAS[:, None], 0), {}),
    "GELU_BIAS": (gelu(P + BIAS[:, None]), {}),
    "RELU_AUX": (np.maximum(P, 0), {"relu_aux": P > 0}),
    "GELU_AUX": (gelu(P), {"gelu_aux": P}),
    "RELU_AUX_BIAS": (np.maximum(P + BIAS[:, None], 0), {"relu_aux": P + BIAS[:, None] > 0}),
    "GELU_AUX_BIAS": (gelu(P + BIAS[:, None]), {"gelu_aux": P + BIAS[:, None]}),
    "DRELU": (np.where(MASK, P, 0), {}),
    "DGELU": (P * gelu_grad(PRE), {}),
    "DRELU_BGRAD": (np.where(MASK, P, 0), {"drelu_bgrad": np.where(MASK, P, 0).sum(-1)}),
    "DGELU_BGRAD": (P * gelu_grad(PRE), {"dgelu_bgrad": (P * gelu_grad(PRE)).sum(-1)}),
    "BGRADA": (P, {"bgrada": A.sum(-1)}),
    "BGRADB": (P, {"bgradb": B.sum(-2)}),
}


@pytest.mark.parametrize("name", list(REFERENCE))
def test_every_epilogue_matches_the_reference(name):
    inputs = {"bias": cu.asarray(BIAS), "relu_aux": cu.asarray(MASK), "gelu_aux": cu.asarray(PRE)}
    got = matmul(cu.asarray(A), cu.asarray(B), epilogue=MatmulEpilog[name], epilogue_inputs=inputs)
    want, want_aux = REFERENCE[name]
    d, aux = got if want_aux else (got, {})
    close(d, want)
    assert set(aux) == set(want_aux)
    for k in aux:
        close(aux[k], want_aux[k])


def test_plan_execute_reset_and_alpha_beta():
    c = RNG.standard_normal((6, 4))
    with Matmul(cu.asarray(A), cu.asarray(B), cu.asarray(c), alpha=2.0, beta=0.5, epilogue="relu") as mm:
        assert mm.plan() == ["blas"]
        close(mm.execute(), np.maximum(2 * P + 0.5 * c, 0))
        a2 = RNG.standard_normal(A.shape)
        mm.reset_operands(a=cu.asarray(a2), beta=0.0)
        close(mm.execute(), np.maximum(2 * (a2 @ B), 0))
        with pytest.raises(ValueError, match="planned layout"):
            mm.reset_operands(a=cu.ones((3, 5)))
        with pytest.raises(ValueError, match="planned layout"):
            mm.reset_operands(a=cu.asarray(a2.astype(np.float32)))
    with pytest.raises(RuntimeError, match="freed"):
        mm.execute()


def test_bad_plans():
    with pytest.raises(ValueError, match="inner dimensions"):
        Matmul(cu.ones((3, 4)), cu.ones((5, 2)))
    with pytest.raises(ValueError, match="does not broadcast"):
        Matmul(cu.ones((3, 4)), cu.ones((4, 2)), cu.ones((5, 5)))
    mm = Matmul(cu.ones((3, 4)), cu.ones((4, 2)), epilogue=MatmulEpilog.BIAS)
    with pytest.raises(RuntimeError, match="plan"):
        mm.execute()
    with pytest.raises(ValueError, match=r"needs epilogue_inputs \['bias'\]"):
        mm.plan()
    with pytest.raises(ValueError, match="bias has 2 entries but the result has 3 rows"):
        mm.plan(epilogue_inputs={"bias": cu.ones(2)})
    with pytest.raises(ValueError):
        Matmul(cu.ones((3, 4)), cu.ones((4, 2)), epilogue="nonsense")
