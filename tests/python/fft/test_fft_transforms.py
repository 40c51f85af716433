"""cupric.fft's transforms on the CPU against numpy.fft: every function and norm, odd and prime
lengths, crops and pads, views (non-contiguous, negative strides), axes in any order, empty
arrays, batches, dtypes (float16/bfloat16 computed in float32), out= and NumPy's errors."""

import cupric as cu
import numpy as np
import pytest
from fft_helpers import check, random

NORMS = [None, "backward", "ortho", "forward"]
ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_AXES = ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]
REAL_INPUT = {"rfft", "ihfft", "rfftn", "rfft2"}


def operand(name, shape, complex_dtype=np.complex128, real_dtype=np.float64):
    return random(shape, real_dtype if name in REAL_INPUT else complex_dtype)


@pytest.mark.parametrize("name", ONE_AXIS)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("length", [1, 2, 7, 16, 17, 30, 97, 128])
def test_one_axis_functions_match_numpy(name, norm, length):
    a = operand(name, (3, length))
    if name in ("irfft", "hfft") and length == 1:
        pytest.skip("the default n = 2 (m - 1) is 0 for one input point (an error, tested below)")
    got = getattr(cu.fft, name)(cu.asarray(a), norm=norm)
    check(got, getattr(np.fft, name)(a, norm=norm), a.dtype, length)


@pytest.mark.parametrize("name", ONE_AXIS)
@pytest.mark.parametrize("n", [1, 5, 8, 13, 40])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_n_crops_and_pads_along_any_axis(name, n, axis):
    a = operand(name, (6, 11))
    got = getattr(cu.fft, name)(cu.asarray(a), n=n, axis=axis)
    check(got, getattr(np.fft, name)(a, n=n, axis=axis), a.dtype, n)


@pytest.mark.parametrize("name", N_AXES)
@pytest.mark.parametrize("norm", NORMS)
def test_n_axes_functions_match_numpy(name, norm):
    a = operand(name, (2, 5, 6, 7))
    got = getattr(cu.fft, name)(cu.asarray(a), norm=norm)
    check(got, getattr(np.fft, name)(a, norm=norm), a.dtype, a.size)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("axes", [(0,), (2, 0), (1, 2, 0), (-1, 1), (0, 1, 2, 3), (3, 1, 0, 2)])
def test_axes_in_any_order(name, axes):
    a = operand(name, (4, 3, 5, 6))
    got = getattr(cu.fft, name)(cu.asarray(a), axes=axes)
    check(got, getattr(np.fft, name)(a, axes=axes), a.dtype, a.size)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "irfft2"])
@pytest.mark.parametrize("s", [(3, 8), (7, 2), (1, 11), (4, -1)])
def test_s_crops_and_pads(name, s):
    a = operand(name, (5, 6, 9))
    got = getattr(cu.fft, name)(cu.asarray(a), s=s, axes=(0, 2))
    check(got, getattr(np.fft, name)(a, s=s, axes=(0, 2)), a.dtype, 64)


def test_repeated_axes_transform_twice_as_numpy():
    a = random((6, 4), np.complex128)
    check(cu.fft.fftn(cu.asarray(a), axes=(0, 0)), np.fft.fftn(a, axes=(0, 0)), a.dtype, 36)


@pytest.mark.parametrize("view", ["transposed", "strided", "reversed", "broadcast", "offset"])
@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "rfftn", "irfftn"])
def test_views_are_read_as_numpy_reads_them(name, view):
    base = operand(name, (8, 10, 12))
    views = {
        "transposed": lambda x: x.transpose(2, 0, 1),
        "strided": lambda x: x[::2, :, ::3],
        "reversed": lambda x: x[::-1, ::-2],
        "broadcast": lambda x: cu.broadcast_to(x[:1, :1], (4, 3, 12)) if isinstance(x, cu.ndarray)
        else np.broadcast_to(x[:1, :1], (4, 3, 12)),
        "offset": lambda x: x[1:, 2:, 3:],
    }
    x = views[view](cu.asarray(base))
    a = views[view](base)
    before = base.copy()
    check(getattr(cu.fft, name)(x), getattr(np.fft, name)(a), a.dtype, a.size)
    np.testing.assert_array_equal(cu.asarray(base).get(), before)  # the input is left as it was


@pytest.mark.parametrize("name", ONE_AXIS + N_AXES)
def test_empty_batches(name):
    a = operand(name, (0, 6, 8))
    axes = {"fft2", "ifft2", "rfft2", "irfft2"}
    kwargs = {} if name in axes or name.endswith("n") else {"axis": -1}
    if name.endswith("n"):
        kwargs = {"axes": (1, 2)}
    check(getattr(cu.fft, name)(cu.asarray(a), **kwargs), getattr(np.fft, name)(a, **kwargs), a.dtype, 8)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_,
                                   np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["fft", "ifft", "irfft", "hfft", "fftn", "irfftn"])
def test_result_dtypes_are_numpys(dtype, name):
    a = random((4, 10), dtype)
    check(getattr(cu.fft, name)(cu.asarray(a)), getattr(np.fft, name)(a), dtype, 10)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int16])
@pytest.mark.parametrize("name", ["rfft", "ihfft", "rfftn"])
def test_real_input_dtypes(dtype, name):
    a = random((4, 10), dtype)
    check(getattr(cu.fft, name)(cu.asarray(a)), getattr(np.fft, name)(a), dtype, 10)


def test_bfloat16_computes_in_float32():
    import ml_dtypes

    a = random((3, 16), np.float32).astype(ml_dtypes.bfloat16)
    ref = a.astype(np.float32)
    check(cu.fft.fft(cu.asarray(a)), np.fft.fft(ref), np.float32, 16)
    check(cu.fft.rfft(cu.asarray(a)), np.fft.rfft(ref), np.float32, 16)
    got = cu.fft.irfft(cu.asarray(a))
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(got.astype(cu.float32).get(), np.fft.irfft(ref).astype(ml_dtypes.bfloat16)
                               .astype(np.float32), rtol=2e-2, atol=2e-2 * np.abs(np.fft.irfft(ref)).max())


@pytest.mark.parametrize("pair", [("fft", "ifft"), ("rfft", "irfft"), ("fftn", "ifftn"), ("rfftn", "irfftn"),
                                  ("ihfft", "hfft")])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("length", [9, 16, 31])
def test_round_trips(pair, norm, length):
    forward, inverse = (getattr(cu.fft, f) for f in pair)
    a = random((3, length), np.float64 if pair[0] in REAL_INPUT else np.complex128)
    x = cu.asarray(a)
    if pair[0] in REAL_INPUT:
        back = inverse(forward(x, norm=norm), length if not pair[0].endswith("n") else None, norm=norm) \
            if not pair[0].endswith("n") else inverse(forward(x, norm=norm), s=(3, length), axes=(0, 1), norm=norm)
    else:
        back = inverse(forward(x, norm=norm), norm=norm)
    np.testing.assert_allclose(back.get(), a, rtol=1e-12, atol=1e-12 * np.abs(a).max())


def test_large_prime_length():
    a = random((2, 10007), np.complex64)
    check(cu.fft.fft(cu.asarray(a)), np.fft.fft(a), np.complex64, 10007)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "ihfft", "fftn", "rfft2"])
def test_out_is_written_and_returned(name):
    a = operand(name, (4, 8))
    expected = getattr(np.fft, name)(a)
    out = cu.empty(expected.shape, dtype=expected.dtype)
    got = getattr(cu.fft, name)(cu.asarray(a), out=out)
    assert got is out
    check(out, expected, a.dtype, 32)


def test_out_with_a_narrower_dtype_is_cast_as_numpy_does():
    a = random((4, 8), np.complex128)
    out = cu.empty((4, 8), dtype=cu.complex64)
    cu.fft.fft(cu.asarray(a), out=out)
    check(out, np.fft.fft(a).astype(np.complex64), np.complex64, 8)


def test_out_errors():
    x = cu.asarray(random((4, 8), np.complex128))
    with pytest.raises(ValueError, match=r"output array has wrong shape.*\(4, 8\).*\(4, 7\)"):
        cu.fft.fft(x, out=cu.empty((4, 7), dtype=cu.complex128))
    with pytest.raises(TypeError, match="complex128.*float64.*same_kind"):
        cu.fft.fft(x, out=cu.empty((4, 8), dtype=cu.float64))


@pytest.mark.parametrize("name", ONE_AXIS)
@pytest.mark.parametrize("n", [0, -3])
def test_invalid_n_raises_numpys_error(name, n):
    a = operand(name, (4, 8))
    with pytest.raises(ValueError, match=rf"Invalid number of FFT data points \({n}\) specified"):
        getattr(cu.fft, name)(cu.asarray(a), n=n)
    with pytest.raises(ValueError):
        getattr(np.fft, name)(a, n=n)


@pytest.mark.parametrize("name", ["irfft", "hfft"])
def test_one_point_half_spectrum_has_no_default_length(name):
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        getattr(cu.fft, name)(cu.ones(1, dtype=cu.complex128))


@pytest.mark.parametrize("name", ONE_AXIS)
def test_invalid_axis_raises_axis_error(name):
    a = operand(name, (4, 8))
    with pytest.raises(IndexError, match="axis 2 is out of bounds for array of dimension 2"):
        getattr(cu.fft, name)(cu.asarray(a), axis=2)
    with pytest.raises(IndexError):
        getattr(np.fft, name)(a, axis=2)


def test_nd_argument_errors_are_numpys():
    x = cu.asarray(random((4, 8), np.complex128))
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        cu.fft.fftn(x, s=(4, 8), axes=(0,))
    with pytest.raises(IndexError, match="axis 5 is out of bounds"):
        cu.fft.fftn(x, axes=(0, 5))
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        cu.fft.fft2(x, s=(0, 8))


def test_s_without_axes_warns_and_uses_the_last_axes():
    a = random((3, 4, 8), np.complex128)
    with pytest.warns(DeprecationWarning, match="axes"):
        got = cu.fft.fftn(cu.asarray(a), s=(4, 6))
    with pytest.warns(DeprecationWarning):
        expected = np.fft.fftn(a, s=(4, 6))
    check(got, expected, a.dtype, 24)


@pytest.mark.parametrize("norm", ["Ortho", "", 1, "none"])
def test_invalid_norm(norm):
    with pytest.raises(ValueError, match=r'Invalid norm value .*; should be "backward", "ortho" or "forward"'):
        cu.fft.fft(cu.ones(4), norm=norm)


@pytest.mark.parametrize("name", ["rfft", "ihfft", "rfftn"])
def test_real_transforms_refuse_complex_input(name):
    with pytest.raises(TypeError, match="must be real.*complex128"):
        getattr(cu.fft, name)(cu.ones(4, dtype=cu.complex128))


def test_lists_and_numpy_inputs():
    check(cu.fft.fft([1, 2, 3, 4]), np.fft.fft([1, 2, 3, 4]), np.float64, 4)
    a = random((5,), np.float32)
    check(cu.fft.rfft(a), np.fft.rfft(a), np.float32, 5)


def test_numpy_fft_on_cupric_arrays_runs_in_cupric():
    a = random((4, 8), np.complex64)
    got = np.fft.fft2(cu.asarray(a))
    assert isinstance(got, cu.ndarray)
    check(got, np.fft.fft2(a), np.complex64, 32)
