"""XGBoost's survival objectives: an AFT model's survival and cumulative hazard at asked times are its margins'
curves (1 - F((log t - margin) / scale), F the model's distribution) averaged; a Cox model's risk is exact."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import PdpxError

xgb = pytest.importorskip("xgboost")
stats = pytest.importorskip("scipy.stats")

SF = {"normal": stats.norm.sf, "logistic": stats.logistic.sf, "extreme": stats.gumbel_l.sf}
TIMES = np.array([0.0, 0.5, 3.0, 12.0, 40.0])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    n = 240
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(-1, 1, n), "c": rng.normal(size=n)})
    t = rng.exponential(8 * np.exp(0.7 * X["a"] - 0.4 * X["b"]))
    upper = np.where(rng.uniform(size=n) < 0.7, t, np.inf)
    return X, t, upper


def aft(data, distribution):
    X, t, upper = data
    d = xgb.DMatrix(X)
    d.set_float_info("label_lower_bound", t)
    d.set_float_info("label_upper_bound", upper)
    params = {"objective": "survival:aft", "aft_loss_distribution": distribution,
              "aft_loss_distribution_scale": 1.3, "max_depth": 3, "eta": 0.3}
    return xgb.train(params, d, 20)


def curve_definition(booster, X, feature, grid, response, distribution):
    """The margins XGBoost predicts, through scipy's distribution at the times, averaged."""
    scale = float(np.float32(1.3))
    out = np.empty((len(TIMES), len(grid)))
    for k, v in enumerate(grid):
        margin = booster.predict(xgb.DMatrix(X.assign(**{feature: v})), output_margin=True).astype(np.float64)
        with np.errstate(divide="ignore"):
            s = SF[distribution]((np.log(TIMES)[None, :] - margin[:, None]) / scale)
        out[:, k] = (s if response == "survival" else -np.log(s)).mean(axis=0)
    return out


@pytest.mark.parametrize("distribution", ["normal", "logistic", "extreme"])
@pytest.mark.parametrize("response", ["survival", "cumulative_hazard"])
def test_aft_curves_equal_the_margins_through_the_distribution(data, distribution, response):
    X = data[0]
    booster = aft(data, distribution)
    res = pdpx.partial_dependence(booster, X, "a", response=response, times=TIMES, grid_resolution=7)
    assert res.method == "brute" and any("AFT" in n for n in res.notes)
    ref = curve_definition(booster, X, "a", res.grid_values[0], response, distribution)
    np.testing.assert_allclose(res.average, ref, rtol=1e-5, atol=1e-5)
    assert res.times.tolist() == TIMES.tolist()


def test_aft_needs_times(data):
    booster = aft(data, "normal")
    with pytest.raises(PdpxError, match="pass times="):
        pdpx.partial_dependence(booster, data[0], "a", response="survival")


def test_cox_risk_is_exact_and_has_no_survival(data):
    X, t, upper = data
    y = np.where(np.isfinite(upper), t, -t)  # XGBoost's Cox labels: negative for censored
    model = xgb.XGBRegressor(objective="survival:cox", n_estimators=20, max_depth=3).fit(X, y)
    for response in ("auto", "risk"):
        res = pdpx.partial_dependence(model, X, "b", grid_resolution=6, method="exact", response=response)
        ref = [model.predict(X.assign(b=v)).astype(np.float64).mean() for v in res.grid_values[0]]
        np.testing.assert_allclose(res.average[0], ref, rtol=1e-5)
    with pytest.raises(PdpxError, match="not a survival model"):
        pdpx.partial_dependence(model, X, "b", response="survival", times=[1.0])
