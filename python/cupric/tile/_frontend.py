"""The tile compiler's frontend: walks a kernel's Python AST and builds the IR through the C++
Builder (cupric._cupric._tile). Python-level values (constants, tuples, dtypes, modules) are
evaluated here at compile time; everything that exists at run time is an IR value. Shape and
dtype rules live in C++; this file only maps Python syntax onto builder calls and reports
errors at the kernel's own file and line.
"""

import ast
import builtins
import inspect
import math
import operator

import numpy as np

from .. import _dtypes as _dt
from . import _ops
from ._callables import Launchable, TileFunction
from ._control import ControlFlow
from ._source import SUPPORTED, CompileError, source_of
from ._values import PY_NUMBERS, Method, Value

_TILE_METHODS = {
    "astype": _ops.astype,
    "reshape": _ops.reshape,
    "transpose": _ops.transpose,
    "permute": _ops.permute,
    "sum": _ops.sum,
    "prod": _ops.prod,
    "max": _ops.max,
    "min": _ops.min,
    "argmax": _ops.argmax,
    "argmin": _ops.argmin,
    "cumsum": _ops.cumsum,
    "cumprod": _ops.cumprod,
    "expand_dims": _ops.expand_dims,
}

_BINOPS = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "divide",
    ast.FloorDiv: "floor_divide",
    ast.Mod: "remainder",
    ast.Pow: "power",
    ast.LShift: "left_shift",
    ast.RShift: "right_shift",
    ast.BitAnd: "bitwise_and",
    ast.BitOr: "bitwise_or",
    ast.BitXor: "bitwise_xor",
}
_PYOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.MatMult: operator.matmul,
}
_CMPOPS = {
    ast.Lt: "less",
    ast.LtE: "less_equal",
    ast.Gt: "greater",
    ast.GtE: "greater_equal",
    ast.Eq: "equal",
    ast.NotEq: "not_equal",
}
_PYCMP = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_UNOPS = {ast.USub: "negative", ast.UAdd: "positive", ast.Invert: "invert", ast.Not: "logical_not"}
_PY_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: operator.not_}
_COMPILE_TIME_CALLS = {
    builtins.divmod,
    builtins.round,
    builtins.pow,
    builtins.range,
    builtins.tuple,
    builtins.list,
    builtins.zip,
    builtins.enumerate,
    builtins.sorted,
    builtins.reversed,
    builtins.str,
    builtins.getattr,
    builtins.hasattr,
}


# Errors an op raises about the user's kernel (bad shapes, dtypes, arguments...): reported at the
# kernel's file and line.
_USER_ERRORS = (ValueError, TypeError, OverflowError, NotImplementedError, IndexError, KeyError, AttributeError,
                ZeroDivisionError)

class _Return(Exception):
    def __init__(self, value):
        self.value = value


class Frontend(ControlFlow):
    """Builds one kernel specialisation's IR from its Python source."""

    def __init__(self, builder, debug=False):
        self.b = builder
        self.debug = debug
        self.src = None
        self.calls = []  # (Source, node) of inlined @ct.function calls, for messages

    # ---- errors --------------------------------------------------------------------------------

    def _error_at(self, node, message):
        filename, line, col, text = self.src.where(node) if self.src else ("<unknown>", 0, 0, "")
        notes = []
        for src, call in reversed(self.calls):
            f, ln, _, _ = src.where(call)
            notes.append(f"(in a @ct.function called at {f}:{ln})")
        return CompileError(message, filename, line, col, text, notes)

    def error(self, message, node=None):
        raise self._error_at(node if node is not None else self.node, message)

    # ---- values --------------------------------------------------------------------------------

    def wrap(self, vid):
        return Value(self.b, vid)

    def type(self, vid):
        return self.b.type(vid)

    @staticmethod
    def is_value(x):
        return isinstance(x, Value)

    def to_value(self, x, what="value"):
        if isinstance(x, Value):
            return x
        if isinstance(x, PY_NUMBERS):
            return self.wrap(self.b.constant(x))
        if isinstance(x, np.generic) and x.dtype.kind in "biuf":
            return self.wrap(self.b.constant(x.item(), _dt.as_dtype(x.dtype.name)))
        self.error(f"{what}: expected a tile, a scalar or a number, got {type(x).__name__} {x!r}")

    def val(self, x, what="value"):
        v = self.to_value(x, what)
        if v.is_array:
            return v.id
        return v.id

    def array(self, x, what):
        if not (isinstance(x, Value) and x.is_array):
            self.error(f"{what}: the first argument must be an array parameter of the kernel, got {self._describe(x)}")
        return x.id

    def const(self, x, what):
        if isinstance(x, Value):
            self.error(
                f"{what} must be a compile-time constant (a number, or a ct.Constant parameter), not a run-time value"
            )
        return x

    def int_const(self, x, what):
        x = self.const(x, what)
        if isinstance(x, np.integer):
            x = int(x)
        if not isinstance(x, int) or isinstance(x, bool):
            self.error(f"{what} must be a compile-time integer, got {x!r}")
        return x

    def scalar_const(self, x, what):
        x = self.const(x, what)
        if x is None:
            return None
        if isinstance(x, np.generic):
            x = x.item()
        if not isinstance(x, PY_NUMBERS):
            self.error(f"{what} must be a number, got {x!r}")
        return x

    def shape(self, x, what, allow=()):
        if isinstance(x, Value):
            self.error(f"{what} must be compile-time integers (tile shapes are constants), got a run-time value")
        items = tuple(x) if isinstance(x, (tuple, list)) else (x,)
        out = []
        for d in items:
            if isinstance(d, Value):
                self.error(
                    f"{what} must be compile-time integers (tile shapes are constants); "
                    "pass sizes as ct.Constant parameters"
                )
            if isinstance(d, np.integer):
                d = int(d)
            if not isinstance(d, int) or isinstance(d, bool):
                self.error(f"{what} must be integers, got {d!r}")
            out.append(d)
        return tuple(out)

    def dtype(self, x):
        x = self.const(x, "dtype")
        try:
            return _dt.as_dtype(x)
        except (TypeError, ValueError):
            self.error(f"not a dtype: {x!r}")

    def axis(self, x):
        x = self.const(x, "axis")
        if x is None:
            return None
        return self.int_const(x, "axis")

    def ufunc(self, name, args):
        return self.wrap(self.b.ufunc(name, [self.val(a) for a in args]))

    @staticmethod
    def _describe(x):
        if isinstance(x, Value):
            return f"an array ({x.dtype}, {x.ndim}-d)" if x.is_array else f"a tile {x.dtype}{list(x.shape)}"
        return f"{type(x).__name__} {x!r}"

    # ---- entry -----------------------------------------------------------------------------------

    def compile_kernel(self, fn, params):
        """params: (name, spec) per parameter; spec ("array", dtype, ndim) | ("scalar", dtype, weak) |
        ("constant", value)."""
        self.src = source_of(fn)
        scope = {}
        for name, spec in params:
            if spec[0] == "array":
                scope[name] = self.wrap(self.b.param_array(name, spec[1], spec[2]))
            elif spec[0] == "scalar":
                scope[name] = self.wrap(self.b.param_scalar(name, spec[1], spec[2]))
            else:
                scope[name] = spec[1]
        try:
            self.block(self.src.fdef.body, scope, top=True)
        except _Return:
            pass
        return self.b.finish()

    # ---- statements ------------------------------------------------------------------------------

    def block(self, stmts, scope, top=False):
        for i, s in enumerate(stmts):
            if isinstance(s, ast.Return):
                if not top or i != len(stmts) - 1:
                    self.error("`return` is only supported as the last statement of a kernel or @ct.function", s)
                self.node = s  # errors in the returned expression point here, not at the statement before
                value = None if s.value is None else self.expr(s.value, scope)
                raise _Return(value)
            self.stmt(s, scope)

    def stmt(self, node, scope):
        self.node = node
        f = self.src.where(node)
        self.b.set_location(f[0], f[1], f[2])
        handler = getattr(self, "stmt_" + type(node).__name__, None)
        if handler is None:
            self.error(f"`{type(node).__name__}` statements are not supported; {SUPPORTED}", node)
        try:
            handler(node, scope)
        except (CompileError, _Return):
            raise
        except _USER_ERRORS as err:
            raise self._error_at(node, str(err)) from err

    def stmt_Expr(self, node, scope):
        self.expr(node.value, scope)

    def stmt_Pass(self, node, scope):
        pass

    def stmt_Assign(self, node, scope):
        value = self.expr(node.value, scope)
        for t in node.targets:
            self.assign(t, value, scope)

    def stmt_AnnAssign(self, node, scope):
        if node.value is not None:
            self.assign(node.target, self.expr(node.value, scope), scope)

    def stmt_AugAssign(self, node, scope):
        if not isinstance(node.target, ast.Name):
            self.error("augmented assignment needs a plain name on the left (arrays are written with ct.store)", node)
        current = self.load_name(node.target.id, node.target, scope)
        self.assign(node.target, self.binop(type(node.op), current, self.expr(node.value, scope), node), scope)

    def stmt_Assert(self, node, scope):
        msg = "" if node.msg is None else self.expr(node.msg, scope)
        cond = self.expr(node.test, scope)
        if not isinstance(cond, Value):
            if not cond:
                self.error(f"assertion failed at compile time: {msg}", node)
            return
        _ops.LOWERINGS[_ops.assert_](self, {"condition": cond, "message": str(msg) or ast.unparse(node.test)})

    def assign(self, target, value, scope):
        if isinstance(target, ast.Name):
            scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            star = [i for i, t in enumerate(elts) if isinstance(t, ast.Starred)]
            if not isinstance(value, (tuple, list)) or (
                len(value) != len(elts) if not star else len(value) < len(elts) - 1
            ):
                self.error(f"cannot unpack {self._describe(value)} into {len(elts)} names", target)
            if star:
                i = star[0]
                after = len(elts) - i - 1
                value = (*value[:i], tuple(value[i : len(value) - after]), *value[len(value) - after :])
                elts = [*elts[:i], elts[i].value, *elts[i + 1 :]]
            for t, v in zip(elts, value, strict=True):
                self.assign(t, v, scope)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self.error(
                "assigning to an element or attribute is not supported; write arrays with ct.store / ct.scatter", target
            )
        else:
            self.error(f"cannot assign to {type(target).__name__}", target)

    def expr(self, node, scope):
        handler = getattr(self, "expr_" + type(node).__name__, None)
        if handler is None:
            self.error(f"`{type(node).__name__}` expressions are not supported; {SUPPORTED}", node)
        if isinstance(node, (ast.Call, ast.BinOp, ast.Compare, ast.Subscript)):
            f = self.src.where(node)
            self.b.set_location(f[0], f[1], f[2])
        try:
            return handler(node, scope)
        except (CompileError, _Return):
            raise
        except _USER_ERRORS as err:
            raise self._error_at(node, str(err)) from err

    def expr_Constant(self, node, scope):
        return node.value

    def expr_Name(self, node, scope):
        return self.load_name(node.id, node, scope)

    def load_name(self, name, node, scope):
        if name in scope:
            return scope[name]
        closure = self.src.closure
        if name in closure:
            return closure[name]
        if name in self.src.globals:
            return self.src.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        self.error(
            f"name '{name}' is not defined (a name first assigned inside a loop or a run-time branch is not "
            "visible after it)",
            node,
        )

    def expr_Tuple(self, node, scope):
        out = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                out.extend(self.expr(e.value, scope))
            else:
                out.append(self.expr(e, scope))
        return tuple(out)

    expr_List = expr_Tuple

    def expr_Slice(self, node, scope):
        parts = [
            None if p is None else self.const(self.expr(p, scope), "slice bound")
            for p in (node.lower, node.upper, node.step)
        ]
        return slice(*parts)

    def expr_JoinedStr(self, node, scope):
        out = ""
        for v in node.values:
            x = self.expr(v.value if isinstance(v, ast.FormattedValue) else v, scope)
            if isinstance(x, Value):
                self.error("f-strings can only format compile-time values (print run-time values with ct.print)", v)
            out += (
                format(x, self.expr(v.format_spec, scope) if getattr(v, "format_spec", None) else "")
                if isinstance(v, ast.FormattedValue)
                else x
            )
        return out

    def binop(self, op, a, b, node):
        if op is ast.MatMult:
            if isinstance(a, Value) or isinstance(b, Value):
                return self.wrap(self.b.matmul(self.val(a), self.val(b), False))
        if not isinstance(a, Value) and not isinstance(b, Value):
            return _PYOPS[op](a, b)
        if isinstance(a, Value) and a.is_array or isinstance(b, Value) and b.is_array:
            self.error("arithmetic on arrays is not supported inside a kernel; load tiles with ct.load first", node)
        return self.ufunc(_BINOPS[op], [a, b])

    def expr_BinOp(self, node, scope):
        return self.binop(type(node.op), self.expr(node.left, scope), self.expr(node.right, scope), node)

    def expr_UnaryOp(self, node, scope):
        x = self.expr(node.operand, scope)
        if not isinstance(x, Value):
            return _PY_UNOPS[type(node.op)](x)
        return self.ufunc(_UNOPS[type(node.op)], [x])

    def expr_Compare(self, node, scope):
        left = self.expr(node.left, scope)
        result = None
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.expr(right_node, scope)
            if isinstance(left, Value) or isinstance(right, Value):
                if type(op) not in _CMPOPS:
                    self.error(f"`{type(op).__name__}` cannot compare run-time values", node)
                r = self.ufunc(_CMPOPS[type(op)], [left, right])
            else:
                r = _PYCMP[type(op)](left, right)
            result = r if result is None else self._and(result, r)
            left = right
        return result

    def _and(self, a, b):
        if isinstance(a, Value) or isinstance(b, Value):
            return self.ufunc("logical_and", [a, b])
        return a and b

    def expr_BoolOp(self, node, scope):
        is_and = isinstance(node.op, ast.And)
        acc = self.expr(node.values[0], scope)
        for v in node.values[1:]:
            if not isinstance(acc, Value):
                if (not acc) if is_and else acc:
                    return acc  # short-circuit at compile time
                acc = self.expr(v, scope)
                continue
            acc = self.ufunc("logical_and" if is_and else "logical_or", [acc, self.expr(v, scope)])
        return acc

    def expr_IfExp(self, node, scope):
        cond = self.expr(node.test, scope)
        if not isinstance(cond, Value):
            return self.expr(node.body if cond else node.orelse, scope)
        return self.wrap(
            self.b.where(cond.id, self.val(self.expr(node.body, scope)), self.val(self.expr(node.orelse, scope)))
        )

    def expr_Attribute(self, node, scope):
        base = self.expr(node.value, scope)
        attr = node.attr
        if isinstance(base, Value):
            return self.value_attribute(base, attr, node)
        return getattr(base, attr)

    def value_attribute(self, v, attr, node):
        if attr == "dtype":
            return v.dtype
        if attr == "ndim":
            return v.ndim if v.is_array else len(v.shape)
        if v.is_array:
            if attr == "shape":
                return tuple(self.wrap(self.b.array_dim(v.id, d)) for d in range(v.ndim))
            if attr == "strides":
                return tuple(self.wrap(self.b.array_stride(v.id, d)) for d in range(v.ndim))
            self.error(f"arrays in kernels have .shape, .strides, .dtype and .ndim; not .{attr}", node)
        if attr == "shape":
            return tuple(v.shape)
        if attr == "size":
            return int(np.prod(v.shape)) if v.shape else 1
        if attr == "T":
            return self.wrap(self.b.permute(v.id, list(range(len(v.shape)))[::-1]))
        if attr in _TILE_METHODS:
            return Method(v, attr)
        self.error(
            f"tiles have no attribute '{attr}' (they have shape, dtype, ndim, size, T and the methods "
            f"{', '.join(sorted(_TILE_METHODS))})",
            node,
        )

    def expr_Subscript(self, node, scope):
        base = self.expr(node.value, scope)
        index = self.expr(node.slice, scope)
        if not isinstance(base, Value):
            if isinstance(index, Value):
                self.error("cannot index a compile-time value with a run-time value", node)
            return base[index]
        if base.is_array:
            self.error("arrays cannot be indexed inside a kernel; use ct.load / ct.gather", node)
        items = index if isinstance(index, tuple) else (index,)
        shape, dim = [], 0
        for it in items:
            if it is None:
                shape.append(1)
            elif isinstance(it, slice) and it == slice(None):
                if dim >= len(base.shape):
                    self.error("too many indices for the tile", node)
                shape.append(base.shape[dim])
                dim += 1
            else:
                self.error(
                    "tiles can only be indexed with `:` and `None` (to add axes); use ct.gather, "
                    "ct.reshape or a reduction to take parts of a tile",
                    node,
                )
        shape.extend(base.shape[dim:])
        return self.wrap(self.b.reshape(base.id, shape))

    def expr_Starred(self, node, scope):
        self.error("`*` unpacking is only supported in calls and tuples", node)

    def expr_Call(self, node, scope):
        fn = self.expr(node.func, scope)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.expr(a.value, scope))
            else:
                args.append(self.expr(a, scope))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                kwargs.update(self.expr(k.value, scope))
            else:
                kwargs[k.arg] = self.expr(k.value, scope)
        return self.call(fn, args, kwargs, node)

    def call(self, fn, args, kwargs, node):
        lower = _ops.LOWERINGS.get(fn) if callable(fn) else None
        if lower is not None:
            sig = fn.__signature_cache__
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as err:
                self.error(f"{fn.__name__}(): {err}", node)
            bound.apply_defaults()
            return lower(self, bound.arguments)
        if isinstance(fn, TileFunction):
            return self.inline(fn, args, kwargs, node)
        if isinstance(fn, Method):
            return self.call(_TILE_METHODS[fn.name], [fn.value, *args], kwargs, node)
        if isinstance(fn, Launchable):  # a @ct.kernel or @ct.autotune kernel
            self.error("a kernel cannot be called from a kernel; make the helper a @ct.function", node)
        if _dt.is_dtype_like(fn):
            (x,) = args
            if isinstance(x, Value):
                return self.wrap(self.b.cast(x.id, fn))
            return self.wrap(self.b.constant(x, fn))
        builtin = self.builtin_call(fn, args, kwargs, node)
        if builtin is not NotImplemented:
            return builtin
        if any(isinstance(a, Value) for a in (*args, *kwargs.values())):
            name = getattr(fn, "__qualname__", repr(fn))
            self.error(
                f"cannot call {name} on run-time values in a kernel; call ct.* functions or mark the helper "
                "with @ct.function",
                node,
            )
        if fn in _COMPILE_TIME_CALLS or getattr(fn, "__module__", None) == "math" or isinstance(fn, type):
            return fn(*args, **kwargs)
        name = getattr(fn, "__qualname__", repr(fn))
        self.error(f"cannot call {name} in a kernel; {SUPPORTED}", node)

    def builtin_call(self, fn, args, kwargs, node):
        has_value = any(isinstance(a, Value) for a in args)
        if fn is len:
            (x,) = args
            if isinstance(x, Value):
                if x.is_array:
                    return self.wrap(self.b.array_dim(x.id, 0))
                return x.shape[0]
            return len(x)
        if fn in (min, max) and has_value:
            items = args[0] if len(args) == 1 else args
            acc = items[0]
            for x in items[1:]:
                acc = self.ufunc("minimum" if fn is min else "maximum", [acc, x])
            return acc
        if fn is abs and has_value:
            return self.ufunc("absolute", args)
        if fn in (int, float, bool) and has_value:
            (x,) = args
            target = {int: _dt.names.int64, float: _dt.names.float64, bool: _dt.names.bool_}[fn]
            return self.wrap(self.b.cast(x.id, target))
        if fn is print:
            return _ops.LOWERINGS[_ops.print](self, {"args": tuple(args)})
        if fn in (min, max, abs, int, float, bool, isinstance, math.ceil, math.floor) and not has_value:
            return fn(*args, **kwargs)
        return NotImplemented

    def inline(self, tf, args, kwargs, node):
        if len(self.calls) > 32:
            self.error("@ct.function calls nest too deeply (recursion is not supported)", node)
        src = tf.source()
        try:
            bound = inspect.signature(tf.fn).bind(*args, **kwargs)
        except TypeError as err:
            self.error(f"{tf.fn.__name__}(): {err}", node)
        bound.apply_defaults()
        scope = dict(bound.arguments)
        self.calls.append((self.src, node))
        saved_src, saved_node = self.src, self.node
        self.src = src
        try:
            self.block(src.fdef.body, scope, top=True)
            return None
        except _Return as r:
            return r.value
        finally:
            self.src, self.node = saved_src, saved_node
            self.calls.pop()
