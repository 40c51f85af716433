"""The cupric.tile operations. Each is one Python function with two meanings:

- called in interpreter mode, it runs eagerly on tiles that are cupric CPU arrays (the body below);
- met by the compiler in a kernel's source, its registered lowering builds IR instead
  (the `lower_*` function next to it), and the C++ builder checks shapes and dtypes.
"""

import inspect as _inspect

import numpy as _numpy

from .. import _cupric as _c
from .. import _dtypes as _dt
from . import _interp as I

LOWERINGS = {}  # python function -> lowering(frontend, bound arguments) -> value


def _lowered_by(lower):
    def register(fn):
        fn.__signature_cache__ = _inspect.signature(fn)
        LOWERINGS[fn] = lower
        return fn

    return register


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


# ---- block indices ---------------------------------------------------------------------------


def _lower_bid(fe, a):
    return fe.wrap(fe.b.bid(fe.int_const(a["axis"], "bid axis")))


@_lowered_by(_lower_bid)
def bid(axis=0):
    """Index of the running block along `axis` (0, 1 or 2), int32."""
    return I.Tile(_c.asarray(I.current_block().bid[int(axis)], dtype=_dt.names.int32))


def _lower_num_blocks(fe, a):
    return fe.wrap(fe.b.num_blocks(fe.int_const(a["axis"], "num_blocks axis")))


@_lowered_by(_lower_num_blocks)
def num_blocks(axis=0):
    """Number of blocks of the grid along `axis`, int32."""
    return I.Tile(_c.asarray(I.current_block().grid[int(axis)], dtype=_dt.names.int32))


# ---- loads and stores ----------------------------------------------------------------------


def _lower_load(fe, a, offsets=False):
    arr = fe.array(a["array"], "load")
    nd = fe.type(arr)[3]
    idx = [fe.val(i) for i in _as_tuple(a["offset" if offsets else "index"])]
    shape = fe.shape(a["shape"], "load shape")
    if len(idx) != nd or len(shape) != nd:
        fe.error(
            f"{'load_offset' if offsets else 'load'}: the array has {nd} dimension(s) but "
            f"{'offset' if offsets else 'index'} has {len(idx)} entries and shape has {len(shape)} "
            "(give one per dimension)"
        )
    return fe.wrap(fe.b.load(arr, idx, list(shape), fe.scalar_const(a["padding"], "padding"), offsets))


def _interp_load(array, start, shape, padding):
    shape = tuple(int(s) for s in _as_tuple(shape))
    start = tuple(int(s) for s in _as_tuple(start))
    out = _c.full(shape, _scalar(padding), dtype=array.dtype)
    w = I.window(shape, start, array.shape)
    if w is not None:
        out[w[1]] = array.array[w[0]]
    return I.Tile(out)


def _scalar(x):
    """A compile-time scalar (padding, fill value) as a Python number."""
    v = I.value(x)
    return v.item() if isinstance(v, _c.ndarray) else v


@_lowered_by(_lower_load)
def load(array, index, shape, padding=0):
    """The tile of `shape` at tile index `index` (elements index[d]*shape[d] ...); parts outside
    the array read `padding`. Shapes are compile-time and need not be powers of two."""
    shape = _as_tuple(shape)
    start = [int(i) * int(s) for i, s in zip(_as_tuple(index), shape, strict=True)]
    I.check_window("load", "tile index", _as_tuple(index), shape, start, array.shape)
    return _interp_load(array, start, shape, padding)


@_lowered_by(lambda fe, a: _lower_load(fe, a, offsets=True))
def load_offset(array, offset, shape, padding=0):
    """The tile of `shape` whose first element is array[offset] (windows may overlap or start
    outside the array: those parts read `padding`)."""
    I.check_window("load_offset", "offset", _as_tuple(offset), _as_tuple(shape), _as_tuple(offset), array.shape)
    return _interp_load(array, _as_tuple(offset), shape, padding)


def _lower_store(fe, a, offsets=False):
    arr = fe.array(a["array"], "store")
    idx = [fe.val(i) for i in _as_tuple(a["offset" if offsets else "index"])]
    fe.b.store(arr, idx, fe.val(a["tile"]), offsets)


def _interp_store(array, start, tile):
    tile = I.array(tile)
    if tile.ndim == 0:
        tile = tile.reshape((1,) * array.ndim)
    w = I.window(tuple(tile.shape), start, array.shape)
    if w is not None:
        array.array[w[0]] = tile[w[1]].astype(array.dtype)  # cupric's casts: the compiled conversions


@_lowered_by(_lower_store)
def store(array, index, tile):
    """Writes `tile` (converted to the array's dtype) at tile index `index`; parts outside the
    array are not written."""
    shape = tuple(I.array(tile).shape) or (1,) * array.ndim
    start = [int(i) * int(s) for i, s in zip(_as_tuple(index), shape, strict=True)]
    I.check_window("store", "tile index", _as_tuple(index), shape, start, array.shape)
    _interp_store(array, start, tile)


@_lowered_by(lambda fe, a: _lower_store(fe, a, offsets=True))
def store_offset(array, offset, tile):
    """Writes `tile` with its first element at array[offset]; parts outside are not written."""
    start = [int(o) for o in _as_tuple(offset)]
    shape = tuple(I.array(tile).shape) or (1,) * array.ndim
    I.check_window("store_offset", "offset", start, shape, start, array.shape)
    _interp_store(array, start, tile)


# ---- gather, scatter, atomics ------------------------------------------------------------------


def _indices(fe, x):
    return [fe.val(i) for i in _as_tuple(x)]


def _mask(fe, m):
    return -1 if m is None else fe.val(m)


@_lowered_by(
    lambda fe, a: fe.wrap(
        fe.b.gather(
            fe.array(a["array"], "gather"),
            _indices(fe, a["indices"]),
            _mask(fe, a["mask"]),
            fe.scalar_const(a["padding"], "padding"),
        )
    )
)
def gather(array, indices, mask=None, padding=0):
    """array[indices...] for index tiles (one per dimension, broadcast together); elements that
    are masked off or out of bounds read `padding`."""
    idx, ok = _checked_indices(array, indices, mask)
    pad = _c.full((), _scalar(padding), dtype=array.dtype)
    if array.array.size == 0:
        out = _c.broadcast_to(pad, tuple(ok.shape))
    else:  # read an in-bounds element where the index is not, then replace it by the padding
        safe = tuple(_c.where(ok, i, 0) for i in idx)
        out = _c.where(ok, array.array[safe], pad)
    return I.Tile(out.reshape(tuple(out.shape) or (1,)))


def _checked_indices(array, indices, mask, *more, what="gather"):
    """The index tiles (int64) and `more` broadcast together, and where they are in bounds and
    the mask is true (debug builds: an index outside where the mask is true fails)."""
    parts = [I.array(i, _dt.names.int64) for i in _as_tuple(indices)]
    if len(parts) != array.ndim:
        raise IndexError(f"the array has {array.ndim} dimension(s) but {len(parts)} index tiles were given")
    parts += [I.array(m) for m in more]
    if mask is not None:
        parts.append(I.array(mask, _dt.names.bool_))
    parts = _c.broadcast_arrays(*parts)
    ok = parts[-1] if mask is not None else _c.ones(tuple(parts[0].shape), dtype=_dt.names.bool_)
    wanted = ok
    for d, i in enumerate(parts[: array.ndim]):
        ok = ok & (i >= 0) & (i < array.shape[d])
    if I.checking_bounds() and bool(_c.any(wanted & ~ok)):
        bad = _c.flatnonzero((wanted & ~ok).reshape(-1))[0]
        index = tuple(int(p.reshape(-1)[bad]) for p in parts[: array.ndim])
        raise I.bounds_error(what, f"index {I._tuple_text(index)} is outside the array of shape "
                                   f"{I._tuple_text(array.shape)}")
    return parts[: array.ndim + len(more)], ok


def _interp_scatter(array, indices, value, mask, update, what="scatter"):
    nd = array.ndim
    parts, ok = _checked_indices(array, indices, mask, I.array(value).astype(array.dtype), what=what)
    where = tuple(p[ok] for p in parts[:nd])
    update(array.array, where, parts[nd][ok])


@_lowered_by(
    lambda fe, a: fe.b.scatter(
        fe.array(a["array"], "scatter"), _indices(fe, a["indices"]), fe.val(a["value"]), _mask(fe, a["mask"])
    )
)
def scatter(array, indices, value, mask=None):
    """array[indices...] = value where the mask is true and the index is in bounds."""
    _interp_scatter(array, indices, value, mask, lambda a, w, v: a.__setitem__(w, v))


def _occurrence_rounds(where, shape):
    """For index arrays `where` into an array of `shape`: for each element, how many earlier
    elements name the same place (0 for the first), as an int64 array, and the largest count."""
    linear = _c.zeros(tuple(where[0].shape), dtype=_dt.names.int64)
    for i, n in zip(where, shape, strict=True):
        linear = linear * n + i
    seen, rounds = {}, []
    for k in linear.tolist():
        r = seen.get(k, 0)
        rounds.append(r)
        seen[k] = r + 1
    return _c.asarray(rounds, dtype=_dt.names.int64), _builtins.max(seen.values(), default=0)


def _atomic(kind, ufunc):
    def lower(fe, a):
        fe.b.atomic(
            kind,
            fe.array(a["array"], f"atomic_{kind}"),
            _indices(fe, a["indices"]),
            fe.val(a["value"]),
            _mask(fe, a["mask"]),
        )

    def interp(array, indices, value, mask=None):
        def update(arr, where, v):
            # duplicates all apply, one after the other as atomics would: in rounds, the k-th
            # occurrence of each place in round k (a round has no duplicates)
            rounds, n = _occurrence_rounds(where, tuple(arr.shape))
            for r in range(n):
                pick = rounds == r
                w = tuple(i[pick] for i in where)
                arr[w] = ufunc(arr[w], v[pick])  # 16-bit floats: computed in float32, rounded

        _interp_scatter(array, indices, value, mask, update, what=f"atomic_{kind}")

    interp.__name__ = f"atomic_{kind}"
    interp.__doc__ = (
        f"Atomically array[indices...] = {ufunc.name}(array[indices...], value) where the mask is "
        "true and the index is in bounds (duplicates all apply)."
    )
    return _lowered_by(lower)(interp)


atomic_add = _atomic("add", _c.add)
atomic_max = _atomic("max", _c.maximum)
atomic_min = _atomic("min", _c.minimum)


# ---- creation ----------------------------------------------------------------------------------


def _default_dtype(value):
    if isinstance(value, bool):
        return _dt.names.bool_
    if isinstance(value, int):
        return _dt.names.int32
    return _dt.names.float32


def _lower_full(fe, a):
    shape = fe.shape(a["shape"], "full shape")
    value = a["fill_value"]
    dtype = a["dtype"]
    if dtype is None:
        dtype = fe.type(value.id)[1] if fe.is_value(value) else _default_dtype(value)
    return fe.wrap(fe.b.full(list(shape), fe.val(value), fe.dtype(dtype)))


@_lowered_by(_lower_full)
def full(shape, fill_value, dtype=None):
    """A tile of `shape` filled with `fill_value` (a scalar, possibly computed at run time).
    dtype defaults to float32 for floats, int32 for ints, bool for bools."""
    if dtype is None:
        v = I.value(fill_value)
        dtype = v.dtype if isinstance(v, _c.ndarray) else _default_dtype(v)
    return I.Tile(_c.full(tuple(int(n) for n in _as_tuple(shape)), _scalar(fill_value), dtype=_dt.as_dtype(dtype)))


@_lowered_by(lambda fe, a: _lower_full(fe, {"shape": a["shape"], "fill_value": 0, "dtype": a["dtype"]}))
def zeros(shape, dtype=_dt.names.float32):
    """A tile of zeros (float32 unless dtype says otherwise)."""
    return full(shape, 0, dtype)


@_lowered_by(lambda fe, a: _lower_full(fe, {"shape": a["shape"], "fill_value": 1, "dtype": a["dtype"]}))
def ones(shape, dtype=_dt.names.float32):
    """A tile of ones (float32 unless dtype says otherwise)."""
    return full(shape, 1, dtype)


def _lower_arange(fe, a):
    start, stop = a["start"], a["stop"]
    if stop is None:
        start, stop = 0, start
    return fe.wrap(
        fe.b.arange(fe.int_const(start, "arange start"), fe.int_const(stop, "arange stop"), fe.dtype(a["dtype"]))
    )


@_lowered_by(_lower_arange)
def arange(start, stop=None, dtype=_dt.names.int32):
    """[start, start+1, ..., stop-1] (compile-time bounds; arange(n) is 0..n-1), int32 by default."""
    if stop is None:
        start, stop = 0, start
    return I.Tile(_c.arange(int(start), int(stop), dtype=_dt.as_dtype(dtype)))


# ---- elementwise -----------------------------------------------------------------------------


@_lowered_by(lambda fe, a: fe.wrap(fe.b.where(fe.val(a["condition"]), fe.val(a["x"]), fe.val(a["y"]))))
def where(condition, x, y):
    """x where condition is true, else y (broadcast together, NumPy promotion)."""
    return I.Tile(_c.where(I.value(condition), I.value(x), I.value(y)))


@_lowered_by(lambda fe, a: fe.wrap(fe.b.cast(fe.val(a["x"]), fe.dtype(a["dtype"]))))
def astype(x, dtype):
    """x converted to `dtype` (NumPy's casting)."""
    return I.Tile(I.array(x).astype(_dt.as_dtype(dtype)))


def make_ufunc(name):
    """ct.<name> for a ufunc of the table: elementwise with broadcasting and NumPy promotion."""
    cu_fn = getattr(_c, name)

    def lower(fe, a):
        return fe.ufunc(name, list(a["args"]))

    def fn(*args):
        return I.Tile(cu_fn(*(I.value(a) for a in args)))

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (cupric's ufunc table; 16-bit floats compute in float32)."
    LOWERINGS[fn] = lower
    fn.__signature_cache__ = _inspect.Signature([_inspect.Parameter("args", _inspect.Parameter.VAR_POSITIONAL)])
    return _exp2(fn) if name == "exp2" else fn


def _exp2(table_fn):
    """ct.exp2 with cuTile's flush_to_zero option (the fast form for softmax's exponentials)."""

    def lower(fe, a):
        ftz = fe.const(a["flush_to_zero"], "exp2's flush_to_zero")
        if not isinstance(ftz, (bool, _numpy.bool_)):
            fe.error(f"exp2's flush_to_zero must be True or False, got {ftz!r}")
        return fe.wrap(fe.b.ufunc("exp2", [fe.val(a["x"])], bool(ftz)))

    @_lowered_by(lower)
    def exp2(x, flush_to_zero=False):
        """2**x elementwise. flush_to_zero=True: results below the smallest normal number (x < -126
        in float32) are 0 — on the GPU one ex2.approx.ftz instruction (about 2 ulp) instead of four
        that keep subnormal results; what softmax and attention want."""
        r = table_fn(x)
        if flush_to_zero:
            v = I.value(r)
            # the rule of the compute type (float32 for 16-bit floats, whose results round after)
            tiny = _numpy.finfo(_numpy.float64 if _numpy.dtype(str(v.dtype)).itemsize == 8 else _numpy.float32).tiny
            r = I.Tile(_c.where(v < tiny, _c.zeros((), dtype=v.dtype), v))
        return r

    return exp2


# ---- shapes ------------------------------------------------------------------------------------


@_lowered_by(lambda fe, a: fe.wrap(fe.b.broadcast_to(fe.val(a["x"]), list(fe.shape(a["shape"], "broadcast_to shape")))))
def broadcast_to(x, shape):
    """x broadcast to `shape` (NumPy rules)."""
    return I.Tile(_c.broadcast_to(I.array(x), _as_tuple(shape)).copy())


@_lowered_by(lambda fe, a: fe.wrap(fe.b.reshape(fe.val(a["x"]), list(fe.shape(a["shape"], "reshape shape", allow=-1)))))
def reshape(x, shape):
    """The same elements (C order) in a new shape; one extent may be -1."""
    return I.Tile(_c.reshape(I.array(x), _as_tuple(shape)))


@_lowered_by(lambda fe, a: fe.wrap(fe.b.permute(fe.val(a["x"]), list(fe.shape(a["axes"], "permute axes", allow=None)))))
def permute(x, axes):
    """Axes reordered: result dim i is x's dim axes[i]."""
    return I.Tile(_c.permute_dims(I.array(x), _as_tuple(axes)))


def _lower_transpose(fe, a):
    v = fe.val(a["x"])
    nd = len(fe.type(v)[2])
    axes = tuple(range(nd))[::-1] if a["axes"] is None else fe.shape(a["axes"], "transpose axes", allow=None)
    return fe.wrap(fe.b.permute(v, list(axes)))


@_lowered_by(_lower_transpose)
def transpose(x, axes=None):
    """x with its axes reversed (or ordered as `axes`)."""
    x = I.array(x)
    return I.Tile(_c.permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None else _as_tuple(axes)))


@_lowered_by(lambda fe, a: fe.wrap(fe.b.expand_dims(fe.val(a["x"]), fe.int_const(a["axis"], "expand_dims axis"))))
def expand_dims(x, axis):
    """x with a new extent-1 axis at `axis`."""
    return I.Tile(_c.expand_dims(I.array(x), axis=int(axis)))


# ---- reductions and scans ------------------------------------------------------------------------


def _axis(axis):
    return None if axis is None else tuple(int(a) for a in axis) if isinstance(axis, (tuple, list)) else int(axis)


def _reduce_interp(kind, x, axis, keepdims, dtype):
    x = I.array(x, None if dtype is None else _dt.as_dtype(dtype))
    half = x.dtype.name in I.HALF  # accumulates in float32, as compiled code does
    r = _c._reduce(kind, x.astype(_dt.names.float32) if half else x, axis=_axis(axis), keepdims=bool(keepdims))
    return I.Tile(r.astype(x.dtype) if half and r.dtype == _dt.names.float32 else r)


def _reduction(row):
    """The tile function of a row of the reduction table (include/cupric/reduction_table.def)."""
    kind, with_dtype = row["name"], row["acc"] in ("sum", "product")

    def lower(fe, a):
        v = fe.val(a["x"])
        if a.get("dtype") is not None:
            v = fe.b.cast(v, fe.dtype(a["dtype"]))
        return fe.wrap(fe.b.reduce(kind, v, fe.axis(a["axis"]), bool(fe.const(a["keepdims"], "keepdims"))))

    if with_dtype:

        def fn(x, axis=None, keepdims=False, dtype=None):
            return _reduce_interp(kind, x, axis, keepdims, dtype)
    else:

        def fn(x, axis=None, keepdims=False):
            return _reduce_interp(kind, x, axis, keepdims, None)

    fn.__name__ = fn.__qualname__ = kind  # (the qualname keys kernels that capture it)
    fn.__doc__ = f"{kind} over `axis` (all axes when None), keeping it as extent 1 with keepdims. " + (
        "Small integers widen as NumPy's; 16-bit floats accumulate in float32."
        if with_dtype
        else {"propagate": "NaN propagates.", "skip": "NaN is skipped."}.get(row["nan"], "")
    )
    return _lowered_by(lower)(fn)


# every row of the reduction table; sum, prod, max and min are cupric.tile's names for theirs
reductions = {row["name"]: _reduction(row) for row in _c._reduction_table()[0]}
sum = reductions["sum"]  # noqa: A001
prod = reductions["prod"]
max = reductions["max"]  # noqa: A001
min = reductions["min"]  # noqa: A001


def _argreduction(kind, cu_fn):
    def lower(fe, a):
        return fe.wrap(
            fe.b.argreduce(kind, fe.val(a["x"]), fe.axis(a["axis"]), bool(fe.const(a["keepdims"], "keepdims")))
        )

    def fn(x, axis=None, keepdims=False):
        x = I.array(x)
        if x.dtype.name in I.HALF:
            x = x.astype(_dt.names.float32)
        return I.Tile(cu_fn(x, axis=_axis(axis), keepdims=bool(keepdims)).astype(_dt.names.int32))

    fn.__name__ = fn.__qualname__ = kind
    fn.__doc__ = f"Index of the {kind[3:]}imum along `axis` (first one on ties; NaN wins), int32."
    return _lowered_by(lower)(fn)


argmax = _argreduction("argmax", _c.argmax)
argmin = _argreduction("argmin", _c.argmin)


def _scan(kind, cu_fn):
    def lower(fe, a):
        v = fe.val(a["x"])
        axis = fe.axis(a["axis"])
        if axis is None:
            v = fe.b.reshape(v, [-1])
            axis = 0
        return fe.wrap(fe.b.scan(kind, v, axis))

    def fn(x, axis=None):
        x = I.array(x)
        half = x.dtype.name in I.HALF  # a float32 running value, rounded at the end (as compiled code)
        r = cu_fn(x.astype(_dt.names.float32) if half else x, axis=_axis(axis))
        return I.Tile(r.astype(x.dtype) if half else r)

    fn.__name__ = fn.__qualname__ = kind
    fn.__doc__ = f"Running {kind[3:]} along `axis` (the flattened tile when None); dtypes as sum/prod."
    return _lowered_by(lower)(fn)


cumsum = _scan("cumsum", _c.cumsum)
cumprod = _scan("cumprod", _c.cumprod)


# ---- matrix products -------------------------------------------------------------------------------

_ACC = {
    "float8_e4m3fn": _dt.names.float32,
    "float8_e5m2": _dt.names.float32,
    "float16": _dt.names.float32,
    "bfloat16": _dt.names.float32,
    "float32": _dt.names.float32,
    "float64": _dt.names.float64,
    "int8": _dt.names.int32,
    "uint8": _dt.names.int32,
}


def _interp_mma(a, b, acc):
    a, b = I.array(a), I.array(b)
    acc_t = _ACC.get(a.dtype.name)
    if acc_t is None:
        raise TypeError(
            "mma: inputs must be float8_e4m3fn, float8_e5m2, float16, bfloat16, float32, float64, int8 or uint8, "
            f"got {a.dtype}"
        )
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"mma: expected a (M, K) and b (K, N) tiles, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    # cupric has no matrix product yet: (M, K, 1) * (1, K, N) summed over K, in the accumulator type
    products = _c.expand_dims(a.astype(acc_t), axis=2) * _c.expand_dims(b.astype(acc_t), axis=0)
    r = _c.sum(products, axis=1, dtype=acc_t)
    return I.Tile(r if acc is None else I.value(acc) + r)


@_lowered_by(
    lambda fe, a: fe.wrap(
        fe.b.mma(fe.val(a["a"]), fe.val(a["b"]), fe.val(a["acc"]), bool(fe.const(a["allow_tf32"], "allow_tf32")))
    )
)
def mma(a, b, acc, allow_tf32=False):
    """acc + a @ b for a (M, K), b (K, N), acc (M, N): float8 (e4m3fn / e5m2), float16, bfloat16 and
    float32 inputs accumulate in float32 (acc must be float32), float64 in float64, int8/uint8 in
    int32. fp8 products run on Hopper's fp8 tensor cores where b is given as (N, K)
    (`ct.transpose` of an (N, K) load, as torch._scaled_mm takes it); per-tensor scales are the
    caller's multiply of the float32 result."""
    return _interp_mma(a, b, acc)


@_lowered_by(
    lambda fe, a: fe.wrap(fe.b.matmul(fe.val(a["a"]), fe.val(a["b"]), bool(fe.const(a["allow_tf32"], "allow_tf32"))))
)
def matmul(a, b, allow_tf32=False):
    """a @ b in mma's accumulator dtype (float32 for 16-bit and 32-bit float inputs)."""
    return _interp_mma(a, b, None)


# ---- debugging ---------------------------------------------------------------------------------


def _lower_print(fe, a):
    parts = list(a["args"])
    prefix = ""
    while parts and isinstance(parts[0], str):
        prefix += ("" if not prefix else " ") + parts.pop(0)
    fe.b.print(prefix, [fe.val(p) for p in parts])


@_lowered_by(_lower_print)
def print(*args):  # noqa: A001
    """Prints from each block (compiled kernels: only with debug=True). Leading strings are a prefix."""
    blk = I.current_block()
    builtins_print(f"[block {', '.join(str(b) for b in blk.bid)}]", *args)


@_lowered_by(lambda fe, a: fe.b.assert_(fe.val(a["condition"]), str(fe.const(a["message"], "assert_ message"))))
def assert_(condition, message=""):
    """Fails the launch with AssertionError where `condition` is false (compiled kernels: debug=True)."""
    if not bool(_c.all(I.array(condition))):
        blk = I.current_block()
        raise AssertionError(f"{message} (block {', '.join(str(b) for b in blk.bid)})")


import builtins as _builtins  # noqa: E402

builtins_print = _builtins.print


def static_range(*args):
    """range() unrolled at compile time (bounds must be compile-time constants)."""
    return range(*args)


# ---- the interpreter's tile methods --------------------------------------------------------------
# t.sum(...), t.reshape(...), a @ b in interpreted kernels are the ct.* functions above, attached to
# the interpreter's Tile here: the interpreter sits below this module and does not import it.


def _tile_method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = fn.__name__
    return method


for _name in ("permute", "sum", "prod", "max", "min", "argmax", "argmin", "cumsum", "cumprod", "expand_dims"):
    setattr(I.Tile, _name, _tile_method(globals()[_name]))
del _name
I.Tile.reshape = lambda self, *shape: reshape(self, shape[0] if len(shape) == 1 else shape)
I.Tile.transpose = lambda self, *axes: transpose(self, (axes[0] if len(axes) == 1 else axes) or None)
I.Tile.__matmul__ = lambda self, other: matmul(self, other)
I.Tile.__rmatmul__ = lambda self, other: matmul(other, self)
