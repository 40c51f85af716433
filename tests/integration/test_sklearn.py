"""scikit-learn's array API estimators and metrics on cupric arrays (array_api_dispatch=True),
against the same calls on NumPy arrays."""

import cupric as cu
import numpy as np
import pytest
from clients import PICKLE_BRANCH, Case, check, on_device, on_devices

sklearn = pytest.importorskip("sklearn")
from sklearn import discriminant_analysis, preprocessing  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.metrics import accuracy_score, pairwise, r2_score  # noqa: E402

RNG = np.random.default_rng(5)
X = RNG.standard_normal((30, 5)) * [1.0, 2.0, 0.5, 3.0, 1.5] + [0.0, 1.0, -2.0, 0.5, 4.0]
Y = X @ RNG.standard_normal(5) + 0.1 * RNG.standard_normal(30)
LABELS = RNG.integers(0, 3, 30)
PREDICTED = np.where(RNG.random(30) < 0.7, LABELS, (LABELS + 1) % 3)
POSITIVE = np.abs(X) + 0.1


def fitted(estimator, *attributes):
    """What a fitted estimator transformed, and the fitted attributes, for comparison."""

    def run(X, *rest):
        est = estimator().fit(X, *rest)
        out = est.transform(X) if hasattr(est, "transform") else est.predict(X)
        return (out,) + tuple(getattr(est, a) for a in attributes)

    return run


def scaler(cls, *attributes, **kw):
    def run(X):
        est = cls(**kw)
        out = est.fit_transform(X)
        return (out, est.inverse_transform(out)) + tuple(getattr(est, a) for a in attributes)

    return run


ASTYPE = ("astype",)
CASES = (
    [
        Case(
            "StandardScaler",
            scaler(preprocessing.StandardScaler, "mean_", "var_", "scale_"),
            *ASTYPE,
            issue=PICKLE_BRANCH,
            via_numpy=False,
        ),
        Case("MinMaxScaler", scaler(preprocessing.MinMaxScaler, "data_min_", "data_max_", "scale_")),
        Case("MinMaxScaler-range", scaler(preprocessing.MinMaxScaler, "min_", feature_range=(-2, 3))),
        Case("Normalizer-l2", lambda X: preprocessing.Normalizer().fit_transform(X)),
        Case("Normalizer-l1", lambda X: preprocessing.Normalizer(norm="l1").fit_transform(X)),
        Case("Normalizer-max", lambda X: preprocessing.Normalizer(norm="max").fit_transform(X)),
        Case(
            "PCA",
            fitted(lambda: PCA(n_components=3, svd_solver="full"), "explained_variance_", "components_"),
            via_numpy=False,
        ),
        Case(
            "Ridge-svd",
            lambda X: fitted(lambda: Ridge(alpha=0.5, solver="svd"), "coef_", "intercept_")(
                X, cu.asarray(Y, device=X.device) if isinstance(X, cu.ndarray) else Y
            ),
            via_numpy=False,
        ),
        Case(
            "r2_score",
            lambda X: r2_score(X[:, 0], X[:, 0] * 0.9 + X[:, 1] * 0.1),
            *ASTYPE,
            issue=PICKLE_BRANCH,
            via_numpy=False,
        ),
        Case(
            "r2_score-multioutput",
            lambda X: r2_score(X[:, :2], X[:, 2:4] * 0.1 + X[:, :2], multioutput="raw_values"),
            *ASTYPE,
            issue=PICKLE_BRANCH,
            via_numpy=False,
        ),
        Case("laplacian_kernel", lambda X: pairwise.laplacian_kernel(X, X[:7], gamma=0.3)),
        Case("manhattan_distances", lambda X: pairwise.manhattan_distances(X, X[:7])),
        Case("chi2_kernel", lambda X: pairwise.chi2_kernel(abs(X) + 0.1, abs(X[:7]) + 0.1, gamma=0.5)),
        Case("additive_chi2_kernel", lambda X: pairwise.additive_chi2_kernel(abs(X) + 0.1, abs(X[:7]) + 0.1)),
    ]
    + [
        Case(name, lambda X, name=name: getattr(pairwise, name)(X, X[:7]), via_numpy=False)
        for name in ["linear_kernel", "rbf_kernel", "polynomial_kernel", "sigmoid_kernel", "cosine_similarity"]
    ]
    + [
        # squared: NumPy's row norms come from np.einsum, the Array API's from xp.sum, which round
        # differently (~1e-14); the square root would blow that up to ~1e-7 where a distance is 0
        Case("euclidean_distances", lambda X: pairwise.euclidean_distances(X, X[:7], squared=True), via_numpy=False),
        Case("pairwise_kernels-rbf", lambda X: pairwise.pairwise_kernels(X, metric="rbf"), via_numpy=False),
    ]
)


@pytest.mark.parametrize("case, device", on_devices(CASES))
def test_matches_numpy_input(case, device):
    with sklearn.config_context(array_api_dispatch=True):
        got = case.fn(on_device(X, device))
    want = case.fn(X)
    check(got, want, device, rtol=1e-10, atol=1e-12)


LABEL_CASES = [
    Case(
        "LabelEncoder",
        lambda y: (lambda le: (le.fit_transform(y), le.classes_))(preprocessing.LabelEncoder()),
        via_numpy=False,
    ),
    Case("accuracy_score", lambda y: accuracy_score(y, y_other(y)), via_numpy=False),
    Case("accuracy_score-normalize", lambda y: accuracy_score(y, y_other(y), normalize=False), via_numpy=False),
]


def y_other(y):
    return cu.asarray(PREDICTED, device=y.device) if isinstance(y, cu.ndarray) else PREDICTED


@pytest.mark.parametrize("case, device", on_devices(LABEL_CASES))
def test_labels_match_numpy_input(case, device):
    with sklearn.config_context(array_api_dispatch=True):
        got = case.fn(on_device(LABELS, device))
    check(got, case.fn(LABELS), device, dtype=False)


def lda(X, labels):
    est = discriminant_analysis.LinearDiscriminantAnalysis().fit(X, labels)
    return est.predict(X), est.predict_proba(X), est.means_


@pytest.mark.parametrize("case, device", on_devices([Case("LinearDiscriminantAnalysis", lda, via_numpy=False)]))
def test_linear_discriminant_analysis(case, device):
    with sklearn.config_context(array_api_dispatch=True):
        got = case.fn(on_device(X, device), on_device(LABELS, device))
    check(got, case.fn(X, LABELS), device, rtol=1e-10, atol=1e-12)
