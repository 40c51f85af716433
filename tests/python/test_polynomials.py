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
