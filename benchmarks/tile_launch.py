"""Host cost of launching an already-compiled cupric.tile kernel.

    python benchmarks/tile_launch.py [--n 2000] [--profile MODE] [--no-new-process]

A small saxpy kernel (a scalar, three arrays, a ct.Constant block size; one block of 1024
float32 elements, so the kernel itself costs next to nothing) is launched again and again with
the same arguments; each row is the median over several rounds of the wall time per launch, in
microseconds of host time:

- cpu/cupric, cpu/numpy: the compiled CPU path (the launch runs the block synchronously);
- cuda/cupric, cuda/torch, cuda/cupy: the CUDA path (asynchronous launches on the current
  stream), where a CUDA driver is loaded: a GPU, or the stand-in driver of tests/fake_cuda
  (LD_LIBRARY_PATH=<dir of the fake libcuda.so.1>), which runs no kernels, so that the Python
  and C++ overhead of the launch path can be measured without a GPU;
- cuda/cai: objects that only have a __cuda_array_interface__ dict (as Numba's arrays), over
  cupric's device memory; cuda/torch-standin, where PyTorch is not installed: objects with the
  attributes cupric reads from a torch.Tensor (data_ptr, shape, stride, dtype, get_device) in a
  stand-in torch module, so that the torch reading path is measured without PyTorch;
- first call in a new process with the kernel cached on disk (the kernel index), end to end
  from before the launch to its return, after `import cupric` (each in a new process).

--profile MODE prints cProfile's top entries for that mode's launches; --no-plans launches through
the Python path every time (the launch path before launch plans, for comparison).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import cupric as cu
import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "tile")
sys.path.insert(0, EXAMPLES)
from saxpy import saxpy_kernel as saxpy  # noqa: E402

N, BLOCK = 1024, 1024


def per_launch_us(fn, n, rounds=7):
    fn()  # compile / load outside the timing
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n)
    return float(np.median(times)) * 1e6


class _CudaArrayInterface:
    """Only a __cuda_array_interface__ dict (no DLPack), over a cupric array's memory."""

    def __init__(self, a):
        self.base = a
        self.__cuda_array_interface__ = dict(a.__cuda_array_interface__, stream=None)


def _stand_in_torch():
    """A module named torch whose Tensor has the attributes cupric reads from PyTorch's, where
    PyTorch is not installed (False otherwise: then cuda/torch measures the real one)."""
    try:
        import torch  # noqa: F401

        return "torch" in sys.modules and getattr(sys.modules["torch"], "_cupric_stand_in", False)
    except ImportError:
        pass
    import types

    torch = types.ModuleType("torch")
    torch._cupric_stand_in = True

    class dtype:  # noqa: N801 - torch's name
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name

    torch.float32 = dtype("float32")

    class Tensor:
        is_cuda = True
        dtype = torch.float32

        def __init__(self, a):
            self.base, self.shape, self._strides = a, tuple(a.shape), tuple(a._element_strides)
            self._ptr, self._device = a._data_ptr, a.device.index

        def data_ptr(self):
            return self._ptr

        def stride(self):
            return self._strides

        def get_device(self):
            return self._device

    torch.Tensor = Tensor
    sys.modules["torch"] = torch
    return True


def cases():
    """(name, a function that launches once, a function that waits for the device)."""
    rng = np.random.default_rng(0)
    xn, yn = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    x, y, o = cu.asarray(xn, device="cpu"), cu.asarray(yn, device="cpu"), cu.empty(N, dtype=cu.float32, device="cpu")
    yield "cpu/cupric", (lambda: saxpy[(1,)](2.0, x, y, o, BLOCK)), None
    on = np.empty(N, np.float32)
    yield "cpu/numpy", (lambda: saxpy[(1,)](2.0, xn, yn, on, BLOCK)), None
    if not cu.cuda.is_available():
        return
    sync = cu.cuda.current_stream().synchronize
    dx, dy, do = (a.to_device("cuda:0") for a in (x, y, o))
    yield "cuda/cupric", (lambda: saxpy[(1,)](2.0, dx, dy, do, BLOCK)), sync
    cx, cy, co = (_CudaArrayInterface(a) for a in (dx, dy, do))
    yield "cuda/cai", (lambda: saxpy[(1,)](2.0, cx, cy, co, BLOCK)), sync
    if _stand_in_torch():
        sx, sy, so = (sys.modules["torch"].Tensor(a) for a in (dx, dy, do))
        yield "cuda/torch-standin", (lambda: saxpy[(1,)](2.0, sx, sy, so, BLOCK)), sync
    try:
        import torch

        if not getattr(torch, "_cupric_stand_in", False) and torch.cuda.is_available():
            tx, ty, to = (torch.as_tensor(a, device="cuda") for a in (xn, yn, on))
            yield "cuda/torch", (lambda: saxpy[(1,)](2.0, tx, ty, to, BLOCK)), torch.cuda.synchronize
    except ImportError:
        pass
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount():
            cx, cy, co = (cupy.asarray(a) for a in (xn, yn, on))
            yield "cuda/cupy", (lambda: saxpy[(1,)](2.0, cx, cy, co, BLOCK)), cupy.cuda.Device().synchronize
    except Exception:  # noqa: BLE001 - no CuPy, or CuPy without a device
        pass


_NEW_PROCESS = textwrap.dedent("""
    import sys, time
    t_import = time.perf_counter()
    import numpy as np, cupric as cu
    from cupric import tile as ct
    t_import = time.perf_counter() - t_import
    device = sys.argv[1]
    sys.path.insert(0, sys.argv[2])
    from saxpy import saxpy_kernel as saxpy
    x = cu.ones(1024, dtype=cu.float32, device=device)
    o = cu.empty(1024, dtype=cu.float32, device=device)
    if device != "cpu":
        cu.cuda.current_stream().synchronize()
    t0 = time.perf_counter(); saxpy[(1,)](2.0, x, x, o, 1024); t1 = time.perf_counter()
    t2 = time.perf_counter(); saxpy[(1,)](2.0, x, x, o, 1024); t3 = time.perf_counter()
    c = next(iter(saxpy.cache.values()))
    hit = c.host.get("index_hit") if device == "cpu" else c.cuda_kernels[0].compiled.get("index_hit")
    print(t1 - t0, t3 - t2, bool(hit), c._function is None, t_import)
""")


def new_process(device, repeat=5):
    """First and second launch in new processes, the kernel compiled before (disk cache)."""
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "first_call.py")
        with open(script, "w") as f:
            f.write(_NEW_PROCESS)
        env = dict(os.environ, CUPRIC_CACHE_DIR=os.path.join(d, "cache"))
        runs = []
        for _ in range(repeat + 1):  # the first run compiles
            out = subprocess.run([sys.executable, script, device, EXAMPLES], env=env, capture_output=True, text=True)
            if out.returncode:
                print(out.stderr[-2000:])
                return None
            first, second, hit, no_frontend, t_import = out.stdout.split()[-5:]
            runs.append((float(first), float(second), hit == "True", no_frontend == "True", float(t_import)))
        warm = runs[1:]
        return (
            float(np.median([r[0] for r in warm])),
            float(np.median([r[1] for r in warm])),
            all(r[2] for r in warm),
            all(r[3] for r in warm),
            float(np.median([r[4] for r in warm])),
        )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2000, help="launches per round")
    p.add_argument("--profile", default=None, help="cProfile the launches of this mode (e.g. cpu/cupric)")
    p.add_argument("--no-new-process", action="store_true")
    p.add_argument("--no-plans", action="store_true", help="every launch through the Python path (as before plans)")
    args = p.parse_args()
    if args.no_plans:
        from cupric.tile import _kernel

        _kernel._Launch.plan = lambda self, values: None
    print(f"# per-launch host time of a cached saxpy launch (1 block of {BLOCK}), median of 7 rounds")
    for name, fn, sync in cases():
        if args.profile == name:
            import cProfile
            import pstats

            fn()
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.n):
                fn()
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        us = per_launch_us(fn, args.n)
        if sync is not None:
            sync()
        print(f"launch  {name:12s} {us:8.2f} us", flush=True)
    if args.no_new_process:
        return 0
    devices = ["cpu"] + (["cuda"] if cu.cuda.is_available() else [])
    for device in devices:
        r = new_process(device)
        if r is not None:
            first, second, hit, no_frontend, t_import = r
            print(
                f"new-process {device:5s} first call {first * 1e3:6.2f} ms, second {second * 1e6:7.1f} us "
                f"(index hit {hit}, frontend skipped {no_frontend}; import cupric {t_import * 1e3:.1f} ms)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
