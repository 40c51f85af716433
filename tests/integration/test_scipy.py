"""SciPy's special functions, statistics and signal processing on cupric arrays, with
SCIPY_ARRAY_API=1 (set by conftest.py before scipy is imported), against the same calls on NumPy."""

import os

import cupric as cu
import numpy as np
import pytest
from clients import NUMPY_NAMES, PICKLE_BRANCH, Case, check, on_device, on_devices

scipy = pytest.importorskip("scipy")
from scipy import signal, special, stats  # noqa: E402

RNG = np.random.default_rng(3)
POS = RNG.uniform(0.1, 3.0, 40)  # inside every function's domain
UNIT = RNG.uniform(0.05, 0.95, 40)
SIG = RNG.standard_normal(64)


def test_array_api_mode_is_on():
    assert os.environ["SCIPY_ARRAY_API"] == "1"
    from scipy._lib._array_api import array_namespace

    assert array_namespace(cu.ones(2)) is cu


UNARY = [
    "gamma",
    "gammaln",
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "logit",
    "ndtr",
    "ndtri",
    "log_ndtr",
    "entr",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "j0",
    "j1",
    "y0",
    "sinc",
]
BINARY = [
    "xlogy",
    "xlog1py",
    "rel_entr",
    "kl_div",
    "huber",
    "pseudo_huber",
    "betaln",
    "gammainc",
    "gammaincc",
    "poch",
    "zeta",
    "chdtr",
    "chdtrc",
    "stdtr",
    "binom",
]
ARGS = {"erfinv": UNIT, "logit": UNIT, "ndtri": UNIT}


# where SciPy has no code for an array library, it computes on np.asarray(x) and returns
# xp.asarray(result), without a device: the Array API puts that on the CPU, whatever x's device
GENERIC = {"xlogy", "rel_entr"}  # SciPy has array API code for these (and softmax, logsumexp, stats)


def numpy_path(device):
    return [
        pytest.mark.xfail(
            device != "cpu",
            strict=True,
            reason="SciPy computes this in NumPy for cupric arrays and returns xp.asarray(result), on the CPU",
        )
    ]


def uses_astype(id, fn, **options):
    """A case that calls the namespace's astype (xp.astype)."""
    return Case(id, fn, "astype", issue=PICKLE_BRANCH, via_numpy=False, **options)


SPECIAL = (
    [
        Case(f"special.{n}", lambda a, n=n: getattr(special, n)(a), input=ARGS.get(n, POS), marks=numpy_path)
        for n in UNARY
    ]
    + [
        Case(
            f"special.{n}",
            lambda a, n=n: getattr(special, n)(a, a[::-1]),
            marks=(lambda device: []) if n in GENERIC else numpy_path,
        )
        for n in BINARY
    ]
    + [
        Case("special.softmax", lambda a: special.softmax(a.reshape(5, 8), axis=1)),
        Case("special.log_softmax", lambda a: special.log_softmax(a)),
        uses_astype("special.logsumexp", lambda a: special.logsumexp(a.reshape(5, 8), axis=0)),
        uses_astype("special.logsumexp-b", lambda a: special.logsumexp(a, b=a[::-1])),
    ]
)

STATS = [
    Case("stats.zscore", lambda a: stats.zscore(a)),
    Case("stats.describe", lambda a: tuple(stats.describe(a))[1:]),
    Case("stats.skew", lambda a: stats.skew(a)),
    Case("stats.kurtosis", lambda a: stats.kurtosis(a, fisher=False)),
    Case("stats.moment", lambda a: stats.moment(a, order=3)),
    Case("stats.gmean-hmean-pmean", lambda a: (stats.gmean(a), stats.hmean(a), stats.pmean(a, 2.5))),
    Case("stats.sem", lambda a: stats.sem(a)),
    uses_astype("stats.variation", lambda a: stats.variation(a)),
    Case("stats.entropy", lambda a: stats.entropy(a, a[::-1])),
    Case("stats.tmean", lambda a: stats.tmean(a, (0.5, 2.5))),
    uses_astype("stats.tvar", lambda a: stats.tvar(a)),
    Case("stats.ttest_1samp", lambda a: tuple(stats.ttest_1samp(a, 1.0))),
    Case("stats.ttest_ind", lambda a: tuple(stats.ttest_ind(a[:20], a[20:] + 0.3))),
    Case("stats.pearsonr", lambda a: tuple(stats.pearsonr(a, a * a + 0.1 * a[::-1])), via_numpy=False),
    Case("stats.rankdata", lambda a: stats.rankdata(a), via_numpy=False),
    Case("stats.trim_mean", lambda a: stats.trim_mean(a, 0.1), via_numpy=False),
]


def like(a, values):
    """`values` as an array of a's library, on a's device."""
    return cu.asarray(values, device=a.device) if isinstance(a, cu.ndarray) else np.asarray(values)


def filt(a):
    return like(a, [0.2, 0.3, 0.5]), like(a, [1.0, -0.4])


SIGNAL = [
    Case("signal.convolve", lambda a: signal.convolve(a, a[:5]), input=SIG, marks=numpy_path),
    Case("signal.fftconvolve", lambda a: signal.fftconvolve(a, a[:9], mode="same"), input=SIG, marks=numpy_path),
    Case("signal.correlate", lambda a: signal.correlate(a, a[3:8], mode="valid"), input=SIG, marks=numpy_path),
    Case(
        "signal.convolve2d",
        lambda a: signal.convolve2d(a.reshape(8, 8), a[:4].reshape(2, 2)),
        input=SIG,
        marks=numpy_path,
    ),
    Case("signal.detrend", lambda a: signal.detrend(a), input=SIG, marks=numpy_path),
    Case("signal.medfilt", lambda a: signal.medfilt(a, 5), via_numpy=False, input=SIG),
    Case("signal.hilbert", lambda a: signal.hilbert(a), input=SIG),  # through cu.fft on the array's device
    Case("signal.resample", lambda a: signal.resample(a, 40), input=SIG),  # through cu.fft
    Case("signal.upfirdn", lambda a: signal.upfirdn(a[:4], a, up=2, down=3), input=SIG, marks=numpy_path),
    Case(
        "signal.sosfilt",
        lambda a: signal.sosfilt(like(a, [[1.0, 0.5, 0.0, 1.0, -0.2, 0.0]]), a),
        input=SIG,
        marks=numpy_path,
    ),
    Case("signal.filtfilt", lambda a: signal.filtfilt(*filt(a), a), input=SIG, marks=numpy_path),
    Case("signal.lfilter", lambda a: signal.lfilter(*filt(a), a), "atleast_1d", issue=NUMPY_NAMES, input=SIG),
    Case(
        "signal.savgol_filter",
        lambda a: signal.savgol_filter(a, 7, 2),
        "flip",
        issue=NUMPY_NAMES,
        via_numpy=False,
        input=SIG,
    ),
]


@pytest.mark.parametrize("case, device", on_devices(SPECIAL + STATS + SIGNAL))
def test_matches_numpy_input(case, device):
    values = case.options.get("input", POS)
    got = case.fn(on_device(values, device))
    want = case.fn(values)
    check(got, want, device, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("device", ["cpu"])
def test_windows_in_the_cupric_namespace(device):
    got = signal.get_window("hann", 16, xp=cu)
    check(got, signal.get_window("hann", 16), device)
    check(signal.windows.kaiser(12, 4.0, xp=cu), signal.windows.kaiser(12, 4.0), device)
