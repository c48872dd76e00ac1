"""LightGBM adapter: predict, tree extraction into the IR, exact and recursion.

The IR's raw prediction is compared with LightGBM's ``raw_score`` on data built to
hit thresholds exactly and one ulp either side, NaN, zeros (and |x| <= 1e-35),
and unseen categories; LightGBM predicts in float64, so they agree to ~1e-12.
`test_semantic_mutations_are_caught` shows the comparison notices each semantic
handled wrong.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

lgb = pytest.importorskip("lightgbm")

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
from pdpx.adapters import lightgbm as la  # noqa: E402
from pdpx.adapters import lightgbm_trees as lt  # noqa: E402
from pdpx.core.errors import NotFittedError, PdpxError  # noqa: E402
from pdpx.core.ir import NAN_AS_ZERO, NAN_MISSING, ZERO_OR_NAN_MISSING  # noqa: E402

N = 400
@pytest.fixture(scope="module")
def data():
    return booster_data(N, cat_weight=0.6, zero_weight=0.5)


def assert_margins_match(adapter, response, X):
    tm = adapter.tree_model(response)
    assert tm is not None, adapter.tree_model_unavailable(response)
    E = tm.encode(X)
    ens = tm.ensemble
    ref = adapter.predict(X, "raw")
    mine = ens.predict_raw(E)
    if ens.aggregation == "mean":  # rf mode: raw_score is the sum of the trees
        mine = mine * (ens.n_trees // ens.n_margins)
    np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ens.predict(E), adapter.predict(X, response), rtol=1e-12, atol=1e-12)
    return tm


KW = dict(n_estimators=25, num_leaves=8, min_child_samples=5, min_data_per_group=5, cat_smooth=1.0,
          verbose=-1, random_state=0)
RF = dict(boosting_type="rf", bagging_freq=1, bagging_fraction=0.7, feature_fraction=0.8)

MODELS = {
    "regression": (lambda d: lgb.LGBMRegressor(**KW).fit(d["X"], d["f"]), "predict"),
    "zero-as-missing": (lambda d: lgb.LGBMRegressor(zero_as_missing=True, **KW).fit(d["X"], d["f"]), "predict"),
    "no-missing": (lambda d: lgb.LGBMRegressor(use_missing=False, **KW).fit(d["X"], d["f"]), "predict"),
    "poisson": (lambda d: lgb.LGBMRegressor(objective="poisson", **KW).fit(d["X"], d["pos"]), "predict"),
    "binary": (lambda d: lgb.LGBMClassifier(**KW).fit(d["X"], d["bin"]), "predict_proba"),
    "binary-sigmoid": (lambda d: lgb.LGBMClassifier(sigmoid=0.6, **KW).fit(d["X"], d["bin"]), "predict_proba"),
    "multiclass": (lambda d: lgb.LGBMClassifier(**KW).fit(d["X"], d["multi"]), "predict_proba"),
    "multiclassova": (
        lambda d: lgb.LGBMClassifier(objective="multiclassova", **KW).fit(d["X"], d["multi"]), "predict_proba"),
    "no-boost-from-average": (
        lambda d: lgb.LGBMRegressor(boost_from_average=False, **KW).fit(d["X"], d["f"]), "predict"),
    "rf-regressor": (lambda d: lgb.LGBMRegressor(**RF, **KW).fit(d["X"], d["f"]), "predict"),
    "rf-multiclass": (lambda d: lgb.LGBMClassifier(**RF, **KW).fit(d["X"], d["multi"]), "predict_proba"),
    "booster-binary": (
        lambda d: lgb.train({"objective": "binary", "num_leaves": 8, "min_data_in_leaf": 5, "verbose": -1},
                            lgb.Dataset(d["X"], d["bin"]), 25), "predict_proba"),
    "booster-regression": (
        lambda d: lgb.train({"num_leaves": 8, "min_data_in_leaf": 5, "verbose": -1},
                            lgb.Dataset(d["X"], d["f"]), 25), "predict"),
}


@pytest.fixture(scope="module")
def models(data):
    return {name: factory(data) for name, (factory, _) in MODELS.items()}


@pytest.mark.parametrize("name", list(MODELS))
def test_ir_reproduces_lightgbm(models, data, name):
    model = models[name]
    response = MODELS[name][1]
    ad = pdpx.core.plugins.adapt(model)
    assert isinstance(ad, la.LightGBMAdapter)
    tm = ad.tree_model(response)
    assert tm is not None, ad.tree_model_unavailable(response)
    assert_margins_match(ad, response, adversarial_rows(tm.ensemble, data["X"]))


def test_ir_conventions(models):
    ens = la.LightGBMAdapter(models["binary"]).tree_model("predict_proba").ensemble
    assert ens.comparison == "<=" and not ens.float32_input and ens.categories_go_left
    assert ens.link == "binary_logistic" and ens.link_scale == 1.0
    assert np.any(ens.cat_offset >= 0), "the model should split on the categorical column"
    assert ens.has_node_weights
    assert la.LightGBMAdapter(models["binary-sigmoid"]).tree_model("predict_proba").ensemble.link_scale == 0.6
    ens = la.LightGBMAdapter(models["multiclass"]).tree_model("predict_proba").ensemble
    assert ens.link == "softmax" and ens.n_margins == 3
    np.testing.assert_array_equal(ens.tree_group[:6], [0, 1, 2, 0, 1, 2])
    ens = la.LightGBMAdapter(models["multiclassova"]).tree_model("predict_proba").ensemble
    assert ens.link == "logistic" and ens.n_margins == 3
    assert la.LightGBMAdapter(models["poisson"]).tree_model("predict").ensemble.link == "exp"
    assert la.LightGBMAdapter(models["binary"]).tree_model("raw").ensemble.link == "identity"


@pytest.mark.parametrize("name,modes", [
    ("regression", {NAN_MISSING, NAN_AS_ZERO}),      # 'a' has NaN (NaN type), others None
    ("zero-as-missing", {ZERO_OR_NAN_MISSING}),
    ("no-missing", {NAN_AS_ZERO}),
])
def test_missing_types(models, name, modes):
    ens = la.LightGBMAdapter(models[name]).tree_model("predict").ensemble
    numeric = (ens.left >= 0) & (ens.cat_offset < 0)
    assert modes <= set(np.unique(ens.nan_mode[numeric]).tolist())


@pytest.mark.parametrize("mutation", ["comparison", "nan_mode", "missing_left", "categories_go_left"])
def test_semantic_mutations_are_caught(models, data, mutation):
    name = "zero-as-missing" if mutation == "nan_mode" else "regression"
    ad = la.LightGBMAdapter(models[name])
    tm = ad.tree_model("raw")
    ens = tm.ensemble
    change = {
        "comparison": dict(comparison="<"),
        "nan_mode": dict(nan_mode=np.zeros_like(ens.nan_mode)),  # every node: NaN-only missing
        "missing_left": dict(missing_left=~ens.missing_left),
        "categories_go_left": dict(categories_go_left=False),
    }[mutation]
    wrong = dataclasses.replace(ens, **change, _effective_weight=None)
    X = adversarial_rows(ens, data["X"])
    E = tm.encode(X)
    ref = ad.predict(X, "raw")
    assert np.abs(ens.predict_raw(E) - ref).max() < 1e-12
    assert np.abs(wrong.predict_raw(E) - ref).max() > 1e-4


def test_boost_from_average_is_in_the_first_tree(models, data):
    ens = la.LightGBMAdapter(models["regression"]).tree_model("predict").ensemble
    assert np.all(ens.base_score == 0)
    leaves0 = slice(ens.tree_start[0], ens.tree_start[1])
    is_leaf = ens.left[leaves0] < 0
    w = ens.node_weight[leaves0][is_leaf]
    first_tree_mean = np.sum(w * ens.value[leaves0, 0][is_leaf]) / w.sum()
    assert abs(first_tree_mean - np.mean(data["f"])) < 0.1 * np.std(data["f"])
    off = la.LightGBMAdapter(models["no-boost-from-average"]).tree_model("predict").ensemble
    leaves0 = slice(off.tree_start[0], off.tree_start[1])
    is_leaf = off.left[leaves0] < 0
    assert abs(np.mean(off.value[leaves0, 0][is_leaf])) < abs(first_tree_mean)


def test_rf_mode_averages_trees(models, data):
    ad = la.LightGBMAdapter(models["rf-regressor"])
    ens = ad.tree_model("predict").ensemble
    assert ens.aggregation == "mean"
    assert ad.tree_model("raw").ensemble.aggregation == "sum"  # raw_score sums the trees
    assert_margins_match(ad, "raw", data["X"])
    X = data["X"]
    np.testing.assert_allclose(ad.predict(X, "raw") / 25, ad.predict(X, "predict"), rtol=1e-12)


def test_categories(models, data):
    ad = la.LightGBMAdapter(models["binary"])
    tm = ad.tree_model("raw")
    # categories in the dtype but never in training rows, and categories LightGBM does not know (-> NaN)
    X = data["X"].copy()
    X["c"] = pd.Categorical(np.array(["unused1", "unused2", "tau", "never"])[np.arange(N) % 4],
                            categories=CATS + ["never"])
    enc = tm.encode(X)
    assert np.isnan(enc[3::4, 4]).all() and (enc[0::4, 4] == CATS.index("unused1")).all()
    assert_margins_match(ad, "predict_proba", X)
    # another category order: LightGBM re-codes to the stored order
    X2 = data["X"].copy()
    X2["c"] = X2["c"].cat.reorder_categories(sorted(CATS))
    np.testing.assert_array_equal(tm.encode(X2), tm.encode(data["X"]))
    assert_margins_match(ad, "predict_proba", X2)


def test_numpy_categorical_codes_out_of_range():
    """Codes as numbers: unseen, negative, fractional (truncated toward zero) and NaN."""
    rng = np.random.default_rng(3)
    X = np.c_[rng.normal(size=500), rng.integers(0, 8, 500)]
    y = X[:, 0] + (X[:, 1] % 3)
    b = lgb.train({"num_leaves": 8, "min_data_in_leaf": 5, "min_data_per_group": 5, "cat_smooth": 1,
                   "verbose": -1}, lgb.Dataset(X, y, categorical_feature=[1]), 20)
    ad = la.LightGBMAdapter(b)
    tm = ad.tree_model("predict")
    assert np.any(tm.ensemble.cat_offset >= 0)
    codes = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 40, 1000, -1, -0.5, -0.99, 2.5, 3.99, np.nan, 1e10])
    Xt = pd.DataFrame({"f0": rng.normal(size=codes.size), "f1": codes})
    np.testing.assert_allclose(tm.ensemble.predict_raw(tm.encode(Xt))[:, 0],
                               b.predict(Xt.to_numpy(), raw_score=True), rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")
def test_best_iteration(data):
    X, y = data["X"], data["f"]
    cb = [lgb.early_stopping(3, verbose=False)]
    m = lgb.LGBMRegressor(n_estimators=300, learning_rate=0.5, num_leaves=8, verbose=-1)
    m.fit(X.iloc[:250], y[:250], eval_set=[(X.iloc[250:], y[250:])], callbacks=cb)
    best = m.best_iteration_
    assert 0 < best < 300  # (LightGBM may also cut the wrapper's booster to best_iteration)
    ad = la.LightGBMAdapter(m)
    assert ad.tree_model("predict").ensemble.n_trees == best
    assert_margins_match(ad, "predict", X)
    # a raw Booster from lgb.train with early stopping also predicts with best_iteration
    b = lgb.train({"learning_rate": 0.5, "num_leaves": 8, "verbose": -1}, lgb.Dataset(X.iloc[:250], y[:250]), 300,
                  valid_sets=[lgb.Dataset(X.iloc[250:], y[250:])], callbacks=cb, keep_training_booster=True)
    assert 0 < b.best_iteration < b.current_iteration()
    adb = la.LightGBMAdapter(b)
    assert adb.tree_model("predict").ensemble.n_trees == b.best_iteration
    assert_margins_match(adb, "predict", X)


def test_linear_tree_falls_back_to_brute(data):
    X = data["X"][["a", "b", "z", "d"]]
    m = lgb.LGBMRegressor(linear_tree=True, **KW).fit(X, data["f"])
    ad = pdpx.core.plugins.adapt(m)
    assert ad.tree_model("predict") is None
    assert "linear" in ad.tree_model_unavailable("predict")
    res = pdpx.partial_dependence(m, X, "b", grid_resolution=5)
    assert res.method == "brute"
    with pytest.raises(PdpxError, match="linear"):
        pdpx.partial_dependence(m, X, "b", method="exact", grid_resolution=5)


def test_unknown_link_objective_offers_raw(data):
    X = data["X"][["a", "b"]]
    m = lgb.LGBMRegressor(reg_sqrt=True, n_estimators=5, verbose=-1).fit(X, np.abs(data["f"]))
    ad = la.LightGBMAdapter(m)
    assert ad.tree_model("predict") is None and "sqrt" in ad.tree_model_unavailable("predict")
    assert ad.tree_model("raw") is not None


def test_booster_feature_names(models, data):
    b = models["booster-regression"]
    ad = pdpx.core.plugins.adapt(b)
    assert ad.feature_names() == list(data["X"].columns)
    a = pdpx.partial_dependence(b, data["X"][["c", "d", "a", "b", "z"]], "b", grid_resolution=7, method="brute")
    e = pdpx.partial_dependence(b, data["X"], "b", grid_resolution=7, method="brute")
    np.testing.assert_allclose(a.average, e.average)
    booster_bin = la.LightGBMAdapter(models["booster-binary"])
    assert booster_bin.is_classifier() and booster_bin.responses() == ["predict_proba", "raw"]
    assert booster_bin.predict(data["X"].iloc[:5], "predict_proba").shape == (5, 2)


def test_model_fitted_on_array(data):
    X = data["X"][["a", "b", "z", "d"]].to_numpy()
    m = lgb.LGBMRegressor(**KW).fit(X, data["f"])
    assert la.LightGBMAdapter(m).feature_names() is None
    e = pdpx.partial_dependence(m, X, 1, method="exact", kind="both", grid_resolution=9)
    b = pdpx.partial_dependence(m, X, 1, method="brute", kind="both", grid_resolution=9)
    np.testing.assert_allclose(e.individual, b.individual, rtol=1e-12, atol=1e-12)


def test_responses_and_outputs(models):
    clf = la.LightGBMAdapter(models["binary"])
    assert clf.responses() == ["predict_proba", "raw"] and clf.is_classifier()
    assert clf.output_names("predict_proba") == ["0", "1"] and clf.output_names("raw") == ["1"]
    reg = la.LightGBMAdapter(models["regression"])
    assert reg.responses() == ["predict", "raw"] and not reg.is_classifier()


def test_not_fitted():
    with pytest.raises(NotFittedError):
        pdpx.partial_dependence(lgb.LGBMRegressor(), pd.DataFrame({"a": [1.0, 2.0]}), "a")


def test_extraction_cached_and_refit(data):
    X = data["X"][["a", "b"]]
    m = lgb.LGBMRegressor(n_estimators=5, verbose=-1).fit(X, data["f"])
    t1 = la.LightGBMAdapter(m).tree_model("predict")
    assert la.LightGBMAdapter(m).tree_model("predict").ensemble is t1.ensemble
    m.set_params(n_estimators=7).fit(X, data["f"])
    t3 = la.LightGBMAdapter(m).tree_model("predict")
    assert t3.ensemble is not t1.ensemble and t3.ensemble.n_trees == 7


def test_text_parse_matches_dump_model(models):
    """model_to_string parsing (used) agrees with dump_model's JSON, value for value."""
    b = models["binary"].booster_
    _, parts = lt.parse_model_string(b.model_to_string())
    dump = b.dump_model(num_iteration=-1)["tree_info"]
    thresholds, leaves = [], []

    def walk(node):
        if "leaf_value" in node:
            leaves.append(node["leaf_value"])
            return
        if node["decision_type"] == "<=":
            thresholds.append(node["threshold"])
        walk(node["left_child"])
        walk(node["right_child"])

    for t in dump:
        walk(t["tree_structure"])
    internal = (parts["left"] >= 0) & (parts["cat_offset"] < 0)
    np.testing.assert_array_equal(np.sort(parts["threshold"][internal]), np.sort(thresholds))
    np.testing.assert_array_equal(np.sort(parts["value"][parts["left"] < 0]), np.sort(leaves))


@pytest.mark.parametrize("name", ["binary", "multiclass", "zero-as-missing"])
def test_float_parsers_agree_bit_for_bit(models, monkeypatch, name):
    """pyarrow's float parser (large models) and numpy's (small models, or no pyarrow) read the same bits."""
    pytest.importorskip("pyarrow", reason="pyarrow is installed with pdpx[dask]")
    text = models[name].booster_.model_to_string()
    monkeypatch.setattr(lt, "_ARROW_MIN", 0)
    _, arrow = lt.parse_model_string(text)
    monkeypatch.setattr(lt, "_arrow_floats", lambda text: None)
    _, plain = lt.parse_model_string(text)
    for key in ("threshold", "value", "node_weight"):
        np.testing.assert_array_equal(arrow[key], plain[key], err_msg=key)


@pytest.mark.parametrize("arrow", [True, False])
def test_malformed_number_in_model_text(models, monkeypatch, arrow):
    if arrow:
        pytest.importorskip("pyarrow", reason="pyarrow is installed with pdpx[dask]")
    monkeypatch.setattr(lt, "_ARROW_MIN", 0 if arrow else 10**12)
    text = models["binary"].booster_.model_to_string()
    bad = re.sub(r"(\nleaf_value=\S+) ", r"\1 x1.5 ", text, count=1)
    assert bad != text
    with pytest.raises(pdpx.PdpxError, match="could not parse the LightGBM model text"):
        lt.parse_model_string(bad)


def test_self_check_refuses_a_wrong_reading(models, monkeypatch):
    from pdpx.core.ir import model_cache

    model_cache.clear()
    real = lt.parse_model_string

    def broken(text):
        header, parts = real(text)
        parts["value"] = parts["value"] + 0.01
        return header, parts

    monkeypatch.setattr(la, "parse_model_string", broken)
    ad = la.LightGBMAdapter(models["regression"])
    assert ad.tree_model("predict") is None
    assert "does not reproduce" in ad.tree_model_unavailable("predict")
    model_cache.clear()


def test_module_does_not_import_lightgbm():
    assert_library_not_imported("pdpx.adapters.lightgbm", "is_lightgbm_model", "lightgbm")


# ------------------------------------------------------------- exact == brute
EXACT_CASES = [
    ("binary", ["a"]), ("binary", ["a", "c"]), ("binary", ["c"]), ("binary", ["z", "b"]),
    ("multiclass", ["b"]), ("multiclass", ["c", "a"]), ("multiclassova", ["a"]),
    ("poisson", ["a", "b"]), ("zero-as-missing", ["z"]), ("rf-multiclass", ["b", "c"]),
    ("rf-regressor", ["a"]), ("booster-binary", ["c", "b"]), ("binary-sigmoid", ["b"]),
]


@pytest.mark.parametrize("kernel", ["auto", "partition"])
@pytest.mark.parametrize("name,features", EXACT_CASES)
def test_exact_equals_brute(models, data, name, features, kernel):
    model = models[name]
    assert_exact_equals_brute(model, data["X"].iloc[:120], features, kernel=kernel, rtol=1e-9, atol=1e-9)


def test_exact_with_unknown_category_in_rows(models, data):
    """Categories LightGBM does not know are missing for it; exact follows."""
    X = data["X"].iloc[:80].copy()
    X["c"] = X["c"].cat.add_categories(["never"])
    X.loc[X.index[::5], "c"] = "never"
    e = pdpx.partial_dependence(models["binary"], X, ["c"], method="exact", kind="both")
    b = pdpx.partial_dependence(models["binary"], X, ["c"], method="brute", kind="both")
    assert "never" in list(e.grid_values[0])
    np.testing.assert_allclose(e.individual, b.individual, rtol=1e-9, atol=1e-9)


def test_auto_picks_exact(models, data):
    assert pdpx.partial_dependence(models["binary"], data["X"], "a", grid_resolution=5).method == "exact"


# ------------------------------------------------------------------ recursion
@pytest.mark.parametrize("name,response,features", [
    ("regression", "predict", ["a"]),
    ("binary", "raw", ["b", "c"]),
    ("multiclass", "raw", ["a"]),
    ("rf-regressor", "predict", ["z"]),
])
def test_recursion_matches_weighted_traversal(models, data, name, response, features):
    res = assert_recursion_is_friedman(models[name], data["X"], features, response=response)
    assert any("hessian" in n for n in res.notes)


def test_recursion_refuses_boosted_probabilities(models, data):
    with pytest.raises(PdpxError, match="exact"):
        pdpx.partial_dependence(models["binary"], data["X"], "a", method="recursion")


def test_one_hot_and_integer_categories():
    """Few categories (one-hot splits) and integer category labels: grid labels map to codes."""
    X, y = mixed_categories_frame()
    m = lgb.LGBMRegressor(**{**KW, "n_estimators": 15}).fit(X, y)
    ad = la.LightGBMAdapter(m)
    assert_margins_match(ad, "predict", adversarial_rows(ad.tree_model("predict").ensemble, X))
    for feats in (["k"], ["m"], ["m", "a"]):
        assert_exact_equals_brute(m, X, feats, grid_resolution=8, rtol=1e-9, atol=1e-9)


def test_columns_with_spaces_match_the_x_the_model_was_fitted_on():
    """LightGBM stores 'sepal length (cm)' as 'sepal_length_(cm)'; pdpx takes the X it was fitted on."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    m = lgb.LGBMClassifier(n_estimators=5, verbose=-1).fit(X, y)
    assert m.booster_.feature_name()[0] == "sepal_length_(cm)"
    for model in (m, m.booster_):
        e, b = assert_exact_equals_brute(model, X, ["sepal length (cm)"], grid_resolution=6)
        assert e.features == ["sepal length (cm)"]
    with pytest.raises(PdpxError, match="does not have the columns"):
        pdpx.partial_dependence(m, X.rename(columns={"sepal length (cm)": "length"}), "length")
