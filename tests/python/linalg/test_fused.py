"""cupric.linalg._fused (the GPU side of advanced.Matmul) without a GPU: the layouts it hands to
cuBLASLt, and every fused epilogue run through a fake library that follows cuBLASLt's documented
semantics (its column-major D, bias along D's rows, gelu's aux matrix, the gradients of A and B),
so a wrong layout or name mapping shows as a wrong result against the reference epilogue."""

import math

import cupric as cu
import numpy as np
import pytest
from cupric.linalg import _fused
from cupric.linalg.advanced import Matmul, MatmulEpilog
from test_advanced import BIAS, MASK, PRE, REFERENCE, A, B, close


def test_matrices_layouts():
    x = _fused.matrices((2, 5, 3), "float32", cu.ones(1).device, True, 8)
    assert x.shape == (2, 5, 3) and x.strides == (96, 4, 32)  # column-major, ld 8
    y = _fused.matrices((2, 5, 3), "float32", cu.ones(1).device, False, 8)
    assert y.shape == (2, 5, 3) and y.strides == (160, 32, 4)  # row-major, ld 8


def test_the_cpu_has_no_library_plan():
    a, b = cu.ones((4, 3)), cu.ones((3, 2))
    assert cu._cupric._plan_matmul(a, b, cu.empty((4, 2)), None, None, 1.0, 0.0, "relu") is None
    with pytest.raises(ValueError, match="no fused epilogue named 'nonsense'"):
        cu._cupric._plan_matmul(a, b, cu.empty((4, 2)), None, None, 1.0, 0.0, "nonsense")
    with pytest.raises(ValueError, match=r"shapes \(4, 3\) @ \(3, 2\) do not make \(4, 3\)"):
        cu._cupric._plan_matmul(a, b, cu.empty((4, 3)), None, None, 1.0, 0.0, "relu")
    assert Matmul(a, b).plan() == ["blas"]


def gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def gelu_grad(x):
    t = np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x)


class FakeLt:
    """cuBLASLt as src/backend/cuda/matmul_lt.cpp drives it, in NumPy: a row-major d is computed as
    cuBLASLt's column-major D = d^T = b^T a^T, a column-major d as D = a b."""

    def __init__(self, a, b, d, bias, aux, alpha, beta, epilogue):
        self.epilogue = epilogue
        item = d.itemsize
        m, n = d.shape[-2:]
        self.transposed = d.strides[-1] == item and (d.strides[-2] == n * item or m == 1) and \
            epilogue not in _fused.ROWS_BIAS
        assert self.transposed or d.strides[-2] == item, "cuBLASLt needs a row- or column-major result"

    library = "fake cuBLASLt"
    chosen = 0

    def algorithms(self):
        return ["fake 0", "fake 1"]

    def choose(self, index):
        self.chosen = index

    def time(self, *args):
        return [2.0, 1.0][args[-2]]  # (operands..., index, iterations): candidate 1 is the faster

    def execute(self, a, b, d, bias, aux, alpha, beta, epilogue):
        a, b = np.asarray(a), np.asarray(b)
        sw = lambda x: np.swapaxes(x, -1, -2)  # noqa: E731
        lt_a, lt_b = (sw(b), sw(a)) if self.transposed else (a, b)
        lt_d = sw(np.asarray(d)) if self.transposed else np.asarray(d)
        pre = alpha * (lt_a @ lt_b) + (beta * lt_d if beta else 0)
        if "bias" in epilogue and "bgrad" not in epilogue:
            pre = pre + np.asarray(bias)[:, None]  # cuBLASLt's bias runs along D's rows
        out = pre
        if epilogue.startswith("relu"):
            out = np.maximum(pre, 0)
        elif epilogue.startswith("gelu"):
            out = gelu(pre)
        elif epilogue.startswith("dgelu"):
            lt_aux = sw(np.asarray(aux)) if self.transposed else np.asarray(aux)
            out = pre * gelu_grad(lt_aux)
        if epilogue in ("gelu_aux", "gelu_aux_bias"):
            aux[...] = cu.asarray(sw(pre) if self.transposed else pre)
        grads = {"dgelu_bgrad": lambda: out.sum(-1), "bgrada": lambda: lt_a.sum(-1), "bgradb": lambda: lt_b.sum(-2)}
        name = {"bgrada": "bgradb", "bgradb": "bgrada"}.get(epilogue, epilogue) if self.transposed else epilogue
        if name in grads:
            bias[...] = cu.asarray(grads[name]())
        d[...] = cu.asarray(sw(out) if self.transposed else out)


@pytest.fixture
def fake_library(monkeypatch):
    monkeypatch.setattr(_fused, "DEVICES", ("cuda", "cpu"))
    monkeypatch.setattr(_fused, "library_plan", FakeLt)
    monkeypatch.setattr(cu._cupric, "compile_cache", type("NoDisk", (), {"directory": ""})())


def wanted(name):
    """(a, b, epilogue inputs, (result, aux)) of one case: the bias gradients are cuBLASLt's per
    product, so those cases take one matrix (batches of them are composed, as the reference)."""
    if "BGRAD" not in name:
        return A, B, {"bias": BIAS, "relu_aux": MASK, "gelu_aux": PRE}, REFERENCE[name]
    a, mask, pre = A[0], MASK[0], PRE[0]
    p = a @ B
    d = {"DRELU_BGRAD": np.where(mask, p, 0), "DGELU_BGRAD": p * gelu_grad(pre)}.get(name, p)
    grad = {"BGRADA": a.sum(-1), "BGRADB": B.sum(-2)}.get(name, d.sum(-1))
    return a, B, {"relu_aux": mask, "gelu_aux": pre}, (d, {name.lower(): grad})


@pytest.mark.parametrize("name", list(REFERENCE))
def test_every_fused_epilogue_matches_the_reference(fake_library, name):
    a, b, inputs, want = wanted(name)
    inputs = {k: cu.asarray(v) for k, v in inputs.items()}
    with Matmul(cu.asarray(a), cu.asarray(b), epilogue=MatmulEpilog[name], epilogue_inputs=inputs) as mm:
        fused = mm.plan() == ["fake 0", "fake 1"]
        assert fused == (name not in ("DRELU", "DRELU_BGRAD")), "only the bitmask epilogues are composed"
        got = mm.execute()
    d, aux = got if want[1] else (got, {})
    close(d, want[0])
    assert set(aux) == set(want[1])
    for k in aux:
        close(aux[k], want[1][k])


def test_fused_alpha_beta_c_and_reset(fake_library):
    c = np.random.default_rng(5).standard_normal((6, 4))
    with Matmul(cu.asarray(A), cu.asarray(B), cu.asarray(c), alpha=2.0, beta=0.5, epilogue="relu_bias",
                epilogue_inputs={"bias": cu.asarray(BIAS)}) as mm:
        assert mm.plan() == ["fake 0", "fake 1"]
        close(mm.execute(), np.maximum(2 * (A @ B) + 0.5 * c + BIAS[:, None], 0))
        a2 = np.random.default_rng(6).standard_normal(A.shape)
        mm.reset_operands(a=cu.asarray(a2), beta=0.0)
        close(mm.execute(), np.maximum(2 * (a2 @ B) + BIAS[:, None], 0))


class DictCache:
    """The compile cache's interface over a dict (directory set: choices are kept)."""

    directory = "memory"

    def __init__(self):
        self.entries = {}

    def make_key(self, *parts):
        return repr(parts)

    def put(self, kind, key, data):
        self.entries[kind, key] = data

    def get(self, kind, key):
        return self.entries.get((kind, key))

    def remove(self, kind, key):
        self.entries.pop((kind, key), None)


def test_autotune_keeps_the_fastest_and_a_new_plan_recalls_it(fake_library, monkeypatch):
    cache = DictCache()
    monkeypatch.setattr(cu._cupric, "compile_cache", cache)
    a, b, bias = cu.asarray(A), cu.asarray(B), cu.asarray(BIAS)
    with Matmul(a, b, epilogue="gelu_bias", epilogue_inputs={"bias": bias}) as mm:
        mm.plan()
        assert mm._fused.plan.chosen == 0
        assert mm.autotune(iterations=2) == [2.0, 1.0]
        assert mm._fused.plan.chosen == 1
        close(mm.execute(), REFERENCE["GELU_BIAS"][0])
    assert len(cache.entries) == 1
    with Matmul(a, b, epilogue="gelu_bias", epilogue_inputs={"bias": bias}) as mm:
        mm.plan()
        assert mm._fused.plan.chosen == 1  # recalled, not timed
    cache.put(*next(iter(cache.entries)), b"not json")
    with Matmul(a, b, epilogue="gelu_bias", epilogue_inputs={"bias": bias}) as mm:
        mm.plan()
        assert mm._fused.plan.chosen == 0 and cache.entries == {}  # a bad record is dropped
