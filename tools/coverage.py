"""docs/coverage.md, generated from the code: NumPy's public names (numpy, numpy.linalg, numpy.fft,
numpy.random, numpy.emath) against cupric's, per device, each "runs" name with a test that shows it running there.

    .venv/bin/python tools/coverage.py            # rewrites docs/coverage.md
    .venv/bin/python tools/coverage.py --check    # exit 1 if the page is stale or a name lacks tests
    .venv/bin/python tools/coverage.py --json F   # the facts as JSON (tests/python/test_coverage.py)

Evidence is read from the test suite as pytest collects it (tests/python, no test runs): a collected
test is a CUDA test when it carries the `gpu` mark (a `device` parameter's cuda value, the module's
`pytestmark`, or its own), else a CPU test. A test mentions a name when its code (the test function
and the helpers of its module it calls) writes `cu.NAME` (`cu.linalg.NAME`, ...), holds the string
"NAME", or when one of its parameters is that string or that cupric object.
"""

import argparse
import ast
import contextlib
import inspect
import io
import json
import pathlib
import sys
import textwrap
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "coverage.md"
FLOOR = 450  # names that run on both devices (issue 15); tests/python/test_coverage.py holds it
NAMESPACES = ("numpy", "linalg", "fft", "random", "emath")
# Tests about the namespace itself (names, signatures, error messages, this page): they mention
# names without running them, so they are no evidence.
NOT_EVIDENCE = {"test_coverage.py", "test_numpy_names.py", "test_signatures.py", "test_errors.py",
                "test_docs.py", "test_imports.py", "test_suite_layout.py"}
DEVICES = ("cpu", "cuda")

STRINGS = "string and bytes arrays are out of scope (issue 15)"
DATETIME = "datetime64/timedelta64 are out of scope (issue 15)"
LONG = "no extended precision: cupric's widest floats are float64/complex128 (no GPU has more)"
# NumPy names cupric does not mean to have, and why (numpy.X, then numpy.<module>.X).
OUT_OF_SCOPE = {
    "numpy": {
        **dict.fromkeys(("asmatrix", "bmat", "matrix"), "numpy.matrix is out of scope (NumPy itself discourages it)"),
        **dict.fromkeys(("busday_count", "busday_offset", "busdaycalendar", "is_busday", "datetime64",
                         "datetime_as_string", "datetime_data", "isnat", "timedelta64"), DATETIME),
        **dict.fromkeys(("bytes_", "str_", "character", "flexible", "void", "char", "strings"), STRINGS),
        **dict.fromkeys(("object_",), "object arrays are out of scope (issue 15)"),
        **dict.fromkeys(("clongdouble", "complex256", "float128", "longdouble"), LONG),
        **dict.fromkeys(("rec", "recarray", "record"), "record arrays are out of scope (issue 15)"),
        "ma": "masked arrays are out of scope (issue 15)",
        "ctypeslib": "ctypes interop is out of scope (issue 15): cupric arrays export DLPack and the array interfaces",
        "f2py": "Fortran wrapping is out of scope (issue 15)",
        "test": "NumPy's own test runner", "info": "NumPy's help browser",
        "get_include": "NumPy's C headers: cupric has no C API of NumPy's kind",
        "core": "NumPy's private implementation package (deprecated alias)",
        "memmap": "file-backed host memory: use numpy.memmap and cu.asarray (a GPU cannot map a file)",
        **dict.fromkeys(("nditer", "nested_iters"),
                        "element-by-element Python iteration over device memory is out of scope: np.nditer(x.get()) on "
                        "a host copy, or a ufunc or tile kernel"),
        "polynomial": "the numpy.polynomial package (classes Polynomial, Chebyshev, ...) is out of scope for now",
        "sctypeDict": "NumPy's table of type names (includes out-of-scope types); use cu.dtype(name)",
        "dtypes": "NumPy's DType classes: cupric's dtypes are numpy.dtype instances already",
        "fromregex": "its result is a structured array, out of scope (cupric's fromregex says so)",
        "exceptions": "numpy.exceptions itself: cupric's AxisError is caught as numpy.exceptions.AxisError",
    },
    "linalg": {"test": "NumPy's own test runner"},
    "fft": {"test": "NumPy's own test runner"},
    "random": {
        "test": "NumPy's own test runner", "mtrand": "NumPy's legacy module",
        **dict.fromkeys(("BitGenerator", "MT19937", "PCG64", "PCG64DXSM", "SFC64", "Philox", "RandomState",
                         "SeedSequence", "bit_generator", "get_bit_generator", "set_bit_generator",
                         "get_state", "set_state"),
                        "cupric's Generator is Philox4x32-10 with a counter (the same stream on every device); "
                        "NumPy's bit generators and their state are out of scope"),
    },
}
# Names cupric has that touch no array data, so no device applies: dtype and type queries,
# global settings.
NO_ARRAYS = {
    "can_cast": "dtype query", "promote_types": "dtype query", "issubdtype": "dtype query",
    "isdtype": "dtype query", "finfo": "dtype query", "iinfo": "dtype query", "typename": "dtype query",
    "mintypecode": "dtype query", "format_float_positional": "formats a Python scalar",
    "format_float_scientific": "formats a Python scalar", "get_printoptions": "a setting",
    "set_printoptions": "a setting", "printoptions": "a setting", "geterr": "a setting",
    "seterr": "a setting", "errstate": "a setting", "geterrcall": "a setting", "seterrcall": "a setting",
    "getbufsize": "a setting", "setbufsize": "a setting", "show_config": "prints the build",
    "show_runtime": "prints the machine", "get_matmul_precision": "a setting",
    "set_matmul_precision": "a setting", "seed": "seeds the global Generator", "iterable": "a Python query",
    "isscalar": "a Python query", "binary_repr": "formats a Python int", "base_repr": "formats a Python int",
}


def cupric_namespaces():
    import cupric as cu

    return {"numpy": cu, "linalg": cu.linalg, "fft": getattr(cu, "fft", None), "random": cu.random,
            "emath": getattr(cu, "emath", None)}


def numpy_namespaces():
    import numpy as np

    return {"numpy": np, "linalg": np.linalg, "fft": np.fft, "random": np.random, "emath": np.emath}


def public_names(module):
    return sorted(n for n in dir(module) if not n.startswith("_")) if module is not None else []


# ---- evidence: which collected tests mention which names ------------------------------------------------


class _Collector:
    """A pytest plugin that keeps the collected items."""

    def __init__(self):
        self.items = []

    def pytest_collection_finish(self, session):
        self.items = list(session.items)


def collect_tests():
    import pytest

    collector = _Collector()
    args = ["--collect-only", "-q", "-p", "no:cacheprovider", str(ROOT / "tests" / "python")]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = pytest.main(args, plugins=[collector])
    if code not in (0, 5):
        raise SystemExit(f"pytest could not collect tests/python (exit {code}):\n{out.getvalue()[-3000:]}")
    return collector.items


def _function_source_tree(fn):
    inner = getattr(getattr(fn, "hypothesis", None), "inner_test", None)
    fn = inspect.unwrap(inner or fn)
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None


class _Mentions(ast.NodeVisitor):
    """The names one function's code mentions: attribute chains on cupric modules, strings, and the
    same-module functions and constants it refers to (followed once each)."""

    def __init__(self, module, roots, found, seen):
        self.module, self.roots, self.found, self.seen = module, roots, found, seen

    def visit_Attribute(self, node):
        chain = []
        inner = node
        while isinstance(inner, ast.Attribute):
            chain.append(inner.attr)
            inner = inner.value
        if isinstance(inner, ast.Name) and inner.id in self.roots:
            chain = [*self.roots[inner.id], *reversed(chain)]
            if len(chain) >= 2 and chain[0] == "numpy" and chain[1] in NAMESPACES[1:]:
                chain = chain[1:]
            self.found.add(("module", chain[0]))
            if len(chain) >= 2:
                self.found.add((chain[0], chain[1]))
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            self.found.add(("string", node.value))

    def visit_Name(self, node):
        value = self.module.__dict__.get(node.id)
        if node.id in self.seen or value is None:
            return
        self.seen.add(node.id)
        if isinstance(value, types.FunctionType) and value.__module__ == self.module.__name__:
            tree = _function_source_tree(value)
            if tree is not None:
                self.visit(tree)
        else:
            _value_mentions(value, self.found)


def _value_mentions(value, found, depth=0):
    """Strings and cupric objects inside a parameter or module constant."""
    if depth > 3:
        return
    if isinstance(value, str):
        found.add(("string", value))
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in list(value)[:2000]:
            _value_mentions(v, found, depth + 1)
    elif isinstance(value, dict):
        for k, v in list(value.items())[:2000]:
            _value_mentions(k, found, depth + 1)
            _value_mentions(v, found, depth + 1)
    else:
        module = getattr(value, "__module__", None)
        name = getattr(value, "__name__", None) or getattr(value, "name", None)
        if isinstance(module, str) and module.startswith("cupric") and isinstance(name, str):
            found.add(("object", name))


def _module_roots(module):
    """The module's global names bound to cupric or one of its namespaces: {alias: [namespace]}."""
    spaces = {id(m): k for k, m in cupric_namespaces().items() if m is not None}
    return {alias: [spaces[id(v)]] for alias, v in vars(module).items() if id(v) in spaces}


def test_mentions(item, cache):
    """The (kind, name) pairs item's code and parameters mention."""
    fn = getattr(item, "function", None)
    module = getattr(item, "module", None)
    if fn is None or module is None:
        return set()
    key = id(fn)
    if key not in cache:
        found = set()
        tree = _function_source_tree(fn)
        if tree is not None:
            _Mentions(module, _module_roots(module), found, set()).visit(tree)
        cache[key] = found
    found = set(cache[key])
    for value in getattr(getattr(item, "callspec", None), "params", {}).values():
        _value_mentions(value, found)
    return found


def evidence(items):
    """{(namespace, name): {device: [test files]}} from the collected items."""
    spaces = cupric_namespaces()
    out = {}
    cache = {}
    for item in items:
        device = "cuda" if item.get_closest_marker("gpu") else "cpu"
        path = pathlib.Path(str(item.path)).relative_to(ROOT / "tests" / "python").as_posix()
        if path.rpartition("/")[2] in NOT_EVIDENCE:
            continue
        mentions = test_mentions(item, cache)
        modules = {n for k, n in mentions if k == "module"}
        for kind, name in mentions:
            for space in _spaces_of(kind, name, modules, spaces):
                key = (space, name.rpartition(".")[2] if kind == "string" else name)
                out.setdefault(key, {}).setdefault(device, set()).add(path)
    return out


def _spaces_of(kind, name, modules, spaces):
    if kind in NAMESPACES:
        return [kind]
    if kind not in ("string", "object"):
        return []
    space, _, rest = name.partition(".")
    if kind == "string" and space in NAMESPACES[1:] and rest:  # "linalg.norm"
        return [space] if spaces[space] is not None and hasattr(spaces[space], rest) else []
    # A bare string or object names a top-level function, or one of a submodule the test touches.
    return [s for s in NAMESPACES if (s == "numpy" or s in modules) and spaces[s] is not None
            and hasattr(spaces[s], name)]


# ---- classification --------------------------------------------------------------------------------------

LEGEND = {
    "runs": "cupric's own implementation, and a test runs it on this device",
    "untested": "cupric has it, but no test runs it on this device (tests/python/test_coverage.py fails)",
    "fallback": ("cupric lacks it; NumPy runs it on the same memory for CPU arrays (`__array_function__`/"
                 "`__array_ufunc__`), and on GPU arrays through the host under `cu.set_fallback(\"warn\")`"),
    "n/a": "not applicable or out of scope (the note says why)",
    "missing": "cupric lacks it and NumPy's fallback cannot take cupric arrays",
}


def _is_concrete_dtype(obj):
    import cupric as cu

    if not (isinstance(obj, type) and obj.__module__ in ("numpy", "ml_dtypes")):
        return False
    try:
        cu.empty(0, dtype=obj, device="cpu")
    except (TypeError, ValueError):
        return False
    return True


def _kind_of_present(space, name, obj):
    """('claimed', '') for a name cupric claims to run on every device, else ('n/a', why)."""
    if name in OUT_OF_SCOPE.get(space, {}):
        return "n/a", OUT_OF_SCOPE[space][name]
    if space == "numpy" and name in NO_ARRAYS:
        return "n/a", f"touches no array: {NO_ARRAYS[name]}"
    if isinstance(obj, types.ModuleType):
        return "n/a", "a module" + (" (its own table below)" if name in NAMESPACES else "")
    if isinstance(obj, type):
        if _is_concrete_dtype(obj) or obj.__module__.startswith("cupric"):
            return "claimed", ""
        return "n/a", "NumPy's own type object (abstract, or the dtype class): device-independent"
    if callable(obj) or hasattr(type(obj), "__getitem__") and type(obj).__module__.startswith("cupric"):
        return "claimed", ""
    return "n/a", "a constant"


def _kind_of_absent(space, name, np_obj):
    import numpy as np

    why = OUT_OF_SCOPE.get(space, {}).get(name)
    if why:
        return "n/a", why
    if isinstance(np_obj, np.ufunc) or hasattr(np_obj, "_implementation"):
        return "fallback", ""
    return "missing", ""


def classify(found):
    """{space: [(name, {device: status}, note, [test files])]}"""
    cus, nps = cupric_namespaces(), numpy_namespaces()
    table = {}
    for space in NAMESPACES:
        rows = []
        for name in public_names(nps[space]):
            obj = getattr(cus[space], name, None) if cus[space] is not None else None
            present = cus[space] is not None and hasattr(cus[space], name)
            if present:
                kind, note = _kind_of_present(space, name, obj)
            else:
                kind, note = _kind_of_absent(space, name, getattr(nps[space], name))
            tests = found.get((space, name), {})
            if kind == "claimed":
                status = {d: "runs" if tests.get(d) else "untested" for d in DEVICES}
                files = sorted(set().union(*tests.values()))[:2] if tests else []
                note = ", ".join(files)
            else:
                status = dict.fromkeys(DEVICES, kind)
            rows.append((name, status, note))
        table[space] = rows
    return table


# ---- the page ----------------------------------------------------------------------------------------------


def runs_on_both(table):
    return sum(all(s == "runs" for s in status.values()) for rows in table.values() for _, status, _ in rows)


def untested(table):
    return [f"{space}.{name} ({', '.join(d for d, s in status.items() if s == 'untested')})"
            for space, rows in table.items() for name, status, _ in rows if "untested" in status.values()]


def _title(space):
    return "numpy" if space == "numpy" else f"numpy.{space}"


def _summary(table):
    kinds = ("runs", "untested", "fallback", "n/a", "missing")
    lines = ["| namespace | names | runs on both | " + " | ".join(f"{k} (cpu / cuda)" for k in kinds) + " |",
             "|---|---|---|" + "---|" * len(kinds)]
    for space, rows in table.items():
        counts = [" / ".join(str(sum(st[d] == k for _, st, _ in rows)) for d in DEVICES) for k in kinds]
        both = sum(all(s == "runs" for s in st.values()) for _, st, _ in rows)
        lines.append(f"| `{_title(space)}` | {len(rows)} | {both} | " + " | ".join(counts) + " |")
    return lines


def render(table):
    import numpy as np

    out = ["# What runs where: NumPy's namespace in cupric", "",
           "Generated by `tools/coverage.py` from the code and the test suite; do not edit by hand "
           "(`.venv/bin/python tools/coverage.py` rewrites it, `tests/python/test_coverage.py` fails when it "
           "is stale). How each kind of function is built, and what remains out of scope: `docs/numpy.md`.", "",
           f"NumPy {np.__version__}. **{runs_on_both(table)} names run on both devices.** A name \"runs\" on a "
           "device when a test of `tests/python` that runs there mentions it (CUDA tests are those marked "
           "`gpu`: the lead runs them on an H200); the tests column names up to two such files.", "",
           "| status | meaning |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in LEGEND.items()]
    out += ["", *_summary(table)]
    for space, rows in table.items():
        out += ["", f"## `{_title(space)}`", "", "| name | cpu | cuda | tests, or why not |", "|---|---|---|---|"]
        out += [f"| `{name}` | {st['cpu']} | {st['cuda']} | {note} |" for name, st, note in rows]
    return "\n".join(out) + "\n"


def facts(items=None):
    """The page and its figures, from `items` (a pytest session's collection of tests/python), else
    from collecting the suite here."""
    table = classify(evidence(collect_tests() if items is None else items))
    text = render(table)
    return {"text": text, "runs_on_both": runs_on_both(table), "untested": untested(table),
            "current": PAGE.exists() and PAGE.read_text() == text}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if stale or untested")
    parser.add_argument("--json", metavar="FILE", help="write the facts as JSON to FILE")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    f = facts()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(f))
    problems = [f"untested: {u}" for u in f["untested"]]
    if f["runs_on_both"] < FLOOR:
        problems.append(f"only {f['runs_on_both']} names run on both devices (the floor is {FLOOR})")
    if args.check or args.json:
        if not f["current"]:
            problems.append(f"{PAGE.relative_to(ROOT)} is stale: run .venv/bin/python tools/coverage.py")
    else:
        PAGE.write_text(f["text"])
        print(f"wrote {PAGE.relative_to(ROOT)}: {f['runs_on_both']} names run on both devices")
    print("\n".join(problems))
    return 1 if problems and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
