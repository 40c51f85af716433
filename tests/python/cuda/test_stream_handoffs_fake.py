"""Streams at the boundaries, against the stand-in driver (tests/fake_cuda: no kernels run; it
traces the stream calls it receives): DLPack and __cuda_array_interface__ order the consumer
after the stream that last wrote an array, in both directions; foreign streams are used as they
are; a stream dropped with work pending lives until that work is done; frees on another stream
wait for the writer; a fault names the kernels launched last. The same cases run on a GPU in
test_gpu_stream_handoffs.py."""

from pathlib import Path

import pytest
from fake_driver import run_with_fake_driver

pytestmark = pytest.mark.nvrtc

PRELUDE = """
import ctypes, sys
import numpy as np
import cupric as cu
fake = ctypes.CDLL("libcuda.so.1")
fake.fake_trace.restype = ctypes.c_char_p
pending = ctypes.c_int.in_dll(fake, "fake_pending")  # 1: queries answer "not ready"
assert cu.cuda.is_available()
rng = np.random.default_rng(7)
SRC = ('extern "C" __global__ void producer(float* y, int n) {}'
       'extern "C" __global__ void oob_write(float* y, int n) {}')
code = cu.cuda.Program(SRC, arch="sm_90").compile("cubin")
producer, oob_write = code.get_kernel("producer"), code.get_kernel("oob_write")
ONE = cu.cuda.LaunchConfig(1, 1)

def calls(fn):
    '''The driver calls `fn` makes that the stand-in traces: (verb, operands...) tuples.'''
    fake.fake_trace_clear()
    fn()
    return [tuple(line.split()) for line in fake.fake_trace().decode().splitlines()]

def h(handle):
    '''A stream handle as the stand-in prints it.'''
    return "(nil)" if not handle else hex(handle)

def waited(trace, consumer, producer):
    '''True when `consumer` was made to wait for an event last recorded on `producer`.'''
    where = {}
    for c in trace:
        if c[0] == "record":
            where[c[1]] = c[2]
        elif c[0] == "wait" and c[1] == h(consumer) and where.get(c[2]) == h(producer):
            return True
    return False

def waits(trace):
    return [c for c in trace if c[0] == "wait"]

def data():
    return cu.asarray(rng.random(64, dtype=np.float32), device="cuda")

def raises(error, fn, *words):
    try:
        fn()
    except error as e:
        for w in words:
            assert w in str(e), (w, str(e))
        return
    raise AssertionError("no error")
"""


def run_fake(fake_dir, body, tmp_path=None, **env):
    script = tmp_path / "case.py" if tmp_path is not None else None
    return run_with_fake_driver(fake_dir, PRELUDE + body, env, drop=("CUPRIC_DEVICE", "CUPRIC_LAUNCH_SITES"),
                                script=script)


def test_dlpack_export_waits_on_the_stream_that_last_wrote(fake_dir):
    run_fake(fake_dir, """
x = data()
s = cu.cuda.Stream()
with s:
    y = x * 2                      # written on s
t = calls(lambda: y.__dlpack__(stream=0x1234))
assert waited(t, 0x1234, s.handle), t
for consumer, handle in ((None, 0), (1, 0), (2, 2)):   # the Array API: None and 1 legacy, 2 per-thread
    t = calls(lambda: y.__dlpack__(stream=consumer))
    assert waited(t, handle, s.handle), (consumer, t)
assert waits(calls(lambda: y.__dlpack__(stream=-1))) == []     # the consumer asks for no synchronisation
assert waits(calls(lambda: y.__dlpack__(stream=s.handle))) == []  # written there: nothing to wait for
other = cu.cuda.Stream()
assert waited(calls(lambda: y.__dlpack__(stream=other)), other.handle, s.handle)  # a stream object
raises(ValueError, lambda: y.__dlpack__(stream=0), "ambiguous")
raises(ValueError, lambda: y.__dlpack__(stream=-7), "-7")
raises(ValueError, lambda: cu.asarray(np.ones(3), device="cpu").__dlpack__(stream=5), "CPU")
s2 = cu.cuda.Stream()
with s2:
    y += 1                         # written in place on s2: the last writer now
assert waited(calls(lambda: y.__dlpack__(stream=0x99)), 0x99, s2.handle)
s3 = cu.cuda.Stream()
cu.cuda.launch(s3, ONE, producer, y, 64)   # a raw kernel may write its array arguments
assert waited(calls(lambda: y.__dlpack__(stream=0x99)), 0x99, s3.handle)
copy_trace = calls(lambda: y.__dlpack__(stream=0x77, copy=True))  # the copy runs after the writer
assert waited(copy_trace, 0, s3.handle) and waited(copy_trace, 0x77, 0)
assert np.array_equal(np.asarray(cu.from_dlpack(x)), np.asarray(x))
""")


def test_from_dlpack_passes_the_current_stream_to_the_producer(fake_dir):
    run_fake(fake_dir, """
class Producer:
    '''A CUDA producer that records the stream it is given (Array API 2024.12 signature).'''
    def __init__(self, array):
        self.array, self.streams = array, []
    def __dlpack_device__(self):
        return (2, 0)
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        return self.array.__dlpack__(stream=stream, max_version=max_version)

class OldProducer(Producer):
    def __dlpack__(self):          # before streams: ordered before the legacy default stream
        self.streams.append("none")
        return self.array.__dlpack__()

x = data()
p = Producer(x)
assert np.array_equal(np.asarray(cu.from_dlpack(p)), np.asarray(x)) and p.streams == [1]  # legacy default: 1
s = cu.cuda.Stream()
with s:
    t = calls(lambda: cu.from_dlpack(p))
assert p.streams[-1] == s.handle and waited(t, s.handle, 0), t   # x was written on the default stream
old = OldProducer(x)
with s:
    t = calls(lambda: cu.from_dlpack(old))
    imported = cu.from_dlpack(old)
assert old.streams == ["none", "none"] and waited(t, s.handle, 0), t
# the import is ready on s: exporting it again orders a consumer after s
assert waited(calls(lambda: imported.__dlpack__(stream=0x55)), 0x55, s.handle)
numpy_producer = np.arange(4.0)                        # a CPU producer is given no stream
assert np.array_equal(np.asarray(cu.from_dlpack(numpy_producer)), numpy_producer)
""")


def test_cuda_array_interface_exports_and_honours_streams(fake_dir):
    run_fake(fake_dir, """
x = data()
s = cu.cuda.Stream()
with s:
    y = x + 1
assert y.__cuda_array_interface__["stream"] == s.handle and y.__cuda_array_interface__["version"] == 3
assert x.__cuda_array_interface__["stream"] == 1       # the legacy default stream is 1
class Foreign:
    def __init__(self, array, stream):
        cai = dict(array.__cuda_array_interface__)
        cai["stream"] = stream
        self.__cuda_array_interface__ = cai
        self.keep = array
s2 = cu.cuda.Stream()
with s2:
    t = calls(lambda: cu.asarray(Foreign(x, 0x4321)))
    v = cu.asarray(Foreign(x, None))
assert waited(t, s2.handle, 0x4321), t
assert np.array_equal(np.asarray(v), np.asarray(x))
assert v.__cuda_array_interface__["stream"] == s2.handle   # imported: ready on the importer's stream
raises(ValueError, lambda: cu.asarray(Foreign(x, 0)), "ambiguous")
# a raw launch waits for a CAI argument's stream, and for a cupric argument's writer
t = calls(lambda: cu.cuda.launch(s2, ONE, producer, Foreign(x, 0x4444), 64))
assert waited(t, s2.handle, 0x4444), t
t = calls(lambda: cu.cuda.launch(s2, ONE, producer, y, 64))
assert waited(t, s2.handle, s.handle) and ("launch", "producer", h(s2.handle)) in t, t
""")


def test_foreign_streams_run_cupric_work(fake_dir):
    run_fake(fake_dir, """
theirs = cu.cuda.Stream()      # stands for another library's stream
class CoreStream:              # cuda.core's protocol
    def __cuda_stream__(self):
        return (0, theirs.handle)
class TorchStream:
    cuda_stream = theirs.handle
class CupyStream:
    ptr = theirs.handle
x = data()
for obj in (CoreStream(), TorchStream(), CupyStream(), theirs.handle, theirs):
    s = cu.cuda.Stream.from_external(obj)
    assert s.handle == theirs.handle and s.owned == (obj is theirs)
    with s:
        t = calls(lambda: x * 3)
    assert ("launch", "multiply_vec", h(theirs.handle)) in t, (obj, t)
    cu.cuda.launch(obj, ONE, producer, x, 64)   # every stream= argument takes the same objects
assert cu.cuda.Stream.from_external(1) == cu.cuda.default_stream()  # 1: the legacy default stream
assert theirs.__cuda_stream__() == (0, theirs.handle)
raises(TypeError, lambda: cu.cuda.Stream.from_external("nope"), "__cuda_stream__")
""")


def test_a_dropped_stream_lives_until_its_work_is_done(fake_dir):
    run_fake(fake_dir, """
pool = cu.cuda.memory_pool()
x = data()
s = cu.cuda.Stream()
handle = s.handle
with s:
    y = x * 2
    tmp = x + 1
    del tmp                          # a block cached for s
assert pool.stats()["bytes_cached"] > 0
pending.value = 1                    # s still has work queued
t = calls(lambda: globals().pop("s"))
assert ("query", h(handle)) in t and ("destroy", h(handle)) not in t, t
tail = [c[1] for c in t if c[0] == "record" and c[2] == h(handle)]
assert len(tail) == 1 and cu.cuda._dropped_streams() == 1
assert pool.stats()["bytes_cached"] == 0  # its cached blocks were freed in its order, before the tail
# y was written on the dropped stream: a consumer waits for the tail; y's free does too
assert ("wait", "0x99", tail[0]) in calls(lambda: y.__dlpack__(stream=0x99))
assert y.__cuda_array_interface__["stream"] == 1   # ready on the current stream, which waited
assert ("wait", "(nil)", tail[0]) in calls(lambda: globals().pop("y"))
pending.value = 0
t = calls(lambda: cu.cuda._dropped_streams())
assert ("destroy", h(handle)) in t and ("event_destroy", tail[0]) in t and cu.cuda._dropped_streams() == 0
# an idle stream is destroyed at once; a dropped stream's arrays then need no wait
s = cu.cuda.Stream()
with s:
    z = x * 2
idle = s.handle
assert ("destroy", h(idle)) in calls(lambda: globals().pop("s"))
assert waits(calls(lambda: z.__dlpack__(stream=0x99))) == []
assert z.__cuda_array_interface__["stream"] is None
# many dropped with work pending: bounded, the oldest waited for
pending.value = 1
for _ in range(1100):
    s = cu.cuda.Stream()
    with s:
        w = x + 1
    del s
assert cu.cuda._dropped_streams() == 1024
pending.value = 0
assert cu.cuda._dropped_streams() == 0  # an explicit poll looks at every one
""")


def test_frees_on_another_stream_wait_for_the_writer(fake_dir):
    run_fake(fake_dir, """
x = data()
s = cu.cuda.Stream()
with s:
    y = x * 2
assert waited(calls(lambda: globals().pop("y")), 0, s.handle)   # freed on the default stream after s
with s:
    z = x * 2
    assert waits(calls(lambda: globals().pop("z"))) == []        # freed where it was written
b = cu.cuda.alloc(256, s)
other = cu.cuda.Stream()
assert waited(calls(lambda: b.__dlpack__(stream=other.handle)), other.handle, s.handle)
""")


def test_a_fault_names_the_kernels_launched_last(fake_dir, tmp_path):
    out = run_fake(fake_dir, """
s, other = cu.cuda.Stream(), cu.cuda.Stream()
y = data()
cu.cuda.set_launch_sites(True)
cu.cuda.launch(other, ONE, producer, y, 64)
cu.cuda.launch(s, ONE, oob_write, y, 64)          # LINE-OOB
try:
    s.synchronize()
    raise AssertionError("no error")
except cu.cuda.CUDAError as e:
    msg, error = str(e), e
    print(msg)
assert error.sticky and error.name == "CUDA_ERROR_ILLEGAL_ADDRESS"
newest = msg.index("'oob_write' on stream " + hex(s.handle))
assert newest < msg.index("'producer' on stream " + hex(other.handle)), msg
line = next(i for i, t in enumerate(open(__file__).read().splitlines(), 1) if "LINE-OOB" in t and "next(" not in t)
assert f"case.py:{line}" in msg, msg
assert "restart" in msg and "CUDA_LAUNCH_BLOCKING=1" in msg
cu.cuda.set_launch_sites(False)
assert not cu.cuda.launch_sites_enabled()
""", tmp_path, FAKE_STICKY="1")
    assert "oob_write" in out


def test_tile_kernels_wait_for_their_arrays_producers(fake_dir, tmp_path):
    examples = Path(__file__).resolve().parents[3] / "examples" / "tile"
    run_fake(fake_dir, f"""
sys.path.insert(0, {str(examples)!r})
from saxpy import saxpy_kernel as saxpy
from cupric import tile as ct
class Foreign:
    '''Another library's array: only __cuda_array_interface__, ready on stream 0x4321.'''
    def __init__(self, array):
        self.__cuda_array_interface__ = dict(array.__cuda_array_interface__, stream=0x4321)
        self.keep = array
x, y, o = data(), data(), cu.empty(64, dtype=cu.float32, device="cuda")
s, s2 = cu.cuda.Stream(), cu.cuda.Stream()
for path in ("the Python path", "the launch plan"):
    with s:
        x2 = data()                 # written on s (a copy: every kernel here has saxpy's parameters)
    t = calls(lambda: ct.launch(s2, 1, saxpy, 0.5, x2, Foreign(y), o, 64))
    assert waited(t, s2.handle, s.handle) and waited(t, s2.handle, 0x4321), (path, t)
    assert sum(c[0] == "launch" for c in t) == 1, t
assert len(saxpy._plans) == 1
assert waited(calls(lambda: o.__dlpack__(stream=0x99)), 0x99, s2.handle)  # o was written on s2
""", tmp_path, CUPRIC_CACHE_DIR=str(tmp_path / "cache"), FAKE_PARAM_SIZES=",".join(["8"] * 10))
