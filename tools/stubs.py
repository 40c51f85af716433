"""Writes the type stubs of the compiled extension, python/cupric/_cupric.pyi (shipped with py.typed
in the wheel), from the bindings' signatures with nanobind's stubgen. tests/python/test_signatures.py
checks that the committed file matches the bindings; after changing a binding run

    .venv/bin/python tools/stubs.py            # rewrites python/cupric/_cupric.pyi
    .venv/bin/python tools/stubs.py --output F # writes F instead (what the test compares)
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
STUB = ROOT / "python" / "cupric" / "_cupric.pyi"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default=str(STUB))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        raw = pathlib.Path(tmp) / "_cupric.pyi"
        # run from an empty folder, so the installed package is what gets imported; values that
        # depend on the machine (devices, paths) are left out as `...`
        subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "cupric._cupric", "-o", str(raw),
                        "--exclude-values"], check=True, cwd=tmp)
        text = raw.read_text()
    pathlib.Path(args.output).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
