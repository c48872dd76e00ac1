"""Tree engine on scikit-learn models: IR fidelity, exact == brute, recursion."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.inspection import partial_dependence as sk_pd
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreeClassifier, ExtraTreeRegressor
from treetools import assert_exact_equals_brute, friedman_reference

import pdpx
from pdpx.core.ir import model_cache
from pdpx.core.plugins import adapt

N = 300
rng = np.random.default_rng(42)
XNUM = pd.DataFrame(rng.normal(size=(N, 4)), columns=["a", "b", "c", "d"])
XNUM["d"] = rng.integers(0, 5, N).astype(float)  # ties
Y = XNUM.a * 2 + XNUM.b**2 + XNUM.d + rng.normal(scale=0.1, size=N)
YBIN = (Y > Y.median()).astype(int)
YMULTI = np.digitize(Y, np.quantile(Y, [0.33, 0.66]))
YMO = np.c_[Y, XNUM.c - XNUM.a]

XNAN = XNUM.copy()
XNAN.loc[rng.random(N) < 0.15, "a"] = np.nan
XNAN.loc[rng.random(N) < 0.1, "c"] = np.nan

XCAT = XNAN.copy()
XCAT["g"] = pd.Categorical(rng.choice(["p", "q", "r", "s"], N))
YCAT = Y + (XCAT.g == "q") * 3 - (XCAT.g == "s") * 2

small = dict(random_state=0)
MODELS = {
    "DecisionTreeRegressor": (lambda: DecisionTreeRegressor(max_depth=6, **small), XNAN, Y),
    "DecisionTreeClassifier-binary": (lambda: DecisionTreeClassifier(max_depth=5, **small), XNAN, YBIN),
    "DecisionTreeClassifier-multi": (lambda: DecisionTreeClassifier(max_depth=5, **small), XNAN, YMULTI),
    "DecisionTreeRegressor-multioutput": (lambda: DecisionTreeRegressor(max_depth=5, **small), XNUM, YMO),
    "ExtraTreeRegressor": (lambda: ExtraTreeRegressor(max_depth=6, **small), XNUM, Y),
    "ExtraTreeClassifier": (lambda: ExtraTreeClassifier(max_depth=6, **small), XNUM, YMULTI),
    "RandomForestRegressor": (lambda: RandomForestRegressor(12, max_depth=6, **small), XNAN, Y),
    "RandomForestRegressor-multioutput": (lambda: RandomForestRegressor(8, max_depth=5, **small), XNUM, YMO),
    "RandomForestClassifier-binary": (lambda: RandomForestClassifier(12, max_depth=6, **small), XNAN, YBIN),
    "RandomForestClassifier-multi": (lambda: RandomForestClassifier(12, max_depth=6, **small), XNUM, YMULTI),
    "ExtraTreesRegressor": (lambda: ExtraTreesRegressor(12, max_depth=6, **small), XNUM, Y),
    "ExtraTreesClassifier": (lambda: ExtraTreesClassifier(12, max_depth=6, **small), XNUM, YBIN),
    "GradientBoostingRegressor": (lambda: GradientBoostingRegressor(n_estimators=25, max_depth=3, **small), XNUM, Y),
    "GradientBoostingRegressor-huber": (lambda: GradientBoostingRegressor(loss="huber", n_estimators=20, **small), XNUM, Y),
    "GradientBoostingClassifier-binary": (lambda: GradientBoostingClassifier(n_estimators=25, **small), XNUM, YBIN),
    "GradientBoostingClassifier-exponential": (
        lambda: GradientBoostingClassifier(loss="exponential", n_estimators=20, **small), XNUM, YBIN),
    "GradientBoostingClassifier-multi": (lambda: GradientBoostingClassifier(n_estimators=15, **small), XNUM, YMULTI),
    "HistGradientBoostingRegressor": (lambda: HistGradientBoostingRegressor(max_iter=30, **small), XNAN, Y),
    "HistGradientBoostingRegressor-poisson": (
        lambda: HistGradientBoostingRegressor(loss="poisson", max_iter=30, **small), XNAN, np.exp(Y / 4)),
    "HistGradientBoostingRegressor-categorical": (lambda: HistGradientBoostingRegressor(max_iter=30, **small), XCAT, YCAT),
    "HistGradientBoostingClassifier-binary": (lambda: HistGradientBoostingClassifier(max_iter=30, **small), XCAT, YBIN),
    "HistGradientBoostingClassifier-multi": (lambda: HistGradientBoostingClassifier(max_iter=20, **small), XNAN, YMULTI),
}


@pytest.fixture(scope="module")
def fitted():
    out = {}
    for name, (make, X, y) in MODELS.items():
        out[name] = (make().fit(X, y), X)
    return out


def responses_of(model):
    a = adapt(model)
    return [r for r in a.responses() if a.tree_model(r) is not None]


def probe_data(model, X, tm):
    """Random rows plus values exactly at thresholds and one float32 ulp either side."""
    ens = tm.ensemble
    Z = X.sample(200, replace=True, random_state=1).reset_index(drop=True)
    r = np.random.default_rng(3)
    for j, col in enumerate(X.columns):
        if isinstance(X[col].dtype, pd.CategoricalDtype):
            continue
        thr = ens.threshold[(ens.feature == j) & (ens.left >= 0) & np.isfinite(ens.threshold) & (ens.cat_offset < 0)]
        if thr.size == 0:
            continue
        t = r.choice(thr, size=60)
        t32 = t.astype(np.float32)
        vals = np.concatenate([t, np.nextafter(t32, np.float32(np.inf)), np.nextafter(t32, np.float32(-np.inf)),
                               t + 1e-12, t - 1e-12]).astype(np.float64)
        rows = r.integers(0, len(Z), size=vals.size)
        Z.loc[rows, col] = vals
    if X.isna().any().any():
        for col in X.columns[:2]:
            Z.loc[r.random(len(Z)) < 0.1, col] = np.nan
    return Z


@pytest.mark.parametrize("name", list(MODELS))
def test_ir_reproduces_the_models_own_prediction(fitted, name):
    model, X = fitted[name]
    a = adapt(model)
    resps = responses_of(model)
    assert resps, f"{name}: no response could be read from the trees"
    for resp in resps:
        tm = a.tree_model(resp)
        Z = probe_data(model, X, tm)
        ours = tm.ensemble.predict(tm.encode(Z))
        theirs = a.predict(Z, resp)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=f"{name} {resp}")


def test_unseen_categories_follow_the_model(fitted):
    model, X = fitted["HistGradientBoostingRegressor-categorical"]
    a = adapt(model)
    tm = a.tree_model("predict")
    Z = X.head(40).copy()
    Z["g"] = pd.Categorical(["p", "zz", "q", "new"] * 10, categories=["p", "q", "r", "s", "zz", "new"])
    np.testing.assert_allclose(tm.ensemble.predict(tm.encode(Z)), a.predict(Z, "predict"), atol=1e-12)


@pytest.mark.parametrize("kernel", ["auto", "partition"])
@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("features", [["a"], ["c", "d"]], ids=["1way", "2way"])
def test_exact_equals_brute(fitted, name, features, kernel):
    model, X = fitted[name]
    w = np.random.default_rng(0).uniform(0, 2, len(X))
    for resp in responses_of(model):
        assert_exact_equals_brute(model, X, features, kernel=kernel, rtol=0, atol=1e-9, grid_resolution=9,
                                  response=resp, sample_weight=w)


@pytest.mark.parametrize("name", ["HistGradientBoostingRegressor-categorical", "HistGradientBoostingClassifier-binary"])
def test_exact_equals_brute_on_categorical_targets(fitted, name):
    model, X = fitted[name]
    for feats in (["g"], ["g", "a"], ["b", "g"]):
        assert_exact_equals_brute(model, X, feats, rtol=0, atol=1e-9, grid_resolution=6, centered=True)


def test_exact_three_way_and_custom_unsorted_grid(fitted):
    model, X = fitted["GradientBoostingClassifier-multi"]
    kw = dict(kind="both", custom_values={"a": [1.0, -1.0, 0.3, 0.0], "b": [0.5, -0.5]}, grid_resolution=6)
    e = pdpx.partial_dependence(model, X, ["a", "b", "d"], method="exact", **kw)
    b = pdpx.partial_dependence(model, X, ["a", "b", "d"], method="brute", **kw)
    assert e.average.shape == (3, 4, 2, 5)
    np.testing.assert_allclose(e.average, b.average, atol=1e-9)
    np.testing.assert_allclose(e.individual, b.individual, atol=1e-9)


def test_exact_respects_a_small_memory_budget(fitted):
    model, X = fitted["HistGradientBoostingClassifier-multi"]
    kw = dict(kind="average", grid_resolution=40)
    e = pdpx.partial_dependence(model, X, ["a", "b"], method="exact", memory_budget="1MB", **kw)
    b = pdpx.partial_dependence(model, X, ["a", "b"], method="brute", **kw)
    np.testing.assert_allclose(e.average, b.average, atol=1e-9)


def test_auto_picks_exact_for_trees_and_brute_otherwise(fitted):
    model, X = fitted["RandomForestRegressor"]
    assert pdpx.partial_dependence(model, X, ["a"]).method == "exact"
    lin = LinearRegression().fit(XNUM, Y)
    assert pdpx.partial_dependence(lin, XNUM, ["a"]).method == "brute"
    gb = GradientBoostingRegressor(n_estimators=5, init=LinearRegression()).fit(XNUM, Y)
    assert pdpx.partial_dependence(gb, XNUM, ["a"]).method == "brute"
    with pytest.raises(pdpx.PdpxError, match="non-constant init estimator"):
        pdpx.partial_dependence(gb, XNUM, ["a"], method="exact")


def test_extraction_is_cached_per_fitted_model(fitted):
    model, X = fitted["RandomForestRegressor"]
    model_cache.clear()
    a = adapt(model)
    first = a.tree_model("predict")
    assert adapt(model).tree_model("predict") is first
    coll = pdpx.partial_dependence_many(model, X, grid_resolution=5)
    assert adapt(model).tree_model("predict") is first and len(coll) == 4
    refit = RandomForestRegressor(3, max_depth=2, random_state=0)
    refit.fit(X.fillna(0), Y)
    before = adapt(refit).tree_model("predict")
    refit.fit(X.fillna(0), Y * 2)
    after = adapt(refit).tree_model("predict")
    assert after is not before, "a refitted model must not reuse the old trees"


# ---------------------------------------------------------------- recursion
SK_RECURSION = ["DecisionTreeRegressor", "RandomForestRegressor", "GradientBoostingRegressor",
                "HistGradientBoostingRegressor", "GradientBoostingClassifier-binary",
                "GradientBoostingClassifier-multi", "HistGradientBoostingClassifier-multi"]


@pytest.mark.parametrize("name", SK_RECURSION)
def test_recursion_equals_sklearn_up_to_the_init_constant(fitted, name):
    model, X = fitted[name]
    X = X.fillna(X.mean())
    resp = "decision_function" if adapt(model).is_classifier() else "predict"
    for feats in (["a"], ["a", "d"]):
        ours = pdpx.partial_dependence(model, X, feats, method="recursion", response=resp, grid_resolution=8)
        sk_resp = "auto" if resp == "predict" else resp
        theirs = sk_pd(model, X, feats, method="recursion", response_method=sk_resp, grid_resolution=8)["average"]
        tm = adapt(model).tree_model(resp)
        offset = 0.0
        if "GradientBoosting" in name:  # scikit-learn leaves out the init prediction / baseline
            offset = tm.ensemble.base_score.reshape((-1,) + (1,) * len(feats))
            if ours.average.shape[0] != theirs.shape[0]:  # binary: sklearn reports the one margin
                offset = offset[:1]
        np.testing.assert_allclose(ours.average - offset, theirs, atol=1e-9, err_msg=name)
        assert any("recursion weights" in note for note in ours.notes)


@pytest.mark.parametrize("name", ["DecisionTreeClassifier-multi", "RandomForestClassifier-binary",
                                  "ExtraTreesClassifier", "ExtraTreesRegressor"])
def test_recursion_where_sklearn_refuses(fitted, name):
    model, X = fitted[name]
    X = X.fillna(X.mean())
    with pytest.raises(ValueError):
        sk_pd(model, X, ["a"], method="recursion")
    res = pdpx.partial_dependence(model, X, ["a"], method="recursion", grid_resolution=8)
    # reference: Friedman's traversal by hand on each tree
    tm = adapt(model).tree_model(res.response)
    ens = tm.ensemble
    ref = np.array([friedman_reference(ens, np.asarray(res.grid_values[0])[:, None], [0], margin=k)
                    for k in range(ens.n_margins)])
    np.testing.assert_allclose(res.average, ref[adapt(model).default_outputs(res.response)], atol=1e-12)
    if "Classifier" in name:
        assert res.response == "predict_proba"
        assert res.average.min() >= -1e-12 and res.average.max() <= 1 + 1e-12


def test_recursion_on_hgb_fitted_with_sample_weight_says_which_weights(fitted):
    w = np.random.default_rng(0).uniform(0.1, 3, N)
    model = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(XNUM, Y, sample_weight=w)
    with pytest.raises(NotImplementedError):
        sk_pd(model, XNUM, ["a"], method="recursion")
    res = pdpx.partial_dependence(model, XNUM, ["a"], method="recursion", grid_resolution=5)
    assert any("unweighted training row counts" in n for n in res.notes)
    tm = adapt(model).tree_model("predict")
    np.testing.assert_allclose(res.average, friedman_reference(tm.ensemble, np.asarray(res.grid_values[0])[:, None], [0])[None], atol=1e-12)


def test_recursion_refuses_probabilities_of_boosted_classifiers(fitted):
    model, X = fitted["HistGradientBoostingClassifier-binary"]
    with pytest.raises(pdpx.PdpxError, match="method='exact'"):
        pdpx.partial_dependence(model, X, ["a"], method="recursion")
    with pytest.raises(pdpx.PdpxError, match="no ICE"):
        pdpx.partial_dependence(model, X, ["a"], method="recursion", kind="both", response="decision_function")
