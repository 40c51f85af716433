"""python/cupric/_io.py: NumPy's files, buffers, text and printing with cupric arrays, round trips
checked against NumPy; on the CPU and (marked gpu) on a CUDA device."""

import io

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(44)


def same(got, want):
    assert isinstance(got, cu.ndarray)
    g = np.asarray(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("device", DEVICES)
def test_npy_and_npz_round_trips(tmp_path, device):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.integers(0, 9, 5)
    x = cu.asarray(a, device=device)
    cu.save(tmp_path / "a.npy", x[:, ::2])
    same(cu.load(tmp_path / "a.npy", device=device), a[:, ::2])
    assert np.load(tmp_path / "a.npy").dtype == np.float32  # a file NumPy reads
    for fn in (cu.savez, cu.savez_compressed):
        fn(tmp_path / "ab.npz", x, second=cu.asarray(b, device=device))
        with cu.load(tmp_path / "ab.npz", device=device) as f:
            assert sorted(f.files) == ["arr_0", "second"] and "second" in f
            same(f["arr_0"], a)
            same(f["second"], b)
            assert str(cu.load(tmp_path / "ab.npz", device=device)["second"].device).startswith(device)
    with pytest.raises(ValueError, match="allow_pickle"):
        np.save(tmp_path / "o.npy", np.array([{}], dtype=object))
        cu.load(tmp_path / "o.npy")


@pytest.mark.parametrize("device", DEVICES)
def test_text_and_buffers(device):
    a = RNG.standard_normal((4, 3))
    buf = io.StringIO()
    cu.savetxt(buf, cu.asarray(a, device=device), fmt="%.17g")
    buf.seek(0)
    same(cu.loadtxt(buf, device=device), a)
    buf.seek(0)
    same(cu.genfromtxt(buf, device=device), a)
    raw = a.astype(np.float32).tobytes()
    same(cu.frombuffer(raw, dtype=np.float32, device=device), np.frombuffer(raw, dtype=np.float32))
    same(cu.fromiter(range(5), dtype=np.int64, device=device), np.arange(5))
    same(cu.fromstring("1 2 3", dtype=int, sep=" ", device=device), np.fromstring("1 2 3", dtype=int, sep=" "))
    same(cu.fromfunction(lambda i, j: i * 10 + j, (3, 4), device=device), np.fromfunction(lambda i, j: i * 10 + j,
                                                                                        (3, 4)))


@pytest.mark.parametrize("device", DEVICES)
def test_raw_files_and_regex_reads(tmp_path, device):
    a = RNG.standard_normal(7)
    cu.asarray(a, device=device)[::2].tofile(tmp_path / "a.bin")
    got = cu.fromfile(tmp_path / "a.bin", dtype=np.float64, device=device)
    assert got.device == device
    same(got, a[::2])
    with pytest.raises(TypeError, match="structured array.*numpy.fromregex"):
        cu.fromregex(tmp_path / "r.txt", r"x=(\d+)", [("x", np.int64)], device=device)


def test_printing_follows_numpy():
    a = RNG.standard_normal((3, 3))
    x = cu.asarray(a)
    assert cu.array2string(x, precision=3) == np.array2string(a, precision=3)
    assert cu.array_str(x, precision=2) == np.array_str(a, precision=2)
    assert cu.array_repr(x, precision=2).replace("array(", "").startswith(
        np.array_repr(a, precision=2).replace("array(", "")[:10])
    with cu.printoptions(precision=1):
        assert cu.get_printoptions()["precision"] == 1
        assert str(x) == np.array_str(a, precision=1)
    assert cu.format_float_positional(0.1) == np.format_float_positional(0.1)
    assert cu.format_float_scientific(1234.5, precision=2) == np.format_float_scientific(1234.5, precision=2)
    assert cu.base_repr(255, 16) == "FF" and cu.binary_repr(-3, width=4) == "1101"
