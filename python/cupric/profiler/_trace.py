"""Traces of a profile: Chrome's trace event format (Perfetto and chrome://tracing open it: host
ops per thread, kernels per device and stream, compiles, transfers, memory counters on one time
line) and a plain JSON of the events for scripts."""

import json

HOST_PID = 0
COMPILE_TID = 1 << 30  # a track of its own in the host process


def _device_pid(device):
    return 1 + device


def chrome_trace(events, start_ns, metadata=None):
    """The trace as a dict {"traceEvents": [...], ...}; times in microseconds from start_ns."""
    out = []
    names = {}

    def us(ns):
        return (ns - start_ns) / 1e3

    def track(pid, tid, process, thread):
        names.setdefault((pid, None), process)
        names.setdefault((pid, tid), thread)

    for e in events:
        args = {"detail": e.detail} if e.detail else {}
        if e.kind == "op":
            args.update(inputs=e.signature(), device=e.device_name, stream=e.stream, bytes=e.bytes, flops=e.flops)
        elif e.kind in ("transfer", "alloc", "compile", "library"):
            args.update(bytes=e.bytes, value=e.value)
        if e.kind in ("kernel", "library", "transfer") and e.gpu_t0_ns >= 0:
            pid, tid = _device_pid(e.device), e.stream
            track(pid, tid, f"cuda:{e.device}", f"stream {e.stream}")
            out.append(dict(name=e.name, cat=e.kind, ph="X", ts=us(e.gpu_t0_ns), dur=e.gpu_ns / 1e3, pid=pid, tid=tid,
                            args={"launch_us": us(e.t0_ns)}))
            continue
        if e.kind == "alloc":
            pid = HOST_PID if e.device < 0 else _device_pid(e.device)
            track(pid, e.thread, "host" if pid == HOST_PID else e.device_name, f"thread {e.thread}")
            out.append(dict(name="pool bytes", cat="memory", ph="C", ts=us(e.t1_ns), pid=pid, args={"bytes": e.value}))
            continue
        if e.kind == "transfer" and e.device >= 0:
            pid, tid = _device_pid(e.device), f"transfers {e.stream}"
            track(pid, tid, e.device_name, "transfers")
        elif e.kind == "compile":
            pid, tid = HOST_PID, COMPILE_TID
            track(pid, tid, "host", "compiles")
        else:
            pid, tid = HOST_PID, e.thread
            track(pid, tid, "host", f"thread {e.thread}")
        out.append(dict(name=e.name, cat=e.kind, ph="X", ts=us(e.t0_ns), dur=e.host_ns / 1e3, pid=pid, tid=tid,
                        args=args))
    meta = []
    for (pid, tid), label in names.items():
        if tid is None:
            meta.append(dict(name="process_name", ph="M", pid=pid, args={"name": label}))
        else:
            meta.append(dict(name="thread_name", ph="M", pid=pid, tid=tid, args={"name": label}))
    return {"traceEvents": meta + out, "displayTimeUnit": "ns", "otherData": dict(metadata or {})}


def write_chrome_trace(path, events, start_ns, metadata=None):
    with open(path, "w") as f:
        json.dump(chrome_trace(events, start_ns, metadata), f)
    return path


def write_json(path, events, start_ns, metadata=None):
    doc = {"format": "cupric-profile", "version": 1, "start_ns": start_ns, "metadata": dict(metadata or {}),
           "events": [e.as_dict() for e in events]}
    with open(path, "w") as f:
        json.dump(doc, f)
    return path
