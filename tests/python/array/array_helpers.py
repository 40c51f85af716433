"""Helpers shared by the array tests: NumPy-oracle checks, random input pairs, and error parity."""

import cupric as cu
import numpy as np
import pytest

RNG = np.random.default_rng(1234)


def shares_storage(a, b):
    """True when two cupric arrays are views of one storage."""
    return a._storage_id == b._storage_id


def check(got, want):
    """`got` is a cupric array equal to NumPy's `want`: shape, dtype and every element."""
    assert isinstance(got, cu.ndarray)
    got = np.asarray(got)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def check_on(device, got, want):
    """check(), and the result lives on `device`."""
    assert str(got.device).startswith(device), (got.device, device)
    check(got, want)


def pair(shape, dtype=np.int64, device="cpu"):
    """A random NumPy array and its cupric copy (on `device`)."""
    n = RNG.integers(-100, 100, size=shape).astype(dtype)
    return n, cu.asarray(n, copy=True, device=device)


def raises_like(np_fn, cu_fn, same_message=True):
    """cupric raises the same exception type as NumPy (and, by default, the same message)."""
    with pytest.raises(Exception) as np_err:
        np_fn()
    with pytest.raises(type(np_err.value)) as cu_err:
        cu_fn()
    if same_message:
        assert str(cu_err.value).strip() == str(np_err.value).strip()
