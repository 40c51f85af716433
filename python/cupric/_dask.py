"""Dask's dispatch tables learn cupric arrays (as Dask itself teaches them CuPy's): chunk element
counts as cupric arrays on the chunk's device, empty chunks and NumPy conversion. Registered when
dask.array.dispatch is imported, before or after cupric, so importing cupric imports no Dask."""

import importlib.abc
import importlib.util
import math
import sys

_DISPATCH = "dask.array.dispatch"


def _numel(x, axis=None, keepdims=False, dtype=None, **kwargs):
    """The number of elements a chunk reduction sees, per output element (mean, var and std divide
    by it). Dask's own answer is a NumPy array, which a GPU chunk cannot be combined with."""
    from . import _cupric as _c

    dtype = "float64" if dtype is None else dtype
    axes = range(x.ndim) if axis is None else [axis] if isinstance(axis, int) else list(axis)
    axes = [a % x.ndim for a in axes] if x.ndim else []
    count = math.prod(x.shape[a] for a in axes)
    shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape) if keepdims or i not in axes)
    return _c.full(shape, count, dtype=dtype, device=x.device)


def _to_numpy(data, **kwargs):
    return data.get()


def register(dispatch):
    """Registers cupric's entries in the module dask.array.dispatch."""
    from . import _cupric as _c

    dispatch.numel_lookup.register(_c.ndarray, _numel)
    dispatch.empty_lookup.register(_c.ndarray, _c.empty)
    dispatch.concatenate_lookup.register(_c.ndarray, _c.concatenate)
    dispatch.to_numpy_dispatch.register(_c.ndarray, _to_numpy)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when dask.array.dispatch is about to be imported, it wraps that
    module's loader so that cupric registers right after the module runs, then steps aside."""

    def find_spec(self, name, path, target=None):
        if name != _DISPATCH:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            register(module)

        spec.loader.exec_module = exec_module
        return spec


def install():
    if _DISPATCH in sys.modules:
        register(sys.modules[_DISPATCH])
    elif not any(isinstance(f, _RegisterOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport())
