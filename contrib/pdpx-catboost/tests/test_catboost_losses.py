"""Each CatBoost loss on the plugin's allow-list: ``method="exact"`` (and ``"auto"``) equals the definition
(the column set to each grid value, CatBoost's own predict / predict_proba, averaged); a loss off the list
(RMSEWithUncertainty, whose predict is two links at once) runs brute with the reason in ``res.notes`` and
refuses ``method="exact"`` with it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

cb = pytest.importorskip("catboost")

from catboost_cases import plugin_from_entry_point  # noqa: E402, F401 - every test: the plugin loaded

import pdpx  # noqa: E402
from pdpx.extend import PdpxError  # noqa: E402

N = 160
KW = dict(iterations=8, depth=3, verbose=0, thread_count=1, random_seed=0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.uniform(size=N), "c": rng.normal(size=N)})
    y = np.exp(0.5 * X["a"].to_numpy()) + rng.uniform(0, 0.1, N)
    return X, y


def definition(fn, X, feature, grid):
    """(n_outputs, n_grid): the mean over rows of ``fn`` with ``feature`` set to each grid value."""
    out = []
    for v in grid:
        Z = X.copy()
        Z[feature] = v
        p = np.asarray(fn(Z), dtype=np.float64)
        out.append((p[:, None] if p.ndim == 1 else p).mean(axis=0))
    return np.array(out).T


def assert_definition(res, fn, X):
    d = definition(fn, X, "a", res.grid_values[0])
    if res.average.shape[0] == 1 and d.shape[0] == 2:  # a binary classifier reports its positive class
        d = d[1:]
    assert res.average.shape == d.shape
    np.testing.assert_allclose(res.average, d, rtol=1e-9, atol=1e-12)


REGRESSION = ["RMSE", "MAE", "Quantile:alpha=0.3", "MAPE", "Poisson", "Tweedie:variance_power=1.5",
              "Huber:delta=1.0", "Expectile:alpha=0.3", "LogLinQuantile:alpha=0.4", "Lq:q=1.5", "LogCosh",
              "MultiQuantile:alpha=0.2,0.8", "Cox", "SurvivalAft", "MultiRMSE"]


@pytest.mark.parametrize("loss", REGRESSION)
def test_regression_losses_exact_equal_definition(data, loss):
    X, y = data
    yy = np.c_[y, 1.5 * y] if loss in ("SurvivalAft", "MultiRMSE") else y
    m = cb.CatBoostRegressor(loss_function=loss, **KW).fit(X, yy)
    for method in ("exact", "auto"):
        res = pdpx.partial_dependence(m, X, "a", method=method, grid_resolution=15)
        assert res.method == "exact", res.notes
        assert_definition(res, m.predict, X)


@pytest.mark.parametrize("loss", ["Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll"])
def test_classification_losses_exact_equal_definition(data, loss):
    X, y = data
    a = X["a"].to_numpy()
    yy = {"Logloss": (y > 1).astype(int), "CrossEntropy": 1 / (1 + np.exp(-a))}.get(loss, np.digitize(y, [1, 1.5]))
    m = cb.CatBoostClassifier(loss_function=loss, **KW).fit(X, yy)
    res = pdpx.partial_dependence(m, X, "a", method="exact", grid_resolution=15)
    assert_definition(res, m.predict_proba, X)


@pytest.mark.parametrize("loss", ["YetiRank", "PairLogit", "QueryRMSE"])
def test_ranking_losses_exact_equal_definition(data, loss):
    X, _ = data
    m = cb.CatBoostRanker(loss_function=loss, **KW).fit(X, np.digitize(X["a"], [0, 1]),
                                                         group_id=np.repeat(np.arange(N // 10), 10))
    res = pdpx.partial_dependence(m, X, "a", method="exact", grid_resolution=15)
    assert_definition(res, m.predict, X)


@pytest.mark.parametrize("loss", ["RMSE", "Poisson", "RMSEWithUncertainty"])
def test_plain_model_predicts_its_margins(data, loss):
    """A plain ``CatBoost`` model's predict is RawFormulaVal, whatever the loss: exact reproduces it."""
    X, y = data
    m = cb.CatBoost({"loss_function": loss, **KW}).fit(X, y)
    res = pdpx.partial_dependence(m, X, "a", method="exact", grid_resolution=15)
    assert_definition(res, m.predict, X)


def test_rmse_with_uncertainty_runs_brute_with_the_reason(data):
    """Its predict is (mean, exp(2 x margin)): two links, so the tree engine refuses, brute answers."""
    X, y = data
    m = cb.CatBoostRegressor(loss_function="RMSEWithUncertainty", **KW).fit(X, y)
    raw = m.predict(X, prediction_type="RawFormulaVal")
    np.testing.assert_allclose(m.predict(X)[:, 1], np.exp(2 * raw[:, 1]), rtol=1e-12)  # what CatBoost does
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=15)
    assert res.method == "brute"
    assert any("RMSEWithUncertainty" in n and "brute" in n for n in res.notes), res.notes
    assert_definition(res, m.predict, X)
    with pytest.raises(PdpxError, match="RMSEWithUncertainty.*two columns"):
        pdpx.partial_dependence(m, X, "a", method="exact")
    raw_res = pdpx.partial_dependence(m, X, "a", method="exact", response="raw", grid_resolution=15)
    assert_definition(raw_res, lambda Z: m.predict(Z, prediction_type="RawFormulaVal"), X)


def test_a_loss_off_the_list_runs_brute(data, monkeypatch):
    """A loss pdpx does not list (simulated: RMSE taken off the list) is refused, never guessed."""
    from pdpx_catboost import adapter as cba

    X, y = data
    m = cb.CatBoostRegressor(loss_function="RMSE", **KW).fit(X, y)
    monkeypatch.setattr(cba, "IDENTITY_LOSSES", cba.IDENTITY_LOSSES - {"RMSE"})
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=15)
    assert res.method == "brute"
    assert any("'RMSE'" in n and "not one pdpx knows" in n for n in res.notes), res.notes
    assert_definition(res, m.predict, X)
