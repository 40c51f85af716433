"""cupric.profiler on the CPU: what a profile records for each op (names, shapes, dtypes, the
bytes and flops models), nesting, user ranges, and that nothing is recorded when it is off."""

import cupric as cu
import numpy as np
import pytest
from cupric.profiler import _events

RNG = np.random.default_rng(17)


def _ops(prof, name=None):
    return [e for e in prof.events if e.kind == "op" and (name is None or e.name == name)]


def test_each_op_records_name_shapes_dtypes_and_times():
    a = cu.asarray(RNG.random((30, 40)))
    b = cu.asarray(RNG.random(40).astype(np.float32))
    with cu.profiler.profile() as prof:
        c = a + b
        s = c.sum(axis=0)
        m = cu.matmul(a, a.T)
        o = cu.sort(s)
    np.testing.assert_allclose(np.asarray(o), np.sort(np.asarray(a + b).sum(axis=0)))
    (add,) = _ops(prof, "add")
    assert add.inputs == [((30, 40), "float64", False), ((40,), "float32", False)]
    assert add.outputs == [((30, 40), "float64", False)]
    assert add.device == -1 and add.stream == 0 and add.t1_ns >= add.t0_ns > 0
    assert add.model == "elementwise" and add.bytes == 30 * 40 * 8 + 40 * 4 + 30 * 40 * 8 and add.flops == 1200
    (total,) = _ops(prof, "sum")
    assert total.model == "reduction" and total.flops == 1200 and total.outputs[0][0] == (40,)
    (mm,) = _ops(prof, "matmul")
    assert mm.flops == 2 * 30 * 30 * 40 and mm.bytes == 8 * (1200 + 1200 + 900)
    assert [e.name for e in _ops(prof, "sort")] == ["sort"]
    assert m.shape == (30, 30) and s.shape == (40,)


def test_weak_scalars_are_marked_and_move_no_bytes():
    x = cu.asarray(RNG.random(100).astype(np.float32))
    with cu.profiler.profile() as prof:
        x * 2.5
    (mul,) = _ops(prof, "multiply")
    assert mul.inputs[1] == ((), "float64", True)
    assert mul.bytes == 2 * 100 * 4


def test_nothing_is_recorded_outside_a_profile():
    x = cu.asarray(RNG.random(10))
    with cu.profiler.profile() as prof:
        x + x
    x * x  # after the profile: not in it, and not in the next one
    with cu.profiler.profile() as second:
        cu.exp(x)
    assert [e.name for e in _ops(prof)] == ["add"]
    assert [e.name for e in _ops(second)] == ["exp"]
    assert not cu._cupric._profiler.mode("record")


def test_nested_ops_are_deeper_and_self_time_excludes_them():
    x = cu.asarray(RNG.random((50, 8)))
    with cu.profiler.profile() as prof:
        cu.var(x, axis=0)
    ops = _ops(prof)
    depths = {e.depth for e in ops}
    assert min(depths) == 0
    selfs = _events.self_times(prof.events)
    for i, e in enumerate(prof.events):
        if e.kind == "op":
            assert 0 <= selfs[i] <= e.host_ns


def test_failed_op_is_recorded_as_raised_and_profile_continues():
    a, b = cu.ones((3, 4)), cu.ones((5,))
    with cu.profiler.profile() as prof:
        with pytest.raises(ValueError, match="broadcast"):
            a + b
        a + a
    assert [(e.name, e.detail) for e in _ops(prof)] == [("add", "raised"), ("add", "")]


def test_user_ranges_as_context_manager_and_decorator():
    @cu.profiler.range("step")
    def step(x):
        return x * 2

    x = cu.ones(4)
    with cu.profiler.profile() as prof:
        with cu.profiler.range("outer"):
            step(x)
            step(x)
    ranges = [e for e in prof.events if e.kind == "range"]
    assert sorted(e.name for e in ranges) == ["outer", "step", "step"]
    outer = next(e for e in ranges if e.name == "outer")
    for e in _ops(prof):
        assert outer.t0_ns <= e.t0_ns <= e.t1_ns <= outer.t1_ns
    with pytest.raises(TypeError, match="range name must be a str"):
        cu.profiler.range(3)


def test_profiles_do_not_nest_and_stop_checks_its_state():
    with cu.profiler.profile():
        with pytest.raises(RuntimeError, match="recording already"):
            cu.profiler.profile().start()
    with pytest.raises(RuntimeError, match="not recording"):
        cu.profiler.Profile().stop()


def test_nvtx_is_off_with_a_warning_when_the_library_is_absent(monkeypatch):
    from cupric import profiler

    monkeypatch.setattr(profiler, "_nvtx_candidates", lambda: iter(["/nonexistent/libnvToolsExt.so.1"]))
    profiler._load_nvtx.cache_clear()
    monkeypatch.setattr(profiler.nvtx, "_warned", False, raising=False)
    with pytest.warns(RuntimeWarning, match="libnvToolsExt not found"):
        assert profiler.nvtx(True) is False
    assert not cu._cupric._profiler.mode("nvtx")
    profiler._load_nvtx.cache_clear()
    x = cu.ones(3)
    with cu.profiler.range("still works"):
        x + x


def test_recording_core_rejects_unknown_modes_and_kinds():
    core = cu._cupric._profiler
    with pytest.raises(ValueError, match="unknown profiler mode 'fast'"):
        core.set_mode("fast", True)
    with pytest.raises(ValueError, match="unknown event kind 'nap'"):
        core.record("nap", "x", 0, 1)


def test_benchmark_times_each_run_and_summarises_in_one_line():
    calls = []
    x = cu.ones(1000)

    def work(a, scale=1.0):
        calls.append(1)
        return a * scale

    result = cu.profiler.benchmark(work, (x,), {"scale": 2.0}, n_repeat=50, n_warmup=4, name="scale")
    assert len(calls) == 54 and len(result.cpu_times) == 50 and result.gpu_times == {}
    s = result.summary(result.cpu_times)
    assert s["min"] <= s["p50"] <= s["p90"] <= s["p99"] <= s["max"]
    assert s["p50"] == pytest.approx(float(np.median(result.cpu_times)))
    text = str(result)
    assert text.startswith("scale") and "CPU:" in text and "\n" not in text
    with pytest.raises(ValueError, match="n_repeat must be >= 1"):
        cu.profiler.benchmark(work, (x,), n_repeat=0)


def test_max_duration_stops_early():
    result = cu.profiler.benchmark(lambda: None, n_repeat=10**9, n_warmup=0, max_duration=0.01)
    assert 1 <= len(result.cpu_times) < 10**9


def test_profile_command_writes_table_trace_and_picture(tmp_path):
    import importlib.util
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "work.py"
    script.write_text("import sys, cupric as cu\nx = cu.ones((64, 64))\nfor _ in range(int(sys.argv[1])):\n"
                      "    y = cu.matmul(x, x) + 1\n")
    out = tmp_path / "run"
    args = [sys.executable, "-m", "cupric.profile", "--out", str(out), str(script), "3"]
    if importlib.util.find_spec("matplotlib") is None:  # not imported here: it would write into HOME
        args.insert(3, "--no-roofline")
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")}  # matplotlib's font cache stays out of HOME
    done = subprocess.run(args, capture_output=True, text=True, check=True, env=env)
    assert "matmul" in done.stdout and "add" in done.stdout
    rows = [line.split() for line in (tmp_path / "run.txt").read_text().splitlines()[2:]]
    assert {r[0]: int(r[2]) for r in rows}["matmul"] == 3
    trace = json.loads((tmp_path / "run.trace.json").read_text())
    assert sum(e["name"] == "matmul" for e in trace["traceEvents"]) == 3
    if "--no-roofline" not in args:
        assert (tmp_path / "run.png").stat().st_size > 10_000


def test_cupti_that_cannot_start_falls_back_to_events_with_a_note(monkeypatch):
    from cupric import profiler

    monkeypatch.setattr(profiler, "_cupti_candidates", lambda: iter(["/nonexistent/libcupti.so.12"]))
    x = cu.ones(8)
    with cu.profiler.profile(device_times="cupti") as prof:
        x + x
    assert prof.device_times == "events"
    assert "CUPTI is not available (cannot load /nonexistent/libcupti.so.12" in str(prof.table(ceilings=False))
    assert not cu._cupric._profiler.cupti_active()
    with pytest.raises(ValueError, match="device_times must be 'auto', 'events' or 'cupti', got 'nsight'"):
        cu.profiler.profile(device_times="nsight")
    with cu.profiler.profile() as prof:  # auto: CUPTI where there is a GPU and it starts; quietly events else
        x + x
    assert prof.device_times == "events" and not prof.notes


def test_host_allocations_and_the_pools_size_are_recorded(tmp_path):
    """Blocks of the CPU's host allocator (64 KiB and more): each alloc and free, its size, and the
    bytes the pool holds after it, which grow while arrays live and stay (as cache) after they die;
    the table sums them per device and the trace draws them as a counter."""
    n = 1 << 17  # 1 MiB of float64
    data = np.random.default_rng(8).random(n)
    with cu.profiler.profile() as prof:
        x = cu.asarray(data)  # NumPy's memory, not the allocator's
        y = cu.exp(x)
        z = y * 2.0
        del y
        w = z + 1.0
    np.testing.assert_allclose(np.asarray(w), np.exp(data) * 2 + 1)
    allocs = [e for e in prof.events if e.kind == "alloc" and e.device == -1]
    made = [e for e in allocs if e.name == "alloc"]
    assert len(made) == 3 and all(e.bytes >= n * 8 for e in made)  # y, z, w
    assert any(e.name == "free" and e.detail == "into the cache" for e in allocs)  # y
    assert made[-1].detail == "cache hit"  # w takes y's block
    held = [e.value for e in sorted(allocs, key=lambda e: e.t1_ns)]
    assert all(v >= 0 for v in held) and max(held) >= 2 * n * 8  # y and z at once
    memory = prof.table().memory["cpu"]
    assert memory["allocations"] == len(made) and memory["peak_bytes"] == max(held)
    assert memory["frees"] == len(allocs) - len(made) and memory["final_bytes"] == held[-1]
    assert "memory cpu: " in str(prof.table()) and "pool peak" in str(prof.table())
    import json

    doc = json.loads(prof.export_chrome_trace(tmp_path / "t.json").read_text())
    counters = [e["args"]["bytes"] for e in doc["traceEvents"] if e["ph"] == "C"]
    assert counters == held


def test_allocations_outside_a_profile_are_not_recorded():
    x = cu.ones(1 << 17)
    with cu.profiler.profile() as prof:
        pass
    del x
    assert not [e for e in prof.events if e.kind == "alloc"]
