"""cupric.tile.autotune on the compiled CPU path: the fastest config is picked, launched and cached
(memory, then the shared compile cache on disk, so a new process does not time again), a key
change tunes again, failing configs are skipped and reported, argument and config errors, the
grid as a function of the config, reset_to_zero / restore_value; and on CUDA through a stand-in
runtime: CUDA events recorded on the launch stream."""

import io
import json
import os
import subprocess
import sys

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from cupric.tile import _autotune, _cuda
from tile_helpers import assert_close, random, to_cu, to_np


@pytest.fixture
def count_timings(monkeypatch):
    """How many configs were timed (calls of the benchmark loop)."""
    calls = []
    real = _autotune._benchmark

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(_autotune, "_benchmark", counted)
    return calls


MATMUL_CONFIGS = [
    {"BM": 32, "BN": 32, "BK": 16},
    ct.Config({"BM": 64, "BN": 32, "BK": 32}, num_threads=256),
    {"BM": 16, "BN": 48, "BK": 8},
]


@ct.autotune(configs=MATMUL_CONFIGS, key=["a", "b"], warmup=1, rep=5)
@ct.kernel
def matmul(a, b, out, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK))
        tb = ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN))
        acc = ct.mma(ta, tb, acc)
    ct.store(out, index=(ct.bid(0), ct.bid(1)), tile=acc)


def _matmul(a, b):
    out = cu.zeros((a.shape[0], b.shape[1]), dtype=cu.float32)
    matmul[lambda meta: (ct.cdiv(a.shape[0], meta["BM"]), ct.cdiv(b.shape[1], meta["BN"]))](a, b, out)
    return out


def test_winner_is_the_fastest_config_and_is_cached(cache_dir, count_timings):
    matmul.cache.clear()
    a, b = random((70, 45), "float32"), random((45, 50), "float32", np.random.default_rng(7))
    got = _matmul(to_cu(a), to_cu(b))
    assert_close(to_np(got), a @ b, rtol=1e-5, atol=1e-4)
    assert len(count_timings) == 3  # every config timed once
    (key,) = matmul.cache
    timings = matmul.timings[key]
    assert set(timings) == {ct.Config(c) if isinstance(c, dict) else c for c in MATMUL_CONFIGS}
    assert all(t > 0 for t in timings.values())
    assert matmul.cache[key] == min(timings, key=timings.get) == matmul.best_config
    got = _matmul(to_cu(a), to_cu(b))  # the same key: no timing
    assert len(count_timings) == 3
    assert_close(to_np(got), a @ b, rtol=1e-5, atol=1e-4)
    assert list(cache_dir.glob("v2/autotune/*/*.bin"))  # the choice is on disk


def test_key_change_tunes_again(cache_dir, count_timings):
    matmul.cache.clear()
    for m, n in ((40, 30), (41, 30), (40, 30)):  # the second shape is a new key; the third is known
        a, b = random((m, 20), "float32"), random((20, n), "float32")
        assert_close(to_np(_matmul(to_cu(a), to_cu(b))), a @ b, rtol=1e-5, atol=1e-4)
    assert len(count_timings) == 6 and len(matmul.cache) == 2
    a16 = random((40, 20), "float16")  # a dtype is always part of the key
    _matmul(to_cu(a16), to_cu(a16.T.copy()))
    assert len(count_timings) == 9 and len(matmul.cache) == 3


def test_a_new_process_reuses_the_choice_without_timing(tmp_path):
    script = tmp_path / "tuned.py"
    script.write_text(
        "import numpy as np, cupric as cu\n"
        "from cupric import tile as ct\n"
        "from cupric.tile import _autotune\n"
        "timed = []\n"
        "real = _autotune._benchmark\n"
        "_autotune._benchmark = lambda *a: timed.append(1) or real(*a)\n"
        "@ct.autotune(configs=[{'B': 64}, {'B': 128}, {'B': 256}], key=['x'], warmup=0, rep=1)\n"
        "@ct.kernel\n"
        "def scale(x, out, B: ct.Constant[int]):\n"
        "    i = ct.bid(0)\n"
        "    ct.store(out, index=(i,), tile=ct.load(x, index=(i,), shape=(B,)) * 3)\n"
        "x = np.random.default_rng(0).random(1000, dtype=np.float32)\n"
        "out = cu.zeros(1000, dtype=cu.float32)\n"
        "scale[lambda m: (ct.cdiv(1000, m['B']),)](cu.asarray(x), out)\n"
        "np.testing.assert_allclose(np.asarray(out), x * 3, rtol=1e-6)\n"
        "print(len(timed), scale.best_config)\n"
    )
    env = dict(os.environ, CUPRIC_CACHE_DIR=str(tmp_path))
    runs = [
        subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    first, second = (r.split(maxsplit=1) for r in runs)
    assert first[0] == "3" and second[0] == "0"  # timed all three, then none
    assert first[1] == second[1]  # the same winner


def test_a_record_not_of_the_expected_form_is_deleted_and_tuned_again(cache_dir, count_timings):
    @ct.autotune(configs=[{"B": 16}, {"B": 32}], key=["x"], warmup=0, rep=1)
    @ct.kernel
    def twice(x, out, B: ct.Constant[int]):
        ct.store(out, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(B,)) * 2)

    x = random(64, "float32")
    out = cu.zeros(64, dtype=cu.float32)
    twice[lambda m: 64 // m["B"]](to_cu(x), out)
    (key,) = twice.cache
    _, disk_key = twice._disk_key(key)
    good = json.loads(cu.cuda.compile_cache.get("autotune", disk_key))
    bad_records = [
        b"not json",
        json.dumps({**good, "best": 7}).encode(),
        json.dumps({**good, "best": -1}).encode(),
        json.dumps({**good, "configs": ["another config", "and another"]}).encode(),
        json.dumps({k: v for k, v in good.items() if k != "milliseconds"}).encode(),
        json.dumps({**good, "errors": [None]}).encode(),
    ]
    for record in bad_records:
        cu.cuda.compile_cache.put("autotune", disk_key, record)
        twice.cache.clear()
        out[...] = 0
        with pytest.warns(RuntimeWarning, match="deleted the autotune record"):
            twice[lambda m: 64 // m["B"]](to_cu(x), out)
        assert_close(to_np(out), x * 2)
    assert len(count_timings) == 2 * (1 + len(bad_records))  # tuned again after each


def test_failing_configs_are_skipped_and_all_failing_raises(cache_dir):
    @ct.autotune(configs=[{"B": 1 << 21}, {"B": 32}], key=["x"], warmup=0, rep=1)
    @ct.kernel
    def double(x, out, B: ct.Constant[int]):
        ct.store(out, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(B,)) * 2)

    x = random(100, "float32")
    y = to_cu(x)
    out = cu.zeros(100, dtype=cu.float32)
    double[lambda m: ct.cdiv(100, m["B"])](y, out)
    assert_close(to_np(out), x * 2)
    assert double.best_config == ct.Config({"B": 32})
    (timings,) = double.timings.values()
    assert isinstance(timings[ct.Config({"B": 1 << 21})], ct.CompileError)  # the reason is kept

    @ct.autotune(configs=[{"B": 1 << 21}, ct.Config({"B": 1 << 22}, num_threads=64)], key=["x"])
    @ct.kernel
    def too_big(x, B: ct.Constant[int]):
        ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(B,)) * 2)

    with pytest.raises(ct.AutotuneError, match="every config failed") as info:
        too_big[1](y)
    text = str(info.value)
    assert "Config(B=2097152): CompileError" in text and "Config(B=4194304, num_threads=64): CompileError" in text
    assert "the limit is 1048576" in text and len(info.value.failures) == 2
    assert_close(to_np(y), x)  # nothing ran


@ct.kernel
def _scale(x, out, factor, B: ct.Constant[int], C: ct.Constant[int] = 1):
    i = ct.bid(0)
    ct.store(out, index=(i,), tile=ct.load(x, index=(i,), shape=(B,)) * factor * C)


def test_config_and_argument_errors():
    with pytest.raises(TypeError, match="sets 'BX', which is not a parameter of _scale .its Constant parameters: B, C"):
        ct.autotune(configs=[{"BX": 32}], key=["x"])(_scale)
    with pytest.raises(TypeError, match="sets 'factor', which is not a ct.Constant parameter"):
        ct.autotune(configs=[{"B": 32, "factor": 2.0}], key=["x"])(_scale)
    with pytest.raises(TypeError, match="key names 'y', which is not a parameter .parameters: x, out, factor, B, C"):
        ct.autotune(configs=[{"B": 32}], key=["y"])(_scale)
    with pytest.raises(TypeError, match=r"Config\(C=2\) does not set 'B', which has no default"):
        ct.autotune(configs=[{"B": 32}, {"C": 2}], key=["x"])(_scale)
    with pytest.raises(ValueError, match="key 'B' is set by the configs"):
        ct.autotune(configs=[{"B": 32}], key=["B"])(_scale)
    with pytest.raises(ValueError, match="at least one config"):
        ct.autotune(configs=[], key=["x"])(_scale)
    with pytest.raises(TypeError, match="a config is a dict or a ct.Config, got int"):
        ct.autotune(configs=[32], key=["x"])(_scale)
    with pytest.raises(ValueError, match="multiple of 32 from 32 to 1024, got 100"):
        ct.Config({"B": 32}, num_threads=100)
    with pytest.raises(TypeError, match="reset_to_zero names 'C', which is not an array"):
        ct.autotune(configs=[{"B": 32}], key=["x"], reset_to_zero=["C"])(_scale)
    x = to_cu(random(64, "float32"))
    with pytest.raises(TypeError, match="'factor' is float; reset_to_zero and restore_value need cupric, NumPy or"):
        ct.autotune(configs=[{"B": 32}], key=["x"], restore_value=["factor"])(_scale)[2](x, x, 1.0)
    tuned = ct.autotune(configs=[{"B": 32}], key=["x"])(_scale)
    with pytest.raises(TypeError, match="'B' is chosen by @ct.autotune"):
        tuned[2](x, x, 1.0, B=32)
    with pytest.raises(TypeError, match="launch _scale with a grid"):
        tuned(x, x, 1.0)
    with pytest.raises(TypeError, match="argument 'factor' is str"):
        tuned[2](x, x, "two")


def test_key_on_scalar_values_defaults_and_interpreter(cache_dir, count_timings):
    tuned = ct.autotune(configs=[{"B": 16}, {"B": 32, "C": 2}], key=["factor"], warmup=0, rep=1)(_scale)
    x = random(64, "float32")
    for factor in (2.0, 3.0, 2.0):
        out = cu.zeros(64, dtype=cu.float32)
        tuned[lambda m: ct.cdiv(64, m["B"])](to_cu(x), out, factor)
        assert_close(to_np(out), x * factor * tuned.best_config.kwargs.get("C", 1))
    assert len(count_timings) == 4 and len(tuned.cache) == 2  # one tuning per factor value
    out = cu.zeros(64, dtype=cu.float32)
    tuned.interpret[lambda m: ct.cdiv(64, m["B"])](to_cu(x), out, 2.0)  # the known choice, no timing
    assert len(count_timings) == 4
    assert_close(to_np(out), x * 2.0 * tuned.cache[next(iter(tuned.cache))].kwargs.get("C", 1))
    info = tuned.inspect(to_cu(x), out, 5.0, config={"B": 32, "C": 2})
    assert info["config"] == ct.Config({"B": 32, "C": 2}) and "f32[32]" in info["ir"]


def test_reset_to_zero_and_restore_value(cache_dir):
    @ct.autotune(configs=[{"B": 16}, {"B": 32}, {"B": 64}], key=["x"], reset_to_zero=["total"], warmup=1, rep=3)
    @ct.kernel
    def add_up(x, total, B: ct.Constant[int]):
        t = ct.load(x, index=(ct.bid(0),), shape=(B,))
        ct.atomic_add(total, ct.zeros((1,), dtype=ct.int32), ct.sum(t))

    @ct.autotune(configs=[{"B": 16}, {"B": 32}], key=["x"], restore_value=["x"], warmup=1, rep=3)
    @ct.kernel
    def double_in_place(x, B: ct.Constant[int]):
        i = ct.bid(0)
        ct.store(x, index=(i,), tile=ct.load(x, index=(i,), shape=(B,)) * 2)

    x = random(200, "float32")
    total = cu.zeros(1, dtype=cu.float32)
    add_up[lambda m: ct.cdiv(200, m["B"])](to_cu(x), total)
    assert_close(to_np(total), [x.astype(np.float64).sum()], rtol=1e-5, atol=1e-4)  # once, not once per run
    y = to_cu(x).copy()
    double_in_place[lambda m: ct.cdiv(200, m["B"])](y)
    assert_close(to_np(y), x * 2)  # the timed launches did not compound


def test_ct_launch_accepts_a_tuned_kernel(cache_dir):
    tuned = ct.autotune(configs=[{"B": 32}, {"B": 64}], key=["x"], warmup=0, rep=1)(_scale)
    x = random(100, "float32")
    out = np.zeros(100, np.float32)  # NumPy arrays are used in place
    ct.launch(None, lambda m: ct.cdiv(100, m["B"]), tuned, x, out, 0.5)
    assert_close(out, x * 0.5)


# ---- CUDA, through a stand-in runtime: the choice is timed with events on the launch stream ----




@pytest.mark.nvrtc
def test_cuda_timing_uses_events_on_the_launch_stream(monkeypatch, cache_dir):
    from test_cuda import FakeCudaArray, StandInRuntime

    rt = StandInRuntime()
    recorded = []

    class Event:
        def __init__(self, device=None):
            self.device = device

        def record(self, stream):
            recorded.append((self, stream))
            self.launches = len(rt.launches)

        def synchronize(self):
            pass

        def elapsed_time(self, end):
            # the launches between the two events: a fake time that favours 256 threads
            ((_, config, _, _),) = rt.launches[self.launches : end.launches]
            return 1.0 if config.block == (256, 1, 1) else 2.0

    class Stream:
        def __init__(self, handle):
            self.handle = handle

    stream = Stream(0x1234)
    rt.Event, rt.Stream = Event, Stream
    rt.Device.name = "a stand-in GPU"
    monkeypatch.setattr(_cuda, "_cuda_module", lambda: rt)
    tuned = ct.autotune(
        configs=[ct.Config({"B": 512}, num_threads=128), ct.Config({"B": 512}, num_threads=256), {"B": 1 << 21}],
        key=["x"],
        warmup=0,
        rep=2,
    )(_scale)
    x = FakeCudaArray((1000,), "<f4")
    ct.launch(stream, lambda m: ct.cdiv(1000, m["B"]), tuned, x, x, 2.0)
    assert tuned.best_config == ct.Config({"B": 512}, num_threads=256)
    assert {s.handle for _, s in recorded} == {0x1234}  # events on the launch stream
    assert all(launch[0].handle == 0x1234 for launch in rt.launches)
    (timings,) = tuned.timings.values()
    assert isinstance(timings[ct.Config({"B": 1 << 21})], ct.CompileError)
    assert rt.launches[-1][1].block == (256, 1, 1)  # the launch after tuning uses the winner


def test_tuning_shows_its_progress_on_a_terminal_only(cache_dir, monkeypatch):
    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    @ct.autotune(configs=[{"B": 16}, {"B": 32}, {"B": 64}], key=["x"], warmup=0, rep=1)
    @ct.kernel
    def thrice(x, out, B: ct.Constant[int]):
        ct.store(out, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(B,)) * 3)

    monkeypatch.delenv("CUPRIC_QUIET", raising=False)
    for stream, size in ((io.StringIO(), 64), (FakeTTY(), 128)):  # a new size: tuned again
        monkeypatch.setattr(sys, "stderr", stream)
        xs = to_cu(random(size, "float32"))
        thrice[lambda m, n=size: n // m["B"]](xs, cu.zeros(size, dtype=cu.float32))
        shown = stream.getvalue()
        assert ("cupric: autotuning thrice  3 of 3" in shown) == isinstance(stream, FakeTTY), shown
