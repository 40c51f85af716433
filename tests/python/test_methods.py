"""python/cupric/_methods.py: NumPy's ndarray methods on cupric arrays against NumPy's, on the CPU
and (marked gpu) on a CUDA device."""

import io
import pickle

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(88)


def same(got, want):
    g = np.asarray(got.to_device("cpu") if isinstance(got, cu.ndarray) else got)
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("device", DEVICES)
def test_methods_that_return_arrays(device):
    a = RNG.integers(-9, 9, (4, 5))
    x = cu.asarray(a, device=device)
    same(x.take([3, 0, 1], axis=1), a.take([3, 0, 1], axis=1))
    same(x.take([7, 2]), a.take([7, 2]))
    same(x.repeat(2, axis=0), a.repeat(2, axis=0))
    same(x.repeat([1, 0, 2, 1, 1], axis=1), a.repeat([1, 0, 2, 1, 1], axis=1))
    same(x.compress([True, False, True], axis=0), a.compress([True, False, True], axis=0))
    idx = RNG.integers(0, 3, (4, 5))
    same(cu.asarray(idx, device=device).choose([x, x * 2, x - 1]), idx.choose([a, a * 2, a - 1]))
    for k in (0, 2, 4):
        part = np.asarray(x.argpartition(k, axis=1).to_device("cpu"))
        np.testing.assert_array_equal(np.take_along_axis(a, part, 1)[:, k], np.sort(a, axis=1)[:, k])


@pytest.mark.parametrize("device", DEVICES)
def test_methods_that_write_in_place(device):
    a = RNG.standard_normal((3, 4))
    x = cu.asarray(a, device=device)
    x.fill(2.5)
    same(x, np.full((3, 4), 2.5))
    x = cu.asarray(a, device=device)
    want = a.copy()
    x.put([0, 5, 11], [9.0, 8.0])
    want.put([0, 5, 11], [9.0, 8.0])
    same(x, want)
    x = cu.asarray(a, device=device)
    assert x.partition(2, axis=1) is None
    got = np.asarray(x.to_device("cpu"))
    np.testing.assert_array_equal(got[:, 2], np.sort(a, axis=1)[:, 2])
    assert (got[:, :2] <= got[:, 2:3]).all() and (got[:, 3:] >= got[:, 2:3]).all()


@pytest.mark.parametrize("device", DEVICES)
def test_bytes_and_pickles(device, tmp_path):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    x = cu.asarray(a, device=device)
    assert x.tobytes() == a.tobytes() and x[:, ::2].tobytes() == a[:, ::2].tobytes()
    assert x.tobytes("F") == a.tobytes("F")
    x.tofile(tmp_path / "raw.bin")
    np.testing.assert_array_equal(np.fromfile(tmp_path / "raw.bin", dtype=np.float32).reshape(3, 4), a)
    same(pickle.loads(x.dumps()), a)
    x.dump(tmp_path / "x.pkl")
    with open(tmp_path / "x.pkl", "rb") as f:
        same(pickle.load(f), a)
    buf = io.BytesIO()
    x.dump(buf)
    same(pickle.loads(buf.getvalue()), a)
