"""The profiler's events as Python objects: what the C++ core recorded (cupric._cupric._profiler)
plus the device times attributed to ops, shared by the table, the traces and the roofline."""

from collections import namedtuple

FIELDS = ("kind", "name", "detail", "depth", "device", "stream", "thread", "t0_ns", "t1_ns", "gpu_t0_ns",
          "gpu_t1_ns", "bytes", "flops", "value", "inputs", "outputs", "model")


class Event(namedtuple("Event", FIELDS)):
    """One recorded event. Times are the profiler's clock (steady ns); gpu_* are -1 when unknown."""

    __slots__ = ()

    @property
    def host_ns(self):
        return self.t1_ns - self.t0_ns

    @property
    def gpu_ns(self):
        return self.gpu_t1_ns - self.gpu_t0_ns if self.gpu_t0_ns >= 0 else -1

    @property
    def library(self):
        """A library event's library ("cuBLAS", "cuBLASLt", "cuSOLVER", "cuFFT"): its detail's first word."""
        return self.detail.split(" ", 1)[0] if self.kind == "library" and self.detail else ""

    @property
    def device_name(self):
        return "cpu" if self.device < 0 else f"cuda:{self.device}"

    def signature(self):
        """The inputs as text: '(3, 4) float32, scalar float64'."""
        parts = []
        for shape, dtype, weak in self.inputs:
            parts.append(f"scalar {dtype}" if weak else f"{_shape_text(shape)} {dtype}")
        return ", ".join(parts)

    def as_dict(self):
        d = self._asdict()
        d["inputs"] = [{"shape": list(s), "dtype": t, "weak": w} for s, t, w in self.inputs]
        d["outputs"] = [{"shape": list(s), "dtype": t} for s, t, _ in self.outputs]
        return d


def _shape_text(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def from_core(rows):
    return [Event(*row) for row in rows]


def attribute_kernels(events):
    """Each op's device time: the sum of its kernels' (launched on its thread inside its host
    interval, attributed to the innermost such op). Returns {index of op: gpu ns}."""
    ops = sorted((i for i, e in enumerate(events) if e.kind == "op"), key=lambda i: events[i].t0_ns)
    totals = {}
    for k in events:
        if k.kind not in ("kernel", "library") or k.gpu_ns < 0:
            continue
        owner = None
        for i in ops:  # innermost = the latest-starting op that still encloses the launch
            e = events[i]
            if e.t0_ns > k.t0_ns:
                break
            if e.thread == k.thread and e.t1_ns >= k.t1_ns:
                owner = i
        if owner is not None:
            totals[owner] = totals.get(owner, 0) + k.gpu_ns
    return totals


def self_times(events):
    """Each op's host time minus that of the ops inside it (same thread, nested intervals)."""
    out = {}
    by_thread = {}
    for i, e in enumerate(events):
        if e.kind == "op":
            by_thread.setdefault(e.thread, []).append(i)
    for indices in by_thread.values():
        indices.sort(key=lambda i: (events[i].t0_ns, -events[i].t1_ns))
        stack = []
        for i in indices:
            e = events[i]
            out[i] = e.host_ns
            while stack and events[stack[-1]].t1_ns <= e.t0_ns:
                stack.pop()
            if stack:
                out[stack[-1]] -= e.host_ns
            stack.append(i)
    return out


def memory_summary(events):
    """Per device ("cpu", "cuda:0"): allocations and frees of the memory pools (the CUDA pool; on
    the CPU the host allocator's blocks of 64 KiB and more), bytes allocated, and the bytes the
    pool held (live blocks and cache) at its peak and at the end."""
    out = {}
    for e in sorted((e for e in events if e.kind == "alloc"), key=lambda e: e.t1_ns):
        m = out.setdefault(e.device_name, {"allocations": 0, "frees": 0, "bytes_allocated": 0, "peak_bytes": 0,
                                           "final_bytes": 0})
        if e.name == "alloc":
            m["allocations"] += 1
            m["bytes_allocated"] += int(e.bytes)
        else:
            m["frees"] += 1
        m["peak_bytes"] = max(m["peak_bytes"], e.value)
        m["final_bytes"] = e.value
    return out


def bytes_text(n):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
