"""Launch plans, the fast path of cached cupric.tile launches: a launch whose arguments fit a
specialisation met before is checked, packed and launched by one C++ call; anything that changes
what the kernel was specialised on (dtypes, ndim, constants, scalar kinds, devices), or that the
fast path does not read, goes back to the Python path, which specialises again or raises as
before. The CUDA side runs against the stand-in driver (tests/fake_cuda: no kernels run, the
packed parameters the driver receives are recorded)."""

from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from cupric.tile._kernel import Kernel
from fake_driver import run_with_fake_driver
from tile_helpers import assert_close, random, to_cu, to_np


def _scale(x, out, factor, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(out, index=(i,), tile=ct.load(x, index=(i,), shape=(BLOCK,)) * factor)


def fresh():
    """A kernel of its own (plans and cache start empty)."""
    return ct.kernel(_scale)


def oracle(x, factor, out_dtype, block=32):
    """What the interpreter computes: the semantics the compiled paths must keep."""
    k = fresh()
    out = cu.zeros(x.shape, dtype=out_dtype)
    k.interpret[(ct.cdiv(x.shape[0], block),)](x, out, factor, block)
    return to_np(out)


def test_a_cached_launch_takes_its_plan(monkeypatch):
    k = fresh()
    x, out = to_cu(random(64, "float32")), cu.zeros(64, dtype=cu.float32)
    k[(2,)](x, out, 2.0, 32)
    assert len(k._plans) == 1 and len(k.cache) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("the launch went through the Python path")

    monkeypatch.setattr(Kernel, "_prepare", refuse)
    for factor in (0.5, -3.0, 7.25):
        y, o = to_cu(random(64, "float32")), cu.zeros(64, dtype=cu.float32)  # other arrays, same kinds
        k[(2,)](y, o, factor, 32)
        assert_close(to_np(o), to_np(y) * np.float32(factor))
    k[2](x, out, factor=1.5, BLOCK=32)  # keywords: bound in Python, then the same plan
    ct.launch(None, 2, k, x, out, -1.0, 32)
    assert_close(to_np(out), -to_np(x))
    assert len(k._plans) == 1


def _scale_by_default(x, out, factor=2.0, BLOCK: ct.Constant[int] = 32):
    i = ct.bid(0)
    ct.store(out, index=(i,), tile=ct.load(x, index=(i,), shape=(BLOCK,)) * factor)


@pytest.mark.parametrize("given", [2, 3, 4])
def test_calls_that_leave_defaulted_parameters_out_take_the_plan(monkeypatch, given):
    """A plan is made from every parameter's value; a call that leaves trailing defaulted parameters
    out gets their defaults filled in before the plans are tried, so it takes its plan (it used to
    miss every plan and make one more per launch: 131 us a launch on the H200 host, 64 plans)."""
    k = ct.kernel(_scale_by_default)
    x, out = to_cu(random(64, "float32")), cu.zeros(64, dtype=cu.float32)
    args = (x, out, 2.0, 32)[:given]
    k[(2,)](*args)
    assert len(k._plans) == 1

    def refuse(*a, **kw):
        raise AssertionError("the launch went through the Python path")

    monkeypatch.setattr(Kernel, "_prepare", refuse)
    for _ in range(3):
        k[(2,)](*args)
    assert len(k._plans) == 1 and len(k.cache) == 1
    assert_close(to_np(out), to_np(x) * np.float32(2.0))
    with pytest.raises(TypeError, match="missing a required argument: 'out'"):
        k[(2,)](x)  # a parameter without a default left out: the Python path's error, as before


def test_changed_dtypes_ndim_and_constants_specialise_again():
    k = fresh()
    x32 = random(64, "float32")
    k[(2,)](to_cu(x32), cu.zeros(64, dtype=cu.float32), 2.0, 32)
    for dt in ("float64", "int32", "int8", "float16"):
        x = to_cu(random(64, dt))
        out = cu.zeros(64, dtype=cu.dtype(dt))
        k[(2,)](x, out, 3, 32)
        np.testing.assert_array_equal(to_np(out), oracle(x, 3, cu.dtype(dt)))
    out = cu.zeros(64, dtype=cu.float32)
    k[(4,)](to_cu(x32), out, 2.0, 16)  # another constant
    assert_close(to_np(out), x32 * 2)
    assert len(k.cache) == 6 and len(k._plans) == 6
    # an array of another ndim is another specialisation: the frontend's error, as without plans
    with pytest.raises(Exception) as planned:
        k[(2,)](to_cu(random((8, 8), "float32")), out, 2.0, 32)
    with pytest.raises(Exception) as first:
        fresh()[(2,)](to_cu(random((8, 8), "float32")), out, 2.0, 32)
    assert type(planned.value) is type(first.value) and str(planned.value) == str(first.value)


@pytest.mark.parametrize(
    "factor",
    [2.5, 3, True, np.float32(2.5), np.float64(2.5), np.int8(3), np.float16(1.5)],
    ids=lambda f: f"{type(f).__name__}",
)
def test_scalar_kinds_keep_their_semantics(factor):
    """Weak Python scalars and strong NumPy scalars are specialisations of their own: a launch
    after one of another kind gives what the interpreter gives."""
    k = fresh()
    x = to_cu(random(64, "float16"))
    k[(2,)](x, cu.zeros(64, dtype=cu.float32), 1.0, 32)  # a plan for a weak float
    for out_dtype in (cu.float32, cu.float16):
        out = cu.zeros(64, dtype=out_dtype)
        k[(2,)](x, out, factor, 32)
        k[(2,)](x, out, factor, 32)  # the second time through its own plan
        np.testing.assert_array_equal(to_np(out), oracle(x, factor, out_dtype))


def test_views_strides_and_numpy_arrays():
    k = fresh()
    base = random(256, "float32")
    x = to_cu(base)
    for view in (x[::2], x[::-1][:128], x[64:192]):
        out = cu.zeros(128, dtype=cu.float32)
        k[(4,)](view, out, 2.0, 32)
        assert_close(to_np(out), to_np(view) * 2)
    out_np = np.zeros(256, np.float32)
    for view in (base[::2], base[::-1][:128], base[1:129]):  # NumPy arrays, written in place
        o = out_np[::2]
        k[(4,)](view, o, 3.0, 32)
        assert_close(out_np[::2], view * 3)
    k[(4,)](base[::2], to_cu(np.zeros(128, np.float32)), 3.0, 32)  # NumPy in, cupric out
    assert len(k.cache) == 1  # one specialisation, several plans (cupric / NumPy arguments)


def test_numpy_fields_with_odd_strides_go_through_the_python_path():
    k = fresh()
    rec = np.zeros(64, dtype=[("a", np.float32), ("b", np.int8)])  # 5-byte records
    rec["a"] = random(64, "float32")
    k[(2,)](rec["a"], np.zeros(64, np.float32), 2.0, 32)
    out = np.zeros(64, np.float32)
    k[(2,)](rec["a"], out, 2.0, 32)
    assert_close(out, rec["a"] * 2)


def test_read_only_outputs_and_bad_arguments_still_raise():
    k = fresh()
    x, out = to_cu(random(64, "float32")), cu.zeros(64, dtype=cu.float32)
    k[(2,)](x, out, 2.0, 32)
    xn = random(64, "float32")
    k[(2,)](xn, np.zeros(64, np.float32), 2.0, 32)
    ro = np.zeros(64, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        k[(2,)](xn, ro, 2.0, 32)
    with pytest.raises(ValueError, match="read-only"):
        k[(2,)](x, cu.asarray(ro), 2.0, 32)
    assert not ro.any()
    with pytest.raises(TypeError, match="argument 'factor' is str"):
        k[(2,)](x, out, "two", 32)
    with pytest.raises(TypeError):
        k[(2,)](x, out, 2.0)  # missing BLOCK
    with pytest.raises(OverflowError):
        k[(2,)](to_cu(np.arange(64, dtype=np.int64)), cu.zeros(64, dtype=cu.int64), 2**70, 32)
    k[(2,)](to_cu(np.arange(64, dtype=np.int64)), cu.zeros(64, dtype=cu.int64), 5, 32)
    with pytest.raises(OverflowError):  # the plan's kinds (a Python int), not int64's range
        k[(2,)](to_cu(np.arange(64, dtype=np.int64)), cu.zeros(64, dtype=cu.int64), 2**63, 32)


def test_grid_forms():
    k = fresh()
    x = to_cu(random(128, "float32"))
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        meta["BLOCK"] = 0  # a copy: the next launch sees the real value again
        return (4,)

    for g in (4, (4,), [4], (4, 1), (4, 1, 1), np.int64(4), grid, grid):
        out = cu.zeros(128, dtype=cu.float32)
        k[g](x, out, 2.0, 32)
        assert_close(to_np(out), to_np(x) * 2)
    assert seen == [{"BLOCK": 32}, {"BLOCK": 32}]
    out = cu.zeros(128, dtype=cu.float32)
    k[(0,)](x, out, 2.0, 32)
    k[(4, 0)](x, out, 2.0, 32)
    assert not to_np(out).any()  # empty grids run nothing
    for bad, match in (((1, 2, 3, 4), "1 to 3 dimensions"), ((-1,), ">= 0"), (-2, ">= 0"), ((), "1 to 3")):
        with pytest.raises(ValueError, match=match):
            k[bad](x, out, 2.0, 32)
    assert len(k._plans) == 1


def test_interpreter_switch_and_cache_clear(monkeypatch):
    k = fresh()
    x, out = to_cu(random(64, "float32")), cu.zeros(64, dtype=cu.float32)
    k[(2,)](x, out, 2.0, 32)
    calls = []
    real = Kernel._interpret
    monkeypatch.setattr(Kernel, "_interpret", lambda self, grid, values: calls.append(grid) or real(self, grid, values))
    monkeypatch.setenv("CUPRIC_TILE_INTERPRET", "1")
    k[(2,)](x, out, 4.0, 32)
    assert calls == [(2,)]
    assert_close(to_np(out), to_np(x) * 4)
    monkeypatch.setenv("CUPRIC_TILE_INTERPRET", "0")
    k[(2,)](x, out, 5.0, 32)
    assert calls == [(2,)] and len(k._plans) == 1
    k.cache.clear()  # as in a new process: plans go too
    assert len(k._plans) == 0
    k[(2,)](x, out, 6.0, 32)
    assert len(k._plans) == 1 and len(k.cache) == 1
    assert_close(to_np(out), to_np(x) * 6)


def test_arguments_plans_do_not_read_launch_through_the_python_path():
    """0-d arrays as scalars and objects of other kinds are not planned: every launch
    specialises them (and still computes the same)."""
    k = fresh()
    x = to_cu(random(64, "float32"))
    for _ in range(2):
        out = cu.zeros(64, dtype=cu.float32)
        k[(2,)](x, out, cu.asarray(np.float32(1.5)), 32)
        assert_close(to_np(out), to_np(x) * np.float32(1.5))
    assert len(k._plans) == 0 and len(k.cache) == 1


def test_autotuned_launches_take_plans_keyed_on_the_key(cache_dir, monkeypatch):
    """@ct.autotune's plans fix the tuned parameters to the key's config and also check the key's
    shapes (arrays) and values (scalars): another key tunes (or looks up) again."""
    from cupric.tile import _autotune

    tuned = ct.autotune(configs=[{"BLOCK": 16}, {"BLOCK": 32}], key=["x", "factor"], warmup=0, rep=1)(fresh())
    keys = []
    real_key = _autotune.Autotuner._key
    monkeypatch.setattr(_autotune.Autotuner, "_key", lambda self, bound: keys.append(1) or real_key(self, bound))

    def launch(x, factor):
        out = cu.zeros(x.shape, dtype=cu.float32)
        tuned[lambda m: ct.cdiv(x.shape[0], m["BLOCK"])](x, out, factor)
        assert_close(to_np(out), to_np(x) * np.float32(factor))

    x64, x128 = to_cu(random(64, "float32")), to_cu(random(128, "float32"))
    launch(x64, 2.0)
    assert len(keys) == 1 and len(tuned._plans) == 1
    first = tuned.best_config
    tuned.best_config = None
    launch(to_cu(random(64, "float32")), 2.0)  # same key: the plan, with the key's config
    assert len(keys) == 1 and tuned.best_config == first
    for x, factor in ((x64, 3.0), (x128, 2.0), (x64, 3)):  # another value, shape, scalar kind: the Python path
        n = len(keys)
        launch(x, factor)
        assert len(keys) == n + 1
        launch(x, factor)
        assert len(keys) == n + 1  # and then its own plan
    tuned.cache.clear()
    assert len(tuned._plans) == 0


# ---- CUDA, against the stand-in driver -----------------------------------------------------------

FAKE_PRELUDE = """
import ctypes, sys, types
import numpy as np
from pathlib import Path

import cupric as cu
from cupric import tile as ct
from cupric.tile._kernel import Kernel
fake = ctypes.CDLL("libcuda.so.1")
assert cu.cuda.is_available()
launches = ctypes.c_int.in_dll(fake, "launches")

def last_args(n):
    return np.ctypeslib.as_array(ctypes.cast(fake.fake_last_args, ctypes.POINTER(ctypes.c_int64)), (n,)).copy()

def f64_bits(v):
    return int(np.float64(v).view(np.int64))

sys.path.insert(0, EXAMPLES)
from saxpy import saxpy_kernel as saxpy

def python_path(kernel, grid, *args):
    '''The arguments as the Python path packs them (no plan): the driver's record.'''
    launch = kernel._prepare(args)
    launch.load()
    launch(grid, None)
    return last_args(10)
"""


def run_fake(fake_dir, body, cache):
    env = {
        "CUPRIC_CACHE_DIR": str(cache),
        "CUPRIC_DEVICE": "cuda",
        "FAKE_PARAM_SIZES": ",".join(["8"] * 10),  # saxpy on 1-d arrays: alpha + 3 x (pointer, extent, stride)
    }
    # from a file: kernels need their source
    prelude = FAKE_PRELUDE.replace("EXAMPLES", repr(str(Path(__file__).resolve().parents[3] / "examples" / "tile")))
    return run_with_fake_driver(fake_dir, prelude + body, env, script=cache / "launch_check.py")


@pytest.mark.nvrtc
def test_cuda_plans_pack_what_the_python_path_packs(fake_dir, tmp_path):
    run_fake(
        fake_dir,
        """
x = cu.asarray(np.arange(1000, dtype=np.float32), device="cuda")
y, o = cu.empty(1000, dtype=cu.float32), cu.empty(1000, dtype=cu.float32)
saxpy[(1,)](0.5, x, y, o, 1024)
planned = last_args(10)
assert planned.tolist() == [f64_bits(0.5), x._data_ptr, 1000, 1, y._data_ptr, 1000, 1, o._data_ptr, 1000, 1]
assert (python_path(saxpy, (1, 1, 1), 0.5, x, y, o, 1024) == planned).all()
assert len(saxpy._plans) == 1

def refuse(*a, **k):
    raise AssertionError("the launch went through the Python path")
prepare, Kernel._prepare = Kernel._prepare, refuse
n = launches.value
v = x[::-2][:400]  # a reversed, strided view: its own pointer and stride, the same plan
saxpy[(1,)](2.0, v, y, o, 1024)
assert last_args(10).tolist() == [f64_bits(2.0), v._data_ptr, 400, -2, y._data_ptr, 1000, 1, o._data_ptr, 1000, 1]
with cu.cuda.Stream() as s:  # the current stream, and an explicit one
    saxpy[(3,)](2.0, x, y, o, 1024)
ct.launch(s, 2, saxpy, 1.0, x, y, o, 1024)
saxpy[(0,)](1.0, x, y, o, 1024)  # empty: nothing launched
assert launches.value == n + 3
try:
    saxpy[(1, 70000)](1.0, x, y, o, 1024)
    raise AssertionError("no error")
except ValueError as e:
    assert "y and z up to 65535" in str(e)
Kernel._prepare = prepare

# other dtypes specialise again, and the Python path's errors stand
x64 = cu.asarray(np.arange(1000, dtype=np.float64), device="cuda")
saxpy[(1,)](3, x64, x64, x64, 1024)
assert last_args(10).tolist()[1:4] == [x64._data_ptr, 1000, 1]
assert (python_path(saxpy, (1, 1, 1), 3, x64, x64, x64, 1024) == last_args(10)).all()
assert len(saxpy.cache) == 2
try:
    saxpy[(1,)](0.5, x, cu.zeros(1000, dtype=cu.float32, device="cpu"), o, 1024)
    raise AssertionError("no error")
except ValueError as e:
    assert "different devices" in str(e)
""",
        tmp_path,
    )


@pytest.mark.nvrtc
def test_cuda_plans_read_torch_tensors_and_cuda_array_interface_objects(fake_dir, tmp_path):
    """PyTorch tensors are read through data_ptr(), shape, stride(), get_device() (a stand-in
    torch module here, with the same methods); __cuda_array_interface__ objects through their
    dictionary (strides in bytes, the producer's stream waited for)."""
    run_fake(
        fake_dir,
        """
torch = types.ModuleType("torch")

class dtype:
    def __init__(self, name):
        self.name = name
    def __str__(self):
        return "torch." + self.name

torch.float32, torch.float64 = dtype("float32"), dtype("float64")

class Tensor:
    is_cuda = True
    def __init__(self, ptr, shape, strides, dt=torch.float32, device=0):
        self._ptr, self.shape, self._strides, self.dtype, self._device = ptr, shape, strides, dt, device
    @property
    def ndim(self):
        return len(self.shape)
    def data_ptr(self):
        return self._ptr
    def stride(self):
        return self._strides
    def get_device(self):
        return self._device

torch.Tensor = Tensor
sys.modules["torch"] = torch

class CAI:
    def __init__(self, ptr, shape, typestr="<f4", strides=None, stream=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape, "typestr": typestr,
                                         "strides": strides, "version": 3, "stream": stream}

a, b, c = Tensor(0x10000, (1000,), (1,)), Tensor(0x20000, (500,), (2,)), Tensor(0x30000, (1000,), (1,))
saxpy[(1,)](0.5, a, b, c, 1024)
first = last_args(10)
assert first.tolist() == [f64_bits(0.5), 0x10000, 1000, 1, 0x20000, 500, 2, 0x30000, 1000, 1]
assert (python_path(saxpy, (1, 1, 1), 0.5, a, b, c, 1024) == first).all()
saxpy[(1,)](0.25, Tensor(0x40000, (10,), (-1,)), b, c, 1024)
assert last_args(10).tolist()[:4] == [f64_bits(0.25), 0x40000, 10, -1]
assert len(saxpy._plans) == 1 and len(saxpy.cache) == 1
saxpy[(1,)](0.5, Tensor(0x10000, (1000,), (1,), torch.float64), a, c, 1024)  # another dtype
assert len(saxpy.cache) == 2
try:
    saxpy[(1,)](0.5, Tensor(0x10000, (1000,), (1,), device=1), b, c, 1024)  # another device
    raise AssertionError("no error")
except Exception as e:
    assert "cuda:1" in str(e) or "device" in str(e), e

p, q = CAI(0x50000, (100,), strides=(8,)), CAI(0x60000, (100,), stream=1)
saxpy[(1,)](1.5, p, q, q, 1024)
assert last_args(10).tolist() == [f64_bits(1.5), 0x50000, 100, 2, 0x60000, 100, 1, 0x60000, 100, 1]
assert (python_path(saxpy, (1, 1, 1), 1.5, p, q, q, 1024) == last_args(10)).all()
n = len(saxpy._plans)
with cu.cuda.Stream():  # the producer's stream (another one) is waited for, and the launch goes on
    saxpy[(1,)](1.5, p, CAI(0x70000, (100,), stream=0x1234), q, 1024)
assert last_args(10).tolist()[4] == 0x70000 and len(saxpy._plans) == n
try:
    saxpy[(1,)](1.5, CAI(0x50000, (100,), strides=(6,)), q, q, 1024)
    raise AssertionError("no error")
except ValueError as e:
    assert "not multiples of the item size 4" in str(e)
""",
        tmp_path,
    )


@pytest.mark.nvrtc
@pytest.mark.parametrize("persistent", ["0", "1", ""])
def test_cuda_plans_pack_tensor_maps_and_the_grid_as_the_python_path_does(fake_dir, tmp_path, persistent):
    """A kernel with a TMA ring (the default on the stand-in's sm_90) launches through its plan
    after the first launch: the plan makes the tensor maps in C++ (the stand-in driver encodes none:
    maps of zeros) after the 18 parameters of the arrays (a's, b's and the bfloat16 epilogue's
    store), and a persistent kernel's grid after
    them, then split K's plan (whole tiles, splits), partial accumulators and counters — the same parameters the Python
    path packs (the scratch's addresses aside: each launch's own), and the same grid."""
    n_args = 18 + 3 + (0 if persistent == "0" else 7)  # (unset: persistent where the loop splits, as here)
    env = {
        "CUPRIC_CACHE_DIR": str(tmp_path),
        "CUPRIC_DEVICE": "cuda",
        "CUPRIC_TILE_PERSISTENT": persistent,
        "FAKE_PARAM_SIZES": ",".join(["8"] * 18 + ["128"] * 3 + ["8"] * (n_args - 21)),
    }
    prelude = FAKE_PRELUDE.replace("EXAMPLES", repr(str(Path(__file__).resolve().parents[3] / "examples" / "tile")))
    body = f"""
from matmul import matmul_kernel as mm
from cupric.tile import _cuda
assert _cuda.ring_mode() == {{"1": "tma ws persistent", "0": "tma ws plain"}}.get({persistent!r}, "tma ws")
a = cu.zeros((300, 200), dtype=cu.bfloat16, device="cuda")
b = cu.zeros((200, 512), dtype=cu.bfloat16, device="cuda")
bias = cu.zeros(512, dtype=cu.bfloat16, device="cuda")
out = cu.zeros((300, 512), dtype=cu.bfloat16, device="cuda")
mm[(3, 2)](a, b, bias, out, 128, 256, 64)  # the Python path, which makes the plan
first = np.ctypeslib.as_array(ctypes.cast(fake.fake_last_args, ctypes.POINTER(ctypes.c_int64)), ({n_args},)).copy()
assert len(mm._plans) == 1

def refuse(*a, **k):
    raise AssertionError("the launch went through the Python path")
Kernel._prepare = refuse
mm[(3, 2)](a, b, bias, out, 128, 256, 64)  # its plan (GROUP_M left out: its default filled in)
planned = np.ctypeslib.as_array(ctypes.cast(fake.fake_last_args, ctypes.POINTER(ctypes.c_int64)), ({n_args},)).copy()
assert (planned[:26] == first[:26]).all(), (planned, first)
assert planned[1:5].tolist() == [300, 200, 200, 1] and planned[18:21].tolist() == [0, 0, 0]  # maps of zeros
if {persistent!r} != "0":
    sms = cu.cuda.Device().multiprocessor_count
    # the grid, split K's plan, its scratch
    assert planned[21:26].tolist() == [3, 2, 1, *cu._cupric._tile.split_plan(6, sms)]
    assert planned[26] != 0 and planned[27] != 0
"""
    run_with_fake_driver(fake_dir, prelude + body, env, script=tmp_path / "maps_check.py")
