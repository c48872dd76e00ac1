"""include_missing: the missing-value grid point equals the model's prediction with the feature set to NaN."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestRegressor
from view_data import data_with_missing, direct_ice

import pdpx


@pytest.fixture(scope="module")
def hgb():
    X, y = data_with_missing()
    return HistGradientBoostingRegressor(max_iter=40, random_state=0).fit(X, y), X


@pytest.mark.parametrize("method", ["exact", "brute"])
def test_missing_point_is_the_prediction_at_nan(hgb, method):
    model, X = hgb
    res = pdpx.partial_dependence(model, X, "a", kind="both", method=method, grid_resolution=8)
    grid = res.grid_values[0]
    assert np.isnan(grid[-1]) and np.isfinite(grid[:-1]).all() and len(grid) == 9
    ice = direct_ice(model.predict, X, "a", grid)
    np.testing.assert_allclose(res.individual[0], ice, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(res.average[0], ice.mean(axis=0), rtol=1e-10, atol=1e-10)
    assert np.ptp(ice[:, -1]) > 0  # the missing point depends on the rows, not a constant


def test_missing_point_weighted_and_two_way(hgb):
    model, X = hgb
    w = np.random.default_rng(3).uniform(0.1, 2.0, len(X))
    res = pdpx.partial_dependence(model, X, "a", sample_weight=w, grid_resolution=6)
    ice = direct_ice(model.predict, X, "a", res.grid_values[0])
    np.testing.assert_allclose(res.average[0], (w[:, None] * ice).sum(0) / w.sum(), rtol=1e-10)
    two = pdpx.partial_dependence(model, X, ["a", "b"], grid_resolution=4)
    ga, gb = two.grid_values
    assert np.isnan(ga[-1]) and not np.isnan(gb).any()  # b has no missing value: no missing point
    for jb, vb in enumerate(gb):
        Xb = X.assign(b=vb)
        np.testing.assert_allclose(two.average[0, :, jb], direct_ice(model.predict, Xb, "a", ga).mean(0), rtol=1e-10)


def test_classifier_probabilities_at_missing():
    X, y = data_with_missing(seed=1)
    clf = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(X, y > np.median(y))
    res = pdpx.partial_dependence(clf, X, "a", grid_resolution=5)
    assert res.method == "exact"
    Xn = X.assign(a=np.nan)
    assert res.average[0, -1] == pytest.approx(clf.predict_proba(Xn)[:, 1].mean(), rel=1e-10)


def test_random_forest_routes_missing_like_predict():
    X, y = data_with_missing(seed=2)
    rf = RandomForestRegressor(n_estimators=15, random_state=0).fit(X[["a", "b"]], y)
    res = pdpx.partial_dependence(rf, X[["a", "b"]], "a", grid_resolution=5, kind="both")
    assert res.method == "exact"
    ice = direct_ice(rf.predict, X[["a", "b"]], "a", res.grid_values[0])
    np.testing.assert_allclose(res.individual[0], ice, rtol=1e-10, atol=1e-10)


def test_auto_true_false(hgb):
    model, X = hgb
    assert np.isnan(pdpx.partial_dependence(model, X, "a", grid_resolution=5).grid_values[0][-1])
    assert not np.isnan(pdpx.partial_dependence(model, X, "b", grid_resolution=5).grid_values[0]).any()
    forced = pdpx.partial_dependence(model, X, "b", include_missing=True, grid_resolution=5)
    assert np.isnan(forced.grid_values[0][-1])
    assert forced.average[0, -1] == pytest.approx(model.predict(X.assign(b=np.nan)).mean(), rel=1e-10)
    off = pdpx.partial_dependence(model, X, "a", include_missing=False, grid_resolution=5)
    assert not np.isnan(off.grid_values[0]).any()


def test_model_that_refuses_missing_values():
    X, _ = data_with_missing(seed=4)

    def f(frame):  # a model that turns a missing value into NaN
        return frame["a"].to_numpy() * 2 + frame["b"].to_numpy()

    auto = pdpx.partial_dependence(f, X[["a", "b"]], "a", grid_resolution=5)
    assert not np.isnan(auto.grid_values[0]).any()  # auto: the model does not accept NaN, no missing point
    with pytest.raises(pdpx.PdpxError, match="include_missing=True.*'a'.*NaN"):
        pdpx.partial_dependence(f, X[["a", "b"]], "a", include_missing=True)

    def g(frame):
        if frame.isna().any().any():
            raise ValueError("Input contains NaN")
        return frame["b"].to_numpy()

    with pytest.raises(pdpx.PdpxError, match="include_missing=True.*'b'.*ValueError"):
        pdpx.partial_dependence(g, X[["b"]], "b", include_missing=True)


def test_frame_labels_missing_and_categorical_refused(hgb):
    model, X = hgb
    df = pdpx.partial_dependence(model, X, "a", grid_resolution=5).to_frame()
    last = df.iloc[-1]
    assert last["label_1"] == "missing" and np.isnan(last["x_1"])
    assert (df["label_1"] == "missing").sum() == 1
    with pytest.raises(pdpx.PdpxError, match="include_missing=True.*'g' is categorical"):
        pdpx.partial_dependence(model, X, "g", include_missing=True)
    with pytest.raises(pdpx.PdpxError, match="include_missing"):
        pdpx.partial_dependence(model, X, "a", include_missing="yes")


def test_integer_column_forced_missing():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"k": rng.integers(0, 5, 200), "b": rng.normal(size=200)})
    y = X["k"] * 1.0 + X["b"]
    model = HistGradientBoostingRegressor(max_iter=20).fit(X, y)
    res = pdpx.partial_dependence(model, X, "k", include_missing=True, kind="both")
    assert list(res.grid_values[0][:-1]) == [0, 1, 2, 3, 4] and np.isnan(res.grid_values[0][-1])
    np.testing.assert_allclose(res.individual[0][:, -1], model.predict(X.assign(k=np.nan)), rtol=1e-10)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_boosters_route_missing_like_predict(library):
    lib = pytest.importorskip(library, reason=f"{library} is not installed")
    X, y = data_with_missing(seed=6)
    X = X[["a", "b"]]
    if library == "xgboost":
        model = lib.XGBRegressor(n_estimators=30, max_depth=3, n_jobs=1).fit(X, y)
    else:
        model = lib.LGBMRegressor(n_estimators=30, num_leaves=7, verbose=-1, n_jobs=1).fit(X, y)
    res = pdpx.partial_dependence(model, X, "a", grid_resolution=6, kind="both")
    assert res.method == "exact" and np.isnan(res.grid_values[0][-1])
    ice = direct_ice(model.predict, X, "a", res.grid_values[0])
    np.testing.assert_allclose(res.individual[0], ice, rtol=1e-6, atol=1e-6)
