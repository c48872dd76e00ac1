"""brute's stacking check (issue 49, point 2): a model whose prediction goes through the user's own code is
checked once, on a small sample, for predictions that depend on the other rows of the call; such a model is then
called once per grid point, with a note and one StackingWarning. Compared with the definition: the feature set to
each grid value on every row, the model's own predict on all the rows at once, averaged."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")
from sklearn.base import BaseEstimator, RegressorMixin  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer, StandardScaler  # noqa: E402

import pdpx  # noqa: E402
from pdpx.core import stacking  # noqa: E402


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


def standardise(A):
    """A user's function that standardises each column over the rows it is given."""
    A = np.asarray(A, dtype=np.float64)
    return (A - A.mean(axis=0)) / (A.std(axis=0) + 1.0)


def squares(A):
    """A user's function of each value alone."""
    return np.asarray(A, dtype=np.float64) ** 2


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(3)
    return pd.DataFrame({"x0": rng.normal(size=80), "x1": rng.exponential(size=80), "x2": rng.uniform(size=80)})


def definition(model, X, features, grids):
    """The average over the rows of the model's predict, all rows in one call, at each grid point."""
    mesh = np.meshgrid(*grids, indexing="ij")
    out = np.empty(mesh[0].shape)
    for idx in np.ndindex(out.shape):
        Z = X.copy()
        for f, m in zip(features, mesh):
            Z[f] = m[idx]
        out[idx] = np.mean(model.predict(Z))
    return out


def _computed(model, X, features, **kw):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = pdpx.partial_dependence(model, X, features, grid_resolution=12, **kw)
    return res, [w for w in seen if issubclass(w.category, pdpx.StackingWarning)]


def _pipeline(func, X):
    y = 2 * X.x0 + X.x1
    return Pipeline([("f", FunctionTransformer(func)), ("lr", LinearRegression())]).fit(X, y)


@pytest.mark.parametrize("make", [lambda X: Standardising().fit(X), lambda X: _pipeline(standardise, X)],
                         ids=["own class", "FunctionTransformer"])
def test_a_batch_dependent_model_is_called_once_per_grid_point_with_a_note_and_one_warning(make, X):
    model = make(X)
    res, warned = _computed(model, X, "x0")
    assert res.method == "brute"
    np.testing.assert_allclose(res.average[0], definition(model, X, ["x0"], res.grid_values), rtol=1e-12)
    assert any("once per point" in n and "your own code" in n for n in res.notes)
    assert len(warned) == 1
    again, warned = _computed(model, X, "x0")  # later calls: the same answer and note, no second warning
    np.testing.assert_array_equal(again.average, res.average)
    assert any("once per point" in n for n in again.notes) and not warned
    stacked = pdpx.partial_dependence(model, X, "x0", grid_resolution=12, method_options={"stack": True})
    assert not np.allclose(stacked.average[0], res.average[0])  # stacking really differs (else this cannot fail)


def test_a_two_way_of_a_batch_dependent_model_is_the_definition(X):
    model = Standardising().fit(X)
    res, _ = _computed(model, X, ["x0", "x2"])
    np.testing.assert_allclose(res.average[0], definition(model, X, ["x0", "x2"], res.grid_values), rtol=1e-12)


@pytest.mark.parametrize("make", [lambda X: _pipeline(squares, X), lambda X: (lambda Z: Z["x0"] * Z["x1"] ** 2)],
                         ids=["row-wise FunctionTransformer", "row-wise function"])
def test_a_row_wise_user_function_is_checked_and_still_stacked(make, X):
    model = make(X)
    res, warned = _computed(model, X, "x1")
    assert not warned and not any("once per point" in n for n in res.notes)
    predict = model.predict if hasattr(model, "predict") else model
    want = [np.mean(predict(X.assign(x1=v))) for v in res.grid_values[0]]
    np.testing.assert_allclose(res.average[0], want, rtol=1e-12)


def test_a_library_model_is_not_checked(X):
    """No user code on the way (a library's scaler and trees): no check, no extra predict call."""
    y = 2 * X.x0 + X.x1
    model = Pipeline([("sc", StandardScaler()), ("m", HistGradientBoostingRegressor(max_iter=10))]).fit(X, y)
    assert pdpx.core.plugins.adapt(model).user_code("predict") is None
    assert pdpx.core.plugins.adapt(_pipeline(np.exp, X)).user_code("predict") is None  # NumPy's function
    assert "standardise" in pdpx.core.plugins.adapt(_pipeline(standardise, X)).user_code("predict")


def test_a_given_stack_option_is_obeyed_unchecked(X):
    model = Standardising().fit(X)
    res, warned = _computed(model, X, "x0", method="brute", method_options={"stack": False})
    assert not warned and not any("your own code" in n for n in res.notes)
    np.testing.assert_allclose(res.average[0], definition(model, X, ["x0"], res.grid_values), rtol=1e-12)


def test_the_check_costs_a_few_small_calls_once(X):
    """The sample: one call of ROWS x POINTS rows and POINTS calls of ROWS rows, on the first call only."""
    sizes = []

    def model(Z):
        sizes.append(len(Z))
        return Z["x0"].to_numpy() * 2.0

    pdpx.partial_dependence(model, X, "x0", grid_resolution=12)
    assert sizes[1:2 + stacking.POINTS] == [stacking.ROWS * stacking.POINTS] + [stacking.ROWS] * stacking.POINTS
    sizes.clear()
    pdpx.partial_dependence(model, X, "x0", grid_resolution=12)
    assert stacking.ROWS not in sizes  # checked once
