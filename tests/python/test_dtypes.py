"""cupric's dtypes are NumPy's (cupric._dtypes): the names are NumPy's objects, x.dtype is a
numpy.dtype, every dtype-like NumPy accepts is accepted, and import stays free of NumPy."""

import subprocess
import sys

import cupric as cu
import ml_dtypes
import numpy as np
import pytest

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64", "complex64", "complex128"]
ALL = NAMES + ["bfloat16"]


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("name", NAMES)
def test_names_are_numpys_objects(name):
    assert getattr(cu, name) is getattr(np, name)


def test_bfloat16_and_dtype_are_the_ecosystems():
    assert cu.bfloat16 is ml_dtypes.bfloat16
    assert cu.dtype is np.dtype
    assert cu.bool_ is np.bool_


@pytest.mark.parametrize("name", ALL)
def test_array_dtype_is_a_numpy_dtype(name):
    x = cu.arange(4).astype(name)
    want = np_dtype(name)
    assert isinstance(x.dtype, np.dtype)
    assert x.dtype is want  # the canonical instance: identity, equality and hash agree
    assert np.dtype(x.dtype) == want and hash(x.dtype) == hash(want)
    assert {want: 1}[x.dtype] == 1 and x.dtype in {want}
    assert np.asarray(x).dtype == want


@pytest.mark.parametrize("name", ALL)
def test_every_dtype_spelling_is_accepted(name):
    want = np_dtype(name)
    scalar_type = want.type
    spellings = [name, want, scalar_type, want.str if name != "bfloat16" else "bfloat16"]
    if name not in ("bfloat16",):
        spellings.append(want.char)
    for spelling in spellings:
        for make in (
            lambda d: cu.zeros(3, dtype=d),
            lambda d: cu.asarray([1, 0, 1], dtype=d),
            lambda d: cu.ones(2).astype(d),
            lambda d: cu.full((2,), 1, dtype=d),
        ):
            assert make(spelling).dtype is want, (name, spelling)
        assert cu.result_type(spelling) is want


def test_python_types_mean_numpys_defaults():
    assert cu.zeros(1, dtype=float).dtype is np.dtype("float64")
    assert cu.zeros(1, dtype=int).dtype is np.dtype("int64")
    assert cu.zeros(1, dtype=complex).dtype is np.dtype("complex128")
    assert cu.zeros(1, dtype=bool).dtype is np.dtype("bool")


def test_functions_returning_dtypes_return_numpys():
    for got in (cu.result_type(cu.int8, 1.0), cu.promote_types("i1", "u1"), cu.finfo(cu.float32).dtype,
                cu.iinfo(cu.int16).dtype):
        assert isinstance(got, np.dtype)
    assert cu.promote_types("i1", "u1") == np.promote_types("i1", "u1")


@pytest.mark.parametrize("bad", ["object", "U3", "datetime64[s]", "S2", np.dtype("V4"), np.dtype(">f4"), "nonsense"])
def test_unsupported_dtypes_are_named(bad):
    with pytest.raises(TypeError) as err:
        cu.zeros(2, dtype=bad)
    text = str(err.value)
    assert "dtype" in text or "data type" in text
    assert "std::" not in text


def test_comparison_with_non_dtypes_follows_numpy():
    d = cu.arange(2.0).dtype
    for other in (None, "float32", np.int8, 3):  # never an exception; NumPy's answer
        assert (d == other) == (np.dtype("float64") == other)
    assert d == "float64" and d == np.float64 and d != np.float32


def test_isdtype_knows_bfloat16_is_real_floating():
    assert cu.isdtype(cu.bfloat16, "real floating")
    assert not cu.isdtype(cu.bfloat16, "integral")
    assert cu.isdtype(cu.float32, ("integral", "real floating"))


def test_import_loads_neither_numpy_nor_ml_dtypes():
    code = (
        "import sys, cupric as cu\n"
        "assert 'numpy' not in sys.modules, 'numpy imported'\n"
        "x = cu.arange(3) + 1\n"
        "assert 'numpy' not in sys.modules, 'numpy imported by an op'\n"
        "d = x.dtype\n"
        "assert 'numpy' in sys.modules and 'ml_dtypes' not in sys.modules\n"
        "cu.float32\n"
        "assert 'ml_dtypes' not in sys.modules\n"
        "cu.bfloat16\n"
        "assert 'ml_dtypes' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={"CUPRIC_DEVICE": "cpu", "PATH": ""})


@pytest.mark.parametrize("name", ALL)
def test_dtypes_that_are_not_numpys_canonical_instances(name):
    import pickle

    want = np_dtype(name)
    for other in (pickle.loads(pickle.dumps(want)), np.dtype(want, metadata={"units": "m"})):
        assert other == want  # (NumPy hands back new instances for its own dtypes)
        assert cu.zeros(2, dtype=other).dtype is want
        assert cu.result_type(other) is want
