"""python/cupric/_math_extras.py against NumPy: random inputs, edge values, several dtypes; on the
CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(21)
EDGES = np.array([0.0, -0.0, 1.0, -2.5, 1e-310, -1e-310, 3e300, np.inf, -np.inf, np.nan, 0.5, 7.0, 1024.0])


def close(got, want, rtol=1e-12, atol=1e-12):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            close(g, w, rtol, atol)
        return
    g = np.asarray(got)
    w = np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if w.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


def dev(a, device):
    return cu.asarray(a, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_classification(device):
    z = np.array([1 + 0j, 2 - 1j, 0j, np.nan + 0j])
    r = RNG.standard_normal(6)
    for fn in ("iscomplex", "isreal"):
        close(getattr(cu, fn)(dev(z, device)), getattr(np, fn)(z))
        close(getattr(cu, fn)(dev(r, device)), getattr(np, fn)(r))
    assert cu.iscomplexobj(dev(z, device)) and cu.isrealobj(dev(r, device)) and cu.iscomplexobj([1j])
    for fn in ("isposinf", "isneginf"):
        close(getattr(cu, fn)(dev(EDGES, device)), getattr(np, fn)(EDGES))
    with pytest.raises(TypeError, match="complex"):
        cu.isposinf(dev(z, device))
    close(cu.real_if_close(dev(np.array([1 + 1e-20j, 2]), device)), np.real_if_close(np.array([1 + 1e-20j, 2])))
    close(cu.real_if_close(dev(z, device)), np.real_if_close(z))
    assert cu.array_equiv(dev(np.ones((2, 3)), device), dev(np.ones(3), device))
    assert not cu.array_equiv(dev(np.ones((2, 3)), device), dev(np.ones(2), device))


@pytest.mark.parametrize("device", DEVICES)
def test_elementwise(device):
    x = np.concatenate([EDGES, RNG.standard_normal(20) * 100])
    close(cu.fix(dev(x, device)), np.fix(x))
    close(cu.sinc(dev(x[np.isfinite(x)], device)), np.sinc(x[np.isfinite(x)]))
    close(cu.modf(dev(x, device)), np.modf(x))
    close(cu.frexp(dev(x, device)), np.frexp(x))
    close(cu.frexp(dev(x.astype(np.float32), device)), np.frexp(x.astype(np.float32)))
    e = RNG.integers(-1100, 1100, x.size)
    close(cu.ldexp(dev(x, device), dev(e, device)), np.ldexp(x, e))
    close(cu.spacing(dev(x, device)), np.spacing(x))
    a, b = RNG.integers(-20, 20, 30), RNG.integers(1, 7, 30) * RNG.choice([-1, 1], 30)
    close(cu.divmod(dev(a, device), dev(b, device)), np.divmod(a, b))
    close(cu.float_power(dev(a, device), 2), np.float_power(a, 2))
    with pytest.raises(TypeError, match="integers"):
        cu.ldexp(dev(x, device), dev(x, device))


@pytest.mark.parametrize("device", DEVICES)
def test_average_cov_corrcoef(device):
    a = RNG.standard_normal((4, 9))
    w = RNG.random(9)
    close(cu.average(dev(a, device)), np.average(a))
    close(cu.average(dev(a, device), axis=1, weights=dev(w, device)), np.average(a, axis=1, weights=w))
    close(cu.average(dev(a, device), axis=0, keepdims=True), np.average(a, axis=0, keepdims=True))
    avg, scl = cu.average(dev(a, device), axis=1, weights=dev(w, device), returned=True)
    close((avg, scl), np.average(a, axis=1, weights=w, returned=True))
    with pytest.raises(ZeroDivisionError):
        cu.average(dev(a, device), axis=1, weights=dev(np.zeros(9), device))
    fw = RNG.integers(1, 4, 9)
    for kwargs in ({}, {"bias": True}, {"ddof": 0}, {"rowvar": False}, {"aweights": w}, {"fweights": fw},
                   {"fweights": fw, "aweights": w, "ddof": 2}):
        close(cu.cov(dev(a, device), **{k: dev(v, device) if isinstance(v, np.ndarray) else v
                                        for k, v in kwargs.items()}), np.cov(a, **kwargs))
    close(cu.cov(dev(a[0], device), dev(a[1], device)), np.cov(a[0], a[1]))
    close(cu.cov(dev(a[0], device)), np.cov(a[0]))
    close(cu.corrcoef(dev(a, device)), np.corrcoef(a))
    close(cu.corrcoef(dev(a, device), rowvar=False), np.corrcoef(a, rowvar=False))


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_trapezoid_unwrap(device):
    f = RNG.standard_normal((5, 7))
    for edge in (1, 2):
        close(cu.gradient(dev(f, device), edge_order=edge), tuple(np.gradient(f, edge_order=edge)))
        close(cu.gradient(dev(f, device), 0.5, axis=1, edge_order=edge), np.gradient(f, 0.5, axis=1, edge_order=edge))
        xs = np.cumsum(RNG.random(7) + 0.1)
        close(cu.gradient(dev(f, device), dev(xs, device), axis=1, edge_order=edge),
              np.gradient(f, xs, axis=1, edge_order=edge))
    close(cu.gradient(dev(np.arange(6), device)), np.gradient(np.arange(6)))
    close(cu.trapezoid(dev(f, device)), np.trapezoid(f))
    close(cu.trapezoid(dev(f, device), dx=0.3, axis=0), np.trapezoid(f, dx=0.3, axis=0))
    xs = np.cumsum(RNG.random(7))
    close(cu.trapezoid(dev(f, device), dev(xs, device)), np.trapezoid(f, xs))
    phase = np.cumsum(RNG.standard_normal((3, 40)), axis=1) * 2
    close(cu.unwrap(dev(phase, device)), np.unwrap(phase))
    close(cu.unwrap(dev(phase, device), axis=0, period=4.0), np.unwrap(phase, axis=0, period=4.0))
    with pytest.raises(ValueError, match="too small"):
        cu.gradient(dev(np.ones(2), device), edge_order=2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["valid", "same", "full"])
def test_convolve_correlate(mode, device):
    for n, m in ((10, 3), (4, 9), (7, 7), (1, 5)):
        a, v = RNG.standard_normal(n), RNG.standard_normal(m)
        close(cu.convolve(dev(a, device), dev(v, device), mode), np.convolve(a, v, mode), rtol=1e-10, atol=1e-10)
        close(cu.correlate(dev(a, device), dev(v, device), mode), np.correlate(a, v, mode), rtol=1e-10, atol=1e-10)
    z = RNG.standard_normal(6) + 1j * RNG.standard_normal(6)
    close(cu.correlate(dev(z, device), dev(z[:3], device), mode), np.correlate(z, z[:3], mode), rtol=1e-10,
          atol=1e-10)
    ints = RNG.integers(-5, 5, 8)
    close(cu.convolve(dev(ints, device), dev(ints[:3], device), mode), np.convolve(ints, ints[:3], mode))
    with pytest.raises(ValueError, match="empty"):
        cu.convolve(dev(np.zeros(0), device), dev(np.ones(2), device))


@pytest.mark.parametrize("device", DEVICES)
def test_creation_and_windows(device):
    for args in ((1, 1000, 4), (-1, -1000, 5), (2, 3, 1), (1j, 16j, 5)):
        close(cu.geomspace(*args, device=device), np.geomspace(*args))
    close(cu.geomspace(1, 1000, 4, endpoint=False, device=device), np.geomspace(1, 1000, 4, endpoint=False))
    with pytest.raises(ValueError, match="zero"):
        cu.geomspace(0, 1, 3, device=device)
    x = RNG.standard_normal(5)
    close(cu.vander(dev(x, device)), np.vander(x))
    close(cu.vander(dev(x, device), 3, increasing=True), np.vander(x, 3, increasing=True))
    for M in (0, 1, 2, 7, 12):
        for fn in ("bartlett", "hanning", "hamming", "blackman"):
            close(getattr(cu, fn)(M), getattr(np, fn)(M), atol=1e-14)


@pytest.mark.parametrize("device", DEVICES)
def test_interp(device):
    xp = np.sort(RNG.uniform(-3, 3, 12))
    fp = np.sin(xp)
    x = np.concatenate([RNG.uniform(-4, 4, 50), xp, [-3.5, 3.5]])
    for kwargs in ({}, {"left": -9.0, "right": 9.0}, {"period": 2.0}):
        close(cu.interp(dev(x, device), dev(xp, device), dev(fp, device), **kwargs), np.interp(x, xp, fp, **kwargs),
              rtol=1e-13, atol=1e-14)
    close(cu.interp(dev(x, device), xp.tolist(), (fp + 1j * fp).tolist()), np.interp(x, xp, fp + 1j * fp),
          rtol=1e-13, atol=1e-14)
    steps, values = np.array([0.0, 1, 1, 2]), np.array([0.0, 1, 5, 6])
    close(cu.interp(dev(np.array([0.5, 1, 1.5]), device), dev(steps, device), dev(values, device)),
          np.interp([0.5, 1, 1.5], steps, values))
    close(cu.interp(dev(np.array([0.5, 2.0]), device), [1.0], [3.0]), np.interp([0.5, 2.0], [1.0], [3.0]))
    with pytest.raises(ValueError, match="same length"):
        cu.interp(dev(x, device), dev(xp, device), dev(fp[:3], device))
