"""Runs the Array API conformance suite (../shared/conformance, not ours to copy) against cupric
and checks the passes against the floor in tests/conformance_floor.txt, which only ever rises.

    python tools/conformance.py                 # the whole suite; exit 1 below the floor
    python tools/conformance.py --raise-floor   # also writes a higher pass count as the new floor
    python tools/conformance.py -- -k test_sum  # extra pytest arguments after --

Prints the failures grouped by test function (the causes are written up in docs/conformance.md)."""

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FLOOR = ROOT / "tests" / "conformance_floor.txt"


def run_suite(shared, extra):
    report = pathlib.Path(tempfile.mkdtemp()) / "report.json"
    env = dict(os.environ, REPORT=str(report))
    # one hypothesis seed (CONFORMANCE_SEED, default 0): the floor compares the same examples each run
    seed = os.environ.get("CONFORMANCE_SEED", "0")
    cmd = [str(shared / "conformance" / "run.sh"), sys.executable, "-p", "no:warnings", "-q",
           f"--hypothesis-seed={seed}", *extra]
    proc = subprocess.run(cmd, env=env, cwd=ROOT)
    if not report.exists():
        sys.exit(f"the conformance suite wrote no report (exit status {proc.returncode})")
    return json.loads(report.read_text())


def summarise(report):
    outcomes = collections.Counter()
    failures = collections.defaultdict(list)
    for test in report["tests"]:
        outcome = test["outcome"]
        outcomes[outcome] += 1
        if outcome in ("failed", "error"):
            function = test["nodeid"].split("[")[0]
            failures[function].append(test["nodeid"])
    return outcomes, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", default=os.environ.get("CUPRIC_SHARED", str(ROOT.parent / "shared")))
    parser.add_argument("--raise-floor", action="store_true", help="write a higher pass count as the new floor")
    parser.add_argument("extra", nargs="*", help="pytest arguments (after --)")
    args = parser.parse_args()
    shared = pathlib.Path(args.shared)
    if not (shared / "conformance" / "run.sh").exists():
        sys.exit(f"no conformance suite at {shared}/conformance (set CUPRIC_SHARED or --shared)")

    outcomes, failures = summarise(run_suite(shared, args.extra))
    print("\nfailures by test function:")
    for function, ids in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(ids):4d}  {function}")
    passed = outcomes["passed"]
    floor = int(FLOOR.read_text().split()[0]) if FLOOR.exists() else 0
    print(f"\nconformance: {passed} passed, {outcomes['failed']} failed, {outcomes['error']} errors, "
          f"{outcomes['skipped']} skipped, {outcomes['xfailed']} xfailed; floor {floor}")
    if args.extra:
        return 0  # a part of the suite says nothing about the floor
    if passed < floor:
        print(f"conformance: {passed} passes is below the floor of {floor}")
        return 1
    if passed > floor and args.raise_floor:
        FLOOR.write_text(f"{passed}\n")
        print(f"conformance: the floor rises to {passed} (tests/conformance_floor.txt)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
