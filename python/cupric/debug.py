"""cupric.debug: modes that find the op behind a fault or a NaN.

    cu.debug.sync()            # or CUPRIC_SYNC=1: every op waits for its kernels, so an
                               # asynchronous GPU fault is raised by the op that caused it
    with cu.debug.check_finite():   # or CUPRIC_CHECK_FINITE=1: the first op whose output holds
        run()                       # NaN or Inf raises FloatingPointError

Both name the op, its inputs' shapes and dtypes and the Python line that called it. Each is a
function that turns the mode on and returns a context manager restoring the previous state.
"""

import os
import sys

from . import _cupric

_core = _cupric._profiler
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep

__all__ = ["sync", "check_finite"]


def _caller_location():
    """file:line (function) of the innermost frame outside the cupric package."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return "an unknown line"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} (in {frame.f_code.co_name})"


_core.set_location_callback(_caller_location)


class _Mode:
    """Turns a mode on or off at once; as a context manager, restores the previous state on exit."""

    def __init__(self, mode, enabled):
        self._mode = mode
        self._previous = _core.mode(mode)
        _core.set_mode(mode, bool(enabled))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _core.set_mode(self._mode, self._previous)
        return False

    def __bool__(self):
        return _core.mode(self._mode)


def sync(enabled=True):
    """Every op waits for its kernels before returning (CUPRIC_SYNC=1 at import does the same)."""
    return _Mode("sync", enabled)


def check_finite(enabled=True):
    """After each op, a check that its floating or complex output holds no NaN or Inf; the first
    op that breaks it raises FloatingPointError (CUPRIC_CHECK_FINITE=1 at import does the same)."""
    return _Mode("check_finite", enabled)


def _from_environment():
    for variable, mode in (("CUPRIC_SYNC", "sync"), ("CUPRIC_CHECK_FINITE", "check_finite")):
        value = os.environ.get(variable, "")
        if value not in ("", "0"):
            _core.set_mode(mode, True)


_from_environment()
