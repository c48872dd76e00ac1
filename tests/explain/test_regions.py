"""pdpx.regions: the known answer (x1's slope flips with the sign of x2: split x1's rows on x2 near 0), level sets,
the missing point, weights, several outputs; each region's PD and heterogeneity against brute-force ICE."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from ice_reference import ice_by_brute, variance_by_hand

import pdpx


def _data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n), "x3": rng.uniform(-1, 1, n),
                         "g": pd.Categorical(rng.choice(list("abcd"), n), categories=list("abcd"))})


def _f(d):
    """y = 3 x1 1[x2 > 0] - 3 x1 1[x2 <= 0] + x3."""
    return 3 * d["x1"].to_numpy() * np.where(d["x2"].to_numpy() > 0, 1.0, -1.0) + d["x3"].to_numpy()


def _grid_step(X, feature, grid_resolution=20):
    grid = pdpx.partial_dependence(lambda d: np.zeros(len(d)), X, feature, grid_resolution=grid_resolution)
    return float(np.diff(grid.grid_values[0]).max())


def _check_regions_against_brute(res, predict, X, w=None, rtol=1e-9):
    """Each region's PD and heterogeneity from brute-force ICE on its rows (``rtol``: a model predicting float32
    agrees to its rounding)."""
    ice = ice_by_brute(predict, X, res.feature, res.grid_values)  # (n, G) or (n, K, G)
    ice = ice[:, None, :] if ice.ndim == 2 else ice
    for r in res.regions:
        sub, wr = ice[r.rows], (np.ones(len(r.rows)) if w is None else w[r.rows])
        for k in range(len(res.outputs)):
            np.testing.assert_allclose(r.average[k], np.average(sub[:, k, :], axis=0, weights=wr), rtol=rtol,
                                       atol=1e-12)
            assert r.heterogeneity[k] == pytest.approx(variance_by_hand(sub[:, k, :], wr).mean(), rel=rtol,
                                                       abs=1e-12)
    everything = np.sort(np.concatenate([r.rows for r in res.regions]))
    np.testing.assert_array_equal(everything, np.arange(len(X)))  # the regions partition the rows


def test_known_answer_by_brute_force_splits_on_x2_near_zero():
    X = _data()
    res = pdpx.regions(_f, X, "x1")
    first = res.splits[0]
    assert (first.feature, first.kind) == ("x2", "threshold")
    assert abs(first.threshold) <= _grid_step(X, "x2")
    assert res.removed > 0.95 and len(res.regions) == 2
    assert res.rules == [f"x2 <= {first.threshold:.4g}", f"x2 > {first.threshold:.4g}"]
    assert sum(s.gain for s in res.splits) == pytest.approx(res.removed)
    _check_regions_against_brute(res, _f, X)


def test_known_answer_on_a_tree_model_splits_at_one_of_its_thresholds():
    from sklearn.tree import DecisionTreeRegressor

    X = _data().drop(columns="g")
    model = DecisionTreeRegressor(max_depth=10, random_state=0).fit(X, _f(X))
    res = pdpx.regions(model, X, "x1", method="exact")
    first = res.splits[0]
    tree = model.tree_
    own = tree.threshold[(tree.feature == 1) & (tree.children_left >= 0)]
    assert first.feature == "x2" and np.isclose(own, first.threshold, rtol=0, atol=1e-12).any()
    assert abs(first.threshold) <= _grid_step(X, "x2") and res.removed > 0.9
    _check_regions_against_brute(res, model.predict, X)


def test_a_categorical_split_feature_gives_the_level_sets():
    X = _data()

    def by_level(d):
        s = np.where(d["g"].isin(["a", "c"]).to_numpy(), 1.0, -1.0)
        return 3 * d["x1"].to_numpy() * s + d["x3"].to_numpy()

    res = pdpx.regions(by_level, X, "x1")
    split = res.splits[0]
    assert split.kind == "levels" and {frozenset(split.levels), frozenset(split.others)} == {
        frozenset("ac"), frozenset("bd")}
    assert res.rules[0] == "g in {" + ", ".join(repr(v) for v in split.levels) + "}"
    assert all(float(r.heterogeneity.sum()) < 1e-20 for r in res.regions)
    assert all(r.stopped.startswith("its curves agree") for r in res.regions)
    _check_regions_against_brute(res, by_level, X)


def test_missing_values_go_to_the_side_they_behave_like():
    X = _data()
    X.loc[X.index[:200], "x2"] = np.nan

    def f(d):
        x2 = d["x2"].to_numpy()
        return 3 * d["x1"].to_numpy() * np.where((x2 > 0) | np.isnan(x2), 1.0, -1.0)

    res = pdpx.regions(f, X, "x1")
    split = res.splits[0]
    assert split.feature == "x2" and split.missing_left is False
    assert res.rules[1] == f"(x2 > {split.threshold:.4g} or x2 is missing)"
    assert X["x2"].iloc[res.regions[1].rows].isna().sum() == 200
    _check_regions_against_brute(res, f, X)


def test_weights_enter_the_regions_and_zero_weight_rows_remove_the_disagreement():
    X = _data()
    w = np.random.default_rng(3).uniform(0.1, 2.0, len(X))
    res = pdpx.regions(_f, X, "x1", sample_weight=w)
    _check_regions_against_brute(res, _f, X, w)
    only_right = pdpx.regions(_f, X, "x1", sample_weight=np.where(X["x2"] > 0, 1.0, 0.0))
    assert len(only_right.regions) == 1 and only_right.regions[0].stopped.startswith("its curves agree")


def test_several_outputs_of_a_classifier():
    from sklearn.linear_model import LogisticRegression

    X = _data(n=600).drop(columns="g")
    y = np.digitize(X.x1 * np.sign(X.x2), [-0.3, 0.3])
    model = LogisticRegression().fit(X.assign(i=X.x1 * np.sign(X.x2)), y)

    def proba(d):
        return model.predict_proba(d.assign(i=d.x1 * np.sign(d.x2)))

    res = pdpx.regions(proba, X, "x1", grid_resolution=8)
    assert len(res.outputs) == 3 and res.splits[0].feature == "x2"
    _check_regions_against_brute(res, proba, X)
    frame = res.to_frame()
    assert set(frame["output"]) == set(res.outputs) and len(frame) == len(res.regions) * 3 * 8


def test_stopping_rules_say_why():
    X = _data(n=400)
    assert pdpx.regions(_f, X, "x1", max_depth=0).regions[0].stopped == "max_depth=0 reached"
    assert pdpx.regions(_f, X, "x1", min_rows=300).regions[0].stopped == (
        "no split leaves min_rows=300 rows on each side")
    capped = pdpx.regions(_f, X, "x1", min_gain=0.999)
    assert len(capped.regions) == 1 and "below min_gain=0.999" in capped.regions[0].stopped
    deep = pdpx.regions(_f, X, "x1", max_depth=3, min_gain=0.0)
    assert max(s.depth for s in deep.splits) <= 2


def test_a_date_column_is_split_at_a_date():
    """A model whose curves of x1 differ after June: the rows are split by the date, the rule shows dates, and each
    region's rows are exactly the rows its rule names."""
    X = _data(n=300)
    dated = pd.DataFrame({"x1": X["x1"], "day": pd.date_range("2024-01-01", periods=len(X), freq="D")})
    res = pdpx.regions(lambda d: d["x1"].to_numpy() * (d["day"].dt.month > 6).to_numpy(), dated, "x1",
                       n_thresholds=len(X) - 1)
    assert not any("date columns" in n for n in res.notes)
    assert res.rules == ["day <= 2024-06-30", "day > 2024-06-30"]
    late = (dated["day"] > "2024-06-30").to_numpy()
    np.testing.assert_array_equal(np.sort(res.regions[1].rows), np.flatnonzero(late))
    assert res.splits_frame()["right"].tolist() == ["day > 2024-06-30"]
    paris = dated.assign(day=dated["day"].dt.tz_localize("Europe/Paris"))
    zoned = pdpx.regions(lambda d: d["x1"].to_numpy() * (d["day"].dt.month > 6).to_numpy(), paris, "x1",
                         n_thresholds=len(X) - 1)
    assert zoned.rules == res.rules  # the days on the column's own clock


def test_frames_hold_the_regions_curves_and_rules():
    X = _data(n=300)
    res = pdpx.regions(_f, X, "x1", ice=True, grid_resolution=5)
    frame = res.to_frame()
    assert {"region", "rule", "n_rows", "region_heterogeneity", "kind", "row", "x", "label", "yhat"} <= set(frame)
    ice = frame[frame.kind == "individual"]
    assert len(ice) == 300 * 5 and ice["row"].nunique() == 300
    one = ice[ice.row == 7].sort_values("x")["yhat"].to_numpy()
    np.testing.assert_allclose(one, ice_by_brute(_f, X.iloc[[7]], "x1", res.grid_values)[0])
    splits = res.splits_frame()
    assert list(splits.columns[:3]) == ["depth", "feature", "kind"] and splits.loc[0, "feature"] == "x2"
    assert splits.loc[0, "left"] == res.rules[0] and splits.loc[0, "right"] == res.rules[1]


def test_bad_arguments_say_what_to_pass():
    X = _data(n=100)
    with pytest.raises(pdpx.PdpxError, match="max_depth must be a whole number >= 0"):
        pdpx.regions(_f, X, "x1", max_depth=-1)
    with pytest.raises(pdpx.PdpxError, match="min_gain must be a share"):
        pdpx.regions(_f, X, "x1", min_gain=1.5)
    with pytest.raises(pdpx.PdpxError, match="split_features lists 'x1'"):
        pdpx.regions(_f, X, "x1", split_features=["x1", "x2"])
    with pytest.raises(pdpx.PdpxError, match="feature is an empty list; name at least one column"):
        pdpx.regions(_f, X, [])
    with pytest.raises(pdpx.PdpxError, match="x9"):
        pdpx.regions(_f, X, ["x1", "x9"])


def test_plot_draws_the_regions_side_by_side():
    pytest.importorskip("plotnine")
    res = pdpx.regions(_f, _data(n=300), "x1", ice=True, grid_resolution=5)
    fig = res.plot().draw()
    assert len(fig.axes) >= len(res.regions)


def test_many_levels_are_ordered_along_their_curves():
    rng = np.random.default_rng(5)
    levels = [f"l{i:02d}" for i in range(14)]  # over ALL_SETS: the levels' prefixes along their mean curves
    X = pd.DataFrame({"x1": rng.uniform(-1, 1, 1400), "k": pd.Categorical(rng.choice(levels, 1400), categories=levels)})
    up = set(levels[::2])

    def f(d):
        return 3 * d["x1"].to_numpy() * np.where(d["k"].astype(str).isin(up).to_numpy(), 1.0, -1.0)

    res = pdpx.regions(f, X, "x1")
    split = res.splits[0]
    assert split.kind == "levels" and {frozenset(split.levels), frozenset(split.others)} == {
        frozenset(up), frozenset(set(levels) - up)}
    assert res.removed == pytest.approx(1.0)


def test_an_xgboost_model_splits_where_it_compares_x_below_its_threshold():
    xgb = pytest.importorskip("xgboost")
    X = _data().drop(columns="g")
    model = xgb.XGBRegressor(n_estimators=60, max_depth=4, random_state=0).fit(X, _f(X))
    res = pdpx.regions(model, X, "x1", method="exact")
    split = res.splits[0]
    assert split.feature == "x2" and split.op == "<" and res.rules[0] == f"x2 < {split.threshold:.4g}"
    trees = model.get_booster().trees_to_dataframe()
    own = trees.loc[trees.Feature == "x2", "Split"].to_numpy(dtype=np.float64)
    assert np.isclose(own, split.threshold, rtol=1e-7, atol=0).any()
    left = X["x2"].to_numpy(dtype=np.float32) < np.float32(split.threshold)  # as the model reads its input
    np.testing.assert_array_equal(np.sort(res.regions[0].rows), np.flatnonzero(left))
    _check_regions_against_brute(res, model.predict, X, rtol=1e-6)  # XGBoost predicts float32


def test_a_categorical_feature_s_curves_are_split_too():
    X = _data(n=800)

    def f(d):
        level = d["g"].astype(str).map({"a": 0.0, "b": 1.0, "c": 2.0, "d": -1.0}).to_numpy()
        return level * np.where(d["x3"].to_numpy() > 0.5, -1.0, 1.0) + d["x1"].to_numpy()

    res = pdpx.regions(f, X, "g")
    assert res.categorical and list(res.grid_values) == list("abcd")
    assert res.splits[0].feature == "x3" and abs(res.splits[0].threshold - 0.5) <= _grid_step(X, "x3")
    _check_regions_against_brute(res, f, X)
    assert res.to_frame()["label"].iloc[:4].tolist() == list("abcd")
