"""The suite's own conventions: test modules have distinct names across tests/ (pytest imports them
by basename, so two of a name fail a run that collects both), and tests say what hardware they need
with the `gpu` / `nvrtc` markers (tests/conftest.py), not with skip conditions of their own."""

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
OWN_SKIP = re.compile(r"skipif\(\s*not\s+[^,]*(is_available\(\)|nvrtc|HAS_GPU|HAS_NVRTC)", re.IGNORECASE)


def test_module_names_are_distinct_across_the_suite():
    seen = {}
    for path in sorted(TESTS.rglob("*.py")):
        if path.name.startswith("test_") or path.name.endswith("_helpers.py"):
            seen.setdefault(path.name, []).append(str(path.relative_to(TESTS)))
    assert len(seen) > 50
    assert {n: p for n, p in seen.items() if len(p) > 1} == {}


def test_gpu_and_nvrtc_needs_are_markers():
    found = [
        f"{path.relative_to(TESTS)}:{text[: m.start()].count(chr(10)) + 1}"
        for path in sorted(TESTS.rglob("*.py"))
        if path != Path(__file__).resolve()
        for text in [path.read_text()]
        for m in OWN_SKIP.finditer(text)
    ]
    assert found == [], "use @pytest.mark.gpu / @pytest.mark.nvrtc instead of these skip conditions"
    assert OWN_SKIP.search('@pytest.mark.skipif(not cu.cuda.is_available(), reason="no GPU")')
    assert OWN_SKIP.search('skipif(not _cuda.nvrtc_available(), reason="NVRTC is not installed")')
