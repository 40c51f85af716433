"""Fusion: @cu.jit beside cupric eager and the installed peers (torch eager, torch.compile,
cupy.fuse, jax.jit, a Triton saxpy), in one process; then the CPU against NumPy.

    python benchmarks/fusion.py            # GPU table (when there is a GPU), then the CPU table
    python benchmarks/fusion.py --cpu-only
    python benchmarks/fusion.py --compile-only   # compile costs and warm host time per call only

Rows (issue 18): the 5-op expression sqrt(x*x + y*y)*0.5 + sin(x) and 2*x + y on 2^28 float32;
softmax over rows, the variance ((x - x.mean(1, keepdims=True))**2).mean(1) and a fused sum(x*y)
on 16384 x 8192 float32 (2^27); compile costs (first call cold, from the disk cache in a new
process, warm host time per call beside cupric eager and the installed peers on 1-element
arrays, compiles after a new length). Times are the best of a few rounds
of 10 calls each, synchronised. "floor" is the bytes each row must move over the copy ceiling
measured in the same run. Every peer is optional: a missing one is n/a."""

import os
import subprocess
import sys
import tempfile
import time
import traceback

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would take 75% of the GPU

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _table import print_table  # noqa: E402

N = 1 << 28
ROWS, COLS = 16384, 8192
ROUNDS, CALLS = 5, 10


# ---- the expressions, written once over a namespace `m` ----------------------------------------


def five_op(m, x, y):
    return m.sqrt(x * x + y * y) * 0.5 + m.sin(x)


def saxpy(m, x, y):
    return 2 * x + y


def softmax(m, x):
    e = m.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def variance(m, x):
    return ((x - x.mean(1, keepdims=True)) ** 2).mean(1)


def dot(m, x, y):
    return m.sum(x * y)


def torch_ns():
    """torch under NumPy's names for the rows that need no keepdims."""
    import types

    import torch

    return types.SimpleNamespace(sqrt=torch.sqrt, sin=torch.sin, exp=torch.exp, sum=torch.sum)


def torch_softmax(x):
    e = (x - x.amax(1, keepdim=True)).exp()
    return e / e.sum(1, keepdim=True)


def torch_variance(x):
    return ((x - x.mean(1, keepdim=True)) ** 2).mean(1)


# ---- timing ------------------------------------------------------------------------------------


def best(fn, sync, calls=CALLS, rounds=ROUNDS):
    fn()
    sync()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        times.append((time.perf_counter() - t) / calls)
    return min(times)


def try_time(label, make, results):
    try:
        t = make()
        if t is not None:
            results[label] = t
    except Exception:  # noqa: BLE001  (a peer that fails is reported, not fatal)
        print(f"[{label}] failed:", file=sys.stderr)
        traceback.print_exc()


# ---- GPU ---------------------------------------------------------------------------------------


def gpu_rows(cu):
    sync_cu = cu.cuda.Device().synchronize
    rng = np.random.default_rng(0)
    xn, yn = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    mn = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    x, y, mx = (cu.asarray(a, device="cuda") for a in (xn, yn, mn))
    copy_s = best(lambda: x.copy(), sync_cu)
    ceiling = 2 * 4 * N / copy_s  # bytes/s of a device copy in this run
    rows = {}

    def jit_of(fn):
        f = cu.jit(lambda *a: fn(cu, *a))
        return f

    cases = [
        ("5-op 2^28 f32", 12 * N, five_op, (x, y), (xn, yn)),
        ("2*x + y 2^28 f32", 12 * N, saxpy, (x, y), (xn, yn)),
        ("softmax 16384x8192 f32", 8 * ROWS * COLS, softmax, (mx,), (mn,)),
        ("variance rows 16384x8192", 4 * ROWS * COLS, variance, (mx,), (mn,)),
        ("sum(x*y) 2^28 f32", 8 * N, dot, (x, y), (xn, yn)),
    ]
    peers = load_gpu_peers()
    for label, nbytes, fn, args, host in cases:
        r = rows[label] = {"bytes": nbytes, "floor": nbytes / ceiling}
        r["cupric eager"] = best(lambda fn=fn, args=args: fn(cu, *args), sync_cu)
        f = jit_of(fn)
        r["cupric jit"] = best(lambda f=f, args=args: f(*args), sync_cu)
        if fn in (five_op, saxpy):  # the map kernels' block: 1024 compiles fast, 4096 was the saxpy example's best
            from cupric.jit import _run

            default, _run.MAP_BLOCK["cuda"] = _run.MAP_BLOCK["cuda"], 4096
            f4096 = jit_of(fn)
            r["cupric jit B4096"] = best(lambda f=f4096, args=args: f(*args), sync_cu)
            _run.MAP_BLOCK["cuda"] = default
        check = np.asarray(f(*args).get(), dtype=np.float64)
        expect = np.asarray(fn(cu, *args).get(), dtype=np.float64)
        r["max |jit - eager|"] = float(np.max(np.abs(check - expect)))
        for name, peer in peers.items():
            try_time(name, lambda peer=peer, fn=fn, host=host: peer(fn, host), r)
    rows["compile"] = gpu_compile_costs(cu)
    return rows, ceiling


def load_gpu_peers():
    """name -> (fn, host arrays) -> seconds, for each installed peer."""
    peers = {}
    try:
        import torch

        if torch.cuda.is_available():
            T = torch_ns()
            special = {softmax: torch_softmax, variance: torch_variance}

            def torch_fn(fn):
                return special.get(fn, lambda *a, fn=fn: fn(T, *a))

            def torch_eager(fn, host):
                args = [torch.from_numpy(h).cuda() for h in host]
                return best(lambda: torch_fn(fn)(*args), torch.cuda.synchronize)

            def torch_compiled(fn, host):
                args = [torch.from_numpy(h).cuda() for h in host]
                c = torch.compile(torch_fn(fn))
                return best(lambda: c(*args), torch.cuda.synchronize)

            peers["torch eager"] = torch_eager
            peers["torch.compile"] = torch_compiled
            peers["triton saxpy"] = triton_saxpy(torch)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    try:
        import cupy as cp

        def cupy_fuse(fn, host):
            args = [cp.asarray(h) for h in host]
            if fn not in (five_op, saxpy, dot):  # cupy.fuse takes no keepdims reductions
                return None
            f = cp.fuse(lambda x, y: fn(cp, x, y))
            return best(lambda: f(*args), cp.cuda.Device().synchronize)

        peers["cupy.fuse"] = cupy_fuse
    except Exception:  # noqa: BLE001
        pass
    try:
        import jax
        import jax.numpy as jnp

        def jax_jit(fn, host):
            args = [jax.device_put(h) for h in host]
            f = jax.jit(lambda *a: fn(jnp, *a))
            out = [None]

            def call():
                out[0] = f(*args)

            return best(call, lambda: out[0].block_until_ready())

        peers["jax.jit"] = jax_jit
    except Exception:  # noqa: BLE001
        pass
    return {k: v for k, v in peers.items() if v is not None}


def triton_saxpy(torch):
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    def run(fn, host):
        if fn is not saxpy:
            return None  # Triton runs the saxpy row only
        x, y = (torch.from_numpy(h).cuda() for h in host)
        out = torch.empty_like(x)
        times = []
        for block in (1024, 2048, 4096):
            grid = (triton.cdiv(x.numel(), block),)
            times.append(best(lambda g=grid, b=block: kernel[g](x, y, out, x.numel(), BLOCK=b), torch.cuda.synchronize))
        return min(times)

    return run


COMPILE_SCRIPT = """
import sys, time
t0 = time.perf_counter()
import cupric as cu, cupric.tile, numpy as np
device = sys.argv[1]
x = cu.asarray(np.random.rand(4096).astype(np.float32), device=device)
sync = cu.cuda.Device().synchronize if device != "cpu" else (lambda: None)
sync()
f = cu.jit(lambda x, y: cu.sqrt(x * x + y * y) * 0.5 + cu.sin(x) + 0.25 * cu.cos(y))
t1 = time.perf_counter(); f(x, x); sync()
t2 = time.perf_counter(); f(x, x); sync()
t3 = time.perf_counter()
print(t2 - t1, t3 - t2)
"""


def compile_costs(cu, device):
    """(trace, first compiled call cold, the same from the disk cache in a new process) in seconds,
    the warm host time per call (s) and the compiles a new length caused."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, CUPRIC_CACHE_DIR=d)
        runs = [subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, device], env=env, capture_output=True,
                               text=True, timeout=300, check=True).stdout.split() for _ in range(2)]
    out["trace (first call, eager)"] = float(runs[0][0])
    out["compile + run, cold"] = float(runs[0][1])
    out["from the disk cache, new process"] = float(runs[1][1])
    from cupric.jit._run import compiled_count

    f = cu.jit(lambda x, y: 2 * x + y)
    x = cu.ones(1, dtype=cu.float32, device=device)
    out.update(warm_host_costs(cu, device))
    f(x, x)
    before = compiled_count()
    for length in (777, 5000, 123457):
        z = cu.ones(length, dtype=cu.float32, device=device)
        f(z, z)
    out["compiles after new lengths"] = compiled_count() - before
    return out


def per_call(fn, sync, n=20000):
    """Host seconds per call of fn on tiny arrays: the best of 3 runs of n calls, synchronised
    at the end of each (the launches queue; the host's work is what is timed)."""
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        times.append((time.perf_counter() - t) / n)
    return min(times)


def warm_host_costs(cu, device):
    """'warm host per call, <who>' -> seconds, for 2*x + y on 1-element float32 arrays: cupric
    @cu.jit (its prepared call) beside cupric eager, the 5-op expression under @cu.jit, and the
    installed peers (NumPy on the CPU; torch eager, cupy.fuse, jax.jit on the GPU, and torch.compile
    with --with-torch-compile)."""
    sync = cu.cuda.Device().synchronize if device != "cpu" else (lambda: None)
    x = cu.ones(1, dtype=cu.float32, device=device)
    f = cu.jit(lambda x, y: 2 * x + y)
    g = cu.jit(lambda x, y: five_op(cu, x, y))
    out = {"warm host per call, cupric jit 2*x + y": per_call(lambda: f(x, x), sync),
           "warm host per call, cupric jit 5-op": per_call(lambda: g(x, x), sync),
           "warm host per call, cupric eager 2*x + y": per_call(lambda: 2 * x + x, sync)}
    h = np.ones(1, dtype=np.float32)
    if device == "cpu":
        out["warm host per call, numpy 2*x + y"] = per_call(lambda: 2 * h + h, lambda: None)
        return out
    peers = [("torch eager", _torch_saxpy), ("cupy.fuse", _cupy_saxpy), ("jax.jit", _jax_saxpy)]
    if "--with-torch-compile" in sys.argv:  # its first compile takes tens of seconds of the GPU's time
        peers.append(("torch.compile", lambda h: _torch_saxpy(h, compiled=True)))
    for name, make in peers:
        try:
            call, peer_sync = make(h)
            out[f"warm host per call, {name} 2*x + y"] = per_call(call, peer_sync)
        except ImportError:
            pass
        except Exception:  # noqa: BLE001
            traceback.print_exc()
    return out


def _torch_saxpy(h, compiled=False):
    import torch

    t = torch.from_numpy(h).cuda()
    fn = torch.compile(saxpy_2) if compiled else saxpy_2
    return (lambda: fn(t, t)), torch.cuda.synchronize


def _cupy_saxpy(h):
    import cupy as cp

    t = cp.asarray(h)
    f = cp.fuse(saxpy_2)
    return (lambda: f(t, t)), cp.cuda.Device().synchronize


def _jax_saxpy(h):
    import jax

    t = jax.device_put(h)
    f = jax.jit(saxpy_2)
    out = [f(t, t)]

    def call():
        out[0] = f(t, t)

    return call, lambda: out[0].block_until_ready()


def saxpy_2(x, y):
    return 2 * x + y


def gpu_compile_costs(cu):
    try:
        return compile_costs(cu, "cuda")
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        return {}


# ---- CPU ---------------------------------------------------------------------------------------


def cpu_rows(cu):
    rows = {}
    rng = np.random.default_rng(0)
    for n in (1 << 20, 1 << 24):
        xn, yn = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        mn = xn.reshape(-1, 4096)
        x, y, mx = (cu.asarray(a, device="cpu") for a in (xn, yn, mn))  # the CPU, whatever the default device
        p = n.bit_length() - 1
        for label, fn, args, host in [
            (f"5-op 2^{p}", five_op, (x, y), (xn, yn)),
            (f"2*x + y 2^{p}", saxpy, (x, y), (xn, yn)),
            (f"softmax rows of 4096, 2^{p}", softmax, (mx,), (mn,)),
            (f"variance rows of 4096, 2^{p}", variance, (mx,), (mn,)),
            (f"sum(x*y) 2^{p}", dot, (x, y), (xn, yn)),
        ]:
            f = cu.jit(lambda *a, fn=fn: fn(cu, *a))
            rows[label] = {
                "numpy": best(lambda fn=fn, host=host: fn(np, *host), lambda: None, calls=1, rounds=3),
                "cupric eager": best(lambda fn=fn, args=args: fn(cu, *args), lambda: None, calls=1, rounds=3),
                "cupric jit": best(lambda f=f, args=args: f(*args), lambda: None, calls=1, rounds=3),
            }
    rows["compile"] = compile_costs(cu, "cpu")
    return rows


# ---- report ------------------------------------------------------------------------------------


def ms(v):
    return "n/a" if v is None else f"{v * 1e3:.3f}"


def report_gpu(rows, ceiling):
    names = ["cupric jit", "cupric jit B4096", "cupric eager", "torch eager", "torch.compile", "cupy.fuse", "jax.jit",
             "triton saxpy"]
    header = ["row", "floor ms", *[f"{n} ms" for n in names], "jit / floor", "jit vs torch.compile", "jit TB/s"]
    table = []
    for label, r in rows.items():
        if label == "compile":
            continue
        jit = r.get("cupric jit")
        tc = r.get("torch.compile")
        table.append([label, ms(r["floor"]), *[ms(r.get(n)) for n in names],
                      f"{jit / r['floor']:.2f}" if jit else "n/a",
                      f"{tc / jit:.2f}x" if jit and tc else "n/a",
                      f"{r['bytes'] / jit / 1e12:.2f}" if jit else "n/a"])
    print(f"GPU: copy ceiling {ceiling / 1e12:.2f} TB/s (bytes read + written by x.copy())")
    print_table(header, table, markdown=True)
    errors = {label: r.get("max |jit - eager|") for label, r in rows.items() if label != "compile"}
    print("max |jit - eager| per row:", {k: f"{v:.2e}" for k, v in errors.items() if v is not None})
    report_compile("GPU", rows.get("compile", {}))


def report_cpu(rows):
    header = ["row", "numpy ms", "cupric eager ms", "cupric jit ms", "jit vs eager", "jit vs numpy"]
    table = []
    for label, r in rows.items():
        if label == "compile":
            continue
        table.append([label, ms(r["numpy"]), ms(r["cupric eager"]), ms(r["cupric jit"]),
                      f"{r['cupric eager'] / r['cupric jit']:.2f}x", f"{r['numpy'] / r['cupric jit']:.2f}x"])
    print("CPU (all cores):")
    print_table(header, table, markdown=True)
    report_compile("CPU", rows.get("compile", {}))


def report_compile(where, costs):
    for k, v in costs.items():
        if k.startswith("compiles"):
            print(f"{where} {k}: {v}")
        elif k.startswith("warm"):
            print(f"{where} {k}: {v * 1e6:.2f} us")
        else:
            print(f"{where} {k}: {v * 1e3:.1f} ms")
    print()


def main():
    import cupric as cu

    if "--compile-only" in sys.argv:  # the compile rows alone (a minute less than the whole table)
        if "--cpu-only" not in sys.argv and cu.cuda.is_available():
            report_compile("GPU", compile_costs(cu, "cuda"))
        report_compile("CPU", compile_costs(cu, "cpu"))
        return
    if "--cpu-only" not in sys.argv and cu.cuda.is_available():
        rows, ceiling = gpu_rows(cu)
        report_gpu(rows, ceiling)
    report_cpu(cpu_rows(cu))


if __name__ == "__main__":
    main()
