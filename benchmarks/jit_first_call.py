"""Where the first compiled call of a @cu.jit function goes in a new process whose kernel is in the
disk cache (issue 18's target: <= 1 ms): each stage of the jit and tile launch path, timed in a
child process (the first child fills a fresh cache; the best of the next ones is reported).

    python benchmarks/jit_first_call.py            # cuda when there is a GPU, then cpu
    python benchmarks/jit_first_call.py cpu

Stages nest (a stage's time includes the stages it calls); "call" is the whole second call (the
first call traces the function and runs it eagerly)."""

import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import functools, json, sys, time
import numpy as np
import cupric as cu, cupric.tile
from cupric.jit import _run
from cupric.tile import _cuda, _index, _kernel

times = {}

def timed(owner, name, label):
    fn = getattr(owner, name)
    @functools.wraps(fn)
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            times[label] = times.get(label, 0.0) + time.perf_counter() - t
    setattr(owner, name, wrapper)

for owner, name, label in [
    (_run.StepRunner, "_plan", "jit: plan the launch (render, exec)"),
    (_run, "render_map", "jit: render the kernel source"),
    (_run, "compile_kernel", "jit: exec the source, make the ct.Kernel"),
    (_kernel.Kernel, "_specialise", "tile: specialise (argument facts, globals)"),
    (_kernel, "_host_compiler_available", "tile: find the host compiler (cpu)"),
    (_kernel._Launch, "load", "tile: load the kernel"),
    (_kernel.Compiled, "index_key", "tile: index key (fingerprint, environment)"),
    (_index, "load", "tile: read the index entry"),
    (_cuda, "_read_cubin", "tile: read the cubin (cuda)"),
    (_cuda.CudaKernel, "__init__", "tile: load the cubin into the context (cuda)"),
    (_kernel._tile, "HostLauncher", "tile: load the shared object (cpu)"),
    (_kernel._Launch, "plan", "tile: make the launch plan"),
]:
    timed(owner, name, label)

device = sys.argv[1]
sync = cu.cuda.Device().synchronize if device != "cpu" else (lambda: None)
x = cu.asarray(np.random.rand(4096).astype(np.float32), device=device)
f = cu.jit(lambda x, y: cu.sqrt(x * x + y * y) * 0.5 + cu.sin(x) + 0.25 * cu.cos(y))
f(x, x)
sync()
times.clear()
t = time.perf_counter()
f(x, x)
sync()
times["call"] = time.perf_counter() - t
print(json.dumps(times))
"""


def breakdown(device, runs=6):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, CUPRIC_CACHE_DIR=d)
        results = [json.loads(subprocess.run([sys.executable, "-c", CHILD, device], env=env, capture_output=True,
                                             text=True, timeout=300, check=True).stdout) for _ in range(runs)]
    warm = min(results[1:], key=lambda r: r["call"])  # the first run filled the cache
    print(f"{device}: first compiled call in a new process, kernel in the disk cache: {warm['call'] * 1e3:.3f} ms "
          f"(cold, first run: {results[0]['call'] * 1e3:.1f} ms)")
    for label, seconds in sorted(warm.items(), key=lambda kv: -kv[1]):
        if label != "call":
            print(f"  {seconds * 1e3:8.3f} ms  {label}")


def main():
    import cupric as cu

    devices = sys.argv[1:] or (["cuda", "cpu"] if cu.cuda.is_available() else ["cpu"])
    for device in devices:
        breakdown(device)


if __name__ == "__main__":
    main()
