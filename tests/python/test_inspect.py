"""cupric.inspect (python/cupric/_inspect.py): the kernels an array op would launch, compiled with
NVRTC and read from their cubins, without a GPU."""

import cupric as cu
import numpy as np
import pytest


def _x(shape=(64, 48), dtype=np.float32):
    return cu.asarray(np.random.default_rng(1).random(shape).astype(dtype))


@pytest.mark.nvrtc
@pytest.mark.parametrize(("op", "args", "kwargs", "names"), [
    (cu.add, lambda: (_x(), 2.0), {}, ["add_vec"]),
    (cu.multiply, lambda: (_x().T, _x().T), {}, ["multiply_nd"]),
    (cu.exp, lambda: (_x(dtype=np.float64),), {}, ["exp_vec"]),
    (cu.argmax, lambda: (_x(),), {"axis": 1}, ["argmax_f4"]),
    (cu.cumsum, lambda: (_x(dtype=np.float64),), {"axis": 0}, ["cumsum_f8_f8"]),
])
def test_inspect_lists_the_kernels_an_op_launches(op, args, kwargs, names):
    r = cu.inspect(op, *args(), **kwargs, sass=False)
    assert r.names() == names
    for k in r:
        assert k.registers > 0 and k.threads == 256 and k.arch == r.arch
        assert k.name in k.source and f".entry {k.name}" in k.ptx
        assert k.occupancy["blocks_per_sm"] > 0 and 0 < k.occupancy["fraction"] <= 1
        assert k.spill_stores == 0 and k.local_bytes >= 0
    text = str(r)
    assert all(n in text for n in names) and "limited by" in text


@pytest.mark.nvrtc
def test_a_reduction_shows_its_variants_and_its_second_pass():
    r = cu.inspect(cu.sum, _x(dtype=np.int32), axis=0, sass=False)
    assert set(r.names()) == {f"reduce_sum_i4_i8_{v}" for v in ("rows", "cols", "colsv")} | {
        f"reduce_sum_i8_i8_partials_{v}" for v in ("rows", "cols", "colsv")}
    assert r["reduce_sum_i4_i8_cols"].static_shared_bytes > 0
    with pytest.raises(KeyError, match="no kernel 'nope'"):
        r["nope"]


@pytest.mark.nvrtc
def test_sort_reports_every_kernel_of_the_radix_sort():
    r = cu.inspect(cu.sort, _x((1000,)), sass=False)
    assert {"sort_hist_f4", "sort_pass_f4", "sort_starts_f4"} <= set(r.names())


@pytest.mark.nvrtc
def test_an_op_made_of_library_calls_is_named_in_the_notes():
    r = cu.inspect(cu.matmul, _x((8, 8)), _x((8, 8)), sass=False)
    assert len(r) == 0 and r.notes and r.notes[0].startswith("matmul: no kernel of cupric's own")


@pytest.mark.nvrtc
def test_the_arch_decides_the_occupancy_table():
    r80 = cu.inspect(cu.add, _x(), _x(), arch="sm_80", sass=False)
    r86 = cu.inspect(cu.add, _x(), _x(), arch="sm_86", sass=False)
    k80, k86 = r80["add_vec"], r86["add_vec"]
    assert k80.arch == "sm_80" and "A100" in str(r80) and "RTX 3090" in str(r86)
    assert k86.occupancy["warps_per_sm"] <= 48 < 64


def test_inspect_errors_name_the_problem():
    with pytest.raises(ValueError, match="no occupancy limits for sm_75"):
        cu.inspect(cu.add, _x(), 1.0, arch="sm_75")
    with pytest.raises(TypeError, match="op must be a cupric function or ufunc, got int"):
        cu.inspect(3, _x())
    with cu.profiler.profile():
        with pytest.raises(RuntimeError, match="outside cu.profiler.profile"):
            cu.inspect(cu.add, _x(), 1.0)
