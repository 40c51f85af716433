"""What kernels are made of, below the compiler: ct.Constant annotations, @ct.function helpers,
`Launchable` (what @ct.kernel and @ct.autotune kernels share: k[grid](...), k.interpret[grid]),
and the specialisation cache (`Specialisations`, keyed by `freeze`d values). A leaf of the
package: the frontend, the kernels and the autotuner import it, it imports none of them."""

import functools

from .. import _dtypes as _dt
from .._keys import exact_key
from ._source import source_of


class _ConstantAnnotation:
    def __init__(self, of):
        self.of = of

    def __repr__(self):
        return f"ct.Constant[{getattr(self.of, '__name__', self.of)}]"


class Constant:
    """Annotation of a compile-time parameter: `BLOCK: ct.Constant[int]`. Each distinct value
    compiles its own specialisation (tile shapes must be constants)."""

    def __class_getitem__(cls, of):
        return _ConstantAnnotation(of)


def is_constant(annotation):
    """Whether a parameter annotation marks a compile-time constant."""
    if annotation is Constant or isinstance(annotation, _ConstantAnnotation):
        return True
    return isinstance(annotation, str) and "Constant" in annotation


class TileFunction:
    """A helper callable from kernels (@ct.function): inlined where it is called."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)  # interpreter mode: plain Python

    def source(self):
        return source_of(self.fn)


def function(fn):
    """Marks a helper for use inside kernels; calls to it are inlined."""
    return TileFunction(fn)


class Launchable:
    """What kernels and autotuned kernels share: `k[grid](*args)` launches (through `_launch`),
    `k.interpret[grid](*args)` runs the interpreter, and calling `k(...)` without a grid is an error."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"launch {self.fn.__name__} with a grid: {self.fn.__name__}[grid](*args)")

    def _with_defaults(self, args):
        """Positional arguments with the trailing parameters' defaults filled in (what binding them
        gives), so that launch plans — made from every parameter's value — fit calls that leave
        defaulted parameters out; `args` as given when a parameter left out has no default."""
        tail = self.__dict__.get("_default_tail")
        if tail is None:
            params = list(self.signature.parameters.values())
            first = len(params)
            while (
                first > 0
                and params[first - 1].default is not params[first - 1].empty
                and params[first - 1].kind
                in (params[first - 1].POSITIONAL_ONLY, params[first - 1].POSITIONAL_OR_KEYWORD)
            ):
                first -= 1
            tail = self._default_tail = (first, tuple(p.default for p in params[first:]), len(params))
        first, defaults, n = tail
        if first <= len(args) < n:
            return args + defaults[len(args) - first :]
        return args

    def __getitem__(self, grid):
        return functools.partial(self._launch, grid, None, False)

    @property
    def interpret(self):
        """k.interpret[grid](*args): run the Python body eagerly, block by block (an autotuned
        kernel uses the key's best config if it was tuned in this process, else the first)."""
        launch = self._launch

        class _Interpret:
            def __getitem__(self, grid):
                return functools.partial(launch, grid, None, True)

        return _Interpret()


def freeze(v):
    """A hashable stand-in for a constant argument's value (lists as tuples, dtypes by name, numbers
    by their exact value: cupric._keys.exact_key)."""
    if isinstance(v, list):
        return tuple(freeze(x) for x in v)
    if isinstance(v, tuple):
        return tuple(freeze(x) for x in v)
    if _dt.is_dtype_like(v):
        return ("dtype", _dt.as_dtype(v).name)
    return exact_key(v)


class Specialisations(dict):
    """kernel.cache: specialisation key -> Compiled. Removing entries also forgets the launch
    plans (which hold compiled kernels), so that the next launch specialises again."""

    def __init__(self, forget):
        super().__init__()
        self._forget = forget

    def clear(self):
        super().clear()
        self._forget()

    def __delitem__(self, key):
        super().__delitem__(key)
        self._forget()

    def pop(self, *args):
        self._forget()
        return super().pop(*args)
