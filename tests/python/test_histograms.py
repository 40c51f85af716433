"""python/cupric/_histograms.py against NumPy on every device: digitize, bincount, histogram with
every bin rule, weights and density, histogram_bin_edges, histogram2d, histogramdd."""

import warnings

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def host(a):
    return np.asarray(a.to_device("cpu"))


def on(x, device):
    return cu.asarray(x).to_device(device)


def same(got, want, exact=True):
    g, w = host(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    if exact:
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_bincount(device):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 20, 300)
    w = rng.standard_normal(300)
    same(cu.bincount(on(x, device)), np.bincount(x))
    same(cu.bincount(on(x.astype(np.uint8), device), minlength=40), np.bincount(x.astype(np.uint8), minlength=40))
    same(cu.bincount(on(x, device), weights=on(w, device)), np.bincount(x, weights=w), exact=False)
    same(cu.bincount(on(x[:0], device)), np.bincount(x[:0]))
    with pytest.raises(ValueError, match="no negative elements"):
        cu.bincount(on([1, -1], device))
    with pytest.raises(ValueError, match="too deep"):
        cu.bincount(on([[1]], device))
    with pytest.raises(TypeError, match="Cannot cast"):
        cu.bincount(on([1.0], device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("right", [False, True])
def test_digitize(right, device):
    x = np.random.default_rng(1).integers(-2, 18, 50).astype(np.float32)
    for bins in [np.array([0, 3, 3.5, 10, 15]), np.array([15, 10, 3.5, 3, 0]), np.array([2.0])]:
        same(cu.digitize(on(x, device), on(bins, device), right=right), np.digitize(x, bins, right=right))
    with pytest.raises(ValueError, match="monotonically"):
        cu.digitize(on(x, device), on([1, 3, 2], device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bins", [10, 7, "auto", "fd", "sturges", "sqrt", "rice", "scott", "doane", "edges"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_histogram(bins, dtype, device):
    rng = np.random.default_rng(2)
    a = (rng.standard_normal(1000) * 4).astype(dtype)
    b = np.array([-3.0, 0.0, 0.5, 2.0, 7.0]) if bins == "edges" else bins
    cb = on(b, device) if bins == "edges" else b
    hist, edges = cu.histogram(on(a, device), bins=cb)
    want_hist, want_edges = np.histogram(a, bins=b)
    same(edges, want_edges)
    same(hist, want_hist)
    same(cu.histogram_bin_edges(on(a, device), bins=cb), np.histogram_bin_edges(a, bins=b))
    dens, _ = cu.histogram(on(a, device), bins=cb, density=True)
    same(dens, np.histogram(a, bins=b, density=True)[0], exact=False)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_stone_bins(dtype, device):
    # Stone's rule: the first bin count (up to max(100, sqrt(n))) of least estimated error, with
    # NumPy's warning when it is the largest
    rng = np.random.default_rng(4)
    for n, scale, span in [(2, 1, None), (300, 20, None), (2000, 5, (-4, 6)), (50, 1, None)]:
        a = (rng.standard_normal(n) * scale).astype(dtype)
        if n == 50:
            a = np.repeat(a[:2], 25)  # two values: many bin counts err alike
        with warnings.catch_warnings(record=True) as want_warnings:
            warnings.simplefilter("always")
            want = np.histogram(a, "stone", range=span)
        with warnings.catch_warnings(record=True) as got_warnings:
            warnings.simplefilter("always")
            got = cu.histogram(on(a, device), "stone", range=span)
        same(got[1], want[1])
        same(got[0], want[0])
        assert [str(w.message) for w in got_warnings] == [str(w.message) for w in want_warnings]
    ones = np.ones(5, dtype)
    same(cu.histogram_bin_edges(on(ones, device), "stone"), np.histogram_bin_edges(ones, "stone"))


@pytest.mark.parametrize("device", DEVICES)
def test_histogram_range_weights_and_errors(device):
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal(500), rng.random(500)
    for got, want in zip(cu.histogram(on(a, device), 6, range=(-1.3, 1.1), weights=on(w, device)),
                         np.histogram(a, 6, range=(-1.3, 1.1), weights=w), strict=True):
        same(got, want, exact=False)
    with pytest.raises(ValueError, match="max must be larger than min"):
        cu.histogram(on(a, device), range=(1, 0))
    with pytest.raises(ValueError, match="must be positive"):
        cu.histogram(on(a, device), bins=0)
    with pytest.raises(ValueError, match="increase monotonically"):
        cu.histogram(on(a, device), bins=on([0.0, 2.0, 1.0], device))


@pytest.mark.parametrize("device", DEVICES)
def test_histogram2d_and_dd(device):
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(800), rng.standard_normal(800)
    for got, want in zip(cu.histogram2d(on(x, device), on(y, device), bins=(4, 6)), np.histogram2d(x, y, bins=(4, 6)),
                         strict=True):
        same(got, want, exact=False)
    s = rng.standard_normal((600, 3))
    hist, edges = cu.histogramdd(on(s, device), bins=3, density=True)
    want_hist, want_edges = np.histogramdd(s, bins=3, density=True)
    same(hist, want_hist, exact=False)
    for g, w in zip(edges, want_edges, strict=True):
        same(g, w, exact=False)
