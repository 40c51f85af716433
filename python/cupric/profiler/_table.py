"""prof.table(): events grouped by op, kernel or shape, with calls, times, and the achieved
GB/s and GFLOP/s from each op's own bytes and flops model, beside the device's roofline bound."""

import bisect

from . import _ceilings
from ._events import attribute_kernels, bytes_text, memory_summary, self_times

GROUPS = ("op", "kernel", "shape")
SORT_KEYS = ("total", "self", "mean", "min", "max", "calls", "name", "gbps", "gflops", "bytes", "flops")


class Row(dict):
    """One line of the table (a dict: name, device, calls, total_us, self_us, mean_us, min_us, max_us,
    bytes, flops, gbps, gflops, roof_fraction, timing)."""


class Table:
    """The rows, the notes, and `memory`: per device, the pools' allocations and size
    (_events.memory_summary), printed below the rows."""

    def __init__(self, rows, group_by, notes, memory=None):
        self.rows, self.group_by, self.notes = rows, group_by, notes
        self.memory = memory or {}

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def __str__(self):
        head = ("name", "device", "calls", "total us", "self us", "mean us", "min us", "max us", "GB/s", "GFLOP/s",
                "% roof")
        lines = [head]
        for r in self.rows:
            frac = "" if r["roof_fraction"] is None else f"{100 * r['roof_fraction']:.1f}"
            lines.append((r["name"], r["device"], str(r["calls"]), f"{r['total_us']:.1f}", f"{r['self_us']:.1f}",
                          f"{r['mean_us']:.2f}", f"{r['min_us']:.2f}", f"{r['max_us']:.2f}", _rate(r["gbps"]),
                          _rate(r["gflops"]), frac))
        widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
        widths[0] = min(widths[0], 60)
        out = []
        for j, line in enumerate(lines):
            cells = [line[0][:60].ljust(widths[0])] + [c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True)]
            out.append("  ".join(cells))
            if j == 0:
                out.append("-" * len(out[0]))
        for device, m in self.memory.items():
            out.append(f"memory {device}: {m['allocations']} allocations ({bytes_text(m['bytes_allocated'])}), "
                       f"{m['frees']} frees; pool peak {bytes_text(m['peak_bytes'])}, "
                       f"at the end {bytes_text(m['final_bytes'])}")
        out.extend(f"note: {n}" for n in self.notes)
        return "\n".join(out)

    __repr__ = __str__


def _rate(v):
    return "" if v is None else f"{v:.1f}"


def _key(e, group_by):
    if group_by == "shape":
        return f"{e.name} [{e.signature()}]"
    return e.name


def build(events, sort_by="total", group_by="op", ceilings=True, top=None):
    if group_by not in GROUPS:
        raise ValueError(f"group_by must be one of {GROUPS}, got {group_by!r}")
    if sort_by not in SORT_KEYS:
        raise ValueError(f"sort_by must be one of {SORT_KEYS}, got {sort_by!r}")
    notes = []
    kind = "op"
    if group_by == "kernel":
        if any(e.kind in ("kernel", "library", "tile_launch") for e in events):
            kind = "kernel"
        else:
            notes.append("no kernel launches were recorded (CPU ops run their loops directly): grouped by op")
    if kind == "kernel":
        events = _merge_tile_launches(events)
    gpu = attribute_kernels(events)
    selfs = self_times(events)
    groups = {}
    for i, e in enumerate(events):
        if e.kind != kind and not (kind == "kernel" and e.kind in ("tile_launch", "library")):
            continue
        time_ns = _time_of(i, e, gpu)
        g = groups.setdefault((_key(e, group_by), e.device_name), {"times": [], "self": 0, "bytes": 0.0,
                                                                   "flops": 0.0, "dtype": None, "model": e.model,
                                                                   "gpu": False})
        g["times"].append(time_ns)
        g["self"] += selfs.get(i, time_ns)
        g["bytes"] += e.bytes
        g["flops"] += e.flops
        g["gpu"] |= e.gpu_ns >= 0 or i in gpu
        if e.outputs and g["dtype"] is None:
            g["dtype"] = e.outputs[0][1]
    rows = [_row(name, device, g, ceilings) for (name, device), g in groups.items()]
    if any(r["device"] != "cpu" and r["timing"] == "host" for r in rows):
        notes.append("GPU rows timed on the host (launch cost only): no kernel device times were recorded")
    columns = {"total": "total_us", "self": "self_us", "mean": "mean_us", "min": "min_us", "max": "max_us"}
    field = columns.get(sort_by, sort_by)
    if field == "name":
        rows.sort(key=lambda r: r["name"])
    else:  # largest first; rows without a rate last
        rows.sort(key=lambda r: (r[field] is None, -(r[field] or 0)))
    return Table(rows[:top] if top else rows, group_by, notes, memory_summary(events))


def _merge_tile_launches(events):
    """Kernels take the cost model of what launched them: a GPU tile launch is also a kernel event,
    counted once, with the kernel's device time and the launch's bytes and flops (from the tile
    IR); a kernel that is the only one its op launched takes the op's bytes and flops. The
    innermost owner wins (a tile launch inside an op, an op inside another)."""
    by_thread = {}
    for i, k in enumerate(events):
        if k.kind in ("kernel", "library"):
            by_thread.setdefault(k.thread, []).append((k.t0_ns, i))
    for launches in by_thread.values():
        launches.sort()
    owners = sorted((i for i, e in enumerate(events) if e.kind in ("tile_launch", "op") and (e.bytes or e.flops
                                                                                          or e.kind == "tile_launch")),
                    key=lambda i: events[i].host_ns)
    dropped, cost = set(), {}
    for i in owners:
        e = events[i]
        launches = by_thread.get(e.thread, [])
        lo, hi = bisect.bisect_left(launches, (e.t0_ns, -1)), bisect.bisect_right(launches, (e.t1_ns, len(events)))
        inner = [k for _, k in launches[lo:hi]]
        if e.kind == "tile_launch" and inner:
            dropped.add(i)
            cost.setdefault(inner[0], (e.bytes, e.flops))
        elif e.kind == "op" and len(inner) == 1:
            cost.setdefault(inner[0], (e.bytes, e.flops))
    out = []
    for i, e in enumerate(events):
        if i in cost and not (e.bytes or e.flops):
            e = e._replace(bytes=cost[i][0], flops=cost[i][1])
        if i not in dropped:
            out.append(e)
    return out


def _time_of(i, e, gpu):
    if e.gpu_ns >= 0:
        return e.gpu_ns
    return gpu.get(i, e.host_ns)


def _row(name, device, g, want_ceilings):
    times = g["times"]
    total = sum(times)
    seconds = total / 1e9
    gbps = g["bytes"] / seconds / 1e9 if seconds > 0 and g["bytes"] else None
    gflops = g["flops"] / seconds / 1e9 if seconds > 0 and g["flops"] else None
    fraction = None
    if want_ceilings and (gbps or gflops):
        c = _ceilings.for_device(device)
        if gflops:
            intensity = g["flops"] / g["bytes"] if g["bytes"] else float("inf")
            fraction = gflops / c.bound(intensity, g["dtype"] or "float32", g["model"])
        else:
            fraction = gbps / c.bandwidth
    return Row(name=name, device=device, calls=len(times), total_us=total / 1e3, self_us=g["self"] / 1e3,
               mean_us=total / len(times) / 1e3, min_us=min(times) / 1e3, max_us=max(times) / 1e3,
               bytes=g["bytes"], flops=g["flops"], gbps=gbps, gflops=gflops, roof_fraction=fraction,
               timing="device" if g["gpu"] else "host")
