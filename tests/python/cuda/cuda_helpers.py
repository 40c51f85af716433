"""Shared by the cupric.cuda tests: small kernels, and the nvJitLink skip (the gpu and nvrtc
markers, registered in pyproject.toml, skip where there is no GPU / no NVRTC)."""

import cupric as cu
import pytest

HAS_NVJITLINK = cu.cuda.versions()["nvjitlink"]["found"]

needs_nvjitlink = pytest.mark.skipif(not HAS_NVJITLINK, reason="nvJitLink is not installed")

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

KERNELS = r"""
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}
extern "C" __global__ void write_value(int* p, int v) { *p = v; }
extern "C" __global__ void copy_value(const int* src, int* dst) { *dst = *src; }
extern "C" __global__ void add_one(int* p) { atomicAdd(p, 1); }
extern "C" __global__ void spin_then_write(long long cycles, int* p, int v) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  *p = v;
}
"""


def load_kernels(source=KERNELS, names=()):
    """Compiles `source` for the current device; returns {name: Kernel}."""
    obj = cu.cuda.Program(source).compile("cubin", name_expressions=list(names))
    found = list(names) or [line.split("void ")[1].split("(")[0] for line in source.splitlines()
                            if "__global__ void" in line]
    return {n: obj.get_kernel(n) for n in found}


def cycles_for(seconds):
    """clock64() ticks in `seconds` on the current device."""
    khz = cu.cuda.Device().clock_rate_khz or 2_000_000  # assume 2 GHz if the driver does not say
    return int(khz * 1000 * seconds)


def read_int32(buf, count=1):
    import numpy as np

    return np.frombuffer(buf.copy_to(), dtype=np.int32)[:count]
