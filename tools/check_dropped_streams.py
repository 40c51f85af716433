"""Streams dropped while their work and stream-ordered frees are pending, in a loop: every result
must be right and no access illegal. Run on a GPU, under the memory checker:

    compute-sanitizer --tool memcheck --error-exitcode 1 python tools/check_dropped_streams.py

(tools/gpu_check.sh does that when compute-sanitizer is installed). The GPU test
tests/python/cuda/test_gpu_stream_handoffs.py runs the same loop without the checker."""

import sys

import numpy as np

SPIN_FILL = r"""
extern "C" __global__ void spin_fill(long long cycles, float* y, float value, int n) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = value;
}
"""


def run(iterations=1000, n=4096, spin_seconds=20e-6):
    """Each iteration: a new stream, a spinning kernel that fills y, a temporary freed while the
    stream still runs, a result kept; then the stream is dropped. Checks the results at the end."""
    import cupric as cu

    kernel = cu.cuda.Program(SPIN_FILL).compile("cubin").get_kernel("spin_fill")
    cycles = int((cu.cuda.Device().clock_rate_khz or 2_000_000) * 1000 * spin_seconds)
    x = cu.arange(n, dtype=cu.float32, device="cuda:0")
    cu.cuda.Device().synchronize()
    results = []
    for i in range(iterations):
        s = cu.cuda.Stream()
        with s:
            y = cu.zeros(n, dtype=cu.float32, device="cuda:0")
            cu.cuda.launch(s, cu.cuda.LaunchConfig((n + 255) // 256, 256), kernel, cycles, y, float(i), n)
            tmp = y + x  # freed below, in the stream's order, while the stream still runs
            results.append(tmp * 2)
            del tmp, y
        del s  # dropped with its work pending
    cu.cuda.Device().synchronize()
    base = np.arange(n, dtype=np.float32)
    for i in sorted({0, 1, iterations // 2, iterations - 2, iterations - 1}):
        np.testing.assert_array_equal(np.asarray(results[i]), 2 * (base + i))
    remaining = cu.cuda._dropped_streams()
    if remaining:
        raise AssertionError(f"{remaining} dropped streams are still tracked after their work completed")
    return iterations


if __name__ == "__main__":
    count = run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
    print(f"ok: {count} streams dropped with work pending; results right")
