"""cupric.random: reproducibility, distributions (moments and ranges), dtypes, errors."""

import cupric as cu
import numpy as np
import pytest


def test_same_seed_same_stream_and_counter_advances():
    a = cu.random.default_rng(123)
    b = cu.random.default_rng(123)
    x1, y1 = np.asarray(a.random(1001)), np.asarray(a.random(7))
    x2 = np.asarray(b.random(1001))
    np.testing.assert_array_equal(x1, x2)
    assert a.counter == (1001 + 1) // 2 + (7 + 1) // 2
    assert not np.array_equal(y1, x1[:7])
    assert not np.array_equal(np.asarray(cu.random.default_rng(124).random(10)), x1[:10])


def test_stream_does_not_depend_on_threads():
    old = cu.get_num_threads()
    try:
        cu.set_num_threads(1)
        one = np.asarray(cu.random.default_rng(5).standard_normal(200_001, dtype=cu.float32))
        cu.set_num_threads(2)
        two = np.asarray(cu.random.default_rng(5).standard_normal(200_001, dtype=cu.float32))
    finally:
        cu.set_num_threads(old)
    np.testing.assert_array_equal(one, two)


def test_split_draws_are_a_prefix_free_continuation():
    # the counter moves by whole blocks, so two draws never share numbers
    g = cu.random.default_rng(9)
    a = np.asarray(g.integers(0, 2**62, 5))
    b = np.asarray(g.integers(0, 2**62, 5))
    assert len(set(a.tolist()) | set(b.tolist())) == 10


@pytest.mark.parametrize("dtype", [cu.float32, cu.float64])
def test_uniform_moments_and_range(dtype):
    x = np.asarray(cu.random.default_rng(0).uniform(-2.0, 3.0, (500, 400), dtype=dtype))
    assert x.dtype == np.dtype(dtype) and x.shape == (500, 400)
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.02
    assert abs(x.var() - 25 / 12) < 0.03


@pytest.mark.parametrize("dtype", [cu.float32, cu.float64])
def test_normal_moments(dtype):
    x = np.asarray(cu.random.default_rng(1).normal(3.0, 2.0, 400_000, dtype=dtype)).astype(np.float64)
    assert abs(x.mean() - 3.0) < 0.02
    assert abs(x.std() - 2.0) < 0.02
    z = (x - 3.0) / 2.0
    assert abs((z**3).mean()) < 0.03 and abs((z**4).mean() - 3.0) < 0.06  # skew 0, kurtosis 3
    assert np.isfinite(x).all()


def test_exponential_mean():
    x = np.asarray(cu.random.default_rng(2).exponential(2.5, 300_000))
    assert x.min() >= 0 and abs(x.mean() - 2.5) < 0.03


@pytest.mark.parametrize("dtype", [cu.int8, cu.uint8, cu.int32, cu.int64, cu.uint64])
def test_integers_cover_range_uniformly(dtype):
    x = np.asarray(cu.random.default_rng(3).integers(2, 12, 100_000, dtype=dtype))
    assert x.dtype == np.dtype(dtype)
    counts = np.bincount(x.astype(np.int64), minlength=12)[2:]
    assert counts.min() > 9_000 and counts.max() < 11_000
    assert np.asarray(cu.random.default_rng(3).integers(5, size=1000)).max() == 4
    assert np.asarray(cu.random.default_rng(3).integers(1, 3, 1000, endpoint=True)).max() == 3


def test_errors():
    g = cu.random.default_rng(0)
    with pytest.raises(ValueError, match="low >= high"):
        g.integers(5, 5)
    with pytest.raises(ValueError, match="high is out of bounds for int8"):  # NumPy's message
        g.integers(0, 1000, dtype=cu.int8)
    with pytest.raises(TypeError, match="float32 or float64"):
        g.random(3, dtype=cu.int32)
    with pytest.raises(ValueError, match="scale < 0"):
        g.normal(0, -1)
    with pytest.raises(ValueError, match="non-negative"):
        cu.random.default_rng(-1)


def test_legacy_functions():
    cu.random.seed(7)
    a = np.asarray(cu.random.rand(3, 4))
    cu.random.seed(7)
    b = np.asarray(cu.random.rand(3, 4))
    np.testing.assert_array_equal(a, b)
    assert np.asarray(cu.random.randn(5)).shape == (5,)
    r = np.asarray(cu.random.randint(0, 3, size=100))
    assert r.min() >= 0 and r.max() <= 2


def test_integers_over_the_whole_range_of_each_dtype():
    # rng.integers(0, 2**64, dtype=uint64) raised std::bad_cast: bounds are exact past int64
    g = cu.random.default_rng(5)
    for dtype in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]:
        info = np.iinfo(dtype)
        lo, hi = int(info.min), int(info.max)
        for low, high, endpoint in [(lo, hi + 1, False), (lo, hi, True), (hi - 3, hi + 1, False), (lo, lo + 2, False)]:
            x = np.asarray(g.integers(low, high, size=4000, dtype=dtype, endpoint=endpoint))
            assert x.dtype == np.dtype(dtype)
            top = high if endpoint else high - 1
            assert int(x.min()) >= low and int(x.max()) <= top
            if top - low < 8:
                assert set(x.tolist()) == set(range(low, top + 1))  # every value drawn
            else:
                assert int(x.min()) < low + (top - low) // 8 and int(x.max()) > top - (top - low) // 8
    np_g = np.random.default_rng(0)
    for args, kwargs in [((0, 2**65), {"dtype": "uint64"}), ((-1, 5), {"dtype": "uint8"}), ((5, 5), {}),
                         ((3, 1), {"endpoint": True}), ((0, 257), {"dtype": "uint8"}), ((-(2**70), 0), {})]:
        with pytest.raises(ValueError) as want:
            np_g.integers(*args, **kwargs)
        with pytest.raises(ValueError) as got:
            g.integers(*args, **kwargs)
        assert str(got.value) == str(want.value)
