"""Debug builds of tile kernels (@ct.kernel(debug=True), CUPRIC_TILE_DEBUG=1): every load, store,
gather, scatter and atomic is bounds-checked, and a bad access fails the launch naming the
kernel's file and line; in-bounds results are those of the plain build; the debug flag is part of
the compile cache's key; debug kernels compile for sm_90a with NVRTC, record a failure in the
launch's status word on the GPU and raise the CPU's exception there, leaving the context usable."""

import inspect
import os
import re
import subprocess
import sys

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from cupric.tile import _cuda
from cupric.tile._paths import include_dir
from tile_helpers import assert_close, random, to_cu, to_np


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return next(start + i for i, ln in enumerate(lines) if text in ln)


def accesses(x, y, idx, i, j, BLOCK: ct.Constant[int]):
    t = ct.load(x, index=(i,), shape=(BLOCK,))  # load
    u = ct.load_offset(x, offset=(j,), shape=(BLOCK,))  # load_offset
    k = ct.load(idx, index=(0,), shape=(BLOCK,))
    g = ct.gather(x, (k,))  # gather
    ct.store(y, index=(i,), tile=t + u + g)  # store
    ct.store_offset(y, offset=(j,), tile=t * 2)  # store_offset
    ct.scatter(y, (k,), t)  # scatter
    ct.atomic_add(y, (k,), t)  # atomic


checked = ct.kernel(accesses, debug=True)
plain = ct.kernel(accesses)
N, BLOCK = 50, 16
HERE = os.path.dirname(os.path.abspath(__file__))


def launch(kernel, i=1, j=20, idx=None):
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, N).astype(np.float32)
    # distinct indices: with a repeated one, which of the scatter's writes lands is the device's choice
    idx = rng.choice(N, BLOCK, replace=False).astype(np.int32) if idx is None else np.asarray(idx, np.int32)
    y = rng.uniform(-2, 2, N).astype(np.float32)
    out = to_cu(y)
    kernel[(1,)](to_cu(x), out, to_cu(idx), i, j, BLOCK)
    return to_np(out.to_device("cpu"))


def test_in_bounds_results_are_the_plain_builds():
    for i, j in ((0, 0), (1, 20), (3, 40), (3, -10)):  # ragged windows (pad / drop) are in bounds
        assert_close(launch(checked, i, j), launch(plain, i, j))


# the access the argument breaks, and what the message says of it
BAD = [
    ({"i": 4}, "# load", r"ct\.load from 'x': the window at tile index \(4,\) of shape \(16,\) lies wholly outside "
     r"the array of shape \(50,\)"),
    ({"j": 50}, "# load_offset", r"ct\.load_offset from 'x': the window at offset \(50,\)"),
    ({"j": -16}, "# load_offset", r".*offset \(-16,\) of shape \(16,\)"),
    ({"idx": [0] * 15 + [50]}, "# gather", r"ct\.gather from 'x': index \(50,\) is outside the array of shape \(50,\)"),
    ({"idx": [-1] + [0] * 15}, "# gather", r".*index \(-1,\)"),
]


@pytest.mark.parametrize("change, marker, message", BAD)
def test_an_access_outside_raises_index_error_naming_file_and_line(change, marker, message):
    where = f"{re.escape(__file__)}:{line_of(accesses, marker)}: "
    with pytest.raises(IndexError, match=where + message):
        launch(checked, **change)
    launch(plain, **change)  # the plain build reads padding and drops the writes


@pytest.mark.parametrize("change, marker, message", BAD)
def test_the_interpreter_checks_debug_kernels_alike(change, marker, message):
    where = f"{re.escape(__file__)}:{line_of(accesses, marker)}: ct\\.{marker[2:]}: "
    with pytest.raises(IndexError, match=where):
        launch(checked.interpret, **change)
    launch(plain.interpret, **change)  # no checks without debug
    assert_close(launch(checked.interpret, 3, -10), launch(plain, 3, -10))


STORES = [
    ("store", "ct.store(out, index=(i,), tile=t)", r"ct\.store to 'out': the window at tile index \(9,\)"),
    ("store_offset", "ct.store_offset(out, offset=(i,), tile=t)", r"ct\.store_offset to 'out': the window at offset"),
    ("scatter", "ct.scatter(out, (ct.arange(8) + i,), t)", r"ct\.scatter to 'out': index \(9,\)"),
    ("atomic", "ct.atomic_max(out, (ct.arange(8) + i,), t)", r"ct\.atomic_max to 'out': index \(9,\)"),
]


def _write_kernel(tmp_path, name, statement):
    """A debug kernel whose line 6 is `statement`, from a file of its own (the message names it)."""
    path = tmp_path / f"k_{name}.py"
    path.write_text(
        "from cupric import tile as ct\n\n"
        "@ct.kernel(debug=True)\n"
        "def k(x, out, i):\n"
        "    t = ct.load(x, index=(0,), shape=(8,))\n"
        f"    {statement}\n"
    )
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return path, namespace["k"]


@pytest.mark.parametrize("name, statement, message", STORES, ids=[s[0] for s in STORES])
def test_a_write_outside_raises_and_writes_nothing_past_the_array(tmp_path, name, statement, message):
    path, k = _write_kernel(tmp_path, name, statement)
    x = random(8, "float32")
    out = cu.zeros(8, dtype=cu.float32)
    with pytest.raises(IndexError, match=f"{re.escape(str(path))}:6: {message}"):
        k[(1,)](to_cu(x), out, 9)
    what = "atomic_max" if name == "atomic" else name
    with pytest.raises(IndexError, match=f"{re.escape(str(path))}:6: ct\\.{what}: "):
        k.interpret[(1,)](to_cu(x), out, 9)
    assert not to_np(out).any()
    out = cu.zeros(8, dtype=cu.float32)
    k[(1,)](to_cu(x), out, 0)
    assert_close(to_np(out), np.maximum(x, 0) if name == "atomic" else x)


def test_masked_out_lanes_are_not_accesses():
    @ct.kernel(debug=True)
    def masked(x, out, n):
        r = ct.arange(16)
        ct.scatter(out, (r,), ct.gather(x, (r,), mask=r < n), mask=r < n)

    x = random(10, "float32")
    out = cu.zeros(10, dtype=cu.float32)
    masked[(1,)](to_cu(x), out, 10)
    assert_close(to_np(out), x)
    with pytest.raises(IndexError, match=r"ct\.gather from 'x': index \(10,\)"):
        masked[(1,)](to_cu(x), out, 11)


def test_the_debug_flag_is_part_of_the_cache_key(cache_dir):
    """The plain build runs first and is cached (memory and disk); the debug build of the same
    function and arguments must still check, in this process and in a fresh one."""
    launch(plain, i=4)
    with pytest.raises(IndexError):
        launch(checked, i=4)
    code = (
        "import test_debug_checks as t\n"
        "t.launch(t.plain, i=4)\n"
        "try:\n    t.launch(t.checked, i=4)\nexcept IndexError as e:\n    print('raised', e)\n"
    )
    env = {**os.environ, "CUPRIC_CACHE_DIR": str(cache_dir), "CUPRIC_DEVICE": "cpu", "PYTHONPATH": HERE}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert "raised" in out.stdout and "lies wholly outside" in out.stdout, out.stderr


def test_the_environment_variable_turns_checks_on(monkeypatch):
    monkeypatch.setenv("CUPRIC_TILE_DEBUG", "1")
    k = ct.kernel(accesses)
    assert k.debug
    with pytest.raises(IndexError, match="lies wholly outside"):
        launch(k, i=4)


@pytest.mark.nvrtc
def test_debug_kernels_compile_for_sm90a():
    from test_cuda import _compile, _epilogue_case
    from test_mma import STAGED_CASES

    x = cu.zeros(N, dtype=cu.float32)
    info = checked.inspect(x, x, cu.zeros(BLOCK, dtype=cu.int32), 1, 2, BLOCK)
    assert info["cuda_source"].count("::cu::tile::check_window(") == 5  # the index tile's load too
    assert info["cuda_source"].count("::cu::tile::check_index(") == 3
    _compile(info["cuda_source"], info["cuda"]["entry"])
    # a staged tensor-core K loop (its loads copied ahead into shared memory) keeps the checks too
    kernel, args = _epilogue_case(*STAGED_CASES[0])
    info = ct.kernel(kernel.fn, debug=True).inspect(*args)
    assert "in the ring of stages" in info["cuda_source"] and info["cuda_source"].count("check_window(") >= 3
    _compile(info["cuda_source"], info["cuda"]["entry"])


def test_only_debug_builds_take_a_status_word():
    x = cu.zeros(N, dtype=cu.float32)
    args = (x, x, cu.zeros(BLOCK, dtype=cu.int32), 1, 2, BLOCK)
    debug, release = checked.inspect(*args), plain.inspect(*args)
    assert debug["cuda"]["params"][-1] == ("status", np.dtype(np.uint8))
    assert "cupric_tile_status* cupric_status" in debug["cuda_source"]
    assert debug["cuda"]["params"][:-1] == release["cuda"]["params"]
    assert all(role != "status" for role, _ in release["cuda"]["params"])
    assert "cupric_status" not in release["cuda_source"] and "nullptr};" in release["cuda_source"]


@pytest.mark.nvrtc
def test_a_failed_check_records_with_a_compare_and_swap_not_a_trap():
    @ct.kernel(debug=True)
    def asserting(x, out):
        t = ct.load(x, index=(0,), shape=(32,))
        ct.assert_(t > 0, "x must be positive")
        ct.store(out, index=(0,), tile=t)

    x = cu.zeros(32, dtype=cu.float32)
    for kernel, args in ((checked, (x, x, cu.zeros(BLOCK, dtype=cu.int32), 1, 2, BLOCK)), (asserting, (x, x))):
        info = kernel.inspect(*args)
        r = _cuda.compile_source(info["cuda_source"], include_dir(), arch="sm_90a", outputs=("cubin", "ptx"))
        assert r["cubin"][:4] == b"\x7fELF"
        assert "atom.global.cas.b32" in r["ptx"] or "atom.cas.b32" in r["ptx"]


def _gpu_launch(kernel, **change):
    """launch() on cuda:0 (its arrays made there)."""
    with cu.device("cuda:0"):
        return launch(kernel, **change)


@pytest.mark.gpu
@pytest.mark.parametrize("change, marker, message", BAD)
def test_an_access_outside_raises_on_the_gpu_and_the_next_launch_works(change, marker, message):
    where = f"{re.escape(__file__)}:{line_of(accesses, marker)}: "
    with cu.device("cpu"), pytest.raises(IndexError) as on_cpu:
        launch(checked, **change)
    with pytest.raises(IndexError, match=where + message) as on_gpu:
        _gpu_launch(checked, **change)
    assert str(on_gpu.value) == str(on_cpu.value)  # file:line, op, array, window or index, block
    for i, j in ((1, 20), (3, -10)):  # the context is usable: valid launches give the CPU's results
        assert_close(_gpu_launch(checked, i=i, j=j), launch(plain, i=i, j=j))
        assert_close(_gpu_launch(plain, i=i, j=j), launch(plain, i=i, j=j))


@pytest.mark.gpu
@pytest.mark.parametrize("name, statement, message", STORES, ids=[s[0] for s in STORES])
def test_a_write_outside_raises_on_the_gpu_and_writes_nothing(tmp_path, name, statement, message):
    path, k = _write_kernel(tmp_path, name, statement)
    x = random(8, "float32")
    with cu.device("cuda:0"):
        guard = cu.zeros(64, dtype=cu.float32)
        out = guard[16:24]  # a write past out would land in guard
        with pytest.raises(IndexError, match=f"{re.escape(str(path))}:6: {message}.* \\(block 0, 0, 0\\)$"):
            k[(1,)](cu.asarray(x, device="cuda:0"), out, 9)
        assert not to_np(guard.to_device("cpu")).any()
        k[(1,)](cu.asarray(x, device="cuda:0"), out, 0)
        assert_close(to_np(out.to_device("cpu")), np.maximum(x, 0) if name == "atomic" else x)


@pytest.mark.gpu
def test_a_failed_assert_raises_on_the_gpu_naming_the_block():
    @ct.kernel(debug=True)
    def positive(x, out):
        t = ct.load(x, index=(ct.bid(0),), shape=(32,))
        ct.assert_(t > 0, "x must be positive")
        ct.store(out, index=(ct.bid(0),), tile=t * 2)

    x = np.abs(random(128, "float32")) + 1
    bad = x.copy()
    bad[70] = -1
    with cu.device("cuda:0"):
        out = cu.zeros(128, dtype=cu.float32)
        with pytest.raises(AssertionError, match=r"x must be positive \(block 2, 0, 0\)"):
            positive[(4,)](cu.asarray(bad, device="cuda:0"), out)
        positive[(4,)](cu.asarray(x, device="cuda:0"), out)
        assert_close(to_np(out.to_device("cpu")), 2 * x)
