"""cupric.random orderings and samples (permutation, shuffle, choice) on every device: the same
seed gives the same result on the CPU and the GPU; each result is a valid ordering / sample;
distributions are checked loosely over many draws; bad input raises and changes nothing."""

import cupric as cu
import numpy as np
import pytest


def on_cpu(seed):
    return cu.random.default_rng(seed)


def test_permutation_is_an_ordering_and_device_independent(device):
    for n in (0, 1, 2, 3, 10, 1001):
        got = cu.random.default_rng(n).permutation(n, device=device)
        assert got.device == device and got.dtype == cu.int64 and got.shape == (n,)
        g = np.asarray(got)
        np.testing.assert_array_equal(np.sort(g), np.arange(n))
        np.testing.assert_array_equal(g, np.asarray(on_cpu(n).permutation(n)))


def test_permutation_counter_advances_and_draws_differ():
    g = cu.random.default_rng(4)
    a = np.asarray(g.permutation(50))
    assert g.counter == 25  # ceil(49 / 2) blocks
    b = np.asarray(g.permutation(50))
    assert not np.array_equal(a, b)


def test_permutation_positions_are_uniform():
    # each value lands in each position about equally often over many orderings of 5
    g = cu.random.default_rng(11)
    counts = np.zeros((5, 5))
    for _ in range(4000):
        p = np.asarray(g.permutation(5))
        counts[np.arange(5), p] += 1
    assert np.all(np.abs(counts - 800) < 5 * np.sqrt(800))


def test_permutation_of_an_array_reorders_rows(device):
    x = np.random.default_rng(0).standard_normal((7, 3)).astype(np.float32)
    xd = cu.asarray(x, device=device)
    got = cu.random.default_rng(2).permutation(xd)
    order = np.asarray(cu.random.default_rng(2).permutation(7))
    assert got.device == device
    np.testing.assert_array_equal(np.asarray(got), x[order])
    np.testing.assert_array_equal(np.asarray(xd), x)  # the input is not touched


def test_shuffle_in_place(device):
    x = np.arange(40, dtype=np.int32).reshape(10, 4)
    xd = cu.asarray(x.copy(), device=device)  # (on the CPU, asarray shares NumPy's memory)
    view = xd[::2]  # a strided view is shuffled in place too
    cu.random.default_rng(8).shuffle(view)
    order = np.asarray(cu.random.default_rng(8).permutation(5))
    want = x.copy()
    want[::2] = x[::2][order]
    np.testing.assert_array_equal(np.asarray(xd), want)


def test_choice_uniform_with_replacement(device):
    g = cu.random.default_rng(5)
    got = g.choice(7, size=(3, 4), device=device)
    assert got.shape == (3, 4) and got.device == device
    g0 = np.asarray(got)
    assert g0.min() >= 0 and g0.max() < 7
    np.testing.assert_array_equal(g0, np.asarray(on_cpu(5).choice(7, size=(3, 4))))
    pop = cu.asarray(np.array([10.5, 20.5, 30.5], dtype=np.float64), device=device)
    s = np.asarray(cu.random.default_rng(1).choice(pop, size=1000))
    assert set(np.unique(s)) <= {10.5, 20.5, 30.5}
    counts = np.array([(s == v).sum() for v in (10.5, 20.5, 30.5)])
    assert np.all(np.abs(counts - 333) < 80)


def test_choice_without_replacement_is_distinct(device):
    pop = cu.asarray(np.arange(100, 200), device=device)
    s = np.asarray(cu.random.default_rng(3).choice(pop, size=60, replace=False))
    assert len(set(s.tolist())) == 60 and s.min() >= 100 and s.max() < 200
    np.testing.assert_array_equal(s, np.asarray(cu.random.default_rng(3).choice(cu.arange(100, 200), 60, False)))


def test_choice_with_probabilities(device):
    p = np.array([0.1, 0.0, 0.6, 0.3])
    s = np.asarray(cu.random.default_rng(6).choice(4, size=20000, p=cu.asarray(p, device=device), device=device))
    freq = np.bincount(s, minlength=4) / s.size
    np.testing.assert_allclose(freq, p, atol=0.015)
    assert freq[1] == 0
    w = np.asarray(cu.random.default_rng(6).choice(4, size=3, replace=False, p=p.tolist(), device=device))
    assert len(set(w.tolist())) == 3 and 1 not in w  # never the zero-probability element
    np.testing.assert_array_equal(w, np.asarray(on_cpu(6).choice(4, size=3, replace=False, p=p.tolist())))


def test_choice_scalar_and_rows():
    g = cu.random.default_rng(0)
    one = g.choice(5)
    assert one.shape == () and 0 <= int(one) < 5
    rows = g.choice(cu.arange(12).reshape(4, 3), size=2)
    assert rows.shape == (2, 3) and all(int(r[1]) == int(r[0]) + 1 for r in rows)


def test_bad_input_raises_and_leaves_data_alone():
    g = cu.random.default_rng(0)
    before = g.counter
    with pytest.raises(ValueError, match=r"larger sample \(5\) than the population \(3\)"):
        g.choice(3, size=5, replace=False)
    with pytest.raises(ValueError, match="sum to 1"):
        g.choice(3, p=[0.5, 0.6, 0.1])
    with pytest.raises(ValueError, match="non-negative"):
        g.choice(2, p=[1.5, -0.5])
    with pytest.raises(ValueError, match=r"one probability per element \(3\)"):
        g.choice(3, p=[1.0, 0.0])
    with pytest.raises(ValueError, match="fewer non-zero probabilities"):
        g.choice(3, size=2, replace=False, p=[1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="at least one dimension"):
        g.permutation(cu.asarray(3.0))
    with pytest.raises(ValueError, match="non-negative"):
        g.permutation(-1)
    with pytest.raises(ValueError, match=r"negative dimensions are not allowed: size=\(2, -1\)"):
        g.choice(3, size=(2, -1), replace=False)
    with pytest.raises(NotImplementedError, match="axis=1"):
        g.shuffle(cu.zeros((2, 2)), axis=1)
    assert g.counter == before
    x_ro_np = np.arange(4.0)
    x_ro_np.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        g.shuffle(cu.asarray(x_ro_np))
    np.testing.assert_array_equal(x_ro_np, np.arange(4.0))


def test_legacy_sampling_functions():
    cu.random.seed(3)
    a = np.asarray(cu.random.permutation(9))
    cu.random.seed(3)
    np.testing.assert_array_equal(a, np.asarray(cu.random.permutation(9)))
    x = cu.arange(6)
    cu.random.shuffle(x)
    assert sorted(np.asarray(x).tolist()) == list(range(6))
    assert np.asarray(cu.random.choice(3, size=5)).max() < 3
