"""tools/coverage.py and docs/coverage.md: every NumPy name cupric has runs in a test on the CPU and
on CUDA, at least FLOOR names run on both, and the page is what the tool writes today."""

import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "coverage.py"


def _tool():
    spec = importlib.util.spec_from_file_location("coverage_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def whole_suite(items):
    """True when `items` hold every test module of tests/python: what the tool itself collects."""
    collected = {pathlib.Path(str(item.path)) for item in items}
    return collected >= set((ROOT / "tests" / "python").rglob("test_*.py"))


@pytest.fixture(scope="module")
def facts(tmp_path_factory, collected_items):
    """The tool's facts: from this session's collection when it is the whole suite (a second
    collection of 9,000 tests costs a worker most of a minute), else from a process of the tool's
    own, which collects the suite with pytest."""
    suite = ROOT / "tests" / "python"
    items = [item for item in collected_items if pathlib.Path(str(item.path)).is_relative_to(suite)]
    if whole_suite(items):
        return _tool().facts(items)
    out = tmp_path_factory.mktemp("coverage") / "facts.json"
    done = subprocess.run([sys.executable, str(TOOL), "--json", str(out)], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out.read_text())


def test_every_name_cupric_has_runs_in_a_test_on_both_devices(facts):
    assert facts["untested"] == [], (
        "these names have no test on the device named (a device-parametrized test whose cuda param is "
        "marked gpu; tests/python/test_namespace_devices.py has a table for such cases)")


def test_enough_names_run_on_both_devices(facts):
    assert facts["runs_on_both"] >= _tool().FLOOR


def test_the_page_is_what_the_tool_writes(facts):
    page = (ROOT / "docs" / "coverage.md").read_text()
    if f"NumPy {np.__version__}." not in page:
        pytest.skip(f"docs/coverage.md was written with another NumPy than {np.__version__}")
    assert facts["current"], "docs/coverage.md is stale: run .venv/bin/python tools/coverage.py"


def test_evidence_reads_device_marks_strings_and_attributes():
    tool = _tool()
    tree = tool.ast.parse("def t(device):\n    cu.linalg.norm(x); getattr(cu, 'hstack'); cu.pad(x)\n")
    found = set()
    module = type(sys)("m")
    tool._Mentions(module, {"cu": ["numpy"]}, found, set()).visit(tree)
    assert {("linalg", "norm"), ("numpy", "pad"), ("string", "hstack"), ("module", "linalg")} <= found
    spaces = tool.cupric_namespaces()
    assert tool._spaces_of("string", "linalg.pinv", set(), spaces) == ["linalg"]
    assert tool._spaces_of("string", "pinv", set(), spaces) == []
    assert tool._spaces_of("string", "pinv", {"linalg"}, spaces) == ["linalg"]
    assert tool._spaces_of("string", "no_such_name", {"linalg"}, spaces) == []


def test_classification_of_absent_and_present_names():
    tool = _tool()
    import cupric as cu

    assert tool._kind_of_absent("numpy", "datetime64", np.datetime64)[0] == "n/a"
    assert tool._kind_of_absent("numpy", "no_such_function", np.fft.fft) == ("fallback", "")
    assert tool._kind_of_absent("random", "beta", np.random.beta) == ("missing", "")
    assert tool._kind_of_present("numpy", "pi", cu.pi) == ("n/a", "a constant")
    assert tool._kind_of_present("numpy", "float32", cu.float32) == ("claimed", "")
    assert tool._kind_of_present("numpy", "floating", cu.floating)[0] == "n/a"
    assert tool._kind_of_present("numpy", "pad", cu.pad) == ("claimed", "")
    assert tool._kind_of_present("numpy", "mgrid", cu.mgrid) == ("claimed", "")
