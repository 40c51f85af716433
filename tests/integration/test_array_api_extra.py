"""array-api-extra's functions on cupric arrays against the same calls on NumPy arrays: it reaches
cupric only through the Array API namespace (x.__array_namespace__())."""

import cupric as cu
import numpy as np
import pytest
from clients import PICKLE_BRANCH, Case, check, on_device, on_devices

xpx = pytest.importorskip("array_api_extra")

RNG = np.random.default_rng(9)
A = RNG.standard_normal((5, 4))
V = RNG.standard_normal(7)
INTS = np.array([0, 2, 1, 2])


def ns(a):
    return a.__array_namespace__()


def uses_astype(id, fn):
    """A case that calls the namespace's astype (xp.astype)."""
    return Case(id, fn, "astype", issue=PICKLE_BRANCH, via_numpy=False)


CASES = [
    Case("angle", lambda a, v: xpx.angle(a + 1j * a[::-1])),
    Case("apply_where", lambda a, v: xpx.apply_where(a > 0, a, ns(a).sqrt, fill_value=-1.0)),
    Case(
        "apply_where-two-functions",
        lambda a, v: xpx.apply_where(a > 0, (a, a * 2), lambda x, y: x + y, lambda x, y: x - y),
    ),
    Case("at-set", lambda a, v: xpx.at(a)[1:3].set(0.5)),
    Case("at-add-mask", lambda a, v: xpx.at(a)[a > 0].add(1.0)),
    Case("at-multiply", lambda a, v: xpx.at(a, (0, slice(None))).multiply(2.0)),
    Case("at-min-max", lambda a, v: xpx.at(xpx.at(a)[2].min(0.0))[3].max(0.0)),
    Case("atleast_nd", lambda a, v: xpx.atleast_nd(v, ndim=3)),
    Case("broadcast_shapes", lambda a, v: xpx.broadcast_shapes(a.shape, (3, 1, 1))),
    Case("create_diagonal", lambda a, v: xpx.create_diagonal(v, offset=1)),
    Case("deg2rad-rad2deg", lambda a, v: (xpx.deg2rad(a), xpx.rad2deg(a))),
    Case("expand_dims", lambda a, v: xpx.expand_dims(a, axis=(0, 2))),
    Case("isclose", lambda a, v: xpx.isclose(a, a + 1e-9 * (a > 0), rtol=0, atol=1e-10)),
    Case("kron", lambda a, v: xpx.kron(a[:2, :3], a[2:4, 1:3])),
    Case(
        "nan-reductions",
        lambda a, v: (lambda b: (xpx.nansum(b), xpx.nanmax(b, axis=1), xpx.nanmin(b)))(
            ns(a).where(a > 1, float("nan"), a)
        ),
    ),
    uses_astype("nanmean", lambda a, v: xpx.nanmean(ns(a).where(a > 1, float("nan"), a), axis=0)),
    Case("nan_to_num", lambda a, v: xpx.nan_to_num(ns(a).where(a > 1, float("nan"), a), fill_value=9.0)),
    uses_astype("one_hot", lambda a, v: xpx.one_hot(ns(a).asarray(INTS, device=a.device), 3)),
    Case("pad", lambda a, v: xpx.pad(a, 2, constant_values=1.5)),
    uses_astype("sinc", lambda a, v: xpx.sinc(a)),
    Case("unravel_index", lambda a, v: xpx.unravel_index(ns(a).asarray([3, 7, 19], device=a.device), (4, 5))),
    Case("isin", lambda a, v: xpx.isin(v, v[:3])),
    Case("cov", lambda a, v: xpx.cov(a), via_numpy=False),
    Case("argpartition", lambda a, v: xpx.argpartition(v, 3)[3], via_numpy=False),
    Case("partition", lambda a, v: xpx.partition(v, 3)[3], via_numpy=False),
    Case("nunique", lambda a, v: xpx.nunique(v), via_numpy=False),
    Case(
        "searchsorted",
        lambda a, v: xpx.searchsorted(ns(a).asarray([-1.0, 0.0, 1.0], device=a.device), v),
        via_numpy=False,
    ),
    Case("setdiff1d", lambda a, v: xpx.setdiff1d(v, v[:3]), via_numpy=False),
    Case("union1d", lambda a, v: xpx.union1d(v, v[:3]), via_numpy=False),
]


@pytest.mark.filterwarnings("ignore:`xpx.*` is deprecated:DeprecationWarning")  # broadcast_shapes, expand_dims
@pytest.mark.parametrize("case, device", on_devices(CASES))
def test_matches_numpy_input(case, device):
    got = case.fn(on_device(A, device), on_device(V, device))
    want = case.fn(A.copy(), V.copy())
    check(got, want, device, rtol=1e-12, atol=1e-15)


def test_index_helpers_take_cupric_as_namespace(device):
    with cu.device(device):
        for name in ("diag_indices", "tril_indices", "triu_indices"):
            check(getattr(xpx, name)(4, xp=cu), getattr(xpx, name)(4, xp=np), device)
    assert xpx.default_dtype(cu) == xpx.default_dtype(np)
    assert xpx.default_dtype(cu, "integral") == np.int64


@pytest.mark.parametrize("copy", [True, False])
def test_at_copies_or_writes_in_place_as_asked(device, copy):
    a = on_device(A, device)
    out = xpx.at(a)[0].set(100.0, copy=copy)
    want = A.copy()
    want[0] = 100.0
    check(out, want, device)
    check(a, want if not copy else A, device)


def test_lazy_apply_runs_a_numpy_function_on_cupric_data(device):
    a = on_device(A, device)
    got = xpx.lazy_apply(lambda x: np.sin(np.asarray(x)) + 1, a, shape=a.shape, dtype=a.dtype)
    check(got, np.sin(A) + 1, device)
