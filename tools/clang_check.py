"""Compiles every C++ translation unit of the build with clang++ as well (`make clang-check`): the
commands of build/py/compile_commands.json with the compiler swapped and -fsyntax-only, so clang's
warnings (which GCC's -Wall -Wextra do not have) fail the check without a second full build."""

import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# GCC's options that clang does not take (each one's argument included)
GCC_ONLY = {"-fopt-info-vec-optimized"}
DROPPED_WITH_ARGUMENT = {"-o", "-MF", "-MT", "-MQ"}


def clang_command(command, clang):
    """The build's command for one file, run by clang without writing anything."""
    args = shlex.split(command)
    out = [clang]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
        elif a in DROPPED_WITH_ARGUMENT:
            skip = True
        elif a in GCC_ONLY or a in ("-c", "-MD", "-MMD"):
            continue
        else:
            out.append(a)
    color = "-fcolor-diagnostics" if sys.stdout.isatty() else "-fno-color-diagnostics"
    return out + ["-fsyntax-only", "-Werror", color]


SOURCE_FOLDERS = ("src", "tests", "examples", "tools")


def own_entries(database):
    """The project's own translation units (the build also compiles nanobind's sources, in .venv)."""
    for entry in json.loads(Path(database).read_text()):
        path = Path(entry["file"]).resolve()
        if any(path.is_relative_to(ROOT / folder) for folder in SOURCE_FOLDERS):
            yield entry, path.relative_to(ROOT)


def check(entry, clang):
    argv = clang_command(entry["command"], clang)
    run = subprocess.run(argv, cwd=entry["directory"], capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", default=str(ROOT / "build/py/compile_commands.json"))
    parser.add_argument("--clang", default=os.environ.get("CLANGXX", "clang++"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("paths", nargs="*", help="only the files under these paths (default: all)")
    args = parser.parse_args()
    clang = shutil.which(args.clang)
    if clang is None:
        sys.exit(f"clang-check: {args.clang} not found: apt-get install clang (or set CLANGXX)")
    if not Path(args.database).is_file():
        sys.exit(f"clang-check: {args.database} not found: run `make build` first")
    wanted = [Path(p).resolve() for p in args.paths]
    entries = [(e, p) for e, p in own_entries(args.database)
               if not wanted or any((ROOT / p).is_relative_to(w) for w in wanted)]
    start, failed = time.perf_counter(), []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda e: (e[1], *check(e[0], clang)), entries)
        for path, rc, output in results:
            if rc != 0 or output.strip():
                failed.append(path)
                print(f"--- {path}\n{output}", flush=True)
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"clang-check: {len(entries)} files, {len(failed)} with warnings or errors "
          f"({version}; {time.perf_counter() - start:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
