"""Running a traced graph: leaves from the arguments, then each step in order (a compiled tile
kernel for `map` and `rows` steps, cupric's eager ops otherwise). Kernels are rendered per
variant (flat or n-d, which leaves broadcast where; rows: chunked, split or whole-row) and compiled
once; shapes are run-time values, but for a whole-row kernel's power-of-two tile extents."""

import math

from .. import _cupric as _c
from ._graph import build_output, eval_node, node_shape, reduced_shape
from ._partition import expression
from ._render import accumulator, render_map, render_rows, split_count, whole_row_blocks, whole_row_threads

_KERNELS = {}  # (tile source, num_threads) -> ct.Kernel, shared by every jit function
# GPU: 8 elements a thread (4096 compiles 4x longer); CPU: the kernel's intermediate tiles stay in L1
# (4096 ran 2x slower: docs/jit.md)
MAP_BLOCK = {"cpu": 1024, "cuda": 1024}
ROWS_BLOCK = {"cpu": 1024, "cuda": 1024}
_SCALAR_KINDS = ("scalar", "const", "pyop")


def compile_kernel(source, dtypes, num_threads=0):
    """The ct.Kernel of a generated source and CUDA block size (0: the tile compiler's choice), one
    per distinct pair in the process."""
    kernel = _KERNELS.get((source, num_threads))
    if kernel is None:
        import hashlib
        import linecache

        from .. import tile as ct

        digest = hashlib.sha1(source.encode()).hexdigest()[:12]
        filename = f"<cupric.jit {digest}>"
        # the tile frontend reads a kernel's source through linecache, as it reads files
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {"ct": ct, **{f"D_{dt.name}": dt for dt in dtypes}}
        exec(compile(source, filename, "exec"), namespace)
        name = source.split("(", 1)[0].removeprefix("def ")
        kernel = _KERNELS[source, num_threads] = ct.kernel(namespace[name], num_threads=num_threads)
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
        self.plans = {}  # (leaf shapes, contiguity) -> Launch, or _EAGER
        self._last = None  # the latest launch's plan and leaves (last_launch)
        self.used = None  # the latest run's plan (or _EAGER) and device
        # the widest value a whole-row kernel holds a tile of
        self.itemsize = max(nodes[i].dtype.itemsize for i in [*step.fused, *self.arrays])
        self.splittable = (step.kind == "rows" and len(step.reductions) == 1 and not step.tails and not step.kept
                           and nodes[step.reductions[0]].params["op"] not in ("argmax", "argmin"))

    def kernel(self, key, render, num_threads=0):
        """The variant `key`'s kernel (a key names its num_threads where they are not 0)."""
        k = self.variants.get(key)
        if k is None:
            k = self.variants[key] = compile_kernel(*render(), num_threads)
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
        # a launch depends on the leaves' shapes and on whether they are C-contiguous (flat kernels)
        key = tuple([(a.shape, a.strides) for a in arrays])
        plan = self.plans.get(key)
        if plan is None:
            plan = self.plans[key] = self._plan(arrays)
            if len(self.plans) > 64:  # many shapes: keep the latest
                self.plans.pop(next(iter(self.plans)))
        self.used = (plan, arrays[0].device if arrays else None)  # what a prepared call repeats
        if plan is _EAGER:
            return self.eager(env)
        plan.run(env, arrays, self.scalars)
        self._last = (plan, arrays, env)

    @property
    def last_launch(self):
        """(kernel, arguments) like the latest launch's (new outputs), for inspection and tests; or None."""
        if self._last is None:
            return None
        plan, arrays, env = self._last
        views, outs, scalars = plan.arguments(env, arrays, self.scalars, arrays[0].device)
        return plan.kernel, (*views, *outs, *scalars, *plan.tail)

    def _plan(self, arrays):
        if not arrays:
            return _EAGER
        try:
            full = tuple(_c.broadcast_shapes(*(a.shape for a in arrays)))
        except ValueError:
            return _EAGER  # the eager ops raise the error with the user's line
        if math.prod(full) == 0:
            return _EAGER
        dev_type = _device_type(arrays[0].device)
        if self.step.kind == "map":
            if any(node_shape_of(self.nodes, o, arrays, self.arrays) != full for o in self.step.outputs[1:]):
                return _EAGER  # outputs of one pattern but other shapes: rare, eager
            return self._map_plan(arrays, full, dev_type)
        if len(full) != self.step.ndim:
            return _EAGER
        return self._rows_plan(arrays, full, dev_type)

    def _map_plan(self, arrays, full, dev_type):
        nodes, outs = self.nodes, self.step.outputs
        if all(a.shape == full and a.flags["C_CONTIGUOUS"] for a in arrays):
            shape = (math.prod(full),)
            views = [shape] * len(arrays)
            flags = tuple((False,) for _ in arrays)
        else:
            rank = max(len(full), 1)
            shape = (1,) * (rank - len(full)) + full
            views = [(1,) * (rank - a.ndim) + a.shape if a.ndim != rank else None for a in arrays]
            flags = tuple(tuple((v or a.shape)[j] == 1 and shape[j] != 1 for j in range(rank))
                          for a, v in zip(arrays, views, strict=True))
        kernel = self.kernel(("map", flags), lambda: render_map(
            nodes, outs, list(zip(self.arrays, flags, strict=True)), self.scalars, len(shape)))
        block = MAP_BLOCK[dev_type]
        grid = (math.prod(shape[:-1]) * -(-shape[-1] // block),)
        results = [(o, full if shape != full else None, None) for o in outs]
        return Launch(kernel, grid, views, [(shape, nodes[o].dtype) for o in outs], (*shape, block), results)

    def _rows_plan(self, arrays, full, dev_type):
        nodes, step = self.nodes, self.step
        d, axes = step.ndim, step.axes
        views = [(1,) * (d - a.ndim) + a.shape if a.ndim != d else None for a in arrays]
        flags = tuple(tuple((v or a.shape)[j] == 1 and full[j] != 1 for j in range(d))
                      for a, v in zip(arrays, views, strict=True))
        kept = math.prod(full[j] for j in range(d) if j not in axes)
        reduced = math.prod(full[a] for a in axes)
        blocks, nsplit, kernel = self._rows_kernel(flags, kept, [full[a] for a in axes], dev_type)
        split = nsplit > 1
        outs, results = [], []
        for r in step.reductions:
            p = nodes[r].params
            outs.append(((kept, nsplit), accumulator(nodes[r]) if split else nodes[r].dtype))
            finish = (lambda q, n=nodes[r], c=float(reduced - p["ddof"]): _finish_split(n, q, c)) if split else None
            results.append((r, reduced_shape(full, axes, p["keepdims"]), finish))
        for t in step.tails:
            outs.append((full, nodes[t].dtype))
            results.append((t, None, None))
        for k in step.kept:
            outs.append(((kept, 1), nodes[k].dtype))
            results.append((k, reduced_shape(full, axes, nodes[k].ndim == d), None))
        means = tuple(float(reduced - nodes[r].params["ddof"]) for r in step.reductions
                      if nodes[r].params["op"] == "mean")
        return Launch(kernel, (kept, nsplit), views, outs, (*means, *full, nsplit, *blocks), results, means)

    def _rows_kernel(self, flags, kept, extents, dev_type):
        """(tile extents, blocks per kept position, kernel) of a rows launch (`rows_variant`)."""
        nodes, step = self.nodes, self.step
        arrays = list(zip(self.arrays, flags, strict=True))
        kind, value = rows_variant(kept, extents, self.itemsize, dev_type, self.splittable)
        if kind == "whole":
            threads = whole_row_threads(math.prod(value), self.itemsize)
            kernel = self.kernel(("rows", flags, "whole", threads), lambda: render_rows(
                nodes, step, arrays, self.scalars, False, whole=True), threads)
            return value, 1, kernel
        split = kind == "split-reduction"
        kernel = self.kernel(("rows", flags, split), lambda: render_rows(nodes, step, arrays, self.scalars, split))
        return (ROWS_BLOCK[dev_type],), value if split else 1, kernel


def rows_variant(kept, extents, itemsize, dev_type, splittable=True):
    """How a rows kernel covers `kept` positions reducing `extents`: ("split-reduction", blocks per
    position) for few positions of a long reduction; else ("whole", tile extents) when the row
    padded to powers of two fits on chip (a kernel per bucket); else ("chunked", None), any length."""
    threads = _c.get_num_threads() if dev_type == "cpu" else 1
    nsplit = split_count(kept, math.prod(extents), ROWS_BLOCK[dev_type], dev_type, threads) if splittable else 1
    if nsplit > 1:
        return "split-reduction", nsplit
    blocks = whole_row_blocks(extents, itemsize, dev_type)
    return ("whole", blocks) if blocks is not None else ("chunked", None)


def node_shape_of(nodes, o, arrays, leaf_ids):
    """The run-time shape of elementwise node o from its leaves' shapes."""
    shapes = dict(zip(leaf_ids, (a.shape for a in arrays), strict=True))
    inline, leaves, _ = expression(nodes, o)
    for i in inline:
        n = nodes[i]
        shapes[i] = node_shape(n, lambda a: shapes.get(a, ()))
    return shapes[o]


_EAGER = "eager"


class Launch:
    """One step's launch for given leaf shapes: the kernel, its grid, how each leaf is viewed,
    the outputs to allocate, the trailing scalars (extents, ...) and how results are read back."""

    __slots__ = ("kernel", "grid", "views", "outs", "tail", "results", "means")

    def __init__(self, kernel, grid, views, outs, tail, results, means=()):
        self.kernel, self.grid, self.views, self.outs = kernel, grid, views, outs
        self.tail, self.results, self.means = tail, results, means

    def arguments(self, env, arrays, scalars, device):
        views = arrays if not any(self.views) else [a if v is None else a.reshape(v)
                                                    for a, v in zip(arrays, self.views, strict=True)]
        empty = _c.empty
        return views, [empty(s, dtype=dt, device=device) for s, dt in self.outs], [env[s] for s in scalars]

    def run(self, env, arrays, scalars):
        views, outs, svals = self.arguments(env, arrays, scalars, arrays[0].device)
        self.kernel[self.grid](*views, *outs, *svals, *self.tail)
        for (node, shape, finish), out in zip(self.results, outs, strict=True):
            if finish is not None:
                out = finish(out)
            env[node] = out if shape is None else out.reshape(shape)


def _device_type(device):
    return "cpu" if str(device) == "cpu" else "cuda"


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
        nodes = graph.nodes
        self.arguments = [(n.id, n.params["index"]) for n in nodes if n.kind in ("input", "scalar")]
        self.constants = {n.id: n.params["value"] for n in nodes if n.kind in ("const", "captured")}
        self.python_ops = [n for n in nodes if n.kind == "pyop"]
        self.work = [(StepRunner(s, nodes), None) if s.kind != "eager" else (None, nodes[s.node]) for s in steps]
        out = graph.output
        self.single_output = out[1] if out[0] == "node" else None

    @property
    def runners(self):
        return [r for r, _ in self.work]

    def run(self, leaves):
        env = dict(self.constants)
        for i, k in self.arguments:
            env[i] = leaves[k]
        for n in self.python_ops:
            env[n.id] = _python_op(n.params["name"], [env[a] for a in n.args])
        for runner, node in self.work:
            if runner is not None:
                runner.run(env)
                continue
            try:
                env[node.id] = eval_node(node, env)
            except Exception as e:
                e.add_note(f"(in {node.label()}, run eagerly by cu.jit, at {node.at()})")
                raise
        if self.single_output is not None:
            return env[self.single_output]
        return build_output(self.graph.output, env)


def _python_op(name, args):
    from ._trace import _PY_OPERATORS

    return _PY_OPERATORS[name](*args)
