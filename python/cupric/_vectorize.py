"""numpy.vectorize and numpy.frompyfunc for cupric arrays. On the CPU the Python function runs per
element (NumPy's own loop); on a GPU it is compiled as a tile kernel (python/cupric/tile: the
function's body must be in the tile language's scalar subset), and where that fails the host loop
runs instead, with a warning that says why."""

import builtins as _builtins
import linecache
import warnings

from . import _cupric as _c
from ._shape_functions import ascontiguousarray

__all__ = ["vectorize", "frompyfunc", "VectorizeWarning"]

_BLOCK = 1024
_COMPILE_ON_CPU = False  # tests set it to run the compiled path (the tile CPU target) without a GPU


class VectorizeWarning(UserWarning):
    """A vectorized function could not be compiled for the GPU and ran element by element on the host."""


def _np():
    import numpy

    return numpy


def _map_source(nin):
    """A tile kernel that applies _scalar_fn to nin 1-d inputs, BLOCK elements per block."""
    names = [f"x{i}" for i in range(nin)]
    loads = "".join(f"    t{i} = ct.load({n}, index=(i,), shape=(BLOCK,))\n" for i, n in enumerate(names))
    tiles = ", ".join(f"t{i}" for i in range(nin))
    return (f"def vectorized_map({', '.join(names)}, out, BLOCK: ct.Constant[int]):\n"
            f"    i = ct.bid(0)\n{loads}"
            f"    ct.store(out, index=(i,), tile=_scalar_fn({tiles}))\n")


def _compile_map(pyfunc, nin):
    """A new tile kernel over pyfunc (each function gets its own: kernels read their globals)."""
    from . import tile as ct

    filename = f"<cupric.vectorize {getattr(pyfunc, '__qualname__', 'function')} of {nin} inputs>"
    source = _map_source(nin)
    # the tile frontend reads a kernel's source through linecache, as it reads files
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"ct": ct, "_scalar_fn": ct.function(pyfunc)}
    exec(compile(source, filename, "exec"), namespace)
    return ct.kernel(namespace["vectorized_map"])


class vectorize:
    """numpy.vectorize for cupric arrays: vectorize(pyfunc, otypes=None, doc=None, excluded=None,
    cache=False, signature=None). The result is on the inputs' device. On a GPU, a function of
    positional array arguments with one result is compiled once (a tile kernel) and runs there;
    `excluded`, `signature`, keyword arguments, complex inputs or a body outside the tile language
    run NumPy's loop on the host, with a VectorizeWarning naming the reason."""

    def __init__(self, pyfunc, otypes=None, doc=None, excluded=None, cache=False, signature=None):
        self.pyfunc = pyfunc
        self._np_vec = _np().vectorize(pyfunc, otypes=otypes, doc=doc, excluded=excluded, cache=cache,
                                       signature=signature)
        self.__doc__ = self._np_vec.__doc__
        self._simple = not excluded and signature is None
        self._otypes = otypes
        self._kernels = {}
        self._not_compiled = None  # why the GPU path was refused, once known

    def __call__(self, *args, **kwargs):
        devices = {str(a.device) for a in _builtins.list(args) + _builtins.list(kwargs.values())
                   if isinstance(a, _c.ndarray)}
        device = devices.pop() if len(devices) == 1 else None
        if device is not None and (device != "cpu" or _COMPILE_ON_CPU):
            out = self._on_gpu(args, kwargs, device)
            if out is not None:
                return out
        return self._on_host(args, kwargs, device)

    def _on_host(self, args, kwargs, device):
        host = [a.get() if isinstance(a, _c.ndarray) else a for a in args]
        host_kw = {k: v.get() if isinstance(v, _c.ndarray) else v for k, v in kwargs.items()}
        out = self._np_vec(*host, **host_kw)
        if isinstance(out, tuple):
            return tuple(_c.asarray(o, device=device) for o in out)
        return _c.asarray(out, device=device)

    def _refuse(self, reason):
        warnings.warn(f"vectorize({getattr(self.pyfunc, '__name__', self.pyfunc)!s}) runs element by element on "
                      f"the host: {reason}", VectorizeWarning, stacklevel=4)
        return None

    def _on_gpu(self, args, kwargs, device):
        if kwargs or not self._simple:
            return self._refuse("keyword arguments, excluded= and signature= are not compiled")
        if self._not_compiled is not None:
            return self._refuse(self._not_compiled)
        arrays = [a if isinstance(a, _c.ndarray) else _c.asarray(a, device=device) for a in args]
        if not arrays or any(a.dtype.kind == "c" for a in arrays):
            return self._refuse("tiles have no complex dtypes" if arrays else "no arguments")
        arrays = _c.broadcast_arrays(*arrays) if len(arrays) > 1 else arrays
        shape = arrays[0].shape
        otype = self._result_dtype(arrays)
        if otype is None:
            return self._refuse("its result is not a number of a cupric dtype")
        # NumPy's loop hands the function Python floats and ints (float64 and int64 arithmetic)
        # and stores the results as otype: the kernel computes on the same widths
        wide = {"b": "bool", "i": "int64", "u": "int64", "f": "float64"}
        out = _c.empty((int(_np().prod(shape)),), dtype=wide[otype.kind], device=device)
        if out.size == 0:
            return out.reshape(shape).astype(otype)
        flat = [ascontiguousarray(a.astype(wide[a.dtype.kind], copy=False)).reshape(-1) for a in arrays]
        try:
            kernel = self._kernels.get(len(flat)) or self._kernels.setdefault(len(flat),
                                                                               _compile_map(self.pyfunc, len(flat)))
            kernel[(-(-out.size // _BLOCK),)](*flat, out, BLOCK=_BLOCK)
        except Exception as e:  # the tile compiler's CompileError, or the function's own refusal
            self._not_compiled = f"it is not in the tile language's scalar subset ({type(e).__name__}: {e})"
            return self._refuse(self._not_compiled)
        return out.reshape(shape).astype(otype, copy=False)

    def _result_dtype(self, arrays):
        """NumPy's rule: otypes, else the type of the function's result on the first elements."""
        np = _np()
        if self._otypes:
            return np.dtype(self._otypes[0] if isinstance(self._otypes, (list, tuple)) else self._otypes[0])
        if arrays[0].size == 0:
            return np.dtype("float64")
        first = [a[(0,) * a.ndim].get()[()] for a in arrays]  # NumPy scalars, as NumPy's vectorize passes
        try:
            result = np.asarray(self.pyfunc(*first))
        except Exception:
            return None
        return result.dtype if result.ndim == 0 and result.dtype.kind in "biuf" else None


def frompyfunc(func, /, nin, nout, *, identity=None):
    """numpy.frompyfunc: a callable over arrays that applies func per element (broadcasting its
    nin inputs). NumPy's returns object arrays, which cupric does not have: here each result is an
    array of the dtype NumPy gives the values (int64, float64, complex128, bool), on the inputs'
    device, as numpy.vectorize gives."""
    if nin < 1 or nout < 1:
        raise ValueError(f"frompyfunc needs at least one input and one output, got nin={nin}, nout={nout}")
    vec = vectorize(func)

    def call(*args, **kwargs):
        if len(args) != nin:
            raise TypeError(f"{getattr(func, '__name__', 'func')} (vectorized) takes {nin} arguments, got {len(args)}")
        out = vec(*args, **kwargs)
        if nout > 1 and not (isinstance(out, tuple) and len(out) == nout):
            raise ValueError(f"{getattr(func, '__name__', 'func')} returned no tuple of {nout} values")
        return out

    call.__name__ = f"{getattr(func, '__name__', 'func')} (vectorized)"
    call.nin, call.nout, call.nargs, call.identity = nin, nout, nin + nout, identity
    call.__doc__ = f"frompyfunc({getattr(func, '__name__', 'func')}, {nin}, {nout})"
    return call
