"""How much of NumPy's public namespace cupric has: NumPy's public names (dir(numpy) without the
leading underscore ones) that `cupric` also has. tests/python/test_numpy_names.py keeps the count at
or above tests/numpy_names_floor.txt, which only rises.

    .venv/bin/python tools/numpy_names.py            # the count and the missing names
    .venv/bin/python tools/numpy_names.py --raise    # also writes a higher count as the new floor
"""

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FLOOR = ROOT / "tests" / "numpy_names_floor.txt"


def coverage():
    import cupric as cu
    import numpy as np

    names = sorted(n for n in dir(np) if not n.startswith("_"))
    have = [n for n in names if hasattr(cu, n)]
    return names, have


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raise", dest="raise_floor", action="store_true")
    args = parser.parse_args()
    names, have = coverage()
    missing = sorted(set(names) - set(have))
    import numpy as np

    print(f"cupric has {len(have)} of NumPy {np.__version__}'s {len(names)} public names")
    print("missing:", " ".join(missing))
    floor = int(FLOOR.read_text().split()[0]) if FLOOR.exists() else 0
    if args.raise_floor and len(have) > floor:
        FLOOR.write_text(f"{len(have)}\n")
        print(f"the floor rises to {len(have)} ({FLOOR.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
