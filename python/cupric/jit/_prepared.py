"""Prepared calls, the warm path of @cu.jit: a program's latest run, repeated by one C++ call
(_tile.JitCall) for arguments of exactly the same types, dtypes, shapes, strides and devices."""

from .. import _cupric as _c
from ._run import _EAGER

ARG, CONSTANT, OUTPUT, RESULT = 0, 1, 2, 3  # where a kernel argument comes from (JitCall's Source)


def prepare(program, args, static_at=()):
    """A JitCall that repeats `program`'s run on `args` (just made; the static ones at positions
    `static_at`) for arguments like them, or None where that run had a part the C++ path does not
    take: an eager op, a Python operator, a split reduction's combine, an output that no kernel
    wrote, a kernel without launch plans."""
    if program.python_ops:
        return None
    traced = [i for i in range(len(args)) if i not in static_at]  # leaf k is argument traced[k]
    arg_of = {node: traced[k] for node, k in program.arguments}
    produced, outputs, steps = {}, [], []
    for runner, _ in program.work:
        used = runner.used if runner is not None else None
        if used is None or used[0] is _EAGER or not len(used[0].kernel._plans):
            return None
        plan, device = used
        sources = [_source(i, v, arg_of, produced, program.constants)
                   for i, v in zip(runner.arrays, plan.views or [None] * len(runner.arrays), strict=True)]
        for (shape, dtype), (node, result_shape, finish) in zip(plan.outs, plan.results, strict=True):
            if finish is not None:
                return None
            produced[node] = len(outputs)
            sources.append((OUTPUT, len(outputs), None, None))
            outputs.append((shape, dtype, device, result_shape))
        sources += [_source(i, None, arg_of, produced, program.constants) for i in runner.scalars]
        sources += [(CONSTANT, 0, None, t) for t in plan.tail]
        if None in sources:
            return None
        steps.append((plan.kernel._plans.launch, plan.grid, sources))
    result = _result(program.graph.output, produced)
    if result is None:
        return None
    return _c._tile.JitCall(args, list(static_at), outputs, steps, result)


def _source(node, view, arg_of, produced, constants):
    if node in arg_of:
        return (ARG, arg_of[node], view, None)
    if node in produced:
        return (RESULT, produced[node], view, None)
    if node in constants:
        value = constants[node]
        if view is not None:
            if type(value) is not _c.ndarray:
                return None
            value = value.reshape(view)
        return (CONSTANT, 0, None, value)
    return None


def _result(output, produced):
    """An output index, or (tuple or list, indices); None for other results (dicts, literals,
    values no kernel wrote)."""
    if output[0] == "node":
        return produced.get(output[1])
    if output[0] in ("tuple", "list") and all(o[0] == "node" and o[1] in produced for o in output[1]):
        return ({"tuple": tuple, "list": list}[output[0]], [produced[o[1]] for o in output[1]])
    return None
