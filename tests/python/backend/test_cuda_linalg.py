"""The CUDA backend's products (src/backend/cuda/linalg.cpp, cuBLAS) and factorisations
(src/backend/cuda/solver.cpp, cuSOLVER) against the CPU backend: every dtype, views, batches,
empty shapes, singular inputs. GPU only (marked gpu)."""

import cupric as cu
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(3)


def sample(shape, dtype="float64"):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.random(shape) < 0.5
    if dtype.kind in "iu":
        return RNG.integers(0, 20, size=shape).astype(dtype)
    x = RNG.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def both(x):
    return cu.asarray(x, device="cpu"), cu.asarray(x, device="cuda:0")


def host(x):
    return np.asarray(x.to_device("cpu")) if isinstance(x, cu.ndarray) else np.asarray(x)


def agree(gpu, cpu, rtol):
    g, c = host(gpu), host(cpu)
    assert g.shape == c.shape and g.dtype == c.dtype, (g.shape, c.shape, g.dtype, c.dtype)
    scale = max(1.0, float(np.max(np.abs(c.astype(np.complex128))))) if c.size else 1.0
    if c.size:
        assert np.max(np.abs(g.astype(np.complex128) - c.astype(np.complex128))) <= rtol * scale


TOL = {"float16": 2e-2, "bfloat16": 5e-2, "float32": 1e-4, "complex64": 1e-4, "float64": 1e-11, "complex128": 1e-11}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128",
                                   "int8", "int32", "uint64", "bool"])
@pytest.mark.parametrize("sa,sb", [((33, 70), (70, 17)), ((70,), (70, 17)), ((3, 1, 8, 9), (5, 9, 4)), ((4,), (4,)),
                                   ((0, 3), (3, 2)), ((3, 0), (0, 2))])
def test_matmul_matches_cpu(dtype, sa, sb):
    import ml_dtypes  # noqa: F401  (bfloat16)

    a = sample(sa, "float32").astype(dtype) if dtype in ("float16", "bfloat16") else sample(sa, dtype)
    b = sample(sb, "float32").astype(dtype) if dtype in ("float16", "bfloat16") else sample(sb, dtype)
    (ac, ag), (bc, bg) = both(a), both(b)
    agree(ag @ bg, ac @ bc, TOL.get(dtype, 0))


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_matmul_views_on_gpu(dtype):
    a, b = sample((2, 10, 12), dtype), sample((12, 6), dtype)
    (ac, ag), (bc, bg) = both(a), both(b)
    for fa, fb in [(lambda x: x, lambda x: x), (lambda x: x.mT.copy().mT, lambda x: x.T.copy().T),
                   (lambda x: x[:, ::2, ::-1], lambda x: x[::-1, ::2]), (lambda x: x[:, :, 3], lambda x: x[:10])]:
        agree(fa(ag) @ fb(bg), fa(ac) @ fb(bc), TOL[dtype])
    row = cu.broadcast_to(bg[:1], (12, 6))
    agree(ag @ row, ac @ cu.broadcast_to(bc[:1], (12, 6)), TOL[dtype])
    out = cu.zeros((2, 10, 6), dtype=dtype, device="cuda:0")
    cu.matmul(ag, bg, out=out)
    agree(out, ac @ bc, TOL[dtype])


def test_products_and_einsum_on_gpu():
    a, b = sample((3, 4, 5)), sample((5, 4, 2))
    (ac, ag), (bc, bg) = both(a), both(b)
    agree(cu.tensordot(ag, bg, axes=([1, 2], [1, 0])), cu.tensordot(ac, bc, axes=([1, 2], [1, 0])), 1e-11)
    agree(cu.einsum("ijk,kjl->il", ag, bg), cu.einsum("ijk,kjl->il", ac, bc), 1e-11)
    agree(cu.vecdot(ag, ag), cu.vecdot(ac, ac), 1e-11)
    agree(cu.linalg.multi_dot([ag[0], bg[:, :, 0], ag[1]]), cu.linalg.multi_dot([ac[0], bc[:, :, 0], ac[1]]), 1e-11)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(6, 6), (3, 4, 4), (1, 1), (0, 0)])
def test_factorisations_match_cpu(dtype, shape):
    n = shape[-1]
    a = sample(shape, dtype) + 2 * np.sqrt(max(n, 1)) * np.eye(n, dtype=dtype)
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=dtype)
    (ac, ag), (hc, hg) = both(a), both(h)
    tol = TOL[dtype] * 100
    agree(cu.linalg.inv(ag), cu.linalg.inv(ac), tol)
    agree(cu.linalg.det(ag), cu.linalg.det(ac), tol)
    agree(cu.linalg.slogdet(ag).logabsdet, cu.linalg.slogdet(ac).logabsdet, tol)
    agree(cu.linalg.solve(ag, ag[..., :2]), cu.linalg.solve(ac, ac[..., :2]), tol)
    agree(cu.linalg.cholesky(hg), cu.linalg.cholesky(hc), tol)
    agree(cu.linalg.eigvalsh(hg), cu.linalg.eigvalsh(hc), tol)
    w, v = cu.linalg.eigh(hg)
    agree(hg @ v, v * w[..., None, :], tol)
    agree(cu.linalg.svdvals(ag), cu.linalg.svdvals(ac), tol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(7, 4), (4, 7), (2, 5, 5)])
def test_svd_and_qr_reconstruct(dtype, shape):
    a = sample(shape, dtype)
    ac, ag = both(a)
    tol = TOL[dtype] * 100
    agree(cu.linalg.svdvals(ag), cu.linalg.svdvals(ac), tol)
    for full in (True, False):
        u, s, vh = cu.linalg.svd(ag, full_matrices=full)
        k = s.shape[-1]
        agree((u[..., :, :k] * s[..., None, :].astype(u.dtype)) @ vh[..., :k, :], ag, tol)
        assert u.shape == cu.linalg.svd(ac, full_matrices=full).U.shape
    for mode in ("reduced", "complete"):
        q, r = cu.linalg.qr(ag, mode=mode)
        agree(q @ r, ag, tol)
        agree(abs(r), abs(cu.linalg.qr(ac, mode=mode).R), tol)


def test_host_routines_and_errors_on_gpu():
    a = sample((5, 5))
    ac, ag = both(a)
    w = cu.linalg.eigvals(ag)
    assert str(w.device).startswith("cuda")
    agree(w, cu.linalg.eigvals(ac), 1e-10)  # (the same LAPACK on host copies: the same order)
    x = cu.linalg.lstsq(ag[:, :3], ag[:, 3])[0]
    agree(x, cu.linalg.lstsq(ac[:, :3], ac[:, 3])[0], 1e-10)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        cu.linalg.inv(cu.zeros((3, 3), device="cuda:0"))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        cu.linalg.cholesky(-cu.eye(3, device="cuda:0"))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        cu.ones((3, 4), device="cuda:0") @ cu.ones((5, 4), device="cuda:0")


def test_tf32_only_when_asked():
    a = sample((256, 256), "float32")
    ag = cu.asarray(a, device="cuda:0")
    exact = a.astype(np.float64) @ a.astype(np.float64)
    highest = host(ag @ ag)
    assert np.max(np.abs(highest - exact)) <= 1e-4 * np.max(np.abs(exact))
    try:
        cu.linalg.set_matmul_precision("tf32")
        fast = host(ag @ ag)
    finally:
        cu.linalg.set_matmul_precision("highest")
    assert np.max(np.abs(fast - exact)) <= 1e-2 * np.max(np.abs(exact))
    assert not np.array_equal(fast, highest)  # TF32's 10-bit inputs do change a 256-term sum


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(64, 32, 32), (16, 8, 20), (5, 40, 40), (1, 300, 200), (96, 6, 6)])
def test_jacobi_and_batched_solvers(dtype, shape):
    """gesvdj / gesvdjBatched (<= 32 x 32), syevjBatched (<= 32 x 32) and potrfBatched against the
    CPU: singular values, orthogonal factors, reconstruction; eigenpairs; Cholesky factors and the
    LinAlgError of a batch with one matrix that is not positive definite."""
    a = sample(shape, dtype)
    ac, ag = both(a)
    tol = TOL[dtype] * 300
    agree(cu.linalg.svdvals(ag), cu.linalg.svdvals(ac), tol)
    for full in (True, False):
        u, s, vh = cu.linalg.svd(ag, full_matrices=full)
        k = s.shape[-1]
        agree((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], ag, tol)
        eye_u = cu.eye(u.shape[-1], dtype=dtype, device="cuda:0")
        eye_v = cu.eye(vh.shape[-2], dtype=dtype, device="cuda:0")
        agree(u.mT @ u, cu.broadcast_to(eye_u, u.shape[:-2] + eye_u.shape), tol)
        agree(vh @ vh.mT, cu.broadcast_to(eye_v, vh.shape[:-2] + eye_v.shape), tol)
    if shape[-1] != shape[-2]:
        return
    n = shape[-1]
    h = a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=dtype)
    hc, hg = both(h)
    agree(cu.linalg.eigvalsh(hg), cu.linalg.eigvalsh(hc), tol)
    w, v = cu.linalg.eigh(hg)
    agree(hg @ v, v * w[..., None, :], tol * n)
    agree(cu.linalg.cholesky(hg), cu.linalg.cholesky(hc), tol)
    bad = h.copy()
    bad[-1] = -np.eye(n, dtype=dtype)
    with pytest.raises(cu.linalg.LinAlgError, match="not positive definite"):
        cu.linalg.cholesky(cu.asarray(bad, device="cuda:0"))
