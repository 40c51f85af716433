"""einops' array API functions (einops.array_api: rearrange, reduce, repeat, pack, unpack) on
cupric arrays, against einops' own NumPy path on the same values."""

import cupric as cu
import numpy as np
import pytest
from clients import check

einops = pytest.importorskip("einops")
from einops import array_api as ea  # noqa: E402

X = np.random.default_rng(6).standard_normal((2, 6, 4))

CASES = {
    "rearrange-transpose": lambda m, x: m.rearrange(x, "b h w -> b w h"),
    "rearrange-merge": lambda m, x: m.rearrange(x, "b h w -> (b h) w"),
    "rearrange-split": lambda m, x: m.rearrange(x, "b (h1 h2) w -> b h1 h2 w", h1=2),
    "rearrange-add-axis": lambda m, x: m.rearrange(x, "b h w -> b 1 h w"),
    "reduce-sum": lambda m, x: m.reduce(x, "b h w -> h", "sum"),
    "reduce-mean": lambda m, x: m.reduce(x, "b h w -> b w", "mean"),
    "reduce-max-pool": lambda m, x: m.reduce(x, "b (h 2) (w 2) -> b h w", "max"),
    "reduce-min": lambda m, x: m.reduce(x, "b h w -> b", "min"),
    "reduce-prod": lambda m, x: m.reduce(x, "b h w -> w", "prod"),
    "repeat-new-axis": lambda m, x: m.repeat(x, "b h w -> b h w c", c=3),
    "repeat-tile": lambda m, x: m.repeat(x, "b h w -> b (2 h) w"),
    "repeat-upsample": lambda m, x: m.repeat(x, "b h w -> b (h 2) (w 3)"),
}


@pytest.mark.parametrize("op", CASES.values(), ids=CASES.keys())
def test_matches_einops_on_numpy(op):
    got = op(ea, cu.asarray(X, copy=True))
    check(got, op(einops, X), rtol=1e-12)


def test_pack_and_unpack():
    a, b = cu.asarray(X, copy=True), cu.asarray(X[:, :2], copy=True)
    packed, shapes = ea.pack([a, b], "b * w")
    want, want_shapes = einops.pack([X, X[:, :2]], "b * w")
    check(packed, want)
    assert [tuple(s) for s in shapes] == [tuple(s) for s in want_shapes]
    for got, n in zip(ea.unpack(packed, shapes, "b * w"), (X, X[:, :2]), strict=True):
        check(got, n)


def test_shape_errors_name_the_pattern():
    with pytest.raises(einops.EinopsError, match="b h w"):
        ea.rearrange(cu.asarray(X), "b h w -> b (h w) c")
