"""cu.jit (and cu.fuse, CuPy's spelling): a Python function of cupric arrays traced once per
signature into a graph, whose elementwise chains and reductions run as generated tile kernels on
the CPU and on GPUs; what the kernels cannot compute runs eagerly inside it. docs/jit.md."""

import functools
import sys
import types

from .. import _cupric as _c
from .._keys import exact_key
from ._explain import Explanation, explain_program
from ._partition import partition
from ._prepared import prepare
from ._run import Program, compiled_count
from ._trace import JitError, Trace, TracedNamespace, Tracer, Untraceable, namespace_function

__all__ = ["jit", "fuse", "JitFunction", "JitError"]

_PY_SCALARS = (bool, int, float, complex)


def _numpy():
    return sys.modules.get("numpy")


class _Eager:
    """The entry of a signature whose function cannot be traced: it runs as plain Python."""

    def __init__(self, reason):
        self.reason = reason


class JitFunction:
    """A jit-compiled function: call it as the original; `explain(*args)` says how a call runs.

    A function is traced once per signature (dtypes, ndims, devices, which extents are 1, static
    values), not per shape. Its kernels take extents and strides as arguments, so a new length of
    the same rank compiles nothing, with one exception: a reduction whose rows fit on chip (up to
    64 KiB of the row padded to a power of two on a GPU: 16384 float32, 8192 float64; 4 KiB on the
    CPU) runs as one tile per row, read from memory once, and that kernel is specialised on the
    power of two (at least 256 elements). So rows of 1025 to 2048 elements share one kernel, and a
    length in a new bucket compiles once more; longer rows take a chunked kernel of any length."""

    def __init__(self, fn, static_argnums=(), static_argnames=()):
        functools.update_wrapper(self, fn)
        self.fn = fn
        import inspect  # here, not at `import cupric` (a few ms)

        self.signature = inspect.signature(fn)
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        params = list(self.signature.parameters)
        self.static = {params[i] if i < len(params) else i for i in nums} | set(names)
        self.entries = {}  # signature key -> Program or _Eager
        self.trace_count = 0
        kinds = {p.kind for p in self.signature.parameters.values()}
        self._positional = len(params) if kinds <= {inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                    inspect.Parameter.POSITIONAL_ONLY} else -1
        self._static_at = tuple(i for i, p in enumerate(params) if p in self.static)  # positions of static args
        self._fast = {}  # exact (dtype, shape, device) / scalar type per argument -> Program
        self._prepared = _c._tile.JitCalls()  # the warm path: Programs' runs repeated by one C++ call each
        self._unprepared = set()  # keys of _fast whose runs the C++ path does not take

    # ---- calls ---------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if not kwargs:
            result = self._prepared.call(*args)  # C++: a call prepared for exactly such arguments
            if result is not None:
                return result
        if not kwargs and len(args) == self._positional:
            fast = tuple((a.dtype, a.shape, a.device) if type(a) is _c.ndarray else type(a) if type(a) in _PY_SCALARS
                         else None for a in args)
            leaves = args
            if self._static_at:
                fast, leaves = self._with_statics(fast, args)
            try:
                program = self._fast.get(fast)
            except TypeError:  # an unhashable static argument: _call names it
                return self._call(args, kwargs)
            if program is not None:
                result = program.run(leaves)
                self._prepare(fast, program, args)
                return result
            if None not in fast:
                result = self._call(args, kwargs)
                program = self.entries.get(self._key(self._bind(args, kwargs)))
                if isinstance(program, Program):
                    if len(self._fast) > 256:
                        self._fast.clear()
                        self._unprepared.clear()
                    self._fast[fast] = program
                return result
        return self._call(args, kwargs)

    def _with_statics(self, fast, args):
        """The fast key with the static arguments by type and value, and the traced arguments."""
        fast = list(fast)
        for i in self._static_at:
            fast[i] = ("static", type(args[i]), exact_key(args[i]))
        return tuple(fast), tuple(a for i, a in enumerate(args) if i not in self._static_at)

    def _prepare(self, fast, program, args):
        """After a run through Python: the C++ path for the next calls with such arguments."""
        if fast in self._unprepared:
            return
        call = prepare(program, args, self._static_at)
        if call is None:
            self._unprepared.add(fast)  # (the same shapes run the same steps: no retrying each call)
        else:
            self._prepared.add(call)

    def _call(self, args, kwargs):
        bound = self._bind(args, kwargs)
        key = self._key(bound)
        entry = self.entries.get(key)
        if entry is _BY_SHAPE:
            key = _with_shapes(key, bound)
            entry = self.entries.get(key)
        if entry is None:
            return self._trace(key, bound)
        if type(entry) is _Eager:
            return self.fn(*args, **kwargs)
        return entry.run(self._leaves(bound))

    def _bind(self, args, kwargs):
        b = self.signature.bind(*args, **kwargs)
        b.apply_defaults()
        np = _numpy()
        for name, v in b.arguments.items():
            if np is not None and isinstance(v, np.ndarray) and name not in self.static:
                b.arguments[name] = _c.asarray(v)
        return b

    def _key(self, bound):
        return tuple(("static", type(v), _hashable(name, v)) if name in self.static else _arg_key(name, v)
                     for name, v in bound.arguments.items())

    def _leaves(self, bound):
        leaves = []
        for name, v in bound.arguments.items():
            if name not in self.static:
                _flatten(v, leaves)
        return leaves

    # ---- tracing -------------------------------------------------------------------------------

    def _trace(self, key, bound):
        self.trace_count += 1
        trace = Trace()
        args = {}
        for name, v in bound.arguments.items():
            args[name] = _traced_module(v) if name in self.static else _trace_argument(trace, name, v)
        traced_fn = _with_traced_cupric(self.fn)
        call = type(bound)(self.signature, args)
        try:
            result = traced_fn(*call.args, **call.kwargs)
        except Untraceable as e:
            self.entries[key] = _Eager(str(e))
            return self.fn(*bound.args, **bound.kwargs)
        except TypeError as e:
            if "to a cupric array" not in str(e):
                raise
            # a cupric function the trace does not see (called from another module's helper)
            self.entries[key] = _Eager(f"a cupric function outside the traced function received a traced value ({e})")
            return self.fn(*bound.args, **bound.kwargs)
        trace.graph.output = _output_structure(trace, result)
        if trace.graph.shape_specialised and key[-1:] != ("shapes",):
            self.entries[key] = _BY_SHAPE  # the function read shapes: one program per shape
            key = _with_shapes(key, bound)
        steps = partition(trace.graph, trace.graph.output_ids())
        self.entries[key] = Program(trace.graph, steps)
        return _values(result)

    # ---- inspection ----------------------------------------------------------------------------

    def explain(self, *args, **kwargs):
        """How a call with these arguments runs: the kernels (and the ops fused into each) and
        the ops that run eagerly, with the reason. Returns an Explanation (print it)."""
        bound = self._bind(args, kwargs)
        key = self._key(bound)
        if key not in self.entries:
            self._trace(key, bound)
        entry = self.entries.get(key)
        if entry is _BY_SHAPE:
            key = _with_shapes(key, bound)
            if key not in self.entries:
                self._trace(key, bound)
            entry = self.entries[key]
        if type(entry) is _Eager:
            return Explanation(self.__name__, [], entry.reason)
        return explain_program(self.__name__, entry)

    @property
    def compile_count(self):
        """Kernel specialisations made by this process for all jit functions (see docs/jit.md)."""
        return compiled_count()

    def __get__(self, obj, objtype=None):
        return self if obj is None else types.MethodType(self, obj)


_BY_SHAPE = "by shape"


def _with_shapes(key, bound):
    return key + (tuple(getattr(v, "shape", None) for v in bound.arguments.values()), "shapes")


def _arg_key(name, v):
    """What a traced argument's compiled program depends on: dtype, ndim, device and which extents
    are 1 for an array; the kind of a Python scalar; the dtype of a NumPy scalar; the items of a
    tuple, list or dict (*args, **kwargs); anything else is a constant of the trace, by value."""
    t = type(v)
    if t is _c.ndarray:
        return (v.dtype, v.ndim, str(v.device), tuple(s == 1 for s in v.shape))
    if t in _PY_SCALARS:
        return t
    if _is_numpy_scalar(v):
        return ("typed", v.dtype)
    if t in (tuple, list):
        return (t, tuple(_arg_key(name, i) for i in v))
    if t is dict:
        return (t, tuple((k, _arg_key(name, i)) for k, i in v.items()))
    return ("static", type(v), _hashable(name, v))  # by type too: 3, 3.0 and True are equal


def _flatten(v, leaves):
    t = type(v)
    if t in (tuple, list):
        for i in v:
            _flatten(i, leaves)
    elif t is dict:
        for i in v.values():
            _flatten(i, leaves)
    elif _is_traced(v):
        leaves.append(v)


def _trace_argument(trace, name, v):
    t = type(v)
    if t in (tuple, list):
        return t(_trace_argument(trace, f"{name}[{i}]", x) for i, x in enumerate(v))
    if t is dict:
        return {k: _trace_argument(trace, f"{name}[{k!r}]", x) for k, x in v.items()}
    return trace.argument(v, name) if _is_traced(v) else _traced_module(v)


def _is_numpy_scalar(v):
    np = _numpy()
    return np is not None and isinstance(v, np.generic)


def _is_traced(v):
    return type(v) is _c.ndarray or type(v) in _PY_SCALARS or _is_numpy_scalar(v)


def _hashable(name, v):
    try:
        hash(v)
    except TypeError:
        raise TypeError(f"jit: argument '{name}' is a {type(v).__name__}, which cannot key a compiled signature; "
                        f"pass arrays and numbers, or mark hashable constants static (static_argnames)") from None
    return exact_key(v)


def _traced_module(v):
    if isinstance(v, types.ModuleType) and (v.__name__ == "cupric" or v.__name__.startswith("cupric.")):
        return TracedNamespace(v)
    return v


def _with_traced_cupric(fn):
    """fn with `cupric` (and names bound to its functions) replaced by the tracing namespace in its
    globals and closure cells."""
    cupric = sys.modules["cupric"]

    def replace(v):
        if isinstance(v, types.ModuleType):
            return _traced_module(v)
        name = getattr(v, "__name__", None)
        if callable(v) and not isinstance(v, type) and isinstance(name, str) and getattr(cupric, name, None) is v:
            return namespace_function(name, v)  # `from cupric import sin`
        return v

    names = set(fn.__code__.co_names)
    g = dict(fn.__globals__)
    for n in names & g.keys():
        g[n] = replace(g[n])
    closure = fn.__closure__
    if closure:
        closure = tuple(types.CellType(replace(c.cell_contents)) if _cell_full(c) else c for c in closure)
    f = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, closure)
    f.__kwdefaults__ = fn.__kwdefaults__
    return f


def _cell_full(cell):
    try:
        return cell.cell_contents is not _EMPTY_CELL
    except ValueError:  # a closure variable not yet bound
        return False


_EMPTY_CELL = object()


def _output_structure(trace, obj):
    if isinstance(obj, Tracer):
        return ("node", trace.node_of(obj))
    if isinstance(obj, tuple):
        return ("tuple", [_output_structure(trace, o) for o in obj])
    if isinstance(obj, list):
        return ("list", [_output_structure(trace, o) for o in obj])
    if isinstance(obj, dict):
        return ("dict", {k: _output_structure(trace, v) for k, v in obj.items()})
    return ("literal", obj)


def _values(obj):
    if isinstance(obj, Tracer):
        return obj._value
    if isinstance(obj, (tuple, list)):
        return type(obj)(_values(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _values(v) for k, v in obj.items()}
    return obj


def jit(fn=None, *, static_argnums=(), static_argnames=()):
    """@cu.jit or @cu.jit(static_argnums=..., static_argnames=...): see JitFunction."""
    if fn is None:
        return lambda f: JitFunction(f, static_argnums, static_argnames)
    return JitFunction(fn, static_argnums, static_argnames)


def fuse(*args, **kwargs):
    """cupy.fuse's spelling of jit: @cu.fuse, @cu.fuse() or @cu.fuse(kernel_name=...)."""
    kwargs.pop("kernel_name", None)
    if args and callable(args[0]):
        return jit(args[0], **kwargs)
    return lambda f: jit(f, **kwargs)
