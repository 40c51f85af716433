"""NumPy's namespace in cupric, measured (tools/numpy_names.py): the count never falls below the
floor in tests/numpy_names_floor.txt, and every name that is there is the kind of thing NumPy's is."""

import pathlib
import sys

import cupric as cu
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from numpy_names import FLOOR, coverage  # noqa: E402


def test_namespace_count_stays_at_or_above_the_floor():
    names, have = coverage()
    floor = int(FLOOR.read_text().split()[0])
    assert len(have) >= floor, f"{len(have)} of NumPy's names, below the floor of {floor}: " \
                               f"missing {sorted(set(names) - set(have))}"


def test_names_are_the_same_kind_of_thing():
    _, have = coverage()
    for name in have:
        theirs, ours = getattr(np, name), getattr(cu, name)
        if callable(theirs):
            assert callable(ours), f"cu.{name} is not callable as numpy.{name} is"
        elif isinstance(theirs, (int, float)) and not isinstance(theirs, bool):
            assert ours == theirs or (ours != ours and theirs != theirs), name  # constants (nan too)
