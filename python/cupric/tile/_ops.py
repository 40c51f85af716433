"""The cupric.tile operations. Each is one Python function with two meanings:

- called in interpreter mode, it runs eagerly on NumPy tiles (the body below);
- met by the compiler in a kernel's source, its registered lowering builds IR instead
  (the `lower_*` function next to it), and the C++ builder checks shapes and dtypes.
"""

import inspect as _inspect

import numpy as np

from .. import _cupric as _c
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
    return np.int32(I.current_block().bid[axis])


def _lower_num_blocks(fe, a):
    return fe.wrap(fe.b.num_blocks(fe.int_const(a["axis"], "num_blocks axis")))


@_lowered_by(_lower_num_blocks)
def num_blocks(axis=0):
    """Number of blocks of the grid along `axis`, int32."""
    return np.int32(I.current_block().grid[axis])


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
    out = np.full(shape, padding, dtype=array.np.dtype)
    w = I.window(shape, start, array.shape)
    if w is not None:
        out[w[1]] = array.np[w[0]]
    return out.view(I.Tile)


@_lowered_by(_lower_load)
def load(array, index, shape, padding=0):
    """The tile of `shape` at tile index `index` (elements index[d]*shape[d] ...); parts outside
    the array read `padding`. Shapes are compile-time and need not be powers of two."""
    shape = _as_tuple(shape)
    return _interp_load(array, [int(i) * int(s) for i, s in zip(_as_tuple(index), shape, strict=True)], shape, padding)


@_lowered_by(lambda fe, a: _lower_load(fe, a, offsets=True))
def load_offset(array, offset, shape, padding=0):
    """The tile of `shape` whose first element is array[offset] (windows may overlap or start
    outside the array: those parts read `padding`)."""
    return _interp_load(array, _as_tuple(offset), shape, padding)


def _lower_store(fe, a, offsets=False):
    arr = fe.array(a["array"], "store")
    idx = [fe.val(i) for i in _as_tuple(a["offset" if offsets else "index"])]
    fe.b.store(arr, idx, fe.val(a["tile"]), offsets)


def _interp_store(array, start, tile):
    tile = np.asarray(tile)
    if tile.ndim == 0:
        tile = tile.reshape((1,) * array.ndim)
    w = I.window(tile.shape, start, array.shape)
    if w is not None:
        array.np[w[0]] = tile[w[1]].astype(array.np.dtype)


@_lowered_by(_lower_store)
def store(array, index, tile):
    """Writes `tile` (converted to the array's dtype) at tile index `index`; parts outside the
    array are not written."""
    shape = np.shape(tile) or (1,) * array.ndim
    _interp_store(array, [int(i) * int(s) for i, s in zip(_as_tuple(index), shape, strict=True)], tile)


@_lowered_by(lambda fe, a: _lower_store(fe, a, offsets=True))
def store_offset(array, offset, tile):
    """Writes `tile` with its first element at array[offset]; parts outside are not written."""
    _interp_store(array, [int(o) for o in _as_tuple(offset)], tile)


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
    idx = np.broadcast_arrays(
        *[np.asarray(i, dtype=np.int64) for i in _as_tuple(indices)],
        *([] if mask is None else [np.asarray(mask, dtype=bool)]),
    )
    nd = array.ndim
    ok = np.ones(idx[0].shape, dtype=bool) if mask is None else idx[nd].copy()
    for d in range(nd):
        ok &= (idx[d] >= 0) & (idx[d] < array.shape[d])
    out = np.full(idx[0].shape, padding, dtype=array.np.dtype)
    out[ok] = array.np[tuple(i[ok] for i in idx[:nd])]
    return out.reshape(out.shape or (1,)).view(I.Tile)


def _interp_scatter(array, indices, value, mask, update):
    nd = array.ndim
    parts = [np.asarray(i, dtype=np.int64) for i in _as_tuple(indices)]
    parts.append(np.asarray(value).astype(array.np.dtype))
    if mask is not None:
        parts.append(np.asarray(mask, dtype=bool))
    parts = np.broadcast_arrays(*parts)
    ok = np.ones(parts[0].shape, dtype=bool) if mask is None else parts[nd + 1]
    for d in range(nd):
        ok = ok & (parts[d] >= 0) & (parts[d] < array.shape[d])
    where = tuple(p[ok] for p in parts[:nd])
    update(array.np, where, parts[nd][ok])


@_lowered_by(
    lambda fe, a: fe.b.scatter(
        fe.array(a["array"], "scatter"), _indices(fe, a["indices"]), fe.val(a["value"]), _mask(fe, a["mask"])
    )
)
def scatter(array, indices, value, mask=None):
    """array[indices...] = value where the mask is true and the index is in bounds."""
    _interp_scatter(array, indices, value, mask, lambda a, w, v: a.__setitem__(w, v))


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
            if I.is_half(arr.dtype):  # element by element, so that duplicate indices all apply
                for k in range(len(v)):
                    idx = tuple(w[k] for w in where)
                    arr[idx] = ufunc(np.float32(arr[idx]), np.float32(v[k])).astype(arr.dtype)
            else:
                ufunc.at(arr, where, v)

        _interp_scatter(array, indices, value, mask, update)

    interp.__name__ = f"atomic_{kind}"
    interp.__doc__ = (
        f"Atomically array[indices...] = {ufunc.__name__}(array[indices...], value) where the mask is "
        "true and the index is in bounds (duplicates all apply)."
    )
    return _lowered_by(lower)(interp)


atomic_add = _atomic("add", np.add)
atomic_max = _atomic("max", np.maximum)
atomic_min = _atomic("min", np.minimum)


# ---- creation ----------------------------------------------------------------------------------


def _default_dtype(value):
    if isinstance(value, bool):
        return _c.bool_
    if isinstance(value, int):
        return _c.int32
    return _c.float32


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
        dtype = _default_dtype(fill_value) if not isinstance(fill_value, np.generic) else fill_value.dtype
    return np.full(_as_tuple(shape), fill_value, dtype=I.np_dtype(dtype)).view(I.Tile)


@_lowered_by(lambda fe, a: _lower_full(fe, {"shape": a["shape"], "fill_value": 0, "dtype": a["dtype"]}))
def zeros(shape, dtype=_c.float32):
    """A tile of zeros (float32 unless dtype says otherwise)."""
    return full(shape, 0, dtype)


@_lowered_by(lambda fe, a: _lower_full(fe, {"shape": a["shape"], "fill_value": 1, "dtype": a["dtype"]}))
def ones(shape, dtype=_c.float32):
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
def arange(start, stop=None, dtype=_c.int32):
    """[start, start+1, ..., stop-1] (compile-time bounds; arange(n) is 0..n-1), int32 by default."""
    if stop is None:
        start, stop = 0, start
    return np.arange(start, stop, dtype=I.np_dtype(dtype)).view(I.Tile)


# ---- elementwise -----------------------------------------------------------------------------


@_lowered_by(lambda fe, a: fe.wrap(fe.b.where(fe.val(a["condition"]), fe.val(a["x"]), fe.val(a["y"]))))
def where(condition, x, y):
    """x where condition is true, else y (broadcast together, NumPy promotion)."""
    return I.tile(np.where(condition, x, y))


@_lowered_by(lambda fe, a: fe.wrap(fe.b.cast(fe.val(a["x"]), fe.dtype(a["dtype"]))))
def astype(x, dtype):
    """x converted to `dtype` (NumPy's casting)."""
    if isinstance(x, np.ndarray):
        return I.tile(x.astype(I.np_dtype(dtype)))
    return I.np_dtype(dtype).type(x)


def make_ufunc(name):
    """ct.<name> for a ufunc of the table: elementwise with broadcasting and NumPy promotion."""
    np_fn = getattr(np, name)

    def lower(fe, a):
        return fe.ufunc(name, list(a["args"]))

    def fn(*args):
        return I.tile(np_fn(*args))

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (cupric's ufunc table; 16-bit floats compute in float32)."
    LOWERINGS[fn] = lower
    fn.__signature_cache__ = _inspect.Signature([_inspect.Parameter("args", _inspect.Parameter.VAR_POSITIONAL)])
    return fn


# ---- shapes ------------------------------------------------------------------------------------


@_lowered_by(lambda fe, a: fe.wrap(fe.b.broadcast_to(fe.val(a["x"]), list(fe.shape(a["shape"], "broadcast_to shape")))))
def broadcast_to(x, shape):
    """x broadcast to `shape` (NumPy rules)."""
    return np.broadcast_to(x, _as_tuple(shape)).copy().view(I.Tile)


@_lowered_by(lambda fe, a: fe.wrap(fe.b.reshape(fe.val(a["x"]), list(fe.shape(a["shape"], "reshape shape", allow=-1)))))
def reshape(x, shape):
    """The same elements (C order) in a new shape; one extent may be -1."""
    return np.reshape(x, _as_tuple(shape)).view(I.Tile)


@_lowered_by(lambda fe, a: fe.wrap(fe.b.permute(fe.val(a["x"]), list(fe.shape(a["axes"], "permute axes", allow=None)))))
def permute(x, axes):
    """Axes reordered: result dim i is x's dim axes[i]."""
    return np.transpose(x, _as_tuple(axes)).copy().view(I.Tile)


def _lower_transpose(fe, a):
    v = fe.val(a["x"])
    nd = len(fe.type(v)[2])
    axes = tuple(range(nd))[::-1] if a["axes"] is None else fe.shape(a["axes"], "transpose axes", allow=None)
    return fe.wrap(fe.b.permute(v, list(axes)))


@_lowered_by(_lower_transpose)
def transpose(x, axes=None):
    """x with its axes reversed (or ordered as `axes`)."""
    return np.transpose(x, axes).copy().view(I.Tile)


@_lowered_by(lambda fe, a: fe.wrap(fe.b.expand_dims(fe.val(a["x"]), fe.int_const(a["axis"], "expand_dims axis"))))
def expand_dims(x, axis):
    """x with a new extent-1 axis at `axis`."""
    return np.expand_dims(x, axis).view(I.Tile)


# ---- reductions and scans ------------------------------------------------------------------------


def _reduce_interp(np_fn, x, axis, keepdims, dtype):
    x = np.asarray(x)
    if dtype is not None:
        x = x.astype(I.np_dtype(dtype))
    half = I.is_half(x.dtype)
    r = np_fn(x.astype(np.float32) if half else x, axis=axis, keepdims=keepdims)
    if half:
        r = np.asarray(r).astype(x.dtype)
    return I.tile(r) if np.ndim(r) else np.asarray(r)[()]


def _reduction(kind, np_fn):
    def lower(fe, a):
        v = fe.val(a["x"])
        if a.get("dtype") is not None:
            v = fe.b.cast(v, fe.dtype(a["dtype"]))
        return fe.wrap(fe.b.reduce(kind, v, fe.axis(a["axis"]), bool(fe.const(a["keepdims"], "keepdims"))))

    if kind in ("sum", "prod"):

        def fn(x, axis=None, keepdims=False, dtype=None):
            return _reduce_interp(np_fn, x, axis, keepdims, dtype)
    else:

        def fn(x, axis=None, keepdims=False):
            return _reduce_interp(np_fn, x, axis, keepdims, None)

    fn.__name__ = kind
    fn.__doc__ = f"{kind} over `axis` (all axes when None), keeping it as extent 1 with keepdims. " + (
        "Small integers widen as NumPy's; 16-bit floats accumulate in float32."
        if kind in ("sum", "prod")
        else "NaN propagates."
    )
    return _lowered_by(lower)(fn)


sum = _reduction("sum", np.sum)  # noqa: A001
prod = _reduction("prod", np.prod)
max = _reduction("max", np.max)  # noqa: A001
min = _reduction("min", np.min)  # noqa: A001


def _argreduction(kind, np_fn):
    def lower(fe, a):
        return fe.wrap(
            fe.b.argreduce(kind, fe.val(a["x"]), fe.axis(a["axis"]), bool(fe.const(a["keepdims"], "keepdims")))
        )

    def fn(x, axis=None, keepdims=False):
        x = np.asarray(x)
        if I.is_half(x.dtype):
            x = x.astype(np.float32)
        r = np_fn(x, axis=axis, keepdims=keepdims).astype(np.int32)
        return I.tile(r) if np.ndim(r) else np.int32(r)

    fn.__name__ = kind
    fn.__doc__ = f"Index of the {kind[3:]}imum along `axis` (first one on ties; NaN wins), int32."
    return _lowered_by(lower)(fn)


argmax = _argreduction("argmax", np.argmax)
argmin = _argreduction("argmin", np.argmin)


def _scan(kind, np_fn):
    def lower(fe, a):
        v = fe.val(a["x"])
        axis = fe.axis(a["axis"])
        if axis is None:
            v = fe.b.reshape(v, [-1])
            axis = 0
        return fe.wrap(fe.b.scan(kind, v, axis))

    def fn(x, axis=None):
        x = np.asarray(x)
        half = I.is_half(x.dtype)
        r = np_fn(x.astype(np.float32) if half else x, axis=axis)
        return I.tile(r.astype(x.dtype) if half else r)

    fn.__name__ = kind
    fn.__doc__ = f"Running {kind[3:]} along `axis` (the flattened tile when None); dtypes as sum/prod."
    return _lowered_by(lower)(fn)


cumsum = _scan("cumsum", np.cumsum)
cumprod = _scan("cumprod", np.cumprod)


# ---- matrix products -------------------------------------------------------------------------------

_ACC = {
    "float16": np.float32,
    "bfloat16": np.float32,
    "float32": np.float32,
    "float64": np.float64,
    "int8": np.int32,
    "uint8": np.int32,
}


def _interp_mma(a, b, acc):
    a, b = np.asarray(a), np.asarray(b)
    acc_t = _ACC.get(a.dtype.name)
    if acc_t is None:
        raise TypeError(f"mma: inputs must be float16, bfloat16, float32, float64, int8 or uint8, got {a.dtype}")
    r = a.astype(acc_t) @ b.astype(acc_t)
    return I.tile(r if acc is None else np.asarray(acc) + r)


@_lowered_by(
    lambda fe, a: fe.wrap(
        fe.b.mma(fe.val(a["a"]), fe.val(a["b"]), fe.val(a["acc"]), bool(fe.const(a["allow_tf32"], "allow_tf32")))
    )
)
def mma(a, b, acc, allow_tf32=False):
    """acc + a @ b for a (M, K), b (K, N), acc (M, N): float16/bfloat16/float32 inputs
    accumulate in float32 (acc must be float32), float64 in float64, int8/uint8 in int32."""
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
    if not np.all(condition):
        blk = I.current_block()
        raise AssertionError(f"{message} (block {', '.join(str(b) for b in blk.bid)})")


import builtins as _builtins  # noqa: E402

builtins_print = _builtins.print


def static_range(*args):
    """range() unrolled at compile time (bounds must be compile-time constants)."""
    return range(*args)
