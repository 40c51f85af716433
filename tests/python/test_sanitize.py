"""python -m cupric.sanitize: the report parser (memcheck's and racecheck's text), kernel names
mapped back to cupric's ops and tile kernels, the argument rules, the message when
compute-sanitizer is missing, the child that names the tile kernels a script compiled; on a GPU,
memcheck finds a deliberate out-of-bounds store in a test kernel."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from cupric import sanitize

MEMCHECK = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at oob_store+0x90
=========     by thread (63,0,0) in block (0,0,0)
=========     Address 0x7f1c2e000100 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f1c2e000000 of size 255 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2c3f2f] in libcuda.so.1
=========
========= Invalid __global__ read of size 16 bytes
=========     at void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(T1::Params)+0x1a0
=========     by thread (1,0,0) in block (3,0,0)
=========
========= Invalid __global__ read of size 4 bytes
=========     at softmax_kernel+0x40 in /home/u/model.py:12
=========
========= Invalid __global__ write of size 8 bytes
=========     at logical_and_nd+0x10
=========
========= ERROR SUMMARY: 4 errors
"""

RACECHECK = """\
========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at reduce_sum_f4_f4_rows+0x3a0
=========     and Read access at reduce_sum_f4_f4_rows+0x3f0 [248 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""


def test_memcheck_report_is_parsed_into_findings():
    findings, count = sanitize.parse_report(MEMCHECK)
    assert count == 4 and len(findings) == 4
    first = findings[0]
    assert first["message"] == "Invalid __global__ write of size 4 bytes" and first["kernel"] == "oob_store"
    assert first["details"][0] == "by thread (63,0,0) in block (0,0,0)"
    assert any("1 bytes after the nearest allocation" in d for d in first["details"])
    assert not any("Host Frame" in d for d in first["details"])
    assert [f["kernel"] for f in findings[1:]] == [
        "cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>", "softmax_kernel", "logical_and_nd"]


def test_racecheck_report_counts_errors():
    findings, count = sanitize.parse_report(RACECHECK)
    assert count == 1 and findings[0]["kernel"] == "reduce_sum_f4_f4_rows"
    assert findings[0]["message"].startswith("Error: Race reported")


def test_a_clean_report_has_no_findings():
    assert sanitize.parse_report("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n") == ([], 0)


@pytest.mark.parametrize("name, expected", [
    ("logical_and_nd", "cupric op 'logical_and' (CUDA backend map, kernel logical_and_nd)"),
    ("add_vec", "cupric op 'add' (CUDA backend map, kernel add_vec)"),
    ("reduce_sum_f4_f4_rows", "cupric reduction 'sum' (CUDA backend, kernel reduce_sum_f4_f4_rows)"),
    ("gather_8", "cupric gather (indexing) (CUDA backend, kernel gather_8)"),
    ("argmax_f4", "cupric op 'argmax' (CUDA backend, kernel argmax_f4)"),
    ("_where_nd", "cupric op 'where' (CUDA backend, kernel _where_nd)"),
    ("cutlass::Kernel2<s1688gemm>", "a cuBLAS kernel (cutlass::Kernel2<s1688gemm>)"),
    ("regular_fft_factor", "a cuFFT kernel (regular_fft_factor)"),
    ("softmax_kernel", "tile kernel softmax_kernel (/home/u/model.py:3)"),
    ("mystery", "kernel mystery"),
    (None, "unknown kernel"),
])
def test_kernel_names_map_back_to_cupric(name, expected):
    tiles = {"softmax_kernel": "tile kernel softmax_kernel (/home/u/model.py:3)"}
    assert sanitize.describe_kernel(name, tiles) == expected


def test_formatted_findings_name_the_op():
    findings, count = sanitize.parse_report(MEMCHECK)
    text = sanitize.format_findings("memcheck", findings, count, {}, "/tmp/r.log")
    assert text.splitlines()[0] == "cupric.sanitize: memcheck found 4 errors (full report: /tmp/r.log)"
    assert "in cupric op 'logical_and' (CUDA backend map, kernel logical_and_nd)" in text


def test_arguments():
    assert sanitize.parse_args(["s.py", "--tool", "x"]) == ("memcheck", None, False, ["s.py", "--tool", "x"])
    assert sanitize.parse_args(["--tool", "racecheck", "--keep-pool", "-m", "pytest", "-q"]) == (
        "racecheck", None, True, ["-m", "pytest", "-q"])
    assert sanitize.parse_args(["--tool=initcheck", "--log", "r.log", "--", "-s.py"])[::3] == ("initcheck", ["-s.py"])
    with pytest.raises(SystemExit, match="--tool must be one of memcheck, racecheck, initcheck, synccheck, got 'leak'"):
        sanitize.parse_args(["--tool", "leak", "s.py"])
    with pytest.raises(SystemExit, match="name a script"):
        sanitize.parse_args(["--tool", "memcheck"])
    with pytest.raises(SystemExit, match="unknown option '--fast'"):
        sanitize.parse_args(["--fast", "s.py"])


def test_the_command_makes_the_pool_visible_and_runs_the_child():
    cmd = sanitize.sanitizer_command("/x/compute-sanitizer", "synccheck", "/tmp/r.log", ["s.py", "1"])
    assert cmd[:3] == ["/x/compute-sanitizer", "--tool", "synccheck"]
    assert cmd[cmd.index("--log-file") + 1] == "/tmp/r.log" and "--report-api-errors" in cmd
    assert cmd[-7:] == [sys.executable, "-m", "cupric.sanitize", "--child", "/tmp/r.log.kernels.json", "s.py", "1"]
    assert sanitize.CHILD_ENV == {"CUPRIC_POOL": "direct"}


def test_a_missing_tool_says_what_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sanitize, "_candidates", lambda: iter([None, str(tmp_path / "nothing")]))
    assert sanitize.main(["script.py"]) == 2
    err = capsys.readouterr().err
    assert "compute-sanitizer not found: pip install nvidia-cuda-sanitizer-api" in err and "CUDA_HOME" in err


def test_the_wheel_layouts_are_searched(monkeypatch, tmp_path):
    exe = tmp_path / "nvidia" / "cu13" / "bin" / "compute-sanitizer"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("CUPRIC_COMPUTE_SANITIZER", raising=False)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    found = sanitize.find_compute_sanitizer()
    assert found == str(exe) or found.startswith("/usr/local/cuda")


def test_the_child_runs_the_script_and_names_its_tile_kernels(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(textwrap.dedent("""\
        import sys
        import cupric as cu
        from cupric import tile as ct

        @ct.kernel
        def double(x, out, B: ct.Constant[int]):
            ct.store(out, index=(0,), tile=ct.load(x, index=(0,), shape=(B,)) * 2)

        out = cu.zeros(4)
        double[(1,)](cu.arange(4.0), out, 4)
        print("args", sys.argv[1:], out.tolist())
        """))
    map_file = tmp_path / "kernels.json"
    env = {**os.environ, "CUPRIC_DEVICE": "cpu"}
    out = subprocess.run([sys.executable, "-m", "cupric.sanitize", "--child", str(map_file), str(script), "a", "b"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "args ['a', 'b'] [0.0, 2.0, 4.0, 6.0]" in out.stdout
    assert json.loads(map_file.read_text()) == {"double": f"tile kernel double ({script}:5)"}


FAKE_SANITIZER = """#!{python}
import subprocess, sys
args = sys.argv[1:]
log = args[args.index("--log-file") + 1]
status = subprocess.call(args[args.index("--target-processes") + 2:])
with open(log, "w") as f:
    f.write("========= COMPUTE-SANITIZER\\n========= Invalid __global__ read of size 4 bytes\\n"
            "=========     at double+0x40\\n=========     by thread (5,0,0) in block (0,0,0)\\n"
            "========= ERROR SUMMARY: 1 error\\n")
sys.exit(status)
"""


def test_the_whole_run_through_a_stand_in_sanitizer(tmp_path):
    """A stand-in for compute-sanitizer (runs the child, writes a report naming the script's tile
    kernel): the script runs with the pool made visible, and the finding names the tile kernel."""
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(FAKE_SANITIZER.format(python=sys.executable))
    fake.chmod(0o755)
    script = tmp_path / "model.py"
    script.write_text(textwrap.dedent("""\
        import os
        import cupric as cu
        from cupric import tile as ct

        @ct.kernel
        def double(x, out, B: ct.Constant[int]):
            ct.store(out, index=(0,), tile=ct.load(x, index=(0,), shape=(B,)) * 2)

        double[(1,)](cu.arange(4.0), cu.zeros(4), 4)
        print("pool", os.environ.get("CUPRIC_POOL"))
        """))
    env = {**os.environ, "CUPRIC_COMPUTE_SANITIZER": str(fake), "CUPRIC_DEVICE": "cpu"}
    out = subprocess.run([sys.executable, "-m", "cupric.sanitize", "--log", str(tmp_path / "r.log"), str(script)],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stderr
    assert "pool direct" in out.stdout
    assert "memcheck found 1 error (full report: " in out.stdout
    assert f"in tile kernel double ({script}:5)" in out.stdout


OOB_SCRIPT = '''
import cupric as cu

SOURCE = r"""
extern "C" __global__ void oob_store(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = 1.0f;  // one past the end: the deliberate bug
}
"""
kernel = cu.cuda.Program(SOURCE).compile("cubin").get_kernel("oob_store")
y = cu.zeros(100, dtype=cu.float32, device="cuda:0")
s = cu.cuda.Stream()
cu.cuda.launch(s, cu.cuda.LaunchConfig(1, 128), kernel, y, 100)
try:
    s.synchronize()
except Exception as e:
    print("launch failed:", type(e).__name__)
'''


@pytest.mark.gpu
def test_memcheck_finds_a_deliberate_out_of_bounds_store(tmp_path):
    if sanitize.find_compute_sanitizer() is None:
        pytest.skip(sanitize.MISSING)
    script = tmp_path / "oob.py"
    script.write_text(OOB_SCRIPT)
    out = subprocess.run([sys.executable, "-m", "cupric.sanitize", "--log", str(tmp_path / "r.log"), str(script)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "memcheck found 1 error" in out.stdout, out.stdout
    assert "Invalid __global__ write of size 4 bytes" in out.stdout and "in kernel oob_store" in out.stdout
    assert "after the nearest allocation" in out.stdout  # the pool is visible: y's own 400 bytes


def test_every_cuda_backend_kernel_maps_to_an_op():
    """Every entry of the CUDA backend's kernel catalogue (each family for each dtype) is named as
    a cupric op or family, none left as a bare kernel name."""
    import re

    import cupric as cu

    names = set()
    for _, source in cu._cupric._cuda_kernel_sources(False):
        names |= set(re.findall(r"__global__ void (?:__launch_bounds__\([^)]*\) )?(\w+)\(", source))
    assert len(names) > 1000
    unnamed = sorted(n for n in names if sanitize.describe_kernel(n).startswith("kernel "))
    assert unnamed == [], unnamed[:20]
