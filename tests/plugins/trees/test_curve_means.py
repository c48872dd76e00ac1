"""Every row's ICE curve averaged over a grid, from one pass (``exact``'s ``curve_means``), against the definition.

The reference is written from the definition: for each grid point, the model's own
prediction with the feature set to it, weighted by the point's share and summed.
"""

import numpy as np
import pandas as pd
import pytest
from test_kernels import data, full_tree_ensemble
from test_oblivious import special_case
from treetools import IRAdapter

import pdpx
from pdpx.core.curves import CurveMeans, reduce_curves
from pdpx.core.errors import PdpxError
from pdpx.core.options import PDOptions
from pdpx.core.session import Session
from pdpx.plugins.trees import curve_means as _cm


def reference(predict, X: pd.DataFrame, col, grid, shares):
    """(K, n): sum_g shares[g] * predict(X with ``col`` set to grid[g])."""
    total = 0.0
    for g, s in zip(grid, shares):
        Z = X.copy()
        Z[col] = pd.Series([g] * len(Z), index=Z.index, dtype=X[col].dtype)
        total = total + s * np.asarray(predict(Z), dtype=np.float64).reshape(len(X), -1)
    return total.T


def one_pass(model, X, grids: dict, shares: dict, **opts):
    """(means, f, method) from the fused walk (the curve reducer CurveMeans), or None where the method has none."""
    options = PDOptions.checked("partial_dependence", dict(custom_values=grids, include_missing="auto", **opts))
    session = Session(model, X, options)
    features = [session.resolve_features([c])[0] for c in grids]
    reducer = CurveMeans({j: shares[c] for j, c in zip(features, grids)}, np.zeros(len(X), dtype=np.int64))
    got = reduce_curves(session, features, reducer, ways=("walk",))
    if got is None:
        return None
    means, f = got.value
    return [means[j] for j in features], f, got.method


def shares_for(grid, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    s = rng.random(len(grid) + int(nan))
    return s / s.sum()


def check(model, X, predict, grids, *, atol=1e-10, nan=(), **opts):
    shares = {c: shares_for(g, k, c in nan) for k, (c, g) in enumerate(grids.items())}
    got = one_pass(model, X, grids, shares, **opts)
    assert got is not None, "the one-pass path was not taken"
    means, f, method = got
    assert method == "exact"
    np.testing.assert_allclose(f, np.asarray(predict(X), dtype=np.float64).reshape(len(X), -1).T, atol=atol, rtol=0)
    for (c, grid), m in zip(grids.items(), means):
        full = list(grid) + ([np.nan] if c in nan else [])
        np.testing.assert_allclose(m, reference(predict, X, c, full, shares[c]), atol=atol, rtol=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_full_trees_with_missing_values_equal_definition(seed):
    ens = full_tree_ensemble(6, n_trees=5, n_features=3, seed=seed)  # 64 leaves: the largest one word holds
    X = data(n=60, seed=seed)
    grids = {"f0": [1.5, -2.0, 0.2, -0.5, 0.7], "f2": [-0.7, 0.0, 0.5]}  # unsorted: grid masks, not intervals
    check(IRAdapter(ens), X, IRAdapter(ens).ens.predict, grids, nan=("f0", "f2"))


def test_sorted_grid_and_one_feature_equal_definition():
    ens = full_tree_ensemble(4, n_trees=6, n_features=3, seed=4)
    X = data(n=50, seed=2).fillna(0.3)
    check(IRAdapter(ens), X, ens.predict, {"f1": [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]})


@pytest.mark.parametrize("kind", ["categorical", "zero-or-nan", "margins per tree", "vector leaves"])
def test_special_splits_and_margins_equal_definition(kind):
    """Category sets and zero-as-missing splits (routed one row at a time), one tree per margin, and leaves
    with a value for every margin (one walk per margin)."""
    ens, X, _ = special_case(kind, 80)
    if kind == "categorical":
        grids = {"f1": [3.0, 0.0, 5.0, 1.0], "f0": [0.5, -1.0, 0.0]}
    else:
        grids = {"f1": [0.0, -0.5, 2.0], "f0": [0.5, -1.0, 0.0], "f3": [0.1]}
    nan = tuple(c for c in grids if X[c].isna().any())
    check(IRAdapter(ens), X, ens.predict, grids, nan=nan)


def test_xgboost_float32_and_missing_values_equal_its_predict():
    xgb = pytest.importorskip("xgboost", reason="xgboost is an optional dependency")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=list("abcd"))
    X.loc[::9, "c"] = np.nan
    y = X["a"] * X["b"] + np.sin(X["c"].fillna(1.0)) + rng.normal(scale=0.1, size=len(X))
    model = xgb.XGBRegressor(n_estimators=40, max_depth=4, random_state=0).fit(X, y)
    grids = {"a": list(np.quantile(X["a"], [0.9, 0.1, 0.5])), "c": list(np.nanquantile(X["c"], [0.2, 0.8]))}
    check(model, X, model.predict, grids, atol=2e-5, nan=("c",))  # XGBoost sums leaves in float32


def test_forest_probabilities_and_an_ensemble_of_models_equal_definition():
    sk = pytest.importorskip("sklearn.ensemble")
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=list("xyz"))
    cls = np.digitize(X["x"] * X["y"], [-0.3, 0.3])
    forest = sk.RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0).fit(X, cls)
    check(forest, X, forest.predict_proba, {"x": [-1.0, 0.0, 1.0], "z": [0.5, -0.5]})
    y = X["x"] * X["y"] + X["z"]
    vote = sk.VotingRegressor([("a", sk.HistGradientBoostingRegressor(max_iter=15, max_leaf_nodes=8)),
                               ("b", sk.GradientBoostingRegressor(n_estimators=10, max_depth=3))]).fit(X, y)
    check(vote, X, vote.predict, {"y": [0.3, -0.8, 1.1], "z": [0.0]})


def test_not_taken_where_it_does_not_apply():
    """Trees over 64 leaves, a non-linear link and engine='rows' leave the curves to the row kernels (None)."""
    X = data(n=30)
    grids, shares = {"f0": [-1.0, 0.5]}, {"f0": np.array([0.25, 0.25, 0.5])}
    assert one_pass(IRAdapter(full_tree_ensemble(7)), X, grids, shares) is None
    assert one_pass(IRAdapter(full_tree_ensemble(3, link="logistic")), X, grids, shares) is None
    assert one_pass(IRAdapter(full_tree_ensemble(3)), X, grids, shares, method_options={"engine": "rows"}) is None
    assert one_pass(IRAdapter(full_tree_ensemble(3)), X, grids, shares, method="brute") is None
    assert one_pass(IRAdapter(full_tree_ensemble(3)), X, grids, shares) is not None


def test_shares_must_match_the_grid():
    X = data(n=30)
    with pytest.raises(PdpxError, match="one share per grid point"):
        one_pass(IRAdapter(full_tree_ensemble(3)), X, {"f0": [-1.0, 0.5]}, {"f0": np.array([0.5, 0.5])})


def test_h_statistic_takes_the_one_pass_and_agrees_with_the_curves(monkeypatch):
    """H's overall statistic on a leaf-set model runs the one pass (spied), and equals the curves' answer."""
    sk = pytest.importorskip("sklearn.ensemble")
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(500, 4)), columns=list("abcd"))
    X.loc[::7, "b"] = np.nan
    w = rng.random(len(X))
    model = sk.HistGradientBoostingRegressor(max_iter=30, max_leaf_nodes=16, random_state=0).fit(
        X, X["a"] * X["b"].fillna(0) + X["c"])
    taken = []
    real = _cm.curve_means
    monkeypatch.setattr(_cm, "curve_means", lambda *a, **k: taken.append(1) or real(*a, **k))
    fast = pdpx.h_statistic(model, X, sample_weight=w)
    assert taken
    taken.clear()
    rows = pdpx.h_statistic(model, X, sample_weight=w, method_options={"engine": "rows"})
    assert not taken
    np.testing.assert_allclose(fast.overall.sort_values("feature").h2.to_numpy(),
                               rows.overall.sort_values("feature").h2.to_numpy(), atol=1e-12, rtol=0)
    assert fast.overall.h2.max() > 0.01  # the statistic is not trivially zero here


def test_sums_of_members_on_their_own_columns_equal_definition():
    """A TreeSum whose members read subsets of X's columns (one reads none of the requested features, one is
    itself a sum): each member's part, and its own prediction where it does not read the feature."""
    from pdpx.core.ir import TreeModel, numeric_encoder, numeric_values
    from pdpx.core.treesum import TreeSum, TreeTerm
    from pdpx.plugins.trees.curve_means import curve_means

    X = data(n=70, n_features=4, seed=5)
    a = full_tree_ensemble(4, n_trees=3, n_features=2, seed=1)  # reads columns 0, 1
    b = full_tree_ensemble(3, n_trees=2, n_features=1, seed=2)  # reads column 3 only
    c = full_tree_ensemble(5, n_trees=2, n_features=2, seed=3)  # inside a nested sum, reads columns 2, 0
    tmod = lambda e: TreeModel(e, numeric_encoder, numeric_values)  # noqa: E731
    inner = TreeSum([TreeTerm(tmod(c), np.array([[0.5]]), [2, 0])], offset=np.array([0.25]))
    ts = TreeSum([TreeTerm(tmod(a), np.array([[1.5]]), [0, 1]), TreeTerm(tmod(b), np.array([[-0.7]]), [3]),
                  TreeTerm(inner, np.array([[2.0]]), None)], offset=np.array([0.3]))

    def predict(Z):
        v = Z.to_numpy(dtype=float)
        return (0.3 + 1.5 * a.predict(v[:, [0, 1]])[:, 0] - 0.7 * b.predict(v[:, [3]])[:, 0]
                + 2.0 * (0.25 + 0.5 * c.predict(v[:, [2, 0]])[:, 0]))

    grids = {"f0": [1.5, -0.5, 0.2, np.nan], "f2": [0.0, -1.0]}
    shares = {c_: shares_for(g, k) for k, (c_, g) in enumerate(grids.items())}
    from pdpx.core.method import Request

    reqs = [Request(X=X, features=[int(c_[1])], grid_values=[np.array(g)], categorical=[False], response="predict",
                    outputs=[0], kind="average", sample_weight=None, memory_budget=2**26) for c_, g in grids.items()]
    means, f = curve_means(ts, reqs, [shares[c_][:len(g)] / shares[c_][:len(g)].sum() for c_, g in grids.items()])
    np.testing.assert_allclose(f[0], predict(X), atol=1e-12, rtol=0)
    for (c_, g), m in zip(grids.items(), means):
        s = shares[c_][:len(g)] / shares[c_][:len(g)].sum()
        np.testing.assert_allclose(m, reference(lambda Z: predict(Z), X, c_, g, s), atol=1e-12, rtol=0)
