"""cupric.linalg: the Array API's linear algebra extension and NumPy's numpy.linalg, on every
device. Products run in the backend's BLAS (OpenBLAS on the CPU, cuBLAS on GPUs), factorisations
in its LAPACK (OpenBLAS's / cuSOLVER), batched over leading dimensions. See docs/linalg.md."""

from .. import _cupric as _c
from .._cupric import diagonal as _diagonal
from .._cupric import matmul, matrix_transpose  # noqa: F401
from . import advanced  # noqa: F401  (plans with epilogues, after nvmath-python)
from ._decompositions import (  # noqa: F401
    EighResult,
    EigResult,
    LstsqResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    det,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    lstsq,
    matrix_power,
    matrix_rank,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
)
from ._norms import cond, cross, matrix_norm, norm, vector_norm  # noqa: F401
from ._products import multi_dot, tensordot, vecdot  # noqa: F401
from ._products import outer as _outer
from ._products import trace as _trace

__all__ = [
    "LinAlgError", "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "multi_dot", "norm",
    "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace",
    "vecdot", "vector_norm", "set_matmul_precision", "get_matmul_precision",
]


def set_matmul_precision(precision):
    """float32 products on GPUs: "highest" (float32 arithmetic, the default) or "tf32" (tensor cores
    with TF32 inputs, faster and less exact; only when asked). CPU products are always float32."""
    _c._set_matmul_precision(precision)


def get_matmul_precision():
    """"highest" or "tf32" (set_matmul_precision)."""
    return _c._get_matmul_precision()


def diagonal(x, /, *, offset=0):
    """The Array API's diagonal: the diagonals of the last two axes (a read-only view)."""
    return _diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """The Array API's trace: sums of the diagonals of the last two axes."""
    return _trace(x, offset, -2, -1, dtype)


def outer(x1, x2, /):
    """The Array API's outer product of two vectors."""
    for x in (x1, x2):
        if getattr(x, "ndim", 1) != 1:
            raise ValueError(f"outer: the operands must be vectors, got shape {tuple(x.shape)}")
    return _outer(x1, x2)


def __getattr__(name):
    if name == "LinAlgError":  # numpy.linalg.LinAlgError itself, imported only when asked for
        import numpy.linalg

        return numpy.linalg.LinAlgError
    raise AttributeError(f"module 'cupric.linalg' has no attribute {name!r}")
