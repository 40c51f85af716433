"""einsum and einsum_path (python/cupric/linalg/_einsum.py) against NumPy's: explicit and implicit
outputs, ellipses with broadcasting, traces and diagonals, sums, several operands, the sublist
form, dtypes, out= and explicit paths."""

import cupric as cu
import numpy as np
import pytest

RNG = np.random.default_rng(5)


def arrays(shapes, dtype="float64"):
    out = []
    for s in shapes:
        x = RNG.standard_normal(s)
        if np.dtype(dtype).kind in "iu":
            x = RNG.integers(-5, 5, size=s)
        out.append(x.astype(dtype))
    return out


CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ijk,jil->kl", [(3, 4, 5), (4, 3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,bde->ae", [(2, 3, 4), (4, 5), (3, 5, 6)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,ij->j", [(0, 0), (0, 0)]),
    ("ij,jk->ik", [(3, 0), (0, 2)]),
    ("...j,...j->...", [(0, 3), (1, 3)]),
]


@pytest.mark.parametrize("spec,shapes", CASES)
def test_einsum_matches_numpy(spec, shapes):
    ops = arrays(shapes)
    want = np.einsum(spec, *ops)
    got = cu.einsum(spec, *[cu.asarray(o) for o in ops])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    assert np.asarray(got).shape == np.shape(want)


@pytest.mark.parametrize("dtype", ["int32", "complex64", "float32", "bool"])
def test_einsum_dtypes(dtype):
    a, b = (x.astype(dtype) for x in arrays([(3, 4), (4, 5)], "int64" if dtype == "bool" else dtype))
    for spec in ["ij,jk->ik", "ij->i", "ij,jk->"]:
        want = np.einsum(spec, a, b) if "," in spec else np.einsum(spec, a)
        got = cu.einsum(spec, cu.asarray(a), cu.asarray(b)) if "," in spec else cu.einsum(spec, cu.asarray(a))
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_einsum_sublists_out_dtype_and_paths():
    a, b = arrays([(3, 4), (4, 5)])
    got = cu.einsum(cu.asarray(a), [0, 1], cu.asarray(b), [1, 2], [0, 2])
    np.testing.assert_allclose(np.asarray(got), a @ b, rtol=1e-12)
    out = cu.zeros((3, 5))
    assert cu.einsum("ij,jk->ik", cu.asarray(a), cu.asarray(b), out=out) is out
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-12)
    got = cu.einsum("ij,jk->ik", cu.asarray(a), cu.asarray(b), dtype="float32")
    assert got.dtype == np.float32
    ops = arrays([(2, 30), (30, 4), (4, 50)])
    path, report = cu.einsum_path("ij,jk,kl->il", *[cu.asarray(o) for o in ops])
    assert path[0] == "einsum_path" and len(path) == 3 and "Complete contraction" in report
    assert path == np.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")[0]
    got = cu.einsum("ij,jk,kl->il", *[cu.asarray(o) for o in ops], optimize=path)
    np.testing.assert_allclose(np.asarray(got), ops[0] @ ops[1] @ ops[2], rtol=1e-12)


def test_einsum_errors():
    with pytest.raises(ValueError):
        cu.einsum("ij,jk->ik", cu.ones((3, 4)), cu.ones((5, 6)))
    with pytest.raises(ValueError):
        cu.einsum("ijk,jk->ik", cu.ones((3, 4)), cu.ones((4, 6)))
    with pytest.raises(ValueError):
        cu.einsum()
