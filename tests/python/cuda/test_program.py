"""cupric.cuda.Program / ObjectCode / Linker without a GPU: NVRTC output for several archs,
options, name expressions, compile errors with their log, LTO-IR and nvJitLink."""

import struct
import subprocess
import sys

import cupric as cu
import pytest
from cuda_helpers import SAXPY, needs_nvjitlink

pytestmark = pytest.mark.nvrtc


def cubin_sm(code):
    """The SM number a cubin was built for (ELF e_flags bits 8-15)."""
    assert code[:4] == b"\x7fELF"
    return (struct.unpack_from("<I", code, 48)[0] >> 8) & 0xFF


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a"])
def test_ptx_and_cubin_for_each_arch(arch, cache_dir):
    prog = cu.cuda.Program(SAXPY, arch=arch)
    ptx = prog.compile("ptx")
    assert ptx.kind == "ptx"
    text = ptx.code.decode()
    assert f".target {arch}" in text
    assert ".visible .entry saxpy(" in text
    assert text.count(".param .") == 4  # the declarations (ld.param loads them)
    cubin = prog.compile("cubin")
    assert cubin.kind == "cubin"
    assert cubin_sm(cubin.code) == int(arch[3:5])
    assert prog.arch == arch


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_one_compile_gives_cubin_and_ptx(arch, cache_dir):
    """with_ptx keeps the PTX of the cubin's NVRTC run: the same text a PTX compile gives, from one
    compile, which also serves later plain cubins; a plain cubin's entry cannot serve with_ptx."""
    def compiles():
        return cu.cuda.compile_cache.stats()["misses"]

    before = compiles()
    both = cu.cuda.Program(SAXPY, arch=arch).compile("cubin", with_ptx=True)
    assert compiles() == before + 1
    assert both.kind == "cubin" and cubin_sm(both.code) == int(arch[3:5])
    assert both.ptx == cu.cuda.Program(SAXPY, arch=arch).compile("ptx").code.decode()
    assert f".target {arch}" in both.ptx and ".visible .entry saxpy(" in both.ptx
    before = compiles()
    plain = cu.cuda.Program(SAXPY, arch=arch).compile("cubin")
    again = cu.cuda.Program(SAXPY, arch=arch).compile("cubin", with_ptx=True)
    assert compiles() == before
    assert plain.code == both.code and plain.ptx == "" and again.ptx == both.ptx
    other = cu.cuda.Program(SAXPY + "\n// another source", arch=arch)
    other.compile("cubin")
    before = compiles()
    assert other.compile("cubin", with_ptx=True).ptx.count(".visible .entry saxpy(") == 1
    assert compiles() == before + 1


def test_arch_spellings_and_arguments():
    for spelling in ("sm_90a", "90a", "compute_90a"):
        prog = cu.cuda.Program(SAXPY, arch=spelling)
        assert prog.arch == "sm_90a"
        assert prog.nvrtc_arguments("ptx")[0] == "-arch=compute_90a"
        assert prog.nvrtc_arguments("cubin")[0] == "-arch=sm_90a"
    prog = cu.cuda.Program(SAXPY, arch="sm_90", std="c++20", defines={"A": 1, "B": None}, include_paths=["/inc"],
                           lineinfo=True, device_debug=True, fast_math=True, extra=["-maxrregcount=32"])
    args = prog.nvrtc_arguments("ltoir")
    for expected in ("-std=c++20", "-DA=1", "-DB", "-I/inc", "-lineinfo", "-G", "--use_fast_math", "-rdc=true",
                     "-dlto", "-maxrregcount=32"):
        assert expected in args


@pytest.mark.parametrize("arch", ["sm_9", "sm_90b", "gfx90a", "", "sm_1234"])
def test_bad_arch_is_rejected(arch):
    if arch == "":
        return  # empty means "the current device"
    with pytest.raises(ValueError, match="invalid CUDA arch"):
        cu.cuda.Program(SAXPY, arch=arch)


def test_compile_error_carries_the_log(cache_dir):
    src = 'extern "C" __global__ void broken(float* x) {\n  x[0] = undefined_name;\n}\n'
    stores_before = cu.cuda.compile_cache.stats()["stores"]
    with pytest.raises(cu.cuda.CompileError) as info:
        cu.cuda.Program(src, "broken.cu", arch="sm_90").compile("cubin")
    e = info.value
    assert "undefined_name" in e.log and "broken.cu(2)" in e.log
    assert "undefined_name" in str(e) and "sm_90" in str(e)
    assert e.name == "NVRTC_ERROR_COMPILATION" and e.code == 6
    assert isinstance(e, cu.cuda.CUDAError)
    assert cu.cuda.compile_cache.stats()["stores"] == stores_before  # failures are not cached


def test_invalid_option_raises(cache_dir):
    with pytest.raises(cu.cuda.CompileError):
        cu.cuda.Program(SAXPY, arch="sm_90", extra=["--no-such-option"]).compile("ptx")


def test_defines_and_include_paths(tmp_path, cache_dir):
    (tmp_path / "value.h").write_text("#define VALUE_FROM_HEADER 41\n")
    src = '#include "value.h"\n#if WIDTH != 8\n#error WIDTH\n#endif\n' \
          'extern "C" __global__ void k(int* x) { x[0] = VALUE_FROM_HEADER + WIDTH; }\n'
    ptx = cu.cuda.Program(src, arch="sm_80", defines=["WIDTH=8"], include_paths=[str(tmp_path)]).compile("ptx")
    assert "49" in ptx.code.decode()
    with pytest.raises(cu.cuda.CompileError, match="WIDTH"):
        cu.cuda.Program(src, arch="sm_80", defines={"WIDTH": 4}, include_paths=[str(tmp_path)]).compile("ptx")
    with pytest.raises(cu.cuda.CompileError, match="value.h"):
        cu.cuda.Program(src, arch="sm_80", defines={"WIDTH": 8}).compile("ptx")


def test_lineinfo_fast_math_and_debug_change_the_output(cache_dir):
    src = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = __expf(x[threadIdx.x]) / x[1] + sinf(x[2]); }'
    plain = cu.cuda.Program(src, arch="sm_90").compile("ptx").code.decode()
    lines = cu.cuda.Program(src, arch="sm_90", lineinfo=True).compile("ptx").code.decode()
    fast = cu.cuda.Program(src, arch="sm_90", fast_math=True).compile("ptx").code.decode()
    assert "\t.loc\t" not in plain and "\t.loc\t" in lines
    assert "div.rn.f32" in plain and "div.rn.f32" not in fast
    assert "sin.approx" in fast and "sin.approx" not in plain
    # -G in a process of its own: after one NVRTC compile with -G, NVRTC 13.0 allocates the registers
    # of later compiles in that process differently (the persistent tile matmul then spills 212 bytes:
    # test_tma's spill checks failed on the test worker that ran this first; docs/tile.md)
    code = (
        "import cupric as cu\n"
        f"src = {src!r}\n"
        'print(cu.cuda.Program(src, arch="sm_90", device_debug=True).compile("ptx").code.decode())\n'
    )
    debug = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert ".debug" in debug or "debug" in debug.split(".target")[1].splitlines()[0]


def test_cxx_standard_option(cache_dir):
    src = "template <class T> concept Small = sizeof(T) <= 4;\n" \
          'extern "C" __global__ void k(int* x) { static_assert(Small<int>); x[0] = 1; }'
    cu.cuda.Program(src, arch="sm_90", std="c++20").compile("ptx")
    with pytest.raises(cu.cuda.CompileError):
        cu.cuda.Program(src, arch="sm_90", std="c++17").compile("ptx")


def test_name_expressions_for_templates(cache_dir):
    src = "template <typename T> __global__ void fill(T* x, T v, int n) {\n" \
          "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }\n"
    names = ["fill<float>", "fill<double>", "fill<int>"]
    obj = cu.cuda.Program(src, arch="sm_90").compile("ptx", name_expressions=names)
    lowered = obj.lowered_names
    assert set(lowered) == set(names)
    assert len(set(lowered.values())) == 3
    text = obj.code.decode()
    for mangled in lowered.values():
        assert mangled.startswith("_Z") and f".entry {mangled}(" in text
    # The lowered names come back from the cache too.
    hits = cu.cuda.compile_cache.stats()["memory_hits"]
    again = cu.cuda.Program(src, arch="sm_90").compile("ptx", name_expressions=names)
    assert again.lowered_names == lowered and cu.cuda.compile_cache.stats()["memory_hits"] == hits + 1


def test_ltoir_output(cache_dir):
    lto = cu.cuda.Program(SAXPY, arch="sm_90").compile("ltoir")
    assert lto.kind == "ltoir" and len(lto.code) > 100
    with pytest.raises(ValueError, match="Linker"):
        lto.get_kernel("saxpy")


@needs_nvjitlink
def test_linker_links_lto_ir_across_programs(cache_dir):
    lib = cu.cuda.Program('extern "C" __device__ float twice(float v) { return 2 * v; }', "lib.cu", arch="sm_90")
    main = cu.cuda.Program(
        'extern "C" __device__ float twice(float);\n'
        'extern "C" __global__ void k(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }', "main.cu", arch="sm_90")
    linked = cu.cuda.Linker(main.compile("ltoir"), lib.compile("ltoir"), arch="sm_90").link("cubin")
    assert linked.kind == "cubin" and cubin_sm(linked.code) == 90
    ptx = cu.cuda.Linker(main.compile("ltoir"), lib.compile("ltoir"), arch="sm_90").link("ptx")
    assert ".entry k(" in ptx.code.decode()


@needs_nvjitlink
def test_linker_links_ptx_and_cubin_with_relocatable_code(cache_dir):
    lib = cu.cuda.Program('extern "C" __device__ float twice(float v) { return 2 * v; }', arch="sm_90",
                          relocatable=True)
    main = cu.cuda.Program(
        'extern "C" __device__ float twice(float);\n'
        'extern "C" __global__ void k(float* x) { x[0] = twice(x[0]); }', arch="sm_90", relocatable=True)
    linked = cu.cuda.Linker(main.compile("ptx"), lib.compile("cubin"), arch="sm_90").link()
    assert cubin_sm(linked.code) == 90


@needs_nvjitlink
def test_link_errors_carry_the_log(cache_dir):
    main = cu.cuda.Program('extern "C" __device__ float missing(float);\n'
                           'extern "C" __global__ void k(float* x) { x[0] = missing(x[0]); }', arch="sm_90")
    with pytest.raises(cu.cuda.CompileError) as info:
        cu.cuda.Linker(main.compile("ltoir"), arch="sm_90").link()
    assert "missing" in info.value.log


def test_object_code_from_bytes_and_file(tmp_path, cache_dir):
    cubin = cu.cuda.Program(SAXPY, arch="sm_90").compile("cubin")
    path = tmp_path / "saxpy.cubin"
    path.write_bytes(cubin.code)
    loaded = cu.cuda.ObjectCode.from_file(str(path))
    assert loaded.kind == "cubin" and loaded.code == cubin.code
    assert cu.cuda.ObjectCode(cubin.code, "cubin").code == cubin.code
    with pytest.raises(ValueError, match="kind"):
        cu.cuda.ObjectCode.from_file(str(tmp_path / "x.bin"))
    with pytest.raises(ValueError, match="code kind"):
        cu.cuda.ObjectCode(b"", "elf")
