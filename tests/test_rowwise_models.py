"""A model whose output on a row depends on the other rows of the call (it standardises within predict).

pdpx's contract (docs/methods.md, "Models are per-row functions") is that a model is a function of each row
alone: brute then stacks several grid points into one predict call. For a model that is not, brute's
``method_options={"stack": False}`` calls it once per grid point with all the rows, and the scikit-learn
drop-ins do so whenever pdpx reads no trees of the model, as scikit-learn's brute does. Both are compared with
the definition (the column set to the grid value on every row, the model's predict on all rows, averaged) and
the drop-ins with scikit-learn itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import BaseEstimator, RegressorMixin  # noqa: E402
from sklearn.inspection import PartialDependenceDisplay as SkDisplay  # noqa: E402
from sklearn.inspection import partial_dependence as sk_pd  # noqa: E402

import pdpx  # noqa: E402
from pdpx.core.errors import PdpxError  # noqa: E402
from pdpx.sklearn import PartialDependenceDisplay as PdpxDisplay  # noqa: E402
from pdpx.sklearn import partial_dependence as pdpx_pd  # noqa: E402


class Standardising(RegressorMixin, BaseEstimator):
    """predict = x0 + x0.mean() * (0.3 + standardised x1) + x2 / 2, mean and standardisation over the call."""

    def fit(self, X, y=None):
        self.n_features_in_ = np.asarray(X).shape[1]
        self.fitted_ = True
        return self

    def predict(self, X):
        A = np.asarray(X, dtype=np.float64)
        z = (A[:, 1] - A[:, 1].mean()) / (A[:, 1].std() + 1.0)
        return A[:, 0] + A[:, 0].mean() * (0.3 + z) + 0.5 * A[:, 2]


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"x0": rng.normal(size=80), "x1": rng.exponential(size=80), "x2": rng.uniform(size=80)})
    return Standardising().fit(X), X


def definition(model, X, feature, grid):
    """(ICE of shape (n_rows, n_grid), average of shape (n_grid,)): one predict per grid value, all rows."""
    ice = []
    for v in grid:
        Z = X.copy()
        Z[feature] = v
        ice.append(model.predict(Z))
    ice = np.array(ice).T
    return ice, ice.mean(axis=0)


def test_stacking_differs_here(case):
    """The model really depends on the other rows: brute's stacking (asked for: by default pdpx checks it,
    tests/plugins/test_stacking.py) is not the definition (the contract's counterexample; without it the tests
    below could not fail)."""
    model, X = case
    res = pdpx.partial_dependence(model, X, "x0", method="brute", grid_resolution=20,
                                  method_options={"stack": True})
    _, avg = definition(model, X, "x0", res.grid_values[0])
    assert not np.allclose(res.average[0], avg, rtol=1e-6)


def test_brute_without_stacking_is_the_definition(case):
    model, X = case
    res = pdpx.partial_dependence(model, X, "x0", method="brute", method_options={"stack": False},
                                  grid_resolution=20, kind="both")
    ice, avg = definition(model, X, "x0", res.grid_values[0])
    np.testing.assert_allclose(res.average[0], avg, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.individual[0], ice, rtol=1e-12, atol=1e-12)


def test_brute_without_stacking_two_features(case):
    model, X = case
    res = pdpx.partial_dependence(model, X, ["x0", "x2"], method="brute", method_options={"stack": False},
                                  grid_resolution=6)
    g0, g2 = res.grid_values
    want = np.empty((len(g0), len(g2)))
    for i, a in enumerate(g0):
        for j, b in enumerate(g2):
            Z = X.copy()
            Z["x0"], Z["x2"] = a, b
            want[i, j] = model.predict(Z).mean()
    np.testing.assert_allclose(res.average[0], want, rtol=1e-12, atol=1e-12)


def test_stack_option_is_checked(case):
    model, X = case
    with pytest.raises(PdpxError, match="'stack'.*expected True.*or False"):
        pdpx.partial_dependence(model, X, "x0", method="brute", method_options={"stack": "no"})


@pytest.mark.parametrize("kind", ["average", "individual", "both"])
def test_dropin_equals_scikit_learn(case, kind):
    model, X = case
    mine = pdpx_pd(model, X, ["x0"], kind=kind, grid_resolution=20)
    theirs = sk_pd(model, X, ["x0"], kind=kind, grid_resolution=20)
    np.testing.assert_allclose(mine["grid_values"][0], theirs["grid_values"][0])
    ice, avg = definition(model, X, "x0", mine["grid_values"][0])
    if kind != "individual":
        np.testing.assert_allclose(mine["average"], theirs["average"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mine["average"][0], avg, rtol=1e-12, atol=1e-12)
    if kind != "average":
        np.testing.assert_allclose(mine["individual"], theirs["individual"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mine["individual"][0], ice, rtol=1e-12, atol=1e-12)


def test_display_equals_scikit_learn(case):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model, X = case
    mine = PdpxDisplay.from_estimator(model, X, ["x0", ("x0", "x1")], grid_resolution=8)
    theirs = SkDisplay.from_estimator(model, X, ["x0", ("x0", "x1")], grid_resolution=8)
    for a, b in zip(mine.pd_results, theirs.pd_results):
        np.testing.assert_allclose(a["average"], b["average"], rtol=1e-12, atol=1e-12)
    plt.close("all")


def test_a_pipeline_with_a_row_dependent_function_equals_scikit_learn():
    """A library's own Pipeline holding a user's function that standardises over the call: the drop-in calls it
    once per grid point, as scikit-learn does; a library model without such a function is stacked (and equal)."""
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["x0", "x1", "x2"])
    y = X["x0"] * 2 + X["x1"]
    def centre(A):
        B = np.asarray(A, dtype=np.float64)
        return (B - B.mean(axis=0)) / (B.std(axis=0) + 1.0)

    centred = make_pipeline(FunctionTransformer(centre), Ridge()).fit(X, y)
    plain = make_pipeline(Ridge()).fit(X, y)
    for model in (centred, plain):
        want = sk_pd(model, X, ["x0"], method="brute", kind="average", grid_resolution=8)
        got = pdpx_pd(model, X, ["x0"], method="brute", kind="average", grid_resolution=8)
        np.testing.assert_allclose(got["average"], want["average"], rtol=1e-10, atol=1e-12)
