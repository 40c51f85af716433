"""Every Python block of README.md and docs/*.md runs as written, each in a fresh interpreter.

Fence info strings say how: ```python runs everywhere (on the CPU here), ```python gpu runs only
where a GPU is present, ```python fragment is not run (a piece of a larger program). In a block
whose print calls carry `# -> text`, the printed lines must read as that text, in order."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)(.*)$")


def blocks(page):
    """(line, info words, code) of each fenced block of `page`."""
    out, lines, i = [], page.read_text().splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group(1):
            start, info, body = i + 1, [m.group(1), *m.group(2).split()], []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((start, info, "\n".join(body) + "\n"))
        i += 1
    return out


def python_blocks():
    for page in PAGES:
        for line, info, code in blocks(page):
            if info[0] == "python":
                marks = [pytest.mark.gpu] if "gpu" in info else []
                yield pytest.param(info[1:], code, id=f"{page.name}:{line}", marks=marks)


def expected_output(code):
    """The `# -> text` of each print line, or None when the block states no output."""
    prints = [ln for ln in code.splitlines() if re.match(r"\s*print\(", ln)]
    stated = [ln.split("# -> ", 1)[1].rstrip() for ln in prints if "# -> " in ln]
    if not stated:
        return None
    assert len(stated) == len(prints), "state the output of every print of the block, or of none"
    return stated


@pytest.mark.parametrize("info, code", list(python_blocks()))
def test_docs_block_runs(info, code, tmp_path):
    unknown = set(info) - {"gpu", "fragment"}
    assert not unknown, f"unknown fence words {unknown}: use 'gpu' or 'fragment'"
    if "fragment" in info:
        pytest.skip("a fragment")
    missing = [m for m in re.findall(r"^(?:import|from) (\w+)", code, re.M) if importlib.util.find_spec(m) is None]
    if missing:  # an optional client (Dask, ...): `make test` installs them before running this
        pytest.skip(f"needs {', '.join(missing)}")
    env = dict(os.environ)
    if "gpu" not in info:
        env["CUPRIC_DEVICE"] = "cpu"
    script = tmp_path / "block.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, f"the block failed:\n{code}\n{proc.stderr}"
    want = expected_output(code)
    if want is not None:
        assert [ln.rstrip() for ln in proc.stdout.splitlines()] == want


def test_every_docs_page_is_listed_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in readme, f"README.md does not list docs/{page.name}"
