"""cupric: NumPy-compatible arrays on the CPU and CUDA GPUs, with a C++ core.

import cupric as cu
x = cu.arange(10, dtype=cu.float32)
(x * 2 + 1).sum()
"""

import os as _os

from . import _cupric
from ._cupric import *  # noqa: F401,F403  (ufuncs, ndarray, creation functions)
from ._cupric import Device, ndarray, ufunc  # noqa: F401
from . import _dtypes
from ._fallback import FallbackWarning, fallback_stats, get_fallback, set_fallback  # noqa: F401
from ._interop import install as _install_interop
from ._pickle import install as _install_pickle
from ._methods import install as _install_methods
from ._dask import install as _install_dask
from ._namespace import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403  (take, partition, lexsort, ...)
from ._sets import *  # noqa: F401,F403  (unique, isin, intersect1d, ...)
from ._quantiles import *  # noqa: F401,F403  (median, quantile, percentile, ...)
from ._histograms import *  # noqa: F401,F403  (bincount, digitize, histogram, ...)
from ._shape_functions import *  # noqa: F401,F403  (atleast_*d, stacks, splits, flip, roll, repeat, diff, ...)
from ._math_extras import *  # noqa: F401,F403  (isreal, fix, sinc, average, cov, gradient, convolve, poly*, windows, ...)
from ._polynomials import *  # noqa: F401,F403  (polyval, polyfit, roots, poly, polydiv, ...)
from ._index_extras import *  # noqa: F401,F403  (tril_indices, fill_diagonal, compress, choose, select, mgrid, r_, ...)
from ._io import *  # noqa: F401,F403  (save, load, savez, loadtxt, frombuffer, array2string, set_printoptions, ...)
from ._pad import pad  # noqa: F401
from ._flatiter import flatiter  # noqa: F401
from ._vectorize import VectorizeWarning, frompyfunc, vectorize  # noqa: F401
from .jit import fuse, jit  # noqa: F401  (cu.jit binds the decorator over the package's name)
from ._array_utils import *  # noqa: F401,F403  (asanyarray, copy, ndim, shape, isscalar, packbits, i0, kaiser, broadcast, vectorize, ...)
from ._info import *  # noqa: F401,F403  (__array_namespace_info__, __array_api_version__)
from ._config import show_config  # noqa: F401
from . import random  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import emath  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from .linalg._products import dot, inner, kron, matvec, outer, tensordot, trace, vdot, vecdot, vecmat  # noqa: E402,F401
from .linalg._products import install as _install_products
from .linalg._einsum import einsum, einsum_path  # noqa: E402,F401
from .linalg._norms import numpy_cross as cross  # noqa: E402,F401
from . import cuda  # noqa: F401,E402  (cupric.cuda: loads nothing CUDA until used)

from ._version import __version__  # noqa: E402,F401

_install_interop()
_install_products(ndarray)  # a.dot, a.diagonal, a.trace
_install_pickle()
_install_methods(ndarray)  # x.take, x.repeat, x.fill, x.tobytes, ... (NumPy's ndarray methods)
_install_dask()  # Dask's dispatch tables, when (or once) dask.array is imported
_cupric._cpu_dispatch()  # picks the CPU kernels' variant now: a bad CUPRIC_CPU_TARGETS fails the import
if _os.environ.get("CUPRIC_SYNC", "0") != "0" or _os.environ.get("CUPRIC_CHECK_FINITE", "0") != "0":
    from . import debug as _debug  # noqa: F401  (turns the modes on)


def __getattr__(name):
    # dtypes (cu.float32 is numpy.float32, ...) are bound at first use: import stays free of NumPy
    if name in _dtypes._NAMES:
        value = _dtypes.lookup(name)
        globals()[name] = value
        return value
    # numpy.testing's checks for cupric arrays; the signatures' types; tools
    if name in ("testing", "typing", "lib", "profiler", "debug", "distributed"):
        import importlib

        return importlib.import_module(f"cupric.{name}")
    if name == "inspect":  # kernel analysis (docs/profiling.md); loads no CUDA until called
        import importlib

        return importlib.import_module("cupric._inspect").inspect
    if name == "tile":  # cu.tile without `import cupric.tile` (it imports NumPy and the frontend)
        import importlib

        return importlib.import_module("cupric.tile")
    raise AttributeError(f"module 'cupric' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_dtypes._NAMES) | {"tile", "profiler", "debug", "inspect", "distributed"})
