"""cupric.linalg.advanced: stateful matrix-product plans with epilogues, after nvmath-python's
`nvmath.linalg.advanced` (Matmul, matmul, MatmulEpilog). D = epilogue(alpha * A @ B + beta * C)
on either device: on GPUs cuBLASLt runs the product with the epilogue fused (_fused.py), on the
CPU (and for what cuBLASLt lacks) OpenBLAS runs it and the epilogue is composed from ufuncs, the
reference both are tested against; see docs/linalg.md."""

import enum
import math

from .. import _cupric as _c
from . import _fused
from ._products import _arr

__all__ = ["Matmul", "MatmulEpilog", "matmul"]


class MatmulEpilog(enum.Enum):
    """What is applied to the product (cuBLASLt's epilogues, by the same names)."""

    DEFAULT = "default"
    RELU = "relu"
    GELU = "gelu"
    BIAS = "bias"
    RELU_BIAS = "relu_bias"
    GELU_BIAS = "gelu_bias"
    RELU_AUX = "relu_aux"  # also returns the mask of positive entries ("relu_aux")
    GELU_AUX = "gelu_aux"  # also returns the pre-activation ("gelu_aux")
    RELU_AUX_BIAS = "relu_aux_bias"
    GELU_AUX_BIAS = "gelu_aux_bias"
    DRELU = "drelu"  # product times epilogue_inputs["relu_aux"] (a forward RELU_AUX's mask)
    DGELU = "dgelu"  # product times gelu'(epilogue_inputs["gelu_aux"])
    DRELU_BGRAD = "drelu_bgrad"  # DRELU and the bias gradient (the sum over columns, "drelu_bgrad")
    DGELU_BGRAD = "dgelu_bgrad"
    BGRADA = "bgrada"  # the product, and the sum of A over its columns ("bgrada")
    BGRADB = "bgradb"  # the product, and the sum of B over its rows ("bgradb")


_NEEDS = {
    MatmulEpilog.BIAS: ("bias",), MatmulEpilog.RELU_BIAS: ("bias",), MatmulEpilog.GELU_BIAS: ("bias",),
    MatmulEpilog.RELU_AUX_BIAS: ("bias",), MatmulEpilog.GELU_AUX_BIAS: ("bias",),
    MatmulEpilog.DRELU: ("relu_aux",), MatmulEpilog.DRELU_BGRAD: ("relu_aux",),
    MatmulEpilog.DGELU: ("gelu_aux",), MatmulEpilog.DGELU_BGRAD: ("gelu_aux",),
}
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu(x):
    """GELU's tanh form (cuBLASLt's)."""
    return 0.5 * x * (1 + _c.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


def _gelu_grad(x):
    t = _c.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)


def _epilogue(kind, d, inputs, a, b):
    """The reference epilogue: (result, aux dict)."""
    name = kind.value
    aux = {}
    if "bias" in name and "bgrad" not in name:
        bias = inputs["bias"]
        d = d + (_c.reshape(bias, (-1, 1)) if bias.ndim == 1 else bias).astype(d.dtype)
    if name.startswith("relu"):
        if "aux" in name:
            aux["relu_aux"] = d > 0
        d = _c.maximum(d, 0)
    elif name.startswith("gelu"):
        if "aux" in name:
            aux["gelu_aux"] = d
        d = _gelu(d).astype(d.dtype)
    elif name.startswith("drelu"):
        d = _c.where(inputs["relu_aux"], d, 0).astype(d.dtype)
    elif name.startswith("dgelu"):
        d = (d * _gelu_grad(inputs["gelu_aux"])).astype(d.dtype)
    if name.endswith("_bgrad"):
        aux[name] = _c.sum(d, axis=-1)
    elif kind is MatmulEpilog.BGRADA:
        aux["bgrada"] = _c.sum(a, axis=-1)
    elif kind is MatmulEpilog.BGRADB:
        aux["bgradb"] = _c.sum(b, axis=-2)
    return d, aux


def _layout(x):
    return (tuple(x.shape), x.dtype, str(x.device), tuple(x.strides))


class Matmul:
    """A planned product D = epilogue(alpha * a @ b + beta * c): `plan()` once, `execute()` as often
    as needed, `reset_operands(...)` to swap in new arrays of the same layout without planning
    again. Works as a context manager (`free()` at exit)."""

    def __init__(self, a, b, c=None, *, alpha=1, beta=0, epilogue=None, epilogue_inputs=None, options=None):
        self.a, self.b = _arr(a), _arr(b)
        self.c = None if c is None else _arr(c)
        self.alpha, self.beta = alpha, beta
        self.options = dict(options or {})
        self._check_operands()
        self.epilogue = MatmulEpilog.DEFAULT if epilogue is None else MatmulEpilog(epilogue)
        self.epilogue_inputs = {k: _arr(v) for k, v in (epilogue_inputs or {}).items()}
        self._planned = False
        self._freed = False
        self._fused = None

    def _check_operands(self):
        a, b, c = self.a, self.b, self.c
        if a.ndim < 2 or b.ndim < 2:
            raise ValueError(f"Matmul: the operands must be matrices or stacks of them, got shapes {tuple(a.shape)} "
                             f"and {tuple(b.shape)}")
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"Matmul: the inner dimensions of shapes {tuple(a.shape)} and {tuple(b.shape)} differ "
                             f"({a.shape[-1]} and {b.shape[-2]})")
        if a.device != b.device or (c is not None and c.device != a.device):
            raise ValueError("Matmul: the operands are on different devices; move them to one with x.to_device(...)")
        if c is not None:
            shape = tuple(_c.broadcast_shapes(a.shape[:-2], b.shape[:-2])) + (a.shape[-2], b.shape[-1])
            try:
                _c.broadcast_to(c, shape)
            except ValueError as err:
                raise ValueError(f"Matmul: c of shape {tuple(c.shape)} does not broadcast to the result's shape "
                                 f"{shape}") from err

    def plan(self, preferences=None, algorithms=None, epilogue=None, epilogue_inputs=None):
        """Checks the epilogue and its inputs and fixes the algorithm; returns the algorithms
        considered: cuBLASLt's candidates on a GPU (the first is used until autotune() times
        them), ["blas"] where the product is the backend's BLAS and the epilogue is composed."""
        self._alive()
        if epilogue is not None:
            self.epilogue = MatmulEpilog(epilogue)
        if epilogue_inputs is not None:
            self.epilogue_inputs = {k: _arr(v) for k, v in epilogue_inputs.items()}
        missing = [k for k in _NEEDS.get(self.epilogue, ()) if k not in self.epilogue_inputs]
        if missing:
            raise ValueError(f"Matmul: the epilogue {self.epilogue.name} needs epilogue_inputs {missing}")
        m = self.a.shape[-2]
        bias = self.epilogue_inputs.get("bias")
        if bias is not None and bias.shape[0] != m:
            raise ValueError(f"Matmul: the bias has {bias.shape[0]} entries but the result has {m} rows")
        self._fused = None
        if self.a.device.type in _fused.DEVICES and self.options.get("fuse", True):
            fused = _fused.FusedPlan(self.a, self.b, self.epilogue.value, bias, self.alpha)
            if fused.plan is not None:
                fused.recall(self.a, self.b)
                self._fused = fused
        self._planned = True
        self._layouts = (_layout(self.a), _layout(self.b), None if self.c is None else _layout(self.c))
        return self._fused.algorithms() if self._fused else ["blas"]

    def autotune(self, iterations=3, prune=None):
        """Times the candidate algorithms on the current operands (mean of `iterations` runs
        each), keeps the fastest and records it in the compile cache, so that a later plan of the
        same problem starts with it. Returns the milliseconds of each candidate ([] where the
        product is the backend's BLAS: nothing to choose)."""
        self._needs_plan()
        if self._fused is None:
            return []
        return self._fused.autotune(self.a, self.b, self.epilogue_inputs, max(int(iterations), 1))

    def reset_operands(self, a=None, b=None, c=None, *, alpha=None, beta=None, epilogue_inputs=None):
        """New operands of the planned layouts (shape, dtype, device, strides); the plan stays."""
        self._alive()
        for name, new in (("a", a), ("b", b), ("c", c)):
            if new is None:
                continue
            new = _arr(new)
            old = getattr(self, name)
            if old is None or _layout(new) != _layout(old):
                raise ValueError(f"Matmul.reset_operands: the new {name} ({tuple(new.shape)}, {new.dtype}, "
                                 f"{new.device}) does not have the planned layout"
                                 + ("" if old is None else f" ({tuple(old.shape)}, {old.dtype}, {old.device})"))
            setattr(self, name, new)
        if alpha is not None:
            self.alpha = alpha
        if beta is not None:
            self.beta = beta
        if epilogue_inputs is not None:
            self.epilogue_inputs.update({k: _arr(v) for k, v in epilogue_inputs.items()})

    def execute(self):
        """The result (and, for epilogues with auxiliary outputs, a dict of them)."""
        self._needs_plan()
        if self._fused is not None:
            try:
                d, aux = self._fused.execute(self.a, self.b, self.c, self.alpha, self.beta, self.epilogue_inputs)
            except ValueError as err:
                if "plan again" not in str(err):
                    raise
                self.plan()  # new operands less aligned than the planned ones
                return self.execute()
            return (d, aux) if aux else d
        d = _c.matmul(self.a, self.b)
        if self.alpha != 1:
            d = (self.alpha * d).astype(d.dtype)
        if self.c is not None and self.beta != 0:
            d = (d + self.beta * self.c).astype(d.dtype)
        d, aux = _epilogue(self.epilogue, d, self.epilogue_inputs, self.a, self.b)
        return (d, aux) if aux else d

    def free(self):
        self._freed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()
        return False

    def _alive(self):
        if self._freed:
            raise RuntimeError("Matmul: this plan was freed")

    def _needs_plan(self):
        self._alive()
        if not self._planned:
            raise RuntimeError("Matmul: call plan() before execute() or autotune()")


def matmul(a, b, c=None, *, alpha=1, beta=0, epilogue=None, epilogue_inputs=None, options=None):
    """One planned product, executed: epilogue(alpha * a @ b + beta * c)."""
    with Matmul(a, b, c, alpha=alpha, beta=beta, epilogue=epilogue, epilogue_inputs=epilogue_inputs,
                options=options) as mm:
        mm.plan()
        return mm.execute()
