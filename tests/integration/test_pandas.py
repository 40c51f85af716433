"""pandas Series and DataFrames built from cupric CPU arrays, and the way back (cu.asarray of
pandas objects, np.asarray round trips), against the same objects built from NumPy arrays."""

import cupric as cu
import numpy as np
import pytest
from clients import check

pd = pytest.importorskip("pandas")

RNG = np.random.default_rng(12)
VALUES = RNG.standard_normal((6, 3))
INTS = RNG.integers(-50, 50, 6)


def test_series_from_cupric():
    got = pd.Series(cu.asarray(VALUES[:, 0]), name="a")
    pd.testing.assert_series_equal(got, pd.Series(VALUES[:, 0], name="a"))
    pd.testing.assert_series_equal(pd.Series(cu.asarray(INTS)), pd.Series(INTS))
    pd.testing.assert_series_equal(pd.Series(cu.asarray(INTS > 0)), pd.Series(INTS > 0))


def test_dataframe_from_cupric():
    got = pd.DataFrame(cu.asarray(VALUES), columns=list("abc"))
    pd.testing.assert_frame_equal(got, pd.DataFrame(VALUES, columns=list("abc")))
    cols = pd.DataFrame({"x": cu.asarray(VALUES[:, 0]), "n": cu.asarray(INTS)})
    pd.testing.assert_frame_equal(cols, pd.DataFrame({"x": VALUES[:, 0], "n": INTS}))


def test_index_from_cupric():
    pd.testing.assert_index_equal(pd.Index(cu.asarray(INTS)), pd.Index(INTS))


def test_pandas_computes_on_what_it_was_given():
    got = pd.DataFrame(cu.asarray(VALUES), columns=list("abc"))
    want = pd.DataFrame(VALUES, columns=list("abc"))
    pd.testing.assert_series_equal(got.mean(), want.mean())
    pd.testing.assert_frame_equal(got.cumsum() * 2 - got.abs(), want.cumsum() * 2 - want.abs())
    pd.testing.assert_frame_equal(got.describe(), want.describe())


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16", "uint8", "bool"])
def test_round_trips(dtype):
    n = (VALUES * 20).astype(dtype)
    x = cu.asarray(n, copy=True)
    frame = pd.DataFrame(np.asarray(x))
    back = cu.asarray(frame)  # pandas objects have __array__: NumPy's view of their data
    check(back, n)
    check(cu.asarray(frame[0]), n[:, 0])
    check(cu.asarray(frame.to_numpy()), n)
    check(cu.asarray(pd.Series(x[:, 1]), dtype="float64"), n[:, 1].astype("float64"))


def test_cupric_computes_on_pandas_columns():
    frame = pd.DataFrame(VALUES, columns=list("abc"))
    got = cu.sqrt(cu.asarray(frame["a"]) ** 2 + cu.asarray(frame["b"]) ** 2)
    check(got, np.hypot(VALUES[:, 0], VALUES[:, 1]), rtol=1e-12)
    check(cu.sum(cu.asarray(frame), axis=0), VALUES.sum(axis=0), rtol=1e-12)
