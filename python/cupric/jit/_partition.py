"""Cutting a traced graph into steps: kernels (`map`: elementwise outputs of one shape; `rows`:
reductions over the same axes, with the elementwise outputs that use them) and eager ops. One pass
in trace order; elementwise nodes are recomputed inside every kernel that needs them."""

from ._graph import ELEMENTWISE_KINDS

LEAF_KINDS = ("input", "scalar", "const", "captured", "pyop")


class Step:
    """kind 'eager' (node: the op), 'map' (outputs of one full shape) or 'rows' (reductions over
    `axes` of a full shape, then `tails` of the full shape and `kept` outputs over the kept dims)."""

    def __init__(self, kind, ndim=0, ones=(), axes=()):
        self.kind, self.ndim, self.ones, self.axes = kind, ndim, ones, axes
        self.node = None
        self.outputs = []  # map: elementwise outputs
        self.reductions, self.tails, self.kept = [], [], []
        self.fused = []  # every node this kernel computes, for explain()

    @property
    def members(self):
        return self.outputs + self.reductions + self.tails + self.kept


def is_leaf(node):
    return node.kind in LEAF_KINDS or node.kind in ("eager", "reduce") or node.why is not None


def expression(nodes, root, group=(), rank=None):
    """(nodes computed inline, leaves, ok) of the elementwise expression at `root`. Reductions of
    `group` are read inline only when their rank is `rank` (a kept reduction broadcast back over a
    full shape, or a reduced one inside an output of the reduced shape); ok is False otherwise."""
    inline, leaves, ok, stack, seen = [], [], True, [root], set()
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        n = nodes[i]
        if n.kind == "reduce" and i in group:
            ok = ok and n.ndim == rank
            leaves.append(i)
        elif is_leaf(n):
            leaves.append(i)
        else:
            inline.append(i)
            stack.extend(n.args)
    return sorted(inline), sorted(leaves), ok


def _uses_group(nodes, leaves, group):
    return any(i in group for i in leaves)


def _join_rows(step, n, nodes):
    """Whether elementwise output n can be computed by the open rows step (it reads its reductions)."""
    group = set(step.reductions)
    d = step.ndim
    if n.ndim == d:
        _, leaves, ok = expression(nodes, n.id, group, d)
        if not ok or not _uses_group(nodes, leaves, group):
            return None
        if n.ones == step.ones:
            return "tail"
        kept_shape = all(n.ones[a] for a in step.axes) and all(
            n.ones[k] == step.ones[k] for k in range(d) if k not in step.axes)
        arrays_kept = all(nodes[i].kind in ("scalar", "const", "pyop") or i in group or
                          all(nodes[i].ones[a - (d - nodes[i].ndim)] for a in step.axes if a >= d - nodes[i].ndim)
                          for i in leaves)
        return "kept" if kept_shape and arrays_kept else None
    if n.ndim == d - len(step.axes):
        _, leaves, ok = expression(nodes, n.id, group, n.ndim)
        if ok and _uses_group(nodes, leaves, group) and all(
                i in group or nodes[i].kind in ("scalar", "const", "pyop") for i in leaves):
            return "kept"
    return None


def partition(graph, output_ids):
    """The steps of the graph, in an order that computes every value before its use."""
    nodes = graph.nodes
    needed = set(output_ids)
    for n in nodes:
        if n.kind == "eager" or n.why is not None:
            needed.update(n.args)
    steps, open_step = [], None
    for n in nodes:
        if n.kind in LEAF_KINDS:
            continue
        if n.kind == "eager" or n.why is not None:
            step = Step("eager")
            step.node = n.id
            steps.append(step)
            open_step = None
        elif n.kind in ELEMENTWISE_KINDS:
            if n.id not in needed:
                continue
            role = _join_rows(open_step, n, nodes) if open_step is not None and open_step.kind == "rows" else None
            if role is not None:
                (open_step.tails if role == "tail" else open_step.kept).append(n.id)
            elif open_step is not None and open_step.kind == "map" and (open_step.ndim, open_step.ones) == (
                    n.ndim, n.ones):
                open_step.outputs.append(n.id)
            else:
                open_step = Step("map", n.ndim, n.ones)
                open_step.outputs.append(n.id)
                steps.append(open_step)
        else:  # a reduction
            x = nodes[n.args[0]]
            axes = n.params["axes"]
            joins = open_step is not None and open_step.kind == "rows" and open_step.axes == axes and (
                open_step.ndim, open_step.ones) == (x.ndim, x.ones)
            if joins:
                _, _, ok = expression(nodes, n.args[0], set(open_step.reductions), x.ndim)
                joins = ok
            if not joins:
                open_step = Step("rows", x.ndim, x.ones, axes)
                steps.append(open_step)
            open_step.reductions.append(n.id)
    for step in steps:
        if step.kind != "eager":
            fused = set()
            for m in step.members:
                roots = nodes[m].args if nodes[m].kind == "reduce" else (m,)
                for r in roots:
                    fused.update(expression(nodes, r, set(step.reductions), None)[0])
                fused.add(m)
            step.fused = sorted(fused)
    return steps
