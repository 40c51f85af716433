"""cupric.random: counter-based random numbers, the same stream on the CPU and the GPU.

    rng = cu.random.default_rng(42)
    x = rng.standard_normal((1000, 1000), dtype=cu.float32)

The legacy functions (seed, rand, randn, randint, random, choice, permutation, shuffle, ...) draw
from one global Generator.
"""

from .._cupric import Generator

__all__ = ["Generator", "default_rng", "seed", "rand", "randn", "randint", "random", "random_sample",
           "uniform", "normal", "standard_normal", "exponential", "choice", "permutation", "shuffle"]


def default_rng(seed=None):
    """A new Generator (Philox4x32-10) seeded with `seed`; a Generator is returned as it is.

    The seed becomes the generator's 64-bit Philox key (`Generator.seed`), the same way in every
    process and on every machine:
    - None: 64 bits from the OS;
    - an int (or np.integer, or a 0-d integer array) below 2**64: the key is the int itself;
    - a larger int, or a sequence or array of ints (nested ones flattened in C order), each entry
      below 2**64: the words w0, w1, ... (an int's 64-bit words, least significant first) fold into
      key = w0, then key = splitmix64(key) ^ w for each further word, splitmix64 being SplitMix64's
      output function of (key + 0x9E3779B97F4A7C15). So default_rng([s]) is default_rng(s), and
      [] gives key 0;
    - an object with generate_state(n) (numpy.random.SeedSequence): its first two 32-bit words,
      w0 | w1 << 32.
    Negative values, floats, bools and strings raise.
    """
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


_global = Generator(None)


def seed(seed=None):
    """Reseeds the global generator used by the legacy functions."""
    global _global
    _global = Generator(seed)


def rand(*shape):
    """Uniform [0, 1) float64 of the given shape (legacy)."""
    return _global.random(shape if shape else None)


def randn(*shape):
    """Standard normal float64 of the given shape (legacy)."""
    return _global.standard_normal(shape if shape else None)


def randint(low, high=None, size=None, dtype=None):
    """Integers in [low, high) (legacy; high=None means [0, low))."""
    return _global.integers(low, high, size=size, dtype=dtype)


def random(size=None):
    """Uniform [0, 1) float64 (legacy)."""
    return _global.random(size)


random_sample = random


def uniform(low=0.0, high=1.0, size=None):
    return _global.uniform(low, high, size)


def normal(loc=0.0, scale=1.0, size=None):
    return _global.normal(loc, scale, size)


def standard_normal(size=None):
    return _global.standard_normal(size)


def exponential(scale=1.0, size=None):
    return _global.exponential(scale, size)


def choice(a, size=None, replace=True, p=None):
    return _global.choice(a, size, replace, p)


def permutation(x):
    return _global.permutation(x)


def shuffle(x):
    _global.shuffle(x)
