"""python/cupric/_polynomials.py against NumPy's poly* functions, on the CPU and (marked gpu) on a
CUDA device."""

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(77)


def close(got, want, rtol=1e-10, atol=1e-10):
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            close(g, w, rtol, atol)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def dev(a, device):
    return cu.asarray(a, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_arithmetic(device):
    p, q, x = RNG.standard_normal(4), RNG.standard_normal(2), RNG.standard_normal(5)
    close(cu.polyval(dev(p, device), dev(x, device)), np.polyval(p, x))
    close(cu.polyadd(dev(p, device), dev(q, device)), np.polyadd(p, q))
    close(cu.polysub(dev(q, device), dev(p, device)), np.polysub(q, p))
    close(cu.polymul(dev(p, device), dev(q, device)), np.polymul(p, q))
    for m in (1, 2, 5):
        close(cu.polyder(dev(p, device), m), np.polyder(p, m))
        close(cu.polyint(dev(p, device), m), np.polyint(p, m))
    close(cu.polyint(dev(p, device), 2, k=[1.0, 2.0]), np.polyint(p, 2, k=[1.0, 2.0]))
    for num, den in (([1.0, -6, 11, -6], [1.0, -1]), (RNG.standard_normal(6), RNG.standard_normal(3)),
                     ([2.0, 3], [1.0, 0, 4])):
        close(cu.polydiv(dev(np.asarray(num), device), dev(np.asarray(den), device)), np.polydiv(num, den))


@pytest.mark.parametrize("device", DEVICES)
def test_fit_roots_poly(device):
    x = RNG.standard_normal(30)
    y = 3 * x**3 - x + RNG.standard_normal(30) * 0.1
    for deg in (1, 3, 5):
        close(cu.polyfit(dev(x, device), dev(y, device), deg), np.polyfit(x, y, deg))
    w = RNG.random(30) + 0.5
    close(cu.polyfit(dev(x, device), dev(y, device), 2, w=dev(w, device)), np.polyfit(x, y, 2, w=w))
    ys = np.stack([y, 2 * y], axis=1)
    close(cu.polyfit(dev(x, device), dev(ys, device), 2), np.polyfit(x, ys, 2))
    with pytest.raises(TypeError, match="same length"):
        cu.polyfit(dev(x, device), dev(y[:5], device), 2)
    for p in ([1.0, -6, 11, -6, 0, 0], [1.0, 0, 1], [0.0, 0, 2, -4], RNG.standard_normal(6)):
        got = np.sort_complex(np.asarray(cu.roots(dev(np.asarray(p), device))).astype(complex))
        want = np.sort_complex(np.roots(p).astype(complex))
        close(got, want, rtol=1e-8, atol=1e-8)
    close(cu.poly(dev(np.array([1.0, 2, 3]), device)), np.poly([1.0, 2, 3]))
    m = RNG.standard_normal((3, 3))
    close(cu.poly(dev(m, device)), np.poly(m), rtol=1e-8, atol=1e-8)


# ---- poly1d ------------------------------------------------------------------------------------------------------


def same_poly(got, want):
    """A cupric poly1d equal to NumPy's: coefficients (dtype too), order, variable."""
    assert isinstance(got, cu.poly1d), type(got)
    assert got.order == want.order and got.variable == want.variable
    assert got.coeffs.dtype == want.coeffs.dtype, (got.coeffs.dtype, want.coeffs.dtype)
    close(got.coeffs, want.coeffs)


def pair(coeffs, device, **kwargs):
    return cu.poly1d(dev(np.asarray(coeffs), device), **kwargs), np.poly1d(coeffs, **kwargs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "int64", "complex128"])
def test_poly1d_arithmetic_matches_numpy(dtype, device):
    a = (RNG.standard_normal(4) * 5).astype(dtype)
    b = np.concatenate([[0, 0], (RNG.standard_normal(3) * 5).astype(dtype)])  # leading zeros are trimmed
    (p, np_p), (q, np_q) = pair(a, device), pair(b, device)
    assert p.coeffs.device == device
    same_poly(q, np_q)
    for got, want in [(p + q, np_p + np_q), (p - q, np_p - np_q), (p * q, np_p * np_q), (-p, -np_p), (+p, +np_p),
                      (p * 3, np_p * 3), (2 * p, 2 * np_p), (p + 1, np_p + 1), (1 - p, 1 - np_p),
                      (p * [1, 2], np_p * [1, 2]), (p**0, np_p**0), (p**3, np_p**3), (p / 2, np_p / 2)]:
        same_poly(got, want)
    for got, want in zip(p / q, np_p / np_q, strict=True):
        same_poly(got, want)
    assert p == cu.poly1d(p.coeffs) and p != q and (p == 3) is False
    with pytest.raises(ValueError, match="non-negative integers"):
        p**-1


@pytest.mark.parametrize("device", DEVICES)
def test_poly1d_calls_roots_and_calculus_match_numpy(device):
    c = RNG.standard_normal(5)
    p, np_p = pair(c, device, variable="z")
    x = RNG.standard_normal((2, 3))
    close(p(dev(x, device)), np_p(x))
    assert p(dev(x, device)).device == device
    close(p(0.5), np_p(0.5))
    same_poly(p(cu.poly1d([1.0, 2.0])), np_p(np.poly1d([1.0, 2.0])))
    close(np.sort_complex(np.asarray(p.roots)), np.sort_complex(np_p.roots))
    close(np.sort_complex(np.asarray(p.r)), np.sort_complex(np_p.r))
    same_poly(cu.poly1d(dev(np.array([1.0, -2.0, 3.0]), device), r=True), np.poly1d([1.0, -2.0, 3.0], r=True))
    for m in (1, 2, 6):
        same_poly(p.deriv(m), np_p.deriv(m))
        same_poly(p.integ(m, k=1.5), np_p.integ(m, k=1.5))
    assert p.o == p.order == len(p) == 4 and p.c is p.coeffs and p.coef is p.coefficients
    same_poly(cu.polyadd(p, [1.0]), np.polyadd(np_p, [1.0]))
    quotient, remainder = cu.polydiv(p, cu.poly1d([1.0, 1.0]))
    same_poly(quotient, np.polydiv(np_p, np.poly1d([1.0, 1.0]))[0])
    close(cu.polyval(p, dev(x, device)), np.polyval(np_p, x))


@pytest.mark.parametrize("device", DEVICES)
def test_poly1d_items_printing_and_errors(device):
    p, np_p = pair(np.array([3, 0, -2, 5]), device, variable="t")
    assert repr(p) == repr(np_p) and str(p) == str(np_p)
    for power in (-1, 0, 1, 3, 7):
        assert int(p[power]) == int(np_p[power])
    p[5] = 4
    np_p[5] = 4
    same_poly(p, np_p)
    p[0] = -1
    np_p[0] = -1
    same_poly(p, np_p)
    assert [int(v) for v in p] == list(np_p) and np.array_equal(np.asarray(p), np.asarray(np_p))
    same_poly(cu.poly1d([0, 0]), np.poly1d([0, 0]))
    same_poly(cu.poly1d(p, variable="s"), np.poly1d(np_p, variable="s"))
    with pytest.raises(ValueError, match="negative powers"):
        p[-1] = 2
    with pytest.raises(ValueError, match="1d only"):
        cu.poly1d(cu.ones((2, 2), device=device))
    with pytest.raises(AttributeError):
        p.coeffs = cu.asarray([1, 2])
    with pytest.raises(TypeError):
        hash(p)
