"""The CUDA backend's kernel renderers (src/backend/cuda/render.cpp): every family (ufunc maps,
casts, arange, random, reductions, arg-reductions, scans, gather/scatter) for every dtype renders
and compiles with NVRTC for sm_90a. No GPU is needed: the whole sweep goes through NVRTC's front
end in a few large batches, and one source per family is compiled all the way to a cubin."""

import os
import shutil
import subprocess
import sys

import cupric as cu
import pytest
from cupric import _cupric as _c

pytestmark = pytest.mark.nvrtc

SOURCES = dict(_c._cuda_kernel_sources(False))
SHORT = {"bool": "b1", "int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4",
         "int64": "i8", "uint64": "u8", "float16": "f2", "bfloat16": "bf2", "float32": "f4", "float64": "f8",
         "complex64": "c8", "complex128": "c16", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}
DTYPES = list(SHORT)
CODE_SHORT = dict(zip("?bBhHiIlLeEfdFD45", [SHORT[n] for n in DTYPES], strict=True))  # loop type codes (E: bfloat16)


def test_every_ufunc_loop_and_dtype_pair_is_rendered():
    ufuncs = {getattr(cu, n) for n in dir(cu) if isinstance(getattr(cu, n), cu.ufunc)}
    for uf in ufuncs:
        for sig in uf.types:  # a loop's kernel is named by its first input's dtype
            assert f"{uf.name} {CODE_SHORT[sig[0]]}" in SOURCES, (uf.name, sig)
    for a in DTYPES:
        for b in DTYPES:
            assert f"cast_{SHORT[a]}_{SHORT[b]}" in SOURCES
    for t in ("i1", "u8", "i8", "f4", "f8"):
        assert f"random {t}" in SOURCES
    for fam in ("reduce sum", "reduce pass 2 sum", "reduce min", "reduce any", "argmin", "argmax", "cumsum", "cumprod",
                "arange"):
        assert any(label.startswith(fam) for label in SOURCES), fam
    for isz in (1, 2, 4, 8, 16):
        assert f"gather {isz}" in SOURCES
    for t in DTYPES:
        assert f"sort {SHORT[t]}" in SOURCES


def test_sources_define_the_kernels_the_backend_launches():
    # the names src/backend/cuda/*.cpp ask the loaded module for
    expect = {"add f4": ["add_vec", "add_one", "add_nd"], "cast_f4_i1": ["cast_f4_i1_vec", "cast_f4_i1_t2"],
              "arange i8": ["arange_i8"],
              "random f8": ["random_f8"], "random u1": ["random_u1"],
              "reduce sum f4": ["reduce_sum_f4_f4_rows", "reduce_sum_f4_f4_cols", "reduce_sum_f4_f4_colsv"],
              "reduce pass 2 sum f4": ["reduce_sum_f8_f4_partials_rows"],
              "reduce pass 2 max f2": ["reduce_max_f4_f2_partials_rows"],
              "reduce any f4": ["reduce_any_f4_b1_rows", "reduce_any_f4_b1_cols"],
              "cumsum f2": ["cumsum_f2_f2"], "cumprod i4": ["cumprod_i4_i4"], "argmax f8": ["argmax_f8"],
              "argmin c8": ["argmin_c8"], "gather 8": ["gather_8", "scatter_8"],
              "sort f4": ["sort_hist_f4", "sort_starts_f4", "sort_pass_f4", "sort_pass_idx_f4", "sort_pass_wide_f4",
                          "sort_pass_idx_wide_f4", "sort_sweep_f4", "sort_sweep_idx_f4", "sort_sweep_wide_f4",
                          "sort_sweep_idx_wide_f4", "unique_f4", "unique_tiles_f4", "search_f4"],
              "sort c8": ["sort_ckeys_c8", "sort_gather_c8", "sort_pass_idx_c8", "sort_sweep_idx_c8", "search_c8"]}
    for label, names in expect.items():
        for name in names:
            assert f" {name}(" in SOURCES[label], (label, name)


def test_map_sources_have_three_paths():
    src = SOURCES["add f4"]
    for kernel in ("add_vec(", "add_one(", "add_nd("):
        assert kernel in src
    assert "map_vec<Map, 4>" in src and "MapArray<S0, C0, 4, 0>(p0)" in src  # 16-byte loads of float32
    assert "C1 s1" in src and "MapValue<C1>(s1)" in src  # the scalar operand is passed by value


@pytest.mark.parametrize("batch", range(len(_c._cuda_kernel_batches(False, 400))))
def test_every_kernel_passes_the_nvrtc_front_end(batch):
    source = _c._cuda_kernel_batches(False, 400)[batch]
    _c._cuda_compile_kernel_source(source, "sm_90a", use_cache=False, syntax_only=True)


@pytest.mark.parametrize("label", ["add f4", "multiply c16", "nextafter f2", "arctan2 f8", "left_shift i1",
                                   "cast_f8_f2", "cast_c8_u8", "arange i8", "random f4", "random u1",
                                   "reduce sum f4", "reduce pass 2 sum f4", "reduce max f2", "reduce sum c16",
                                   "reduce min i1", "reduce max bf2", "reduce any b1", "argmax c8",
                                   "cumsum f2", "cumprod i4", "gather 16", "sort f4", "sort i8", "sort bf2",
                                   "sort b1", "sort c16"])
def test_representative_kernels_compile_to_cubin(label):
    # through the session's compile cache (empty at the start, tests/python/conftest.py): what it holds
    # NVRTC compiled in this run, and the backend's tests and cu.inspect find these cubins there
    assert _c._cuda_compile_kernel_source(SOURCES[label], "sm_90a") > 0


def test_a_bad_source_is_a_compile_error_with_the_log():
    with pytest.raises(cu.cuda.CompileError, match="nonexistent"):
        _c._cuda_compile_kernel_source(SOURCES["add f4"] + "\n__device__ int f() { return cu::nonexistent(); }",
                                       "sm_90a", use_cache=False, syntax_only=True)


FAMILY = {"reduce": "reduce", "argmax": "arg_reduce", "argmin": "arg_reduce", "cumsum": "scan", "cumprod": "scan",
          "gather": "gather", "random": "random", "arange": "arange", "sort": "sort_pass"}


def test_each_source_includes_only_its_family_header():
    """A rendered program is its family's header, types, expressions and entry points: small, so
    that a first call compiles quickly (no other family's code, no reduction identities in a map)."""
    for label, src in SOURCES.items():
        includes = [line for line in src.splitlines() if line.startswith("#include")]
        assert includes == [f'#include "cupric/kernels/{FAMILY.get(label.split()[0], "map")}.cuh"'], (label, includes)
        assert "__syncthreads" not in src and "for (" not in src, label  # no kernel body in a string


@pytest.mark.parametrize("header", sorted(os.listdir(os.path.join(_c._cuda_device_include(), "cupric", "kernels"))))
def test_each_family_header_compiles_alone(header):
    _c._cuda_compile_kernel_source(f'#include "cupric/kernels/{header}"\n', "sm_90a", use_cache=False, syntax_only=True)


def test_cache_keys_cover_the_device_headers(tmp_path):
    """NVRTC's cache key covers the source text; the kernel bodies live in the headers, so a changed
    header must give another key (else the cache could serve a kernel built from the old one)."""
    include = tmp_path / "device_include"
    shutil.copytree(_c._cuda_device_include(), include)
    script = "import cupric; print(cupric._cupric._cuda_kernel_cache_key(cupric._cupric._cuda_kernel_sources()[0][1]))"

    def key():
        env = dict(os.environ, CUPRIC_DEVICE_INCLUDE=str(include))
        return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    first = key()
    assert key() == first and len(first) == 64
    with open(include / "cupric" / "kernels" / "map.cuh", "a") as f:
        f.write("// edited\n")
    assert key() != first


def test_device_headers_are_found():
    import os

    assert os.path.exists(os.path.join(_c._cuda_device_include(), "cupric", "convert.h"))


def test_the_vector_map_reads_each_operand_once_per_thread():
    """The shape of `x + y` on float32 (docs/performance.md, "Eager elementwise on the H200"): one
    16-byte load per input and one 16-byte store per thread, 128-thread blocks, no loop unrolled
    into more loads (a prefetch or an unroll raised the registers past what 2048 threads per
    multiprocessor allow) and no 64-bit division (a call under NVRTC's -Ofc=min)."""
    import re

    src = dict(_c._cuda_kernel_sources(True))["add f4 arrays v"]
    ptx = cu.cuda.Program(src, "k.cu", arch="sm_90a", std="c++20",
                          include_paths=[_c._cuda_device_include()]).compile("ptx", cache=False).code.decode()
    assert len(re.findall(r"ld\.global(?:\.nc)?\.v4\.f32", ptx)) == 2
    assert len(re.findall(r"st\.global\.v4\.f32", ptx)) == 1
    assert "div." not in ptx and ".maxntid 128, 1, 1" in ptx


@pytest.mark.parametrize("shape", ["128,32,4"])
def test_the_sweep_pass_compiles_in_other_tile_shapes(shape):
    """CUPRIC_SORT_SWEEP (the tuning sweep of benchmarks/sort.py) renders the pass for its shape;
    a shape that cannot be one is an error naming it."""
    script = ("from cupric import _cupric as c; src = dict(c._cuda_kernel_sources(False))['sort f4']; "
              f"assert 'sort_sweep<T, U, u32, false, {shape.replace(',', ', ').rsplit(', ', 1)[0]}>' in src, src; "
              "print(c._cuda_compile_kernel_source(src, 'sm_90a', use_cache=False))")
    run = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, CUPRIC_SORT_SWEEP=shape),
                         capture_output=True, text=True)
    assert run.returncode == 0 and int(run.stdout) > 0, run.stderr[-2000:]
    bad = subprocess.run([sys.executable, "-c", "from cupric import _cupric as c; c._cuda_kernel_sources(False)"],
                         env=dict(os.environ, CUPRIC_SORT_SWEEP="384,32,2"), capture_output=True, text=True)
    assert "CUPRIC_SORT_SWEEP must be 'threads,items,blocks'" in bad.stderr and "got '384,32,2'" in bad.stderr
