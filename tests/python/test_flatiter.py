"""python/cupric/_flatiter.py: x.flat against NumPy's flatiter (reads, writes with repeated values,
iteration, coordinates), on C-ordered and strided arrays, on the CPU and (marked gpu) on a CUDA device."""

import cupric as cu
import numpy as np
import pytest
from oracle_helpers import assert_same

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(19)
KEYS = [3, -1, slice(2, 9, 3), slice(None, None, -2), [0, 5, 5, 2], np.array([1, 4]), Ellipsis]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("strided", [False, True])
def test_flat_reads_and_writes_match_numpy(strided, device):
    for key in KEYS + ["mask"]:
        base = RNG.integers(-9, 9, (4, 6))
        a = base[:, ::2] if strided else base[:3]
        x = cu.asarray(base, device=device)[:, ::2] if strided else cu.asarray(base, device=device)[:3]
        k = RNG.random(a.size) < 0.5 if isinstance(key, str) else key
        got = x.flat[k]
        assert_same(got if isinstance(got, cu.ndarray) else cu.asarray(got), np.asarray(a.flat[k]))
        values = RNG.integers(10, 20, 3)
        if isinstance(k, int):  # one position takes one value
            a.flat[k] = x.flat[k] = int(values[0])
        else:
            a.flat[k] = values
            x.flat[k] = cu.asarray(values, device=device)  # repeated over the positions, as NumPy's
        assert_same(x, a)
        assert x.device == device


@pytest.mark.parametrize("device", DEVICES)
def test_flat_iteration_and_attributes(device):
    a = RNG.standard_normal((2, 3))[:, ::-1]
    x = cu.asarray(a, device=device)
    it, nit = x.flat, a.flat
    assert isinstance(it, cu.flatiter) and it.base is x and len(it) == len(nit) == 6
    assert [float(v) for v in it] == list(nit)
    it, nit = x.flat, a.flat
    next(it), next(nit), next(it), next(nit)
    assert (it.index, it.coords) == (nit.index, nit.coords)
    assert_same(it.copy(), nit.copy())
    np.testing.assert_array_equal(np.asarray(it), np.asarray(nit))
    x.flat = 7.5
    a.flat = 7.5
    assert_same(x, a)
    zero_d = cu.asarray(np.float32(2.0), device=device)
    zero_d.flat[0] = 3
    assert float(zero_d) == 3.0 and list(zero_d.flat) == [3.0]
    with pytest.raises(TypeError, match="cupric array"):
        cu.flatiter(a)
