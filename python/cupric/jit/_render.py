"""Tile-language source for a jit step (python/cupric/tile compiles it for the CPU or a GPU).
`map` kernels: one block per BLOCK elements of the last dimension; `rows` kernels: one block per
position of the kept dimensions, either holding the whole reduced extent as one tile (read once) or
looping over it in chunks (one loop per reduction, then the full-shaped outputs), optionally split
over a second grid dimension for long reductions."""

import math

# reduction -> (identity, combining ufunc)
_COMBINE = {"sum": "add", "mean": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
            "any": "logical_or", "all": "logical_and"}


def _identity(op, acc):
    if op in ("sum", "mean"):
        return "0"
    if op == "prod":
        return "1"
    if op in ("any", "all"):
        return "False" if op == "any" else "True"
    if acc.kind == "f":
        return "-ct.inf" if op == "max" else "ct.inf"
    if acc.kind == "b":
        return "False" if op == "max" else "True"
    import numpy as np

    info = np.iinfo(acc)
    return str(info.min if op == "max" else info.max)


def accumulator(node):
    """The dtype a reduction accumulates in: float32 for 16-bit floats, bool for any/all, else its result's."""
    import numpy as np

    p = node.params
    if p["op"] == "mean":
        return np.dtype(p["acc"])
    if p["op"] in ("any", "all"):
        return np.dtype("bool")
    if node.dtype.kind == "f" and node.dtype.itemsize <= 2 and p["op"] in ("sum", "prod"):
        return np.dtype("float32")
    return node.dtype


class Source:
    """Lines of a kernel body and the dtype names it refers to."""

    def __init__(self):
        self.lines, self.dtypes = [], set()

    def add(self, indent, text):
        self.lines.append("    " * indent + text)

    def dtype(self, dt):
        self.dtypes.add(dt)
        return f"D_{dt.name}"


class Expressions:
    """Renders elementwise nodes as tile expressions, each once per scope, with their tile shapes."""

    def __init__(self, nodes, src, names, shapes, tag="t"):
        # names carry the scope's tag: the tile language carries a name assigned before a loop
        # into it, so loops must not share names
        self.nodes, self.src, self.names, self.shapes, self.tag = nodes, src, dict(names), dict(shapes), tag

    def value(self, i, indent):
        if i in self.names:
            return self.names[i]
        n = self.nodes[i]
        args = [self.value(a, indent) for a in n.args]
        if n.kind == "ufunc":
            text = f"ct.{n.params['name']}({', '.join(args)})"
        elif n.kind == "where":
            text = f"ct.where({', '.join(args)})"
        elif n.kind == "astype":
            text = f"ct.astype({args[0]}, {self.src.dtype(n.params['dtype'])})"
        else:
            raise AssertionError(f"render: {n.kind} is not elementwise")
        name = f"v{i}_{self.tag}"
        self.src.add(indent, f"{name} = {text}")
        self.names[i] = name
        self.shapes[i] = _broadcast([self.shapes.get(a, ()) for a in n.args])
        return name

    def child(self, tag):
        return Expressions(self.nodes, self.src, self.names, self.shapes, tag)


def _broadcast(shapes):
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for j, e in enumerate(s):
            k = rank - len(s) + j
            out[k] = max(out[k], e)
    return tuple(out)


def _index(flags, names, tiled):
    """Tile index and shape over the full space for a leaf with broadcast `flags`; `tiled` maps the
    dims a tile spans to their extent's name (the others have extent 1)."""
    index = ", ".join("0" if b else names[j] for j, b in enumerate(flags))
    shape = tuple(1 if (b or j not in tiled) else tiled[j] for j, b in enumerate(flags))
    return f"({index},)", shape


def _shape_text(shape):
    return "(" + ", ".join(str(s) for s in shape) + ",)"


def _numeric(shape):
    return tuple(2 if isinstance(s, str) else s for s in shape)  # 2 stands for a tiled extent


def _load(src, e, leaf, arg, flags, names, tiled, indent):
    index, shape = _index(flags, names, tiled)
    src.add(indent, f"v{leaf}_{e.tag} = ct.load({arg}, index={index}, shape={_shape_text(shape)})")
    e.names[leaf] = f"v{leaf}_{e.tag}"
    e.shapes[leaf] = _numeric(shape)


def render_map(nodes, outputs, arrays, scalars, rank):
    """A map kernel: `arrays` are (leaf id, broadcast flags over `rank` dims); `scalars` leaf ids."""
    src = Source()
    names = [f"i{j}" for j in range(rank - 1)] + ["c"]
    params = [f"a{k}" for k in range(len(arrays))] + [f"o{k}" for k in range(len(outputs))]
    params += [f"s{k}" for k in range(len(scalars))] + [f"n{j}" for j in range(rank)]
    src.add(1, "b = ct.bid(0)")
    src.add(1, f"nc = ct.cdiv(n{rank - 1}, BLOCK)")
    src.add(1, "c = b % nc")
    src.add(1, "r = b // nc")
    for j in reversed(range(rank - 1)):
        src.add(1, f"i{j} = r % n{j}")
        src.add(1, f"r = r // n{j}")
    e = Expressions(nodes, src, {s: f"s{k}" for k, s in enumerate(scalars)}, {})
    for k, (leaf, flags) in enumerate(arrays):
        _load(src, e, leaf, f"a{k}", flags, names, {rank - 1: "BLOCK"}, 1)
    full = (1,) * (rank - 1) + ("BLOCK",)
    for k, o in enumerate(outputs):
        _store(src, f"o{k}", f"({', '.join(names)},)", e.value(o, 1), e.shapes[o], full, 1)
    return _finish("jit_map", params, src)


def _store(src, out, index, value, shape, full, indent):
    """Stores `value` (of bookkeeping `shape`) over the tile `full` (extents or their names)."""
    if tuple(shape) != _numeric(full):
        value = f"ct.broadcast_to({value}, {_shape_text(full)})"
    src.add(indent, f"ct.store({out}, index={index}, tile={value})")


def _finish(name, params, src, constants=("BLOCK",)):
    head = f"def {name}({', '.join([*params, *(f'{c}: ct.Constant[int]' for c in constants)])}):"
    return "\n".join([head, *src.lines]) + "\n", sorted(src.dtypes, key=str)


class RowsLayout:
    """The full space of a rows kernel: which dims are kept, looped over, or tiled. A chunked kernel
    tiles the last reduced dim by BLOCK and loops over its chunks and over the other reduced dims; a
    whole-row kernel tiles every reduced dim at once (`B{j}`, BLOCK for the last), so the leaves are
    loaded once and every reduction and output reads the same tiles."""

    def __init__(self, rank, axes, whole=False):
        self.rank, self.axes, self.whole = rank, axes, whole
        self.kept = [j for j in range(rank) if j not in axes]
        self.last = axes[-1]
        self.tiled = {j: "BLOCK" if j == self.last else f"B{j}" for j in (axes if whole else axes[-1:])}
        self.names = [("0" if whole else f"r{j}") if j in axes else f"i{j}" for j in range(rank)]
        if not whole:
            self.names[self.last] = "c"
        self.tile = tuple(self.tiled.get(j, 1) for j in range(rank))
        self.constants = [self.tiled[j] for j in axes if j in self.tiled]  # the kernel's, in order

    def loops(self, src, indent, chunks):
        for j in self.axes[:-1]:
            src.add(indent, f"for r{j} in range(n{j}):")
            indent += 1
        src.add(indent, f"for c in {chunks}:")
        return indent + 1

    def along(self, j, value):
        """`value`, a vector over reduced dim j's tile, shaped to broadcast over the whole tile."""
        return f"ct.reshape({value}, {_shape_text([self.tiled[j] if k == j else 1 for k in range(self.rank)])})"


def render_rows(nodes, step, arrays, scalars, split, whole=False):
    """A rows kernel for `step` (reductions, tails, kept); `arrays` (leaf id, broadcast flags);
    `whole`: the reduced extent as one tile (its extents are the kernel's constants)."""
    return _RowsKernel(nodes, step, arrays, scalars, split, whole).render()


class _RowsKernel:
    """The pieces of a rows kernel, written in order: the kept position, the leaves constant along
    the reduced dims, the reductions (a loop pair each, or one expression over the whole-row tile),
    the kept outputs, the full outputs (a loop, or stores of the whole-row tile)."""

    def __init__(self, nodes, step, arrays, scalars, split, whole):
        self.nodes, self.step, self.arrays, self.scalars, self.split = nodes, step, arrays, scalars, split
        self.lay = RowsLayout(step.ndim, step.axes, whole)
        self.src = Source()
        self.means = [r for r in step.reductions if nodes[r].params["op"] == "mean"]
        self.tile = _shape_text(self.lay.tile)

    def params(self):
        step, reds = self.step, self.step.reductions
        params = [f"a{k}" for k in range(len(self.arrays))] + [f"q{k}" for k in range(len(reds))]
        params += [f"t{k}" for k in range(len(step.tails))] + [f"k{k}" for k in range(len(step.kept))]
        params += [f"s{k}" for k in range(len(self.scalars))] + [f"m{k}" for k in range(len(self.means))]
        return params + [f"n{j}" for j in range(step.ndim)] + ["nsplit"]

    def render(self):
        src, lay = self.src, self.lay
        src.add(1, "b = ct.bid(0)")
        src.add(1, "sid = ct.bid(1)")
        src.add(1, "r = b")
        for j in reversed(lay.kept):
            src.add(1, f"i{j} = r % n{j}")
            src.add(1, f"r = r // n{j}")
        self.top = Expressions(self.nodes, src, {s: f"s{k}" for k, s in enumerate(self.scalars)}, {})
        self.varying = []
        for k, (leaf, flags) in enumerate(self.arrays):
            if all(flags[a] for a in self.step.axes):  # constant along the reduced dims: loaded once
                _load(src, self.top, leaf, f"a{k}", flags, lay.names, {}, 1)
            elif lay.whole:  # the whole reduced extent, loaded once for every reduction and output
                _load(src, self.top, leaf, f"a{k}", flags, lay.names, lay.tiled, 1)
            else:
                self.varying.append((k, leaf, flags))
        if lay.whole:  # the tile's positions inside the row (the tile is padded to powers of two)
            masks = [lay.along(j, f"ct.arange({lay.tiled[j]}) < n{j}") for j in lay.axes]
            src.add(1, f"valid = {masks[0]}")
            for m in masks[1:]:
                src.add(1, f"valid = ct.logical_and(valid, {m})")
        self.spans = self._spans()
        for q, r in enumerate(self.step.reductions):
            self.reduction(q, r)
        for k, o in enumerate(self.step.kept):
            src.add(1, f"ct.store(k{k}, index=(b, 0), tile=ct.reshape({self.top.value(o, 1)}, (1, 1)))")
        if self.step.tails:
            self.full_outputs()
        return _finish("jit_rows", self.params(), src, lay.constants)

    def _spans(self):
        """The chunk ranges of a chunked kernel: the full chunks need no mask; the ragged last one
        (if any) runs once more with one. Split: block sid takes a contiguous run of the full
        chunks, the first block also the ragged one."""
        n = f"n{self.lay.last}"
        if self.lay.whole:
            return None
        if self.split:
            self.src.add(1, f"per = ct.cdiv({n} // BLOCK, nsplit)")
            return (f"range(sid * per, min(sid * per + per, {n} // BLOCK))",
                    f"range({n} // BLOCK + sid, ct.cdiv({n}, BLOCK), nsplit)")
        return (f"range({n} // BLOCK)", f"range({n} // BLOCK, ct.cdiv({n}, BLOCK))")

    def _loop_leaves(self, tag, chunks):
        body = self.lay.loops(self.src, 1, chunks)
        e = self.top.child(tag)
        for k, leaf, flags in self.varying:
            _load(self.src, e, leaf, f"a{k}", flags, self.lay.names, self.lay.tiled, body)
        return e, body

    def reduction(self, q, r):
        src, node = self.src, self.nodes[r]
        if node.params["op"] in ("argmax", "argmin"):
            return self.arg_reduction(q, r)
        acc_dt, op = accumulator(node), node.params["op"]
        ident = _identity(op, acc_dt)
        if self.lay.whole:  # the padding of the tile holds the identity
            x = f"ct.astype({self.top.value(node.args[0], 1)}, {src.dtype(acc_dt)})"
            total = _final(op, f"ct.where(valid, {x}, {ident})")
        else:
            total = self._chunked(q, node, acc_dt, op, ident)
        if self.split:  # the partial result; the caller finishes it
            src.add(1, f"ct.store(q{q}, index=(b, sid), tile=ct.reshape({total}, (1, 1)))")
            return
        if op == "mean":
            total = f"({total}) / m{self.means.index(r)}"
        self._result(q, r, total)

    def _chunked(self, q, node, acc_dt, op, ident):
        """The loops of a chunked reduction; returns the expression of its total."""
        src = self.src
        src.add(1, f"acc{q} = ct.full({self.tile}, {ident}, dtype={src.dtype(acc_dt)})")
        for masked, chunks in zip((False, True), self.spans, strict=True):
            e, body = self._loop_leaves(f"l{q}{'m' if masked else ''}", chunks)
            x = f"ct.astype({e.value(node.args[0], body)}, {src.dtype(acc_dt)})"
            if masked:
                src.add(body, f"valid{q} = ct.reshape(c * BLOCK + ct.arange(BLOCK) < n{self.lay.last}, {self.tile})")
                x = f"ct.where(valid{q}, {x}, {ident})"
            src.add(body, f"acc{q} = ct.{_COMBINE[op]}(acc{q}, {x})")
        return _final(op, f"acc{q}")

    def _result(self, q, r, total):
        src = self.src
        src.add(1, f"R{r} = ct.astype({total}, {src.dtype(self.nodes[r].dtype)})")
        src.add(1, f"ct.store(q{q}, index=(b, 0), tile=ct.reshape(R{r}, (1, 1)))")
        self.top.names[r] = f"R{r}"
        self.top.shapes[r] = ()

    def arg_reduction(self, q, r):
        """argmax / argmin: each lane keeps its first extreme and its flat index (a NaN counts as the
        extreme, as in NumPy); then the smallest index among the lanes holding the extreme. A
        whole-row tile has one element a lane: its padding holds the identity and no index."""
        src, node, lay = self.src, self.nodes[r], self.lay
        dt = self.nodes[node.args[0]].dtype
        op, floats = node.params["op"], dt.kind == "f"
        ident, cmp = _identity("max" if op == "argmax" else "min", dt), ">" if op == "argmax" else "<"
        big = str(1 << 62)
        if lay.whole:
            src.add(1, f"v{q} = ct.astype({self.top.value(node.args[0], 1)}, {src.dtype(dt)})")
            src.add(1, f"best{q} = ct.where(valid, v{q}, {ident})")
            flat = None
            for j in lay.axes:
                at = lay.along(j, f"ct.astype(ct.arange({lay.tiled[j]}), ct.int64)")
                flat = at if flat is None else f"({flat}) * n{j} + {at}"
            src.add(1, f"where{q} = ct.where(valid, {flat}, ct.full({self.tile}, {big}, dtype=ct.int64))")
        else:
            self._arg_loops(q, node, dt, floats, (ident, cmp, big))
        src.add(1, f"ext{q} = ct.{'max' if op == 'argmax' else 'min'}(best{q})")
        hit = f"best{q} == ext{q}"
        if floats:
            hit = f"ct.logical_or({hit}, ct.logical_and(ct.isnan(best{q}), ct.isnan(ext{q})))"
        self._result(q, r, f"ct.min(ct.where({hit}, where{q}, {big}))")

    def _arg_loops(self, q, node, dt, floats, consts):
        src, lay = self.src, self.lay
        ident, cmp, big = consts
        src.add(1, f"best{q} = ct.full({self.tile}, {ident}, dtype={src.dtype(dt)})")
        src.add(1, f"where{q} = ct.full({self.tile}, {big}, dtype=ct.int64)")
        flat = "0"
        for j in lay.axes[:-1]:
            flat = f"({flat}) * n{j} + r{j}"
        n = f"n{lay.last}"
        for masked, chunks in zip((False, True), self.spans, strict=True):
            e, body = self._loop_leaves(f"l{q}{'m' if masked else ''}", chunks)
            src.add(body, f"v{q} = ct.astype({e.value(node.args[0], body)}, {src.dtype(dt)})")
            src.add(body, f"at{q} = ct.reshape(({flat}) * {n} + c * BLOCK + ct.arange(BLOCK), {self.tile})")
            better = f"ct.logical_or(v{q} {cmp} best{q}, where{q} == {big})"
            if floats:
                better = f"ct.logical_or({better}, ct.logical_and(ct.isnan(v{q}), ct.logical_not(ct.isnan(best{q}))))"
            if masked:
                better = f"ct.logical_and(at{q} < {_flat_extent(lay)}, {better})"
            src.add(body, f"take{q} = {better}")
            src.add(body, f"best{q} = ct.where(take{q}, v{q}, best{q})")
            src.add(body, f"where{q} = ct.where(take{q}, at{q}, where{q})")

    def full_outputs(self):
        lay = self.lay
        if lay.whole:
            e, body = self.top, 1
        else:
            e, body = self._loop_leaves("tail", f"range(ct.cdiv(n{lay.last}, BLOCK))")
        index = f"({', '.join(lay.names)},)"
        for k, t in enumerate(self.step.tails):
            _store(self.src, f"t{k}", index, e.value(t, body), e.shapes[t], lay.tile, body)


def _flat_extent(lay):
    """The flat index one past the current run of the last reduced dim (the masked chunk's bound)."""
    flat = "0"
    for j in lay.axes[:-1]:
        flat = f"({flat}) * n{j} + r{j}"
    return f"(({flat}) + 1) * n{lay.last}"


def _final(op, acc):
    if op in ("any", "all"):
        return f"ct.{'max' if op == 'any' else 'min'}(ct.astype({acc}, ct.int32)) > 0"
    return f"ct.{'sum' if op == 'mean' else op}({acc})"


def split_count(kept, reduced, block, device, threads=1):
    """How many blocks share one kept position: enough blocks for the machine (a GPU's SMs, the CPU's
    threads) when there are few kept positions and long reductions (the partial results are
    combined eagerly)."""
    want, enough = (4096, 1024) if device != "cpu" else (threads, threads)
    if kept >= enough or reduced < 16 * block:
        return 1
    return max(1, min(want // max(kept, 1), math.ceil(reduced / (4 * block)), 1024))


# Whole-row kernels. A GPU block holds its tiles in registers, 128 bytes of each a thread (32 float32
# elements: the tile compiler's 256 threads of the hand-written 8192-wide softmax, which reaches
# 4.12 TB/s on the H200), so the largest tile, 64 KiB of a row, takes 512 threads; ptxas gives the
# rendered softmax, variance and layer norm 60-130 registers a thread at that size, no spills (an
# NVRTC test checks it). Longer rows would need 1024 threads and their 64 registers a thread (the
# layer norm spills there) or fewer resident blocks than the loads need; they are re-read from L2
# in chunks instead. On the CPU a tile is an array in a thread's cache: a chunk of 1024 float32
# stays in L1 with the values computed from it, and re-reading it from L2 costs little, so whole
# rows pay only below one chunk, where the chunked kernel runs everything through its masked tail
# (measured 2-4x faster for rows of 300 and 1000, 1.5-3x slower for rows of 4096 and 16384).
WHOLE_ROW_BYTES = {"cpu": 4 * 1024, "cuda": 64 * 1024}
WHOLE_ROW_MIN = 256  # the smallest whole-row tile: rows shorter than this share one kernel


def whole_row_blocks(extents, itemsize, device):
    """The tile extents of a whole-row kernel over the reduced `extents`: each rounded up to a power
    of two (the last widened to make WHOLE_ROW_MIN elements), so lengths in one power-of-two bucket
    share a kernel; None when that tile exceeds WHOLE_ROW_BYTES (counting 4 bytes for narrower types,
    which compute in float32)."""
    blocks = [1 << max(n - 1, 0).bit_length() for n in extents]
    blocks[-1] = max(blocks[-1], WHOLE_ROW_MIN // math.prod(blocks[:-1]))
    return blocks if math.prod(blocks) * max(itemsize, 4) <= WHOLE_ROW_BYTES[device] else None


def whole_row_threads(elements, itemsize):
    """The CUDA block size of a whole-row kernel: 128 bytes of the tile a thread, 128 to 1024 threads
    (as Triton's softmax widens num_warps with its BLOCK)."""
    return min(1024, max(128, elements * max(itemsize, 4) // 128))
