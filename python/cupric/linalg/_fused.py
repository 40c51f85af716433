"""The GPU side of cupric.linalg.advanced: a Matmul plan whose epilogue cuBLASLt fuses into the
product (the C++ plan is src/backend/cuda/matmul_lt.cpp). Lays out the result, the auxiliary
matrix and the bias vectors as cuBLASLt needs them, keeps autotuned choices in the compile cache."""

import json

from .. import _cupric as _c
from .._progress import Progress

# cupric's epilogue name -> (the fused one cuBLASLt runs, what is added after it)
FUSED = {
    "default": ("default", None), "relu": ("relu", None), "gelu": ("gelu", None), "bias": ("bias", None),
    "relu_bias": ("relu_bias", None), "gelu_bias": ("gelu_bias", None),
    # relu(x) > 0 exactly where x > 0, so the mask is read off the result (cuBLASLt's is a bitmask)
    "relu_aux": ("relu", "mask"), "relu_aux_bias": ("relu_bias", "mask"),
    "gelu_aux": ("gelu_aux", None), "gelu_aux_bias": ("gelu_aux_bias", None),
    "dgelu": ("dgelu", None), "dgelu_bgrad": ("dgelu_bgrad", None),
    "bgrada": ("bgrada", None), "bgradb": ("bgradb", None),
}
# epilogues whose bias runs along the result's rows: cuBLASLt computes a column-major result then
ROWS_BIAS = {"bias", "relu_bias", "gelu_bias", "gelu_aux_bias", "dgelu_bgrad"}
AUX = {"gelu_aux", "gelu_aux_bias", "dgelu", "dgelu_bgrad"}
GRAD = {"dgelu_bgrad": "m", "bgrada": "m", "bgradb": "n"}
DTYPES = ("float16", "bfloat16", "float32", "float64")
DEVICES = ("cuda",)  # devices whose backend may plan fused products (tests add a fake library)
_FORMAT = "cupric.linalg Matmul autotune 1"


def library_plan(a, b, d, bias, aux, alpha, beta, epilogue):
    """The device library's plan (cupric/linalg.hpp plan_matmul), or None."""
    return _c._plan_matmul(a, b, d, bias, aux, alpha, beta, epilogue)


def _device_name(device):
    """The GPU's model name (a choice made on one model is not another's), or the device string."""
    if device.type != "cuda":
        return str(device)
    from .. import cuda as _cuda

    return _cuda.Device(device.index).name


def _round8(n):
    return (n + 7) // 8 * 8


def matrices(shape, dtype, device, column_major, ld=None):
    """An uninitialised stack of matrices [..., m, n], each row-major or column-major; `ld` pads
    the leading dimension (cuBLASLt's aux matrix wants a multiple of 8)."""
    *batch, m, n = shape
    inner, outer = (m, n) if column_major else (n, m)
    buf = _c.empty((*batch, outer, ld or inner), dtype=dtype, device=device)[..., :inner]
    return _c.swapaxes(buf, -1, -2) if column_major else buf


class FusedPlan:
    """cuBLASLt's plan of one problem (shapes, dtypes, layouts, epilogue), or `plan is None` when
    it does not apply (then Matmul composes the reference epilogue)."""

    def __init__(self, a, b, epilogue, bias, alpha):
        self.plan = None
        self.name, self.post = FUSED.get(epilogue, (None, None))
        if self.name is None or a.device.type not in DEVICES or str(a.dtype) not in DTYPES or a.dtype != b.dtype:
            return
        bias = bias if self.name in ROWS_BIAS else None
        if bias is not None and bias.ndim != 1:
            return
        batch = tuple(_c.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
        self.a_shape, self.b_shape = (*batch, *a.shape[-2:]), (*batch, *b.shape[-2:])
        self.shape = (*batch, a.shape[-2], b.shape[-1])
        self.dtype, self.device = a.dtype, a.device
        self.column_major = self.name in ROWS_BIAS
        a, b = self._operands(a, b)
        d = self.result()
        self.aux_buffer = self._aux() if self.name in AUX else None
        bias = self._bias(bias)
        self.plan = library_plan(a, b, d, bias, self.aux_buffer, float(alpha), 0.0, self.name)

    def _operands(self, a, b):
        return _c.broadcast_to(a, self.a_shape), _c.broadcast_to(b, self.b_shape)

    def result(self):
        return matrices(self.shape, self.dtype, self.device, self.column_major)

    def _aux(self):
        rows, cols = self.shape[-2:]
        return matrices(self.shape, self.dtype, self.device, self.column_major,
                        _round8(rows if self.column_major else cols))

    def _bias(self, bias):
        """The bias read (a contiguous vector of the result's dtype) or the gradient written."""
        if self.name in GRAD:
            m, n = self.shape[-2:]
            return _c.empty(m if GRAD[self.name] == "m" else n, dtype=self.dtype, device=self.device)
        if bias is None:
            return None
        bias = bias.astype(self.dtype, copy=False)
        return bias if bias.strides == (bias.itemsize,) else bias.astype(self.dtype, copy=True)

    def algorithms(self):
        return self.plan.algorithms()

    def execute(self, a, b, c, alpha, beta, inputs):
        """The result (and the aux dict) of the fused product."""
        a, b = self._operands(a, b)
        d = self.result()
        if c is not None and beta != 0:
            d[...] = c
        else:
            beta = 0.0
        aux = self.aux_buffer
        if self.name in ("dgelu", "dgelu_bgrad"):
            aux[...] = inputs["gelu_aux"]
        elif aux is not None:
            aux = self._aux()
        bias = self._bias(inputs.get("bias") if self.name in ROWS_BIAS else None)
        self.plan.execute(a, b, d, bias, aux, float(alpha), float(beta), self.name)
        out = {}
        if self.post == "mask":
            out["relu_aux"] = d > 0
        if self.name in ("gelu_aux", "gelu_aux_bias"):
            out["gelu_aux"] = aux
        if self.name in GRAD:
            out[self.name] = bias
        return d, out

    def autotune(self, a, b, inputs, iterations):
        """Times every candidate on these operands, chooses the fastest, records the choice."""
        a, b = self._operands(a, b)
        d, bias = self.result(), self._bias(inputs.get("bias") if self.name in ROWS_BIAS else None)
        aux = self.aux_buffer
        count = len(self.algorithms())
        times = []
        with Progress(f"autotuning matmul {self.name} {tuple(self.shape)} {self.dtype}", total=count) as progress:
            for i in range(count):
                progress.step(f"algorithm {i}")
                times.append(self.plan.time(a, b, d, bias, aux, 1.0, 0.0, self.name, i, iterations))
        best = min(range(len(times)), key=times.__getitem__)
        self.plan.choose(best)
        self._store(best, times)
        return times

    # ---- the choice on disk (the compile cache shared with the tile autotuner) -------------------

    def _key(self, a, b):
        cache = _c.compile_cache
        if not cache.directory:
            return None, None
        parts = (_FORMAT, self.plan.library, _device_name(self.device), self.name, str(self.dtype), repr(self.shape),
                 repr(tuple(a.strides)), repr(tuple(b.strides)), _c._get_matmul_precision(),
                 repr(self.algorithms()))
        return cache, cache.make_key(*parts)

    def _store(self, best, times):
        cache, key = self._key(*self._last)
        if cache is not None:
            cache.put("autotune", key, json.dumps({"best": best, "milliseconds": times}).encode())

    def recall(self, a, b):
        """Chooses the recorded winner of an earlier autotune(), if any; True when there was one."""
        self._last = (a, b)
        cache, key = self._key(a, b)
        raw = cache.get("autotune", key) if cache is not None else None
        try:
            best = json.loads(raw)["best"] if raw is not None else None
            if best is not None:
                self.plan.choose(int(best))
                return True
        except (ValueError, KeyError, TypeError, IndexError):
            cache.remove("autotune", key)  # not a record of ours: time again when asked
        return False
