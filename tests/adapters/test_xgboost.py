"""XGBoost adapter: predict, tree extraction into the IR, exact and recursion.

Every semantic in docs/adapters.md (XGBoost) has a fidelity test that fails when it is handled
wrong: the IR's raw prediction is compared with XGBoost's margin on data built to
hit thresholds exactly and one float32 ulp either side, missing values, zeros and
unseen categories; `test_semantic_mutations_are_caught` shows the comparison
notices each semantic flipped. XGBoost predicts in float32, so agreement is to
float32 precision.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

xgb = pytest.importorskip("xgboost")

from treetools import (  # noqa: E402
    CATS,
    adversarial_rows,
    assert_exact_equals_brute,
    assert_library_not_imported,
    assert_recursion_is_friedman,
    booster_data,
    mixed_categories_frame,
)

import pdpx  # noqa: E402
from pdpx.adapters import ubjson  # noqa: E402
from pdpx.adapters import xgboost as xa  # noqa: E402
from pdpx.adapters import xgboost_trees as xt  # noqa: E402
from pdpx.core.errors import NotFittedError, PdpxError  # noqa: E402

N = 300
@pytest.fixture(scope="module")
def data():
    return booster_data(N, cat_weight=0.5, zero_weight=0.3)


def assert_margins_match(adapter, response, X, *, rtol=2e-6):
    """IR margins == XGBoost margins (float32 precision) and IR response == adapter.predict."""
    tm = adapter.tree_model(response)
    assert tm is not None, adapter.tree_model_unavailable(response)
    E = tm.encode(X)
    mine = tm.ensemble.predict_raw(E)
    ref = adapter.predict(X, "raw")
    scale = 1.0 + np.abs(ref).max()
    np.testing.assert_allclose(mine, ref, rtol=0, atol=rtol * scale * max(1, np.sqrt(tm.ensemble.n_trees)))
    np.testing.assert_allclose(tm.ensemble.predict(E), adapter.predict(X, response), rtol=1e-5, atol=1e-6)
    return tm


KW = dict(n_estimators=25, max_depth=3, enable_categorical=True, tree_method="hist", random_state=0)

# name -> (factory(data) -> model, response)
MODELS = {
    "reg-squarederror": (lambda d: xgb.XGBRegressor(**KW).fit(d["X"], d["f"]), "predict"),
    "reg-poisson": (lambda d: xgb.XGBRegressor(objective="count:poisson", **KW).fit(d["X"], d["pos"]), "predict"),
    "reg-gamma": (lambda d: xgb.XGBRegressor(objective="reg:gamma", **KW).fit(d["X"], d["pos"]), "predict"),
    "reg-logistic": (lambda d: xgb.XGBRegressor(objective="reg:logistic", **KW).fit(d["X"], d["bin"]), "predict"),
    "logitraw": (lambda d: xgb.XGBRegressor(objective="binary:logitraw", **KW).fit(d["X"], d["bin"]), "predict"),
    "clf-binary": (lambda d: xgb.XGBClassifier(**KW).fit(d["X"], d["bin"]), "predict_proba"),
    "clf-multi-softprob": (lambda d: xgb.XGBClassifier(**KW).fit(d["X"], d["multi"]), "predict_proba"),
    "clf-multi-softmax": (
        lambda d: xgb.XGBClassifier(objective="multi:softmax", **KW).fit(d["X"], d["multi"]), "predict_proba"),
    "rf-regressor": (lambda d: xgb.XGBRFRegressor(**{**KW, "n_estimators": 8}).fit(d["X"], d["f"]), "predict"),
    "rf-classifier": (lambda d: xgb.XGBRFClassifier(**{**KW, "n_estimators": 8}).fit(d["X"], d["bin"]), "predict_proba"),
    "rf-classifier-multi": (
        lambda d: xgb.XGBRFClassifier(**{**KW, "n_estimators": 6}).fit(d["X"], d["multi"]), "predict_proba"),
    "parallel-trees-multi": (
        lambda d: xgb.XGBClassifier(num_parallel_tree=3, **{**KW, "n_estimators": 6}).fit(d["X"], d["multi"]),
        "predict_proba"),
    "dart": (lambda d: xgb.XGBRegressor(booster="dart", rate_drop=0.4, **KW).fit(d["X"], d["f"]), "predict"),
    "multi-target": (
        lambda d: xgb.XGBRegressor(**KW).fit(d["X"], np.c_[d["f"], -d["f"] ** 2]), "predict"),
    "multi-target-vector-leaf": (
        lambda d: xgb.XGBRegressor(multi_strategy="multi_output_tree", **KW).fit(
            d["X"].drop(columns="c"), np.c_[d["f"], d["pos"]]),
        "predict"),
    # issue 49: objectives that recompute the leaves keep them in leaf_weights, not base_weights
    "vector-leaf-absoluteerror": (
        lambda d: xgb.XGBRegressor(multi_strategy="multi_output_tree", objective="reg:absoluteerror", **KW).fit(
            d["X"].drop(columns="c"), np.c_[d["f"], d["pos"]]),
        "predict"),
    "vector-leaf-quantiles": (
        lambda d: xgb.XGBRegressor(multi_strategy="multi_output_tree", objective="reg:quantileerror",
                                   quantile_alpha=np.array([0.2, 0.7]), **KW).fit(d["X"].drop(columns="c"), d["f"]),
        "predict"),
    "missing-zero": (lambda d: xgb.XGBRegressor(missing=0.0, **KW).fit(d["X"], d["f"]), "predict"),
    "booster-binary": (
        lambda d: xgb.train({"objective": "binary:logistic", "max_depth": 3},
                            xgb.DMatrix(d["X"], d["bin"], enable_categorical=True), 25), "predict_proba"),
    "booster-squarederror": (
        lambda d: xgb.train({"max_depth": 3}, xgb.DMatrix(d["X"], d["f"], enable_categorical=True), 25), "predict"),
}


@pytest.fixture(scope="module")
def models(data):
    return {name: factory(data) for name, (factory, _) in MODELS.items()}


@pytest.mark.parametrize("name", list(MODELS))
def test_ir_reproduces_xgboost(models, data, name):
    model = models[name]
    response = MODELS[name][1]
    ad = pdpx.core.plugins.adapt(model)
    assert isinstance(ad, xa.XGBoostAdapter)
    tm = ad.tree_model(response)
    assert tm is not None, ad.tree_model_unavailable(response)
    X = adversarial_rows(tm.ensemble, data["X"][ad.feature_names()], float32=True)
    assert_margins_match(ad, response, X)


def test_ir_conventions(models):
    ens = xa.XGBoostAdapter(models["clf-binary"]).tree_model("predict_proba").ensemble
    assert ens.comparison == "<" and ens.float32_input and not ens.categories_go_left
    assert ens.link == "binary_logistic" and ens.n_outputs == 2
    assert np.any(ens.cat_offset >= 0), "the model should split on the categorical column"
    assert ens.has_node_weights
    ens = xa.XGBoostAdapter(models["clf-multi-softprob"]).tree_model("predict_proba").ensemble
    assert ens.link == "softmax" and ens.n_margins == 3
    assert xa.XGBoostAdapter(models["clf-multi-softprob"]).tree_model("raw").ensemble.link == "identity"
    assert xa.XGBoostAdapter(models["reg-poisson"]).tree_model("predict").ensemble.link == "exp"
    assert xa.XGBoostAdapter(models["reg-logistic"]).tree_model("predict").ensemble.link == "logistic"


def test_multiclass_tree_layout(models):
    """Rounds hold num_parallel_tree x num_class trees; tree_info gives the class."""
    ens = xa.XGBoostAdapter(models["parallel-trees-multi"]).tree_model("raw").ensemble
    assert ens.n_trees == 6 * 3 * 3
    np.testing.assert_array_equal(ens.tree_group[:9], [0, 0, 0, 1, 1, 1, 2, 2, 2])
    ens = xa.XGBoostAdapter(models["clf-multi-softprob"]).tree_model("raw").ensemble
    np.testing.assert_array_equal(ens.tree_group[:6], [0, 1, 2, 0, 1, 2])


def test_dart_uses_tree_weights(models, data):
    ad = xa.XGBoostAdapter(models["dart"])
    ens = ad.tree_model("predict").ensemble
    assert not np.allclose(ens.tree_weight, 1.0), "rate_drop=0.4 should give weights != 1"
    # without the weights the IR would not reproduce XGBoost
    plain = dataclasses.replace(ens, tree_weight=np.ones(ens.n_trees), _effective_weight=None)
    E = ad.tree_model("predict").encode(data["X"])
    assert np.abs(plain.predict_raw(E) - ad.predict(data["X"], "raw")).max() > 1e-3


@pytest.mark.parametrize("mutation", ["comparison", "float32_input", "missing_left", "categories_go_left", "base_score"])
def test_semantic_mutations_are_caught(models, data, mutation):
    """Each semantic, handled wrong, breaks the fidelity check on adversarial data."""
    ad = xa.XGBoostAdapter(models["clf-binary"])
    tm = ad.tree_model("raw")
    ens = tm.ensemble
    change = {
        "comparison": dict(comparison="<="),
        "float32_input": dict(float32_input=False),
        "missing_left": dict(missing_left=~ens.missing_left),
        "categories_go_left": dict(categories_go_left=True),
        "base_score": dict(base_score=np.asarray(xt.parse_base_score("[0.5]"), dtype=float)),
    }[mutation]
    wrong = dataclasses.replace(ens, **change, _effective_weight=None)
    X = adversarial_rows(ens, data["X"], float32=True)
    E = tm.encode(X)
    ref = ad.predict(X, "raw")
    assert np.abs(ens.predict_raw(E) - ref).max() < 1e-5
    assert np.abs(wrong.predict_raw(E) - ref).max() > 1e-4


def test_base_score_forms():
    np.testing.assert_allclose(xt.parse_base_score("5E-1"), [0.5])
    np.testing.assert_allclose(xt.parse_base_score("[5E-1]"), [0.5])
    np.testing.assert_allclose(xt.parse_base_score("[1E-1,2E-1,-3E-1]"), [0.1, 0.2, -0.3], rtol=1e-7)
    # logistic: prediction-space base_score -> margin logit(p); poisson: log
    np.testing.assert_allclose(xt.base_margin("binary:logistic", np.float32([0.25]), 1), [np.log(1 / 3)], rtol=1e-6)
    np.testing.assert_allclose(xt.base_margin("count:poisson", np.float32([2.0]), 1), [np.log(2.0)], rtol=1e-6)
    np.testing.assert_allclose(xt.base_margin("reg:squarederror", np.float32([0.5]), 3), [0.5] * 3)


def test_scalar_base_score_model(data):
    """A model file with the pre-3.1 scalar base_score reads and predicts the same."""
    X = data["X"][["a", "b", "d"]]
    m = xgb.XGBClassifier(n_estimators=10, max_depth=3).fit(X, data["bin"])
    doc = json.loads(m.get_booster().save_raw("json"))
    doc["learner"]["learner_model_param"]["base_score"] = "3E-1"
    b = xgb.Booster(model_file=bytearray(json.dumps(doc).encode()))
    ad = xa.XGBoostAdapter(b)
    tm = assert_margins_match(ad, "predict_proba", X)
    np.testing.assert_allclose(tm.ensemble.base_score, [np.log(0.3 / 0.7)], rtol=1e-6)


def test_multiclass_vector_base_score(models):
    param = xt.read_booster(models["clf-multi-softprob"].get_booster())["learner_model_param"]
    base = xt.parse_base_score(param["base_score"])
    ens = xa.XGBoostAdapter(models["clf-multi-softprob"]).tree_model("raw").ensemble
    if base.size == 3:  # xgboost >= 3.1: one intercept per class
        np.testing.assert_allclose(ens.base_score, base)


def test_unseen_and_unused_categories(models, data):
    ad = xa.XGBoostAdapter(models["clf-binary"])
    tm = ad.tree_model("raw")
    # categories in the training dtype but never in training rows: known to XGBoost, in no split set
    X = data["X"].copy()
    X["c"] = pd.Categorical(np.where(np.arange(N) % 2 == 0, "unused1", "unused2"), categories=CATS)
    assert_margins_match(ad, "predict_proba", X)
    # categories in another order: XGBoost re-codes by value
    X2 = data["X"].copy()
    X2["c"] = X2["c"].cat.reorder_categories(sorted(CATS))
    np.testing.assert_allclose(tm.encode(X2), tm.encode(data["X"]))
    assert_margins_match(ad, "predict_proba", X2)
    # a category the model has never seen: XGBoost refuses it, so does pdpx
    X3 = data["X"].copy()
    X3["c"] = X3["c"].cat.add_categories(["never"])
    X3.loc[0, "c"] = "never"
    with pytest.raises(PdpxError, match="not trained on"):
        tm.encode(X3)
    # xgboost 3.2 raises for some unseen labels and silently re-codes others to a
    # neighbouring category (seen with xgboost 3.2.0): pdpx refuses them in predict too
    with pytest.raises(PdpxError, match="not trained on"):
        ad.predict(X3, "raw")
    for method in ("brute", "exact"):
        with pytest.raises(PdpxError, match="not trained on"):
            pdpx.partial_dependence(models["clf-binary"], X3, "a", method=method, grid_resolution=4)


def test_numpy_categorical_codes_out_of_range():
    """A Booster trained on codes: unseen, negative and fractional codes go left like XGBoost."""
    rng = np.random.default_rng(3)
    X = np.c_[rng.normal(size=400), rng.integers(0, 6, 400)]
    y = X[:, 0] + (X[:, 1] % 3)
    dm = xgb.DMatrix(X, y, feature_types=["q", "c"], enable_categorical=True)
    b = xgb.train({"max_depth": 3, "max_cat_to_onehot": 1}, dm, 20)
    ad = xa.XGBoostAdapter(b)
    tm = ad.tree_model("predict")
    assert np.any(tm.ensemble.cat_offset >= 0)
    codes = np.array([0, 1, 2, 3, 4, 5, 6, 40, 1000, -1, -0.5, 2.5, np.nan])
    Xt = pd.DataFrame({"f0": np.resize(rng.normal(size=13), 26), "f1": np.resize(codes, 26)})
    mine = tm.ensemble.predict_raw(tm.encode(Xt))
    ref = b.predict(xgb.DMatrix(Xt.to_numpy(), feature_types=["q", "c"], enable_categorical=True), output_margin=True)
    np.testing.assert_allclose(mine[:, 0], ref, atol=1e-5)


def test_deleted_nodes_are_dropped(data):
    X = data["X"][["a", "b", "z", "d"]]
    m = xgb.XGBRegressor(n_estimators=15, max_depth=4, tree_method="exact", gamma=5.0).fit(X, data["f"])
    learner = xt.read_booster(m.get_booster())
    deleted = [int(t["tree_param"]["num_deleted"]) for t in learner["gradient_booster"]["model"]["trees"]]
    assert sum(deleted) > 0, "gamma pruning should leave deleted nodes in the model"
    ad = xa.XGBoostAdapter(m)
    tm = assert_margins_match(ad, "predict", adversarial_rows(ad.tree_model("predict").ensemble, X, float32=True))
    sizes = np.diff(tm.ensemble.tree_start)
    assert sizes.sum() < sum(int(t["tree_param"]["num_nodes"]) for t in learner["gradient_booster"]["model"]["trees"])


def test_best_iteration_wrapper_vs_booster(data):
    X, y = data["X"], data["f"]
    m = xgb.XGBRegressor(n_estimators=300, learning_rate=0.5, max_depth=4, enable_categorical=True,
                         early_stopping_rounds=3)
    m.fit(X.iloc[:200], y[:200], eval_set=[(X.iloc[200:], y[200:])], verbose=False)
    total = m.get_booster().num_boosted_rounds()
    assert m.best_iteration + 1 < total
    ad = xa.XGBoostAdapter(m)
    assert ad.tree_model("predict").ensemble.n_trees == m.best_iteration + 1
    assert_margins_match(ad, "predict", X)
    # the raw Booster predicts with every round
    b = m.get_booster()
    adb = xa.XGBoostAdapter(b)
    assert adb.tree_model("predict").ensemble.n_trees == total
    assert_margins_match(adb, "predict", X)
    assert np.abs(ad.predict(X, "predict") - adb.predict(X, "predict")).max() > 1e-6


def test_gblinear_has_no_trees(data):
    X = data["X"][["a", "b", "z", "d"]].fillna(0)
    m = xgb.XGBRegressor(booster="gblinear", n_estimators=5).fit(X, data["f"])
    ad = pdpx.core.plugins.adapt(m)
    assert ad.tree_model("predict") is None
    assert "gblinear" in ad.tree_model_unavailable("predict")
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=5)
    assert res.method == "brute"
    with pytest.raises(PdpxError, match="gblinear"):
        pdpx.partial_dependence(m, X, "a", method="exact", grid_resolution=5)


def test_booster_feature_names(models, data):
    b = models["booster-squarederror"]
    ad = pdpx.core.plugins.adapt(b)
    assert ad.feature_names() == list(data["X"].columns)
    shuffled = data["X"][["c", "d", "a", "b", "z"]]
    a = pdpx.partial_dependence(b, shuffled, "b", grid_resolution=7, method="brute")
    e = pdpx.partial_dependence(b, data["X"], "b", grid_resolution=7, method="brute")
    np.testing.assert_allclose(a.average, e.average)
    with pytest.raises(PdpxError, match="missing"):
        pdpx.partial_dependence(b, data["X"].drop(columns="d"), "b")


def test_model_without_feature_names_takes_arrays(data):
    X = data["X"][["a", "b", "z", "d"]].to_numpy()
    m = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(X, data["f"])
    e = pdpx.partial_dependence(m, X, 1, method="exact", kind="both", grid_resolution=9)
    b = pdpx.partial_dependence(m, X, 1, method="brute", kind="both", grid_resolution=9)
    np.testing.assert_allclose(e.individual, b.individual, rtol=1e-5, atol=1e-6)


def test_responses_and_outputs(models):
    clf = xa.XGBoostAdapter(models["clf-binary"])
    assert clf.responses() == ["predict_proba", "raw"] and clf.is_classifier()
    assert clf.output_names("predict_proba") == ["0", "1"]
    assert clf.output_names("raw") == ["1"]
    reg = xa.XGBoostAdapter(models["reg-squarederror"])
    assert reg.responses() == ["predict", "raw"] and not reg.is_classifier()
    booster = xa.XGBoostAdapter(models["booster-binary"])
    assert booster.is_classifier() and booster.responses()[0] == "predict_proba"
    assert xa.XGBoostAdapter(models["clf-multi-softprob"]).output_names("raw") == ["0", "1", "2"]


def test_not_fitted():
    with pytest.raises(NotFittedError):
        pdpx.partial_dependence(xgb.XGBRegressor(), pd.DataFrame({"a": [1.0, 2.0]}), "a")


def test_extraction_cached_and_refit(data):
    X = data["X"][["a", "b"]]
    m = xgb.XGBRegressor(n_estimators=5, max_depth=2).fit(X, data["f"])
    t1 = xa.XGBoostAdapter(m).tree_model("predict")
    t2 = xa.XGBoostAdapter(m).tree_model("predict")
    assert t1.ensemble is t2.ensemble
    m.set_params(n_estimators=7).fit(X, data["f"])
    t3 = xa.XGBoostAdapter(m).tree_model("predict")
    assert t3.ensemble is not t1.ensemble and t3.ensemble.n_trees == 7


def test_ubjson_reader_matches_json(models):
    b = models["clf-binary"].get_booster()
    u = ubjson.ubj_loads(b.save_raw("ubj"))["learner"]
    j = json.loads(b.save_raw("json"))["learner"]
    assert u["learner_model_param"] == j["learner_model_param"]
    tu, tj = u["gradient_booster"]["model"]["trees"], j["gradient_booster"]["model"]["trees"]
    assert len(tu) == len(tj)
    for key in ("left_children", "split_indices", "split_conditions", "default_left", "sum_hessian", "categories"):
        np.testing.assert_array_equal(np.asarray(tu[3][key]), np.asarray(tj[3][key], dtype=np.asarray(tu[3][key]).dtype))
    pu = xt.extract_trees(u, 25)
    pj = xt.extract_trees(j, 25)
    for key in pu:
        np.testing.assert_array_equal(pu[key], pj[key])


def test_self_check_refuses_a_wrong_reading(models, monkeypatch):
    """If pdpx misreads a model (here: base_score), it falls back to brute with a reason."""
    from pdpx.core.ir import model_cache

    model_cache.clear()
    monkeypatch.setattr(xt, "base_margin", lambda obj, base, k: np.full(k, 0.123))
    ad = xa.XGBoostAdapter(models["reg-squarederror"])
    assert ad.tree_model("predict") is None
    assert "does not reproduce" in ad.tree_model_unavailable("predict")
    model_cache.clear()


def test_module_does_not_import_xgboost():
    assert_library_not_imported("pdpx.adapters.xgboost", "is_xgboost_model", "xgboost")


# ------------------------------------------------------------- exact == brute
EXACT_CASES = [
    ("clf-binary", ["a"]), ("clf-binary", ["a", "c"]), ("clf-binary", ["c"]), ("clf-binary", ["z", "b"]),
    ("clf-multi-softprob", ["b"]), ("clf-multi-softprob", ["c", "a"]),
    ("reg-poisson", ["a", "b"]), ("dart", ["c"]), ("rf-classifier", ["b", "c"]),
    ("parallel-trees-multi", ["a"]), ("booster-binary", ["c", "b"]), ("missing-zero", ["z"]),
    ("multi-target-vector-leaf", ["a"]),
]


@pytest.mark.parametrize("kernel", ["auto", "partition"])
@pytest.mark.parametrize("name,features", EXACT_CASES)
def test_exact_equals_brute(models, data, name, features, kernel):
    model = models[name]
    # XGBoost predicts in float32: agreement to float32 precision
    assert_exact_equals_brute(model, data["X"].iloc[:120][pdpx.core.plugins.adapt(model).feature_names()], features, kernel=kernel, rtol=1e-5, atol=1e-6)


def test_auto_picks_exact(models, data):
    res = pdpx.partial_dependence(models["clf-binary"], data["X"], "a", grid_resolution=5)
    assert res.method == "exact"


# ------------------------------------------------------------------ recursion
@pytest.mark.parametrize("name,response,features", [
    ("reg-squarederror", "predict", ["a"]),
    ("clf-binary", "raw", ["b", "c"]),
    ("clf-multi-softprob", "raw", ["a"]),
    ("rf-regressor", "predict", ["z"]),
    ("dart", "raw", ["c"]),
])
def test_recursion_matches_weighted_traversal(models, data, name, response, features):
    res = assert_recursion_is_friedman(models[name], data["X"], features, response=response)
    assert any("hessian" in n for n in res.notes)


def test_recursion_refuses_boosted_probabilities(models, data):
    with pytest.raises(PdpxError, match="exact"):
        pdpx.partial_dependence(models["clf-binary"], data["X"], "a", method="recursion")


def test_one_hot_and_integer_categories():
    """Few categories (one-hot splits) and integer category labels: grid labels map to codes."""
    X, y = mixed_categories_frame()
    m = xgb.XGBRegressor(n_estimators=20, max_depth=3, enable_categorical=True).fit(X, y)
    ad = xa.XGBoostAdapter(m)
    assert_margins_match(ad, "predict", adversarial_rows(ad.tree_model("predict").ensemble, X, float32=True))
    for feats in (["k"], ["m"], ["m", "a"]):
        assert_exact_equals_brute(m, X, feats, grid_resolution=8, rtol=1e-5, atol=1e-6)


def test_unseen_category_errors_name_the_column():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "city": pd.Categorical(rng.choice(["x", "y", "z"], 200))})
    m = xgb.XGBRegressor(n_estimators=5, enable_categorical=True, tree_method="hist").fit(X, X.a + (X.city == "x"))
    X2 = X.copy()
    X2["city"] = X2.city.cat.add_categories(["w"])
    X2.loc[:5, "city"] = "w"
    for method in ("exact", "brute", "auto"):
        with pytest.raises(PdpxError, match=r"column 'city' has categories the XGBoost model was not trained on: \['w'\]"):
            pdpx.partial_dependence(m, X2, "city", method=method)


@pytest.mark.parametrize("name", ["vector-leaf-absoluteerror", "vector-leaf-quantiles"])
def test_vector_leaves_recomputed_by_the_objective_are_exact(models, data, name):
    """Issue 49: their leaves are read from leaf_weights, so exact answers (it used to fall to brute)."""
    X = data["X"].drop(columns="c")
    assert_exact_equals_brute(models[name], X, ["b"], rtol=1e-5, atol=1e-5, grid_resolution=6)
