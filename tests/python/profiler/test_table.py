"""prof.table(): grouping by op and shape, sorting, and rates that follow from the recorded bytes,
flops and times (checked against the events themselves)."""

import cupric as cu
import numpy as np
import pytest
from cupric.profiler import _events, _table

RNG = np.random.default_rng(3)


@pytest.fixture(scope="module")
def prof():
    a = cu.asarray(RNG.random((64, 64)))
    b = cu.asarray(RNG.random((128,)))
    with cu.profiler.profile() as p:
        for _ in range(3):
            a + a
        b + b
        cu.matmul(a, a)
        a.sum()
    return p


def test_group_by_op_counts_calls_and_sums_times(prof):
    table = prof.table(ceilings=False)
    rows = {r["name"]: r for r in table}
    assert rows["add"]["calls"] == 4 and rows["matmul"]["calls"] == 1 and rows["sum"]["calls"] == 1
    adds = [e for e in prof.events if e.kind == "op" and e.name == "add"]
    assert rows["add"]["total_us"] == pytest.approx(sum(e.host_ns for e in adds) / 1e3)
    assert rows["add"]["min_us"] <= rows["add"]["mean_us"] <= rows["add"]["max_us"]
    assert rows["add"]["bytes"] == 3 * 3 * 64 * 64 * 8 + 3 * 128 * 8
    mm = rows["matmul"]
    assert mm["gflops"] == pytest.approx(2 * 64**3 / (mm["total_us"] * 1e-6) / 1e9)
    assert mm["roof_fraction"] is None  # ceilings=False
    totals = [r["total_us"] for r in table]
    assert totals == sorted(totals, reverse=True)


def test_group_by_shape_splits_an_op_by_its_inputs(prof):
    rows = {r["name"]: r for r in prof.table(group_by="shape", ceilings=False)}
    assert rows["add [(64, 64) float64, (64, 64) float64]"]["calls"] == 3
    assert rows["add [(128,) float64, (128,) float64]"]["calls"] == 1


def test_group_by_kernel_on_the_cpu_falls_back_to_ops_with_a_note(prof):
    table = prof.table(group_by="kernel", ceilings=False)
    assert "no kernel launches" in str(table)
    assert {r["name"] for r in table} >= {"add", "matmul", "sum"}


def test_sort_keys_and_top(prof):
    by_calls = prof.table(sort_by="calls", ceilings=False)
    assert by_calls.rows[0]["name"] == "add"
    assert [r["name"] for r in prof.table(sort_by="name", ceilings=False)] == sorted(r["name"] for r in by_calls)
    assert len(prof.table(top=2, ceilings=False)) == 2
    with pytest.raises(ValueError, match="sort_by must be one of"):
        prof.table(sort_by="speed")
    with pytest.raises(ValueError, match="group_by must be one of"):
        prof.table(group_by="thread")


def test_text_has_a_line_per_row_and_the_roof_fraction(prof):
    table = prof.table()  # measures the CPU's ceilings once
    text = str(table)
    assert text.splitlines()[0].split()[:3] == ["name", "device", "calls"]
    assert len(text.splitlines()) == 2 + len(table.rows)
    mm = next(r for r in table if r["name"] == "matmul")
    assert 0 < mm["roof_fraction"]


def test_ceilings_for_a_known_gpu_come_from_the_table():
    from cupric.profiler import _ceilings

    c = _ceilings.Ceilings("NVIDIA H200", *_ceilings.KNOWN_DEVICES["H200"], "table")
    assert c.peak_flops("bfloat16", "matmul") == 989400
    assert c.peak_flops("float64", "elementwise") == 34000
    assert c.bound(0.1, "float32", "elementwise") == pytest.approx(480)  # bandwidth-bound
    assert c.bound(1e4, "float32", "elementwise") == 67000  # compute-bound


@pytest.mark.parametrize("stat", ["mean", "var", "std"])
def test_a_statistics_inner_reductions_are_ops_in_the_table(stat):
    x = cu.asarray(RNG.random((32, 48)).astype(np.float32))
    with cu.profiler.profile() as p:
        r = getattr(cu, stat)(x, axis=1)
    np.testing.assert_allclose(np.asarray(r), getattr(np, stat)(np.asarray(x), axis=1), rtol=1e-5)
    rows = {row["name"]: row for row in p.table(ceilings=False)}
    sums = 1 if stat == "mean" else 2  # the mean; var and std: the mean, then the squared deviations'
    assert rows["sum"]["calls"] == sums
    assert rows["sum"]["flops"] == sums * x.size  # one flop per input element of each
    assert "divide" in rows


def _event(kind, name, t0, t1, thread=1, gpu=(-1, -1), nbytes=0.0, flops=0.0):
    return _events.Event(kind, name, "", 0, 0, 1, thread, t0, t1, gpu[0], gpu[1], nbytes, flops, 0, [], [], "other")


def test_a_kernel_takes_the_cost_model_of_its_innermost_owner():
    """An op's only kernel gets the op's bytes and flops; a tile launch's kernel the launch's (and
    the launch row goes); an op that launched two kernels, or another thread's, gives none."""
    events = [
        _event("op", "add", 0, 100, nbytes=3e6, flops=1e6),
        _event("kernel", "add_vec", 10, 20, gpu=(1000, 2000)),
        _event("op", "softmax", 200, 300, nbytes=8e6),
        _event("tile_launch", "softmax_kernel", 210, 290, nbytes=4e6, flops=2e6),
        _event("kernel", "softmax_kernel", 220, 230, gpu=(3000, 5000)),
        _event("op", "sort", 400, 500, nbytes=5e6),
        _event("kernel", "pass_a", 410, 420, gpu=(6000, 7000)),
        _event("kernel", "pass_b", 430, 440, gpu=(7000, 8000)),
        _event("kernel", "elsewhere", 50, 60, thread=2, gpu=(9000, 9500)),
    ]
    rows = {r["name"]: r for r in _table.build(events, group_by="kernel", ceilings=False)}
    assert (rows["add_vec"]["bytes"], rows["add_vec"]["flops"]) == (3e6, 1e6)
    assert rows["add_vec"]["gbps"] == pytest.approx(3e6 / 1e-6 / 1e9)
    assert (rows["softmax_kernel"]["bytes"], rows["softmax_kernel"]["flops"]) == (4e6, 2e6)
    assert rows["softmax_kernel"]["calls"] == 1
    assert rows["pass_a"]["bytes"] == rows["pass_b"]["bytes"] == rows["elsewhere"]["bytes"] == 0
    assert [e.bytes for e in events if e.kind == "kernel"] == [0.0] * 5  # the recorded events stay as they were
