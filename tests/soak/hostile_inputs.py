"""Hostile inputs, each run in a fresh process under a memory limit: every one must end with a
result or a Python exception, never a signal (crash) or a timeout (hang). Not part of CI (it takes
a few minutes); `make soak` runs it. Prints one line per failure and the counts:

    python tests/soak/hostile_inputs.py [-k SUBSTRING] [--timeout S] [--jobs N]
"""

import argparse
import concurrent.futures
import os
import resource
import subprocess
import sys

PRELUDE = r"""
import sys, numpy as np, cupric as cu
from cupric import tile as ct
sys.setrecursionlimit(100000)
cpu = "cpu"
class AI:  # an object exposing __array_interface__ (the dict is the test's)
    def __init__(self, **d):
        self.__array_interface__ = {"version": 3, "typestr": "<f8", "shape": (3,),
                                    "data": (BUF.ctypes.data, False), **d}
class CAI:
    def __init__(self, **d):
        self.__cuda_array_interface__ = {"version": 3, "typestr": "<f4", "shape": (3,), "data": (0x10000, False), **d}
def nest(depth, leaf=1):
    x = leaf
    for _ in range(depth):
        x = [x]
    return x
def selfref():
    l = []
    l.append(l)
    return l
X = cu.asarray(np.arange(24.0).reshape(2, 3, 4), device=cpu)
B = lambda shape, dt=cu.float64: cu.broadcast_to(cu.zeros((), dt, device=cpu), shape)
import ctypes
class _Dev(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int32), ("id", ctypes.c_int32)]
class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]
class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Dev), ("ndim", ctypes.c_int32), ("dtype", _DType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]
class _Managed(ctypes.Structure):
    _fields_ = [("tensor", _Tensor), ("ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]
ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_libc = ctypes.CDLL(None)
_libc.calloc.restype = ctypes.c_void_p
def _leaked(ctype):  # never freed: the consumer may hold it until the interpreter is gone
    return ctype.from_address(_libc.calloc(1, ctypes.sizeof(ctype)))
def dlpack(shape=(4,), strides=(1,), data=None, ndim=None, offset=0, bits=64, shape_ptr=True):
    # a legacy DLPack capsule (no deleter) over BUF with the fields given: a producer that lies
    sh = _leaked(ctypes.c_int64 * max(len(shape), 1))
    sh[:len(shape)] = shape
    st = None
    if strides is not None:
        st = _leaked(ctypes.c_int64 * max(len(strides), 1))
        st[:len(strides)] = strides
    m = _leaked(_Managed)
    m.tensor = _Tensor(BUF.ctypes.data if data is None else data, _Dev(1, 0), len(shape) if ndim is None else ndim,
                       _DType(2, bits, 1), sh if shape_ptr else None, st, offset)
    return ctypes.pythonapi.PyCapsule_New(ctypes.addressof(m), b"dltensor", None)
BUF = np.arange(64.0)  # kept: views of it may outlive everything else

@ct.kernel
def put(x, i, BLOCK: ct.Constant[int]):
    ct.store(x, index=(i,), tile=ct.full((BLOCK,), 5, dtype=ct.float64))
@ct.kernel
def put_at(x, i, BLOCK: ct.Constant[int]):
    ct.store_offset(x, offset=(i,), tile=ct.full((BLOCK,), 5, dtype=ct.float64))
"""

HUGE = ["2**31", "2**32", "2**40", "2**62", "2**63-1", "2**63", "2**64", "-1", "-2**63", "2.0", "None", "'3'", "True"]
SHAPES = [
    "(2**40, 2**40)", "(2**32, 2**32)", "(2**62, 2**62)", "(2**63-1,)", "(2**62,)", "(2**61, 2)", "(2**40, 2**40, 0)",
    "(0, 2**63-1, 2**63-1)", "[1]*65", "[1]*10000", "(3, -2)", "(-1,)", "(2.5,)", "(2**64,)", "('a',)", "(None,)",
    "np.array([2**40, 2**40])", "(np.int64(2**62), 4)", "range(70)", "(2**20, 2**20, 2**20)",
]
DTYPES = ["cu.int8", "cu.float64", "cu.complex128", "cu.bool"]


def creation_cases():
    for shape in SHAPES:
        for dt in DTYPES[:2]:
            for fn in ("empty", "zeros", "ones"):
                yield f"cu.{fn}({shape}, {dt}, device=cpu)"
        yield f"cu.full({shape}, 7, device=cpu)"
        yield f"cu.empty_like(X, shape={shape})"
        yield f"cu.zeros_like(X, shape={shape})"
        yield f"X.reshape({shape})"
        yield f"cu.zeros(0, device=cpu).reshape({shape})"
        yield f"cu.broadcast_to(X[0, 0, 0], {shape})"
        yield f"cu.broadcast_to(X[0, 0, 0], {shape}).sum()"
        yield f"cu.broadcast_shapes({shape}, (1,))"
        yield f"cu.random.default_rng(0).random({shape})"
    for n in HUGE:
        yield f"cu.eye({n}, device=cpu)"
        yield f"cu.eye(2, {n}, device=cpu)"
        yield f"cu.eye(3, k={n}, device=cpu)"
        yield f"cu.identity({n}, device=cpu)"
        yield f"cu.tri({n}, device=cpu)"
        yield f"cu.tri({n}, {n}, device=cpu)"
        yield f"cu.tri(3, 4, {n}, device=cpu)"
        yield f"cu.arange({n}, device=cpu)"
        yield f"cu.arange(0, {n}, dtype=cu.int8, device=cpu)"
        yield f"cu.arange(-{n}, {n}, 2**61, device=cpu)"
        yield f"cu.linspace(0, 1, {n}, device=cpu)"
        yield f"cu.logspace(0, 1, {n}, device=cpu)"
        yield f"cu.random.default_rng(0).integers(0, 10, size={n})"
        yield f"cu.random.default_rng(0).choice(5, size={n})"
        yield f"cu.set_num_threads({n})"
        yield f"cu.expand_dims(X, {n})"
        yield f"cu.sum(X, axis={n})"
        yield f"cu.moveaxis(X, 0, {n})"
        yield f"cu.squeeze(X, axis={n})"
        yield f"cu.cumsum(X, axis={n})"
        yield f"X[{n}]"
        yield f"X[..., {n}]"
        yield f"X[::{n}]"
        yield f"X[{n}::-1]"
        yield f"X[:{n}:{n}]"
        yield f"X.__setitem__((0, {n}), 1.0)"
        yield f"X.__setitem__(slice(None, None, {n}), 1.0)"
        yield f"cu.stack([X] * 3, axis={n})"
        yield f"cu.concatenate([X, X], axis={n})"
        yield f"cu.meshgrid(cu.arange(3, device=cpu), cu.zeros({n}, device=cpu))"
    yield "cu.linspace(cu.zeros((2**31,)*0, device=cpu), 1, 2**62, device=cpu)"
    yield "cu.linspace(B((2**31,)), 1, 2**32, device=cpu)"
    yield "cu.tri(2**31, 2**30, dtype=cu.bool, device=cpu)"
    yield "cu.tril(B((2**31, 2**31), cu.int8))"
    yield "cu.concatenate([B((2**62,), cu.int8)] * 2)"
    yield "cu.stack([B((2**62,), cu.int8)] * 2)"
    yield "B((2**31, 2**31), cu.int8) + B((2**31, 1), cu.int8)"
    yield "B((2**40, 1)) + B((1, 2**40))"
    yield "cu.meshgrid(B((2**31,)), B((2**31,)))"
    yield "B((2**62,), cu.int8).nonzero()"
    yield "cu.argwhere(B((2**31, 2**31), cu.int8))"
    yield "B((2**61,), cu.int8).cumsum()"
    yield "B((2**62,), cu.int8).copy()"
    yield "B((2**62,), cu.int8).astype(cu.float64)"
    yield "cu.asarray(np.lib.stride_tricks.as_strided(np.zeros(1), (2**40,), (0,)))"
    yield "cu.asarray(np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), (2**62, 2), (0, 0)))"


def index_cases():
    yield "X[(None,) * 62]"
    yield "X[(None,) * 61]"
    yield "X[(None,) * 1000]"
    yield "X[(Ellipsis,) * 2]"
    yield "X[(0,) * 4]"
    yield "X[np.uint64(2**64 - 1)]"
    yield "X[np.int64(-2**63)]"
    yield "X[[2**63 - 1]]"
    yield "X[np.array([2**62]), np.array([-2**62])]"
    yield "X[np.zeros((2,) * 33, bool)]"
    yield "X[np.zeros(70, np.int64)]"
    yield "X[[[[[[[[0]]]]]]]]"
    yield "X[nest(70, 0)]"
    yield "X[selfref()]"
    yield "X[1.5]"
    yield "X['a']"
    yield "X[{}]"
    yield "X[slice(0, 1, 0)]"
    yield "X[slice(2**70, None)]"
    yield "X[slice(None, None, -2**63)]"
    yield "X[:, None, np.array([0, 1]), None]"
    yield "X.__setitem__((None,) * 70, 1.0)"
    yield "X.__setitem__(nest(70, 0), 1.0)"
    yield "X.__setitem__(np.zeros((2,) * 20, bool), 1.0)"
    yield "X.__setitem__(0, nest(70))"
    yield "X.__setitem__(0, selfref())"
    yield "X.__setitem__(Ellipsis, B((2**40,)))"
    yield "X.__setitem__(Ellipsis, [[1, 2], [3]])"


def conversion_cases():
    for depth in (63, 64, 65, 100, 1000, 30000):
        yield f"cu.asarray(nest({depth}), device=cpu).ndim"
        yield f"cu.asarray([nest({depth}), nest({depth})], device=cpu).ndim"
    yield "cu.asarray(selfref(), device=cpu)"
    yield "cu.asarray([1, selfref()], device=cpu)"
    yield "cu.asarray([selfref(), selfref()], device=cpu)"
    yield "cu.asarray((selfref(),), device=cpu)"
    yield "cu.asarray([[1, 2], [3]], device=cpu)"
    yield "cu.asarray([[1, 2], 3], device=cpu)"
    yield "cu.asarray([1, [2, 3]], device=cpu)"
    yield "cu.asarray([np.zeros([1] * 64)], device=cpu)"
    yield "cu.asarray([np.zeros([1] * 63)], device=cpu).ndim"
    yield "cu.asarray([object()], device=cpu)"
    yield "cu.asarray([2**64], device=cpu)"
    yield "cu.asarray([[]] * 3, device=cpu).shape"
    yield "cu.asarray(iter([1, 2]), device=cpu)"
    yield "cu.asarray(b'abc', device=cpu)"
    yield "cu.asarray(memoryview(b'abcd').cast('B', shape=[2, 2]), device=cpu)"
    yield "cu.asarray(memoryview(np.zeros((3, 4))).toreadonly(), device=cpu)"
    yield "cu.asarray(np.zeros((3, 4))[:, ::-2], device=cpu)"
    yield "cu.asarray(np.lib.stride_tricks.as_strided(np.zeros(4), (3,), (4,)), device=cpu)"
    yield "cu.asarray(np.lib.stride_tricks.as_strided(np.zeros(4), (2**40,), (2**23,)), device=cpu)"


def foreign_cases():
    ai = [
        "data=(0, False)", "data=(0, False), shape=(0,)", "shape=(-3,)", "shape=(2**40, 2**40)", "shape=(2**63,)",
        "shape=[3]", "shape=(3.0,)", "shape=(1,) * 65", "shape=(1,) * 64", "shape=None", "strides=(8, 8)",
        "strides=(4,)", "strides=(-8,)", "strides=(2**62,)", "strides=(2**63 - 8,)", "strides=(-2**63,)",
        "strides=(8.0,)", "strides=()", "data=(-8, False)", "data=(2**64, False)", "data=(2**64 - 8, False)",
        "data=(8, False), strides=(-16,)", "data=(2**64 - 24, False), strides=(2**62,)", "data=5", "data=None",
        "data=(BUF.ctypes.data,)", "typestr='<f3'", "typestr='<x8'", "typestr='abc'", "typestr=8", "typestr='<f'",
        "typestr='>f8'", "typestr='|V8'", "typestr='<f99999999999999999999'", "shape=(3,), strides=None",
        "version=None, shape=(2**31, 2**31), strides=(0, 0)",
    ]
    for extra in ai:
        yield f"cu.asarray(AI({extra}), device=cpu)"
        yield f"np.asarray(cu.asarray(AI({extra}), device=cpu)).sum()"
    yield "cu.asarray(type('A', (), {'__array_interface__': 5})(), device=cpu)"
    yield "cu.asarray(type('A', (), {'__array_interface__': property(lambda s: 1 / 0)})(), device=cpu)"
    for extra in ("data=(0, False)", "shape=(-3,)", "strides=(4,)", "strides=(4, 4)", "shape=(2**40, 2**40)",
                  "data=(-1, False)", "typestr='<V2'"):
        yield f"cu.asarray(CAI({extra}))"
        yield f"cu.cuda.Buffer.allocate(64).copy_from(CAI({extra}))"
        yield f"cu.asarray(CAI({extra}), device='cuda')"
    yield "cu.from_dlpack(np.lib.stride_tricks.as_strided(np.zeros(1), (2**40,), (0,)))"
    yield "cu.from_dlpack(np.zeros([1] * 64)).ndim"
    yield "cu.from_dlpack(object())"
    for fields in ("ndim=65", "ndim=-1", "ndim=2**31 - 1", "shape_ptr=False", "shape=(-4,)", "data=0",
                   "shape=(2**62,)", "strides=(2**62,)", "strides=(2**59,)", "strides=(-(2**55),)", "strides=None",
                   "shape=(2**40, 2**40), strides=(0, 0)", "offset=2**64 - 8", "bits=7", "bits=0",
                   "shape=(1,) * 64, strides=(1,) * 64", "shape=(3, 4), strides=(4, 1)"):
        yield f"cu.from_dlpack(dlpack({fields}))"
        yield f"np.asarray(cu.from_dlpack(dlpack({fields}))).sum()"


def tile_cases():
    for g in ("(2.5,)", "2.0", "(2**40, 2**40)", "(2**62, 2, 2)", "(-1,)", "(1, 2, 3, 4)", "()", "'a'", "None",
              "(np.int64(2),)", "(np.float64(2),)", "[1, 2]", "(2**63,)", "lambda m: 2.5", "lambda m: lambda: 1"):
        yield f"put[{g}](cu.zeros(16, device=cpu), 0, 8)"
        yield f"put.interpret[{g}](cu.zeros(16, device=cpu), 0, 8)"
    for i in ("2**61", "-2**61", "2**63 - 1", "-2**63", "2**62 + 1", "2**60 * 7", "2**63", "-2**63 - 1", "1.5"):
        yield f"(lambda x: (put[(1,)](x, {i}, 8), x.sum().item())[1])(cu.zeros(16, device=cpu))"
        yield f"(lambda x: (put_at[(1,)](x, {i}, 8), x.sum().item())[1])(cu.zeros(16, device=cpu))"
        yield f"(lambda x: (put.interpret[(1,)](x, {i}, 8), x.sum().item())[1])(cu.zeros(16, device=cpu))"


CLASSES = {
    "creation": creation_cases,
    "index": index_cases,
    "conversion": conversion_cases,
    "foreign": foreign_cases,
    "tile": tile_cases,
}


def limit_memory(gib):
    def apply():
        limit = gib << 30
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # huge requests fail instead of paging the machine out

    return apply


def run_case(expr, timeout, gib):
    code = PRELUDE + f"\ntry:\n    r = ({expr})\nexcept Exception as e:\n    r = e\nprint('ok', type(r).__name__)\n"
    env = dict(os.environ, CUPRIC_NUM_THREADS="2", CUPRIC_DEVICE="cpu")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                           preexec_fn=limit_memory(gib), env=env)
    except subprocess.TimeoutExpired:
        return "hang", ""
    if p.returncode < 0:
        return f"crash (signal {-p.returncode})", p.stderr[-300:]
    if p.returncode != 0 or "ok" not in p.stdout:
        return f"exit {p.returncode}", p.stderr[-300:]
    return "ok", p.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="only cases containing this text")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--memory-gib", type=int, default=8)
    ap.add_argument("-v", action="store_true", help="print every case")
    args = ap.parse_args()
    cases = [(cls, e) for cls, gen in CLASSES.items() for e in gen() if args.k in e]
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda c: (c, run_case(c[1], args.timeout, args.memory_gib)), cases)
        for (cls, expr), (status, detail) in results:
            if status != "ok":
                failures += 1
                print(f"FAIL [{cls}] {status}: {expr}\n    {detail}", flush=True)
            elif args.v:
                print(f"ok   [{cls}] {expr} -> {detail}", flush=True)
    per_class = {cls: sum(c == cls for c, _ in cases) for cls in CLASSES}
    print(f"{len(cases)} hostile inputs ({per_class}); {failures} crashed, hung or exited")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
