"""xarray DataArrays and Datasets over cupric data: the data stays a cupric array through
arithmetic, reductions and indexing, and every result equals the same call over NumPy data."""

import cupric as cu
import numpy as np
import pytest
from clients import NUMPY_NAMES, check, needs

xr = pytest.importorskip("xarray")

RNG = np.random.default_rng(8)
VALUES = RNG.standard_normal((4, 6))
COORDS = {"x": np.arange(4) * 10, "y": list("abcdef")}


def arrays():
    return (
        xr.DataArray(cu.asarray(VALUES, copy=True), dims=("x", "y"), coords=COORDS, name="v"),
        xr.DataArray(VALUES.copy(), dims=("x", "y"), coords=COORDS, name="v"),
    )


def same(got, want):
    """Same dims, coords and values; the data stays cupric."""
    assert isinstance(got, xr.DataArray)
    assert got.dims == want.dims
    for name in want.coords:
        np.testing.assert_array_equal(got.coords[name].values, want.coords[name].values)
    check(got.data, want.data)


OPS = {
    "arithmetic": lambda a: (a * 2 + 1) / (abs(a) + 1) - a**2,
    "ufunc": lambda a: np.exp(-a * a) + np.sin(a),
    "broadcast-by-name": lambda a: a - a.mean("x"),
    "align-coords": lambda a: a.isel(x=slice(1, None)) + a,
    "sum-dim": lambda a: a.sum("x"),
    "mean-all": lambda a: a.mean(),
    "std-dim": lambda a: a.std("y"),
    "std-ddof": lambda a: a.std("x", ddof=1),
    "max-min": lambda a: a.max("y") - a.min("y"),
    "cumsum": lambda a: a.cumsum("y"),
    "argmax": lambda a: a.argmax("y"),
    "isel": lambda a: a.isel(x=1),
    "isel-slices": lambda a: a.isel(x=slice(1, 3), y=slice(None, None, 2)),
    "sel-label": lambda a: a.sel(y="c"),
    "sel-list": lambda a: a.sel(x=[10, 30]),
    "where": lambda a: a.where(a > 0, -1.0),
    "transpose": lambda a: a.T + 0,
    "concat": lambda a: xr.concat([a, a * 2], dim="x"),
    "groupby-mean": lambda a: a.groupby("x").mean(),
    "count": lambda a: (a > 0).sum("y") + a.count("y"),
    "clip-round": lambda a: a.clip(-0.5, 0.5).round(2),
    "astype": lambda a: (a * 10).astype("int32"),
}


@pytest.mark.parametrize("op", OPS.values(), ids=OPS.keys())
def test_dataarray_ops_match_numpy_data(op):
    got, want = (op(a) for a in arrays())
    same(got, want)


def test_constructing_keeps_cupric_data():
    a, _ = arrays()
    assert isinstance(a.data, cu.ndarray) and a.dtype == np.float64 and a.shape == (4, 6)
    assert isinstance(a.values, np.ndarray) and isinstance(a.to_numpy(), np.ndarray)
    np.testing.assert_array_equal(a.values, VALUES)
    assert "v" in repr(a) and "(x: 4, y: 6)" in repr(a)


def test_dataset_reductions():
    a, n = arrays()
    got = xr.Dataset({"v": a, "w": a * 2}).sum("x")
    want = xr.Dataset({"v": n, "w": n * 2}).sum("x")
    for name in ("v", "w"):
        same(got[name], want[name])


@needs("pad", issue=NUMPY_NAMES)
def test_rolling_mean():
    got, want = (a.rolling(y=3).mean() for a in arrays())
    same(got, want)
