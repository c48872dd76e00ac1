"""CatBoost survival losses (docs/survival.md, "CatBoost"): a ``Cox`` model's risk (its margin, the log hazard
ratio) is exact and equals CatBoost's own predict averaged; it has no survival curve (no baseline hazard), refused
naming ``risk``. A ``SurvivalAft`` model's survival and cumulative hazard at the asked times equal the definition:
CatBoost's own margins with the column set to each grid value, through the distribution's survival function
(scipy's), read at each time, averaged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

cb = pytest.importorskip("catboost")
stats = pytest.importorskip("scipy.stats")

from catboost_cases import plugin_from_entry_point  # noqa: E402, F401 - every test: the plugin loaded

import pdpx  # noqa: E402
from pdpx.extend import PdpxError  # noqa: E402

N = 200
KW = dict(iterations=15, depth=3, verbose=0, thread_count=1, random_seed=0)
TIMES = np.array([0.5, 2.0, 3.7, 10.0])
#: The survival function of each SurvivalAft distribution (CatBoost's Extreme: CDF 1 - exp(-exp(z)), the
#: minimum Gumbel).
SF = {"Normal": stats.norm.sf, "Logistic": stats.logistic.sf, "Extreme": stats.gumbel_l.sf}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.uniform(size=N), "c": rng.normal(size=N)})
    t = np.exp(1.0 + 0.8 * X["a"].to_numpy() - X["b"].to_numpy() + 0.4 * rng.normal(size=N))
    censored = rng.uniform(size=N) < 0.3
    return X, t, censored


def aft_model(data, dist, scale):
    X, t, censored = data
    y = np.c_[t, np.where(censored, -1.0, t)]  # CatBoost's interval labels: upper -1 for right-censored
    return cb.CatBoostRegressor(loss_function=f"SurvivalAft:dist={dist};scale={scale}", **KW).fit(X, y)


def definition(model, X, feature, grid, response, dist, scale):
    out = np.empty((len(TIMES), len(grid)))
    for k, v in enumerate(grid):
        margin = model.predict(X.assign(**{feature: v}), prediction_type="RawFormulaVal").astype(np.float64)
        s = SF[dist]((np.log(TIMES)[None, :] - margin[:, None]) / scale)
        out[:, k] = (s if response == "survival" else -np.log(s)).mean(axis=0)
    return out


@pytest.mark.parametrize("dist", ["Normal", "Logistic", "Extreme"])
@pytest.mark.parametrize("response", ["survival", "cumulative_hazard"])
def test_aft_curves_equal_catboost_margins_through_the_distribution(data, dist, response):
    X = data[0]
    model = aft_model(data, dist, 1.3)
    res = pdpx.partial_dependence(model, X, "a", response=response, times=TIMES, grid_resolution=6, kind="both")
    assert res.method == "brute" and any("SurvivalAft" in n for n in res.notes)
    assert res.times.tolist() == TIMES.tolist()
    ref = definition(model, X, "a", res.grid_values[0], response, dist, 1.3)
    np.testing.assert_allclose(res.average, ref, rtol=1e-12, atol=1e-12)
    assert res.individual.shape == (len(TIMES), len(X), 6)
    assert res.to_frame()["time"].unique().tolist() == TIMES.tolist()


def test_aft_default_distribution_and_times(data):
    X, t, censored = data
    model = cb.CatBoostRegressor(loss_function="SurvivalAft", **KW).fit(X, np.c_[t, np.where(censored, -1.0, t)])
    res = pdpx.partial_dependence(model, X, "b", response="survival", times=TIMES, grid_resolution=4)
    np.testing.assert_allclose(res.average, definition(model, X, "b", res.grid_values[0], "survival", "Normal", 1.0),
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(PdpxError, match="pass times="):  # CatBoost keeps no training times to default to
        pdpx.partial_dependence(model, X, "b", response="survival")
    with pytest.raises(PdpxError, match="must be >= 0"):
        pdpx.partial_dependence(model, X, "b", response="survival", times=[-1.0, 2.0])


def test_aft_margin_stays_exact(data):
    X = data[0]
    model = aft_model(data, "Normal", 1.0)
    res = pdpx.partial_dependence(model, X, "a", response="raw", grid_resolution=5, method="exact")
    ref = [model.predict(X.assign(a=v), prediction_type="RawFormulaVal").mean() for v in res.grid_values[0]]
    np.testing.assert_allclose(res.average[0], ref, rtol=1e-9, atol=1e-9)


def test_cox_risk_is_exact_and_survival_is_refused_naming_risk(data):
    X, t, censored = data
    model = cb.CatBoostRegressor(loss_function="Cox", **KW).fit(X, np.where(censored, -t, t))
    assert "risk" in pdpx.partial_dependence(model, X, "a", response="risk", grid_resolution=3).outputs[0]
    res = pdpx.partial_dependence(model, X, "a", response="risk", grid_resolution=6, method="exact", kind="both")
    ref = [model.predict(X.assign(a=v)).astype(np.float64).mean() for v in res.grid_values[0]]
    np.testing.assert_allclose(res.average[0], ref, rtol=1e-9, atol=1e-9)
    for response in ("survival", "cumulative_hazard"):
        with pytest.raises(PdpxError, match="no baseline hazard.*response='risk'"):
            pdpx.partial_dependence(model, X, "a", response=response, times=[1.0])
