"""The stand-in CUDA driver (tests/fake_cuda/fake_libcuda.c: host memory, kernels do not run), so
that machines without a GPU still exercise the CUDA paths. The `fake_dir` fixture (conftest.py)
builds it once per session; `run_with_fake_driver` runs a script in a subprocess whose library path
puts the stand-in libcuda.so.1 first."""

import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def build_fake_driver(out_dir):
    """Compiles the stand-in driver into out_dir; None where there is no C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out_dir / "libcuda.so.1"),
                    str(ROOT / "tests/fake_cuda/fake_libcuda.c")], check=True)
    return out_dir


def run_with_fake_driver(fake_dir, code, env=None, drop=(), script=None):
    """Runs `code` (then prints 'ok') against the stand-in driver; returns its stdout. The FAKE_*
    variables of this process and those named in `drop` are left out of the child's environment;
    `script`: a file to run the code from (kernels that need their source file)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_") and k not in drop}
    library_path = f"{fake_dir}:{os.environ.get('LD_LIBRARY_PATH', '')}"
    full.update(env or {}, PYTHONFAULTHANDLER="1", LD_LIBRARY_PATH=library_path)
    code += "\nprint('ok')\n"
    if script is not None:
        script.write_text(code)
        argv = [sys.executable, str(script)]
    else:
        argv = [sys.executable, "-c", code]
    out = subprocess.run(argv, capture_output=True, text=True, env=full, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout + out.stderr
    return out.stdout
