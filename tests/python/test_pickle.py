"""Pickling and copying: arrays of every dtype and layout under protocols 2..5 (values, dtype, shape
and memory order as NumPy's own pickles keep them), protocol 5's out-of-band buffers without a
copy, foreign and truncated pickles, Generators that continue their stream, functions and ufuncs
by reference, process pools, and GPU arrays (the stand-in driver here, a real GPU when present)."""

import copy
import multiprocessing
import pickle

import cupric as cu
import numpy as np
import pytest
from fake_driver import run_with_fake_driver

HAS_GPU = cu.cuda.is_available()

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "bfloat16"]
PROTOCOLS = [2, 3, 4, 5]


def sample(dtype, shape, seed=0):
    """Random values of `dtype` as a NumPy array (bfloat16 as float32 values it represents)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "bfloat16":
        as_bf16 = cu.asarray(rng.standard_normal(shape).astype(np.float32)).astype("bfloat16")
        return np.asarray(as_bf16.astype("float32"))
    kind = np.dtype(dtype).kind
    if kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    a = rng.standard_normal(shape) * 100
    if kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def values(x):
    """A cupric array's values as NumPy (bfloat16 as float32, exactly)."""
    h = x.to_device("cpu")
    return np.asarray(h.astype("float32") if str(h.dtype) == "bfloat16" else h)


def layouts(ref):
    """(name, NumPy array) for every layout a pickle must flatten or keep: contiguous, 0-d, empty,
    strided and negative-stride views, Fortran order, permuted axes."""
    yield "c", ref
    yield "0d", ref[1, 2, 3]
    yield "empty", ref[:, :0]
    yield "empty-1d", ref[0, 0, :0]
    yield "strided", ref[::2, 1:, ::3]
    yield "negative", ref[::-1, :, ::-2]
    yield "fortran", np.asfortranarray(ref[0])
    yield "fortran-3d", np.asfortranarray(ref)
    yield "permuted", ref.transpose(2, 0, 1)


def cupric_like(view, dtype):
    """The cupric array with view's values and layout (bfloat16 converted from its float32 values)."""
    if dtype != "bfloat16":
        return cu.asarray(view)
    return cu.asarray(view).astype("bfloat16", order="K")


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_arrays_round_trip_every_dtype_and_layout(dtype, protocol):
    ref = sample(dtype, (3, 4, 5))
    for name, view in layouts(ref):
        x = cupric_like(view, dtype)
        y = pickle.loads(pickle.dumps(x, protocol=protocol))
        assert isinstance(y, cu.ndarray) and y.device == "cpu", name
        assert y.dtype == x.dtype and y.shape == view.shape, name
        np.testing.assert_array_equal(values(y), view, err_msg=name)
        # as NumPy's own pickles: Fortran order is kept, everything else is compacted to C order
        if name.startswith("fortran"):
            assert y.flags["F_CONTIGUOUS"] and not y.flags["C_CONTIGUOUS"], name
        else:
            assert y.flags["C_CONTIGUOUS"], name
        assert y.flags["WRITEABLE"], name
        assert y._storage_id != x._storage_id


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_views_pickle_compact(protocol):
    big = cu.asarray(sample("float64", (1000, 100)))
    small = len(pickle.dumps(big[:2, ::10], protocol=protocol))
    assert small < 400  # 20 values, not the 800 KB underneath
    assert len(pickle.dumps(big, protocol=protocol)) > 800_000


def test_protocol5_out_of_band_buffers_are_not_copied():
    x = cu.asarray(sample("float32", (64, 32)))
    buffers = []
    data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and len(data) < 300
    assert np.frombuffer(buffers[0], dtype=np.uint8).ctypes.data == x._data_ptr  # x's own memory
    y = pickle.loads(data, buffers=buffers)
    assert y._data_ptr == x._data_ptr  # and unpickled over it: zero copies end to end
    y[0, 0] = 12345.0
    assert float(x[0, 0]) == 12345.0
    # a view goes out of band as one compact copy
    buffers = []
    pickle.dumps(x[::2, ::-1], protocol=5, buffer_callback=buffers.append)
    assert memoryview(buffers[0]).nbytes == 32 * 32 * 4
    # bfloat16 (no PEP 3118 format) goes out of band too
    b = x.astype("bfloat16")
    buffers = []
    back = pickle.loads(pickle.dumps(b, protocol=5, buffer_callback=buffers.append), buffers=buffers)
    assert back._data_ptr == b._data_ptr and back.dtype == b.dtype


def test_protocol5_read_only_buffer_is_copied_into_a_writable_array():
    x = cu.asarray(sample("int32", (5,)))
    buffers = []
    data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    y = pickle.loads(data, buffers=[bytes(buffers[0])])
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    y[0] = 7  # bytes are copied, so the result is writable
    assert int(y[0]) == 7


def test_read_only_arrays_pickle_to_writable_ones():
    x = cu.broadcast_to(cu.asarray([1.0, 2.0, 3.0]), (4, 3))
    assert not x.flags["WRITEABLE"]
    for protocol in PROTOCOLS:
        y = pickle.loads(pickle.dumps(x, protocol=protocol))
        assert y.flags["WRITEABLE"] and y.shape == (4, 3)
        np.testing.assert_array_equal(np.asarray(y), np.broadcast_to([1.0, 2.0, 3.0], (4, 3)))


class _Forged:
    """Pickles as the array reconstructor called with `args` (a foreign or damaged pickle)."""

    def __init__(self, args):
        self.args = args

    def __reduce__(self):
        from cupric._pickle import _rebuild_array
        return _rebuild_array, self.args


def test_foreign_and_truncated_pickles_raise_clear_errors():
    x = cu.asarray(sample("float32", (2, 3)))
    fn, args = x.__reduce_ex__(4)
    good = pickle.loads(pickle.dumps(_Forged(args)))
    np.testing.assert_array_equal(np.asarray(good), np.asarray(x))
    cases = [
        ((99,) + args[1:], r"pickled in cupric pickle format 99; this cupric reads format 1"),
        (args[:5] + (args[5][:-4],), r"shape \(2, 3\) of float32 needs 24 bytes, got 20"),
        (args[:5] + (args[5] + b"\0" * 4,), r"needs 24 bytes, got 28"),
        (args[:2] + ((2, 4),) + args[3:], r"shape \(2, 4\) of float32 needs 32 bytes, got 24"),
        (args[:1] + ("float128x",) + args[2:], r"unknown dtype 'float128x'"),
        (args[:2] + ((2, -3),) + args[3:], r"invalid shape \(2, -3\)"),
        (args[:3] + ("Z",) + args[4:], r"invalid order 'Z'"),
        (args[:4] + ("tpu:0",) + args[5:], r"invalid device 'tpu:0'"),
    ]
    for forged, message in cases:
        with pytest.raises(pickle.UnpicklingError, match=message):
            pickle.loads(pickle.dumps(_Forged(forged)))


def test_copy_and_deepcopy():
    ref = sample("float64", (4, 6))
    for view in (ref, np.asfortranarray(ref), ref[::-1, 1::2]):
        x = cu.asarray(view)
        for y in (copy.copy(x), copy.deepcopy(x), x.__copy__(), x.__deepcopy__({})):
            assert isinstance(y, cu.ndarray) and y._storage_id != x._storage_id
            np.testing.assert_array_equal(np.asarray(y), view)
            assert y.flags["F_CONTIGUOUS"] == copy.copy(view).flags["F_CONTIGUOUS"]  # NumPy keeps the order
            y[...] = 0
            np.testing.assert_array_equal(np.asarray(x), view)  # the original is untouched
    x = cu.asarray(ref)
    pair = copy.deepcopy([x, x])
    assert pair[0] is pair[1] and pair[0] is not x  # deepcopy's memo: one copy per object


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_generator_pickles_its_state_and_continues_the_stream(protocol):
    g = cu.random.default_rng(2024)
    g.standard_normal(1001)
    clone = pickle.loads(pickle.dumps(g, protocol=protocol))
    assert isinstance(clone, cu.random.Generator)
    assert (clone.seed, clone.counter) == (g.seed, g.counter)
    for draw in (lambda r: r.random(17), lambda r: r.integers(0, 1000, 33), lambda r: r.normal(1.0, 2.0, (3, 5))):
        np.testing.assert_array_equal(np.asarray(draw(clone)), np.asarray(draw(g)))
    other = copy.deepcopy(g)
    g.random(5)  # the copy is independent: it does not advance with the original
    assert other.counter != g.counter
    np.testing.assert_array_equal(np.asarray(copy.copy(other).random(4)), np.asarray(other.random(4)))


def test_generator_pickle_errors():
    from cupric._pickle import _rebuild_generator

    class Forged:
        def __init__(self, *args):
            self.args = args

        def __reduce__(self):
            return _rebuild_generator, self.args

    with pytest.raises(pickle.UnpicklingError, match="Generator was pickled in cupric pickle format 7"):
        pickle.loads(pickle.dumps(Forged(7, 1, 0)))
    with pytest.raises(pickle.UnpicklingError, match="invalid counter -1"):
        pickle.loads(pickle.dumps(Forged(1, 1, -1)))
    with pytest.raises(pickle.UnpicklingError, match="invalid seed 18446744073709551616"):
        pickle.loads(pickle.dumps(Forged(1, 2**64, 0)))


def public_callables():
    for module in (cu, cu.random):
        for name in dir(module):
            obj = getattr(module, name)
            is_dtype = hasattr(obj, "itemsize")  # dtypes pickle by value (test_dtypes_pickle)
            if not name.startswith("_") and callable(obj) and not isinstance(obj, type) and not is_dtype:
                yield f"{module.__name__}.{name}", obj


def test_every_function_and_ufunc_pickles_by_reference():
    objects = list(public_callables()) + [(f"ufunc {n}", u) for n, u in cu._cupric._ufunc_table.items()]
    objects += [("ndarray.sum", cu.ndarray.sum), ("ndarray.astype", cu.ndarray.astype),
                ("ndarray", cu.ndarray), ("Generator", cu.random.Generator), ("cuda.launch", cu.cuda.launch)]
    assert len(objects) > 200
    for name, obj in objects:
        for protocol in PROTOCOLS:
            data = pickle.dumps(obj, protocol=protocol)
            assert len(data) < 120, name  # a name, not a body
            assert pickle.loads(data) is obj, name
        assert copy.deepcopy(obj) is obj, name
    assert cu.abs is cu.absolute and pickle.loads(pickle.dumps(cu.abs)) is cu.absolute  # as NumPy's


def test_dtypes_pickle():
    for dtype in DTYPES:
        t = cu.zeros(1, dtype=dtype).dtype
        for protocol in PROTOCOLS:
            assert pickle.loads(pickle.dumps(t, protocol=protocol)) == t


def test_foreign_nanobind_functions_stay_unpicklable():
    # the reducer registered for nanobind's function type refuses what no cupric module holds
    from cupric._pickle import _reduce_by_reference

    class Stray:
        __module__ = "cupric"
        __qualname__ = "no_such_function"

    with pytest.raises(TypeError, match="not reachable by its name from a cupric module"):
        _reduce_by_reference(Stray())


# ---- processes ------------------------------------------------------------------------------------


def _scaled_sum(args):
    x, g = args
    return x * 2 + g.random(x.shape), g


def test_process_pool_round_trip():
    xs = [cu.asarray(sample("float32", (50, 3), seed=i)) for i in range(4)]
    xs[1] = xs[1].T  # Fortran-ordered
    gens = [cu.random.default_rng(i) for i in range(4)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(_scaled_sum, list(zip(xs, gens, strict=True)))
    for x, g, (y, g_after) in zip(xs, gens, results, strict=True):
        expected = np.asarray(x * 2 + g.random(x.shape))  # the worker drew the same numbers
        assert isinstance(y, cu.ndarray) and y.dtype == expected.dtype
        np.testing.assert_array_equal(np.asarray(y), expected)
        np.testing.assert_array_equal(np.asarray(g_after.random(3)), np.asarray(g.random(3)))


def test_joblib_processes():
    joblib = pytest.importorskip("joblib")
    xs = [cu.asarray(sample("float64", (20,), seed=i)) for i in range(3)]
    out = joblib.Parallel(n_jobs=2, backend="loky")(joblib.delayed(cu.sum)(x * x) for x in xs)
    for x, s in zip(xs, out, strict=True):
        np.testing.assert_allclose(float(s), float(np.sum(np.asarray(x) ** 2)))


# ---- GPU arrays -------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gpu_arrays_come_back_on_their_gpu(protocol):
    for dtype in DTYPES:
        ref = sample(dtype, (3, 4, 5))
        for name, view in layouts(ref):
            x = cupric_like(view, dtype).to_device("cuda:0")
            y = pickle.loads(pickle.dumps(x, protocol=protocol))
            assert y.device == "cuda:0" and y.dtype == x.dtype and y.shape == x.shape, (dtype, name)
            np.testing.assert_array_equal(values(y), view, err_msg=f"{dtype} {name}")


def test_gpu_array_pickles_through_the_host_with_the_stand_in_driver(fake_dir, tmp_path):
    # the stand-in driver copies memory (it runs no kernels): enough for pickling's copies
    saved = tmp_path / "gpu.pkl"
    run_with_fake_driver(fake_dir, f"""
import pickle, numpy as np, cupric as cu
ref = np.arange(24, dtype=np.float32).reshape(4, 6)
x = cu.asarray(ref).to_device("cuda:0")
for protocol in (2, 3, 4, 5):
    y = pickle.loads(pickle.dumps(x, protocol=protocol))
    assert y.device == "cuda:0", y.device
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), ref)
buffers = []
data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
assert pickle.loads(data, buffers=buffers).device == "cuda:0"
open({str(saved)!r}, "wb").write(pickle.dumps(x))
""")
    if HAS_GPU:
        pytest.skip("this process has a GPU: the pickle goes back to it")
    with pytest.warns(UserWarning, match=r"pickled on cuda:0, which this process does not have \(0 CUDA devices\)"):
        y = pickle.loads(saved.read_bytes())
    assert y.device == "cpu"
    np.testing.assert_array_equal(np.asarray(y), np.arange(24, dtype=np.float32).reshape(4, 6))
