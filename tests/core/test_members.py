"""Bands from the model (pdpx.core.members): members' PDs against each member's own predict, averaged."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    AdaBoostRegressor,
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    StackingRegressor,
    VotingRegressor,
)
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import pdpx
from pdpx.outputs.plot import layer_names


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=["a", "b", "c", "d"])
    y = 2 * X["a"] + X["b"] ** 2 + X["a"] * X["c"] + rng.normal(scale=0.3, size=300)
    return X, y.to_numpy()


def own_ice(predict, X, feature, grid, columns=None, frame=False):
    """ICE by definition: set the column (its dtype kept), call the member's own predict (on the frame, or on its
    array: a forest's trees were fitted on arrays; ``columns``: the ones a bagged member reads); (rows, grid)."""
    out = []
    for v in grid:
        Xv = X.copy()
        Xv[feature] = np.full(len(X), v, dtype=X[feature].dtype)
        A = Xv if frame else Xv.to_numpy()
        out.append(np.asarray(predict(A if columns is None else A[:, columns]), dtype=float))
    return np.stack(out, axis=-1)


def own_pd(predict, X, feature, grid, weights=None, columns=None, frame=False):
    """PD by definition: the ICE curves averaged over the rows (weighted by ``weights``)."""
    return np.average(own_ice(predict, X, feature, grid, columns, frame), weights=weights, axis=0)


def quantiles(curves, level):
    return np.quantile(curves, [(1 - level) / 2, (1 + level) / 2], axis=0)


@pytest.mark.parametrize("weighted", [False, True])
def test_forest_members_are_the_trees_own_pds(data, weighted):
    X, y = data
    m = RandomForestRegressor(n_estimators=12, max_depth=5, random_state=0).fit(X, y)
    w = np.random.default_rng(1).uniform(0.1, 3.0, len(X)) if weighted else None
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=7, interval="members", level=0.8, sample_weight=w)
    assert res.method == "exact" and res.members.shape == (12, 1, 7) and res.interval == 0.8
    own = np.stack([own_pd(t.predict, X, "a", res.grid_values[0], w) for t in m.estimators_])
    np.testing.assert_allclose(res.members[:, 0], own, rtol=1e-10, atol=1e-12)
    lo, hi = quantiles(own, 0.8)  # the central 80%: numpy's linear quantiles 0.1 and 0.9
    np.testing.assert_allclose(res.lower[0], lo, rtol=1e-10)
    np.testing.assert_allclose(res.upper[0], hi, rtol=1e-10)
    model_pd = own_pd(m.predict, X, "a", res.grid_values[0], w, frame=True)  # the forest's PD is its trees' mean
    np.testing.assert_allclose(res.average[0], model_pd, rtol=1e-10)
    np.testing.assert_allclose(res.average[0], own.mean(axis=0), rtol=1e-10)
    np.testing.assert_allclose(res.member_weights, np.full(12, 1 / 12))
    assert res.band == "members: central 80% of 12 trees"
    df = res.to_frame()
    assert df.attrs["band"] == res.band
    np.testing.assert_allclose(df["upper"], hi, rtol=1e-10)
    np.testing.assert_allclose(res.members.std(axis=0)[0], own.std(axis=0), rtol=1e-9, atol=1e-12)


def test_forest_classifier_and_centered(data):
    X, y = data
    m = RandomForestClassifier(n_estimators=9, max_depth=4, random_state=0).fit(X, (y > 1).astype(int))
    res = pdpx.partial_dependence(m, X, "b", grid_resolution=6, interval="members", centered=True, kind="both")
    own = np.stack([own_pd(lambda A, t=t: t.predict_proba(A)[:, 1], X, "b", res.grid_values[0])
                    for t in m.estimators_])
    own -= own[:, :1]
    np.testing.assert_allclose(res.members[:, 0], own, atol=1e-12)
    lo, hi = quantiles(own, 0.95)  # the default level
    np.testing.assert_allclose(res.lower[0], lo, atol=1e-12)
    np.testing.assert_allclose(res.upper[0], hi, atol=1e-12)
    assert res.individual.shape == (1, len(X), 6)  # the model's own ICE curves, centered
    ice = own_ice(lambda A: m.predict_proba(A)[:, 1], X, "b", res.grid_values[0], frame=True)
    np.testing.assert_allclose(res.individual[0], ice - ice[:, :1], atol=1e-12)


def test_three_classes_on_a_two_way_grid(data):
    X, y = data
    m = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X, np.digitize(y, [0.0, 2.0]))
    res = pdpx.partial_dependence(m, X, ["a", "b"], grid_resolution=4, interval="members")
    assert res.members.shape == (5, 3, 4, 4) and res.outputs == ["0", "1", "2"]
    g0, g1 = res.grid_values
    for t, tree in enumerate(m.estimators_):
        for i, u in enumerate(g0):
            own = own_pd(tree.predict_proba, X.assign(a=u), "b", g1)  # (classes, grid of b)
            np.testing.assert_allclose(res.members[t, :, i, :], own, atol=1e-12)
    with pytest.raises(pdpx.PdpxError, match="over the memory budget"):
        pdpx.partial_dependence(m, X, ["a", "b"], grid_resolution=100, interval="members", memory_budget="1MB")


def test_extra_trees_and_bagged_trees_with_feature_subsets(data):
    X, y = data
    et = ExtraTreesRegressor(n_estimators=6, max_depth=4, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(et, X, "c", grid_resolution=5, interval="members")
    own = np.stack([own_pd(t.predict, X, "c", res.grid_values[0]) for t in et.estimators_])
    np.testing.assert_allclose(res.members[:, 0], own, rtol=1e-10, atol=1e-12)
    bag = BaggingRegressor(DecisionTreeRegressor(max_depth=4), n_estimators=5, max_features=0.75,
                           random_state=0).fit(X, y)
    res = pdpx.partial_dependence(bag, X, "a", grid_resolution=5, interval="members")
    own = np.stack([own_pd(t.predict, X, "a", res.grid_values[0], columns=f)
                    for t, f in zip(bag.estimators_, bag.estimators_features_)])
    np.testing.assert_allclose(res.members[:, 0], own, rtol=1e-10, atol=1e-12)
    assert res.band == "members: central 95% of 5 members"
    bc = BaggingClassifier(DecisionTreeClassifier(max_depth=3), n_estimators=4, random_state=0).fit(X, y > 1)
    res = pdpx.partial_dependence(bc, X, "a", grid_resolution=5, interval="members")
    own = np.stack([own_pd(lambda A, t=t: t.predict_proba(A)[:, 1], X, "a", res.grid_values[0])
                    for t in bc.estimators_])
    np.testing.assert_allclose(res.members[:, 0], own, atol=1e-12)


def test_lightgbm_random_forest_members(data):
    import lightgbm
    X, y = data
    m = lightgbm.LGBMRegressor(boosting_type="rf", n_estimators=6, subsample=0.6, subsample_freq=1, num_leaves=8,
                               verbose=-1).fit(X, y)
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=5, interval="members")
    own = np.stack([own_pd(lambda A, t=t: m.booster_.predict(A, start_iteration=t, num_iteration=1), X, "a",
                           res.grid_values[0], frame=True) for t in range(6)])  # each tree's own prediction
    np.testing.assert_allclose(res.members[:, 0], own, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.average[0], own_pd(m.predict, X, "a", res.grid_values[0], frame=True),
                               rtol=1e-10)


def xgb_tree_predictions(model, margin_of):
    """Each tree's own prediction of a one-round XGBoost forest, ``predict(A) -> (rows, trees)``: the leaf each row
    reaches in each tree (XGBoost's ``pred_leaf=True``), that leaf's value from the model's JSON dump, times the
    number of trees (XGBoost sums the trees, each scaled by one over their number), plus the base margin: XGBoost's
    own margin (``margin_of``) less the sum of the row's leaf values. (``iteration_range`` slices rounds, not the
    trees of one round, so it cannot give a single tree.)"""
    import json

    import xgboost

    booster = model.get_booster()
    leaf_value = []
    for text in booster.get_dump(dump_format="json"):
        values, stack = {}, [json.loads(text)]
        while stack:
            node = stack.pop()
            if "leaf" in node:
                values[node["nodeid"]] = node["leaf"]
            stack.extend(node.get("children", []))
        leaf_value.append(values)

    def predict(A):
        leaves = booster.predict(xgboost.DMatrix(A), pred_leaf=True).reshape(len(A), -1)
        v = np.array([[leaf_value[t][leaf] for t, leaf in enumerate(row)] for row in leaves])
        base = np.asarray(margin_of(A), dtype=float).reshape(-1) - v.sum(axis=1)
        return base[:, None] + v.shape[1] * v
    return predict


def test_xgboost_random_forest_members_are_its_trees(data):
    xgboost = pytest.importorskip("xgboost")
    X, y = data
    m = xgboost.XGBRFRegressor(n_estimators=6, max_depth=3, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=5, interval="members", level=0.5)
    assert res.method == "exact" and res.band == "members: central 50% of 6 trees"
    trees = xgb_tree_predictions(m, lambda A: m.predict(A, output_margin=True))
    own = np.stack([own_pd(lambda A, t=t: trees(A)[:, t], X, "a", res.grid_values[0], frame=True)
                    for t in range(6)])
    np.testing.assert_allclose(res.members[:, 0], own, rtol=1e-5, atol=1e-5)  # the dump prints float32 leaves
    lo, hi = quantiles(own, 0.5)
    np.testing.assert_allclose(res.lower[0], lo, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(res.upper[0], hi, rtol=1e-5, atol=1e-5)
    model_pd = own_pd(m.predict, X, "a", res.grid_values[0], frame=True)
    np.testing.assert_allclose(res.average[0], model_pd, rtol=1e-5)  # the trees' mean is the model's PD
    np.testing.assert_allclose(res.members[:, 0].mean(axis=0), model_pd, rtol=1e-5)

    # the scale, independently: without row or column sampling every tree of the forest is the tree a one-round,
    # one-tree model grows on the same data, so each member's PD is that model's own predict averaged
    kw = dict(max_depth=3, subsample=1.0, colsample_bynode=1.0, reg_lambda=1.0, learning_rate=1.0, random_state=0)
    same = xgboost.XGBRFRegressor(n_estimators=4, **kw).fit(X, y)
    alone = xgboost.XGBRegressor(n_estimators=1, **kw).fit(X, y)
    res = pdpx.partial_dependence(same, X, "a", grid_resolution=5, interval="members")
    np.testing.assert_allclose(res.members[:, 0], np.tile(own_pd(alone.predict, X, "a", res.grid_values[0],
                                                                 frame=True), (4, 1)), rtol=1e-5, atol=1e-5)

    c = xgboost.XGBRFClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, (y > 1).astype(int))
    with pytest.raises(pdpx.PdpxError, match="a link, or trees per class.*response='raw'"):
        pdpx.partial_dependence(c, X, "a", interval="members")
    raw = pdpx.partial_dependence(c, X, "b", grid_resolution=4, interval="members", response="raw")
    trees = xgb_tree_predictions(c, lambda A: c.predict(A, output_margin=True))
    own = np.stack([own_pd(lambda A, t=t: trees(A)[:, t], X, "b", raw.grid_values[0], frame=True) for t in range(4)])
    np.testing.assert_allclose(raw.members[:, 0], own, rtol=1e-5, atol=1e-5)  # on the margin the trees sum to


def test_xgboost_boosted_rounds_are_refused(data):
    xgboost = pytest.importorskip("xgboost")
    X, y = data
    rounds = xgboost.XGBRegressor(n_estimators=3, num_parallel_tree=4, max_depth=2).fit(X, y)
    with pytest.raises(pdpx.PdpxError, match="XGBRegressor: it has 3 boosting rounds of 4 parallel trees.*one round "
                                             r"\(XGBRFRegressor.*interval='bootstrap'"):
        pdpx.partial_dependence(rounds, X, "a", interval="members")
    boosted = xgboost.XGBRegressor(n_estimators=3, max_depth=2).fit(X, y)
    with pytest.raises(pdpx.PdpxError, match="members of this XGBRegressor: its trees are summed, as boosting"):
        pdpx.partial_dependence(boosted, X, "a", interval="members")


def test_weighted_members_take_weighted_quantiles(data):
    X, y = data
    rf = RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0)
    et = ExtraTreesRegressor(n_estimators=4, max_depth=3, random_state=1)
    voting = VotingRegressor([("rf", rf), ("et", et)], weights=[1, 3]).fit(X, y)
    res = pdpx.partial_dependence(voting, X, "a", grid_resolution=5, interval="members", level=0.5)
    np.testing.assert_allclose(res.member_weights, [0.25, 0.75])
    own = np.stack([own_pd(e.predict, X, "a", res.grid_values[0], frame=True) for e in voting.estimators_])
    np.testing.assert_allclose(res.members[:, 0], own, rtol=1e-10)
    np.testing.assert_allclose(res.average[0], 0.25 * own[0] + 0.75 * own[1], rtol=1e-10)
    w = np.broadcast_to(np.array([0.25, 0.75])[:, None], own.shape)
    lo, hi = np.quantile(own, [0.25, 0.75], axis=0, weights=w, method="inverted_cdf")
    np.testing.assert_allclose(res.lower[0], lo, rtol=1e-12)
    np.testing.assert_allclose(res.upper[0], hi, rtol=1e-12)
    # the heavier member's curve is the upper bound wherever it lies below the lighter one's
    below = own[1] < own[0]
    assert below.any() and np.allclose(res.upper[0][below], own[1][below], rtol=1e-12)


def test_members_without_readable_trees_by_brute_force(data):
    X, y = data
    bag = BaggingRegressor(KNeighborsRegressor(), n_estimators=4, max_features=0.75, random_state=0).fit(X, y)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(X))
    res = pdpx.partial_dependence(bag, X, "a", grid_resolution=5, interval="members", sample_weight=w)
    own = np.stack([own_pd(e.predict, X, "a", res.grid_values[0], w, columns=c)
                    for e, c in zip(bag.estimators_, bag.estimators_features_)])
    np.testing.assert_allclose(res.members[:, 0], own, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.average[0], own_pd(bag.predict, X, "a", res.grid_values[0], w, frame=True),
                               rtol=1e-10)
    assert res.method == "brute" and "by brute force over each member's own prediction" in res.notes[-1]
    voting = VotingRegressor([("r", Ridge()), ("k", KNeighborsRegressor())], weights=[3, 1]).fit(X, y)
    res = pdpx.partial_dependence(voting, X, "b", grid_resolution=4, interval="members")
    own = np.stack([own_pd(e.predict, X, "b", res.grid_values[0], frame=True) for e in voting.estimators_])
    np.testing.assert_allclose(res.members[:, 0], own, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.member_weights, [0.75, 0.25])
    forest = RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    by_brute = pdpx.partial_dependence(forest, X, "a", grid_resolution=5, interval="members", method="brute")
    by_trees = pdpx.partial_dependence(forest, X, "a", grid_resolution=5, interval="members")
    assert (by_brute.method, by_trees.method) == ("brute", "exact")
    np.testing.assert_allclose(by_brute.members, by_trees.members, rtol=1e-10, atol=1e-12)
    ada = AdaBoostRegressor(KNeighborsRegressor(), n_estimators=3, random_state=0).fit(X, y)  # a weighted median
    with pytest.raises(pdpx.PdpxError, match="mean of this AdaBoostRegressor's members .* is not its prediction"):
        pdpx.partial_dependence(ada, X, "a", grid_resolution=4, interval="members")


def test_boosted_and_stacked_models_are_refused(data):
    X, y = data
    for m in (HistGradientBoostingRegressor(max_iter=5).fit(X, y), GradientBoostingRegressor(n_estimators=5).fit(X, y)):
        with pytest.raises(pdpx.PdpxError, match=f"members of this {type(m).__name__}: its trees are summed, as "
                                                 "boosting sums them.*interval='bootstrap'.*dict"):
            pdpx.partial_dependence(m, X, "a", interval="members")
    st = StackingRegressor([("a", DecisionTreeRegressor(max_depth=2)), ("b", DecisionTreeRegressor(max_depth=3))],
                           final_estimator=Ridge()).fit(X, y)
    with pytest.raises(pdpx.PdpxError, match="no weighted mean of"):
        pdpx.partial_dependence(st, X, "a", interval="members")
    with pytest.raises(pdpx.PdpxError, match="one tree"):
        pdpx.partial_dependence(DecisionTreeRegressor(max_depth=2).fit(X, y), X, "a", interval="members")
    with pytest.raises(pdpx.PdpxError, match="cannot read this Ridge's .* nor does it expose members"):
        pdpx.partial_dependence(Ridge().fit(X, y), X, "a", interval="members")


def test_dict_of_fold_models(data):
    X, y = data
    folds = np.arange(len(X)) % 3
    models = {f"fold{k}": (Ridge() if k == 0 else DecisionTreeRegressor(max_depth=3, random_state=k)).fit(
        X[folds != k], y[folds != k]) for k in range(3)}
    res = pdpx.partial_dependence(models, X, "a", grid_resolution=6, interval="members", level=0.5)
    own = np.stack([own_pd(m.predict, X, "a", res.grid_values[0], frame=True) for m in models.values()])
    np.testing.assert_allclose(res.members[:, 0], own, rtol=1e-10)
    np.testing.assert_allclose(res.average[0], own.mean(axis=0), rtol=1e-10)
    lo, hi = quantiles(own, 0.5)
    np.testing.assert_allclose(res.lower[0], lo, rtol=1e-10)
    np.testing.assert_allclose(res.upper[0], hi, rtol=1e-10)
    assert res.band == "members: central 50% of 3 models" and res.member_labels == list(models)
    assert res.method == "fold0: brute, fold1: exact, fold2: exact"
    trees = {k: DecisionTreeRegressor(max_depth=d, random_state=0).fit(X, y) for k, d in (("t2", 2), ("t4", 4))}
    with pytest.raises(pdpx.PdpxError, match="model 't4' has another grid than model 't2'.*custom_values"):
        pdpx.partial_dependence(trees, X, "a", grid="thresholds", interval="members")
    with pytest.raises(pdpx.PdpxError, match="at least two models"):
        pdpx.partial_dependence({"one": models["fold0"]}, X, "a", interval="members")
    with pytest.raises(pdpx.PdpxError, match="kind='both' asks for ICE"):
        pdpx.partial_dependence(models, X, "a", interval="members", kind="both")


def test_dict_of_fold_models_on_a_categorical_feature(data):
    """The models' grids of text levels are compared as levels (they were compared as floats, a TypeError)."""
    X, y = data
    X = X.assign(c=pd.Categorical(np.random.default_rng(4).choice(["lo", "mid", "hi"], len(X))))
    y = y + (X["c"] == "hi").to_numpy()
    folds = np.arange(len(X)) % 2
    models = {f"fold{k}": HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype",
                                                       random_state=k).fit(X[folds != k], y[folds != k])
              for k in range(2)}
    res = pdpx.partial_dependence(models, X, "c", interval="members")
    own = []
    for m in models.values():
        curve = []
        for level in res.grid_values[0]:
            Xv = X.copy()
            Xv["c"] = pd.Categorical([level] * len(X), categories=X["c"].cat.categories)
            curve.append(m.predict(Xv).mean())
        own.append(curve)
    np.testing.assert_allclose(res.members[:, 0], np.array(own), rtol=1e-10)


def test_quantile_models(data):
    X, y = data
    qs = {q: GradientBoostingRegressor(loss="quantile", alpha=q, n_estimators=20, max_depth=2,
                                       random_state=0).fit(X, y) for q in (0.9, 0.1, 0.5)}
    res = pdpx.partial_dependence(qs, X, "a", grid_resolution=5, interval="quantiles")
    own = {q: own_pd(m.predict, X, "a", res.grid_values[0], frame=True) for q, m in qs.items()}
    np.testing.assert_allclose(res.average[0], own[0.5], rtol=1e-10)
    np.testing.assert_allclose(res.lower[0], own[0.1], rtol=1e-10)
    np.testing.assert_allclose(res.upper[0], own[0.9], rtol=1e-10)
    assert res.band == "quantiles: PDs of the 0.1 and 0.9 quantile models"
    assert res.member_labels == ["0.1", "0.5", "0.9"] and res.interval is None
    with pytest.raises(pdpx.PdpxError, match="no median model"):
        pdpx.partial_dependence({0.1: qs[0.1], 0.9: qs[0.9]}, X, "a", interval="quantiles")
    with pytest.raises(pdpx.PdpxError, match="numbers between 0 and 1"):
        pdpx.partial_dependence({"low": qs[0.1], 0.5: qs[0.5]}, X, "a", interval="quantiles")
    with pytest.raises(pdpx.PdpxError, match="takes a dict of models"):
        pdpx.partial_dependence(qs[0.5], X, "a", interval="quantiles")
    with pytest.raises(pdpx.PdpxError, match="leave level out"):
        pdpx.partial_dependence(qs, X, "a", interval="quantiles", level=0.9)


def test_interval_names_and_levels(data):
    X, y = data
    m = Ridge().fit(X, y)
    a = pdpx.partial_dependence(m, X, "a", grid_resolution=4, interval="bootstrap", n_boot=20)
    b = pdpx.partial_dependence(m, X, "a", grid_resolution=4, interval=0.95, n_boot=20)
    np.testing.assert_array_equal(a.lower, b.lower)
    assert a.interval == 0.95
    c = pdpx.partial_dependence(m, X, "a", grid_resolution=4, interval="bootstrap", level=0.8, n_boot=20)
    d = pdpx.partial_dependence(m, X, "a", grid_resolution=4, interval=0.8, n_boot=20)
    np.testing.assert_array_equal(c.upper, d.upper)
    with pytest.raises(pdpx.PdpxError, match="is a level already"):
        pdpx.partial_dependence(m, X, "a", interval=0.9, level=0.8)
    with pytest.raises(pdpx.PdpxError, match="pass interval='members' or 'bootstrap' with it"):
        pdpx.partial_dependence(m, X, "a", level=0.8)
    with pytest.raises(pdpx.PdpxError, match="interval"):
        pdpx.partial_dependence(m, X, "a", interval="trees")
    with pytest.raises(pdpx.PdpxError, match="one feature set per call"):
        pdpx.partial_dependence_many(m, X, ["a"], interval="members")
    with pytest.raises(pdpx.PdpxError, match="by= cannot be combined"):
        pdpx.partial_dependence(m, X, "a", interval="members", by="b")


def test_band_is_drawn_with_its_label(data):
    X, y = data
    m = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=5, interval="members")
    p = res.plot()
    assert "shaded: members: central 95% of 5 trees" in p.labels.caption
    assert "pd_interval" in layer_names(p)
    assert "members: central 95% of 5 trees" in res._repr_html_()  # the notebook's facts name the band too


def test_the_members_view_answers_the_adapter_interface_and_nothing_else():
    """MembersView forwards nothing by __getattr__: every member of the Adapter interface is written out and gives
    the model's adapter's answer, its trees are the split ones, and an attribute outside the interface is no
    attribute of the view."""
    import inspect

    from pdpx.core.adapter import Adapter
    from pdpx.core.members import BruteMembersView, MembersView

    assert "__getattr__" not in vars(MembersView) and "__getattr__" not in vars(BruteMembersView)

    class Marked(Adapter):
        library, thread_safe, library_roots = "marked", False, ("marked_lib",)
        extra = "outside the interface"

        def __init__(self):
            super().__init__(object())

        def feature_names(self):
            return ["a", "b"]

        def is_classifier(self):
            return True

        def classes(self):
            return ["x", "y"]

        def responses(self):
            return ["predict_proba", "raw"]

        def output_names(self, response):
            return [f"{response}:x", f"{response}:y"]

        def default_outputs(self, response):
            return [1]

        def response_label(self, response):
            return f"label of {response}"

        def column_key(self, name):
            return name.upper()

        def validate_columns(self, X):
            return X.assign(checked=True)

        def predict(self, X, response):
            return np.full((len(X), 2), 7.0)

        def prediction_path(self, response):
            return [("path", response)]

        def fingerprint(self):
            return "digest"

        def tree_model(self, response):
            raise AssertionError("the view's trees are the split ones")

    inner, split = Marked(), object()
    view = MembersView(inner, split)
    X = pd.DataFrame({"a": [1.0, 2.0]})
    public = {n for n, _ in inspect.getmembers(Adapter) if not n.startswith("_")} - {"tree_model_unavailable"}
    for name in public - {"tree_model"}:
        assert name in vars(MembersView), name  # written out, not inherited from Adapter's defaults
    assert (view.library, view.thread_safe, view.library_roots) == ("marked", False, ("marked_lib",))
    assert view.feature_names() == ["a", "b"] and view.is_classifier() and view.classes() == ["x", "y"]
    assert view.responses() == ["predict_proba", "raw"] and view.output_names("raw") == ["raw:x", "raw:y"]
    assert view.default_outputs("raw") == [1] and view.response_label("raw") == "label of raw"
    assert view.column_key("a") == "A" and view.validate_columns(X)["checked"].all()
    assert (view.predict(X, "raw") == 7.0).all() and view.prediction_path("raw") == [("path", "raw")]
    assert view.fingerprint() == "digest" and view.tree_model("raw") is split and view.model is split
    with pytest.raises(AttributeError):
        view.extra  # noqa: B018 - an attribute of the adapter outside the interface is not reachable


def test_members_of_a_dask_x_equal_pandas(data):
    """interval='members' on a Dask X: each partition's tasks make the members' view again over the model's adapter
    (its trees split by member; a forest without readable trees: its members' predicts), and the band equals the
    pandas call's."""
    dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
    X, y = data
    forest = RandomForestRegressor(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    for method in ("auto", "brute"):
        got = pdpx.partial_dependence(forest, dd.from_pandas(X, npartitions=3), "a", interval="members",
                                      grid_resolution=5, method=method)
        want = pdpx.partial_dependence(forest, X, "a", interval="members", grid_resolution=5, method=method)
        for name in ("average", "lower", "upper", "members"):
            np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=0, atol=1e-9)
