"""FFT callbacks (cupric.fft._callbacks): the CPU pass against NumPy, the three-step convolution
against its epilog form, the generated cuFFT callback compiled by NVRTC to LTO-IR and linked by
nvJitLink into a stand-in for cuFFT's kernel (which, with a GPU, runs it against the CPU pass),
and invalid callbacks as compile errors at their line."""

import inspect

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from cupric.fft import _callbacks as cb
from cupric.fft import advanced as adv
from fake_driver import run_with_fake_driver

KINDS = ["prolog", "epilog"]
ELEMENTS = ["complex64", "complex128", "float32", "float64"]
RNG = np.random.default_rng(16)


def _random(n, dtype):
    x = RNG.standard_normal(n)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(n)
    return x.astype(dtype)


def _tol(dtype):
    return dict(rtol=2e-6, atol=2e-6) if np.dtype(dtype) in (np.complex64, np.float32) else dict(rtol=1e-13, atol=1e-13)


# ---- the callbacks the tests use (each returns what the NumPy reference below computes) ----------


def window(v, i, w):
    """A real window over each 8-element row (operand w, length 8), on real elements."""
    return v * w[i % 8]


@ct.function
def window_c(v, i, w):
    """The same on complex elements: (real, imag) pairs."""
    return v[0] * w[i % 8], v[1] * w[i % 8]


def window_ref(x, w):
    return x * w[np.arange(x.size) % 8]


@ct.function
def cmul_conj(a, b):
    """a times the conjugate of b, for (real, imag) pairs: a @ct.function helper of a callback."""
    return a[0] * b[0] + a[1] * b[1], a[1] * b[0] - a[0] * b[1]


def filter_product(v, i, h):
    """The convolution's pointwise product: a complex operand."""
    return cb.cmul(v, h[i])


def clipped_shift(v, i):
    """No operand; a conditional expression, ct.* functions, the offset as a value."""
    return (v if v > 0 else ct.exp(v)) + i * 0.25


def clipped_shift_c(v, i):
    return ct.where(v[0] > 0, v[0], 0.5 * v[0]) + i, -v[1]


def _for(element, real_fn, complex_fn):
    return complex_fn if np.dtype(element).kind == "c" else real_fn


def clipped_shift_ref(x):
    i = np.arange(x.size)
    if x.dtype.kind == "c":
        return (np.where(x.real > 0, x.real, 0.5 * x.real) + i) - 1j * x.imag
    return np.where(x > 0, x, np.exp(x)) + i * 0.25


# ---- CPU pass ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("element", ELEMENTS)
def test_cpu_pass_matches_numpy(kind, element):
    x = _random(3000, element)  # more than one CPU block, not a multiple of it
    real = np.float32 if element in ("complex64", "float32") else np.float64
    w = RNG.standard_normal(8).astype(real)
    fn = _for(element, window, window_c)
    got = cb.compile_callback(fn, kind, element, [cu.asarray(w)]).apply(cu.asarray(x), [cu.asarray(w)])
    assert got.dtype == x.dtype
    np.testing.assert_allclose(np.asarray(got), window_ref(x, w), **_tol(element))
    got = cb.compile_callback(_for(element, clipped_shift, clipped_shift_c), kind, element).apply(cu.asarray(x))
    np.testing.assert_allclose(np.asarray(got), clipped_shift_ref(x), **_tol(element))


def test_cpu_pass_keeps_the_shape_and_reads_views_in_c_order():
    x = _random(6 * 40, "complex128").reshape(6, 40)
    view = cu.asarray(x)[::-2, 3:]  # negative and non-unit strides
    w = RNG.standard_normal(8)
    got = cb.compile_callback(window_c, "epilog", "complex128", [cu.asarray(w)]).apply(view, [cu.asarray(w)])
    want = window_ref(x[::-2, 3:].reshape(-1), w).reshape(3, 37)
    assert got.shape == (3, 37)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    np.testing.assert_array_equal(np.asarray(view), x[::-2, 3:])  # the input is left as it was


def test_operands_out_of_range_read_zero_and_strided_complex_operands():
    x = _random(20, "complex64")
    h = _random(30, "complex64")
    hv = cu.asarray(h)[::3]  # 10 elements, stride 3: elements 10..19 of x see zeros
    got = cb.compile_callback(filter_product, "epilog", "complex64", [hv]).apply(cu.asarray(x), [hv])
    want = x * np.concatenate([h[::3], np.zeros(10, np.complex64)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)


def test_epilog_convolution_equals_the_three_step_result():
    """FFT convolution: the product with the filter's spectrum as the forward transform's epilog
    (on the CPU, a pass after it) equals NumPy's three steps."""
    n, batch = 256, 4
    x = _random(batch * n, "float64").reshape(batch, n)
    k = _random(n, "float64")
    spectrum = np.fft.rfft(k)
    h = np.tile(spectrum, batch)  # the epilog's offset runs over the batch too
    three_step = np.fft.irfft(np.fft.rfft(x) * spectrum, n)
    product = cb.compile_callback(filter_product, "epilog", "complex128", [cu.asarray(h)])
    fused = np.fft.irfft(np.asarray(product.apply(cu.asarray(np.fft.rfft(x)), [cu.asarray(h)])), n)
    np.testing.assert_allclose(fused, three_step, rtol=1e-12, atol=1e-12)


def test_compiled_callbacks_are_cached():
    h = cu.asarray(_random(4, "complex64"))
    a = cb.compile_callback(filter_product, "epilog", "complex64", [h])
    assert cb.compile_callback(filter_product, "epilog", "complex64", [cu.asarray(_random(9, "complex64"))]) is a
    assert cb.compile_callback(filter_product, "prolog", "complex64", [h]) is not a


SCALE = 2.0


def scaled(v, i):
    return v * SCALE


def test_a_global_the_callback_reads_is_compiled_in_and_a_new_value_compiles_again():
    global SCALE
    x = cu.asarray(_random(10, "float64"))
    first = cb.compile_callback(scaled, "epilog", "float64")
    np.testing.assert_array_equal(np.asarray(first.apply(x)), np.asarray(x) * 2.0)
    SCALE = 3.0
    try:
        again = cb.compile_callback(scaled, "epilog", "float64")
        assert again is not first
        np.testing.assert_array_equal(np.asarray(again.apply(x)), np.asarray(x) * 3.0)
    finally:
        SCALE = 2.0
    assert cb.compile_callback(scaled, "epilog", "float64") is first


# ---- invalid callbacks --------------------------------------------------------------------------


def uses_while(v, i):
    while v > 0:
        v = v - 1
    return v


def returns_one_value_for_complex(v, i):
    return v[0] * 2.0


def returns_a_tile(v, i):
    return ct.zeros((4,), dtype=ct.float32)


def adds_mismatched(v, i, h):
    return v + h  # an array in arithmetic


def returns_nothing(v, i):
    v = v + 1


def branches(v, i):
    if v > 0:  # a run-time `if`: compiles per element (the GPU), not over the CPU pass's blocks
        v = v * 2.0
    return v


def _line_of(fn, text):
    src, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(src) if text in line)


@pytest.mark.parametrize(
    "fn, element, operands, at, message",
    [
        (uses_while, "float32", 0, "while v > 0", "`while` loops are not supported"),
        (returns_one_value_for_complex, "complex64", 0, "return v[0]", "this transform returns a (real, imag) pair"),
        (returns_a_tile, "float64", 0, "return ct.zeros", "expected a scalar value"),
        (adds_mismatched, "float32", 1, "return v + h", "arithmetic on arrays is not supported"),
        (window, "float32", 0, "def window", "called as window(value, offset) (0 operand(s) given)"),
        (window, "complex64", 1, "return v * w", "a (real, imag) pair is not one value"),
        (returns_nothing, "float32", 0, "def returns_nothing", "returns nothing"),
        (branches, "float64", 0, "if v > 0", "write conditionals as `x if c else y` or ct.where"),
    ],
)
def test_invalid_callback_is_a_compile_error_at_its_line(fn, element, operands, at, message):
    ops = [cu.asarray(np.ones(4, np.float32))] * operands
    with pytest.raises(ct.CompileError) as err:
        cb.compile_callback(fn, "epilog", element, ops)
    assert err.value.filename == __file__
    assert err.value.lineno == _line_of(fn, at), str(err.value)
    assert message in str(err.value)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="'prolog' or an 'epilog', not 'middle'"):
        cb.compile_callback(window, "middle", "float32")
    with pytest.raises(TypeError, match="not int32"):
        cb.compile_callback(window, "epilog", "int32")
    with pytest.raises(TypeError, match="a Python function"):
        cb.compile_callback(3, "epilog", "float32")
    with pytest.raises(TypeError, match="cupric arrays"):
        cb.compile_callback(window, "epilog", "float32", [np.ones(8)])
    c = cb.compile_callback(window, "epilog", "float32", [cu.asarray(np.ones(8, np.float32))])
    x = cu.asarray(np.ones(5, np.float32))
    with pytest.raises(ValueError, match=r"compiled for operands \[\('float32', 1\)\], got \[\('float64', 1\)\]"):
        c.apply(x, [cu.asarray(np.ones(8))])
    with pytest.raises(TypeError, match="compiled for float32 elements, got float64"):
        c.apply(cu.asarray(np.ones(5)), [cu.asarray(np.ones(8, np.float32))])


def test_the_wrapper_checks_the_tile_function_it_wraps():
    native = cu._cupric._fft_callbacks
    b = cu._cupric._tile.Builder("not_a_callback")
    b.param_scalar("v", "float32", False)
    with pytest.raises(ValueError, match="`not_a_callback` has not the parameters of a float32 callback"):
        native.source(b.finish(), "epilog", "float32", "s")
    with pytest.raises(TypeError, match="not int16"):
        native.callback_type("prolog", "int16")
    with pytest.raises(ValueError, match="not 'both'"):
        native.callback_type("both", "float32")


# ---- the cuFFT callback: LTO-IR, linked into a stand-in for cuFFT's kernel ---------------------

_VALUE_TYPES = {"complex64": "float2", "complex128": "double2", "float32": "float", "float64": "double"}
_CUFFT_TYPES = {(kind, e): 4 * j + k for j, kind in enumerate(KINDS) for k, e in enumerate(ELEMENTS)}


def _stand_in(kind, element):
    """A kernel that calls the callback as cuFFT does, declared with cuFFT's C++ signature: element
    i of `src` loaded through the prolog into `dst`, or stored from `src` through the epilog."""
    t = _VALUE_TYPES[element]
    if kind == "prolog":
        decl = f"__device__ {t} cupric_fft_prolog(void*, unsigned long long, void*, void*);"
        body = f"static_cast<{t}*>(dst)[i] = cupric_fft_prolog(src, i, info, nullptr);"
    else:
        decl = f"__device__ void cupric_fft_epilog(void*, unsigned long long, {t}, void*, void*);"
        body = f"cupric_fft_epilog(dst, i, static_cast<{t}*>(src)[i], info, nullptr);"
    return (
        f"{decl}\n"
        'extern "C" __global__ void stand_in(void* src, void* dst, void* info, unsigned long long n) {\n'
        "  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {\n"
        f"    {body}\n  }}\n}}\n"
    )


def _linked(callback, arch):
    caller = cu.cuda.Program(_stand_in(callback.kind, callback.element), "stand_in.cu", arch=arch)
    objects = [cu.cuda.ObjectCode(callback.ltoir(arch), "ltoir"), caller.compile("ltoir")]
    return cu.cuda.Linker(*objects, arch=arch.replace("compute_", "sm_")).link("cubin")


@pytest.mark.nvrtc
def test_a_prolog_and_an_epilog_link_into_one_kernel():
    """cuFFT links a plan's prolog and epilog into the same kernel: their LTO-IR must not define
    the same symbols (the tile function of each is named after its kind)."""
    h = [cu.asarray(_random(8, "complex64"))]
    pro = cb.compile_callback(filter_product, "prolog", "complex64", h)
    epi = cb.compile_callback(filter_product, "epilog", "complex64", h)
    caller = cu.cuda.Program(
        "__device__ float2 cupric_fft_prolog(void*, unsigned long long, void*, void*);\n"
        "__device__ void cupric_fft_epilog(void*, unsigned long long, float2, void*, void*);\n"
        'extern "C" __global__ void both(float2* a, float2* b, void* info) {\n'
        "  cupric_fft_epilog(b, threadIdx.x, cupric_fft_prolog(a, threadIdx.x, info, nullptr), info, nullptr);\n}\n",
        "both.cu",
        arch="compute_90",
    )
    objects = [cu.cuda.ObjectCode(c.ltoir("compute_90"), "ltoir") for c in (pro, epi)] + [caller.compile("ltoir")]
    assert cu.cuda.Linker(*objects, arch="sm_90").link("cubin").kind == "cubin"


@pytest.mark.nvrtc
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("element", ELEMENTS)
def test_callbacks_compile_to_ltoir_and_link_with_cufft_signatures(kind, element):
    real = "float32" if element in ("complex64", "float32") else "float64"
    ops = [cu.asarray(np.ones(8, real)), cu.asarray(_random(5, "complex64"))]

    def with_operands(v, i, w, h):
        return v * w[i % 8] + h[i][0]

    def with_operands_c(v, i, w, h):
        return cmul_conj(window_c(v, i, w), h[i])

    fns = (_for(element, window, window_c), _for(element, with_operands, with_operands_c))
    for c in (cb.compile_callback(fns[0], kind, element, ops[:1]), cb.compile_callback(fns[1], kind, element, ops)):
        lto = c.ltoir("compute_90")
        assert lto[:4] == b"\xedCN\x7f"  # NVVM's LTO-IR
        assert c.cufft_type == _CUFFT_TYPES[(kind, element)]
        cubin = _linked(c, "compute_90")
        assert cubin.kind == "cubin" and len(cubin.code) > 0


def test_caller_info_words_describe_the_device_operands(fake_dir, tmp_path):
    """The words cuFFT hands the callback: per operand array (a complex one as its real and
    imaginary views) the data pointer, extents and strides in elements (the stand-in driver's
    device memory)."""
    code = """
import numpy as np, cupric as cu
from cupric.fft import _callbacks as cb
from cupric.fft import advanced as adv

def f(v, i, w, h):
    return v * w[i] + h[i][0]

w = cu.asarray(np.arange(6, dtype=np.float32), device="cuda:0")
h = cu.asarray(np.arange(12, dtype=np.complex64), device="cuda:0")[::-3]
c = cb.compile_callback(f, "epilog", "float32", [w, h])
info = c.caller_info([w, h])
assert info.device == "cuda:0" and info.dtype == np.int64
base = h.__cuda_array_interface__["data"][0]
want = [w.__cuda_array_interface__["data"][0], 6, 1, base, 4, -6, base + 4, 4, -6]
assert np.asarray(info.to_device("cpu")).tolist() == want, info
assert cb.compile_callback(f, "epilog", "float32", [w[:2], h]).caller_info([w, h]) is not None
assert c.caller_info([w, h]) is info  # the same operands, the same address: the plan cache hits
assert c.caller_info([w[1:], h]) is not info
for bad in ([w.to_device("cpu"), h], [w, h.to_device("cpu")]):
    try:
        c.caller_info(bad)
    except ValueError as err:
        assert "must be on the transform's GPU" in str(err), err
    else:
        raise AssertionError("no error")
try:
    c.apply(cu.ones(3, dtype=cu.float32, device="cuda:0"), [w, h])
except ValueError as err:
    assert "the CPU pass of the epilog takes CPU arrays" in str(err), err
else:
    raise AssertionError("no error")
try:
    c.caller_info([w, h], device="cuda:1")
except ValueError as err:
    assert "for a transform on cuda:1" in str(err), err
else:
    raise AssertionError("no error")
try:
    c.caller_info([w])
except ValueError as err:
    assert "compiled for operands" in str(err)
else:
    raise AssertionError("no error")
"""
    run_with_fake_driver(fake_dir, code, script=tmp_path / "caller_info.py")


@pytest.mark.gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("element", ELEMENTS)
def test_callbacks_run_on_the_gpu_as_on_the_cpu(kind, element):
    """The LTO-IR cuFFT links, run by the stand-in kernel on the device, against the CPU pass
    (operands real and complex, strided)."""
    n = 5000
    x = _random(n, element)
    real = "float32" if element in ("complex64", "float32") else "float64"
    w = RNG.standard_normal(8).astype(real)
    h = _random(2 * n, "complex64")

    def both(v, i, w, h):
        p = h[i]
        return v * w[i % 8] + p[0] - p[1]

    def both_c(v, i, w, h):
        return cmul_conj(window_c(v, i, w), h[i])

    arch = cb._lto_arch()
    for fn, host_ops in ((_for(element, window, window_c), [w]), (_for(element, both, both_c), [w, h])):
        ops_cpu = [cu.asarray(a) for a in host_ops]
        ops_gpu = [cu.asarray(a, device="cuda:0") for a in host_ops]
        if len(ops_gpu) == 2:
            ops_cpu[1], ops_gpu[1] = ops_cpu[1][::2], ops_gpu[1][::2]
        c = cb.compile_callback(fn, kind, element, ops_cpu)
        want = np.asarray(c.apply(cu.asarray(x), ops_cpu))
        kernel = _linked(c, arch).get_kernel("stand_in")
        src = cu.asarray(x, device="cuda:0")
        dst = cu.empty(n, dtype=element, device="cuda:0")
        info = c.caller_info(ops_gpu)
        cu.cuda.launch(None, cu.cuda.LaunchConfig(40, 128), kernel, src, dst, info, np.uint64(n))
        np.testing.assert_allclose(np.asarray(dst.to_device("cpu")), want, **_tol(element))


# ---- through cupric.fft.advanced: prolog and epilog against the three-step result -------------


@ct.function
def scaled_by_operand(v, i, s):
    """Real elements times s[i % 5] (a real operand)."""
    return v * s[i % 5]


@ct.function
def times_operand(v, i, h):
    """Complex elements times h[i] (a complex operand)."""
    return cb.cmul(v, h[i])


def _three_step(fft_type, x, pre, post, n):
    """NumPy: prolog factors, the transform over the last axis, epilog factors."""
    y = x * pre.reshape(x.shape)
    y = {"C2C": np.fft.fft, "R2C": np.fft.rfft, "C2R": lambda a: np.fft.irfft(a, n) * n}[fft_type](y)
    return y * post.reshape(y.shape)


def _transform_with_callbacks(fft_type, precision, device):
    """(got, want) of a batched transform of the last axis with a prolog and an epilog that each
    multiply by an operand (real or complex as the transform's elements are)."""
    complex_, real = ("complex64", "float32") if precision == "single" else ("complex128", "float64")
    batch, n = 3, 48
    m = n // 2 + 1
    in_dtype, in_len = {"C2C": (complex_, n), "R2C": (real, n), "C2R": (complex_, m)}[fft_type]
    out_dtype, out_len = {"C2C": (complex_, n), "R2C": (complex_, m), "C2R": (real, n)}[fft_type]
    x = _random(batch * in_len, in_dtype).reshape(batch, in_len)
    if fft_type == "C2R":  # a Hermitian spectrum: real first (and last, n even) terms
        x[:, 0] = x[:, 0].real
        x[:, -1] = x[:, -1].real
    pre, post = _random(batch * in_len, in_dtype), _random(batch * out_len, out_dtype)

    def spec(values):
        if values.dtype.kind == "c":
            return {"function": times_operand, "operands": [cu.asarray(values, device=device)]}
        return {"function": scaled_by_operand, "operands": [cu.asarray(values[:5].copy(), device=device)]}

    pre_full = pre if pre.dtype.kind == "c" else np.resize(pre[:5], pre.size)
    post_full = post if post.dtype.kind == "c" else np.resize(post[:5], post.size)
    f = {"C2C": adv.fft, "R2C": adv.rfft, "C2R": adv.irfft}[fft_type]
    got = f(cu.asarray(x, device=device), axes=[-1], prolog=spec(pre), epilog=spec(post))
    want = _three_step(fft_type, x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), pre_full, post_full, n)
    return np.asarray(got.to_device("cpu")), want


_TRANSFORMS = [(t, p) for t in ("C2C", "R2C", "C2R") for p in ("single", "double")]


def _check(got, want, precision):
    scale = np.abs(want).max()
    tol = 2e-5 if precision == "single" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("fft_type, precision", _TRANSFORMS)
def test_advanced_fft_callbacks_on_the_cpu_equal_three_steps(fft_type, precision):
    _check(*_transform_with_callbacks(fft_type, precision, "cpu"), precision)


@pytest.mark.gpu
@pytest.mark.parametrize("fft_type, precision", _TRANSFORMS)
def test_advanced_fft_callbacks_on_the_gpu_equal_three_steps(fft_type, precision):
    """cuFFT with the prolog and epilog linked in (JIT LTO) against NumPy's three steps."""
    _check(*_transform_with_callbacks(fft_type, precision, "cuda:0"), precision)
