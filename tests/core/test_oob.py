"""oob=True (pdpx.core.oob): each training row's ICE curve through the members that did not draw it, against the
per-row definition built here from each member's own predict and the rows scikit-learn says it drew."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import BaggingRegressor, GradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.tree import DecisionTreeRegressor

import pdpx


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(8)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = 2 * X["a"] + X["b"] ** 2 + X["a"] * X["c"] + rng.normal(scale=0.5, size=200)
    return X, y.to_numpy()


def oob_by_definition(members, samples, X, feature, grid, columns=None, weights=None):
    """(ice (kept rows, grid), kept mask, pd): row i's curve averages the members whose drawn rows miss i, each
    member's own predict on the array it was fitted on; the PD their (weighted) mean over the rows kept."""
    n = len(X)
    ice = np.full((n, len(grid)), np.nan)
    own = []
    for b, m in enumerate(members):
        cols = None if columns is None else columns[b]
        per = []
        for v in grid:
            A = X.assign(**{feature: v}).to_numpy()
            p = m(A if cols is None else A[:, cols])
            per.append(np.asarray(p, dtype=float))
        own.append(np.stack(per, axis=1))  # (n, grid)
    for i in range(n):
        out = [b for b in range(len(members)) if i not in set(samples[b].tolist())]
        if out:
            ice[i] = np.mean([own[b][i] for b in out], axis=0)
    kept = ~np.isnan(ice[:, 0])
    w = None if weights is None else weights[kept]
    return ice[kept], kept, np.average(ice[kept], axis=0, weights=w)


def test_forest_oob_pd_and_ice_are_the_per_row_definition(data):
    X, y = data
    m = RandomForestRegressor(n_estimators=25, max_depth=5, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=6, oob=True, kind="both")
    ice, kept, pd_ = oob_by_definition([t.predict for t in m.estimators_], m.estimators_samples_, X, "a",
                                       res.grid_values[0])
    assert res.method == "exact"
    np.testing.assert_allclose(res.average[0], pd_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.individual[0], ice, rtol=1e-12, atol=1e-12)
    assert f"over {kept.sum()} of the 200 training rows" in " ".join(res.notes)
    full = pdpx.partial_dependence(m, X, "a", grid_resolution=6)
    assert not np.allclose(full.average, res.average)  # another curve than the forest's own PD
    blocks = pdpx.partial_dependence(m, X, "a", grid_resolution=6, oob=True, memory_budget="1MB")  # row blocks
    np.testing.assert_allclose(blocks.average, res.average, rtol=1e-12, atol=1e-12)


def test_rows_in_every_bag_are_left_out_and_counted(data):
    X, y = data
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(X))
    m = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(m, X, "b", grid_resolution=5, oob=True, kind="both", sample_weight=w,
                                  centered=True)
    ice, kept, _ = oob_by_definition([t.predict for t in m.estimators_], m.estimators_samples_, X, "b",
                                     res.grid_values[0])
    assert 0 < (~kept).sum() < len(X)  # three trees: about a quarter of the rows are in every bag
    ice = ice - ice[:, :1]
    np.testing.assert_allclose(res.individual[0], ice, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.average[0], np.average(ice, axis=0, weights=w[kept]), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(res.ice_rows, np.flatnonzero(kept))
    assert f"{(~kept).sum()} row(s) drawn by every member" in " ".join(res.notes)


def test_classifier_bagged_trees_and_bagged_models(data):
    X, y = data
    c = RandomForestClassifier(n_estimators=15, max_depth=4, random_state=1).fit(X, (y > 1).astype(int))
    res = pdpx.partial_dependence(c, X, "c", grid_resolution=5, oob=True)
    _, _, pd_ = oob_by_definition([lambda A, t=t: t.predict_proba(A)[:, 1] for t in c.estimators_],
                                  c.estimators_samples_, X, "c", res.grid_values[0])
    np.testing.assert_allclose(res.average[0], pd_, rtol=1e-12, atol=1e-12)
    bag = BaggingRegressor(DecisionTreeRegressor(max_depth=4), n_estimators=12, max_features=2,
                           random_state=0).fit(X, y)
    res = pdpx.partial_dependence(bag, X, "a", grid_resolution=5, oob=True)
    _, _, pd_ = oob_by_definition([t.predict for t in bag.estimators_], bag.estimators_samples_, X, "a",
                                  res.grid_values[0], columns=bag.estimators_features_)
    np.testing.assert_allclose(res.average[0], pd_, rtol=1e-12, atol=1e-12)
    ridge = BaggingRegressor(Ridge(), n_estimators=10, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(ridge, X, "b", grid_resolution=4, oob=True)
    assert res.method == "brute"
    _, _, pd_ = oob_by_definition([e.predict for e in ridge.estimators_], ridge.estimators_samples_, X, "b",
                                  res.grid_values[0])
    np.testing.assert_allclose(res.average[0], pd_, rtol=1e-12, atol=1e-12)


def test_a_pipeline_forest(data):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = data
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=20, max_depth=4, random_state=3))
    pipe.fit(X, y)
    res = pdpx.partial_dependence(pipe, X, "b", grid_resolution=4, oob=True)
    scaler, forest = pipe[0], pipe[-1]
    trees = [lambda A, t=t: t.predict(scaler.transform(pd.DataFrame(A, columns=X.columns))) for t in forest.estimators_]
    _, _, pd_ = oob_by_definition(trees, forest.estimators_samples_, X, "b", res.grid_values[0])
    np.testing.assert_allclose(res.average[0], pd_, rtol=1e-12, atol=1e-12)


def test_refusals(data):
    X, y = data
    m = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(pdpx.PdpxError, match="X has 150 rows, the model was trained on 200"):
        pdpx.partial_dependence(m, X.iloc[:150], "a", oob=True)
    for extra, name in (({"interval": "jackknife"}, "interval"), ({"by": "b"}, "by"), ({"ice_sample": 10},
                                                                                        "ice_sample")):
        with pytest.raises(pdpx.PdpxError, match=f"oob=True and {name}= cannot be combined"):
            pdpx.partial_dependence(m, X, "a", oob=True, **extra)
    boosted = GradientBoostingRegressor(n_estimators=3).fit(X, y)
    with pytest.raises(pdpx.PdpxError, match="oob=True: .*GradientBoostingRegressor has none"):
        pdpx.partial_dependence(boosted, X, "a", oob=True)
    with pytest.raises(pdpx.PdpxError, match="one feature set per call"):
        pdpx.partial_dependence_many(m, X, ["a"], oob=True)
    with pytest.raises(pdpx.PdpxError, match="pass one model"):
        pdpx.partial_dependence({"x": m, "y": m}, X, "a", oob=True)


def test_each_row_at_its_own_value_is_scikit_learns_oob_prediction(data):
    X, y = data
    m = RandomForestRegressor(n_estimators=40, max_depth=5, oob_score=True, random_state=4).fit(X, y)
    res = pdpx.partial_dependence(m, X, "a", custom_values={"a": X["a"].to_numpy()}, oob=True, kind="individual")
    own = np.diag(res.individual[0])  # row i's out-of-bag curve at its own value of a: its out-of-bag prediction
    np.testing.assert_allclose(own, m.oob_prediction_, rtol=1e-12, atol=1e-12)
