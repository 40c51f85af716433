"""cu.profiler.benchmark: a function's host time and, on GPUs, its device time (CUDA events on the
current stream) over many runs, with percentiles; CuPy's cupyx.profiler.benchmark is the anchor."""

import math
import time


class BenchmarkResult:
    """Times in seconds: cpu_times (host wall time per run) and gpu_times ({device index: times})."""

    def __init__(self, name, cpu_times, gpu_times):
        self.name, self.cpu_times, self.gpu_times = name, cpu_times, gpu_times

    @staticmethod
    def percentile(times, q):
        s = sorted(times)
        if not s:
            return math.nan
        pos = (len(s) - 1) * q / 100
        lo = int(pos)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)

    def summary(self, times):
        mean = sum(times) / len(times)
        std = math.sqrt(sum((t - mean) ** 2 for t in times) / len(times))
        return {"mean": mean, "std": std, "min": min(times), "max": max(times),
                **{f"p{q}": self.percentile(times, q) for q in (50, 90, 99)}}

    def _text(self, label, times):
        s = self.summary(times)
        return (f"{label}:{s['mean'] * 1e6:>10.3f} us +/- {s['std'] * 1e6:.3f} (min: {s['min'] * 1e6:.3f}, "
                f"p50: {s['p50'] * 1e6:.3f}, p90: {s['p90'] * 1e6:.3f}, p99: {s['p99'] * 1e6:.3f}, "
                f"max: {s['max'] * 1e6:.3f}) us")

    def __str__(self):
        parts = [f"{self.name:<20}", self._text("CPU", self.cpu_times)]
        parts += [self._text(f"    GPU-{d}", t) for d, t in sorted(self.gpu_times.items())]
        return "".join(parts)

    __repr__ = __str__


def benchmark(func, args=(), kwargs=None, n_repeat=10000, name=None, n_warmup=10, max_duration=math.inf,
              devices=None, print_summary=False):
    """Runs func(*args, **kwargs) n_warmup times, then up to n_repeat times (stopping after
    max_duration seconds). Each run's host time is the wall time of the call; on each GPU in
    `devices` (default: the current device when it is a GPU) an event pair around the call on the
    current stream gives its device time."""
    import cupric as cu

    kwargs = kwargs or {}
    if n_repeat < 1 or n_warmup < 0:
        raise ValueError(f"n_repeat must be >= 1 and n_warmup >= 0, got {n_repeat} and {n_warmup}")
    if devices is None:
        current = str(cu._cupric._get_default_device())
        devices = () if current == "cpu" else (int(current.split(":")[1]),)
    name = name or getattr(func, "__name__", "function")
    for _ in range(n_warmup):
        func(*args, **kwargs)
    syncs = [cu.cuda.Device(d).synchronize for d in devices]
    for s in syncs:
        s()
    cpu, gpu = [], {d: [] for d in devices}
    deadline = time.perf_counter() + max_duration
    for _ in range(n_repeat):
        events = [(cu.cuda.Event(device=d), cu.cuda.Event(device=d)) for d in devices]
        for start, _end in events:
            start.record()
        t0 = time.perf_counter()
        func(*args, **kwargs)
        t1 = time.perf_counter()
        for _start, end in events:
            end.record()
        for s in syncs:
            s()
        cpu.append(t1 - t0)
        for d, (start, end) in zip(devices, events, strict=True):
            gpu[d].append(start.elapsed_time(end) / 1e3)
        if t1 > deadline:
            break
    result = BenchmarkResult(name, cpu, gpu)
    if print_summary:
        print(result)
    return result
