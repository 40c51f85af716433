"""prof.export_chrome_trace / export_json / roofline: the files are written and load back with the
schema Perfetto and chrome://tracing read (every event has ph, ts, pid, tid; X events a duration)."""

import json

import cupric as cu
import numpy as np
import pytest

RNG = np.random.default_rng(5)


@pytest.fixture(scope="module")
def prof():
    x = cu.asarray(RNG.random((256, 256)))
    with cu.profiler.profile() as p:
        with cu.profiler.range("work"):
            y = cu.exp(x) * 2.0
            cu.matmul(y, y).sum()
        cu._cupric._profiler.record("alloc", "pool", cu._cupric._profiler.now_ns(), cu._cupric._profiler.now_ns(),
                                    value=4096)
    return p


def test_chrome_trace_loads_back_with_its_schema(prof, tmp_path):
    path = prof.export_chrome_trace(tmp_path / "trace.json")
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    assert {e["name"] for e in spans} >= {"exp", "multiply", "matmul", "sum", "work"}
    for e in spans:
        assert {"name", "cat", "ts", "dur", "pid", "tid"} <= set(e) and e["dur"] >= 0 and e["ts"] >= 0
    counters = [e for e in events if e["ph"] == "C"]  # the host allocator's blocks and the recorded one
    assert {"bytes": 4096} in [c["args"] for c in counters] and all(c["name"] == "pool bytes" for c in counters)
    names = {e["args"]["name"] for e in events if e["ph"] == "M"}
    assert "host" in names
    work = next(e for e in spans if e["name"] == "work")
    exp = next(e for e in spans if e["name"] == "exp")
    assert work["ts"] <= exp["ts"] and exp["ts"] + exp["dur"] <= work["ts"] + work["dur"] + 1e-3
    assert exp["args"]["inputs"] == "(256, 256) float64"


def test_json_export_has_every_event(prof, tmp_path):
    doc = json.loads(prof.export_json(tmp_path / "p.json").read_text())
    assert doc["format"] == "cupric-profile" and len(doc["events"]) == len(prof.events)
    mm = next(e for e in doc["events"] if e["name"] == "matmul")
    assert mm["flops"] == 2 * 256**3
    assert mm["inputs"][0] == {"shape": [256, 256], "dtype": "float64", "weak": False}


def test_roofline_png_is_written(prof, tmp_path, monkeypatch):
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mpl"))  # matplotlib's font cache stays out of HOME
    pytest.importorskip("matplotlib")
    path = prof.roofline(tmp_path / "roof.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
