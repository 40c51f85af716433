"""einsum and einsum_path: opt_einsum parses the subscripts and orders the pairwise contractions;
each pair runs as one batched matrix product (matmul), each single operand as diagonals and sums."""

from .. import _cupric as _c
from ._products import _arr, _deliver, _prod

_GREEDY = "greedy"


def _subscripts_from_sublists(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublistout]) as a subscripts string."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def word(sub):
        return "".join("..." if s is Ellipsis else letters[s] for s in sub)

    if len(args) % 2 == 1:
        operands, subs, output = list(args[:-1:2]), list(args[1:-1:2]), args[-1]
    else:
        operands, subs, output = list(args[0::2]), list(args[1::2]), None
    spec = ",".join(word(s) for s in subs) + ("" if output is None else "->" + word(output))
    return spec, operands


def _parse(subscripts, operands):
    from opt_einsum.parser import parse_einsum_input

    inputs, output, _ = parse_einsum_input([subscripts] + [tuple(o.shape) for o in operands], shapes=True)
    return inputs, output


def _path_option(optimize):
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        return [tuple(p) for p in optimize[1:]]
    if optimize is True or optimize is False or optimize is None:
        return _GREEDY
    return optimize


def _contraction_list(spec, operands, optimize):
    import opt_einsum

    shapes = [tuple(o.shape) for o in operands]
    path, info = opt_einsum.contract_path(spec, *shapes, shapes=True, optimize=_path_option(optimize))
    return path, info


def einsum_path(subscripts, *operands, optimize=_GREEDY, einsum_call=False):
    """numpy.einsum_path: (['einsum_path', (i, j), ...], a printable report), from opt_einsum."""
    if not isinstance(subscripts, str):
        subscripts, operands = _subscripts_from_sublists((subscripts,) + operands)
    operands = [_arr(o) for o in operands]
    inputs, output = _parse(subscripts, operands)
    path, info = _contraction_list(f"{inputs}->{output}", operands, optimize)
    return ["einsum_path", *[tuple(p) for p in path]], str(info)


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """numpy.einsum: explicit and implicit subscripts, ellipses, the sublist form; the pairwise
    order comes from opt_einsum's planner and each pair is one batched matrix product."""
    if not operands:
        raise ValueError("einsum: no subscripts given")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], list(operands[1:])
    else:
        subscripts, arrays = _subscripts_from_sublists(operands)
    arrays = [_arr(a) for a in arrays]
    if dtype is not None:
        arrays = [_c.astype(a, dtype) for a in arrays]
    elif arrays:
        common = _c.result_type(*arrays)
        arrays = [a if a.dtype == common else _c.astype(a, common) for a in arrays]
    inputs, output = _parse(subscripts, arrays)
    subs = inputs.split(",")
    if len(subs) != len(arrays):
        raise ValueError(f"einsum: {len(subs)} operand subscripts for {len(arrays)} operands")
    for s, a in zip(subs, arrays, strict=True):
        if len(s) != a.ndim:
            raise ValueError(f"einsum(): the subscripts '{s}' have {len(s)} letters for an operand of shape "
                             f"{tuple(a.shape)}")
    if len(arrays) == 1:
        return _deliver(_unary(subs[0], output, arrays[0]), out)
    _, info = _contraction_list(f"{inputs}->{output}", arrays, optimize)
    pending = list(arrays)
    for inds, _removed, step, _remaining, _blas in info.contraction_list:
        taken = [pending.pop(i) for i in sorted(inds, reverse=True)]
        lhs, rhs = step.split("->")
        pending.append(_contract(lhs.split(","), rhs, taken))
    return _deliver(pending[0], out)


def _contract(subs, output, ops):
    if len(ops) == 1:
        return _unary(subs[0], output, ops[0])
    while len(ops) > 2:  # fold the first two, keeping the letters the others or the output need
        rest = set("".join(subs[2:])) | set(output)
        keep = "".join(dict.fromkeys(c for c in subs[0] + subs[1] if c in rest))
        ops = [_pair(subs[0], subs[1], keep, ops[0], ops[1])] + ops[2:]
        subs = [keep] + subs[2:]
    return _pair(subs[0], subs[1], output, ops[0], ops[1])


def _unary(sub, output, x):
    """Repeated letters become diagonals, letters absent from `output` are summed, the rest
    permuted into the output's order."""
    sub = list(sub)
    while len(set(sub)) < len(sub):
        c = next(c for c in sub if sub.count(c) > 1)
        i = sub.index(c)
        j = sub.index(c, i + 1)
        x = _c.diagonal(x, 0, i, j)
        sub = [s for k, s in enumerate(sub) if k not in (i, j)] + [c]
    summed = tuple(k for k, c in enumerate(sub) if c not in output)
    if summed:
        if x.dtype.kind == "b":
            x = _c.any(x, axis=summed)
        else:
            x = _c.sum(x, axis=summed, dtype=x.dtype)
        sub = [c for c in sub if c in output]
    perm = tuple(sub.index(c) for c in output)
    return _c.permute_dims(x, perm) if perm != tuple(range(len(perm))) else x


def _pair(sa, sb, output, a, b):
    keep_a = "".join(dict.fromkeys(c for c in sa if c in sb or c in output))
    keep_b = "".join(dict.fromkeys(c for c in sb if c in sa or c in output))
    a, b = _unary(sa, keep_a, a), _unary(sb, keep_b, b)
    batch = [c for c in keep_a if c in keep_b and c in output]
    summed = [c for c in keep_a if c in keep_b and c not in output]
    free_a = [c for c in keep_a if c not in keep_b]
    free_b = [c for c in keep_b if c not in keep_a]
    size = {}
    for s, x in ((keep_a, a), (keep_b, b)):
        for c, n in zip(s, x.shape, strict=True):
            if size.get(c, 1) == 1:  # an extent of 1 broadcasts (to 0 too)
                size[c] = n
    at = _c.permute_dims(a, tuple(keep_a.index(c) for c in batch + free_a + summed))
    bt = _c.permute_dims(b, tuple(keep_b.index(c) for c in batch + summed + free_b))
    nb = len(batch)
    # a summed letter of extent 1 in one operand broadcasts against the other (ellipsis broadcasting)
    at = _c.broadcast_to(at, tuple(at.shape[:nb + len(free_a)]) + tuple(size[c] for c in summed))
    bt = _c.broadcast_to(bt, tuple(bt.shape[:nb]) + tuple(size[c] for c in summed) + tuple(bt.shape[nb + len(summed):]))
    k = _prod(size[c] for c in summed)
    am = _c.reshape(at, tuple(at.shape[:nb]) + (_prod(size[c] for c in free_a), k))
    bm = _c.reshape(bt, tuple(bt.shape[:nb]) + (k, _prod(size[c] for c in free_b)))
    r = _c.matmul(am, bm)
    r = _c.reshape(r, tuple(r.shape[:nb]) + tuple(size[c] for c in free_a) + tuple(size[c] for c in free_b))
    letters = batch + free_a + free_b
    perm = tuple(letters.index(c) for c in output)
    return _c.permute_dims(r, perm) if perm != tuple(range(len(perm))) else r
