"""scikit-survival models against the definition: set the column, call the model's own step functions
(``predict_survival_function`` / ``predict_cumulative_hazard_function``), read them at the asked times, average."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import PdpxError

sksurv = pytest.importorskip("sksurv", reason="scikit-survival is the survival extra (pdpx[survival])")
from sksurv.ensemble import (  # noqa: E402
    ComponentwiseGradientBoostingSurvivalAnalysis,
    ExtraSurvivalTrees,
    GradientBoostingSurvivalAnalysis,
    RandomSurvivalForest,
)
from sksurv.linear_model import CoxPHSurvivalAnalysis  # noqa: E402
from sksurv.tree import SurvivalTree  # noqa: E402
from sksurv.util import Surv  # noqa: E402

FUNCTIONS = {"survival": "predict_survival_function", "cumulative_hazard": "predict_cumulative_hazard_function"}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 240
    X = pd.DataFrame({"age": rng.uniform(30, 80, n).round(1), "dose": rng.normal(size=n),
                      "sex": rng.integers(0, 2, n).astype(float), "noise": rng.normal(size=n)})
    hazard = np.exp(0.04 * (X["age"] - 55) + 0.6 * X["dose"] * (X["sex"] - 0.5))
    t = np.ceil(rng.exponential(300 / hazard)).clip(1, 900)  # integer days: ties among the times
    event = rng.uniform(size=n) < 0.7
    return X, Surv.from_arrays(event=event, time=t)


@pytest.fixture(scope="module")
def models(data):
    X, y = data
    return {
        "rsf": RandomSurvivalForest(n_estimators=12, min_samples_leaf=8, random_state=0).fit(X, y),
        "est": ExtraSurvivalTrees(n_estimators=12, min_samples_leaf=8, random_state=0).fit(X, y),
        "tree": SurvivalTree(min_samples_leaf=10, max_depth=5).fit(X, y),
        "gbsa": GradientBoostingSurvivalAnalysis(n_estimators=25, max_depth=2, random_state=0).fit(X, y),
        "cox": CoxPHSurvivalAnalysis().fit(X, y),
        "cgb": ComponentwiseGradientBoostingSurvivalAnalysis(n_estimators=40, random_state=0).fit(X, y),
    }


def asked_times(model) -> np.ndarray:
    """0, a time before the first training time, one on a training time, one between two, the last one."""
    u = model.unique_times_
    return np.array([0.0, u[0] / 2, u[3], (u[10] + u[11]) / 2, u[-1]])


def definition(model, X, feature, grid, response, times, rows=False):
    """(times, grid) PD, or (times, rows, grid) ICE, from the model's own step functions at ``times``."""
    out = np.empty((len(times), len(X), len(grid)))
    for k, v in enumerate(grid):
        Xv = X.copy()
        Xv[feature] = v
        if response == "risk":
            out[0, :, k] = model.predict(Xv)
            continue
        for i, f in enumerate(getattr(model, FUNCTIONS[response])(Xv)):
            out[:, i, k] = f(times)
    return out if rows else out.mean(axis=1)


@pytest.mark.parametrize("name", ["rsf", "est", "tree"])
@pytest.mark.parametrize("response", ["survival", "cumulative_hazard"])
def test_survival_trees_are_exact_at_every_asked_time(data, models, name, response):
    X, _ = data
    model = models[name]
    times = asked_times(model)
    res = pdpx.partial_dependence(model, X, "age", response=response, times=times, kind="both",
                                  grid_resolution=12, method="exact")
    assert res.method == "exact"
    np.testing.assert_array_equal(res.times, times)
    ice = definition(model, X, "age", res.grid_values[0], response, times, rows=True)
    np.testing.assert_allclose(res.individual, ice, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.average, ice.mean(axis=1), rtol=0, atol=1e-12)


def test_forest_auto_runs_the_tree_engine_and_the_risk_is_exact(data, models):
    X, _ = data
    model = models["rsf"]
    res = pdpx.partial_dependence(model, X, ["age", "dose"], response="risk", grid_resolution=6, method="exact")
    grid = np.array(np.meshgrid(*res.grid_values, indexing="ij")).reshape(2, -1).T
    ref = [model.predict(X.assign(age=a, dose=d)).mean() for a, d in grid]
    np.testing.assert_allclose(res.average.ravel(), ref, rtol=1e-14, atol=0)
    default = pdpx.partial_dependence(model, X, "age", grid_resolution=4)  # raised ModelOutputError before issue 51
    assert default.response == "predict" and default.outputs == ["prediction"]
    ref = [model.predict(X.assign(age=a)).mean() for a in default.grid_values[0]]
    np.testing.assert_allclose(default.average[0], ref, rtol=1e-14, atol=0)
    auto = pdpx.partial_dependence(model, X, "dose", times=asked_times(model), grid_resolution=8)
    assert auto.response == "survival"
    if auto.method != "exact":  # auto waits for kernels still compiling: brute answers meanwhile, and says so
        assert any("compiled" in n or "compile" in n for n in auto.notes)
    ref = definition(model, X, "dose", auto.grid_values[0], "survival", auto.times)
    np.testing.assert_allclose(auto.average, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("response", ["risk", "cumulative_hazard"])
def test_cox_boosting_risk_and_cumulative_hazard_are_exact(data, models, response):
    X, _ = data
    model = models["gbsa"]
    times = asked_times(model)
    res = pdpx.partial_dependence(model, X, "dose", response=response, times=None if response == "risk" else times,
                                  kind="both", grid_resolution=10, method="exact")
    assert res.method == "exact"
    ice = definition(model, X, "dose", res.grid_values[0], response, times, rows=True)
    ice = ice[:1] if response == "risk" else ice
    np.testing.assert_allclose(res.individual, ice, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name", ["gbsa", "cox", "cgb"])
def test_survival_of_cox_models_equals_their_step_functions(data, models, name):
    X, _ = data
    model = models[name]
    times = asked_times(model)
    res = pdpx.partial_dependence(model, X, "age", response="survival", times=times, grid_resolution=8)
    assert res.method == "brute"
    ref = definition(model, X, "age", res.grid_values[0], "survival", times)
    np.testing.assert_allclose(res.average, ref, rtol=0, atol=1e-12)
    hazard = pdpx.partial_dependence(model, X, "age", response="cumulative_hazard", times=times, grid_resolution=8)
    ref = definition(model, X, "age", hazard.grid_values[0], "cumulative_hazard", times)
    np.testing.assert_allclose(hazard.average, ref, rtol=1e-13, atol=1e-14)


def test_default_times_are_said_and_the_frame_has_a_numeric_time_column(data, models):
    X, _ = data
    model = models["rsf"]
    res = pdpx.partial_dependence(model, X, "age", response="survival", grid_resolution=5)
    expected = np.unique(np.quantile(model.unique_times_, [0.1, 0.25, 0.5, 0.75, 0.9], method="lower"))
    np.testing.assert_array_equal(res.times, expected)
    assert any(n.startswith("times= not given") for n in res.notes)
    frame = res.to_frame()
    assert frame["time"].dtype == np.float64
    assert sorted(frame["time"].unique()) == list(expected)
    first = frame[frame["time"] == expected[0]]["yhat"].to_numpy()
    np.testing.assert_array_equal(first, res.average[0])


def test_target_picks_times(data, models):
    X, _ = data
    model = models["rsf"]
    times = asked_times(model)
    res = pdpx.partial_dependence(model, X, "age", response="survival", times=times, target=[1, 3],
                                  grid_resolution=5)
    np.testing.assert_array_equal(res.times, times[[1, 3]])
    assert res.average.shape == (2, 5)


@pytest.mark.parametrize("times, message", [
    ([10.0, 5.0], "strictly increasing"),
    ([-1.0, 5.0], ">= 0"),
    ([1.0, np.nan], "finite"),
    ([], "non-empty"),
    ("soon", "times must be an increasing list"),
])
def test_bad_times_are_refused(data, models, times, message):
    X, _ = data
    with pytest.raises(PdpxError, match=message):
        pdpx.partial_dependence(models["rsf"], X, "age", response="survival", times=times)


def test_times_past_the_last_training_time_are_refused(data, models):
    X, _ = data
    model = models["cox"]
    last = model.unique_times_[-1]
    with pytest.raises(PdpxError, match="past the model's last training time"):
        pdpx.partial_dependence(model, X, "age", response="cumulative_hazard", times=[1.0, last + 1])
    with pytest.raises(ValueError):  # the model's own step function refuses it too
        model.predict_cumulative_hazard_function(X.iloc[:1])[0](last + 1)


def test_times_without_a_survival_response_are_refused(data, models):
    X, _ = data
    with pytest.raises(PdpxError, match="goes with response='survival'"):
        pdpx.partial_dependence(models["rsf"], X, "age", response="risk", times=[10.0])


def test_a_model_without_survival_functions_is_refused_naming_what_it_predicts(data):
    from sklearn.ensemble import RandomForestRegressor

    X, y = data
    model = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y["time"])
    with pytest.raises(PdpxError, match=r"not a survival model \(what it predicts: prediction\)"):
        pdpx.partial_dependence(model, X, "age", response="survival", times=[10.0])
    squared = GradientBoostingSurvivalAnalysis(loss="squared", n_estimators=5).fit(X, y)
    with pytest.raises(PdpxError, match="has no response 'survival'"):
        pdpx.partial_dependence(squared, X, "age", response="survival", times=[10.0])


def test_a_forest_changed_in_place_is_read_again(data):
    X, y = data
    forest = RandomSurvivalForest(n_estimators=3, min_samples_leaf=8, random_state=0).fit(X, y)
    times = asked_times(forest)
    first = pdpx.partial_dependence(forest, X, "age", response="survival", times=times, grid_resolution=5,
                                    method="exact")
    value = forest.estimators_[0].tree_.value
    leaf = int(np.flatnonzero(forest.estimators_[0].tree_.children_left < 0)[0])
    value[leaf, :, 1] *= 0.5  # one leaf's survival curve, halved in place
    again = pdpx.partial_dependence(forest, X, "age", response="survival", times=times, grid_resolution=5,
                                    method="exact")
    ref = definition(forest, X, "age", again.grid_values[0], "survival", times)
    np.testing.assert_allclose(again.average, ref, rtol=0, atol=1e-12)
    assert np.abs(again.average - first.average).max() > 1e-6


def test_leaves_over_the_memory_budget_are_read_a_block_of_times_at_a_time(data, models):
    X, _ = data
    model = models["rsf"]
    times = model.unique_times_
    nodes = sum(e.tree_.node_count for e in model.estimators_)
    budget = max(2**20, 2 * 8 * len(times) * nodes // 3)  # about a third of the times' leaves fit at once
    with pdpx.config_context(memory_budget=budget):
        res = pdpx.partial_dependence(model, X, "age", response="survival", times=times, grid_resolution=3,
                                      kind="both", method="exact")
        many = pdpx.partial_dependence_many(model, X, ["age", "dose"], response="cumulative_hazard", times=times,
                                            grid_resolution=3, method="exact")
    assert res.method == "exact" and any("blocks" in n for n in res.notes)
    np.testing.assert_array_equal(res.times, times)
    assert res.average.shape == (len(times), 3) and res.individual.shape == (len(times), len(X), 3)
    ice = definition(model, X, "age", res.grid_values[0], "survival", times, rows=True)
    np.testing.assert_allclose(res.individual, ice, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.average, ice.mean(axis=1), rtol=0, atol=1e-12)
    for r in many:
        ref = definition(model, X, r.features[0], r.grid_values[0], "cumulative_hazard", times)
        np.testing.assert_allclose(r.average, ref, rtol=0, atol=1e-12)


def test_leaves_over_the_budget_outside_blocks_leave_the_answer_to_brute(data):
    X, y = data
    model = RandomSurvivalForest(n_estimators=80, min_samples_leaf=3, random_state=0).fit(X, y)
    times = model.unique_times_
    nodes = sum(e.tree_.node_count for e in model.estimators_)
    budget = 2 * 8 * len(times) * nodes * 2 // 3  # the leaves at every time need more than half of it
    assert budget > 2**22
    with pdpx.config_context(memory_budget=budget):  # by=: each group's session, no blocks
        res = pdpx.partial_dependence(model, X, "age", response="survival", times=times, grid_resolution=3,
                                      by="sex")
    for part in res.results:
        assert part.method == "brute"
        assert any("memory budget" in n for n in part.notes)
    frame = res.to_frame()
    for level, rows in X.groupby("sex"):
        group = frame[frame["sex"].astype(str) == f"{level:g}"]
        for v in group["x_1"].unique():
            ref = definition(model, rows, "age", [v], "survival", times)[:, 0]
            got = group[group["x_1"] == v].sort_values("time")["yhat"].to_numpy()
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_missing_values_follow_the_forests_own_routing(data):
    X, y = data
    X = X.copy()
    X.loc[np.random.default_rng(7).uniform(size=len(X)) < 0.15, "dose"] = np.nan
    forest = RandomSurvivalForest(n_estimators=5, min_samples_leaf=6, random_state=0).fit(X, y)
    times = asked_times(forest)
    res = pdpx.partial_dependence(forest, X, "dose", response="cumulative_hazard", times=times, grid_resolution=5,
                                  kind="both", method="exact")
    assert np.isnan(res.grid_values[0][-1])  # the missing-value point
    ice = definition(forest, X, "dose", res.grid_values[0], "cumulative_hazard", times, rows=True)
    np.testing.assert_allclose(res.individual, ice, rtol=0, atol=1e-12)


class OwnSurvival:
    """A scikit-learn estimator of the user's with scikit-survival's interface (a Cox model inside)."""

    def __init__(self):
        self.inner = CoxPHSurvivalAnalysis()

    def fit(self, X, y):
        self.inner.fit(X, y)
        self.unique_times_ = self.inner.unique_times_
        self.n_features_in_, self.feature_names_in_ = self.inner.n_features_in_, self.inner.feature_names_in_
        return self

    def predict(self, X):
        return self.inner.predict(X)

    def predict_survival_function(self, X, return_array=False):
        return self.inner.predict_survival_function(X, return_array=return_array)

    def predict_cumulative_hazard_function(self, X, return_array=False):
        return self.inner.predict_cumulative_hazard_function(X, return_array=return_array)


def test_any_estimator_with_the_interface_runs_brute_on_its_own_functions(data):
    from sklearn.base import BaseEstimator

    X, y = data
    model = type("Own", (OwnSurvival, BaseEstimator), {})().fit(X, y)
    times = asked_times(model)
    res = pdpx.partial_dependence(model, X, "age", response="survival", times=times, grid_resolution=5)
    assert res.method == "brute"
    ref = definition(model, X, "age", res.grid_values[0], "survival", times)
    np.testing.assert_allclose(res.average, ref, rtol=0, atol=1e-12)


def test_the_models_functions_are_called_a_block_of_rows_at_a_time(data, models, monkeypatch):
    from pdpx.adapters import sksurv as adapter_module

    X, _ = data
    model = models["cox"]
    monkeypatch.setattr(adapter_module, "BLOCK_BYTES", 24 * len(model.unique_times_) * 7)  # 7 rows a block
    seen = []
    own = model.predict_survival_function

    def counted(Z, **kw):
        seen.append(len(Z))
        return own(Z, **kw)

    monkeypatch.setattr(model, "predict_survival_function", counted)
    times = asked_times(model)
    res = pdpx.partial_dependence(model, X, "age", response="survival", times=times, grid_resolution=4,
                                  method="brute")
    assert seen and max(seen) <= 7
    monkeypatch.undo()
    ref = definition(model, X, "age", res.grid_values[0], "survival", times)
    np.testing.assert_allclose(res.average, ref, rtol=0, atol=1e-12)
