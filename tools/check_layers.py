"""The C++ tree's layering, checked on every `#include "..."` (a ctest: `check_layers`):

1. a header under src/ is private to its folder (src/array, src/backend/cpu, ...): only files of
   that folder include it; what other folders use lives under include/cupric (public headers
   include no private one);
2. src/array is below the ops: it includes nothing from src/ops or src/backend, and none of the
   ops' public headers (it calls no ufunc, reduction or random function).

tests/cpp may include any folder's private headers (unit tests of its internals).

    python tools/check_layers.py [ROOT]      # exit 1 and one line per finding
    python tools/check_layers.py --self-test # the rules find what they should, on a made-up tree
"""

import re
import sys
import tempfile
from pathlib import Path

INCLUDE_DIRS = ("include", "device_include", "src")  # the compiler's -I order (CMakeLists.txt)
CHECKED = ("src", "include", "examples")
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".def", ".cu", ".cuh"}
OPS_PUBLIC = {
    "include/cupric/ufunc.hpp",
    "include/cupric/ufunc_table.def",
    "include/cupric/reduction.hpp",
    "include/cupric/elementwise.hpp",
    "include/cupric/random.hpp",
    "include/cupric/ufunc_expressions.hpp",
    "include/cupric/reduction_table.hpp",
    "include/cupric/reduction_table.def",
}
BELOW_OPS = ("src/array/",)
ABOVE_ARRAY = ("src/ops/", "src/backend/")
# Known exceptions, each with what removes it. One that no longer occurs is reported (as a note).
ALLOWED = {}
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def resolve(root, includer, name):
    """The file a quoted include names (beside the includer first, then the include folders), as
    a path relative to root; None for a file outside the tree (a system header)."""
    for base in (includer.parent, *(root / d for d in INCLUDE_DIRS)):
        candidate = (base / name).resolve()
        if candidate.is_file():
            try:
                return candidate.relative_to(root.resolve()).as_posix()
            except ValueError:
                return None
    return None


def findings(root):
    """(includer, included, rule) for every include that breaks a rule, and the stale exceptions."""
    root = Path(root)
    out, seen_allowed = [], set()
    for top in CHECKED:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            includer = path.relative_to(root).as_posix()
            for name in _INCLUDE.findall(path.read_text(errors="replace")):
                target = resolve(root, path, name)
                if target is None:
                    continue
                rule = _broken_rule(includer, target)
                if rule and (includer, target) in ALLOWED:
                    seen_allowed.add((includer, target))
                elif rule:
                    out.append((includer, target, rule))
    stale = [pair for pair in ALLOWED if pair not in seen_allowed]
    return out, stale


def _broken_rule(includer, target):
    if target.startswith("src/"):
        if includer.startswith("include/"):
            return "a public header includes a private one"
        if Path(includer).parent != Path(target).parent:
            return f"private to {Path(target).parent.as_posix()}/ (give it a public interface in include/cupric)"
    if includer.startswith(BELOW_OPS):
        if target.startswith(ABOVE_ARRAY):
            return "src/array is below src/ops and the backends"
        if target in OPS_PUBLIC:
            return "src/array calls no op (compose ufuncs in src/ops)"
    return None


def main(root):
    bad, stale = findings(root)
    for includer, target, rule in bad:
        print(f"{includer}: #include of {target}: {rule}")
    for includer, target in stale:
        print(f"note: {includer} no longer includes {target}; remove that exception from ALLOWED in {__file__}")
    if bad:
        print(f"{len(bad)} include(s) break the layering (docs/architecture.md, 'Layers, bottom up')")
    return 1 if bad else 0


def self_test():
    files = {
        "include/cupric/ufunc.hpp": "",
        "include/cupric/api.hpp": '#include "ops/helper.hpp"\n',  # public -> private
        "src/ops/helper.hpp": "",
        "src/ops/a.cpp": '#include "helper.hpp"\n#include "cupric/ufunc.hpp"\n',  # fine
        "src/array/b.cpp": '#include "cupric/ufunc.hpp"\n#include "../ops/helper.hpp"\n',  # two breaks
        "src/tile/c.cpp": '#include "ops/helper.hpp"\n#include <vector>\n#include "missing.hpp"\n',  # one
        "src/tile/d.hpp": "",
        "src/tile/e.cpp": '#  include "d.hpp"\n#include "tile/d.hpp"\n',  # fine
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        bad, _ = findings(root)
    got = {(a, b) for a, b, _ in bad}
    want = {
        ("include/cupric/api.hpp", "src/ops/helper.hpp"),
        ("src/array/b.cpp", "include/cupric/ufunc.hpp"),
        ("src/array/b.cpp", "src/ops/helper.hpp"),
        ("src/tile/c.cpp", "src/ops/helper.hpp"),
    }
    assert got == want, f"self-test: found {sorted(got)}, expected {sorted(want)}"
    print("self-test passed")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent))
