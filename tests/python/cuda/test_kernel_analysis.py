"""The kernel analysis core (src/runtime/kernel_analysis.cpp, occupancy.cpp, through
cupric._cupric._kernel_analysis): cubin resources against ptxas' own report, and the occupancy
calculator against cases worked by hand from NVIDIA's rules."""

import re

import pytest
from cupric._cupric import _kernel_analysis as ka

# (arch, threads, registers, shared bytes) -> (blocks per SM, warps per SM, limiting resource), by hand:
# warps = ceil(threads / 32); by warps = max warps // warps; registers per warp = regs * 32 rounded up to
# 256, warps per scheduler = 16384 // that, x 4 schedulers // warps; shared per block = (bytes + 1024
# reserved) rounded up to 128, shared per SM // that; the least wins (warps first on a tie).
HAND_CASES = [
    # 8 warps; 128 regs -> 4096 per warp -> 4 warps per scheduler -> 16 warps -> 2 blocks
    (("sm_90a", 256, 128, 0), (2, 16, "registers")),
    # 4 warps: 48 // 4 = 12 by warps; 32 regs -> 1024 -> 16 per scheduler -> 64 warps -> 16 blocks; 16 max blocks
    (("sm_86", 128, 32, 0), (12, 48, "warps")),
    # 40 regs -> 1280 -> 12 per scheduler -> 12 blocks; 48 KiB + 1 KiB = 50176 B -> 167936 // 50176 = 3
    (("sm_80", 128, 40, 48 * 1024), (3, 12, "shared memory")),
    # 32 warps: 48 // 32 = 1; 64 regs -> 2048 -> 8 per scheduler -> 32 warps -> 1 block (a tie: warps)
    (("sm_89", 1024, 64, 0), (1, 32, "warps")),
    # 255 regs -> 8160 -> 8192 per warp -> 2 per scheduler -> 8 warps -> 1 block
    (("sm_90", 256, 255, 0), (1, 8, "registers")),
    # 1 warp, 16 regs: 64 warps but 32 blocks at most
    (("sm_90a", 32, 16, 0), (32, 32, "blocks")),
    # 100 KiB + 1 KiB per block on a 228 KiB SM: 2 blocks
    (("sm_90a", 128, 32, 100 * 1024), (2, 8, "shared memory")),
]


@pytest.mark.parametrize(("args", "expected"), HAND_CASES)
def test_occupancy_matches_hand_computed_cases(args, expected):
    o = ka.occupancy(*args)
    assert (o["blocks_per_sm"], o["warps_per_sm"], o["limited_by"]) == expected
    limits = ka.arch_limits(args[0])
    assert o["fraction"] == pytest.approx(expected[1] / limits["max_warps_per_sm"])


@pytest.mark.parametrize(("args", "reason"), [
    (("sm_90a", 2048, 32, 0), "threads per block (2048 > 1024)"),
    (("sm_80", 128, 300, 0), "registers per thread (300 > 255)"),
    (("sm_86", 128, 32, 200 * 1024), "shared memory per block (204800 > 101376 bytes)"),
])
def test_occupancy_of_a_block_that_cannot_run_is_zero_and_says_why(args, reason):
    o = ka.occupancy(*args)
    assert o["blocks_per_sm"] == 0 and o["warps_per_sm"] == 0
    assert o["limited_by"] == reason


def test_occupancy_errors_name_the_values():
    with pytest.raises(ValueError, match=r"no occupancy limits for sm_75 \(known: sm_80, sm_86, sm_89, sm_90\)"):
        ka.occupancy("sm_75", 128, 32)
    with pytest.raises(ValueError, match=r"threads \(0\) must be positive"):
        ka.occupancy("sm_90", 0, 32)
    assert ka.known_archs() == [80, 86, 89, 90]


def test_read_cubin_refuses_what_is_not_an_elf_image():
    with pytest.raises(ValueError, match=r"not a 64-bit little-endian ELF image \(5 bytes\)"):
        ka.read_cubin(b"hello")
    truncated = b"\x7fELF\x02\x01" + bytes(58)  # a header whose section table lies outside the image
    with pytest.raises(ValueError, match="cubin"):
        ka.read_cubin(truncated[:40] + (10**6).to_bytes(8, "little") + truncated[48:])


def _ptxas(log):
    """kernel -> (registers, smem bytes) from ptxas -v."""
    out, name = {}, None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            name = m.group(1)
        m = re.search(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?", line)
        if m and name:
            out[name] = (int(m.group(1)), int(m.group(2) or 0))
    return out


@pytest.mark.nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("op", [("add", ["float32", "float32"]), ("sum", ["float64"]), ("argmax", ["int32"]),
                                ("cumsum", ["float32"]), ("sort", ["float32"])])
def test_cubin_resources_agree_with_ptxas_report(arch, op):
    name, dtypes = op
    sources = ka.op_sources(name, dtypes, [False] * len(dtypes), [])
    assert sources
    for _, source in sources:
        cubin, log, _ = ka.compile_array_kernel(source, arch)
        report = _ptxas(log)
        kernels = ka.read_cubin(cubin)
        assert sorted(k["name"] for k in kernels) == sorted(report)
        for k in kernels:
            assert (k["registers"], k["static_shared_bytes"]) == report[k["name"]], k["name"]
            assert k["registers"] > 0 and k["code_bytes"] > 0 and k["param_bytes"] > 0


@pytest.mark.nvrtc
def test_launch_bounds_and_local_memory_are_read():
    src = """extern "C" __global__ void __launch_bounds__(128) k(float* x, int n) {
      float a[256]; for (int j = 0; j < 256; ++j) a[j] = x[j * n + threadIdx.x];
      x[threadIdx.x] = a[n & 255] + a[(n * 7) & 255]; }"""
    cubin, log, _ = ka.compile_array_kernel(src, "sm_90a")
    (k,) = ka.read_cubin(cubin)
    assert k["name"] == "k" and k["max_threads"] == (128, 1, 1)
    frame = int(re.search(r"(\d+) bytes stack frame", log).group(1))
    assert k["local_bytes"] == frame == 1024  # the indexed array lives in local memory
