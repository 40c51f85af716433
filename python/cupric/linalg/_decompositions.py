"""The factorisations and what NumPy builds on them: cholesky, det, slogdet, inv, solve, eigh,
eigvalsh, svd, svdvals, qr, eig, eigvals, lstsq, pinv, matrix_rank, matrix_power, tensorinv,
tensorsolve (cond is with the norms). The LAPACK calls are the C++ core's (_linalg_*:
cupric/linalg.hpp, batched, on the array's device); this module only picks modes and assembles
NumPy's results."""

import operator as _operator
from collections import namedtuple

from .. import _cupric as _c
from .. import _dtypes as _dt
from .._namespace import finfo as _finfo
from ._products import _arr, _prod

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


def __getattr__(name):
    if name == "LinAlgError":  # NumPy's own class, so that code catching it catches cupric's too
        import numpy.linalg

        return numpy.linalg.LinAlgError
    raise AttributeError(name)


def _square(a, fn):
    a = _arr(a)
    if a.ndim < 2:
        raise __getattr__("LinAlgError")(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional "
                                         f"({fn})")
    if a.shape[-1] != a.shape[-2]:
        raise __getattr__("LinAlgError")(f"Last 2 dimensions of the array must be square ({fn} got shape "
                                         f"{tuple(a.shape)})")
    return a


def _mH(x):
    return _c.conj(x.mT) if x.dtype.kind == "c" else x.mT


def cholesky(x, /, *, upper=False):
    """The Cholesky factor of a Hermitian positive-definite matrix: L (x = L L^H), or U = L^H."""
    lower = _c._linalg_cholesky(_arr(x))
    return _mH(lower).copy() if upper else lower


def _lu_parts(x, fn):
    x = _square(x, fn)
    lu, piv = _c._linalg_lu_factor(x)
    n = x.shape[-1]
    swaps = _c.count_nonzero(piv != _c.arange(1, n + 1, device=x.device), axis=-1)
    odd = (swaps % 2) == 1
    return lu, _c.diagonal(lu, 0, -2, -1), odd


def det(x, /):
    """The determinant, from the LU factorisation (a singular matrix gives 0)."""
    _, diag, odd = _lu_parts(x, "det")
    return _c.where(odd, -1, 1).astype(diag.dtype) * _c.prod(diag, axis=-1)


def slogdet(x, /):
    """(sign, log|det|): sign 0 and logabsdet -inf for a singular matrix."""
    _, diag, odd = _lu_parts(x, "slogdet")
    mag = _c.abs(diag)
    zero = mag == 0
    if diag.dtype.kind == "c":
        unit = _c.where(zero, 0, diag / _c.where(zero, 1, mag))
    else:
        unit = _c.sign(diag)
    sign = _c.where(odd, -1, 1).astype(diag.dtype) * _c.prod(unit, axis=-1)
    with_zero = _c.any(zero, axis=-1)
    logabs = _c.sum(_c.log(_c.where(zero, 1, mag)), axis=-1)
    logabs = _c.where(with_zero, -float("inf"), logabs).astype(mag.dtype)
    return SlogdetResult(sign, logabs)


def solve(x1, x2, /):
    """x with x1 @ x = x2; x2 is a stack of vectors only when it is 1-D (NumPy 2, the Array API)."""
    a, b = _arr(x1), _arr(x2)
    if b.ndim == 1:
        return _c._linalg_solve(a, _c.expand_dims(b, -1))[..., 0]
    return _c._linalg_solve(a, b)


def inv(x, /):
    """The inverse (LinAlgError 'Singular matrix' when there is none)."""
    a = _square(x, "inv")
    dtype = a.dtype if a.dtype.kind in "fc" else _dt.lookup("float64")
    return _c._linalg_solve(a, _c.eye(a.shape[-1], dtype=dtype, device=a.device))


def eigh(x, /, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices, from one triangle."""
    a = _eigh_input(x, UPLO)
    w, v = _c._linalg_eigh(a, True)
    return EighResult(w, v)


def eigvalsh(x, /, UPLO="L"):
    """The eigenvalues (ascending) of Hermitian matrices."""
    return _c._linalg_eigh(_eigh_input(x, UPLO), False)[0]


def _eigh_input(x, uplo):
    if uplo not in ("L", "U"):
        raise ValueError(f"UPLO argument must be 'L' or 'U', got {uplo!r}")
    a = _arr(x)
    # LAPACK reads the lower triangle: the upper one is the lower one of the conjugate transpose
    return _mH(a) if uplo == "U" and a.ndim >= 2 else a


def svd(x, /, full_matrices=True, compute_uv=True, hermitian=False):
    """The singular value decomposition x = U diag(S) Vh (S descending); S alone without compute_uv."""
    u, s, vh = _c._linalg_svd(_arr(x), bool(full_matrices), bool(compute_uv))
    return SVDResult(u, s, vh) if compute_uv else s


def svdvals(x, /):
    """The singular values, descending."""
    return _c._linalg_svd(_arr(x), False, False)[1]


def qr(x, /, mode="reduced"):
    """The QR factorisation; modes 'reduced', 'complete', 'r', 'raw' as NumPy's."""
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'; qr's modes are 'reduced', 'complete', 'r' and 'raw'")
    h, tau = _c._linalg_qr_factor(_arr(x))
    m, n = h.shape[-2], h.shape[-1]
    k = min(m, n)
    if mode == "raw":
        return h.mT, tau  # NumPy's h is LAPACK's column-major one, seen row-major
    r = _c.triu(h if mode == "complete" else h[..., :k, :])
    if mode == "r":
        return r
    q = _c._linalg_qr_q(h, tau, m if mode == "complete" else k)
    return QRResult(q, r)


def _real_if_real(w, v, a):
    if a.dtype.kind != "c" and not _c.any(w.imag != 0):
        return w.real.copy(), (None if v is None else v.real.copy())
    return w, v


def eig(a, /):
    """Eigenvalues and right eigenvectors of square matrices (real when a is real and they all are)."""
    a = _arr(a)
    w, v = _c._linalg_eig(a, True)
    return EigResult(*_real_if_real(w, v, a))


def eigvals(a, /):
    """The eigenvalues of square matrices (real when a is real and they all are)."""
    a = _arr(a)
    w, _ = _c._linalg_eig(a, False)
    return _real_if_real(w, None, a)[0]


def _eps(dtype):
    return _finfo(dtype if dtype.kind in "fc" else _dt.lookup("float64")).eps


def lstsq(a, b, rcond=None):
    """The least-squares solution of a @ x = b: (x, residuals, rank, s) as NumPy's."""
    a, b = _arr(a), _arr(b)
    vector = b.ndim == 1
    b2 = _c.expand_dims(b, -1) if vector else b
    if a.ndim != 2 or b2.ndim != 2:
        raise __getattr__("LinAlgError")(f"lstsq: a must be 2-dimensional and b 1- or 2-dimensional, got shapes "
                                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    m, n = a.shape
    if rcond is None:
        rcond = _eps(_c.result_type(a.dtype, b.dtype)) * max(m, n)
    full, s, rank = _c._linalg_lstsq(a, b2, float(rcond))
    x = full[:n]
    if rank == n and m > n:
        residuals = _c.sum(_c.abs(full[n:]) ** 2, axis=0)
    else:
        residuals = _c.empty((0,), dtype=s.dtype, device=a.device)
    if vector:
        x = x[:, 0]
        residuals = residuals[:1] if residuals.shape[0] else residuals
    return LstsqResult(x.copy(), residuals, rank, s)


def pinv(x, /, *, rtol=None, hermitian=False, rcond=None):
    """The Moore-Penrose pseudo-inverse through the SVD; singular values at or below rtol * the
    largest are treated as zero (rtol: max(m, n) * eps by default)."""
    a = _arr(x)
    if rcond is not None:
        rtol = rcond
    u, s, vh = _c._linalg_svd(a, False, True)
    if rtol is None:
        rtol = max(a.shape[-2], a.shape[-1]) * _eps(s.dtype)
    rtol = _arr(rtol)
    if s.shape[-1] == 0:
        return _c.zeros(tuple(a.shape[:-2]) + (a.shape[-1], a.shape[-2]), dtype=u.dtype, device=a.device)
    cutoff = _c.expand_dims(rtol, -1) * _c.max(s, axis=-1, keepdims=True)
    big = s > cutoff
    s_inv = _c.where(big, 1 / _c.where(big, s, 1), 0).astype(s.dtype)
    return _c.matmul(_mH(vh), _c.expand_dims(s_inv, -1) * _mH(u))


def matrix_rank(A, /, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values above the tolerance (NumPy's defaults)."""
    a = _arr(A)
    if a.ndim < 2:
        return _c.asarray(int(_c.any(a != 0)), device=a.device)
    s = svdvals(a)
    if s.shape[-1] == 0:
        return _c.zeros(tuple(a.shape[:-2]), dtype=_dt.lookup("int64"), device=a.device)
    if tol is None:
        if rtol is None:
            rtol = max(a.shape[-2], a.shape[-1]) * _eps(s.dtype)
        tol = _c.max(s, axis=-1) * _arr(rtol)
    tol = _c.expand_dims(_arr(tol), -1)
    return _c.count_nonzero(s > tol, axis=-1)


def matrix_power(a, n):
    """numpy.linalg.matrix_power: a @ a @ ... (n times) by repeated squaring; n < 0 inverts first."""
    a = _arr(a)
    try:
        n = _operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {type(n).__name__}") from err
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise __getattr__("LinAlgError")(f"Last 2 dimensions of the array must be square (matrix_power got "
                                         f"shape {tuple(a.shape)})")
    if n == 0:
        eye = _c.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        return _c.broadcast_to(eye, a.shape).copy()
    if n < 0:
        a, n = inv(a), -n
    result, square = None, a
    while n:
        if n & 1:
            result = square if result is None else _c.matmul(result, square)
        n >>= 1
        if n:
            square = _c.matmul(square, square)
    return result


def tensorinv(a, ind=2):
    """The inverse of a tensor with respect to tensordot over its first `ind` axes."""
    a = _arr(a)
    if ind <= 0:
        raise ValueError(f"Invalid ind argument {ind}: it must be positive")
    out_shape = tuple(a.shape[ind:]) + tuple(a.shape[:ind])
    rows = _prod(a.shape[:ind])
    inverse = inv(_c.reshape(a, (rows, -1)))
    return _c.reshape(inverse, out_shape)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, axes=x.ndim) = b."""
    a, b = _arr(a), _arr(b)
    if axes is not None:
        order = [i for i in range(a.ndim) if i not in [x % a.ndim for x in axes]] + [x % a.ndim for x in axes]
        a = _c.permute_dims(a, tuple(order))
    x_shape = tuple(a.shape[b.ndim:])
    prod = _prod(x_shape)
    if _prod(a.shape[:b.ndim]) != prod:
        raise __getattr__("LinAlgError")(f"tensorsolve: a of shape {tuple(a.shape)} is not square for b of shape "
                                         f"{tuple(b.shape)} (the leading {b.ndim} axes hold "
                                         f"{_prod(a.shape[:b.ndim])} elements, the rest {prod})")
    return _c.reshape(solve(_c.reshape(a, (prod, prod)), _c.reshape(b, (prod,))), x_shape)
