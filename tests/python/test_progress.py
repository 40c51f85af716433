"""cupric._progress: progress of long work on a terminal's stderr, silent elsewhere."""

import io
import time

import pytest
from cupric import _progress


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def _not_quiet(monkeypatch):
    monkeypatch.delenv("CUPRIC_QUIET", raising=False)


def test_counted_work_shows_what_n_of_m_and_elapsed_on_a_terminal():
    out = FakeTTY()
    with _progress.Progress("autotuning k", total=3, stream=out) as p:
        for c in ("a", "b", "c"):
            p.step(c)
    text = out.getvalue()
    assert "cupric: autotuning k  1 of 3  (a)" in text and "3 of 3  (c)" in text
    assert text.endswith(" s\n") and "\r\x1b[K" in text


def test_nothing_is_written_when_stderr_is_not_a_terminal():
    out = io.StringIO()
    with _progress.Progress("warming", total=2, stream=out) as p:
        p.step()
        p.step()
    assert out.getvalue() == ""


@pytest.mark.parametrize("value", ["1", "yes"])
def test_cupric_quiet_silences_a_terminal(monkeypatch, value):
    monkeypatch.setenv("CUPRIC_QUIET", value)
    out = FakeTTY()
    with _progress.Progress("warming", total=1, stream=out) as p:
        p.step()
    assert out.getvalue() == "" and not _progress.enabled(out)


def test_a_delayed_progress_stays_silent_for_quick_work_and_shows_slow_work():
    quick = FakeTTY()
    with _progress.Progress("compiling k", delay=0.5, stream=quick):
        pass
    assert quick.getvalue() == ""
    slow = FakeTTY()
    with _progress.Progress("compiling k", delay=0.05, interval=0.02, stream=slow):
        time.sleep(0.2)
    assert "cupric: compiling k" in slow.getvalue() and slow.getvalue().endswith("\n")


def test_a_failure_is_marked_and_raised():
    out = FakeTTY()
    with pytest.raises(RuntimeError, match="boom"), _progress.Progress("tuning", total=2, stream=out) as p:
        p.step()
        raise RuntimeError("boom")
    assert out.getvalue().rstrip().endswith("failed")
