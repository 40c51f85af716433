"""Shared by the cupric.cuda tests: skip marks and small kernels."""

import pytest

import cupric as cu

HAS_NVRTC = cu.cuda.versions()["nvrtc"]["found"]
HAS_NVJITLINK = cu.cuda.versions()["nvjitlink"]["found"]
HAS_GPU = cu.cuda.is_available()

needs_nvrtc = pytest.mark.skipif(not HAS_NVRTC, reason="NVRTC is not installed")
needs_nvjitlink = pytest.mark.skipif(not HAS_NVJITLINK, reason="nvJitLink is not installed")
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no CUDA driver or GPU")

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""
