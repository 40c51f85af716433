"""Out-of-bounds windows and grids: compiled kernels (the CPU compile path) and the interpreter agree
for random tile indices and element offsets anywhere in int64 (near +-2^63 included: windows there
read padding and write nothing, never wrap onto element 0), and for random grids, good and bad
(floats, negative extents and more than 2^63 - 1 blocks raise the same errors on both paths)."""

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

INT64 = st.one_of(
    st.integers(-40, 40),
    st.sampled_from([2**61, -(2**61), 2**62, -(2**62), 2**63 - 1, -(2**63), 2**60 * 7, -(2**60) * 7]),
    st.integers(-(2**63), 2**63 - 1),
)


@ct.kernel
def window_1d(x, out, i, j, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(j,), shape=(BLOCK,), padding=-1.0)
    ct.store(out, index=(i,), tile=t + 0.5)


@ct.kernel
def window_offsets_2d(x, out, r, c, r2, c2, BM: ct.Constant[int], BN: ct.Constant[int]):
    t = ct.load_offset(x, offset=(r, c), shape=(BM, BN), padding=9.0)
    ct.store_offset(out, offset=(r2, c2), tile=t * 2)


@ct.kernel
def window_index_2d(x, out, r, c, BM: ct.Constant[int], BN: ct.Constant[int]):
    t = ct.load(x, index=(r, c), shape=(BM, BN), padding=3.0)
    ct.store(out, index=(c, r), tile=t)


def both(kernel, grid, make_args):
    """Runs the kernel compiled and interpreted on fresh copies of the same arguments; returns the
    NumPy copies of the arrays each left behind."""
    results = []
    for launch in (kernel[grid], kernel.interpret[grid]):
        args = make_args()
        launch(*args)
        results.append([np.asarray(a).copy() for a in args if isinstance(a, cu.ndarray)])
    return results


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(i=INT64, j=INT64)
def test_random_tile_indices_agree(i, j):
    x = np.random.default_rng(0).uniform(-3, 3, 21)
    compiled, interpreted = both(window_1d, (1,), lambda: (cu.asarray(x), cu.zeros(21), i, j, 8))
    np.testing.assert_array_equal(compiled[1], interpreted[1])
    exact_start = i * 8  # Python ints: what the window covers
    touched = [k for k in range(21) if exact_start <= k < exact_start + 8]
    assert np.count_nonzero(compiled[1]) == len(touched)


@SETTINGS
@given(r=INT64, c=INT64, r2=st.integers(-6, 12), c2=INT64)
def test_random_element_offsets_agree(r, c, r2, c2):
    x = np.random.default_rng(1).uniform(-3, 3, (9, 13))
    compiled, interpreted = both(window_offsets_2d, (1,),
                                 lambda: (cu.asarray(x), cu.zeros((9, 13)), r, c, r2, c2, 4, 8))
    np.testing.assert_array_equal(compiled[1], interpreted[1])


@SETTINGS
@given(r=INT64, c=INT64)
def test_random_2d_tile_indices_agree(r, c):
    x = np.random.default_rng(2).uniform(-3, 3, (7, 10))
    compiled, interpreted = both(window_index_2d, (1,), lambda: (cu.asarray(x), cu.zeros((10, 7)), r, c, 2, 4))
    np.testing.assert_array_equal(compiled[1], interpreted[1])


def test_windows_near_the_ends_of_int64_write_nothing():
    for i in (2**61, -(2**61), 2**63 - 1, -(2**63), 2**62 + 1):
        out = cu.zeros(16)
        window_1d[(1,)](cu.ones(16), out, i, 0, 8)  # i * 8 wrapped to 0 before: out[0:8] was written
        assert not np.asarray(out).any(), i


# ---- grids -------------------------------------------------------------------------------------


@ct.kernel
def mark_blocks(out, N0: ct.Constant[int], N1: ct.Constant[int]):
    b = ct.bid(0) + N0 * (ct.bid(1) + N1 * ct.bid(2))
    ct.store(out, index=(b,), tile=ct.full((1,), 1, dtype=ct.int64) + b)


@settings(max_examples=20, deadline=None)
@given(grid=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple), as_int=st.booleans())
def test_random_grids_agree(grid, as_int):
    g = (grid + (1, 1))[:3]
    launch_grid = grid[0] if as_int and len(grid) == 1 else grid
    compiled, interpreted = both(mark_blocks, launch_grid, lambda: (cu.zeros(64, dtype=cu.int64), g[0], g[1]))
    np.testing.assert_array_equal(compiled[0], interpreted[0])
    n = g[0] * g[1] * g[2]
    np.testing.assert_array_equal(compiled[0][:n], np.arange(1, n + 1))


BAD_GRIDS = [
    ((2.5,), TypeError), (2.0, TypeError), ((1, 2.0), TypeError), ("a", TypeError), (None, TypeError),
    ((np.float64(2),), TypeError), ((-1,), ValueError), ((2, -3), ValueError), ((1, 2, 3, 4), ValueError),
    ((), ValueError), ((2**40, 2**40), ValueError), ((2**62, 2, 2), ValueError), ((2**63,), ValueError),
    ((-(2**63) - 1,), ValueError), (lambda meta: 2.5, TypeError), (lambda meta: (3, 2**62, 2), ValueError),
]


@pytest.mark.parametrize("grid, error", BAD_GRIDS)
def test_bad_grids_raise_the_same_error_on_every_path(grid, error):
    out = cu.zeros(8, dtype=cu.int64)
    mark_blocks[(1,)](out, 1, 1)  # a launch plan exists: the fast path sees the bad grid first
    for launch in (mark_blocks[grid], mark_blocks.interpret[grid]):
        with pytest.raises(error, match="grid"):
            launch(out, 1, 1)
    assert np.asarray(out).tolist() == [1] + [0] * 7  # nothing ran


def test_numpy_integer_grids_are_integers():
    out = cu.zeros(8, dtype=cu.int64)
    mark_blocks[(np.int64(3), np.int32(1))](out, 3, 1)
    assert np.asarray(out).tolist() == [1, 2, 3, 0, 0, 0, 0, 0]
