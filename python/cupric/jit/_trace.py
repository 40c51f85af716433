"""Tracing a @cu.jit function: it runs once per signature on Tracers, which compute the real
values eagerly (so the first call's result is cupric's own) and record each op as a graph node.
`cu.*` calls reach the tracer through a namespace that replaces the module in the function's
globals; NumPy's functions reach it through the array protocols."""

import operator
import os
import sys
import types

from .. import _cupric as _c
from ._graph import REDUCTIONS, Graph, reduce_eager

_HERE = os.path.dirname(os.path.abspath(__file__))
_PY_SCALARS = (bool, int, float, complex)
_FUSED_DTYPE_KINDS = "biuf"  # tiles have no complex dtypes


class Untraceable(Exception):
    """The function needs a value the trace cannot know (bool(x), float(x), x.item(), a cupric
    call in a helper module): it runs eagerly, and explain() says where and why."""


class JitError(TypeError):
    """A function jit cannot run as written (it writes into its arguments, or uses out=)."""


def user_site():
    """(file, line, source text) of the innermost frame outside this package."""
    f = sys._getframe(1)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _HERE:
        f = f.f_back
    if f is None:
        return None
    import linecache  # the trace's, not `import cupric`'s

    return (f.f_code.co_filename, f.f_lineno, linecache.getline(f.f_code.co_filename, f.f_lineno))


def _is_weak(v):
    return type(v) in _PY_SCALARS


class Trace:
    """The graph being recorded and the Tracers of the arguments."""

    def __init__(self):
        self.graph = Graph()
        self.leaves = []  # the argument values in the order of their leaf nodes
        self.inputs = set()  # ids of argument nodes: writing into them is an error

    def argument(self, value, name):
        g = self.graph
        if isinstance(value, _c.ndarray):
            node = g.add("input", (), {"index": len(self.leaves), "name": name}, value.dtype, value.ndim,
                         tuple(s == 1 for s in value.shape), None)
        else:  # a Python or NumPy scalar: a value of the kernel, not a constant
            node = g.add("scalar", (), {"index": len(self.leaves), "name": name, "weak": _is_weak(value)},
                         None if _is_weak(value) else value.dtype, 0, (), None)
        self.leaves.append(value)
        self.inputs.add(node.id)
        return Tracer(self, node, value)

    def node_of(self, obj):
        """The node id of an operand: a Tracer's own, or a new leaf for a literal or a captured array."""
        if isinstance(obj, Tracer):
            if obj._trace is not self:
                raise JitError("a Tracer of another jit call was used here (a value leaked out of a trace)")
            return obj._node.id
        g = self.graph
        if _is_weak(obj):
            return g.add("const", (), {"value": obj, "weak": True}, None, 0, (), None).id
        np = sys.modules.get("numpy")
        if np is not None and isinstance(obj, np.generic):  # a typed scalar: keeps its dtype
            return g.add("const", (), {"value": obj, "weak": False}, obj.dtype, 0, (), None).id
        if np is not None and isinstance(obj, np.ndarray):
            obj = _c.asarray(obj)
        if isinstance(obj, _c.ndarray):
            return g.add("captured", (), {"value": obj}, obj.dtype, obj.ndim, tuple(s == 1 for s in obj.shape),
                         None).id
        raise TypeError(f"jit: cannot use a {type(obj).__name__} as an array operand")

    def record(self, kind, operands, params, value, why=None):
        args = [self.node_of(o) for o in operands]
        if isinstance(value, _c.ndarray):
            dtype, ndim, ones = value.dtype, value.ndim, tuple(s == 1 for s in value.shape)
        else:
            dtype, ndim, ones = getattr(value, "dtype", None), 0, ()
        if why is None and kind != "eager":
            why = self._why_not_fused(args, dtype)
        node = self.graph.add(kind, args, params, dtype, ndim, ones, user_site(), why)
        return Tracer(self, node, value)

    def _why_not_fused(self, args, dtype):
        dtypes = [dtype] + [self.graph.nodes[a].dtype for a in args]
        for dt in dtypes:
            if dt is not None and dt.kind not in _FUSED_DTYPE_KINDS:
                return f"{dt} values are not fused (tiles have no {dt} dtype)"
        return None


def _value(obj):
    return obj._value if isinstance(obj, Tracer) else obj


def _unwrap(obj):
    """obj with every Tracer replaced by its value (in lists, tuples and dicts too)."""
    if isinstance(obj, Tracer):
        return obj._value
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unwrap(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj


def _tracers_in(obj, found):
    if isinstance(obj, Tracer):
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tracers_in(o, found)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tracers_in(o, found)
    return found


def _substitute(obj, env):
    """obj with each Tracer replaced by env[its node id]."""
    if isinstance(obj, Tracer):
        return env[obj._node.id]
    if isinstance(obj, (list, tuple)):
        return type(obj)(_substitute(o, env) for o in obj)
    if isinstance(obj, dict):
        return {k: _substitute(v, env) for k, v in obj.items()}
    return obj


def trace_of(objs):
    for o in objs:
        if isinstance(o, Tracer):
            return o._trace
    return None


def eager_call(name, fn, args, kwargs, why):
    """fn(*args, **kwargs) run eagerly now and at every call: an `eager` node (one per array of
    a tuple result); results that are not arrays are constants of the trace."""
    tracers = _tracers_in((args, kwargs), [])
    trace = tracers[0]._trace
    for t in tracers:
        trace.node_of(t)  # refuses Tracers of another trace
    if kwargs.get("out") is not None:
        raise JitError(f"jit: {name}(..., out=...) writes into an array; return the value instead")
    value = fn(*_unwrap(args), **_unwrap(kwargs))

    def call(env):
        return fn(*_substitute(args, env), **_substitute(kwargs, env))

    params = {"name": name, "call": call}
    if isinstance(value, _c.ndarray):
        return trace.record("eager", tracers, params, value, why)
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, _c.ndarray) for v in value):
        whole = trace.record("eager", tracers, params, None, why)
        parts = []
        for i, v in enumerate(value):
            item = {"name": f"{name}[{i}]", "call": lambda env, i=i, w=whole._node.id: env[w][i]}
            parts.append(trace.record("eager", [whole], item, v, why))
        return type(value)(parts)
    trace.graph.shape_specialised = True  # a Python value out of an array op: it may hang on shapes
    return value


# ---- the ops the trace fuses -------------------------------------------------------------------


def ufunc_call(name, *operands, **kwargs):
    ufunc = _c._ufunc_table[name]  # the table's (cu.clip is a composite of another signature)
    if kwargs or ufunc.nout != 1:
        return eager_call(name, ufunc, operands, kwargs, "ufunc keywords and several results are not fused"
                          if ufunc.nout == 1 else f"{name} has {ufunc.nout} results")
    trace = trace_of(operands)
    vals = [_value(o) for o in operands]
    if all(_is_weak(v) for v in vals) and name in _PY_OPERATORS:
        # Python numbers stay Python numbers (weak), as they do outside the trace
        value = _PY_OPERATORS[name](*vals)
        return trace.record("pyop", operands, {"name": name}, value)
    return trace.record("ufunc", operands, {"name": name}, ufunc(*vals))


_PY_OPERATORS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "true_divide": operator.truediv,
    "divide": operator.truediv, "floor_divide": operator.floordiv, "remainder": operator.mod,
    "power": operator.pow, "negative": operator.neg, "positive": operator.pos, "absolute": operator.abs,
}


def where_call(cond, x=None, y=None):
    if x is None or y is None:
        return eager_call("where", _c.where, (cond,), {}, "where(cond) with one argument is nonzero")
    trace = trace_of((cond, x, y))
    return trace.record("where", (cond, x, y), {}, _c.where(_value(cond), _value(x), _value(y)))


def astype_call(x, dtype, copy=True, **kwargs):
    trace = trace_of((x,))
    value = _c.asarray(_value(x)).astype(dtype)
    return trace.record("astype", (x,), {"dtype": value.dtype}, value)


def clip_call(x, a_min=None, a_max=None, **kwargs):
    if kwargs:
        return eager_call("clip", _c.clip, (x, a_min, a_max), kwargs, "clip keywords are not fused")
    if a_min is None and a_max is None:
        return eager_call("clip", _c.clip, (x, a_min, a_max), {}, "clip without bounds")
    if a_min is None:
        return ufunc_call("minimum", x, a_max)
    if a_max is None:
        return ufunc_call("maximum", x, a_min)
    return ufunc_call("clip", x, a_min, a_max)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(a % ndim if -ndim <= a < ndim else a for a in axes))


def reduce_call(op, x, axis=None, dtype=None, out=None, keepdims=False, ddof=0, _ddof=0, **kwargs):
    fn = getattr(_c, op)
    plain = out is None and not kwargs and isinstance(_value(x), _c.ndarray) and _value(x).ndim > 0
    if not plain or (dtype is not None and op not in ("sum", "prod", "mean")):
        kw = dict(kwargs, axis=axis, keepdims=keepdims, **({"dtype": dtype} if dtype is not None else {}),
                  **({"ddof": ddof} if op in ("var", "std") else {}))
        return eager_call(op, fn, (x,), dict(kw, out=out) if out is not None else kw,
                          "where=, initial=, out= and reductions of 0-d values are not fused")
    xv = _value(x)
    axes = _axes(axis, xv.ndim)
    if not axes or len(set(axes)) != len(axes) or any(not 0 <= a < xv.ndim for a in axes):
        return eager_call(op, fn, (x,), {"axis": axis, "keepdims": keepdims}, "no axes to reduce")
    if op in ("var", "std"):
        return _variance(op, x, axes, keepdims, ddof, dtype)
    trace = trace_of((x,))
    params = {"op": op, "axes": axes, "keepdims": bool(keepdims), "ddof": _ddof}
    if op == "mean":
        probe = _c.mean(_c.zeros((1,), dtype=xv.dtype), dtype=dtype)
        params["dtype"] = probe.dtype
        params["acc"] = dtype if dtype is not None else _mean_accumulator(xv.dtype)
    elif op in ("sum", "prod"):
        params["sum_dtype"] = dtype
    return trace.record("reduce", (x,), params, reduce_eager(xv, params))


def arg_reduce_call(op, x, axis=None, out=None, *, keepdims=False):
    """argmax / argmin: over one axis, or over the flattened array (axis=None)."""
    fn = getattr(_c, op)
    xv = _value(x)
    if out is not None or not isinstance(xv, _c.ndarray) or xv.ndim == 0 or xv.dtype.kind not in "biuf" or (
            axis is not None and not (isinstance(axis, int) and -xv.ndim <= axis < xv.ndim)):
        return eager_call(op, fn, (x,), {"axis": axis, "out": out, "keepdims": keepdims} if out is not None else
                          {"axis": axis, "keepdims": keepdims}, f"this {op} is not fused (out=, 0-d or complex)")
    axes = _axes(axis, xv.ndim)
    params = {"op": op, "axes": axes, "keepdims": bool(keepdims), "ddof": 0,
              "axis_arg": None if axis is None else axis % xv.ndim}
    return trace_of((x,)).record("reduce", (x,), params, reduce_eager(xv, params))


def _mean_accumulator(dtype):
    if dtype.kind in "biu":
        return "float64"
    return "float32" if dtype.itemsize <= 2 and dtype.kind == "f" else dtype


def _variance(op, x, axes, keepdims, ddof, dtype):
    """var and std as NumPy computes them: the mean kept over the axes, squared deviations, their
    mean over n - ddof (std: its square root)."""
    mean = reduce_call("mean", x, axis=axes, dtype=dtype, keepdims=True)
    dev = ufunc_call("subtract", x, mean)
    sq = ufunc_call("multiply", dev, dev)
    var = reduce_call("mean", sq, axis=axes, dtype=dtype, keepdims=keepdims, _ddof=ddof)
    return ufunc_call("sqrt", var) if op == "std" else var


def _reduction(op):
    return lambda x, *args, **kwargs: reduce_call(op, x, *args, **kwargs)


TRACED = {
    "where": where_call,
    "clip": clip_call,
    "astype": astype_call,
    **{op: _reduction(op) for op in (*REDUCTIONS, "var", "std")},
    "argmax": lambda x, *a, **k: arg_reduce_call("argmax", x, *a, **k),
    "argmin": lambda x, *a, **k: arg_reduce_call("argmin", x, *a, **k),
    "amax": _reduction("max"),
    "amin": _reduction("min"),
}


# ---- Tracer: what the function's array arguments are during the trace --------------------------

_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "power", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
_COMPARE = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal", "ne": "not_equal"}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}


class Tracer:
    """An array (or a scalar argument) during the trace: its real value and its graph node."""

    __slots__ = ("_trace", "_node", "_value")
    __array_priority__ = 1000

    def __init__(self, trace, node, value):
        self._trace, self._node, self._value = trace, node, value

    # what the trace may read without tying the graph to values or shapes
    @property
    def dtype(self):
        v = self._value
        return v.dtype if hasattr(v, "dtype") else _c.asarray(v).dtype

    @property
    def ndim(self):
        return getattr(self._value, "ndim", 0)

    @property
    def device(self):
        return getattr(self._value, "device", None)

    @property
    def shape(self):
        self._trace.graph.shape_specialised = True
        return tuple(getattr(self._value, "shape", ()))

    @property
    def size(self):
        self._trace.graph.shape_specialised = True
        return getattr(self._value, "size", 1)

    def __len__(self):
        self._trace.graph.shape_specialised = True
        return len(self._value)

    def _untraceable(self, what):
        site = user_site()
        where = f" at {site[0]}:{site[1]}" if site else ""
        raise Untraceable(f"{what}{where} needs the array's value while tracing")

    def __bool__(self):
        self._untraceable("bool()")

    def __float__(self):
        self._untraceable("float()")

    def __int__(self):
        self._untraceable("int()")

    def __index__(self):
        self._untraceable("using an array as an index")

    def __complex__(self):
        self._untraceable("complex()")

    def __iter__(self):
        self._untraceable("iterating over an array")

    def __array__(self, *args, **kwargs):
        self._untraceable("converting to a NumPy array")

    def item(self, *args):
        self._untraceable(".item()")

    def tolist(self):
        self._untraceable(".tolist()")

    def get(self, *args, **kwargs):
        self._untraceable(".get()")

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return f"Tracer({self._node.label()}, dtype={self.dtype}, ndim={self.ndim})"

    # writing into an argument changes the caller's data: refused at trace time
    def _mutation(self, what):
        if self._node.id in self._trace.inputs:
            name = self._node.params.get("name", "?")
            site = user_site()
            where = f" at {site[0]}:{site[1]}: {site[2].strip()}" if site else ""
            raise JitError(f"jit: the function writes into its argument '{name}' ({what}){where}; a jit function "
                           f"must not mutate its inputs: compute a new array and return it")
        raise JitError(f"jit: {what} writes into an array inside the function; write y = ... instead")

    def __setitem__(self, key, value):
        self._mutation("item assignment")

    # methods
    def astype(self, dtype, *args, **kwargs):
        return astype_call(self, dtype)

    def clip(self, a_min=None, a_max=None, **kwargs):
        return clip_call(self, a_min, a_max, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):  # no array protocols: a cupric call outside the trace must not read the value
            raise AttributeError(name)
        if name in TRACED:
            return lambda *a, **k: TRACED[name](self, *a, **k)
        attr = getattr(self._value, name)
        if not callable(attr):
            return attr
        return lambda *a, **k: eager_call(f"ndarray.{name}", lambda s, *a2, **k2: getattr(s, name)(*a2, **k2),
                                          (self, *a), k, f"ndarray.{name} is not fused")

    def __getitem__(self, key):
        return eager_call("indexing", operator.getitem, (self, key), {}, "indexing is not fused")

    def __matmul__(self, other):
        return eager_call("matmul", _c.matmul, (self, other), {}, "matmul is not fused")

    def __rmatmul__(self, other):
        return eager_call("matmul", _c.matmul, (other, self), {}, "matmul is not fused")

    # NumPy's functions on a Tracer come back here
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and ufunc.__name__ in _c._ufunc_table:
            return ufunc_call(ufunc.__name__, *inputs, **kwargs)
        return eager_call(f"numpy.{ufunc.__name__}.{method}", getattr(ufunc, method), inputs, kwargs,
                          "this NumPy ufunc method is not fused")

    def __array_function__(self, func, types, args, kwargs):
        return namespace_function(func.__name__, func)(*args, **kwargs)


def _define_operators():
    for short, name in {**_BINARY, **_COMPARE}.items():
        setattr(Tracer, f"__{short}__", lambda self, other, n=name: ufunc_call(n, self, other))
        if short in _BINARY:
            setattr(Tracer, f"__r{short}__", lambda self, other, n=name: ufunc_call(n, other, self))
            setattr(Tracer, f"__i{short}__", lambda self, other, s=short: self._inplace(s, other))
    for short, name in _UNARY.items():
        setattr(Tracer, f"__{short}__", lambda self, n=name: ufunc_call(n, self))

    def _inplace(self, short, other):
        if self._node.id in self._trace.inputs:
            self._mutation(f"x {_SYMBOLS.get(short, short)}= ...")
        # an intermediate value: x += y rebinds the name to a new value, as y = x + y would
        return ufunc_call(_BINARY[short], self, other)

    Tracer._inplace = _inplace
    Tracer.__pow__ = _power


def _power(self, other):
    """x ** 2 as square(x) where that keeps the dtype power would give (the same values, as NumPy's
    operator does): pow per element is slow on the CPU."""
    kind = self.dtype.kind
    if (type(other) is int and kind in "iuf" or type(other) is float and kind == "f") and other == 2:
        return ufunc_call("square", self)
    return ufunc_call("power", self, other)


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
            "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}
_define_operators()


# ---- the namespace a traced function sees in place of `cupric` ----------------------------------


def namespace_function(name, fn):
    """What `cu.<name>` is inside a trace: a traced op, a ufunc, or an eager call."""
    if name in TRACED:
        traced = TRACED[name]
        return lambda *a, **k: traced(*a, **k) if trace_of(_tracers_in((a, k), [])) else fn(*a, **k)
    if isinstance(fn, _c.ufunc) or name in _c._ufunc_table:
        return lambda *a, **k: ufunc_call(name, *a, **k) if _tracers_in((a, k), []) else fn(*a, **k)
    if name == "asarray":
        return lambda a, *r, **k: a if isinstance(a, Tracer) and not r and not k else \
            eager_call(name, fn, (a, *r), k, "asarray") if _tracers_in((a, r, k), []) else fn(a, *r, **k)

    def call(*args, **kwargs):
        if not _tracers_in((args, kwargs), []):
            return fn(*args, **kwargs)
        return eager_call(f"cu.{name}", fn, args, kwargs, f"cu.{name} is not fused")

    return call


class TracedNamespace(types.ModuleType):
    """A stand-in for the cupric module (or one of its submodules) in a traced function."""

    def __init__(self, module):
        super().__init__(module.__name__)
        self._module = module

    def __getattr__(self, name):
        attr = getattr(self._module, name)
        if isinstance(attr, types.ModuleType) and attr.__name__.startswith("cupric"):
            return TracedNamespace(attr)
        if callable(attr) and not isinstance(attr, type):
            return namespace_function(name, attr)
        return attr
