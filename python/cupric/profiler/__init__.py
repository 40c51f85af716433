"""cupric.profiler: where a program's time goes, op by op.

    with cu.profiler.profile() as prof:
        run()
    print(prof.table(sort_by="total", group_by="op"))
    prof.export_chrome_trace("trace.json")   # Perfetto / chrome://tracing
    prof.roofline("roofline.png")

Ops are recorded by the C++ core (one relaxed flag check per op when off); user ranges with
`cu.profiler.range("name")`; NVTX markers for Nsight with `cu.profiler.nvtx(True)`;
`cu.profiler.benchmark(f, args)` times a function on the host and the device (docs/profiling.md).
"""

import contextlib
import functools
import os
import platform
import sys
import warnings

from .. import _cupric
from . import _events, _table, _trace
from ._benchmark import benchmark  # noqa: F401

_core = _cupric._profiler
_active = []  # the profiles being recorded, innermost last

__all__ = ["profile", "Profile", "range", "nvtx", "benchmark"]


class Profile:
    """A recording: events between start() and stop() (the context manager calls both)."""

    def __init__(self, device_times="auto"):
        if device_times not in ("auto", "events", "cupti"):
            raise ValueError(f"device_times must be 'auto', 'events' or 'cupti', got {device_times!r}")
        self.device_times = device_times
        self.notes = []
        self.events = []
        self.start_ns = self.stop_ns = None

    def start(self):
        if _active:
            raise RuntimeError("a cupric profile is recording already (profiles do not nest)")
        _core.take_events()  # drop anything left from a recording that ended badly
        if self.device_times == "auto":  # CUPTI where there is a GPU to time, quietly events where it cannot start
            self.device_times = "cupti" if _gpu_present() and not _start_cupti() else "events"
        elif self.device_times == "cupti":
            problem = _start_cupti()
            if problem:
                self.device_times = "events"
                self.notes.append(f"kernel times from CUDA events: CUPTI is not available ({problem})")
        self.start_ns = _core.now_ns()
        _active.append(self)
        _core.set_mode("record", True)
        return self

    def stop(self):
        if not _active or _active[-1] is not self:
            raise RuntimeError("this profile is not recording")
        _core.set_mode("record", False)
        _active.pop()
        self.stop_ns = _core.now_ns()
        self.events = _events.from_core(_core.take_events())
        if self.device_times == "cupti":
            self._note_cupti(*_core.cupti_counts())
        return self

    def _note_cupti(self, records, untimed, correlations):
        """Says why kernels launched under CUPTI have no device time, from what CUPTI delivered."""
        missing = sum(1 for e in self.events if e.kind == "kernel" and e.gpu_ns < 0)
        if untimed:
            self.notes.append(f"CUPTI gave {untimed} records without timestamps; their kernels show no device time")
        elif missing:
            self.notes.append(f"{missing} kernels have no CUPTI time: CUPTI delivered {records} kernel and copy "
                              f"records and {correlations} correlation records")

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # what was recorded
    def ops(self):
        return [e for e in self.events if e.kind == "op"]

    def table(self, sort_by="total", group_by="op", top=None, ceilings=True):
        """Calls, total/self/mean/min/max microseconds, GB/s, GFLOP/s and the fraction of the
        roofline bound per group ("op", "kernel" or "shape"); print it or read its rows."""
        table = _table.build(self.events, sort_by=sort_by, group_by=group_by, ceilings=ceilings, top=top)
        table.notes.extend(self.notes)
        return table

    def metadata(self):
        return {"python": sys.version.split()[0], "machine": platform.machine(), "pid": os.getpid(),
                "duration_ns": (self.stop_ns or 0) - (self.start_ns or 0)}

    def export_chrome_trace(self, path):
        return _trace.write_chrome_trace(path, self.events, self.start_ns, self.metadata())

    def export_json(self, path):
        return _trace.write_json(path, self.events, self.start_ns, self.metadata())

    def roofline(self, path, group_by="op"):
        from . import _roofline

        return _roofline.draw(self.table(group_by=group_by), path)


def profile(device_times="auto"):
    """A new Profile, recording inside a `with` block. device_times: how kernels and copies are
    timed on a GPU: "cupti" (CUPTI's activity records, loaded from the nvidia-cuda-cupti wheel or
    a toolkit; events, with a note, where it cannot start), "events" (a pair of CUDA events around
    each), or "auto" (the default: CUPTI where there is a GPU and CUPTI starts, else events)."""
    return Profile(device_times)


def _gpu_present():
    return _cupric._cuda.is_available()


def _cupti_candidates():
    for base in sys.path:
        # CUDA 13's wheel first: an older CUPTI under a newer driver is what failed on the H200
        for sub, names in (("nvidia/cu13/lib", ("libcupti.so.13", "libcupti.so")),
                           ("nvidia/cuda_cupti/lib", ("libcupti.so.12", "libcupti.so"))):
            for name in names:
                path = os.path.join(base, sub, name)
                if os.path.exists(path):
                    yield path
    for root in filter(None, (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda")):
        for name in ("libcupti.so.13", "libcupti.so.12", "libcupti.so"):
            path = os.path.join(root, "extras", "CUPTI", "lib64", name)
            if os.path.exists(path):
                yield path
    yield "libcupti.so"


def _start_cupti():
    """Starts CUPTI from the first library that loads; the problem as text, or "" when it runs."""
    problems = []
    for path in _cupti_candidates():
        ok, problem = _core.cupti_start(path)
        if ok:
            return ""
        problems.append(problem)
    return problems[-1] if problems else ("libcupti not found (pip install nvidia-cuda-cupti for CUDA 13, "
                                          "nvidia-cuda-cupti-cu12 for CUDA 12, or set CUDA_HOME)")


class range(contextlib.ContextDecorator):  # noqa: A001  (cu.profiler.range, as torch's record_function)
    """A named user range, as a context manager or a decorator: recorded while a profile runs and
    sent to NVTX while the markers are on."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"range name must be a str, got {type(name).__name__}")
        self.name = name
        self._starts = []

    def __enter__(self):
        if _core.mode("nvtx"):
            _core.nvtx_push(self.name)
        self._starts.append(_core.now_ns())
        return self

    def __exit__(self, *exc):
        t0 = self._starts.pop()
        if _core.mode("record"):
            _core.record("range", self.name, t0, _core.now_ns(), "raised" if exc[0] else "")
        if _core.mode("nvtx"):
            _core.nvtx_pop()
        return False


_NVTX_NAMES = ("libnvToolsExt.so.1", "libnvToolsExt.so")


def _nvtx_candidates():
    for base in sys.path:  # the nvidia-nvtx wheels: nvidia/nvtx/lib, nvidia/cu13/lib
        for sub in ("nvidia/nvtx/lib", "nvidia/cu13/lib", "nvidia/cuda_nvtx/lib"):
            for name in _NVTX_NAMES:
                path = os.path.join(base, sub, name)
                if os.path.exists(path):
                    yield path
    for root in filter(None, (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda")):
        for name in _NVTX_NAMES:
            yield os.path.join(root, "lib64", name)
    yield from _NVTX_NAMES  # the dynamic linker's search


@functools.lru_cache(maxsize=1)
def _load_nvtx():
    return any(_core.nvtx_load(path) for path in _nvtx_candidates())


def nvtx(enabled=True):
    """Turns NVTX ranges for every op and user range on or off (Nsight Systems shows them over the
    kernels). Returns whether markers are on: False, with one warning, when libnvToolsExt is absent."""
    if enabled and not _load_nvtx():
        if not getattr(nvtx, "_warned", False):
            nvtx._warned = True
            warnings.warn("cupric.profiler.nvtx: libnvToolsExt not found (pip install nvidia-nvtx-cu12, or set "
                          "CUDA_HOME); NVTX markers stay off", RuntimeWarning, stacklevel=2)
        return False
    _core.set_mode("nvtx", bool(enabled))
    return bool(enabled)
