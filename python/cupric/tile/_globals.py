"""The globals and closure variables a kernel reads: their values are compiled in, so they are part
of its specialisation (a new value compiles again) and launch plans check that they still hold."""

import dis
import enum
import functools
import sys
import types

import numpy as np

from ._source import CompileError

_LOAD_GLOBAL, _EXTENDED_ARG = dis.opmap["LOAD_GLOBAL"], dis.EXTENDED_ARG
_NAME_SHIFT = 1 if sys.version_info >= (3, 11) else 0  # LOAD_GLOBAL's argument is namei << 1 since 3.11


def _load_global_names(code):
    """The names LOAD_GLOBAL reads in `code` alone, from its bytecode (2-byte units; inline caches
    are units of opcode 0): what dis.get_instructions finds, without building an Instruction per
    unit (~0.25 ms of a new process' first launch for a small kernel)."""
    raw, names, out, ext = code.co_code, code.co_names, set(), 0
    for i in range(0, len(raw), 2):
        op, arg = raw[i], raw[i + 1] | ext
        ext = arg << 8 if op == _EXTENDED_ARG else 0
        if op == _LOAD_GLOBAL:
            out.add(names[arg >> _NAME_SHIFT])
    return out


@functools.cache
def _global_names(code):
    """Every name the code (and the code nested in it: comprehensions) looks up in its globals."""
    names = _load_global_names(code)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return frozenset(names)


def reads(fn, is_helper, seen=None):
    """(container, key, name, value) for each global (container: the globals dict, key: the name)
    and closure variable (container: the cell, key: None) that `fn` reads, then those of the
    helpers it reads (`is_helper(value)` -> the helper's function), depth first."""
    seen = set() if seen is None else seen
    if fn in seen:
        return []
    seen.add(fn)
    out = []
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
            try:
                out.append((cell, None, name, cell.cell_contents))
            except ValueError:  # a cell not filled yet
                pass
    g = fn.__globals__
    out += [(g, name, name, g[name]) for name in sorted(_global_names(fn.__code__)) if name in g]
    for *_, value in list(out):
        helper = is_helper(value)
        if helper is not None:
            out += reads(helper, is_helper, seen)
    return out


class _Identity:
    """A key part that compares by identity (functions, modules' classes) with a repr that is the
    same in every process (the disk index hashes keys' reprs)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Identity) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        o = self.obj
        return f"{type(o).__name__}:{getattr(o, '__module__', '')}.{getattr(o, '__qualname__', '')}"


_VALUES = (type(None), bool, int, str, bytes)


def _frozen(value):
    """A hashable stand-in equal for equal constants (floats by repr: 0.0 and -0.0 differ, nan
    equals nan), the same object for functions and classes; None for anything else."""
    if isinstance(value, _VALUES):
        return (type(value).__name__, value)
    if isinstance(value, (float, complex, np.generic)):
        return (type(value).__name__, repr(value))
    if isinstance(value, np.dtype):
        return ("dtype", str(value))
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__)
    if isinstance(value, (tuple, frozenset)):
        items = [_frozen(v) for v in value]
        if any(i is None for i in items):
            return None
        return (type(value).__name__, tuple(items) if isinstance(value, tuple) else tuple(sorted(items, key=repr)))
    if callable(value) or isinstance(value, enum.Enum):
        return _Identity(value)
    return None


def snapshot(kernel_name, sites):
    """The key part of the values read (`sites` from reads()): CompileError for a value that could
    change without a new binding (a list, a dict, an array, an object), which the compiled code
    would silently keep."""
    parts = []
    for container, _, name, value in sites:
        frozen = _frozen(value)
        if frozen is None:
            where = "closure variable" if isinstance(container, types.CellType) else "global"
            raise CompileError(
                f"kernel {kernel_name} reads the {where} '{name}', a {type(value).__name__}: a kernel reads globals "
                "once, when it is compiled, so it may read only constants (numbers, strings, dtypes and tuples of "
                f"them), modules, functions and classes; pass '{name}' as an argument (a ct.Constant parameter "
                "for a compile-time value)"
            )
        parts.append((name, frozen))
    return tuple(parts)


def guards(sites):
    """What launch plans check: (globals dict, name, value) or (cell, None, value)."""
    return [(container, key, value) for container, key, _, value in sites]
