"""The CUDA array backend on a GPU (src/backend/cuda), with the CPU backend as the oracle: every
kernel path (vector-contiguous, scalar tail, misaligned, strided, broadcast, scalar by value,
where=), casts between all dtypes, fills, arange, random streams bit-identical to the CPU's,
reductions over every axis layout (rows, columns, full, split into two passes), arg-reductions,
scans, gather/scatter, transfers and the asynchronous error path. Skipped without a GPU."""

import cupric as cu
import numpy as np
import pytest

pytestmark = pytest.mark.gpu

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
          "float64", "complex64", "complex128"]
TOL = {"float16": (2e-3, 1e-3), "float32": (2e-5, 1e-6), "float64": (1e-12, 1e-14), "complex64": (2e-5, 1e-6),
       "complex128": (1e-12, 1e-14)}


def rand(dtype, shape, seed=0, low=-50, high=50):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(low, info.min), min(high, info.max), size=shape, endpoint=True).astype(dt)
    a = rng.uniform(low, high, size=shape)
    if dt.kind == "c":
        a = a + 1j * rng.uniform(low, high, size=shape)
    return a.astype(dt)


def on_both(a):
    return cu.asarray(a, device="cpu"), cu.asarray(a, device="cuda")


def same(gpu, cpu, tol=None, exact=False):
    """gpu (a cuda array) equals cpu (a cupric CPU array or NumPy array): dtype, shape, values."""
    assert isinstance(gpu, cu.ndarray) and gpu.device == "cuda:0"
    g = np.asarray(gpu)
    c = np.asarray(cpu)
    assert g.dtype == c.dtype and g.shape == c.shape, (g.dtype, c.dtype, g.shape, c.shape)
    if c.dtype.kind in "fc" and not exact:
        rtol, atol = tol or TOL[c.dtype.name]
        np.testing.assert_allclose(g, c, rtol=rtol, atol=atol, equal_nan=True)
    elif c.dtype.kind in "fc":
        np.testing.assert_array_equal(g, c)  # NaN positions must agree too
    else:
        np.testing.assert_array_equal(g, c)


# ---- transfers -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_transfers_round_trip(dtype):
    a = rand(dtype, (33, 65))
    x = cu.asarray(a, device="cuda")
    assert x.device == "cuda:0"
    assert np.array_equal(np.asarray(x), a) and np.array_equal(x.get(), a)
    assert np.array_equal(np.asarray(x.to_device("cpu")), a)
    assert np.array_equal(np.asarray(cu.asarray(a[::-3, 1::2], device="cuda")), a[::-3, 1::2])
    big = rand(dtype, (1 << 21,), seed=1)  # 2-32 MB
    assert np.array_equal(np.asarray(cu.asarray(big, device="cuda")), big)


def test_device_to_device_views_and_copies():
    a = rand("float32", (40, 50))
    x = cu.asarray(a, device="cuda")
    same(x.T.copy(), a.T, exact=True)                       # strided cast kernel (transpose copy)
    same(x[::-2, 3:17:3].copy(), a[::-2, 3:17:3], exact=True)
    same(cu.reshape(x.T, (-1,)), a.T.reshape(-1), exact=True)
    same(cu.concatenate([x, x[:5]]), np.concatenate([a, a[:5]]), exact=True)
    same(x[:, ::-1].copy(), a[:, ::-1], exact=True)
    same(cu.stack([x[0], x[1]]), np.stack([a[0], a[1]]), exact=True)


@pytest.mark.parametrize("shape", [(40, 50), (1000, 333), (33, 70000), (31, 100)])
@pytest.mark.parametrize("src,dst", [("float32", "float32"), ("float64", "float16"), ("complex128", "complex64"),
                                     ("int8", "float64"), ("bool", "int16")])
def test_transposed_copies(shape, src, dst):  # the tiled transpose kernel (and its fallbacks)
    a = rand(src, shape, 21)
    xc, xg = on_both(a)
    same(xg.T.copy(), xc.T.copy(), exact=True)
    same(xg[::-1].T.copy(), xc[::-1].T.copy(), exact=True)
    same(xg.T.astype(dst), xc.T.astype(dst), exact=True)
    out_c = cu.empty(shape[::-1], dtype=dst, device="cpu")
    out_g = cu.empty(shape[::-1], dtype=dst, device="cuda")
    out_c[...] = xc.T
    out_g[...] = xg.T
    same(out_g, out_c, exact=True)


# ---- elementwise -----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 4, 5, 1023, 1025, (1 << 20) + 3])
def test_contiguous_sizes_and_tails(n):
    a, b = rand("float32", (n,), 1), rand("float32", (n,), 2)
    (xc, xg), (yc, yg) = on_both(a), on_both(b)
    same(2 * xg + yg, 2 * xc + yc)
    same(cu.sqrt(xg * xg + yg * yg) * 0.5 + cu.sin(xg), cu.sqrt(xc * xc + yc * yc) * 0.5 + cu.sin(xc))
    same(xg < yg, xc < yc)
    same(xg[1:] - yg[:-1], xc[1:] - yc[:-1])  # misaligned: the scalar contiguous kernel


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "float16", "float32", "float64", "complex64"])
def test_binary_paths(dtype):
    a, b = rand(dtype, (37, 41), 3, low=1, high=20), rand(dtype, (37, 41), 4, low=1, high=20)
    (xc, xg), (yc, yg) = on_both(a), on_both(b)
    same(xg + yg, xc + yc)
    same(xg * yg, xc * yc)
    same(xg[::2, ::-1] - yg[::-2, :], xc[::2, ::-1] - yc[::-2, :])    # strided
    same(xg.T * yg.T, xc.T * yc.T)
    same(xg[:, :1] + yg[0], xc[:, :1] + yc[0])                         # broadcast both ways
    same(xg + yg[3, 4], xc + yc[3, 4])                                 # a 0-d device operand
    same(xg * 3, xc * 3)                                               # Python scalars by value
    same(7 - xg, 7 - xc)
    same(xg / yg, xc / yc)
    same(cu.maximum(xg, yg), cu.maximum(xc, yc))
    same(xg == yg, xc == yc)


def test_mixed_dtypes_convert_in_the_kernel():
    a, b = rand("int8", (100,), 5), rand("float32", (100,), 6)
    (xc, xg), (yc, yg) = on_both(a), on_both(b)
    same(xg + yg, xc + yc)
    same(xg * 2.5, xc * 2.5)
    i, j = on_both(rand("uint8", (50,), 7))[1], rand("int64", (50,), 8)
    same(i + cu.asarray(j, device="cuda"), np.asarray(i.to_device("cpu")).astype(np.int64) + j, exact=True)
    out_c = cu.zeros(100, dtype=cu.float64, device="cpu")
    out_g = cu.zeros(100, dtype=cu.float64, device="cuda")
    cu.multiply(xc, yc, out=out_c)
    cu.multiply(xg, yg, out=out_g)
    same(out_g, out_c)


def test_where_and_inplace():
    a, b = rand("float32", (64, 33), 9), rand("float32", (64, 33), 10)
    (xc, xg), (yc, yg) = on_both(a), on_both(b)
    mc, mg = on_both(a > 0)
    oc, og = on_both(b.copy())
    cu.add(xc, yc, out=oc, where=mc)
    cu.add(xg, yg, out=og, where=mg)
    same(og, oc, exact=True)
    cu.add(xg, 1.0, out=og, where=False)
    same(og, oc, exact=True)
    xg += 1
    xc += 1
    xg[::2] *= yg[::2]
    xc[::2] *= yc[::2]
    same(xg, xc)


@pytest.mark.parametrize("dtype", ["bool", "int32", "float16", "float32", "float64"])
@pytest.mark.parametrize("name", ["negative", "absolute", "sqrt", "exp", "log", "sin", "floor", "isnan", "isfinite",
                                  "logical_not", "square", "sign"])
def test_unary(name, dtype):
    a = rand(dtype, (129,), 11, low=1, high=9)
    f = getattr(cu, name)
    xc, xg = on_both(a)
    try:
        expected = f(xc)
    except TypeError:
        with pytest.raises(TypeError):
            f(xg)
        return
    same(f(xg), expected)
    same(f(xg[::-3]), f(xc[::-3]))


def test_special_values_agree():
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, 3.5, -2.5, 1e30], dtype=np.float32)
    xc, xg = on_both(a)
    for f in (cu.sqrt, cu.exp, cu.log, cu.floor, cu.sign, cu.isnan, cu.isinf, cu.signbit, cu.abs):
        same(f(xg), f(xc))
    for g in (cu.maximum, cu.minimum, cu.fmax, cu.fmin, cu.add, cu.divide, cu.floor_divide, cu.remainder):
        same(g(xg, xg[::-1]), g(xc, xc[::-1]))


# ---- casts, fill, arange ---------------------------------------------------------------------------


@pytest.mark.parametrize("src", DTYPES)
def test_casts_between_every_pair(src):
    a = rand(src, (17, 13), 12, low=-300, high=300)
    if np.dtype(src).kind == "f":
        a.flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 1e10, -3.5]
    xc, xg = on_both(a)
    for dst in DTYPES:
        same(xg.astype(dst), xc.astype(dst), exact=True)
        same(xg.T.astype(dst), xc.T.astype(dst), exact=True)


def test_bfloat16_agrees_with_the_cpu():
    # NumPy has no bfloat16: both sides are compared through float32 (exact: bfloat16 -> float32 is exact).
    # float16 kernels are built first, in the same process, so that a kernel-name clash between the two
    # 16-bit float types would show.
    a = rand("float32", (33, 17), 3, low=-20, high=20)
    a.flat[:5] = [np.nan, np.inf, -np.inf, -0.0, 3e38]
    xc, xg = on_both(a)
    for half in ("float16", "bfloat16"):
        hc, hg = xc.astype(half), xg.astype(half)
        f32 = "float32"
        same(hg.astype(f32), hc.astype(f32), exact=True)
        same((hg + hg.T.T).astype(f32), (hc + hc).astype(f32), exact=True)
        same((hg * 1.5).astype(f32), (hc * 1.5).astype(f32), exact=True)
        same(cu.exp(hg[1:, 2:]).astype(f32), cu.exp(hc[1:, 2:]).astype(f32), tol=(1e-2, 1e-3))
        same(hg.sum(axis=0).astype(f32), hc.sum(axis=0).astype(f32), tol=(1e-2, 1e-2))
        same(hg < 1, hc < 1, exact=True)
        for dst in DTYPES:
            same(hg.astype(dst), hc.astype(dst), exact=True)
        b = rand("int16", (9, 4), 4)
        same(cu.asarray(b, device="cuda").astype(half).astype(f32), cu.asarray(b).astype(half).astype(f32), exact=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill(dtype):
    for v in (0, 1, 3, True):
        same(cu.full((7, 9), v, dtype=dtype, device="cuda"), np.full((7, 9), v, dtype=dtype), exact=True)
    if np.dtype(dtype).kind in "fc":
        same(cu.full((1000,), -1.5, dtype=dtype, device="cuda"), np.full((1000,), -1.5, dtype=dtype), exact=True)
    x = cu.zeros((6, 8), dtype=dtype, device="cuda")
    x[::2, 1::3] = 1
    e = np.zeros((6, 8), dtype=dtype)
    e[::2, 1::3] = 1
    same(x, e, exact=True)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16", "float16", "float32", "float64"])
def test_arange(dtype):
    same(cu.arange(0, 100, 3, dtype=dtype, device="cuda"), cu.arange(0, 100, 3, dtype=dtype, device="cpu"), exact=True)
    same(cu.arange(1000, device="cuda"), np.arange(1000), exact=True)
    same(cu.arange(-2.5, 7.25, 0.1, device="cuda"), cu.arange(-2.5, 7.25, 0.1, device="cpu"), exact=True)
    same(cu.linspace(0, 1, 101, device="cuda"), cu.linspace(0, 1, 101, device="cpu"))


# ---- random: the same streams on both devices -----------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 5, 1001, (1 << 18) + 1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_streams_identical(n, dtype):
    gc, gg = cu.random.default_rng(42), cu.random.default_rng(42)
    for _ in range(2):  # the second draw continues both streams alike
        same(gg.random((n,), dtype=dtype, device="cuda"), gc.random((n,), dtype=dtype, device="cpu"), exact=True)
        same(gg.uniform(-3, 5, (n,), dtype=dtype, device="cuda"), gc.uniform(-3, 5, (n,), dtype=dtype, device="cpu"),
             exact=True)
        tol = (2e-5, 2e-6) if dtype == "float32" else (1e-9, 1e-12)
        same(gg.standard_normal((n,), dtype=dtype, device="cuda"),
             gc.standard_normal((n,), dtype=dtype, device="cpu"), tol=tol)
        same(gg.normal(1.0, 2.0, (n,), dtype=dtype, device="cuda"),
             gc.normal(1.0, 2.0, (n,), dtype=dtype, device="cpu"), tol=tol)
        same(gg.exponential(2.0, (n,), dtype=dtype, device="cuda"),
             gc.exponential(2.0, (n,), dtype=dtype, device="cpu"), tol=tol)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64"])
def test_random_integers_identical(dtype):
    gc, gg = cu.random.default_rng(7), cu.random.default_rng(7)
    for lo, hi in [(0, 10), (-5, 100), (0, 2)]:
        if np.dtype(dtype).kind == "u" and lo < 0:
            continue
        same(gg.integers(lo, hi, (1001,), dtype=dtype, device="cuda"),
             gc.integers(lo, hi, (1001,), dtype=dtype, device="cpu"), exact=True)
    same(gg.integers(0, 5, (3, 7), device="cuda"), gc.integers(0, 5, (3, 7), device="cpu"), exact=True)


# ---- reductions ------------------------------------------------------------------------------------

REDUCE_SHAPES = [((37, 1000), None), ((37, 1000), 0), ((37, 1000), 1), ((1000, 37), 0), ((1000, 37), 1),
                 ((3, 50, 70), (0, 2)), ((3, 50, 70), 1), ((3, 50, 70), (1, 2)), ((2048, 2048), 0),
                 ((2048, 2048), 1), ((1 << 22,), None), ((5, 0, 3), 1)]


@pytest.mark.parametrize("shape,axis", REDUCE_SHAPES)
@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float16", "float32", "float64", "complex64"])
def test_sum_over_axes(shape, axis, dtype):
    a = rand(dtype, shape, 13, low=0, high=3)
    xc, xg = on_both(a)
    rtol = {"float16": 5e-3, "float32": 1e-5, "complex64": 1e-5}.get(dtype, 1e-12)
    same(cu.sum(xg, axis=axis), cu.sum(xc, axis=axis), tol=(rtol, 0))
    same(cu.sum(xg, axis=axis, keepdims=True), cu.sum(xc, axis=axis, keepdims=True), tol=(rtol, 0))
    if len(shape) >= 2 and 0 not in shape:
        v = (slice(None, None, -2),) + (slice(1, None),) * (len(shape) - 1)
        same(cu.sum(xg[v], axis=axis), cu.sum(xc[v], axis=axis), tol=(rtol, 0))


@pytest.mark.parametrize("shape,axis", REDUCE_SHAPES)
@pytest.mark.parametrize("op", ["max", "min", "any", "all", "prod", "nanmax", "nanmin"])
def test_other_reductions(shape, axis, op):
    f = getattr(cu, op)
    if 0 in shape and op in ("max", "min", "nanmax", "nanmin"):
        return  # NumPy raises for empty min/max; tested on the CPU
    if op == "prod" and np.prod(shape) > 100_000 and axis is None:
        return  # the CPU's float32 product of millions of factors is itself only good to ~1e-4
    for dtype in ("int64", "float32"):
        a = rand(dtype, shape, 14, low=-100, high=100)
        if op == "prod":
            low, high = (1, 1) if dtype == "int64" else (0.999, 1.001)
            a = rand(dtype, shape, 14, low=low, high=high)
        if dtype == "float32" and a.size > 10 and op != "prod":
            a.flat[7] = np.nan
        xc, xg = on_both(a)
        same(f(xg, axis=axis), f(xc, axis=axis), tol=(1e-4, 0) if op == "prod" else None)


def test_float32_sum_accuracy():
    a = np.full(1 << 24, 0.1, dtype=np.float32)
    exact = float(np.sum(a.astype(np.float64)))
    got = float(cu.sum(cu.asarray(a, device="cuda")))
    assert abs(got - exact) / exact < 1e-6
    assert abs(float(cu.sum(cu.asarray(a, device="cpu"))) - exact) / exact < 1e-6


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float16", "float32", "float64"])
def test_arg_reductions(op, dtype):
    f = getattr(cu, op)
    a = rand(dtype, (300, 257), 15, low=-3, high=3)  # many ties: the first index wins
    if np.dtype(dtype).kind == "f":
        a[5, 100] = a[5, 200] = a[250, 3] = np.nan  # the first NaN wins
    xc, xg = on_both(a)
    for axis in (None, 0, 1):
        same(f(xg, axis=axis), f(xc, axis=axis), exact=True)
    same(f(xg.T[::-1], axis=1), f(xc.T[::-1], axis=1), exact=True)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float16", "float32", "float64", "complex128"])
def test_scans(op, dtype):
    f = getattr(cu, op)
    low, high = (0.9, 1.1) if op == "cumprod" else (0, 3)
    if op == "cumprod" and np.dtype(dtype).kind in "iu":
        low, high = 1, 2
    a = rand(dtype, (33, 700), 16, low=low, high=high)
    if op == "cumprod" and np.dtype(dtype).kind == "c":
        a = (a / np.abs(a)).astype(dtype)  # unit factors: no overflow over 23100 of them
    xc, xg = on_both(a)
    # the CPU's float32 running sums are sequential: ~sqrt(n) eps relative error over 23100 terms
    tol = {"float16": (1e-2, 1e-2), "float32": (1e-4, 1e-4), "float64": (1e-12, 1e-12),
           "complex128": (1e-12, 1e-12)}.get(dtype)
    for axis in (0, 1, None):
        same(f(xg, axis=axis), f(xc, axis=axis), tol=tol)
    same(f(xg[::-1, ::3], axis=1), f(xc[::-1, ::3], axis=1), tol=tol)
    long = rand("int64", (300_001,), 17, low=-9, high=9)
    lc, lg = on_both(long)
    same(cu.cumsum(lg), cu.cumsum(lc), exact=True)


# ---- indexing with arrays --------------------------------------------------------------------------


def test_gather_and_scatter():
    a = rand("float32", (50, 40), 18)
    xc, xg = on_both(a)
    idx = np.array([3, 0, 49, 3, -1])
    ic, ig = on_both(idx)
    jc, jg = on_both(np.array([39, 0, 7, 7, -40]))
    same(xg[ig], xc[ic], exact=True)
    same(xg[:, jg], xc[:, jc], exact=True)
    same(xg[ig, jg], xc[ic, jc], exact=True)
    same(xg[xg > 0], xc[xc > 0], exact=True)
    v = rand("float32", (5, 40), 19)
    vc, vg = on_both(v)
    xg[ig] = vg  # index 3 twice: the last write wins
    xc[ic] = vc
    same(xg, xc, exact=True)
    xg[xg < 0] = 0.0
    xc[xc < 0] = 0.0
    same(xg, xc, exact=True)
    c16 = rand("complex128", (20,), 20)
    cc, cg = on_both(c16)
    same(cg[ig[:2]], cc[ic[:2]], exact=True)


# ---- devices and errors ----------------------------------------------------------------------------


def test_allocating_until_out_of_memory_leaks_nothing():
    pool = cu.cuda.memory_pool()
    before = pool.stats()["bytes_in_use"]
    held = []
    with pytest.raises(cu.cuda.OutOfMemoryError):
        for _ in range(1000):
            held.append(cu.empty((8 << 30,), dtype=cu.uint8, device="cuda"))
    assert len(held) >= 1
    del held
    assert pool.stats()["bytes_in_use"] == before
    pool.free_all_blocks()
    x = cu.ones(10, device="cuda")  # the device still works
    assert float(cu.sum(x)) == 10.0


def test_mixing_devices_says_how_to_move():
    with pytest.raises(ValueError, match="to_device"):
        cu.ones(3, device="cuda") + cu.ones(3, device="cpu")


def test_default_device_context():
    with cu.device("cuda"):
        assert cu.zeros(2).device == "cuda:0"
        assert cu.asarray([1, 2]).device == "cuda:0"
    assert cu.zeros(2).device == "cpu"  # the test suite's default (conftest: CUPRIC_DEVICE=cpu)


FAULT = """
import numpy as np, cupric as cu
k = cu.cuda.Program('extern "C" __global__ void cupric_test_fault(int* p) { p[1 << 20] = 1; }').compile("cubin")
x = cu.ones(4, device="cuda")
cu.cuda.launch(None, cu.cuda.LaunchConfig(1, 1), k.get_kernel("cupric_test_fault"), 8)  # a bad pointer
try:
    np.asarray(x)
    print("no error")
except cu.cuda.CUDAError as e:
    print("CUDAError:", e)
"""


def test_an_asynchronous_fault_surfaces_at_the_next_wait_with_the_kernel_name():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", FAULT], capture_output=True, text=True, timeout=120)
    assert "CUDAError:" in out.stdout and "cupric_test_fault" in out.stdout, out.stdout + out.stderr


def test_interop_interfaces_describe_device_memory():
    x = cu.arange(12, dtype=cu.float32, device="cuda").reshape(3, 4)
    cai = x.__cuda_array_interface__
    assert cai["data"][0] == x._data_ptr and cai["shape"] == (3, 4) and cai["version"] == 3
    assert x.__dlpack_device__() == (2, 0)
    y = cu.from_dlpack(x)
    assert y.device == "cuda:0" and np.array_equal(np.asarray(y), np.arange(12, dtype=np.float32).reshape(3, 4))

    class Foreign:  # a producer with only __cuda_array_interface__ (as Numba's arrays)
        def __init__(self, a):
            self.keep = a
            self.__cuda_array_interface__ = a.__cuda_array_interface__

    z = cu.asarray(Foreign(x.T))
    assert z.device == "cuda:0" and z._data_ptr == x._data_ptr
    same(z + 0, np.arange(12, dtype=np.float32).reshape(3, 4).T, exact=True)
