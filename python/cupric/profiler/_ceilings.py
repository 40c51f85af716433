"""What a device can do at most: peak memory bandwidth and FLOP/s per precision, from a table of
known GPUs (the vendors' dense figures), else measured once on this device with cupric's own ops."""

import time

# name fragment -> (bandwidth GB/s, {precision: GFLOP/s}); "tensor_*" are dense tensor-core rates
KNOWN_DEVICES = {
    "H200": (4800, {"fp64": 34000, "fp32": 67000, "tensor_fp64": 67000, "tensor_tf32": 494700,
                    "tensor_bf16": 989400, "tensor_fp16": 989400}),
    "H100": (3350, {"fp64": 34000, "fp32": 67000, "tensor_fp64": 67000, "tensor_tf32": 494700,
                    "tensor_bf16": 989400, "tensor_fp16": 989400}),
    "A100": (2039, {"fp64": 9700, "fp32": 19500, "tensor_fp64": 19500, "tensor_tf32": 156000,
                    "tensor_bf16": 312000, "tensor_fp16": 312000}),
    "L40S": (864, {"fp64": 1410, "fp32": 91600, "tensor_tf32": 183000, "tensor_bf16": 362000,
                   "tensor_fp16": 362000}),
    "L4": (300, {"fp64": 490, "fp32": 30300, "tensor_tf32": 60000, "tensor_bf16": 121000, "tensor_fp16": 121000}),
    "RTX 4090": (1008, {"fp64": 1290, "fp32": 82600, "tensor_tf32": 82600, "tensor_bf16": 165200,
                        "tensor_fp16": 165200}),
    "V100": (900, {"fp64": 7800, "fp32": 15700, "tensor_fp16": 125000}),
    "T4": (320, {"fp64": 250, "fp32": 8100, "tensor_fp16": 65000}),
}

_measured = {}


class Ceilings:
    """Peak bandwidth (GB/s) and FLOP/s (GFLOP/s) by precision of one device, and where they came from."""

    def __init__(self, device, bandwidth, flops, source):
        self.device, self.bandwidth, self.flops, self.source = device, bandwidth, flops, source

    def peak_flops(self, dtype, model):
        """The compute roof an op of this output dtype and model runs under (matmuls on tensor cores)."""
        wide = dtype in ("float64", "complex128")
        if model == "matmul":
            keys = ("tensor_fp64", "fp64") if wide else (
                ("tensor_bf16",) if dtype == "bfloat16" else ("tensor_fp16",) if dtype == "float16" else ("fp32",))
        else:
            keys = ("fp64",) if wide else ("fp32",)
        for key in keys + ("fp32",):
            if key in self.flops:
                return self.flops[key]
        return max(self.flops.values())

    def bound(self, intensity, dtype, model):
        """The roofline: min(compute roof, intensity x bandwidth), GFLOP/s."""
        return min(self.peak_flops(dtype, model), intensity * self.bandwidth)


def for_device(device_name):
    """The ceilings of "cpu" or "cuda:N": the known table by the GPU's name, else measured (cached)."""
    if device_name in _measured:
        return _measured[device_name]
    if device_name != "cpu":
        import cupric as cu

        index = int(device_name.split(":")[1])
        gpu = cu.cuda.Device(index).name
        for fragment, (bw, flops) in KNOWN_DEVICES.items():
            if fragment in gpu:
                _measured[device_name] = Ceilings(gpu, bw, dict(flops), f"table ({fragment})")
                return _measured[device_name]
    _measured[device_name] = _measure(device_name)
    return _measured[device_name]


def _best_seconds(fn, sync, repeat=5):
    fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def _measure(device_name):
    """A large add (bandwidth: 3 arrays moved) and a float32/float64 matmul (compute), timed on the device."""
    import cupric as cu

    sync = (lambda: None) if device_name == "cpu" else cu.cuda.Device(int(device_name.split(":")[1])).synchronize
    with cu.device(device_name):
        n = 1 << 23
        x = cu.ones(n, dtype="float64")
        y = cu.empty_like(x)
        t = _best_seconds(lambda: cu.add(x, x, out=y), sync)
        bandwidth = 3 * x.nbytes / t / 1e9
        flops = {}
        m = 512 if device_name == "cpu" else 4096
        for dtype, key in (("float64", "fp64"), ("float32", "fp32")):
            a = cu.ones((m, m), dtype=dtype)
            t = _best_seconds(lambda a=a: cu.matmul(a, a), sync, repeat=3)
            flops[key] = 2 * m**3 / t / 1e9
    return Ceilings(device_name, bandwidth, flops, "measured")
