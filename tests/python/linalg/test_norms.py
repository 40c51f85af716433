"""Norms and the cross product (python/cupric/linalg/_norms.py) against NumPy: every order, axes,
keepdims, integer and complex inputs, bad orders."""

import cupric as cu
import numpy as np
import pytest

RNG = np.random.default_rng(7)


def close(got, want):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(got, want, rtol=1e-5 if got.dtype in (np.float32, np.complex64) else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int32"])
@pytest.mark.parametrize("ord", [1, 2, 3, 0.5, 0, np.inf, -np.inf])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (-1, False), (0, True), ((0, 2), False)])
def test_vector_norm(dtype, ord, axis, keepdims):
    x = (RNG.standard_normal((3, 4, 5)) * 4).astype(dtype)
    want = np.linalg.vector_norm(x, ord=ord, axis=axis, keepdims=keepdims)
    close(cu.linalg.vector_norm(cu.asarray(x), ord=ord, axis=axis, keepdims=keepdims), want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm(dtype, ord, keepdims):
    x = RNG.standard_normal((2, 4, 3)).astype(dtype)
    want = np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims)
    close(cu.linalg.matrix_norm(cu.asarray(x), ord=ord, keepdims=keepdims), want)


@pytest.mark.parametrize(
    "ord,axis", [(None, None), (None, 1), (2, 0), ("fro", (0, 1)), ("nuc", (1, 0)), (1, (0, 1)), (np.inf, None)]
)
def test_norm(ord, axis):
    x = RNG.standard_normal((4, 3))
    close(cu.linalg.norm(cu.asarray(x), ord=ord, axis=axis), np.linalg.norm(x, ord=ord, axis=axis))
    close(cu.linalg.norm(cu.asarray(x), ord=ord, axis=axis, keepdims=True),
          np.linalg.norm(x, ord=ord, axis=axis, keepdims=True))
    v = RNG.standard_normal(5)
    close(cu.linalg.norm(cu.asarray(v)), np.linalg.norm(v))


def test_bad_orders():
    with pytest.raises(ValueError, match="Invalid norm order"):
        cu.linalg.matrix_norm(cu.ones((3, 3)), ord=3)
    with pytest.raises(ValueError, match="Invalid norm order"):
        cu.linalg.vector_norm(cu.ones(3), ord="fro")
    with pytest.raises(ValueError, match="Duplicate axes"):
        cu.linalg.norm(cu.ones((3, 3)), axis=(0, 0))


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors")
def test_cross():
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((2, 1, 3))
    close(cu.linalg.cross(cu.asarray(a), cu.asarray(b)), np.linalg.cross(a, b))
    close(cu.cross(cu.asarray(a.T), cu.asarray(a[::-1].T), axis=0), np.cross(a.T, a[::-1].T, axis=0))
    c = RNG.standard_normal((4, 2))
    close(cu.cross(cu.asarray(c), cu.asarray(a)), np.cross(c, a))
    close(cu.cross(cu.asarray(c), cu.asarray(c[::-1])), np.cross(c, c[::-1]))
    with pytest.raises(ValueError, match="3 elements"):
        cu.linalg.cross(cu.ones((3, 2)), cu.ones((3, 2)))
