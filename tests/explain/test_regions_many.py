"""pdpx.regions of several features in one call: every feature's regions against brute-force ICE (each region's PD
and heterogeneity, on its rows), the same splits as one call per feature, on trees from one walk over the rows
(weights, several outputs, a categorical feature, the memory budget splitting the walk) and without trees."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from ice_reference import ice_by_brute
from test_regions import _check_regions_against_brute, _data, _f

import pdpx
from pdpx.explain import subgroups


def _same_splits(one, other):
    assert [(s.feature, s.kind, s.threshold, s.levels, s.missing_left) for s in one.splits] == \
           [(s.feature, s.kind, s.threshold, s.levels, s.missing_left) for s in other.splits]
    assert [sorted(r.rows.tolist()) for r in one.regions] == [sorted(r.rows.tolist()) for r in other.regions]


def _walks(res):
    return any("one pass over the rows" in note for note in res.notes)


@pytest.fixture(scope="module")
def forest_case():
    from sklearn.ensemble import GradientBoostingRegressor

    X = _data(n=900)
    X["g"] = X["g"].cat.codes.astype(np.float64)  # numeric codes: a column every tree may split on
    y = _f(X) + 0.5 * X["g"].to_numpy() * (X["x3"].to_numpy() > 0)
    model = GradientBoostingRegressor(n_estimators=40, max_depth=3, random_state=0).fit(X, y)
    return model, X


def test_every_feature_s_regions_equal_the_definition_and_one_call_per_feature(forest_case):
    model, X = forest_case
    w = np.random.default_rng(1).uniform(0.2, 2.0, len(X))
    found = pdpx.regions(model, X, None, sample_weight=w)
    assert isinstance(found, pdpx.RegionsSet) and list(found) == list(X.columns)
    assert found["x1"].splits[0].feature == "x2"
    for name, res in found.items():
        assert _walks(res) and res.method == "exact"
        _check_regions_against_brute(res, model.predict, X, w)
        _same_splits(res, pdpx.regions(model, X, name, sample_weight=w))


def test_a_small_memory_budget_walks_a_few_features_at_a_time(forest_case, monkeypatch):
    model, _ = forest_case
    X = _data(n=2000, seed=5)
    X["g"] = X["g"].cat.codes.astype(np.float64)
    walked = []
    real = subgroups._walked
    monkeypatch.setattr(subgroups, "_walked", lambda s, group, sizes: walked.append(list(group)) or real(s, group, sizes))
    whole = pdpx.regions(model, X, ["x1", "x2", "x3", "g"])
    walked.clear()
    budget = 740 * len(X)  # two features' curves (8 n (2 (G + 1) + 2 G) bytes, G = 20) at a time, not three
    parts = pdpx.regions(model, X, ["x1", "x2", "x3", "g"], memory_budget=budget)
    assert [len(g) for g in walked] == [2, 2]
    for name in whole:
        _same_splits(whole[name], parts[name])
        np.testing.assert_allclose(parts[name].heterogeneity, whole[name].heterogeneity, rtol=1e-12)


def test_several_outputs_and_a_categorical_feature_from_one_walk():
    from sklearn.ensemble import RandomForestClassifier

    X = _data(n=700)
    y = np.digitize(X.x1 * np.sign(X.x2), [-0.3, 0.3])
    Xd = pd.get_dummies(X, columns=["g"], dtype=float)
    model = RandomForestClassifier(n_estimators=15, max_depth=5, random_state=0).fit(Xd, y)
    found = pdpx.regions(model, Xd, ["x1", "g_b", "x3"], grid_resolution=6)
    for res in found.values():
        assert _walks(res) and len(res.outputs) == 3
        _check_regions_against_brute(res, model.predict_proba, Xd)
    assert found["x1"].splits[0].feature == "x2"
    assert len(found["g_b"].grid_values) == 2  # its grid is shorter than the others': its curves are copied apart


def test_ice_kept_for_every_feature_is_the_brute_force_ice(forest_case):
    model, X = forest_case
    found = pdpx.regions(model, X.iloc[:300], ["x1", "x3"], ice=True)
    for name, res in found.items():
        want = ice_by_brute(model.predict, X.iloc[:300], name, res.grid_values)
        np.testing.assert_allclose(res.individual[0], want, rtol=1e-9, atol=1e-9)


def test_a_model_without_trees_is_searched_feature_by_feature():
    X = _data(n=500)
    found = pdpx.regions(_f, X, ["x1", "x3"])
    assert found["x1"].splits[0].feature == "x2" and not _walks(found["x1"])
    assert not found["x3"].splits  # x3 adds alone: its curves agree
    for res in found.values():
        _check_regions_against_brute(res, _f, X)


def test_the_set_shows_its_features_as_tables_a_figure_and_text(forest_case):
    model, X = forest_case
    with pytest.raises(pdpx.PdpxError, match=r"lists \['x1'\] more than once"):
        pdpx.regions(model, X, ["x1", "x3", "x1"])
    found = pdpx.regions(model, X, ["x1", "x3"])
    summary = found.summary()
    assert summary["feature"].tolist() == ["x1", "x3"]
    assert summary.loc[0, "n_regions"] == len(found["x1"].regions) and summary.loc[0, "rules"].startswith("x2")
    splits = found.splits_frame()
    assert splits.columns[0] == "regions_of" and set(splits["regions_of"]) <= {"x1", "x3"}
    frame = found.to_frame()
    assert set(frame["feature"]) == {"x1", "x3"} and len(frame) == sum(len(r.to_frame()) for r in found.values())
    assert "x1: 2 region(s)" in repr(found)
    found.plot("x1").draw()
    with pytest.raises(pdpx.PdpxError, match=r"'x9' is not among this set's features \['x1', 'x3'\]"):
        found.plot("x9")


def test_a_feature_split_twice_reads_as_one_interval_that_selects_the_region_s_rows():
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"x1": rng.uniform(-1, 1, 1200), "x2": rng.uniform(-1, 1, 1200)})

    def f(d):  # x1's slope: -3 below x2 = -0.5, 0 between, +3 above 0.5
        x2 = d["x2"].to_numpy()
        return d["x1"].to_numpy() * np.select([x2 <= -0.5, x2 <= 0.5], [-3.0, 0.0], 3.0)

    res = pdpx.regions(f, X, "x1", min_gain=0.01)
    assert len(res.regions) == 3 and sum(" and " in rule for rule in res.rules) == 0
    middle = [rule for rule in res.rules if rule.count("x2") == 1 and rule.count("<") == 2]
    assert len(middle) == 1, res.rules  # "lo < x2 <= hi", not "x2 > lo and x2 <= hi"
    for r in res.regions:  # each rule, read as pandas reads it, selects the region's rows exactly
        np.testing.assert_array_equal(np.sort(r.rows), np.flatnonzero(X.eval(r.rule).to_numpy()))


def test_folded_rules_keep_the_tighter_bound_and_leave_other_conditions_alone():
    from pdpx.explain.split_search import Split, rule_text

    a, b = Split("x3", "threshold", threshold=0.2), Split("x3", "threshold", threshold=-0.4)
    g = Split("g", "levels", levels=("a",), others=("b",))
    miss = Split("x3", "threshold", threshold=0.5, missing_left=True)
    assert rule_text([(a, "left"), (b, "left")]) == "x3 <= -0.4"
    assert rule_text([(a, "right"), (b, "right")]) == "x3 > 0.2"
    assert rule_text([(a, "left"), (g, "left"), (b, "right")]) == "-0.4 < x3 <= 0.2 and g in {'a'}"
    lt = Split("x2", "threshold", threshold=0.5, op="<"), Split("x2", "threshold", threshold=0.1, op="<")
    assert rule_text([(lt[0], "left"), (lt[1], "right")]) == "0.1 <= x2 < 0.5"
    assert rule_text([(miss, "left"), (a, "left")]) == "(x3 <= 0.5 or x3 is missing) and x3 <= 0.2"
    assert rule_text([]) == "all rows"


def test_curves_written_across_chunks_and_threads_are_the_brute_force_ice(forest_case):
    """12,000 rows under a 2 MB budget: the walk takes the rows in two chunks, each split between threads, and
    writes three features' curves in one walk; each kept curve is the model's own prediction."""
    model, _ = forest_case
    X = _data(n=12_000, seed=9)
    X["g"] = X["g"].cat.codes.astype(np.float64)
    found = pdpx.regions(model, X, ["x1", "x2", "x3"], grid_resolution=3, memory_budget="2MB", ice=True)
    for name, res in found.items():
        assert _walks(res)
        want = ice_by_brute(model.predict, X, name, res.grid_values)
        np.testing.assert_allclose(res.individual[0], want, rtol=1e-9, atol=1e-9)
