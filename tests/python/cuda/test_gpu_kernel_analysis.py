"""Kernel analysis on a GPU: the cubin's resources and the occupancy calculator against the
driver's own answers (cuFuncGetAttribute, cuOccupancyMaxActiveBlocksPerMultiprocessor)."""

import cupric as cu
import numpy as np
import pytest
from cupric._cupric import _kernel_analysis as ka

pytestmark = pytest.mark.gpu


def _loaded(report, cubin):
    return cu.cuda.ObjectCode(cubin, "cubin").get_kernel(report.name)


@pytest.mark.parametrize(("op", "args"), [
    (cu.add, lambda: (cu.ones((1000, 100), dtype=cu.float32), 1.0)),
    (cu.sum, lambda: (cu.ones((1000, 100), dtype=cu.float64),)),
    (cu.sort, lambda: (cu.ones(5000, dtype=cu.float32),)),
])
def test_resources_and_occupancy_agree_with_the_driver(op, args):
    r = cu.inspect(op, *args(), sass=False)  # for this GPU's arch
    assert len(r) > 0
    for k in r:
        cubin, _, _ = ka.compile_array_kernel(k.source, r.arch)
        kernel = _loaded(k, cubin)
        attrs = kernel.attributes()
        assert attrs["num_registers"] == k.registers, k.name
        assert attrs["static_shared_memory"] == k.static_shared_bytes, k.name
        assert attrs["local_memory"] == k.local_bytes, k.name
        assert kernel.occupancy(k.threads, 0) == k.occupancy["blocks_per_sm"], k.name


def test_tile_kernel_occupancy_agrees_with_the_driver():
    import cupric.tile as ct

    @ct.kernel
    def scale(x, out, B: ct.Constant[int]):
        ct.store(out, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(B,)) * 2)

    x = cu.asarray(np.random.default_rng(0).random(4096).astype(np.float32), device="cuda:0")
    r = scale.inspect(x, cu.empty_like(x), 1024, compile_cuda=True, grid=(4,))
    report = r["report"]
    kernel = cu.cuda.ObjectCode(r["cubin"], "cubin").get_kernel(report.name)
    assert kernel.attributes()["num_registers"] == report.registers
    assert kernel.occupancy(report.threads, report.dynamic_shared_bytes) == report.occupancy["blocks_per_sm"]
