"""The ufunc table's expressions compile under NVRTC (sm_90a, C++20) for every dtype of every row,
with only cupric's own device headers (cuda_prelude.h stands in for the C++ standard library).
This is what lets the CUDA backend and the tile language render the same rows the CPU runs."""

import re
from pathlib import Path

import cupric as cu
import pytest

ROOT = Path(__file__).resolve().parents[3]
CTYPES = {
    "?": "bool", "b": "std::int8_t", "B": "std::uint8_t", "h": "std::int16_t", "H": "std::uint16_t",
    "i": "std::int32_t", "I": "std::uint32_t", "l": "std::int64_t", "L": "std::uint64_t",
    "e": "float", "E": "float", "f": "float", "d": "double", "4": "float", "5": "float",
    "F": "std::complex<float>", "D": "std::complex<double>",
}


def table_rows():
    text = (ROOT / "include" / "cupric" / "ufunc_table.def").read_text()
    sets = dict(re.findall(r'#define (\w+)\s+"([^"]*)"', text))
    rows = []
    for m in re.finditer(r'^CUPRIC_UFUNC\((\w+),\s*(\d),\s*([^,]+),\s*\w+,\s*\w+,\s*(.*),\s*"[^"]*"\)\s*$', text, re.M):
        name, nin, types, expr = m.groups()
        types = types.strip()
        rows.append((name, int(nin), sets.get(types, types.strip('"')), expr))
    return rows


def test_table_is_parsed_whole():
    parsed = {r[0] for r in table_rows()}
    registered = {uf.name for uf in cu._cupric._ufunc_table.values()}
    assert parsed == registered


@pytest.mark.nvrtc
def test_every_row_and_dtype_compiles_with_nvrtc():
    try:
        cu.cuda.versions()
        program = cu.cuda.Program
    except Exception as err:  # pragma: no cover
        pytest.skip(f"cupric.cuda unavailable: {err}")
    lines = ['#include "cupric/scalar_math.h"', '#include "cupric/convert.h"', '#include "cupric/philox.h"']
    count = 0
    for name, _nin, types, expr in table_rows():
        lines.append(f"struct op_{name} {{ template <class A, class B, class C>"
                     f" __device__ static auto apply(A a, B b, C c) {{ return {expr}; }} }};")
        for code in sorted(set(types)):
            t = CTYPES[code]
            lines.append(f'extern "C" __global__ void k_{name}_{ord(code)}(const {t}* a, double* o) {{'
                         f" auto r = op_{name}::apply(a[threadIdx.x], a[threadIdx.x], a[threadIdx.x]);"
                         f" o[threadIdx.x] = cu::convert<double>(r); }}")
            count += 1
    try:
        obj = program("\n".join(lines), "ufunc_table.cu", arch="sm_90a", std="c++20",
                      include_paths=[str(ROOT / "device_include")]).compile("cubin")
    except cu.cuda.CompileError as err:
        pytest.fail(f"the ufunc table does not compile under NVRTC:\n{err.log[-4000:]}")
    assert count > 700
    assert obj is not None


@pytest.mark.nvrtc
def test_float8_storage_types_compile_with_nvrtc():
    """float8.h's software conversions (the same code the host runs) under NVRTC, both ways, from
    float and from double, and through cu::convert into every other kind of type."""
    try:
        cu.cuda.versions()
        program = cu.cuda.Program
    except Exception as err:  # pragma: no cover
        pytest.skip(f"cupric.cuda unavailable: {err}")
    lines = ['#include "cupric/scalar_math.h"', '#include "cupric/convert.h"']
    for t in ("float8_e4m3fn", "float8_e5m2"):
        lines.append(f'extern "C" __global__ void k_{t}(const float* f, const double* d, cupric::{t}* o, float* r,'
                     f" long long* i, bool* b) {{ o[0] = cupric::{t}(f[0]); o[1] = cu::convert<cupric::{t}>(d[0]);"
                     f" r[0] = o[0]; i[0] = cu::convert<long long>(o[1]); b[0] = cu::convert<bool>(o[0]);"
                     f" o[2] = cu::nextafter(o[0], o[1]); o[3] = cu::convert<cupric::{t}>(i[1]); }}")
    try:
        program("\n".join(lines), "float8.cu", arch="sm_90a", std="c++20",
                include_paths=[str(ROOT / "device_include")]).compile("cubin")
    except cu.cuda.CompileError as err:
        pytest.fail(f"float8.h does not compile under NVRTC:\n{err.log[-4000:]}")
