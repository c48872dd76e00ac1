"""exact through scikit-learn Pipelines and ColumnTransformers: every case equals brute on the Pipeline."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer, make_column_transformer
from sklearn.decomposition import PCA
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.feature_selection import SelectFromModel
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Lasso
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    RobustScaler,
    StandardScaler,
    TargetEncoder,
)
from sklearn.tree import DecisionTreeRegressor
from treetools import assert_exact_equals_brute

import pdpx
from pdpx.adapters.column_trees import float_key, key_float
from pdpx.adapters.sklearn_transforms import ColumnMap, declare_elementwise, register_rule

N = 300
rng = np.random.default_rng(7)
X = pd.DataFrame({
    "city": rng.choice(["oslo", "rome", "lima", "kyiv", "pune", "rare1", "rare2"], N,
                       p=[0.3, 0.25, 0.2, 0.15, 0.06, 0.02, 0.02]),
    "size": rng.choice(["S", "M", "L"], N),
    "x1": rng.normal(size=N) * 10 + 3,
    "x2": rng.uniform(size=N) * 100,
    "n": rng.integers(0, 6, N).astype(float),
})
Y = (X.x1 * 0.3 + np.sin(X.x2 / 10) + (X.city == "rome") * 2 + (X.size == "L") - X.n * 0.5
     + rng.normal(scale=0.1, size=N))
YC = np.digitize(Y, np.quantile(Y, [0.33, 0.66]))
W = rng.uniform(0.5, 2.0, N)
NUMS = ["x1", "x2", "n"]


def hgb():
    return HistGradientBoostingRegressor(max_iter=30, random_state=0)


def rf():
    return RandomForestRegressor(n_estimators=8, max_depth=7, random_state=0)


def pipe(cat, num, final, remainder="drop"):
    return make_pipeline(make_column_transformer((cat, ["city", "size"]), (num, NUMS), remainder=remainder), final)


def check(model, Xb=X, features=("x1",), **kw):
    """exact (from auto) equals brute: ICE and average."""
    kw.setdefault("include_missing", False)  # the missing-value point (include_missing) is tested in tests/views
    res = pdpx.partial_dependence(model, Xb, list(features), kind="both", grid_resolution=kw.pop("grid", 9), **kw)
    assert res.method == "exact", res.notes
    ref = pdpx.partial_dependence(model, Xb, list(features), kind="both", method="brute",
                                  grid_resolution=len(res.grid_values[0]) if len(features) == 1 else 9,
                                  custom_values={f: g for f, g in zip(features, res.grid_values)}, **kw)
    np.testing.assert_allclose(res.average, ref.average, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.individual, ref.individual, rtol=1e-9, atol=1e-9)
    return res


@pytest.mark.parametrize("features", [["x1"], ["city"], ["x2", "size"], ["n"]])
@pytest.mark.parametrize("final", [hgb, rf, lambda: GradientBoostingRegressor(n_estimators=20, random_state=0)])
def test_onehot_and_scaler_pipeline_equals_brute(final, features):
    model = pipe(OneHotEncoder(), StandardScaler(), final()).fit(X, Y)
    assert_exact_equals_brute(model, X, features, grid_resolution=9)
    check(model, features=features)


@pytest.mark.parametrize("encoder", [
    OneHotEncoder(drop="first"),
    OneHotEncoder(drop="if_binary", sparse_output=False),
    OneHotEncoder(handle_unknown="ignore", min_frequency=10),
    OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=3),
    OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=0.05, drop="first"),
    OrdinalEncoder(),
    OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1, min_frequency=10),
    TargetEncoder(),
], ids=lambda e: repr(e)[:60])
def test_encoders(encoder):
    model = pipe(encoder, StandardScaler(), hgb()).fit(X, Y)
    for features in (["city"], ["city", "x1"], ["size"]):
        check(model, features=features)


@pytest.mark.parametrize("scaler", [MinMaxScaler(), RobustScaler(), MaxAbsScaler(), StandardScaler(with_mean=False),
                                    KBinsDiscretizer(n_bins=5, encode="ordinal", quantile_method="averaged_inverted_cdf"),
                                    "passthrough", FunctionTransformer()])
def test_numeric_steps(scaler):
    for final in (hgb(), rf()):
        model = pipe(OneHotEncoder(), scaler, final).fit(X, Y)
        check(model, features=["x1"])
        check(model, features=["n", "x2"])


def test_float32_thresholds_at_the_boundary():
    """Grid values within a few ulps of the original-scale thresholds: the rewritten split agrees with brute."""
    model = pipe(OneHotEncoder(), StandardScaler(), DecisionTreeRegressor(max_depth=6, random_state=0)).fit(X, Y)
    from pdpx.core.plugins import adapt

    ad = adapt(model)
    ad.validate_columns(X)
    tm = ad.tree_model("predict")
    ens = tm.ensemble
    j = list(X.columns).index("x1")
    thr = ens.threshold[(ens.left >= 0) & (ens.feature == j)]
    thr = thr[np.isfinite(thr)]
    assert thr.size
    near = np.unique(np.concatenate([key_float(float_key(thr) + d) for d in (-2, -1, 0, 1, 2)]))
    res = pdpx.partial_dependence(model, X, ["x1"], kind="both", custom_values={"x1": near})
    ref = pdpx.partial_dependence(model, X, ["x1"], kind="both", method="brute", custom_values={"x1": near})
    assert res.method == "exact"
    np.testing.assert_allclose(res.individual, ref.individual, rtol=1e-12, atol=1e-12)


def test_weights_classifier_and_two_way():
    model = pipe(OneHotEncoder(handle_unknown="ignore"), StandardScaler(),
                 HistGradientBoostingClassifier(max_iter=20, random_state=0)).fit(X, YC)
    check(model, features=["x1", "city"], sample_weight=W)
    check(model, features=["city"], sample_weight=W, target=[0, 1, 2])
    model = pipe(OneHotEncoder(), StandardScaler(), RandomForestClassifier(n_estimators=5, random_state=0)).fit(X, YC)
    check(model, features=["size", "x2"], sample_weight=W)


def test_missing_values_through_imputers():
    Xm = X.copy()
    Xm.loc[rng.random(N) < 0.1, "x1"] = np.nan
    Xm["city"] = Xm["city"].astype(object)
    Xm.loc[rng.random(N) < 0.1, "city"] = np.nan
    cat = make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder())
    num = SimpleImputer(strategy="median", add_indicator=True)
    model = pipe(cat, num, rf()).fit(Xm, Y)
    check(model, Xm, features=["x1"])
    check(model, Xm, features=["city", "x2"])
    # NaN reaches the model (HGB routes it) through a scaler; NaN as its own category of the encoder
    model = pipe(OneHotEncoder(), StandardScaler(), hgb()).fit(Xm, Y)
    check(model, Xm, features=["x1"])
    check(model, Xm, features=["city"])
    model = pipe(OrdinalEncoder(encoded_missing_value=-2), "passthrough", hgb()).fit(Xm, Y)
    check(model, Xm, features=["city", "x1"])


def test_unknown_categories_in_the_background():
    model = pipe(OneHotEncoder(handle_unknown="ignore"), StandardScaler(), hgb()).fit(X, Y)
    Xu = X.copy()
    Xu.loc[:20, "city"] = "unseen-town"
    check(model, Xu, features=["x1"])
    check(model, Xu, features=["city"])
    strict = pipe(OneHotEncoder(), StandardScaler(), hgb()).fit(X, Y)
    with pytest.raises(ValueError):
        pdpx.partial_dependence(strict, Xu, ["x1"], method="brute")
    with pytest.raises(ValueError):
        pdpx.partial_dependence(strict, Xu, ["x1"], method="exact")


def test_remainder_drop_and_nesting():
    inner = ColumnTransformer([("s", StandardScaler(), ["x1"]), ("m", MinMaxScaler(), ["x2"])])
    outer = ColumnTransformer([("num", inner, ["x1", "x2"]), ("cat", OrdinalEncoder(), ["city"]),
                               ("d", "drop", ["size"])], remainder="passthrough")
    model = Pipeline([("pre", outer), ("model", Pipeline([("sc", StandardScaler()), ("tree", rf())]))]).fit(X, Y)
    check(model, features=["x1"])
    check(model, features=["n", "city"])
    check(model, features=["size"])  # dropped: flat, still exact
    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["city", "size"]), remainder=StandardScaler()),
                          hgb()).fit(X, Y)
    check(model, features=["x2", "city"])


def test_declared_elementwise_functions():
    cube_root = declare_elementwise(np.cbrt)
    negate = declare_elementwise(np.negative, monotone="decreasing")
    for f in (cube_root, negate):
        model = make_pipeline(make_column_transformer((OneHotEncoder(), ["city"]), (FunctionTransformer(f), ["x2"]),
                                                      remainder="drop"), rf()).fit(X, Y)
        check(model, features=["x2"])
    # declared, but NaN below 0 (sqrt) or beyond float32 (exp): not thresholds for every number, so brute
    model = make_pipeline(make_column_transformer((FunctionTransformer(declare_elementwise(np.exp)), ["x1"])),
                          rf()).fit(X, Y)
    check(model, features=["x1"])  # inf beyond x = 709: routed right like inf, and brute never asks there
    # declared, but NaN below 0: not a threshold for every number, so brute
    for f, col, why in ((np.sqrt, "x2", "gives NaN for some numbers"),):
        declare_elementwise(f)
        model = make_pipeline(make_column_transformer((OneHotEncoder(sparse_output=False), ["city"]),
                                                      (FunctionTransformer(f), [col])), rf()).fit(X, Y)
        res = pdpx.partial_dependence(model, X, [col])
        assert res.method == "brute" and any(why in n for n in res.notes), res.notes
    undeclared = make_pipeline(make_column_transformer((OneHotEncoder(), ["city"]),
                                                       (FunctionTransformer(np.log1p), ["x2"])), rf()).fit(X, Y)
    res = pdpx.partial_dependence(undeclared, X, ["x2"])
    assert res.method == "brute"
    assert any("FunctionTransformer(log1p)" in n and "declare_elementwise" in n for n in res.notes)


@pytest.mark.parametrize("step, name, why", [
    (PCA(n_components=2), "PCA", "not known to transform each column on its own"),
    (Normalizer(), "Normalizer", "not known to transform each column on its own"),
    (PolynomialFeatures(2), "PolynomialFeatures", "products of several columns"),
])
def test_steps_that_mix_columns_run_brute_and_say_why(step, name, why):
    model = make_pipeline(make_column_transformer((OneHotEncoder(sparse_output=False), ["city"]), (step, NUMS)),
                          rf()).fit(X, Y)
    res = pdpx.partial_dependence(model, X, ["x1"])
    assert res.method == "brute"
    note = " ".join(res.notes)
    assert name in note and why in note


def test_a_model_based_selector_is_followed():
    """SelectFromModel keeps some columns unchanged (issue 49 point 3): exact."""
    model = make_pipeline(make_column_transformer((OneHotEncoder(sparse_output=False), ["city"]),
                                                  (SelectFromModel(Lasso(alpha=0.01)), NUMS)), rf()).fit(X, Y)
    check(model, features=["x1"])


def test_a_plugin_rule_makes_its_transformer_exact():
    from sklearn.base import BaseEstimator, TransformerMixin

    class Doubler(TransformerMixin, BaseEstimator):
        def fit(self, X, y=None):
            self.n_features_in_ = np.asarray(X).shape[1]
            return self

        def transform(self, X):
            return np.asarray(X, dtype=float) * 2.0

    model = make_pipeline(make_column_transformer((OneHotEncoder(), ["city"]), (Doubler(), NUMS)), rf()).fit(X, Y)
    assert pdpx.partial_dependence(model, X, ["x1"]).method == "brute"
    register_rule(f"{Doubler.__module__}.{Doubler.__qualname__}", lambda step, n: ColumnMap.one_to_one(n, "increasing"))
    check(model, features=["x1"])
    with pytest.raises(ValueError, match="module.ClassName"):
        register_rule("Doubler", lambda step, n: None)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_booster_wrappers_as_the_last_step(library):
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        final = xgb.XGBRegressor(n_estimators=20, max_depth=4)
        tol = dict(rtol=1e-6, atol=1e-6)  # float32 library
    else:
        lgb = pytest.importorskip("lightgbm")
        final = lgb.LGBMRegressor(n_estimators=20, verbose=-1)
        tol = dict(rtol=1e-9, atol=1e-9)
    model = pipe(OneHotEncoder(sparse_output=False), StandardScaler(), final).fit(X, Y)
    for features in (["x1"], ["city", "x2"]):
        e = pdpx.partial_dependence(model, X, features, kind="both", grid_resolution=8)
        b = pdpx.partial_dependence(model, X, features, kind="both", method="brute", grid_resolution=8)
        assert e.method == "exact", e.notes
        np.testing.assert_allclose(e.individual, b.individual, **tol)


def test_demo_penguins_pipeline_runs_exact():
    pytest.importorskip("palmerpenguins")
    from pdpx.demo.gallery import penguins_species

    model, Xp = penguins_species()
    res = check(model, Xp, features=["flipper_length_mm"], grid=6)
    assert res.method == "exact"
    check(model, Xp, features=["island", "bill_length_mm"], grid=6)


def test_float_keys_order_like_floats():
    x = np.array([-np.finfo(float).max, -1.5, -5e-324, 0.0, 5e-324, 1.0, 2.5, np.finfo(float).max])
    k = float_key(x)
    assert np.all(np.diff(k) > 0)
    np.testing.assert_array_equal(key_float(k), x)
    np.testing.assert_array_equal(key_float(k[3:4] + 1), [5e-324])


def test_a_repeated_call_after_a_refit_or_a_new_step_reads_the_new_pipeline():
    """The second call of a pipeline reuses its last lookup; a refit on other data (new categories, new
    thresholds) or a replaced step must still give brute's numbers of the pipeline as it is now."""
    model = pipe(OneHotEncoder(handle_unknown="ignore"), StandardScaler(), hgb()).fit(X, Y)
    check(model, features=("city",))
    check(model, features=("city",))  # the repeated call (the last lookup's trees)
    keep = X.city.isin(["oslo", "rome", "lima"])
    model.fit(X[keep], Y[keep] * -2.0)  # in place: fewer categories, other trees
    res = check(model, features=("city",))
    assert np.ptp(res.average) > 0
    model.set_params(columntransformer__standardscaler=MinMaxScaler()).fit(X, Y)  # a new step object
    check(model, features=("x1",))
    check(model, features=("city",))
