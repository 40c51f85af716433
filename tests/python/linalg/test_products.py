"""matmul / @ (src/ops/linalg/matmul.cpp, the CPU backend's gemm and exact loops) and the products
of python/cupric/linalg/_products.py, against NumPy: every dtype, 1-D promotion, broadcast
batches, views (transposed, strided, negative strides, broadcast), empty and 1x1, out=, errors."""

import cupric as cu
import ml_dtypes
import numpy as np
import pytest

RNG = np.random.default_rng(13)
FLOATS = ["float32", "float64", "complex64", "complex128"]
EXACT = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def sample(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.random(shape) < 0.5
    if dtype.kind in "iu":
        return RNG.integers(0 if dtype.kind == "u" else -50, 50, size=shape).astype(dtype)
    x = RNG.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def tol(dtype, k):
    """A bound on a product's error: a few ulps per term of the sum."""
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        return 0
    eps = np.finfo(dtype).eps if dtype != ml_dtypes.bfloat16 else 2.0**-8
    return 8 * eps * max(k, 1)


def check(got, want, k=1):
    got = np.asarray(got.to_device("cpu") if isinstance(got, cu.ndarray) else got)
    assert got.shape == want.shape
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want.astype(np.complex128))))) if want.size else 1.0
    err = np.max(np.abs(got.astype(np.complex128) - want.astype(np.complex128))) if want.size else 0
    assert err <= tol(want.dtype, k) * scale * max(k, 1), err


@pytest.mark.parametrize("dtype", FLOATS + EXACT)
@pytest.mark.parametrize(
    "sa,sb",
    [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
     ((1, 1), (1, 1)), ((0, 4), (4, 5)), ((3, 0), (0, 5)), ((3, 4), (4, 0)), ((2, 0, 3, 4), (4, 5)),
     ((2, 3, 0), (0, 5)), ((4, 2, 3), (3,))],
)
def test_matmul_matches_numpy(dtype, sa, sb):
    a, b = sample(sa, dtype), sample(sb, dtype)
    want = a @ b
    check(cu.asarray(a) @ cu.asarray(b), np.asarray(want), sa[-1])
    check(cu.matmul(cu.asarray(a), cu.asarray(b)), np.asarray(want), sa[-1])


@pytest.mark.parametrize("dtype", ["float16", ml_dtypes.bfloat16])
def test_half_products_accumulate_in_float32(dtype):
    a, b = sample((2, 33, 70), "float32").astype(dtype), sample((70, 17), "float32").astype(dtype)
    ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype)
    got = np.asarray(cu.asarray(a) @ cu.asarray(b))
    assert got.dtype == np.dtype(dtype)
    # one rounding of the float32 sum to the half type: within a half-type ulp of the float64 result
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    ulp = np.abs(ref.astype(np.float64)) * (2.0**-10 if dtype == "float16" else 2.0**-7) + 1e-3
    assert np.all(err <= ulp)


@pytest.mark.parametrize("dtype", ["float32", "complex128", "int32"])
def test_matmul_of_views(dtype):
    a, b = sample((2, 5, 6), dtype), sample((6, 4), dtype)
    want = a @ b
    A, B = cu.asarray(a), cu.asarray(b)
    for va, vb in [(A, B), (A.mT.copy().mT, B), (A, B.T.copy().T), (A[:, ::-1, ::-1][:, ::-1, ::-1], B[::-1][::-1])]:
        check(va @ vb, want, 6)
    # strided, negative and broadcast (zero-stride) views, and a column of a bigger matrix
    big = cu.asarray(sample((2, 10, 18), dtype))
    check(big[:, ::2, ::3] @ B, np.asarray(big)[:, ::2, ::3] @ b, 6)
    check(A[:, ::-1] @ B[::-1], a[:, ::-1] @ b[::-1], 6)
    row = cu.broadcast_to(cu.asarray(b[:1]), (6, 4))
    check(A @ row, a @ np.broadcast_to(b[:1], (6, 4)), 6)
    check(A[..., 2] @ B[:5], a[..., 2] @ b[:5], 5)


@pytest.mark.parametrize("dtype", EXACT)
def test_the_gpu_integer_product_composition(dtype):
    # what matmul runs for integers on GPUs (cuBLAS has no wrapping integer gemm), checked here on the CPU
    a, b = sample((2, 3, 40), dtype), sample((40, 5), dtype)
    bb = np.broadcast_to(b, (2, 40, 5))
    check(cu._cupric._matmul_by_ufuncs(cu.asarray(a), cu.asarray(bb), np.dtype(dtype)), a @ b)


def test_matmul_precision_setting():
    assert cu.linalg.get_matmul_precision() == "highest"
    try:
        cu.linalg.set_matmul_precision("tf32")
        assert cu.linalg.get_matmul_precision() == "tf32"
        a = sample((4, 4), "float32")
        check(cu.asarray(a) @ cu.asarray(a), a @ a, 4)  # the CPU has no TF32: unchanged
    finally:
        cu.linalg.set_matmul_precision("highest")
    with pytest.raises(ValueError, match="'highest' or 'tf32'"):
        cu.linalg.set_matmul_precision("bf16")


def test_matmul_promotes_mixed_dtypes():
    a, b = sample((3, 4), "int8"), sample((4, 2), "float32")
    check(cu.asarray(a) @ cu.asarray(b), a @ b, 4)
    c = sample((4, 2), "uint8")
    check(cu.asarray(a) @ cu.asarray(c), a @ c)
    check(cu.matmul(cu.asarray(a), cu.asarray(c), dtype="float64"), np.matmul(a, c, dtype="float64"), 4)


def test_integer_products_wrap_as_numpy():
    a = np.full((2, 300), 100, np.int8)
    b = np.full((300, 2), 7, np.int8)
    check(cu.asarray(a) @ cu.asarray(b), a @ b)
    u = np.full((1, 3), 2**63, np.uint64)
    check(cu.asarray(u) @ cu.asarray(u.T), u @ u.T)


def test_out_and_inplace():
    a, b = sample((3, 4), "float64"), sample((4, 4), "float64")
    out = cu.zeros((3, 4))
    r = cu.matmul(cu.asarray(a), cu.asarray(b), out=out)
    assert r is out
    check(out, a @ b, 4)
    x = cu.array(a)  # (asarray would share NumPy's memory, which @= then changes)
    x @= cu.asarray(b)
    check(x, a @ b, 4)
    # out overlapping an input: the product is computed before it is written
    y = cu.array(b)
    cu.matmul(y, y, out=y)
    check(y, b @ b, 4)
    f = cu.zeros((3, 4), dtype="float32")
    cu.matmul(cu.asarray(a), cu.asarray(b), out=f)
    check(f, (a @ b).astype(np.float32), 4)


def test_errors_name_the_shapes_and_write_nothing():
    a, b = cu.ones((3, 4)), cu.ones((5, 2))
    with pytest.raises(ValueError, match=r"mismatch in its core dimension 0.*size 5 is different from 4"):
        a @ b
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        cu.matmul(a, cu.asarray(2.0))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        a @ 2
    with pytest.raises(ValueError, match=r"batch dimensions.*\(2, 3, 4\).*\(3, 4, 5\)"):
        cu.ones((2, 3, 4)) @ cu.ones((3, 4, 5))
    out = cu.full((3, 4), 7.0)
    with pytest.raises(ValueError, match=r"shape \(3, 4\).*\(3, 2\)"):
        cu.matmul(a, cu.ones((4, 2)), out=out)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'matmul' output"):
        cu.matmul(a, cu.ones((4, 4)), out=cu.zeros((3, 4), dtype="int64"))
    with pytest.raises(ValueError, match="core dimension"):
        cu.matmul(a, b, out=out)
    assert np.all(np.asarray(out) == 7.0)
    x = cu.ones((3, 4))
    with pytest.raises(ValueError):
        x @= cu.ones((4, 5))
    assert np.all(np.asarray(x) == 1.0)
    with pytest.raises(TypeError):
        a @ "text"


def test_numpy_protocols_reach_cupric():
    a, b = sample((3, 4), "float64"), sample((4, 2), "float64")
    r = np.matmul(cu.asarray(a), cu.asarray(b))
    assert isinstance(r, cu.ndarray)
    check(r, a @ b, 4)
    r = np.dot(cu.asarray(a), cu.asarray(b))
    assert isinstance(r, cu.ndarray)
    check(np.linalg.inv(cu.asarray(a[:, :3] + 3 * np.eye(3))), np.linalg.inv(a[:, :3] + 3 * np.eye(3)), 3)


@pytest.mark.parametrize(
    "sa,sb", [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (5, 4, 2)), ((3,), (2, 3, 4)), ((), (3,)), ((2, 3), ())]
)
def test_dot(sa, sb):
    a, b = sample(sa, "float64"), sample(sb, "float64")
    check(cu.dot(cu.asarray(a), cu.asarray(b)), np.asarray(np.dot(a, b)), 4)


def test_vdot_inner_outer():
    a, b = sample((2, 3), "complex128"), sample((3, 2), "complex128")
    check(cu.vdot(cu.asarray(a), cu.asarray(b)), np.asarray(np.vdot(a, b)), 6)
    c, d = sample((2, 3, 4), "float32"), sample((5, 4), "float32")
    check(cu.inner(cu.asarray(c), cu.asarray(d)), np.inner(c, d), 4)
    check(cu.outer(cu.asarray(c), cu.asarray(d)), np.outer(c, d))
    check(cu.linalg.outer(cu.asarray(d[0]), cu.asarray(c[0, 0])), np.outer(d[0], c[0, 0]))
    with pytest.raises(ValueError, match="vectors"):
        cu.linalg.outer(cu.asarray(c), cu.asarray(d))


@pytest.mark.parametrize("axes", [0, 1, 2, ([1, 0], [0, 1]), ([2], [1]), ([-1], [0])])
def test_tensordot(axes):
    a, b = sample((3, 4, 5), "float64"), sample((4, 3, 5) if axes != ([-1], [0]) else (5, 2), "float64")
    if axes in (1, 2):
        b = sample((4, 5, 2) if axes == 2 else (5, 2), "float64")
    if axes == ([2], [1]):
        b = sample((2, 5), "float64")
    want = np.tensordot(a, b, axes=axes)
    check(cu.tensordot(cu.asarray(a), cu.asarray(b), axes=axes), want, 20)


def test_tensordot_errors():
    with pytest.raises(ValueError, match="shape-mismatch for sum"):
        cu.tensordot(cu.ones((3, 4)), cu.ones((5, 6)), axes=1)
    with pytest.raises(ValueError, match="more than the dimensions"):
        cu.tensordot(cu.ones((3, 4)), cu.ones((4,)), axes=3)


@pytest.mark.parametrize("dtype", ["float64", "complex64", "int32"])
def test_vecdot_matvec_vecmat(dtype):
    a, b = sample((2, 3, 4), dtype), sample((3, 4), dtype)
    check(cu.vecdot(cu.asarray(a), cu.asarray(b)), np.vecdot(a, b), 4)
    check(cu.linalg.vecdot(cu.asarray(a), cu.asarray(a), axis=1), np.vecdot(a, a, axis=1), 4)
    m, v = sample((2, 5, 4), dtype), sample((4,), dtype)
    check(cu.matvec(cu.asarray(m), cu.asarray(v)), np.matvec(m, v), 4)
    w = sample((3, 1, 5), dtype)
    check(cu.vecmat(cu.asarray(w), cu.asarray(m)), np.vecmat(w, m), 5)
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        cu.vecdot(cu.ones((3,)), cu.ones((4,)))


def test_ndarray_methods():
    a, b = sample((3, 4), "float64"), sample((4, 2), "float64")
    check(cu.asarray(a).dot(cu.asarray(b)), a.dot(b), 4)
    check(cu.asarray(a).diagonal(1), a.diagonal(1))
    check(cu.asarray(a).trace(-1), np.asarray(a.trace(-1)))


def test_kron_and_trace():
    a, b = sample((2, 3), "int16"), sample((4, 1, 2), "int16")
    check(cu.kron(cu.asarray(a), cu.asarray(b)), np.kron(a, b))
    c = sample((3, 4, 5), "float64")
    check(cu.trace(cu.asarray(c)), np.trace(c), 4)
    check(cu.trace(cu.asarray(c), offset=1, axis1=1, axis2=2), np.trace(c, offset=1, axis1=1, axis2=2), 4)
    check(cu.linalg.trace(cu.asarray(c), offset=-1), np.linalg.trace(c, offset=-1), 4)
    i = sample((4, 4), "int8")
    check(cu.trace(cu.asarray(i)), np.asarray(np.trace(i)))
    check(cu.linalg.diagonal(cu.asarray(c), offset=2), np.linalg.diagonal(c, offset=2))
    d = cu.diagonal(cu.asarray(c), 0, 0, 2)
    with pytest.raises(ValueError, match="read-only"):
        d[0] = 1


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n):
    a = sample((2, 3, 3), "float64") + 3 * np.eye(3)
    check(cu.linalg.matrix_power(cu.asarray(a), n), np.linalg.matrix_power(a, n), 30)
    i = sample((3, 3), "int64") % 3
    if n >= 0:
        check(cu.linalg.matrix_power(cu.asarray(i), n), np.linalg.matrix_power(i, n))


def test_multi_dot():
    a, b = sample((10, 30), "float64"), sample((30, 5), "float64")
    c, d = sample((5, 60), "float64"), sample(60, "float64")
    check(cu.linalg.multi_dot([cu.asarray(x) for x in (a, b, c, d)]), np.linalg.multi_dot([a, b, c, d]), 60)
    check(cu.linalg.multi_dot([cu.asarray(d[:30]), cu.asarray(b)]), np.linalg.multi_dot([d[:30], b]), 30)
    with pytest.raises(ValueError, match="at least two"):
        cu.linalg.multi_dot([cu.asarray(a)])


def test_set_num_threads_keeps_results():
    a, b = sample((64, 200), "float64"), sample((200, 64), "float64")
    before = cu.get_num_threads() if hasattr(cu, "get_num_threads") else None
    try:
        cu.set_num_threads(1)
        one = np.asarray(cu.asarray(a) @ cu.asarray(b))
        cu.set_num_threads(2)
        two = np.asarray(cu.asarray(a) @ cu.asarray(b))
    finally:
        if before:
            cu.set_num_threads(before)
    check(one, a @ b, 200)
    check(two, a @ b, 200)
