"""The tree representation pdpx reads from CatBoost models predicts what CatBoost's own predict does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from catboost_cases import at_borders, catboost, data, plugin_from_entry_point, tree_model_of  # noqa: F401


def fit(cls, y, X, **params):
    params = {"iterations": 30, "depth": 4, "verbose": 0, "random_seed": 0, "thread_count": 1,
              "allow_writing_files": False, **params}
    cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X.dtypes[c])]
    if cats and "cat_features" not in params:
        params["cat_features"] = cats
    return cls(**params).fit(X, y)


def assert_same_prediction(model, X, response, reference):
    _, tm = tree_model_of(model, X, response)
    rows = at_borders(model, X)
    mine = tm.ensemble.predict(tm.encode(rows))
    ref = np.asarray(reference(rows), dtype=float)
    ref = ref.reshape(len(rows), -1)
    if mine.shape[1] == 2 and ref.shape[1] == 1:
        mine = mine[:, 1:]
    np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nan_mode", ["Min", "Max"])
@pytest.mark.parametrize("one_hot_max_size", [4, 255])
def test_regressor_nan_modes_one_hot_and_borders(nan_mode, one_hot_max_size):
    X, y = data()
    m = fit(catboost.CatBoostRegressor, y, X, nan_mode=nan_mode, one_hot_max_size=one_hot_max_size)
    assert_same_prediction(m, X, "predict", m.predict)
    assert_same_prediction(m, X, "raw", lambda R: m.predict(R, prediction_type="RawFormulaVal"))


def test_forbidden_nan_mode_predicts_nan_as_catboost_does():
    X, y = data(nan=False)
    m = fit(catboost.CatBoostRegressor, y, X[["a", "b"]], nan_mode="Forbidden")
    assert_same_prediction(m, X[["a", "b"]], "predict", m.predict)  # at_borders puts NaN in


def test_binary_classifier_probability_and_raw():
    X, y = data()
    m = fit(catboost.CatBoostClassifier, np.where(y > np.median(y), "high", "low"), X, one_hot_max_size=8)
    assert_same_prediction(m, X, "predict_proba", lambda R: m.predict_proba(R))
    assert_same_prediction(m, X, "raw", lambda R: m.predict(R, prediction_type="RawFormulaVal"))


@pytest.mark.parametrize("loss", ["MultiClass", "MultiClassOneVsAll"])
def test_multiclass_leaf_layout(loss):
    X, y = data()
    m = fit(catboost.CatBoostClassifier, np.digitize(y, np.quantile(y, [0.33, 0.66])), X, loss_function=loss,
            one_hot_max_size=8)
    assert_same_prediction(m, X, "predict_proba", lambda R: m.predict_proba(R))
    assert_same_prediction(m, X, "raw", lambda R: m.predict(R, prediction_type="RawFormulaVal"))


@pytest.mark.parametrize("loss", ["Poisson", "Tweedie:variance_power=1.5"])
def test_exponent_predictions_of_count_losses(loss):
    X, y = data()
    m = fit(catboost.CatBoostRegressor, np.round(np.exp(0.5 * y)), X, loss_function=loss, one_hot_max_size=8)
    _, tm = tree_model_of(m, X, "predict")
    assert tm.ensemble.link == "exp"
    assert_same_prediction(m, X, "predict", m.predict)


def test_ranker_and_plain_catboost_and_depthwise_trees():
    X, y = data(nan=False)
    num = X[["a", "b"]]
    r = catboost.CatBoostRanker(iterations=20, depth=4, verbose=0, thread_count=1, allow_writing_files=False).fit(
        num, y, group_id=np.arange(len(y)) // 20)
    assert_same_prediction(r, num, "predict", r.predict)
    p = catboost.CatBoost({"iterations": 20, "depth": 3, "verbose": 0, "loss_function": "Logloss",
                           "allow_writing_files": False, "thread_count": 1}).fit(num, (y > 0).astype(int))
    assert_same_prediction(p, num, "predict_proba", lambda R: p.predict(R, prediction_type="Probability"))
    d = fit(catboost.CatBoostRegressor, y, num, grow_policy="Depthwise", depth=5)
    assert_same_prediction(d, num, "predict", d.predict)
    lg = fit(catboost.CatBoostRegressor, y, num, grow_policy="Lossguide", max_leaves=12)
    assert_same_prediction(lg, num, "predict", lg.predict)


def test_multi_target_regression_vector_leaves():
    X, y = data(nan=False)
    num = X[["a", "b"]]
    Y = np.column_stack([y, -2 * y + num["b"]])
    m = fit(catboost.CatBoostRegressor, Y, num, loss_function="MultiRMSE")
    assert_same_prediction(m, num, "predict", m.predict)


def test_float32_borders_and_values_one_ulp_away():
    """A value one float64 ulp above a border rounds to the border in float32: it goes left, as in CatBoost."""
    X = pd.DataFrame({"a": np.repeat(np.float32([0.1, 0.2, 0.3, 0.7]).astype(float), 25)})
    y = np.repeat([0.0, 1.0, 3.0, 7.0], 25)
    m = fit(catboost.CatBoostRegressor, y, X, depth=2)
    borders = np.asarray(m.get_borders()[0], dtype=np.float32).astype(float)
    rows = pd.DataFrame({"a": np.concatenate([borders, np.nextafter(borders, np.inf), np.nextafter(borders, -np.inf),
                                             borders + 1e-9])})
    _, tm = tree_model_of(m, X, "predict")
    np.testing.assert_allclose(tm.ensemble.predict(tm.encode(rows))[:, 0], m.predict(rows), rtol=1e-12, atol=1e-12)
