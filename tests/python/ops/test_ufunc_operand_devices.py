"""Where a ufunc puts operands that are not cupric arrays (NumPy scalars, lists, NumPy arrays):
on the device of the cupric arrays of the call, for ufunc calls, binary and in-place operators,
checked against the stand-in driver (cuda:0 beside CUPRIC_DEVICE=cpu, as in the test runs; kernels do not run,
so the devices are checked here and the values by the GPU tests)."""

import pytest
from fake_driver import run_with_fake_driver

pytestmark = pytest.mark.nvrtc


def test_numpy_scalars_lists_and_arrays_go_to_the_device_of_the_arrays(fake_dir):
    run_with_fake_driver(fake_dir, """
import numpy as np
import cupric as cu
assert cu.cuda.is_available()
x = cu.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), device="cuda:0")
for other in [np.float32(3), np.float64(2.5), np.int8(4), np.bool_(True), [1.0, 2.0, 3.0],
              np.ones(3, np.float32), np.array(2.0, np.float32)]:
    results = [cu.multiply(x, other), cu.multiply(other, x), x * other, other * x if not
               isinstance(other, np.ndarray) else x - other, cu.add(x, other, out=cu.empty_like(x)),
               cu.where(x > other, x, other)]
    for r in results:
        assert r.device == "cuda:0", (type(other), r.device)
    y = x.copy()
    y += other
    assert y.device == "cuda:0"
    assert cu.multiply(np.float32(3), np.float32(2)).device == "cpu"   # no array: the default device
z = cu.asarray(np.ones(3, np.float32))                                   # two devices still refuse
try:
    cu.add(x, z)
    raise AssertionError("no error")
except ValueError as e:
    assert "different devices (cuda:0 and cpu)" in str(e), e
""", env={"CUPRIC_DEVICE": "cpu"})  # cuda:0 is not the default device
