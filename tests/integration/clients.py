"""Helpers for the client tests: NumPy-oracle comparisons, the devices, and xfail marks that name
the cupric piece a client stops on. A mark holds only while that piece is missing, so a test runs
for real as soon as the piece lands (and fails, strictly, if it then passes while still marked)."""

import copy
import pickle

import cupric as cu
import numpy as np
import pytest

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]

LINALG = "issue 13: Matrix products and linear algebra on both devices, with nvmath-style stateful plans and epilogues"
NUMPY_NAMES = (
    "issue 15: The rest of NumPy's namespace on both devices: manipulation, indexing helpers, statistics, "
    "polynomials, windows, I/O and printing"
)
PICKLE_BRANCH = "issue 10: pickling, NumPy fallbacks and the namespace's astype (branch pickle)"

# what a missing piece raises: AttributeError from the namespace (xp.linalg), TypeError from the
# NumPy protocols (`cupric does not implement numpy.take`, `unsupported operand type(s) for @`)
MISSING = (AttributeError, TypeError)


def has(path):
    """Does cupric have `path` ("matmul", "linalg.svd", "ndarray.__matmul__")?"""
    obj = cu
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return True


def _works(fn):
    try:
        fn()
        return True
    except Exception:
        return False


CAN_PICKLE = _works(lambda: pickle.loads(pickle.dumps(cu.ones(2))))
CAN_COPY = _works(lambda: copy.copy(cu.ones(2)))
# CPU arrays: NumPy runs what cupric lacks on the same memory (device arrays still raise)
CPU_FALLBACK = hasattr(cu, "set_fallback") and cu.get_fallback() != "strict"
# an unpickled numpy.dtype is equal to, but not the same object as, NumPy's own instance
UNPICKLED_DTYPES = _works(lambda: cu.zeros(1, dtype=pickle.loads(pickle.dumps(np.dtype("float64")))))
ARRAY_SEEDS = _works(lambda: cu.random.default_rng(np.arange(4, dtype=np.uint32)))
# np.empty_like(x, dtype=<structured>) should raise TypeError, as CuPy does: Dask then keeps its
# arg-reductions' partial results in dicts of cupric arrays; a NumPy array back makes them NumPy's
STRUCTURED_TO_NUMPY = _works(lambda: np.empty_like(cu.ones(1), dtype=[("a", "f8")]))


def needs(*names, issue, device="cpu", via_numpy=False):
    """xfail while cupric lacks any of `names`. `via_numpy`: the client reaches them through
    NumPy's protocols (np.take(x)), so on the CPU a NumPy fallback covers them."""
    missing = [n for n in names if not has(n)]
    covered = via_numpy and device == "cpu" and CPU_FALLBACK
    reason = f"{issue} (cupric has no {', '.join(missing) or 'gap left'})"
    return pytest.mark.xfail(bool(missing) and not covered, reason=reason, strict=True, raises=MISSING)


def needs_feature(available, what):
    """xfail while a feature of the pickle branch (pickling, fallbacks, astype, seeds) is absent."""
    return pytest.mark.xfail(not available, reason=f"{PICKLE_BRANCH}: {what}", strict=True)


def structured_to_numpy(device="cpu"):
    """xfail while the NumPy fallback answers a structured-dtype empty_like with NumPy's array."""
    return pytest.mark.xfail(
        STRUCTURED_TO_NUMPY and device == "cpu",
        strict=True,
        reason=f"{PICKLE_BRANCH}: the NumPy fallback answers np.empty_like(x, dtype=<structured>) "
        "with a NumPy array where Dask expects a TypeError (as from CuPy), so Dask's "
        "arg-reductions and unique hand back NumPy arrays",
    )


def on_device(n, device):
    """A cupric copy of NumPy's `n` on `device`."""
    return cu.asarray(n, device=device, copy=True)


def host(x):
    """NumPy's copy of anything a client returned (cupric arrays from any device, scalars, NumPy)."""
    if isinstance(x, cu.ndarray):
        x = x.to_device("cpu")
    return np.asarray(x)


def check(got, want, device="cpu", rtol=1e-7, atol=0.0, dtype=True, array=False):
    """`got` (a client's result on cupric input) matches `want` (the same call on NumPy input):
    cupric arrays on `device` where NumPy gave arrays (or always, with `array`: where NumPy gave
    a scalar too), then shapes, dtypes and values; tuples, lists and named tuples element by element."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) or isinstance(got, (tuple, list)), (type(got), type(want))
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            check(g, w, device, rtol, atol, dtype, array)
        return
    if array or (isinstance(want, np.ndarray) and want.ndim > 0):
        assert isinstance(got, cu.ndarray), f"expected a cupric array, got {type(got).__name__}"
        assert str(got.device).startswith(device), (got.device, device)
    g, w = host(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if dtype:
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if w.dtype.kind in "biuSUO":
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


class Case:
    """One call of a client, by name; `names` are the cupric functions it stops on while they are
    missing (see needs), and `then` lists further (names, issue) it stops on once those land."""

    def __init__(self, id, fn, *names, issue=None, via_numpy=True, then=(), marks=lambda device: [], **options):
        self.id, self.fn, self.via_numpy, self.marks, self.options = id, fn, via_numpy, marks, options
        self.stops = ([(names, issue)] if names else []) + list(then)


def on_devices(cases, devices=("cpu", "cuda")):
    """pytest params (case, device) for every case on every device, each with its own marks: cuda
    skips without a GPU, and a case's xfail depends on the device (fallbacks cover the CPU only)."""
    out = []
    for device in devices:
        for case in cases:
            marks = [] if device == "cpu" else [pytest.mark.gpu]
            # pytest takes the first xfail whose condition holds: the first missing piece
            marks += [
                needs(*names, issue=issue, device=device, via_numpy=case.via_numpy) for names, issue in case.stops
            ]
            marks += case.marks(device)
            out.append(pytest.param(case, device, marks=marks, id=f"{case.id}-{device}"))
    return out
