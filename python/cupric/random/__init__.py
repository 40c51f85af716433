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
    """A new Generator (Philox4x32-10) seeded with `seed` (None: from the OS)."""
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
