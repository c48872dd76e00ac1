"""What a scikit-learn estimator accepts is its own rule: pdpx refuses exactly what the estimator's predict refuses.

The reference is scikit-learn itself: for each estimator and each kind of value
(+inf, -inf, beyond float32's range) in a column that is not the target feature,
``estimator.predict`` either refuses the rows (then every pdpx method refuses them
up front with a ``PdpxError`` quoting it) or predicts (then every method computes,
and the result is the definition: set the column, predict, average).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx import PdpxError

VALUES = {"+inf": np.inf, "-inf": -np.inf, "1e39": 1e39}


def _estimators():
    from sklearn.ensemble import (
        ExtraTreesRegressor,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    X["k"] = rng.integers(0, 4, 300).astype(float)
    y = X.a * 2 + X.b - X.k
    fitted = {
        "HistGradientBoostingRegressor": HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y),
        "HistGradientBoostingClassifier": HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y > 0),
        "HistGradientBoosting, k categorical": HistGradientBoostingRegressor(
            max_iter=20, categorical_features=[3], random_state=0).fit(X, y),
        "DecisionTreeRegressor": DecisionTreeRegressor(max_depth=5, random_state=0).fit(X, y),
        "RandomForestRegressor": RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y),
        "ExtraTreesRegressor": ExtraTreesRegressor(n_estimators=5, random_state=0).fit(X, y),
        "GradientBoostingRegressor": GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y),
        "LinearRegression": LinearRegression().fit(X, y),
        "Pipeline(StandardScaler, HistGradientBoosting)": make_pipeline(
            StandardScaler(), HistGradientBoostingRegressor(max_iter=10, random_state=0)).fit(X, y),
    }
    return fitted, X


ESTIMATORS, X = _estimators()


def _sklearn_accepts(model, frame) -> bool:
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # casting 1e39 to float32 warns first
        warnings.simplefilter("ignore")
        try:
            (model.predict_proba if hasattr(model, "predict_proba") else model.predict)(frame)
        except ValueError:
            return False
    return True


@pytest.mark.parametrize("value", list(VALUES), ids=list(VALUES))
@pytest.mark.parametrize("column", ["b", "k"])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_pdpx_refuses_what_the_estimator_refuses_and_computes_what_it_accepts(name, column, value):
    model = ESTIMATORS[name]
    frame = X.copy()
    frame.loc[[3, 10, 11], column] = VALUES[value]
    accepted = _sklearn_accepts(model, frame)
    methods = ("auto", "brute") + (("exact",) if "Linear" not in name else ())
    for method in methods:
        if not accepted:
            with pytest.raises(PdpxError, match=rf"X column '{column}' holds 3 .* refuses them \("):
                pdpx.partial_dependence(model, frame, "a", method=method, grid_resolution=5)
            continue
        res = pdpx.partial_dependence(model, frame, "a", method=method, grid_resolution=5, kind="both")
        predict = model.predict_proba if hasattr(model, "predict_proba") else model.predict
        for g, v in enumerate(res.grid_values[0]):
            pred = np.asarray(predict(frame.assign(a=v)))
            pred = pred[:, -1] if pred.ndim == 2 else pred
            np.testing.assert_allclose(res.average[-1, g], pred.mean(), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(res.individual[-1, :, g], pred, rtol=1e-9, atol=1e-12)


def test_histgradientboosting_takes_infinity_as_a_large_value_in_a_numeric_column():
    """The case of the issue: an inf in another column with HistGradientBoosting is computed, exactly."""
    model = ESTIMATORS["HistGradientBoostingRegressor"]
    frame = X.copy()
    frame.loc[::7, "b"] = np.inf
    frame.loc[1::7, "b"] = -np.inf
    auto = pdpx.partial_dependence(model, frame, "a", grid_resolution=8)
    brute = pdpx.partial_dependence(model, frame, "a", grid_resolution=8, method="brute")
    assert auto.method == "exact"
    np.testing.assert_allclose(auto.average, brute.average, rtol=1e-12, atol=1e-12)
    big = frame.assign(b=frame.b.replace({np.inf: 1e300, -np.inf: -1e300}))  # sklearn routes inf as a large value
    np.testing.assert_allclose(auto.average, pdpx.partial_dependence(model, big, "a", grid_resolution=8).average,
                               rtol=1e-12, atol=1e-12)


def test_custom_grid_values_the_estimator_refuses_are_refused():
    tree = ESTIMATORS["DecisionTreeRegressor"]
    with pytest.raises(PdpxError, match=r"grid values of 'a' the DecisionTreeRegressor refuses as input: \[1e\+39\]"):
        pdpx.partial_dependence(tree, X, "a", custom_values={"a": [0.0, 1e39]})
    hgb = ESTIMATORS["HistGradientBoostingRegressor"]
    res = pdpx.partial_dependence(hgb, X, "a", custom_values={"a": [0.0, 1e39]}, method="brute")
    np.testing.assert_allclose(res.average[0, 1], hgb.predict(X.assign(a=1e39)).mean(), rtol=1e-12)
