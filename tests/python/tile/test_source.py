"""What a user sees when a kernel cannot compile or cannot be compiled here (cupric.tile._source):
the message that points into the kernel, under its public name, without cupric's own frames; and
the interpreter, with a warning that names the switch, where there is no C++ compiler."""

import os
import subprocess
import sys
import traceback

import cupric as cu
import pytest
from cupric import tile as ct


@ct.kernel
def mismatched(x, out):
    a = ct.load(x, index=(0,), shape=(16,))
    b = ct.load(x, index=(0,), shape=(17,))
    ct.store(out, index=(0,), tile=a + b)


def test_compile_errors_show_the_kernel_line_and_not_cupric_frames():
    x, out = cu.ones(64), cu.zeros(64)
    with pytest.raises(ct.CompileError) as info:
        mismatched[(1,)](x, out)
    err = info.value
    assert type(err).__module__ == "cupric.tile" and type(err).__qualname__ == "CompileError"
    text = "".join(traceback.format_exception(err))
    assert "cupric.tile.CompileError:" in text and "cannot broadcast shapes (16,) and (17,)" in text
    assert "tile=a + b" in text and __file__ in text
    frames = traceback.extract_tb(err.__traceback__)
    assert len(frames) <= 2, [f.filename for f in frames]  # the launch line (and the re-raise)
    assert "_frontend.py" not in text and "The above exception" not in text
    assert err.internal_cause is not None  # kept for debugging cupric itself
    assert float(out.sum()) == 0.0  # nothing ran


def test_inspect_raises_the_same_way():
    with pytest.raises(ct.CompileError) as info:
        mismatched.inspect(cu.ones(64), cu.zeros(64))
    assert len(traceback.extract_tb(info.value.__traceback__)) <= 2


SCRIPT = """
import warnings, numpy as np, cupric as cu
from cupric import tile as ct

@ct.kernel
def add(x, y, out, B: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(out, index=(i,), tile=ct.load(x, index=(i,), shape=(B,)) + ct.load(y, index=(i,), shape=(B,)))

x, y, out = cu.arange(64.0), cu.ones(64), cu.empty(64)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    add[(4,)](x, y, out, B=16)
    add[(4,)](x, y, out, B=16)
np.testing.assert_array_equal(np.asarray(out), np.arange(64.0) + 1)
assert len(caught) == 1, [str(w.message) for w in caught]
w = caught[0]
assert "no C++ compiler" in str(w.message) and "CUPRIC_TILE_INTERPRET=1" in str(w.message), w.message
assert w.filename == __file__, w.filename  # points at the user's launch
print("ok")
"""


def test_without_a_compiler_kernels_run_in_the_interpreter_with_one_warning(tmp_path):
    script = tmp_path / "launch.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, CXX=str(tmp_path / "no-such-compiler"), CUPRIC_CACHE_DIR=str(tmp_path / "cache"),
               CUPRIC_DEVICE="cpu")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
