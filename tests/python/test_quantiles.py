"""python/cupric/_quantiles.py against NumPy on every device: median, quantile and percentile
with every method, weights= (inverted_cdf), their nan-variants, axes/keepdims/out, result dtypes, and ptp."""

import warnings

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
           "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


def host(a):
    return np.asarray(a.to_device("cpu"))


def on(x, device):
    return cu.asarray(x).to_device(device)


def same(got, want):
    g, w = host(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
    np.testing.assert_array_equal(g, w)


def data(dtype, nan):
    x = (np.random.default_rng(0).standard_normal((7, 6)) * 10).astype(dtype)
    if nan:
        x[2, 3] = np.nan
        x[:, 5] = np.nan
    return x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("q", [0.3, [0.0, 0.25, 0.5, 1.0], "np.float64"])
def test_quantile_every_method(method, dtype, q, device):
    x = data(dtype, nan=dtype != "int64")
    q = np.float64(0.7) if q == "np.float64" else q
    cq = on(q, device) if isinstance(q, list) else q
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in [None, 0, 1, (0, 1)]:
            same(cu.quantile(on(x, device), cq, axis=axis, method=method),
                 np.quantile(x, q, axis=axis, method=method))
            same(cu.nanquantile(on(x, device), cq, axis=axis, method=method),
                 np.nanquantile(x, q, axis=axis, method=method))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "float16"])
def test_median_percentile_ptp(dtype, device):
    x = data(dtype, nan=False)
    c = on(x, device)
    for axis in [None, 0, 1, -1]:
        for keepdims in [False, True]:
            same(cu.median(c, axis=axis, keepdims=keepdims), np.median(x, axis=axis, keepdims=keepdims))
            same(cu.percentile(c, 30, axis=axis, keepdims=keepdims), np.percentile(x, 30, axis=axis, keepdims=keepdims))
            same(cu.ptp(c, axis=axis, keepdims=keepdims), np.ptp(x, axis=axis, keepdims=keepdims))
    same(cu.nanpercentile(c, [10, 90], axis=0), np.nanpercentile(x, [10, 90], axis=0))


@pytest.mark.parametrize("device", DEVICES)
def test_nan_slices(device):
    x = data("float64", nan=True)
    c = on(x, device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in [None, 0, 1]:
            same(cu.median(c, axis=axis), np.median(x, axis=axis))
            same(cu.nanmedian(c, axis=axis), np.nanmedian(x, axis=axis))
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        cu.nanmedian(c, axis=0)


@pytest.mark.parametrize("device", DEVICES)
def test_out_and_errors(device):
    x = data("float64", nan=False)
    out = cu.empty(6, device=device)
    assert cu.quantile(on(x, device), 0.5, axis=0, out=out) is out
    same(out, np.quantile(x, 0.5, axis=0))
    with pytest.raises(ValueError, match="Quantiles must be in the range"):
        cu.quantile(on(x, device), 1.5)
    with pytest.raises(ValueError, match="Percentiles must be in the range"):
        cu.percentile(on(x, device), -1)
    with pytest.raises(ValueError, match="not a valid method"):
        cu.quantile(on(x, device), 0.5, method="best")
    with pytest.raises(TypeError, match="real numbers"):
        cu.percentile(on(x.astype(complex), device), 5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_weighted_inverted_cdf(dtype, device):
    rng = np.random.default_rng(8)
    x = data(dtype, nan=dtype != "int64")
    w = rng.integers(0, 4, x.shape).astype(np.float64)
    w[0, :3] = 0.0  # zero weights never hold a quantile
    cases = [(None, w), (0, w), (1, w), ((0, 1), w), (0, w[:, 0]), (1, w[0] + 1), ((1, 0), w.T)]
    qs = [0.0, 0.3, [0.0, 0.25, 0.5, 0.99, 1.0], np.float32(0.4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis, weights in cases:
            for q in qs:
                # NumPy's nanquantile fails on weights of fewer dimensions (IndexError)
                for name in ["quantile", "nanquantile"] if weights.shape == x.shape else ["quantile"]:
                    same(getattr(cu, name)(on(x, device), q, axis=axis, method="inverted_cdf",
                                           weights=on(weights, device)),
                         getattr(np, name)(x, q, axis=axis, method="inverted_cdf", weights=weights))
            same(cu.percentile(on(x, device), [10, 90], axis=axis, method="inverted_cdf", weights=on(weights, device),
                               keepdims=True),
                 np.percentile(x, [10, 90], axis=axis, method="inverted_cdf", weights=weights, keepdims=True))


@pytest.mark.parametrize("device", DEVICES)
def test_weights_errors_are_numpys(device):
    x = on(data("float64", nan=False), device)
    w = on(np.ones((7, 6)), device)
    with pytest.raises(ValueError, match="Only method 'inverted_cdf' supports weights. Got: linear."):
        cu.quantile(x, 0.5, weights=w)
    with pytest.raises(TypeError, match="Axis must be specified"):
        cu.quantile(x, 0.5, method="inverted_cdf", weights=w[0])
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        cu.quantile(x, 0.5, axis=0, method="inverted_cdf", weights=w[0])
    with pytest.raises(ValueError, match="Weights must be non-negative"):
        cu.quantile(x, 0.5, method="inverted_cdf", weights=-w)
    with pytest.raises(ValueError, match="Weights included NaN, inf or were all zero"):
        cu.quantile(x, 0.5, method="inverted_cdf", weights=w * 0)


def select_cases(dtype, nan, n):
    """A long column (past the GPU's selection threshold) with NaN, repeats and extremes."""
    rng = np.random.default_rng(31)
    x = (rng.standard_normal(n) * 1000).astype(dtype)
    x[rng.integers(0, n, n // 3)] = x[7]  # a long run of one value
    if nan:
        x[rng.integers(0, n, 5)] = np.nan
    return x


def check_order_statistics(x, device):
    c = on(x, device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(cu.median(c), np.median(x))
        same(cu.nanmedian(c), np.nanmedian(x))
        same(cu.median(c[:-1]), np.median(x[:-1]))  # an even count: the mean of two ranks
        for method in METHODS:
            same(cu.quantile(c, [0.0, 0.1, 0.5, 0.77, 1.0], method=method),
                 np.quantile(x, [0.0, 0.1, 0.5, 0.77, 1.0], method=method))
            same(cu.nanquantile(c, 0.3, method=method), np.nanquantile(x, 0.3, method=method))
        same(cu.percentile(c.reshape(-1, 1), 42, axis=0, keepdims=True),
             np.percentile(x.reshape(-1, 1), 42, axis=0, keepdims=True))


def test_selection_composes_as_the_sort(monkeypatch):
    # the compositions around the GPU's radix select, on the CPU with a stand-in select (the rows
    # of the sorted column): the ranks they ask for, how they split them, the NaN check
    from cupric import _quantiles

    asked = []

    def fake_select(a, ranks):
        asked.append(ranks.size)
        return cu.sort(a.reshape(-1))[ranks]

    monkeypatch.setattr(_quantiles, "_selectable", lambda flat, ranks: flat.shape[1] == 1 and ranks <= 32)
    monkeypatch.setattr(_quantiles._c, "_select_ranks", fake_select, raising=False)
    for dtype, nan in [("float64", True), ("float32", False), ("int64", False), ("float16", True)]:
        check_order_statistics(select_cases(dtype, nan, 1001), "cpu")
    assert asked and max(asked) <= 11  # one select per statistic: 5 quantiles, twice, and the last row


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16", "uint8", "float16"])
def test_order_statistics_of_a_long_column_select_on_the_gpu(dtype):
    floating = np.dtype(dtype).kind == "f"
    for nan in [False, True] if floating else [False]:
        check_order_statistics(select_cases(dtype, nan, (1 << 17) + 3), "cuda")
