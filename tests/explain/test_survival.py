"""survival_profile and the time-varying share, against the definition (the model's own step functions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import PdpxError
from pdpx.explain.survival import time_varying_share

pytest.importorskip("sksurv", reason="scikit-survival is the survival extra (pdpx[survival])")
from sksurv.ensemble import RandomSurvivalForest  # noqa: E402
from sksurv.linear_model import CoxPHSurvivalAnalysis  # noqa: E402
from sksurv.util import Surv  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    n = 200
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(0, 2, n), "c": rng.normal(size=n)})
    t = np.ceil(rng.exponential(50 * np.exp(-0.8 * X["a"] + 0.5 * X["b"] ** 2))).clip(1, 300)
    return X, Surv.from_arrays(event=rng.uniform(size=n) < 0.75, time=t)


def pd_definition(model, X, feature, grid, times, function):
    out = np.empty((len(times), len(grid)))
    for k, v in enumerate(grid):
        out[:, k] = np.mean([f(times) for f in getattr(model, function)(X.assign(**{feature: v}))], axis=0)
    return out


def test_the_share_is_one_minus_the_rank_one_part():
    curve = np.array([0.0, 1.0, 3.0, 2.0])
    scaled = np.outer([0.5, 1.0, 2.0], curve) + np.array([[1.0], [2.0], [3.0]])  # one curve scaled, shifted
    assert time_varying_share(scaled) == pytest.approx(0.0, abs=1e-15)
    assert time_varying_share(np.ones((3, 4))) == 0.0  # no effect
    crossing = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])  # the effect turns around
    effect = crossing - crossing.mean(axis=1, keepdims=True)
    s = np.linalg.svd(effect, compute_uv=False)
    assert time_varying_share(crossing) == pytest.approx(1 - s[0] ** 2 / (s ** 2).sum(), abs=1e-15)


def test_a_cox_model_cumulative_hazard_has_no_time_varying_share(data):
    X, y = data
    cox = CoxPHSurvivalAnalysis().fit(X, y)
    profile = pdpx.survival_profile(cox, X, response="cumulative_hazard", grid_resolution=8)
    assert (profile.shares.to_numpy() < 1e-12).all()
    assert profile.shares.to_numpy().max() >= 0
    surv = pdpx.survival_profile(cox, X, ["a"], response="survival", grid_resolution=8)
    assert surv.shares["a"] > 1e-6  # S0(t) ** exp(f) is not one curve scaled


def test_profile_of_a_forest_equals_the_definition(data):
    X, y = data
    forest = RandomSurvivalForest(n_estimators=8, min_samples_leaf=6, random_state=0).fit(X, y)
    times = forest.unique_times_[[5, 20, 40]]
    profile = pdpx.survival_profile(forest, X, ["a", "b"], times=times, grid_resolution=6, kind="both")
    np.testing.assert_array_equal(profile.times, times)
    frame = profile.to_frame()
    assert list(frame.columns) == ["feature", "time", "effect", "time_varying_share"]
    for feature in ("a", "b"):
        res = profile.result(feature)
        ref = pd_definition(forest, X, feature, res.grid_values[0], times, "predict_survival_function")
        np.testing.assert_allclose(res.average, ref, rtol=0, atol=1e-12)
        rows = frame[frame.feature == feature]
        np.testing.assert_allclose(rows["effect"], ref.max(axis=1) - ref.min(axis=1), rtol=0, atol=1e-12)
        assert rows["time_varying_share"].iloc[0] == pytest.approx(time_varying_share(ref), abs=1e-9)


def test_profile_refuses_a_response_without_times(data):
    X, y = data
    cox = CoxPHSurvivalAnalysis().fit(X, y)
    with pytest.raises(PdpxError, match="response must be one of"):
        pdpx.survival_profile(cox, X, response="risk")
