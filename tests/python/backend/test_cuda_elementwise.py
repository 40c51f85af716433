"""The CUDA map kernels' launch shapes (src/backend/cuda/elementwise.cpp, device_include/cupric/kernels/
map.cuh, map_launch.h) against the CPU backend, bit for bit: every item size, every alignment of a
view's start (16-byte vectors where all operands allow them, element by element where not), lengths
around a vector, a block and a grid, scalars by value, 0-d device operands, where= masks, mixed item
sizes, strided views over several blocks. Skipped without a GPU."""

import cupric as cu
import numpy as np
import pytest

pytestmark = pytest.mark.gpu

VEC_THREADS, ONE_THREADS, ONE_PER_THREAD = 128, 128, 4  # cupric/kernels/map_launch.h
# one dtype per item size: the vector width is 16 bytes / the widest operand
SIZES = {"bool": 1, "int8": 1, "int16": 2, "float32": 4, "int32": 4, "float64": 8, "int64": 8, "complex128": 16}


def rand(dtype, n, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        return rng.integers(-100, 100, size=n).astype(dt)
    a = rng.standard_normal(n) * 100
    if dt.kind == "c":
        a = a + 1j * rng.standard_normal(n)
    return a.astype(dt)


def lengths(itemsize):
    v = max(1, 16 // itemsize)
    return sorted({1, v - 1 or 1, v, v + 1, VEC_THREADS * v - 1, VEC_THREADS * v, VEC_THREADS * v + 1,
                   ONE_THREADS * ONE_PER_THREAD + 3, 3 * VEC_THREADS * v + v // 2, (1 << 20) + 7})


def exactly(gpu, cpu):
    g, c = np.asarray(gpu), np.asarray(cpu)
    assert g.dtype == c.dtype and g.shape == c.shape, (g.dtype, c.dtype, g.shape, c.shape)
    np.testing.assert_array_equal(g.view(np.uint8), c.view(np.uint8))  # bits, NaNs and signed zeros too


@pytest.mark.parametrize("dtype", list(SIZES))
def test_binary_maps_at_every_offset_and_length(dtype):
    v = max(1, 16 // SIZES[dtype])
    for n in lengths(SIZES[dtype]):
        a, b = rand(dtype, n + 2 * v, 1), rand(dtype, n + 2 * v, 2)
        xc, yc = cu.asarray(a, device="cpu"), cu.asarray(b, device="cpu")
        xg, yg = cu.asarray(a, device="cuda"), cu.asarray(b, device="cuda")
        for i in range(v + 1):  # both aligned (i = 0, v), one misaligned, both misaligned alike
            for j in (0, i, (i + 1) % v):
                op = cu.logical_xor if dtype == "bool" else cu.add
                exactly(op(xg[i:i + n], yg[j:j + n]), op(xc[i:i + n], yc[j:j + n]))
        if dtype != "bool":
            exactly(xg[1:n + 1] * 3, xc[1:n + 1] * 3)  # a Python scalar, by value
            exactly(2 * xg[:n] + yg[:n], 2 * xc[:n] + yc[:n])
            exactly(xg[:n] - yg[-1], xc[:n] - yc[-1])  # a 0-d device operand, read once per thread


@pytest.mark.parametrize("n", [5, 515, 4096 + 13, (1 << 20) + 5])
def test_the_benchmark_expressions_match_the_cpu(n):
    a, b = rand("float32", n, 3), rand("float32", n, 4)
    xc, yc = cu.asarray(a, device="cpu"), cu.asarray(b, device="cpu")
    xg, yg = cu.asarray(a, device="cuda"), cu.asarray(b, device="cuda")
    exactly(2 * xg + yg, 2 * xc + yc)
    exactly(xg * 2.0, xc * 2.0)
    exactly(cu.sqrt(xg * xg + yg * yg) * 0.5, cu.sqrt(xc * xc + yc * yc) * 0.5)  # IEEE-rounded on both
    np.testing.assert_allclose(np.asarray(cu.sin(xg)), np.asarray(cu.sin(xc)), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "float64", "complex128"])
def test_where_masks_on_the_vector_and_element_paths(dtype):
    for n in (3, VEC_THREADS * 4 + 5, 100003):
        a, b, o = rand(dtype, n + 1, 5), rand(dtype, n + 1, 6), rand(dtype, n + 1, 7)
        m = rand("bool", n + 1, 8)
        for s in (0, 1):  # aligned (vectors) and shifted by one element
            oc, og = cu.asarray(o, device="cpu"), cu.asarray(o, device="cuda")
            cu.add(cu.asarray(a, device="cpu")[s:s + n], cu.asarray(b, device="cpu")[s:s + n], out=oc[s:s + n],
                   where=cu.asarray(m, device="cpu")[s:s + n])
            cu.add(cu.asarray(a, device="cuda")[s:s + n], cu.asarray(b, device="cuda")[s:s + n], out=og[s:s + n],
                   where=cu.asarray(m, device="cuda")[s:s + n])
            exactly(og, oc)


def test_mixed_item_sizes_and_casts():
    n = 3 * 1000 + 1
    i8, f4, f8 = rand("int8", n, 9), rand("float32", n, 10), rand("float64", n, 11)
    cpu = [cu.asarray(x, device="cpu") for x in (i8, f4, f8)]
    gpu = [cu.asarray(x, device="cuda") for x in (i8, f4, f8)]
    for s in (0, 1, 2):
        exactly(gpu[0][s:] + gpu[1][s:], cpu[0][s:] + cpu[1][s:])  # int8 read 4 at a time beside float32
        exactly(gpu[1][s:] * gpu[2][s:], cpu[1][s:] * cpu[2][s:])
        for dst in ("float16", "bfloat16", "int64", "complex64", "bool"):
            exactly(gpu[2][s:].astype(dst), cpu[2][s:].astype(dst))


def test_strided_views_over_many_blocks():
    a, b = rand("float32", (3000, 1001), 12), rand("float32", (3000, 1001), 13)
    xc, yc = cu.asarray(a, device="cpu"), cu.asarray(b, device="cpu")
    xg, yg = cu.asarray(a, device="cuda"), cu.asarray(b, device="cuda")
    exactly(xg[::2, ::-3] + yg[1::2, 1::3], xc[::2, ::-3] + yc[1::2, 1::3])  # the strided (_nd) path
    exactly(xg.T * yg.T, xc.T * yc.T)
    exactly(xg[:, :1] - yg, xc[:, :1] - yc)  # broadcast: stride 0
    exactly(xg[::-1].astype("float64"), xc[::-1].astype("float64"))


def test_fills_cover_every_element():
    for dtype, n in (("float64", (1 << 20) + 3), ("complex128", 4099), ("int16", 1001)):
        g = cu.empty(n, dtype=dtype, device="cuda")
        g[...] = 3  # a fill whose value is no repeated byte pattern runs as a map for 8+ byte types
        g[1::7] = 5
        c = np.full(n, 3, dtype=dtype)
        c[1::7] = 5
        exactly(g, c)
