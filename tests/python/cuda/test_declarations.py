"""Our own CUDA declarations match the real headers (where a CUDA toolkit exists to compare)."""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
CUDA_INCLUDE = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")


@pytest.mark.skipif(not os.path.exists(os.path.join(CUDA_INCLUDE, "cuda.h")), reason="no CUDA headers")
@pytest.mark.skipif(shutil.which("c++") is None, reason="no C++ compiler")
def test_declarations_match_cuda_headers():
    cmd = ["c++", "-std=c++20", "-fsyntax-only", f"-I{ROOT / 'include'}", f"-I{CUDA_INCLUDE}",
           str(ROOT / "tests/cpp/cuda_headers_check.cpp")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
