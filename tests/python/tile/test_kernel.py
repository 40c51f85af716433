"""cupric.tile kernels as objects: launching (kernel[grid], ct.launch, keywords, grid forms),
specialisation, the compile cache (memory and disk: hits skip the compiler), the interpreter
switch, kernel.inspect, and argument errors."""

import os
import subprocess
import sys

import cupric as cu
import numpy as np
import pytest
from cupric import tile as ct
from tile_helpers import BF16, assert_close, random, run, to_cu, to_np


@ct.kernel
def scale(x, out, factor, BLOCK: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(out, index=(i,), tile=ct.load(x, index=(i,), shape=(BLOCK,)) * factor)


def test_launch_forms():
    x = random(100, "float32")
    for launch in (
        lambda o: scale[(4,)](to_cu(x), o, 2.0, 32),
        lambda o: scale[4](to_cu(x), o, factor=2.0, BLOCK=32),
        lambda o: scale[lambda meta: (ct.cdiv(100, meta["BLOCK"]),)](to_cu(x), o, 2.0, BLOCK=32),
        lambda o: ct.launch(None, (4,), scale, to_cu(x), o, 2.0, 32),
    ):
        out = cu.zeros(100, dtype=cu.float32)
        launch(out)
        assert_close(to_np(out), x * 2)


def test_numpy_arguments_are_used_in_place():
    x = random(64, "float32")
    out = np.zeros(64, np.float32)
    scale[(2,)](x, out, 3.0, 32)
    assert_close(out, x * 3)


def test_specialisation_on_dtype_ndim_and_constants():
    scale.cache.clear()
    for dt in ("float32", "float64", "int32"):
        x = random(64, dt)
        out = cu.zeros(64, dtype=cu.dtype(dt))
        scale[(2,)](to_cu(x), out, 2, 32)
        assert_close(to_np(out), x * 2, dt)
    out = cu.zeros(64, dtype=cu.float32)
    scale[(4,)](to_cu(random(64, "float32")), out, 2.0, 16)
    scale[(4,)](to_cu(random(64, "float32")), out, 2.0, 16)  # same key: no new entry
    assert len(scale.cache) == 4


@ct.kernel
def _plus_constant(x, out, C: ct.Constant[float], BLOCK: ct.Constant[int]):
    ct.store(out, index=(0,), tile=ct.load(x, index=(0,), shape=(BLOCK,)) + C)


def test_float_constants_specialise_by_their_exact_value():
    """-0.0 and 0.0 are equal in Python but not as constants (-0.0 + -0.0 is -0.0, -0.0 + 0.0 is
    +0.0): each gets its own specialisation, as NumPy gives; a NaN constant finds its entry again."""
    _plus_constant.cache.clear()
    x = cu.asarray(np.full(8, -0.0, dtype=np.float32))
    for c in (0.0, -0.0, 0.0):
        out = cu.zeros(8, dtype=cu.float32)
        _plus_constant[(1,)](x, out, c, 8)
        np.testing.assert_array_equal(np.signbit(to_np(out)), np.signbit(np.float32(-0.0) + np.float32(c)))
    assert len(_plus_constant.cache) == 2
    for _ in range(2):
        out = cu.zeros(8, dtype=cu.float32)
        _plus_constant[(1,)](x, out, float("nan"), 8)
        assert np.isnan(to_np(out)).all()
    assert len(_plus_constant.cache) == 3
    _plus_constant.cache.clear()


def test_interpreter_switch(monkeypatch):
    x = random(64, "float32")
    out = cu.zeros(64, dtype=cu.float32)
    scale.cache.clear()
    monkeypatch.setenv("CUPRIC_TILE_INTERPRET", "1")
    scale[(2,)](to_cu(x), out, 2.0, 32)
    assert len(scale.cache) == 0  # nothing compiled
    assert_close(to_np(out), x * 2)


def test_interpreter_runs_python_print(capsys):
    @ct.kernel
    def show(x, BLOCK: ct.Constant[int]):
        t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
        print("block", int(ct.bid(0)), "sum", float(ct.sum(t)))

    show.interpret[(2,)](to_cu(np.arange(8, dtype=np.float32)), 4)
    assert capsys.readouterr().out.splitlines() == ["block 0 sum 6.0", "block 1 sum 22.0"]


def test_interpreter_tiles_are_cupric_arrays_and_print_shows_values(capsys):
    @ct.kernel
    def show(x, BLOCK: ct.Constant[int]):
        t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,)) * 2
        print(t)
        ct.print("sum", ct.sum(t), "of", t)
        assert isinstance(t.array, cu.ndarray) and t.array.device == "cpu" and t.dtype == cu.bfloat16
        assert (ct.reshape(t, (1, BLOCK)) @ ct.reshape(t, (BLOCK, 1))).dtype == cu.float32  # mma accumulates

    show.interpret[(2,)](to_cu(np.arange(8, dtype=np.float32)).astype(cu.bfloat16), 4)
    assert capsys.readouterr().out.splitlines() == [
        "[0. 2. 4. 6.]",
        "[block 0, 0, 0] sum 12.0 of [0. 2. 4. 6.]",
        "[ 8. 10. 12. 14.]",
        "[block 1, 0, 0] sum 44.0 of [ 8. 10. 12. 14.]",
    ]


def test_pdb_stops_in_an_interpreted_kernel(tmp_path):
    script = tmp_path / "debug_me.py"
    script.write_text(
        "import numpy as np, cupric as cu\n"
        "from cupric import tile as ct\n"
        "@ct.kernel\n"
        "def k(x, B: ct.Constant[int]):\n"
        "    t = ct.load(x, index=(ct.bid(0),), shape=(B,)) + 1\n"
        "    breakpoint()\n"
        "    ct.store(x, index=(ct.bid(0),), tile=t)\n"
        "k.interpret[(1,)](cu.asarray(np.arange(3, dtype=np.float32)), 3)\n"
    )
    env = dict(os.environ, PYTHONBREAKPOINT="pdb.set_trace")
    out = subprocess.run(
        [sys.executable, str(script)], input="p t\np t.dtype, t.shape\nc\n", env=env, capture_output=True, text=True
    ).stdout
    assert "debug_me.py(7)k()" in out and "tile(array([1., 2., 3.], dtype=float32))" in out
    assert "(dtype('float32'), (3,))" in out


@ct.kernel
def _scale_in_place(x, alpha, B: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(x, index=(i,), tile=ct.load(x, index=(i,), shape=(B,)) * alpha)


def test_numpy_scalars_keep_their_dtype_and_numpy_bfloat16_is_used_in_place(mode):
    x = random(8, "bfloat16")
    want = x.astype(np.float32)
    run(_scale_in_place, mode, (2,), x, np.float32(0.5), 4)  # a strong float32 scalar, in place
    assert x.dtype == BF16
    assert_close(x.astype(np.float32), (want * np.float32(0.5)).astype(BF16).astype(np.float32), "bfloat16")
    y = np.arange(8, dtype=np.int32)
    run(_scale_in_place, mode, (2,), y, np.int8(3), 4)  # int32 * int8 stays int32
    np.testing.assert_array_equal(y, np.arange(8) * 3)
    run(_scale_in_place, mode, (2,), y, cu.asarray(np.float64(1.5)), 4)  # a 0-d array is a scalar too
    np.testing.assert_array_equal(y, (np.arange(8) * 3 * 1.5).astype(np.int32))


def test_inspect_shows_every_stage():
    x, out = to_cu(random(64, "float32")), cu.zeros(64, dtype=cu.float32)
    info = scale.inspect(x, out, 2.0, 32)
    assert "load %0" in info["ir"] and "(test_kernel.py:" in info["ir"]
    assert "cupric_tile_entry" in info["host_source"]
    assert "__global__" in info["cuda_source"] and "::cu::tile::load_run<" in info["cuda_source"]  # streamed
    assert info["cuda"]["threads"] % 32 == 0
    assert info["cuda"]["param_types"][:3] == ["float*", "long long", "long long"]


def test_argument_errors():
    x = to_cu(random(64, "float32"))
    with pytest.raises(TypeError, match="launch scale with a grid"):
        scale(x, x, 1.0, 32)
    with pytest.raises(TypeError, match="argument 'factor' is str"):
        scale[(1,)](x, x, "two", 32)
    with pytest.raises(TypeError):
        scale[(1,)](x, x, 1.0)  # missing BLOCK
    ro = cu.asarray(np.zeros(64, np.float32))
    with pytest.raises(ValueError, match="grid"):
        scale[(1, 2, 3, 4)](x, ro, 1.0, 32)


def test_zero_blocks_and_empty_arrays():
    x = cu.zeros(0, dtype=cu.float32)
    scale[(0,)](x, x, 1.0, 32)  # nothing to do, nothing fails


def test_cache_hits_skip_compilation(tmp_path):
    """A new process with a warm disk cache loads the shared object without compiling, and finds
    it through the kernel index without running the frontend."""
    src = tmp_path / "k.py"
    src.write_text(
        "import numpy as np, cupric as cu\nfrom cupric import tile as ct\n"
        "@ct.kernel\ndef softmax(x, out, BLOCK: ct.Constant[int]):\n"
        "    row = ct.bid(0)\n"
        "    t = ct.load(x, index=(row, 0), shape=(1, BLOCK), padding=-ct.inf)\n"
        "    e = ct.exp(t - ct.max(t, axis=1, keepdims=True))\n"
        "    ct.store(out, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))\n"
        "def once():\n"
        "    x = cu.asarray(np.random.rand(8, 100).astype(np.float32)); o = cu.zeros((8, 100), dtype=cu.float32)\n"
        "    softmax[(8,)](x, o, 100)\n"
        "    c = next(iter(softmax.cache.values()))\n"
        "    return c.host['cache_hit'], c.host['compile_seconds'], c.host['seconds'], c.host.get('index_hit', False)\n"
        "if __name__ == '__main__':\n"
        "    print(*once())\n"
    )
    env = dict(os.environ, CUPRIC_CACHE_DIR=str(tmp_path), PYTHONPATH=str(tmp_path))
    cold = subprocess.run(
        [sys.executable, str(src)], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    warm = subprocess.run(
        [sys.executable, str(src)], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert cold[0] == "False" and float(cold[1]) > 0
    assert warm[0] == "True" and float(warm[1]) == 0.0
    assert cold[3] == "False" and warm[3] == "True"  # the second process skipped the frontend too
    assert float(warm[2]) < float(cold[2]) / 10
    assert len(list((tmp_path / "v2" / "shared_object").rglob("*.bin"))) == 1


def test_without_a_compiler_kernels_run_in_the_interpreter(tmp_path):
    """No C++ compiler: a one-time RuntimeWarning, then the interpreter (same results)."""
    code = (
        "import warnings, numpy as np, cupric as cu\n"
        "from cupric import tile as ct\n"
        "@ct.kernel\n"
        "def double(x, B: ct.Constant[int]):\n"
        "    ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(B,)) * 2)\n"
        "x = cu.asarray(np.arange(8, dtype=np.float32))\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    double[(2,)](x, 4); double[(2,)](x, 4)\n"
        "print(len(w), str(w[0].message)[:40], np.asarray(x).tolist())\n"
    )
    (tmp_path / "nocxx.py").write_text(code)
    env = dict(os.environ, CXX=str(tmp_path / "no-such-compiler"), CUPRIC_CACHE_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, str(tmp_path / "nocxx.py")], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("1 cupric.tile: no C++ compiler")
    assert out.rstrip().endswith(str([0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0]))


FACTOR = 2.0


@ct.function
def _times_factor(t):
    return t * FACTOR


def test_fingerprint_covers_globals_and_helpers():
    """The disk index is keyed by the kernel's source and what it refers to: changing a global
    constant or a helper's source changes the key; an unhashable global disables the index."""

    def kern(x, B: ct.Constant[int]):
        ct.store(x, index=(0,), tile=_times_factor(ct.load(x, index=(0,), shape=(B,))))

    g = kern.__globals__
    first = ct.kernel(kern).fingerprint()
    assert first is not None and first == ct.kernel(kern).fingerprint()
    try:
        g["FACTOR"] = 3.0
        assert ct.kernel(kern).fingerprint() != first
        g["FACTOR"] = object()
        assert ct.kernel(kern).fingerprint() is None
    finally:
        g["FACTOR"] = 2.0


def test_fingerprint_follows_the_kernels_file(tmp_path, monkeypatch):
    """A kernel's source enters its fingerprint by a hash of its file's bytes (no linecache at a new
    process' first launch): an edit of the file changes it, an identical rewrite keeps it; a
    kernel with no file (a notebook cell) is fingerprinted by its text."""
    import importlib

    path = tmp_path / "fp_kernel_mod.py"
    body = (
        "import cupric.tile as ct\n\n@ct.kernel\ndef k(x, B: ct.Constant[int]):\n"
        "    ct.store(x, index=(0,), tile=ct.load(x, index=(0,), shape=(B,)) * {})\n"
    )
    path.write_text(body.format(2))
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("fp_kernel_mod")
    first = ct.kernel(mod.k.fn).fingerprint()
    assert first is not None and first == ct.kernel(mod.k.fn).fingerprint()
    path.write_text(body.format(2))
    assert ct.kernel(mod.k.fn).fingerprint() == first
    path.write_text(body.format(3))
    assert ct.kernel(mod.k.fn).fingerprint() != first
    # a notebook cell: no file, its lines in linecache (as IPython keeps them): its text counts
    import linecache

    def cell(factor):
        name = f"<cell-{factor}>"
        text = body.format(factor)
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        namespace = {}
        exec(compile(text, name, "exec"), namespace)  # noqa: S102
        return ct.kernel(namespace["k"].fn).fingerprint()

    assert cell(2) != cell(3) and cell(2) == cell(2)
