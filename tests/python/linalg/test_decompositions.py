"""The factorisations (src/ops/linalg/factorizations.cpp, the CPU backend's LAPACK calls) and
python/cupric/linalg/_decompositions.py against NumPy, with error bounds scaled by the condition
number: batches, empty and 1x1, non-contiguous views, complex, singular inputs, LinAlgError."""

import cupric as cu
import numpy as np
import pytest

RNG = np.random.default_rng(42)
DTYPES = ["float32", "float64", "complex64", "complex128"]


def eps(dtype):
    return np.finfo(np.dtype(dtype)).eps


def sample(shape, dtype="float64"):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def well_conditioned(shape, dtype="float64"):
    n = shape[-1]
    return (sample(shape, dtype) + 2 * n**0.5 * np.eye(n)).astype(dtype)


def hermitian_pd(shape, dtype="float64"):
    x = sample(shape, dtype)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def close(got, want, dtype, cond=1.0, factor=50):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    bound = factor * eps(dtype) * max(cond, 1.0) * max(1.0, float(np.max(np.abs(want))) if np.size(want) else 1.0)
    if np.size(want):
        assert np.max(np.abs(got - want)) <= bound


def cu_(x):
    return cu.asarray(x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 1, 3, 3), (1, 1), (0, 0), (2, 0, 0)])
def test_solve_inv_det(dtype, shape):
    a = well_conditioned(shape, dtype)
    c = np.linalg.cond(a).max() if a.size else 1
    b = sample(shape[:-1] + (2,), dtype)
    close(cu.linalg.solve(cu_(a), cu_(b)), np.linalg.solve(a, b), dtype, c)
    close(cu.linalg.inv(cu_(a)), np.linalg.inv(a), dtype, c)
    close(cu.linalg.det(cu_(a)), np.linalg.det(a), dtype, c)
    sign, logdet = cu.linalg.slogdet(cu_(a))
    want = np.linalg.slogdet(a)
    close(sign, want.sign, dtype, c)
    close(logdet, want.logabsdet, dtype, c)
    assert np.asarray(cu.linalg.det(cu_(a))).dtype == np.dtype(dtype)


def test_solve_vector_and_broadcast_batches():
    a, b = well_conditioned((3, 4, 4)), sample((4,))
    close(cu.linalg.solve(cu_(a), cu_(b)), np.linalg.solve(a, b), "float64", 10)
    b2 = sample((2, 1, 4, 3))
    close(cu.linalg.solve(cu_(a), cu_(b2)), np.linalg.solve(a, b2), "float64", 10)
    close(cu.linalg.solve(cu_(a[0]), cu_(b2)), np.linalg.solve(a[0], b2), "float64", 10)
    ints = np.array([[2, 1], [1, 3]])
    close(cu.linalg.solve(cu_(ints), cu_(np.array([1, 2]))), np.linalg.solve(ints, [1, 2]), "float64", 10)


def test_views_go_in_unchanged():
    a = well_conditioned((6, 6))
    big = np.zeros((12, 18))
    big[::2, ::3] = a
    view = cu_(big)[::2, ::3]
    close(cu.linalg.inv(view), np.linalg.inv(a), "float64", 20)
    close(cu.linalg.inv(cu_(a).T), np.linalg.inv(a.T), "float64", 20)
    close(cu.linalg.det(cu_(a)[::-1]), np.linalg.det(a[::-1]), "float64", 20)
    before = np.asarray(view).copy()
    cu.linalg.svd(view)
    cu.linalg.qr(view)
    cu.linalg.eig(view)
    assert np.array_equal(np.asarray(view), before)  # inputs are never overwritten


def test_singular_matrices():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        cu.linalg.inv(cu_(s))
    with pytest.raises(cu.linalg.LinAlgError, match="Singular matrix"):
        cu.linalg.solve(cu_(s), cu_(np.ones(2)))
    assert float(np.asarray(cu.linalg.det(cu_(s)))) == 0.0
    sign, logdet = cu.linalg.slogdet(cu_(s))
    assert float(np.asarray(sign)) == 0.0 and float(np.asarray(logdet)) == -np.inf
    sign, logdet = cu.linalg.slogdet(cu_(s.astype(complex)))
    assert complex(np.asarray(sign)) == 0 and float(np.asarray(logdet)) == -np.inf
    assert int(np.asarray(cu.linalg.matrix_rank(cu_(s)))) == 1
    close(cu.linalg.pinv(cu_(s)), np.linalg.pinv(s), "float64", 10)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        cu.linalg.cholesky(cu_(-np.eye(3)))


def test_shape_and_dtype_errors():
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        cu.linalg.inv(cu.ones((3, 4)))
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        cu.linalg.det(cu.ones((3,)))
    with pytest.raises(TypeError, match="float16 is unsupported in linalg"):
        cu.linalg.inv(cu.ones((2, 2), dtype="float16"))
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
        cu.linalg.solve(cu.eye(3), cu.ones((4, 1)))
    with pytest.raises(ValueError, match="Unrecognized mode"):
        cu.linalg.qr(cu.eye(3), mode="full")
    with pytest.raises(ValueError, match="UPLO"):
        cu.linalg.eigh(cu.eye(3), UPLO="X")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 3), (1, 1), (0, 0)])
def test_cholesky_and_eigh(dtype, shape):
    a = hermitian_pd(shape, dtype)
    c = np.linalg.cond(a).max() if a.size else 1
    L = cu.linalg.cholesky(cu_(a))
    close(L, np.linalg.cholesky(a), dtype, c)
    close(cu.linalg.cholesky(cu_(a), upper=True), np.linalg.cholesky(a, upper=True), dtype, c)
    w, v = cu.linalg.eigh(cu_(a))
    close(w, np.linalg.eigvalsh(a), dtype, c)
    # eigenvectors are unique up to phase: check a v = v w
    v, w = np.asarray(v), np.asarray(w)
    close(a @ v, v * w[..., None, :], dtype, c, factor=200)
    close(cu.linalg.eigvalsh(cu_(a), UPLO="U"), np.linalg.eigvalsh(a, UPLO="U"), dtype, c)
    upper_only = np.triu(a)
    close(cu.linalg.eigvalsh(cu_(upper_only), UPLO="U"), np.linalg.eigvalsh(upper_only, UPLO="U"), dtype, c)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (0, 3), (3, 0)])
def test_svd_and_qr(dtype, shape):
    a = sample(shape, dtype)
    s_want = np.linalg.svd(a, compute_uv=False)
    close(cu.linalg.svdvals(cu_(a)), s_want, dtype)
    close(cu.linalg.svd(cu_(a), compute_uv=False), s_want, dtype)
    for full in (True, False):
        u, s, vh = (np.asarray(x) for x in cu.linalg.svd(cu_(a), full_matrices=full))
        nu, _, nvh = np.linalg.svd(a, full_matrices=full)
        assert u.shape == nu.shape and vh.shape == nvh.shape
        k = s.shape[-1]
        close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, factor=100)
        eye = np.broadcast_to(np.eye(u.shape[-1], dtype=dtype), u.shape[:-2] + (u.shape[-1],) * 2)
        close(np.conj(np.swapaxes(u, -1, -2)) @ u, eye, dtype, factor=100)  # u is unitary
    for mode in ("reduced", "complete"):
        q, r = (np.asarray(x) for x in cu.linalg.qr(cu_(a), mode=mode))
        nq, nr = np.linalg.qr(a, mode=mode)
        assert q.shape == nq.shape and r.shape == nr.shape
        close(q @ r, a, dtype, factor=100)
        assert np.allclose(np.tril(r, -1), 0)
        close(np.abs(r), np.abs(nr), dtype, factor=100)  # R is unique up to the signs of its rows
    close(np.abs(np.asarray(cu.linalg.qr(cu_(a), mode="r"))), np.abs(np.linalg.qr(a, mode="r")), dtype, factor=100)
    if a.ndim == 2:
        h, tau = cu.linalg.qr(cu_(a), mode="raw")
        nh, ntau = np.linalg.qr(a, mode="raw")
        close(h, nh, dtype, factor=100)
        close(tau, ntau, dtype, factor=100)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig(dtype):
    a = sample((3, 4, 4), dtype)
    w, v = (np.asarray(x) for x in cu.linalg.eig(cu_(a)))
    nw = np.linalg.eigvals(a)
    assert w.dtype == nw.dtype
    close(np.sort_complex(w), np.sort_complex(nw), dtype, np.linalg.cond(a).max(), factor=200)
    close(a @ v, v * w[..., None, :], dtype, np.linalg.cond(a).max(), factor=200)
    sym = (a + np.swapaxes(a, -1, -2)).real.astype(np.dtype(dtype).char.lower() if dtype in DTYPES[2:] else dtype)
    got = np.asarray(cu.linalg.eigvals(cu_(sym)))
    assert got.dtype == np.linalg.eigvals(sym).dtype  # real for real input with real eigenvalues
    close(np.sort(got), np.sort(np.linalg.eigvals(sym)), dtype, 10, factor=200)


@pytest.mark.parametrize("shape_a,shape_b", [((6, 3), (6,)), ((6, 3), (6, 2)), ((3, 6), (3, 2)), ((4, 4), (4,))])
def test_lstsq(shape_a, shape_b):
    a, b = sample(shape_a), sample(shape_b)
    x, res, rank, s = cu.linalg.lstsq(cu_(a), cu_(b))
    nx, nres, nrank, ns = np.linalg.lstsq(a, b)
    close(x, nx, "float64", 10)
    close(res, nres, "float64", 10)
    assert rank == nrank
    close(s, ns, "float64")


def test_pinv_rank_cond_power():
    a = sample((2, 5, 3))
    close(cu.linalg.pinv(cu_(a)), np.linalg.pinv(a), "float64", 10)
    low = sample((6, 2)) @ sample((2, 5))
    assert int(np.asarray(cu.linalg.matrix_rank(cu_(low)))) == 2
    assert np.array_equal(np.asarray(cu.linalg.matrix_rank(cu_(a))), np.linalg.matrix_rank(a))
    b = well_conditioned((3, 3))
    for p in (None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"):
        close(cu.linalg.cond(cu_(b), p), np.linalg.cond(b, p), "float64", 10)


def test_tensorinv_and_tensorsolve():
    a = well_conditioned((24, 24)).reshape(4, 6, 8, 3)
    close(cu.linalg.tensorinv(cu_(a)), np.linalg.tensorinv(a), "float64", 100)
    b = sample((4, 6))
    close(cu.linalg.tensorsolve(cu_(a), cu_(b)), np.linalg.tensorsolve(a, b), "float64", 100)
    c = np.moveaxis(a, 3, 1)  # the same system with a's last axis moved: axes= puts it back last
    close(cu.linalg.tensorsolve(cu_(c), cu_(b), axes=(1,)), np.linalg.tensorsolve(c, b, axes=(1,)), "float64", 100)
