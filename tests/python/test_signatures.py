"""Signatures users can read: help() shows what each argument accepts (cupric.typing's names), every
ufunc has its own docstring from the table, and the committed stubs (python/cupric/_cupric.pyi)
match the bindings."""

import ast
import pathlib
import subprocess
import sys

import cupric as cu
import pytest
from cupric import typing as cutyping

ROOT = pathlib.Path(__file__).resolve().parents[2]
STUBS = ROOT / "python" / "cupric" / "_cupric.pyi"
# Parameters that may stay `object` (by function; a private submodule's prefixed with its name), each
# with its reason; everything else names what it accepts.
BARE_OBJECT_ALLOWED = {
    "Device.__eq__": "Python's data model: == compares with any object (False for what is no device)",
    "_cuda.Device.__eq__": "Python's data model: == compares with any object (False for what is no device)",
    "_cuda.Stream.__eq__": "Python's data model: == compares with any object (False for what is no stream)",
    "_tile.make_launch_plan": "tag: any value of the caller's, handed back by LaunchPlans.launch when the plan runs",
}
UFUNCS = sorted({getattr(cu, n).name for n in dir(cu) if isinstance(getattr(cu, n), cu.ufunc)})  # aliases once


def signature_line(fn):
    return fn.__doc__.split("\n", 1)[0]


@pytest.mark.parametrize("name", ["sum", "mean", "argmax", "cumulative_sum", "clip", "round", "reshape", "stack",
                                  "arange", "linspace", "isclose", "where", "concat", "moveaxis"])
def test_namespace_functions_name_what_they_accept(name):
    line = signature_line(getattr(cu, name))
    assert line.startswith(f"{name}(")
    assert ": object" not in line, f"an untyped parameter: {line}"
    assert not line.endswith("-> object"), f"an untyped result: {line}"


def test_typing_names_exist():
    for name in ("ArrayLike", "AxisLike", "DTypeLike", "DeviceLike", "ScalarLike", "ShapeLike", "IndexLike", "SeedLike",
                 "StreamLike", "DLPackDevice", "SupportsDLPack"):
        assert hasattr(cutyping, name), name
    line = signature_line(cu.sum)
    for used in ("cupric.typing.ArrayLike", "cupric.typing.AxisLike", "cupric.typing.DTypeLike", "cupric.ndarray"):
        assert used in line


def test_every_ufunc_has_its_own_docstring():
    docs = {}
    for name in UFUNCS:
        uf = getattr(cu, name) if hasattr(cu, name) else getattr(cu._cupric, name)
        doc = uf.__doc__
        assert doc.startswith(f"{uf.name}(x"), doc
        first = doc.split("\n\n")[1]
        assert first and first not in docs.values(), f"{name}: {first!r} is not its own"
        docs[name] = first
        for loop in uf.types:  # the dtypes it lists are the loops it has
            assert loop[0] in "?bBhHiIlLeEfdFD45"
    assert "The sum x1 + x2" in cu.add.__doc__ and "complex128" in cu.add.__doc__
    assert "bool" not in cu.sqrt.__doc__.split("Inputs with a loop: ")[1].split(" (")[0]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The stubs the bindings give today (one stubgen run): _cupric.pyi and private/<submodule>.pyi."""
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path_factory.mktemp("stubs")
    subprocess.run([sys.executable, str(ROOT / "tools" / "stubs.py"), "--output", str(out / "_cupric.pyi"),
                    "--private", str(out / "private")], check=True, capture_output=True, text=True)
    return out


def test_committed_stubs_match_the_bindings(generated):
    committed = STUBS
    assert committed.read_text() == (generated / "_cupric.pyi").read_text(), (
        "stale stubs: run `python tools/stubs.py` and commit")
    assert (ROOT / "python" / "cupric" / "py.typed").exists()


def bare_object_parameters(stub_text):
    """`Qualified.name(param)` for every parameter annotated `object` (alone or `object | None`)."""
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef):
                args = child.args
                for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                    if arg is None or arg.annotation is None:
                        continue
                    names = {n.id for n in ast.walk(arg.annotation) if isinstance(n, ast.Name)}
                    if "object" in names:
                        found.append(f"{prefix}{child.name}({arg.arg})")
    visit(ast.parse(stub_text), "")
    return found


def test_no_parameter_is_a_bare_object(generated):
    """In the public stubs and in every private submodule's (cupric._cupric._tile, ...)."""
    private = sorted((generated / "private").glob("*.pyi"))
    assert {p.stem for p in private} >= {"_cuda", "_profiler", "_tile"}, private
    found = bare_object_parameters(STUBS.read_text())
    for stub in private:
        found += [f"{stub.stem}.{p}" for p in bare_object_parameters(stub.read_text())]
    bare = [p for p in found if p.split("(")[0] not in BARE_OBJECT_ALLOWED]
    assert not bare, f"parameters typed `object` (give them a cupric.typing name in py_types.hpp): {bare}"
    unused = set(BARE_OBJECT_ALLOWED) - {p.split("(")[0] for p in found}
    assert not unused, f"allowed but no longer `object` (drop them from BARE_OBJECT_ALLOWED): {unused}"


def test_bare_object_check_finds_them():
    stub = ("class A:\n    def f(self, x: object | None = ..., *, y: int = ...) -> None: ...\n"
            "def g(z: object, /) -> int: ...\n")
    assert bare_object_parameters(stub) == ["A.f(x)", "g(z)"]
