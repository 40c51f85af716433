"""The CPU backend's OpenBLAS (src/backend/cpu/blas.cpp): found in the scipy-openblas64 wheel at
first use (else NumPy's copy of the same build), CUPRIC_BLAS_LIBRARY overrides it, a missing one
is an error naming the pip package, and OpenBLAS's thread count follows cu.set_num_threads."""

import os
import subprocess
import sys

import cupric as cu
import pytest


def run(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_found_in_the_wheel_and_reported():
    info = cu.show_config("dicts")["blas"]
    assert "scipy_openblas64" in info["library"] and "OpenBLAS" in info["library"]


def test_threads_follow_the_pool():
    before = cu.get_num_threads()
    try:
        for n in (1, 2):
            cu.set_num_threads(n)
            cu.ones((4, 4)) @ cu.ones((4, 4))  # OpenBLAS follows at the next call
            assert cu.show_config("dicts")["blas"]["threads"] == n
    finally:
        cu.set_num_threads(before)


def test_missing_library_names_the_pip_package():
    # the wheel is searched for on sys.path when the first product runs: hide it
    code = ("import numpy, sys, cupric as cu; sys.path[:] = [p for p in sys.path if 'site-packages' not in p]\n"
            "try:\n    cu.ones((2, 2)) @ cu.ones((2, 2))\nexcept RuntimeError as e:\n    print('ERR', e)\n")
    r = run(code, CUPRIC_BLAS_LIBRARY="/nonexistent/libopenblas.so", LD_LIBRARY_PATH="")
    assert "ERR" in r.stdout and "pip install scipy-openblas64" in r.stdout, r.stdout + r.stderr


def test_cupric_blas_library_overrides_the_search():
    import scipy_openblas64

    path = os.path.join(scipy_openblas64.get_lib_dir(), scipy_openblas64.get_library(True))
    code = ("import numpy, sys, cupric as cu; sys.path[:] = [p for p in sys.path if 'site-packages' not in p]\n"
            "print((cu.ones((2, 3)) @ cu.ones((3, 2))).tolist())")
    r = run(code, CUPRIC_BLAS_LIBRARY=path)
    assert r.stdout.strip() == "[[3.0, 3.0], [3.0, 3.0]]", r.stdout + r.stderr


def test_numpy_copy_of_the_same_build_serves_without_the_wheel(tmp_path):
    import numpy as np

    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    if not os.path.isdir(libs) or not any(n.startswith("libscipy_openblas64_") for n in os.listdir(libs)):
        pytest.skip("this NumPy carries no scipy-openblas64 build (built against another BLAS)")
    os.symlink(libs, tmp_path / "numpy.libs")
    code = (f"import numpy, sys, cupric as cu; sys.path[:] = [{str(tmp_path)!r}]\n"
            "print((cu.ones((2, 3)) @ cu.ones((3, 2))).tolist(), cu.show_config('dicts')['blas']['library'])")
    r = run(code)
    assert r.stdout.startswith("[[3.0, 3.0], [3.0, 3.0]]") and "numpy.libs" in r.stdout, r.stdout + r.stderr
