"""The tree engine answers only where pdpx knows the whole prediction path, and a check against the model's own
predict stands behind it (pdpx.core.trust). Every number is compared with the definition (set the column, call
the model's own method, average), never with pdpx's own output."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
    VotingRegressor,
)
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeRegressor

import pdpx
from pdpx.core import trust
from pdpx.core.plugins import adapt
from tests.treetools import by_definition


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    y = 2 * X["a"] + X["b"] - 1 + rng.normal(size=400) * 0.1
    return X, y, (y > 0).astype(int)


class ClippedForest(RandomForestRegressor):
    def predict(self, X):
        return np.clip(super().predict(X), 0, None)


class RoundedHGB(HistGradientBoostingClassifier):
    def predict_proba(self, X):
        return np.round(super().predict_proba(X), 1)


class FlooredVoting(VotingRegressor):
    def predict(self, X):
        return np.floor(super().predict(X))


class BackTransformed(Pipeline):
    def predict(self, X, **params):
        return np.exp(super().predict(X, **params) / 4)


class InternalOverride(HistGradientBoostingClassifier):
    def _raw_predict(self, X, n_threads=None):
        return 2 * super()._raw_predict(X, n_threads)


class OwnTree(DecisionTreeRegressor):
    def predict(self, X, check_input=True):
        return super().predict(X, check_input) + 1.0


class Configured(RandomForestRegressor):
    """A subclass that only sets defaults: its prediction is the library's."""

    def __init__(self, n_estimators=5, random_state=0, **kw):
        super().__init__(n_estimators=n_estimators, random_state=random_state, **kw)


def _models(X, y, yc):
    voting = FlooredVoting([("a", DecisionTreeRegressor(max_depth=3)), ("b", DecisionTreeRegressor(max_depth=4))])
    forest_of_own = RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    for tree in forest_of_own.estimators_:  # the forest calls each tree's own predict
        tree.__class__ = OwnTree
    out = {
        "clipped forest": (ClippedForest(n_estimators=8, random_state=0).fit(X, y), "predict"),
        "rounded HGB": (RoundedHGB(max_iter=15).fit(X, yc), "predict_proba"),
        "floored voting": (voting.fit(X, y), "predict"),
        "back-transformed pipeline": (BackTransformed([("s", StandardScaler()),
                                                       ("t", DecisionTreeRegressor(max_depth=4))]).fit(X, y),
                                      "predict"),
        "internal override": (InternalOverride(max_iter=15).fit(X, yc), "predict_proba"),
    }
    out["forest of own trees"] = (forest_of_own, "predict")
    return out


@pytest.mark.parametrize("name", ["clipped forest", "rounded HGB", "floored voting", "back-transformed pipeline",
                                  "internal override", "forest of own trees"])
def test_overridden_prediction_runs_brute_and_equals_the_definition(data, name):
    X, y, yc = data
    model, response = _models(X, y, yc)[name]
    res = pdpx.partial_dependence(model, X, ["a"], kind="average", grid_resolution=12)
    assert res.method == "brute"
    assert any("exact not used" in n and "cannot compute it from the trees" in n for n in res.notes), res.notes
    want = by_definition(model, X, "a", res.grid_values[0], response=response)
    got = res.average.reshape(res.average.shape[0], -1).T
    if response == "predict_proba":
        want = want[:, 1:]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(pdpx.PdpxError, match="cannot run here.*cannot compute it from the trees"):
        pdpx.partial_dependence(model, X, ["a"], method="exact")


def test_recursion_refuses_an_overridden_prediction(data):
    X, y, _ = data
    model = ClippedForest(n_estimators=4, random_state=0).fit(X, y)
    with pytest.raises(pdpx.PdpxError, match="ClippedForest.predict is your own code"):
        pdpx.partial_dependence(model, X, ["a"], method="recursion")


def test_a_method_replaced_on_the_instance_runs_brute(data):
    X, y, _ = data
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    model.predict = lambda Z: np.round(RandomForestRegressor.predict(model, Z))
    res = pdpx.partial_dependence(model, X, ["b"], grid_resolution=10)
    assert res.method == "brute" and "replaced on the object itself" in " ".join(res.notes)
    np.testing.assert_allclose(res.average.ravel(), by_definition(model, X, "b", res.grid_values[0]).ravel())


def test_a_subclass_that_only_configures_still_runs_exact(data):
    X, y, _ = data
    model = Configured().fit(X, y)
    res = pdpx.partial_dependence(model, X, ["a"], grid_resolution=15)
    assert res.method == "exact", res.notes
    np.testing.assert_allclose(res.average.ravel(), by_definition(model, X, "a", res.grid_values[0]).ravel(),
                               rtol=1e-10, atol=1e-12)


def test_a_pipeline_of_library_steps_runs_exact(data):
    X, y, _ = data
    model = make_pipeline(StandardScaler(), DecisionTreeRegressor(max_depth=5)).fit(X, y)
    res = pdpx.partial_dependence(model, X, ["c"], grid_resolution=15)
    assert res.method == "exact", res.notes


# ------------------------------------------------------------------------------------------------ the check
def _misread(model, X, response="predict", shift=0.05):
    """Make pdpx's cached reading of ``model``'s trees wrong (every leaf shifted): what a reader bug would do."""
    ad = adapt(model)
    ad.validate_columns(X)
    ens = ad.tree_model(response).ensemble
    ens.value[ens.left < 0] += shift


def test_a_reading_that_disagrees_with_predict_is_answered_by_brute_with_a_warning(data):
    X, y, _ = data
    model = RandomForestRegressor(n_estimators=6, random_state=1).fit(X, y)
    _misread(model, X)
    with pytest.warns(pdpx.TreeMismatchWarning, match="disagreed with its own predict.*report"):
        res = pdpx.partial_dependence(model, X, ["a"], kind="both", grid_resolution=11)
    assert res.method == "brute"
    assert any("disagreed with the model's own predict" in n for n in res.notes), res.notes
    want = by_definition(model, X, "a", res.grid_values[0])
    np.testing.assert_allclose(res.average.ravel(), want.ravel(), rtol=1e-12)
    # and explicitly asked for, exact is still never returned wrong
    with pytest.warns(pdpx.TreeMismatchWarning):
        res = pdpx.partial_dependence(model, X, ["a"], method="exact", grid_resolution=11)
    assert res.method == "brute"
    np.testing.assert_allclose(res.average.ravel(), want.ravel(), rtol=1e-12)


def test_the_verdict_is_kept_with_the_model(data, monkeypatch):
    X, y, _ = data
    model = RandomForestRegressor(n_estimators=6, random_state=2).fit(X, y)
    calls = []
    real = trust._compare_on_sample
    monkeypatch.setattr(trust, "_compare_on_sample", lambda *a: calls.append(a[4]) or real(*a))
    for _ in range(3):
        res = pdpx.partial_dependence(model, X, ["a"], grid_resolution=9)
        assert res.method == "exact"
    assert calls == [0]  # asked once, for feature 'a'
    pdpx.partial_dependence(model, X, ["a", "b"], grid_resolution=5)
    assert calls == [0, 1]  # a pair asks for the feature not yet checked
    X32 = X.astype({"a": np.float32})
    pdpx.partial_dependence(model, X32, ["a"], grid_resolution=9)
    assert calls == [0, 1, 0]  # other dtypes: checked anew


def test_check_trees_off_skips_the_check(data):
    X, y, _ = data
    model = RandomForestRegressor(n_estimators=6, random_state=3).fit(X, y)
    _misread(model, X)
    with pdpx.config_context(check_trees=False):
        res = pdpx.partial_dependence(model, X, ["a"], grid_resolution=9)
    assert res.method == "exact"  # unchecked: the misreading shows (what the check protects from)
    want = by_definition(model, X, "a", res.grid_values[0]).ravel()
    assert np.abs(res.average.ravel() - want).max() > 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("error", pdpx.TreeMismatchWarning)
        with pytest.raises(pdpx.TreeMismatchWarning):
            pdpx.partial_dependence(model, X, ["a"], grid_resolution=9)
    with pytest.raises(pdpx.PdpxTypeError, match="check_trees must be True or False"):
        pdpx.set_config(check_trees="no")


def test_many_features_and_classifiers_are_checked_too(data):
    X, _, yc = data
    model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, yc)
    _misread(model, X, "predict_proba", shift=0.1)
    with pytest.warns(pdpx.TreeMismatchWarning):
        col = pdpx.partial_dependence_many(model, X, ["a", "b"], grid_resolution=7)
    for res in col:
        assert res.method == "brute"
        want = by_definition(model, X, res.features[0], res.grid_values[0], response="predict_proba")[:, 1]
        np.testing.assert_allclose(res.average.ravel(), want, rtol=1e-12)


def test_check_points_take_both_sides_of_every_step():
    curves = np.array([[[0, 0, 1, 1, 1, 3, 3, 3, 3, 3]]], dtype=float)
    assert trust.check_points(curves, np.arange(10.0)).tolist() == [0, 1, 2, 4, 5, 9]
    grid = np.array([0.0, 1.0, 2.0, np.nan])
    assert trust.check_points(np.zeros((1, 2, 4)), grid).tolist() == [0, 3]
    many = np.arange(100.0)[None, None, :]
    assert len(trust.check_points(many, np.arange(100.0), limit=16)) == 16


def test_compare_tolerates_float32_sums_and_not_a_misread_leaf():
    ref = np.full((1, 2, 3), 100.0)
    assert trust.compare(ref * (1 + 1e-6), ref) is None
    assert trust.compare(np.where(np.arange(3) == 1, ref + 0.01, ref), ref) is not None
    nan = np.full((1, 1, 2), np.nan)
    assert trust.compare(nan, nan) is None
    assert trust.compare(np.zeros((1, 1, 2)), nan) is not None


def test_pipelines_end_in_other_libraries_models_checked_on_their_own_code(data):
    xgb = pytest.importorskip("xgboost")
    X, y, _ = data

    class Shifted(xgb.XGBRegressor):
        def predict(self, X, **kw):
            return super().predict(X, **kw) + 1.0

    plain = make_pipeline(StandardScaler(), xgb.XGBRegressor(n_estimators=10, max_depth=3)).fit(X, y)
    res = pdpx.partial_dependence(plain, X, ["a"], grid_resolution=10)
    assert res.method == "exact", res.notes
    shifted = make_pipeline(StandardScaler(), Shifted(n_estimators=10, max_depth=3)).fit(X, y)
    res = pdpx.partial_dependence(shifted, X, ["a"], grid_resolution=10)
    assert res.method == "brute" and "Shifted.predict is your own code" in " ".join(res.notes)
    np.testing.assert_allclose(res.average.ravel(), by_definition(shifted, X, "a", res.grid_values[0]).ravel(),
                               rtol=1e-6)


def test_a_transformer_subclass_overriding_transform_runs_brute(data):
    X, y, _ = data

    class Squashed(StandardScaler):
        def transform(self, X, copy=None):
            return np.tanh(super().transform(X, copy=copy))

    model = make_pipeline(Squashed(), DecisionTreeRegressor(max_depth=4)).fit(X, y)
    res = pdpx.partial_dependence(model, X, ["a"], grid_resolution=10)
    assert res.method == "brute"
    np.testing.assert_allclose(res.average.ravel(), by_definition(model, X, "a", res.grid_values[0]).ravel())


def test_an_engine_that_crashes_on_the_sample_is_answered_by_brute(data, monkeypatch):
    from pdpx.plugins.exact import Exact

    X, y, _ = data
    model = RandomForestRegressor(n_estimators=4, random_state=5).fit(X, y)

    def crash(self, adapter, req):
        raise IndexError("index 1 is out of bounds")

    monkeypatch.setattr(Exact, "compute", crash)
    with pytest.warns(pdpx.TreeMismatchWarning, match="exact failed on the sample: IndexError"):
        res = pdpx.partial_dependence(model, X, ["a"], grid_resolution=8)
    assert res.method == "brute"
    np.testing.assert_allclose(res.average.ravel(), by_definition(model, X, "a", res.grid_values[0]).ravel())


def test_the_models_own_failure_on_the_sample_is_its_own_error(data, monkeypatch):
    """Where the model's own predict fails on the check's sample, the call fails with that error (brute would meet
    it too), not with a TreeMismatchWarning."""
    from pdpx.plugins.brute import Brute

    X, y, _ = data
    model = RandomForestRegressor(n_estimators=4, random_state=6).fit(X, y)

    class Boom(ValueError):
        pass

    def refuse(self, adapter, req):
        raise Boom("the model refuses")

    monkeypatch.setattr(Brute, "compute", refuse)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pdpx.TreeMismatchWarning)
        with pytest.raises(Boom, match="the model refuses"):
            pdpx.partial_dependence(model, X, ["a"], grid_resolution=8)
