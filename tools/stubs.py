"""Writes the type stubs of the compiled extension, python/cupric/_cupric.pyi (shipped with py.typed
in the wheel), from the bindings' signatures with nanobind's stubgen. tests/python/test_signatures.py
checks that the committed file matches the bindings, and that no parameter, there or in the private
submodules (cupric._cupric._cuda, _tile, ...), is a bare `object`; after changing a binding run

    .venv/bin/python tools/stubs.py              # rewrites python/cupric/_cupric.pyi
    .venv/bin/python tools/stubs.py --output F   # writes F instead (what the test compares)
    .venv/bin/python tools/stubs.py --private D  # also D/<submodule>.pyi for each private submodule
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
STUB = ROOT / "python" / "cupric" / "_cupric.pyi"
MODULE = "cupric._cupric"


def generate(output, private_dir):
    """In the process that imports the installed package: stubgen for the module, then (with a
    folder) for each of its submodules, which nanobind keeps out of the module's stub as private."""
    import types

    from nanobind import stubgen

    # values that depend on the machine (devices, paths) are left out as `...`
    stubgen.main(["-q", "-m", MODULE, "-o", output, "--exclude-values"])
    if private_dir:
        top = sys.modules[MODULE]
        pathlib.Path(private_dir).mkdir(parents=True, exist_ok=True)
        for name in sorted(n for n, v in vars(top).items() if isinstance(v, types.ModuleType)):
            stubgen.main(["-q", "-m", f"{MODULE}.{name}", "-o", str(pathlib.Path(private_dir) / f"{name}.pyi"),
                          "--exclude-values"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default=str(STUB))
    parser.add_argument("--private", default="", help="a folder for the private submodules' stubs")
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.generate:
        generate(args.output, args.private)
        return 0
    private = str(pathlib.Path(args.private).resolve()) if args.private else ""
    with tempfile.TemporaryDirectory() as tmp:
        raw = pathlib.Path(tmp) / "_cupric.pyi"
        # run from an empty folder, so the installed package is what gets imported
        subprocess.run([sys.executable, __file__, "--generate", "--output", str(raw), "--private", private],
                       check=True, cwd=tmp)
        text = raw.read_text()
    pathlib.Path(args.output).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
