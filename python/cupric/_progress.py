"""Progress of long work on stderr (autotuning, `python -m cupric.cache warm`, compiles past a
second): what, n of m, elapsed, redrawn on one line; silent unless stderr is a terminal, and
silent under CUPRIC_QUIET=1, so logs and pipes never see it."""

import os
import sys
import threading
import time


def enabled(stream=None):
    """Whether progress goes to `stream` (default stderr): a terminal, and CUPRIC_QUIET unset or 0."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("CUPRIC_QUIET", "0") not in ("", "0"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Progress:
    """`with Progress("autotune matmul", total=8) as p: ... p.step("BLOCK_M=64")`.

    With `delay` > 0 nothing shows until the work has run that long (a compile that is usually
    quick stays silent); from then a timer redraws the elapsed time every `interval` seconds."""

    def __init__(self, what, total=None, delay=0.0, interval=0.5, stream=None):
        self.what, self.total, self.delay, self.interval = what, total, delay, interval
        self.stream = sys.stderr if stream is None else stream
        self.on = enabled(self.stream)
        self.done, self.detail = 0, ""
        self._t0 = None
        self._shown = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer = None

    def __enter__(self):
        self._t0 = time.perf_counter()
        if self.on and (self.delay > 0 or self.total is None):
            self._timer = threading.Thread(target=self._tick, name="cupric-progress", daemon=True)
            self._timer.start()
        elif self.on:
            self._draw()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
        with self._lock:
            if self._shown:
                self._write("\r\x1b[K" + self.line() + (" failed" if exc[0] is not None else "") + "\n")
        return False

    def step(self, detail=""):
        """One more of `total` done; `detail` names what comes next (or what just finished)."""
        with self._lock:
            self.done += 1
            self.detail = str(detail)
        if self.on and time.perf_counter() - self._t0 >= self.delay:
            self._draw()

    def elapsed(self):
        return 0.0 if self._t0 is None else time.perf_counter() - self._t0

    def line(self):
        """The text shown: 'cupric: what  3 of 8  (detail)  1.4 s'."""
        count = f"  {self.done} of {self.total}" if self.total is not None else ""
        detail = f"  ({self.detail})" if self.detail else ""
        return f"cupric: {self.what}{count}{detail}  {self.elapsed():.1f} s"

    def _tick(self):
        if self._stop.wait(self.delay):
            return
        while True:
            self._draw()
            if self._stop.wait(self.interval):
                return

    def _draw(self):
        with self._lock:
            self._write("\r\x1b[K" + self.line())
            self._shown = True

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not break the work
            self.on = False


def after_a_second(what):
    """Progress for one compile: shown only once it has run a second."""
    return Progress(what, delay=1.0)
