"""FFT callbacks written in Python: a prolog (applied to each input element as the transform loads
it) or an epilog (to each output element as it is stored), compiled by the tile compiler. On the GPU
a callback becomes cuFFT's JIT LTO callback (CUDA C++ around the tile function, NVRTC to LTO-IR,
linked into cuFFT's kernels); on the CPU the same function runs as a compiled elementwise pass
before or after the transform.

A callback is `fn(value, offset, *operands) -> value`: `value` is the element (a scalar, or a
pair `(real, imag)` for complex elements: tiles have no complex dtype), `offset` its int64 flat
index in the C-ordered input (prolog) or output (epilog) buffer, batches included, and each
operand an array given with the callback, read as `h[i]` (a pair for complex operands; indices
outside the operand read 0)."""

import inspect

import numpy as np

from .. import _cupric as _c
from .. import _dtypes as _dt
from ..tile import _cuda, _globals
from ..tile import _ops as _ct
from ..tile._callables import TileFunction
from ..tile._frontend import Frontend, _Return
from ..tile._paths import include_dir
from ..tile._source import CompileError
from ..tile._values import Value

_tile = _c._tile
_ELEMENTS = ("complex64", "complex128", "float32", "float64")
_CPU_BLOCK = 2048  # elements per block of the CPU pass (a block is one thread's loop)
_INFOS_KEPT = 16  # caller-info arrays kept per callback


@TileFunction
def cmul(a, b):
    """The product of two complex values given as (real, imag) pairs (for callbacks)."""
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


def _real_name(dtype):
    """The name of a dtype's real part type (complex64 -> float32; real dtypes are their own)."""
    return {"complex64": "float32", "complex128": "float64"}.get(_dt.as_dtype(dtype).name, _dt.as_dtype(dtype).name)


class _ComplexOperand:
    """A complex operand inside the compiler: its real and imaginary parts, two array parameters
    (`h.shape` and `h.ndim` as an array's)."""

    def __init__(self, fe, re, im):
        self.re, self.im = re, im
        self.ndim = re.ndim
        self.shape = tuple(fe.wrap(fe.b.array_dim(re.id, d)) for d in range(re.ndim))


class _CallbackFrontend(Frontend):
    """The tile frontend with operands indexable: `h[i]` gathers (a pair for complex operands)."""

    def expr_Subscript(self, node, scope):
        base = self.expr(node.value, scope)
        if not isinstance(base, _ComplexOperand) and not (isinstance(base, Value) and base.is_array):
            return super().expr_Subscript(node, scope)
        index = self.expr(node.slice, scope)
        items = index if isinstance(index, tuple) else (index,)
        scalar = all(not (isinstance(i, Value) and i.shape) for i in items)

        def gather(array):  # gathers at scalar indices give one element: make it a scalar again
            got = self.call(_ct.gather, [array, items], {}, node)
            return self.call(_ct.reshape, [got, ()], {}, node) if scalar else got

        if isinstance(base, _ComplexOperand):
            return gather(base.re), gather(base.im)
        return gather(base)

    def to_value(self, x, what="value"):
        if isinstance(x, tuple) and len(x) == 2:
            self.error(
                f"{what}: a (real, imag) pair is not one value (tiles have no complex dtype); work on its "
                "parts (v[0], v[1]) or multiply pairs with cupric.fft.callbacks.cmul(a, b)"
            )
        return super().to_value(x, what)

    def callback(self, tf, kind, element, operands, tile):
        """Builds the IR of a callback: for the GPU (tile=False) a scalar function whose parameters
        are the element's parts, the offset, the operands' arrays and one output array per part;
        for the CPU (tile=True) a kernel over blocks of _CPU_BLOCK elements of the part arrays."""
        self.src = tf.source()
        self.node = self.src.fdef
        real = _real_name(element)
        parts = 2 if _dt.as_dtype(element).kind == "c" else 1
        b = self.b
        if tile:
            inputs = [self.wrap(b.param_array(f"in{p}", real, 1)) for p in range(parts)]
        else:
            values = [self.wrap(b.param_scalar(f"v{p}", real, False)) for p in range(parts)]
            offset = self.wrap(b.param_scalar("offset", "int64", False))
        args = []
        for k, (dtype, ndim) in enumerate(operands):
            if np.dtype(dtype).kind == "c":
                parts_of = (self.wrap(b.param_array(f"h{k}{s}", _real_name(dtype), ndim)) for s in "ri")
                args.append(_ComplexOperand(self, *parts_of))
            else:
                args.append(self.wrap(b.param_array(f"h{k}", dtype, ndim)))
        outputs = [self.wrap(b.param_array(f"out{p}", real, 1)) for p in range(parts)]
        if tile:
            block = self.call(_ct.bid, [0], {}, self.node)
            values = [self.call(_ct.load, [x, (block,), (_CPU_BLOCK,)], {}, self.node) for x in inputs]
            first = self.ufunc("multiply", [self.call(_ct.astype, [block, "int64"], {}, self.node), _CPU_BLOCK])
            offset = self.ufunc("add", [self.call(_ct.arange, [_CPU_BLOCK], {"dtype": "int64"}, self.node), first])
        result = self._run(tf, tuple(values) if parts == 2 else values[0], offset, args)
        self._store(result, parts, outputs, tile)
        return b.finish()

    def _run(self, tf, value, offset, operands):
        try:
            bound = inspect.signature(tf.fn).bind(value, offset, *operands)
        except TypeError as err:
            n = len(operands)
            self.error(
                f"a callback is called as {tf.fn.__name__}(value, offset{', ' if n else ''}"
                f"{', '.join(f'operand{k}' for k in range(n))}) ({n} operand(s) given): {err}"
            )
        bound.apply_defaults()
        scope = dict(bound.arguments)
        try:
            self.block(self.src.fdef.body, scope, top=True)
        except _Return as r:
            return r.value
        name = tf.fn.__name__
        self.error(f"the callback {name} returns nothing; it must return the new element value", self.src.fdef)

    def _store(self, result, parts, outputs, tile):
        node = self.src.fdef.body[-1]
        got = result if isinstance(result, tuple) else (result,)
        if len(got) != parts or any(isinstance(v, tuple) for v in got):
            want = "a (real, imag) pair" if parts == 2 else "one real value"
            got = self._describe(result)
            self.error(f"the callback returns {got}; a callback of this transform returns {want}", node)
        for v, out in zip(got, outputs, strict=True):
            if isinstance(v, Value) and v.is_array or not isinstance(v, (Value, int, float, bool, np.generic)):
                self.error(f"the callback returns {self._describe(v)}; expected a scalar value", node)
            v = self.to_value(v)
            if not tile and v.shape:
                self.error(f"the callback returns a tile of shape {tuple(v.shape)}; expected a scalar value", node)
            if tile:
                v = self.call(_ct.broadcast_to, [v, (_CPU_BLOCK,)], {}, node)
                self.call(_ct.store, [out, (self.call(_ct.bid, [0], {}, node),), v], {}, node)
            else:
                self.call(_ct.store, [out, (0,), self.call(_ct.reshape, [v, (1,)], {}, node)], {}, node)


def _as_tile_function(fn):
    if isinstance(fn, TileFunction):
        return fn
    if callable(fn) and hasattr(fn, "__code__"):
        return TileFunction(fn)
    raise TypeError(f"a callback must be a Python function (or a @ct.function), got {type(fn).__name__} {fn!r}")


def _check_element(kind, element):
    if kind not in ("prolog", "epilog"):
        raise ValueError(f"a callback is a 'prolog' or an 'epilog', not {kind!r}")
    name = _dt.as_dtype(element).name
    if name not in _ELEMENTS:
        raise TypeError(f"FFT callbacks see complex64, complex128, float32 or float64 elements, not {name}")
    return name


def _operand_spec(a):
    if not isinstance(a, _c.ndarray):
        raise TypeError(f"callback operands are cupric arrays, got {type(a).__name__}")
    if a.dtype.kind not in "biufc":
        raise TypeError(f"callback operands need a numeric dtype, got {a.dtype}")
    if a.ndim == 0:
        raise ValueError("callback operands are arrays of 1 or more dimensions, got a 0-d array")
    return (a.dtype.name, a.ndim)


def _parts(a):
    """An operand as the arrays the compiled code reads: itself, or its real and imaginary views."""
    return [a.real, a.imag] if a.dtype.kind == "c" else [a]


class Callback:
    """A compiled prolog or epilog for one element dtype and one list of operand (dtype, ndim).
    `source` / `ltoir(arch)` / `symbol` / `cufft_type` serve cuFFT's plans, `caller_info(operands)`
    the device words of the operands, `apply(x, operands)` the CPU pass."""

    def __init__(self, fn, kind, element, operands):
        self.fn = fn
        self.kind = kind
        self.element = element
        self.operands = tuple(operands)
        self.symbol = f"cupric_fft_{kind}"  # unique within a plan: at most one prolog and one epilog
        fe = _CallbackFrontend(_tile.Builder(f"cupric_fft_{kind}_body"))
        self.function = fe.callback(fn, kind, element, self.operands, tile=False)
        self._cpu_function = _cpu_function(fn, kind, element, self.operands)  # both devices refuse alike
        self.source = _c._fft_callbacks.source(self.function, kind, element, self.symbol)
        self.cufft_type = _c._fft_callbacks.callback_type(kind, element)
        self._ltoir = {}
        self._cpu = None
        self._infos = {}  # (device, words) -> the int64 device array holding them

    def __repr__(self):
        return f"<FFT {self.kind} {self.fn.fn.__name__} on {self.element}, operands {list(self.operands)}>"

    def ltoir(self, arch=None):
        """The callback compiled by NVRTC to LTO-IR (bytes) for `arch` (compute_XY; default: the current
        device's, else compute_90). LTO-IR of an older arch links into newer GPUs' kernels."""
        arch = arch or _lto_arch()
        if arch not in self._ltoir:
            prog = _cuda._program(self.source, include_dir(), arch, name=f"{self.symbol}.cu")
            self._ltoir[arch] = bytes(prog.compile("ltoir").code)
        return self._ltoir[arch]

    def _check_operands(self, operands):
        got = tuple(_operand_spec(a) for a in operands)
        if got != self.operands:
            raise ValueError(f"the {self.kind} was compiled for operands {list(self.operands)}, got {list(got)}")

    def caller_info(self, operands, device=None):
        """The device words cuFFT hands the callback (per operand array: data pointer, extents,
        strides in elements), as an int64 array on the operands' device (`device`, the transform's,
        when given); None without operands. The same operands give the same array (the last
        _INFOS_KEPT are kept), so that the plan cache, which keys on its address, hits."""
        self._check_operands(operands)
        if not operands:
            return None
        where = {str(a.device) for a in operands} | ({str(device)} if device is not None else set())
        if len(where) != 1 or "cpu" in where:
            raise ValueError(
                f"the {self.kind}'s operands must be on the transform's GPU, got operands on "
                f"{[str(a.device) for a in operands]}" + (f" for a transform on {device}" if device else "")
                + ": move them with x.to_device(...)"
            )
        words = []
        for a in operands:
            for p in _parts(a):
                words += [p._data_ptr, *p.shape, *p._element_strides]
        key = (where.pop(), tuple(words))
        info = self._infos.pop(key, None)
        if info is None:
            info = _c.asarray(np.array(words, dtype=np.int64), device=key[0])
            while len(self._infos) >= _INFOS_KEPT:
                self._infos.pop(next(iter(self._infos)))
        self._infos[key] = info  # most recently used last
        return info

    def apply(self, x, operands=()):
        """The CPU pass: a new array with the callback applied to every element of `x` (flat C-order
        offsets), computed by the same tile function compiled for the host."""
        if x.dtype.name != self.element:
            raise TypeError(f"the {self.kind} was compiled for {self.element} elements, got {x.dtype}")
        self._check_operands(operands)
        off_host = [str(a.device) for a in (x, *operands) if str(a.device) != "cpu"]
        if off_host:
            raise ValueError(
                f"the CPU pass of the {self.kind} takes CPU arrays, got arrays on {off_host} (on a GPU the "
                "callback runs inside cuFFT's kernels: give it to cupric.fft.advanced)"
            )
        if self._cpu is None:
            f = self._cpu_function
            info = _tile.compile_host(f.emit("host")["source"], include_dir())
            self._cpu = _tile.HostLauncher(info["key"], f)
        flat = x.reshape(-1)  # a copy only where x is not C-contiguous
        out = _c.empty(flat.shape, dtype=x.dtype)
        args = [a for op in operands for a in _parts(op)]
        if flat.size:  # the kernel writes the parts straight into the result's real / imag views
            self._cpu.launch((-(-flat.size // _CPU_BLOCK), 1, 1), *_parts(flat), *args, *_parts(out))
        return out.reshape(x.shape)


def _cpu_function(fn, kind, element, operands):
    """The IR of the CPU pass (blocks of elements); its errors say why a callback that compiles
    per element may not compile there."""
    try:
        fe = _CallbackFrontend(_tile.Builder(f"cupric_fft_{kind}_cpu"))
        return fe.callback(fn, kind, element, operands, tile=True)
    except CompileError as err:
        err.notes.append(
            "(on the CPU a callback runs over blocks of elements: write conditionals as `x if c else y` or "
            "ct.where, which compile for both devices)"
        )
        err.args = (err._text(),)
        raise


def _lto_arch():
    mod = _cuda._cuda_module()
    if mod is not None and mod.is_available():
        return "compute_" + mod.Device().arch.removeprefix("sm_").rstrip("a")
    return "compute_90"


_cache = {}


def compile_callback(fn, kind, element, operands=()):
    """Compiles `fn` as a prolog or an epilog ('prolog' / 'epilog') of a transform whose input
    (prolog) or output (epilog) elements have dtype `element`, for these operand arrays (their
    dtypes and ndims; any device). An invalid callback raises cupric.tile.CompileError at its line.
    Cached per (function, kind, element, operand dtypes and ndims, values of the globals and closure
    variables it reads)."""
    tf = _as_tile_function(fn)
    element = _check_element(kind, element)
    specs = tuple(_operand_spec(a) for a in operands)
    # the globals and closure variables it reads are compiled in: a new value compiles again
    constants = _globals.snapshot(tf.fn.__name__, _globals.reads(tf.fn, _helper_of))
    key = (tf.fn, kind, element, specs, constants)
    cb = _cache.get(key)
    if cb is None:
        cb = _cache[key] = Callback(tf, kind, element, specs)
    return cb


def _helper_of(value):
    return value.fn if isinstance(value, TileFunction) else None
