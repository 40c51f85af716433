"""The traced graph of a @cu.jit function: nodes in the order they were recorded (a topological
order), what each computes eagerly, and its shape at run time (which names the user's line)."""

import math

from .. import _cupric as _c

# node kinds
LEAF_KINDS = ("input", "scalar", "const", "captured")
ELEMENTWISE_KINDS = ("ufunc", "where", "astype")

REDUCTIONS = ("sum", "prod", "max", "min", "any", "all", "mean")


class Node:
    """One recorded value. `args` are node ids; `params` what the kind needs (ufunc name, axes,
    ...); `dtype`, `ndim` and `ones` (which dimensions had extent 1 when traced) are static;
    `where` is the user's (file, line, text) that made it; `why` says why it runs eagerly."""

    __slots__ = ("id", "kind", "args", "params", "dtype", "ndim", "ones", "where", "why")

    def __init__(self, id, kind, args, params, dtype, ndim, ones, where, why=None):
        self.id, self.kind, self.args, self.params = id, kind, tuple(args), params
        self.dtype, self.ndim, self.ones, self.where, self.why = dtype, ndim, ones, where, why

    @property
    def fusable(self):
        return self.kind in ELEMENTWISE_KINDS or self.kind == "reduce"

    def label(self):
        """How explain() names the op: `multiply`, `sum(axis=(1,), keepdims=True)`, `cu.sort`."""
        p = self.params
        if self.kind == "ufunc":
            return p["name"]
        if self.kind == "astype":
            return f"astype({p['dtype']})"
        if self.kind == "reduce":
            extra = f", ddof={p['ddof']}" if p.get("ddof") else ""
            return f"{p['op']}(axis={p['axes']}, keepdims={p['keepdims']}{extra})"
        if self.kind == "eager":
            return p["name"]
        return self.kind

    def at(self):
        return f"{self.where[0]}:{self.where[1]}" if self.where else "?"


class Graph:
    """Nodes, the argument leaves, and the output structure (nested tuples/lists/dicts whose
    array leaves are ("node", id) markers)."""

    def __init__(self):
        self.nodes = []
        self.output = None
        self.shape_specialised = False  # the function read a shape: the key holds shapes too

    def add(self, kind, args, params, dtype, ndim, ones, where, why=None):
        n = Node(len(self.nodes), kind, args, params, dtype, ndim, ones, where, why)
        self.nodes.append(n)
        return n

    def output_ids(self):
        ids = []
        _walk_output(self.output, ids.append)
        return ids


def _walk_output(obj, visit):
    """Output structures are ("node", id), ("literal", value), ("tuple" | "list", [items]) and
    ("dict", {key: item})."""
    tag, body = obj
    if tag == "node":
        visit(body)
    elif tag in ("tuple", "list"):
        for o in body:
            _walk_output(o, visit)
    elif tag == "dict":
        for o in body.values():
            _walk_output(o, visit)


def build_output(obj, env):
    """The function's return value from the output structure and the computed values."""
    tag, body = obj
    if tag == "node":
        return env[body]
    if tag == "literal":
        return body
    if tag == "tuple":
        return tuple(build_output(o, env) for o in body)
    if tag == "list":
        return [build_output(o, env) for o in body]
    return {k: build_output(v, env) for k, v in body.items()}


# ---- eager evaluation: what every node computes, in cupric's own ops ---------------------------


def reduce_eager(x, p):
    """A reduce node's value through cupric's reductions (also the trace's value: the compiled
    kernels match this, up to the order of summation)."""
    op, axes, keepdims = p["op"], p["axes"], p["keepdims"]
    if op in ("argmax", "argmin"):
        return getattr(_c, op)(x, axis=p["axis_arg"], keepdims=keepdims)
    if op == "mean":
        count = math.prod(x.shape[a] for a in axes) if x.ndim else 1
        total = _c.sum(x, axis=axes, keepdims=keepdims, dtype=p["acc"])
        return _c.true_divide(total, float(count - p["ddof"])).astype(p["dtype"], copy=False)
    fn = getattr(_c, op)
    if op in ("sum", "prod") and p.get("sum_dtype") is not None:
        return fn(x, axis=axes, keepdims=keepdims, dtype=p["sum_dtype"])
    return fn(x, axis=axes, keepdims=keepdims)


def eval_node(node, env):
    """The node's value from its arguments' values in env (node id -> array or scalar)."""
    args = [env[a] for a in node.args]
    kind, p = node.kind, node.params
    if kind == "ufunc":
        return _c._ufunc_table[p["name"]](*args)
    if kind == "where":
        return _c.where(*args)
    if kind == "astype":
        return _c.asarray(args[0]).astype(p["dtype"])
    if kind == "reduce":
        return reduce_eager(args[0], p)
    if kind == "eager":
        return p["call"](env)
    raise AssertionError(f"eval_node: leaf kind {kind}")


# ---- shapes at run time ------------------------------------------------------------------------


def broadcast_at(node, shapes):
    """NumPy's broadcast of `shapes`, with the user's line in the error."""
    try:
        return tuple(_c.broadcast_shapes(*shapes))
    except ValueError as e:
        file, line, text = node.where or ("?", 0, "")
        raise ValueError(f"{e} (in {node.label()} at {file}:{line}: {text.strip()})") from None


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def node_shape(node, shape_of):
    """The node's shape from its arguments' shapes (shape_of: node id -> shape)."""
    if node.kind in ELEMENTWISE_KINDS:
        return broadcast_at(node, [shape_of(a) for a in node.args])
    if node.kind == "reduce":
        return reduced_shape(shape_of(node.args[0]), node.params["axes"], node.params["keepdims"])
    raise AssertionError(node.kind)
