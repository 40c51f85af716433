"""The package's import graph: every module of cupric.tile imports on its own in a fresh
interpreter, and no module of cupric imports (at any depth of its body, deferred imports
included) a module that imports it back."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import cupric

PACKAGE_ROOT = Path(cupric.__file__).resolve().parent
TILE_MODULES = sorted(f"cupric.tile.{p.stem}" for p in (PACKAGE_ROOT / "tile").glob("*.py") if p.stem != "__init__")


def _module_name(path, root):
    parts = ["cupric", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1]) if parts[-1] == "__init__" else ".".join(parts)


def _package_of(name, path):
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def import_graph(root=PACKAGE_ROOT):
    """{module: {modules of the package it imports}} from every import statement in its source
    (functions' bodies too: a deferred import is still an edge). `from . import x` names module x
    when x is a module, else the package itself."""
    modules = {_module_name(p, root): p for p in root.rglob("*.py")}
    modules["cupric._cupric"] = None  # the compiled extension: a leaf
    graph = {}
    for name, path in modules.items():
        edges = set()
        if path is None:
            graph[name] = edges
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = _package_of(name, path)
                    for _ in range(node.level - 1):
                        package = package.rpartition(".")[0]
                    base = f"{package}.{base}" if base else package
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in modules and t != name}
        graph[name] = edges
    return graph


def find_cycle(graph):
    """One import cycle as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == "open":
                return stack[stack.index(n) :] + [n]
            if n not in state and (cycle := visit(n)):
                return cycle
        stack.pop()
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            return cycle
    return None


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert "cupric.tile._kernel" in graph and "cupric.tile._paths" in graph["cupric.tile._kernel"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_deferred_and_relative_imports_are_edges(tmp_path):
    pkg = tmp_path / "cupric"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import sub\n")
    (pkg / "_leaf.py").write_text("X = 1\n")
    (pkg / "sub" / "__init__.py").write_text("from ._a import f\n")
    (pkg / "sub" / "_a.py").write_text("from .. import _leaf\n\ndef f():\n    from ._b import g\n    return g\n")
    (pkg / "sub" / "_b.py").write_text("from . import _a\nfrom .._leaf import X\n")
    graph = import_graph(pkg)
    assert graph["cupric.sub._a"] == {"cupric._leaf", "cupric.sub._b"}
    assert graph["cupric.sub._b"] == {"cupric.sub._a", "cupric._leaf"}
    assert find_cycle(graph) == ["cupric.sub._a", "cupric.sub._b", "cupric.sub._a"]


def test_each_tile_module_imports_alone_in_a_fresh_interpreter():
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    procs = {
        m: subprocess.Popen([sys.executable, "-c", f"import {m}"], stderr=subprocess.PIPE, text=True, env=env)
        for m in TILE_MODULES
    }
    failures = {m: p.communicate(timeout=120)[1] for m, p in procs.items()}
    failures = {m: err.strip().splitlines()[-1] for m, err in failures.items() if procs[m].returncode != 0}
    assert not failures, failures
    assert len(TILE_MODULES) >= 10
