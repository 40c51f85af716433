"""default_rng's seeds: NumPy integers, 0-d arrays, sequences and arrays of ints (folded into the
Philox key as default_rng's documentation says, checked against a reference written here),
SeedSequence, Generators, and the errors for everything else."""

import cupric as cu
import numpy as np
import pytest

MASK = 2**64 - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def reference_key(words):
    """The documented fold: key = w0, then key = splitmix64(key) ^ w for each further word."""
    key = words[0] if words else 0
    for w in words[1:]:
        key = splitmix64(key) ^ w
    return key


def stream(seed, n=16):
    return np.asarray(cu.random.default_rng(seed).random(n))


@pytest.mark.parametrize("seed", [np.int64(12345), np.uint64(12345), np.int8(57), np.array(12345), cu.asarray(12345),
                                  np.array([12345]), [12345], (12345,)])
def test_integer_like_seeds_are_the_int(seed):
    as_int = int(np.asarray(seed).reshape(-1)[0])
    assert cu.random.default_rng(seed).seed == as_int
    np.testing.assert_array_equal(stream(seed), stream(as_int))


def test_int_seeds_are_the_key():
    for s in (0, 1, 2**32, 2**63, 2**64 - 1):
        assert cu.random.default_rng(s).seed == s


@pytest.mark.parametrize("words", [[1, 2], [0, 1], [2**64 - 1, 0, 7], list(range(100)), [5, 0], [0, 0, 0]])
def test_sequences_fold_as_documented(words):
    key = reference_key(words)
    for seed in (words, tuple(words), np.array(words, dtype=np.uint64), cu.asarray(np.array(words, dtype=np.uint64))):
        assert cu.random.default_rng(seed).seed == key
    np.testing.assert_array_equal(stream(words), stream(key))


def test_big_ints_fold_their_64_bit_words():
    big = 7 + (3 << 64) + (11 << 128)
    assert cu.random.default_rng(big).seed == reference_key([7, 3, 11]) == cu.random.default_rng([7, 3, 11]).seed
    assert cu.random.default_rng(2**64).seed == reference_key([0, 1])
    assert cu.random.default_rng(2**64).seed != cu.random.default_rng(1).seed  # no trivial collisions


def test_nested_sequences_flatten_in_c_order():
    nested = [[1, 2, 3], [4, 5, 6]]
    assert cu.random.default_rng(nested).seed == reference_key([1, 2, 3, 4, 5, 6])
    assert cu.random.default_rng(np.array(nested).T).seed == reference_key([1, 4, 2, 5, 3, 6])


def test_different_sequences_give_different_streams():
    keys = {cu.random.default_rng(s).seed for s in ([1, 2], [2, 1], [1, 2, 0], [1], [2], [1, 2, 3])}
    assert len(keys) == 6


def test_empty_sequence_is_key_zero():
    assert cu.random.default_rng([]).seed == 0
    assert cu.random.default_rng(np.array([], dtype=np.int64)).seed == 0


def test_seed_sequence():
    ss = np.random.SeedSequence(2024)
    words = ss.generate_state(2)
    assert cu.random.default_rng(ss).seed == int(words[0]) | (int(words[1]) << 32)
    child_keys = {cu.random.default_rng(c).seed for c in ss.spawn(3)}
    assert len(child_keys) == 3


def test_generator_is_returned_as_it_is():
    g = cu.random.default_rng(3)
    g.random(5)
    assert cu.random.default_rng(g) is g


@pytest.mark.parametrize("seed, error, message", [
    (-1, ValueError, "seed must be non-negative, got -1"),
    (np.int64(-5), ValueError, "seed must be non-negative, got -5"),
    ([1, -2], ValueError, "seed values must be non-negative, got -2"),
    (np.array([3, -4]), ValueError, "seed values must be non-negative, got -4"),
    (1.5, TypeError, "seed must be None, a non-negative int, a sequence or array of non-negative ints"),
    ([1.0, 2.0], TypeError, r"got \[1.0, 2.0\]"),
    (True, TypeError, "got True"),
    ("seed", TypeError, "got 'seed'"),
    ([2**64], TypeError, r"got \[18446744073709551616\]"),
    (object(), TypeError, "got <object object"),
])
def test_bad_seeds_raise(seed, error, message):
    with pytest.raises(error, match=message):
        cu.random.default_rng(seed)
    with pytest.raises(error, match=message):
        cu.random.Generator(seed)
