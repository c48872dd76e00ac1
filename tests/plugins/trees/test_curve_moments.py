"""The ICE curves' moments over the rows from one pass (``exact``'s ``curve_moments``), against the definition.

The reference is written from the definition of :func:`pdpx.heterogeneity`: every row's
ICE curve from the model's own predict with the feature set to each grid point, centered
on the row's own mean over the grid, then the weighted mean and variance across the rows
at each grid point (numpy).
"""

import numpy as np
import pandas as pd
import pytest
from test_kernels import data, full_tree_ensemble
from test_oblivious import SPECIAL, special_case
from treetools import IRAdapter

from pdpx.core.curves import CurveMoments, reduce_curves
from pdpx.core.options import PDOptions
from pdpx.core.session import Session


def ice(predict, X: pd.DataFrame, col, grid) -> np.ndarray:
    """(K, n, G): the model's own prediction with ``col`` set to each grid value (its dtype kept)."""
    out = []
    for g in grid:
        Z = X.copy()
        Z[col] = pd.Series([g] * len(Z), index=Z.index, dtype=X[col].dtype)
        out.append(np.asarray(predict(Z), dtype=np.float64).reshape(len(X), -1))
    return np.stack(out, axis=2).transpose(1, 0, 2)


def reference(predict, X, col, grid, w):
    """(mean_f, mean_c, variance_c), each (K, G), from the definition."""
    f = ice(predict, X, col, grid)
    c = f - f.mean(axis=2, keepdims=True)
    p = w / w.sum()
    mean_c = np.einsum("kng,n->kg", c, p)
    return np.einsum("kng,n->kg", f, p), mean_c, np.einsum("kng,n->kg", (c - mean_c[:, None, :]) ** 2, p)


def one_pass(model, X, grids: dict, **opts):
    options = PDOptions.checked("partial_dependence", dict(custom_values=grids, **opts))
    session = Session(model, X, options)
    features = [session.resolve_features([c])[0] for c in grids]
    got = reduce_curves(session, features, CurveMoments(), ways=("walk",))  # the fused walk only
    if got is None:
        return session, None
    per = [(c.w, f.mean, c.mean, c.m2) for c, f in (got.value[j] for j in features)]
    return session, (per, got.method)


def check(model, X, predict, grids, *, atol=1e-10, weights=None, **opts):
    session, got = one_pass(model, X, grids, sample_weight=weights, **opts)
    assert got is not None, "the one-pass path was not taken"
    per, method = got
    assert method == "exact"
    w = np.ones(len(X)) if weights is None else np.asarray(weights, dtype=np.float64)
    for (c, _), (W, mean_f, mean_c, m2_c) in zip(grids.items(), per):
        j = session.resolve_features([c])[0]
        grid = session.grid_for(j)  # the custom values, with the missing point when it is added
        want = reference(predict, X, c, list(grid), w)
        want_f, want_c, want_v = (a[list(session.outputs)] for a in want)  # a binary classifier: class 1
        assert W == pytest.approx(w.sum())
        np.testing.assert_allclose(mean_f, want_f, atol=atol, rtol=0)
        np.testing.assert_allclose(mean_c, want_c, atol=atol, rtol=0)
        np.testing.assert_allclose(m2_c / W, want_v, atol=atol, rtol=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_full_trees_with_missing_values_and_weights_equal_definition(seed):
    ens = full_tree_ensemble(6, n_trees=5, n_features=3, seed=seed)  # 64 leaves: the largest one word holds
    X = data(n=70, seed=seed)
    w = np.random.default_rng(seed).random(len(X))
    grids = {"f0": [1.5, -2.0, 0.2, -0.5, 0.7], "f2": [-0.7, 0.0, 0.5]}  # unsorted: grid masks, not intervals
    check(IRAdapter(ens), X, ens.predict, grids, weights=w, include_missing=True)
    check(IRAdapter(ens), X, ens.predict, {"f1": sorted(grids["f0"])})  # sorted: intervals


@pytest.mark.parametrize("kind", list(SPECIAL))
def test_special_splits_margins_and_links_equal_definition(kind):
    """Category sets and zero-as-missing splits, one tree per margin, leaves with a value for every margin (one
    walk per margin), and each link applied to every row's margins before the moments."""
    ens, X, rng = special_case(kind, 90)
    if kind == "categorical":
        grids = {"f1": [3.0, 0.0, 5.0, 1.0], "f0": [0.5, -1.0, 0.0]}
    else:
        grids = {"f1": [0.0, -0.5, 2.0], "f0": [-1.0, 0.0, 0.5], "f3": [0.1, 0.2]}
    check(IRAdapter(ens), X, ens.predict, grids, weights=rng.random(len(X)))


def test_real_models_equal_their_own_predict():
    """scikit-learn's boosted classifier (categories, missing values), a forest's probabilities, LightGBM's
    Poisson model (exp link) and XGBoost (float32 sums)."""
    sk = pytest.importorskip("sklearn.ensemble")
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is an optional dependency")
    xgb = pytest.importorskip("xgboost", reason="xgboost is an optional dependency")
    rng = np.random.default_rng(1)
    n = 400
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=list("abc"))
    X["d"] = pd.Categorical(rng.choice(["u", "v", "w"], n))
    X.loc[::11, "b"] = np.nan
    score = X["a"] * (X["b"].fillna(0) > 0) + (X["d"] == "v") + rng.normal(scale=0.3, size=n)
    three = np.digitize(score, [0.0, 1.0])
    hgb = sk.HistGradientBoostingClassifier(max_iter=15, max_depth=3, categorical_features="from_dtype",
                                            random_state=0).fit(X, three)
    check(hgb, X, hgb.predict_proba, {"a": [-1.0, 0.0, 1.0], "d": ["w", "u", "v"], "b": [0.5, -0.5]})
    num = X.drop(columns="d").fillna(0.0)
    forest = sk.RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0).fit(num, three)
    check(forest, num, forest.predict_proba, {"a": [-1.0, 0.0, 1.0], "c": [0.3]})
    pois = lgb.LGBMRegressor(objective="poisson", n_estimators=20, max_depth=3, verbose=-1).fit(num, np.exp(score / 3))
    check(pois, num, pois.predict, {"a": [-1.0, 0.0, 1.0], "b": [-0.5, 0.5]})
    boost = xgb.XGBClassifier(n_estimators=20, max_depth=3, random_state=0).fit(num, three > 0)
    check(boost, num, boost.predict_proba, {"a": [-1.0, 0.0, 1.0]}, atol=1e-6)  # XGBoost sums leaves in float32


def test_heterogeneity_takes_the_one_pass_and_equals_the_curves():
    """pdpx.heterogeneity on a boosted model runs the one pass (its note) and gives the chunked curves' answer."""
    import pdpx

    sk = pytest.importorskip("sklearn.ensemble")
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(500, 4)), columns=list("abcd"))
    X.loc[::7, "b"] = np.nan
    w = rng.random(len(X))
    model = sk.HistGradientBoostingRegressor(max_iter=30, max_leaf_nodes=16, random_state=0).fit(
        X, X["a"] * X["b"].fillna(0) + X["c"])
    fast = pdpx.heterogeneity(model, X, sample_weight=w, include_missing=True)
    slow = pdpx.heterogeneity(model, X, sample_weight=w, include_missing=True, method_options={"engine": "rows"})
    assert any("one pass" in note for note in fast.notes)
    assert not any("one pass" in note for note in slow.notes)
    for a, b in zip(fast.variance + fast.average, slow.variance + slow.average):
        np.testing.assert_allclose(a, b, atol=1e-12, rtol=0)
    assert fast.table.feature.iloc[0] in ("a", "b")  # the interacting pair, not the additive c


def test_not_taken_where_it_does_not_apply():
    """Trees over 64 leaves, a sum of several models, engine='rows' and brute leave the curves to the session."""
    sk = pytest.importorskip("sklearn.ensemble")
    X = data(n=30)
    grids = {"f0": [-1.0, 0.5]}
    assert one_pass(IRAdapter(full_tree_ensemble(7)), X, grids)[1] is None
    assert one_pass(IRAdapter(full_tree_ensemble(3)), X, grids, method_options={"engine": "rows"})[1] is None
    assert one_pass(IRAdapter(full_tree_ensemble(3)), X, grids, method="brute")[1] is None
    assert one_pass(IRAdapter(full_tree_ensemble(3)), X, grids)[1] is not None
    Xf = X.fillna(0.0)
    vote = sk.VotingRegressor([("a", sk.HistGradientBoostingRegressor(max_iter=5, max_leaf_nodes=8)),
                               ("b", sk.GradientBoostingRegressor(n_estimators=5, max_depth=3))]).fit(Xf, Xf["f0"])
    assert one_pass(vote, Xf, grids)[1] is None


def test_a_grid_too_long_for_the_packed_boxes_and_leaves_without_grid_points():
    """More than 32,767 grid points: every leaf's boxes are read from the flat table (none packed); a short grid
    whose points miss some leaves' regions: those leaves move no curve."""
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.uniform(-1, 1, 40), "b": rng.uniform(-1, 1, 40)})
    model = DecisionTreeRegressor(max_depth=5, random_state=0).fit(X, np.sin(4 * X.a) * X.b + X.b ** 2)

    grid = np.linspace(-200.0, 1.2, 33_000)  # the trees' thresholds on a fall past point 32,767
    session, got = one_pass(model, X, {"a": grid, "b": np.array([-0.5, 0.9])})
    (W, mean_f, mean_c, m2_c), short = got[0]
    Z = X.loc[X.index.repeat(len(grid))].assign(a=np.tile(grid, len(X)))
    f = model.predict(Z).reshape(len(X), len(grid))  # the model's own predict, one call for every copy of the rows
    c = f - f.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(mean_f[0], f.mean(axis=0), atol=1e-10, rtol=0)
    np.testing.assert_allclose(mean_c[0], c.mean(axis=0), atol=1e-10, rtol=0)
    np.testing.assert_allclose(m2_c[0] / W, c.var(axis=0), atol=1e-10, rtol=0)
    want_f, want_c, want_v = reference(model.predict, X, "b", [-0.5, 0.9], np.ones(len(X)))  # from the same walk
    W, mean_f, mean_c, m2_c = short
    for got_, want in ((mean_f, want_f), (mean_c, want_c), (m2_c / W, want_v)):
        np.testing.assert_allclose(got_, want, atol=1e-10, rtol=0)
