"""Running a traced graph: leaves from the arguments, then each step in order (a compiled tile
kernel for `map` and `rows` steps, cupric's eager ops otherwise). Kernels are rendered per
variant (flat or n-d, which leaves broadcast where) and compiled once; shapes are run-time values."""

import hashlib
import linecache
import math

from .. import _cupric as _c
from ._graph import build_output, eval_node, node_shape, reduced_shape
from ._partition import expression
from ._render import accumulator, render_map, render_rows, split_count

_KERNELS = {}  # tile source -> ct.Kernel, shared by every jit function
MAP_BLOCK = {"cpu": 4096, "cuda": 4096}
ROWS_BLOCK = {"cpu": 1024, "cuda": 1024}
_SCALAR_KINDS = ("scalar", "const", "pyop")


def compile_kernel(source, dtypes):
    """The ct.Kernel of a generated source (one per distinct source in the process)."""
    kernel = _KERNELS.get(source)
    if kernel is None:
        from .. import tile as ct

        digest = hashlib.sha1(source.encode()).hexdigest()[:12]
        filename = f"<cupric.jit {digest}>"
        # the tile frontend reads a kernel's source through linecache, as it reads files
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {"ct": ct, **{f"D_{dt.name}": dt for dt in dtypes}}
        exec(compile(source, filename, "exec"), namespace)
        name = source.split("(", 1)[0].removeprefix("def ")
        kernel = _KERNELS[source] = ct.kernel(namespace[name])
    return kernel


def compiled_count():
    """How many kernel specialisations this process has made (each one a compile or a cache load)."""
    return sum(len(k.cache) for k in _KERNELS.values())


class StepRunner:
    """A kernel step's static facts (its leaves) and its rendered variants."""

    def __init__(self, step, nodes):
        self.step, self.nodes = step, nodes
        roots = []
        for m in step.members:
            roots.extend(nodes[m].args if nodes[m].kind == "reduce" else (m,))
        leaves = set()
        for r in roots:
            leaves.update(expression(nodes, r, set(step.reductions), None)[1])
        leaves -= set(step.reductions)
        self.scalars = sorted(i for i in leaves if nodes[i].kind in _SCALAR_KINDS)
        self.arrays = sorted(i for i in leaves if nodes[i].kind not in _SCALAR_KINDS)
        self.variants = {}
        self.splittable = step.kind == "rows" and len(step.reductions) == 1 and not step.tails and not step.kept

    def kernel(self, key, render):
        k = self.variants.get(key)
        if k is None:
            k = self.variants[key] = compile_kernel(*render())
        return k

    def eager(self, env):
        """The step through cupric's eager ops: shape errors name the user's line."""
        for i in self.step.fused:
            n = self.nodes[i]
            if n.kind in ("ufunc", "where", "astype"):
                node_shape(n, lambda a: _c.asarray(env[a]).shape)
            env[i] = eval_node(n, env)

    def run(self, env):
        arrays = [env[i] for i in self.arrays]
        if not arrays:
            return self.eager(env)
        try:
            full = tuple(_c.broadcast_shapes(*(a.shape for a in arrays)))
        except ValueError:
            return self.eager(env)  # raises the error with the user's line
        if math.prod(full) == 0:
            return self.eager(env)
        device = arrays[0].device
        if self.step.kind == "map":
            return self._map(env, arrays, full, device)
        if len(full) != self.step.ndim:
            return self.eager(env)
        return self._rows(env, arrays, full, device)

    def _map(self, env, arrays, full, device):
        nodes, outs = self.nodes, self.step.outputs
        flat = all(a.shape == full and a.flags["C_CONTIGUOUS"] for a in arrays)
        if flat:
            shape = (math.prod(full),)
            views = [a.reshape(shape) for a in arrays]
            flags = tuple((False,) for _ in arrays)
        else:
            rank = max(len(full), 1)
            shape = (1,) * (rank - len(full)) + full
            views = [a.reshape((1,) * (rank - a.ndim) + a.shape) if a.ndim != rank else a for a in arrays]
            flags = tuple(tuple(v.shape[j] == 1 and shape[j] != 1 for j in range(rank)) for v in views)
        kernel = self.kernel(("map", flags), lambda: render_map(
            nodes, outs, list(zip(self.arrays, flags, strict=True)), self.scalars, len(shape)))
        results = [_c.empty(shape, dtype=nodes[o].dtype, device=device) for o in outs]
        block = MAP_BLOCK[device.type if hasattr(device, "type") else str(device).split(":")[0]]
        grid = math.prod(shape[:-1]) * -(-shape[-1] // block)
        kernel[(grid,)](*views, *results, *(env[s] for s in self.scalars), *shape, block)
        for o, r in zip(outs, results, strict=True):
            env[o] = r.reshape(full) if r.shape != full else r

    def _rows(self, env, arrays, full, device):
        nodes, step = self.nodes, self.step
        d, axes = step.ndim, step.axes
        views = [a.reshape((1,) * (d - a.ndim) + a.shape) if a.ndim != d else a for a in arrays]
        flags = tuple(tuple(v.shape[j] == 1 and full[j] != 1 for j in range(d)) for v in views)
        kept = math.prod(full[j] for j in range(d) if j not in axes)
        reduced = math.prod(full[a] for a in axes)
        dev_type = str(device).split(":")[0]
        block = ROWS_BLOCK[dev_type]
        nsplit = split_count(kept, reduced, block, dev_type) if self.splittable else 1
        split = nsplit > 1
        kernel = self.kernel(("rows", flags, split), lambda: render_rows(
            nodes, step, list(zip(self.arrays, flags, strict=True)), self.scalars, split))
        red_out = []
        for r in step.reductions:
            dt = accumulator(nodes[r], None) if split else nodes[r].dtype
            red_out.append(_c.empty((kept, nsplit), dtype=dt, device=device))
        tails = [_c.empty(full, dtype=nodes[t].dtype, device=device) for t in step.tails]
        kept_out = [_c.empty((kept, 1), dtype=nodes[k].dtype, device=device) for k in step.kept]
        means = [float(reduced - nodes[r].params["ddof"]) for r in step.reductions if nodes[r].params["op"] == "mean"]
        kernel[(kept, nsplit)](*views, *red_out, *tails, *kept_out, *(env[s] for s in self.scalars), *means, *full,
                               nsplit, block)
        for r, q in zip(step.reductions, red_out, strict=True):
            p = nodes[r].params
            if split:
                q = _finish_split(nodes[r], q, float(reduced - p["ddof"]))
            env[r] = q.reshape(reduced_shape(full, axes, p["keepdims"]))
        for t, v in zip(step.tails, tails, strict=True):
            env[t] = v
        for k, v in zip(step.kept, kept_out, strict=True):
            env[k] = v.reshape(reduced_shape(full, axes, nodes[k].ndim == d))


def _finish_split(node, partial, count):
    """Combines the partial results of a split reduction (one per block) eagerly."""
    op = node.params["op"]
    if op == "mean":
        return _c.true_divide(_c.sum(partial, axis=1), count).astype(node.dtype, copy=False)
    return getattr(_c, op)(partial, axis=1).astype(node.dtype, copy=False)


class Program:
    """A traced graph cut into steps, ready to run on new arguments of the same signature."""

    def __init__(self, graph, steps):
        self.graph, self.steps = graph, steps
        self.leaf_nodes = [n for n in graph.nodes if n.kind in ("input", "scalar", "const", "captured", "pyop")]
        self.runners = [StepRunner(s, graph.nodes) if s.kind != "eager" else None for s in steps]

    def run(self, leaves):
        env = {}
        for n in self.leaf_nodes:
            k = n.kind
            if k in ("input", "scalar"):
                env[n.id] = leaves[n.params["index"]]
            elif k == "pyop":
                env[n.id] = _python_op(n.params["name"], [env[a] for a in n.args])
            else:
                env[n.id] = n.params["value"]
        nodes = self.graph.nodes
        for step, runner in zip(self.steps, self.runners, strict=True):
            if runner is not None:
                runner.run(env)
                continue
            n = nodes[step.node]
            try:
                env[n.id] = eval_node(n, env)
            except Exception as e:
                e.add_note(f"(in {n.label()}, run eagerly by cu.jit, at {n.at()})")
                raise
        return build_output(self.graph.output, env)


def _python_op(name, args):
    from ._trace import _PY_OPERATORS

    return _PY_OPERATORS[name](*args)
