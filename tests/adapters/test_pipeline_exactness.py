"""Issue 35: exact through a Pipeline is never silently wrong.

Every transformer configuration the pipeline reader accepts, in front of each tree library, is
compared with the definition of partial dependence (set the raw column keeping its dtype, call the
pipeline's own predict / predict_proba, average), at the default grid, at grid="thresholds" and at
custom values that hit sentinels. Where the reader refuses, ``auto`` answers with ``brute`` and
``res.notes`` says why.
"""

import re

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import xgboost as xgb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer, make_column_selector, make_column_transformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    RobustScaler,
    StandardScaler,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from stacked import predict_copies

import pdpx
from pdpx.adapters.sklearn_pipeline import absent_entries, densify, prediction_path
from pdpx.adapters.sklearn_transforms import declare_elementwise
from pdpx.core.errors import PdpxError

N = 200
rng = np.random.default_rng(35)
X = pd.DataFrame({
    "x": rng.integers(-3, 6, N).astype(float),  # holds the sentinels 0 and -1
    "c": pd.Series(rng.choice(list("abcdef?"), N), dtype=object),
    "k": rng.integers(0, 4, N),
    "z": rng.normal(size=N),
    "const": np.full(N, 2.0),
})
X.loc[rng.random(N) < 0.1, "z"] = np.nan
Y = X.x ** 2 + (X.c == "b") * 2 + (X.c == "?") * 3 + X.k + np.nan_to_num(X.z) + rng.normal(size=N) * 0.1
YC = (Y > np.median(Y)).astype(int)

FINALS = {
    "tree": lambda: DecisionTreeRegressor(max_depth=6, random_state=0),
    "hgb": lambda: HistGradientBoostingRegressor(max_iter=15, random_state=0),
    "xgboost": lambda: xgb.XGBRegressor(n_estimators=15, max_depth=4),
    "lightgbm": lambda: lgb.LGBMRegressor(n_estimators=15, min_child_samples=5, verbose=-1),
}
TOL = {"xgboost": 1e-4}  # XGBoost sums its leaves in float32; the rest to 1e-9


def definition(model, Xb, col, values, response="predict"):
    """The average of the model's own response with column ``col`` set to each value (dtype kept)."""
    copies = []
    for v in values:
        Xv = Xb.copy()
        try:
            Xv[col] = pd.Series([v] * len(Xb), index=Xb.index, dtype=Xb[col].dtype)
            if Xv[col].dtype.kind in "iu" and float(Xv[col].iloc[0]) != float(v):
                raise ValueError("not an integer")
        except (TypeError, ValueError):  # 1.5 in an integer column: given as a float, as pdpx does
            Xv[col] = pd.Series([v] * len(Xb), index=Xb.index, dtype=np.float64)
        copies.append(Xv)
    out = [np.asarray(p, dtype=float).mean(axis=0) for p in predict_copies(getattr(model, response), copies)]
    return np.array(out).reshape(len(values), -1)


def _average(res):
    return np.asarray(res.average, dtype=float).reshape(len(res.grid_values[0]), -1)


def assert_pd(model, col, expect, *, Xb=X, why=None, custom=(), response="predict", tol=1e-9, thresholds=True):
    """auto equals the definition at the default grid, at custom values (``custom``: extra values such as
    sentinels) and at grid="thresholds" (a numeric column the model reads as a number; where the trees are
    refused, that grid is refused with the reason); ``expect`` is the method auto must run."""
    numeric = pd.api.types.is_numeric_dtype(Xb[col])
    seen = list(pd.unique(Xb[col].dropna()))
    values = sorted(set(seen[:5]) | set(custom), key=lambda v: (str(type(v)), v))
    runs = [{"grid_resolution": 6}, {"custom_values": {col: np.array(values, dtype=float if numeric else object)}}]
    if numeric and thresholds:
        runs.append({"grid": "thresholds"})
    for kw in runs:
        if expect == "brute" and kw.get("grid") == "thresholds":
            with pytest.raises(PdpxError, match=re.escape(why)):  # thresholds need the trees: refused with the reason
                pdpx.partial_dependence(model, Xb, [col], response=response, **kw)
            continue
        res = pdpx.partial_dependence(model, Xb, [col], response=response, **kw)
        assert res.method == expect, res.notes
        if why is not None:
            assert any(why in n for n in res.notes), res.notes
        ref = definition(model, Xb, col, res.grid_values[0], response)
        got = _average(res)
        if got.shape[1] == 1 and ref.shape[1] == 2:  # a binary classifier: pdpx gives the second class
            ref = ref[:, 1:]
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def ohe():
    return OneHotEncoder(sparse_output=False, handle_unknown="ignore")


# ------------------------------------------------------------------ class 2: imputers
@pytest.mark.parametrize("final, strategy, sentinel", [
    ("tree", "mean", 0), ("tree", "most_frequent", -1), ("tree", "constant", 0), ("hgb", "median", 0),
    ("xgboost", "constant", -1), ("lightgbm", "mean", 0)])
def test_a_numeric_sentinel_imputer_refuses_and_brute_equals_the_definition(final, strategy, sentinel):
    """missing_values=0 maps 0 to the statistic and keeps its neighbours: not monotone, so brute answers."""
    imp = SimpleImputer(missing_values=sentinel, strategy=strategy, fill_value=4.5)
    model = make_pipeline(make_column_transformer((imp, ["x", "k"]), (ohe(), ["c"])), FINALS[final]()).fit(X, Y)
    assert_pd(model, "x", "brute", why="replaces the value", custom=[0.0, -1.0, 0.5], tol=TOL.get(final, 1e-9))


def test_the_sentinel_case_of_the_issue_in_a_plain_pipeline():
    model = make_pipeline(SimpleImputer(missing_values=0, strategy="constant", fill_value=4.5),
                          DecisionTreeRegressor(max_depth=5, random_state=0)).fit(X[["x", "k"]], Y)
    assert_pd(model, "x", "brute", Xb=X[["x", "k"]], why="replaces the value", custom=[0.0])


@pytest.mark.parametrize("final", FINALS)
@pytest.mark.parametrize("encoder", ["onehot", "ordinal"])
def test_a_sentinel_imputer_before_an_encoder_is_exact(final, encoder):
    """'?' -> the most frequent category: '?' gets its own entry of the column's table."""
    enc = ohe() if encoder == "onehot" else OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    cat = make_pipeline(SimpleImputer(missing_values="?", strategy="most_frequent"), enc)
    model = make_pipeline(make_column_transformer((cat, ["c"]), ("passthrough", ["x"])), FINALS[final]()).fit(X, Y)
    assert_pd(model, "c", "exact", custom=["?", "never-seen"], tol=TOL.get(final, 1e-9))


@pytest.mark.parametrize("final", FINALS)
def test_nan_imputers_with_indicator_are_exact(final):
    model = make_pipeline(make_column_transformer((SimpleImputer(strategy="median", add_indicator=True), ["z", "x"]),
                                                  (ohe(), ["c"])), FINALS[final]()).fit(X, Y)
    assert_pd(model, "z", "exact", custom=[0.0], tol=TOL.get(final, 1e-9))
    assert_pd(model, "x", "exact", custom=[0.0], tol=TOL.get(final, 1e-9))


def test_missing_values_none_and_pandas_na_refuse():
    Xo = X.copy()
    Xo.loc[:20, "c"] = None
    for mv in (None, pd.NA):
        cat = make_pipeline(SimpleImputer(missing_values=mv, strategy="most_frequent"), ohe())
        model = make_pipeline(make_column_transformer((cat, ["c"]), ("passthrough", ["x"])),
                              DecisionTreeRegressor(max_depth=6, random_state=0)).fit(Xo, Y)
        assert_pd(model, "x", "brute", Xb=Xo, why="but not NaN")


def test_none_and_nan_as_two_categories_are_exact():
    """An object column holding both None and NaN: the encoder has a category for each, so None gets its own
    code (read as missing, it would be routed like NaN)."""
    Xo = X.copy()
    Xo.loc[:30, "c"] = None
    Xo.loc[31:60, "c"] = np.nan
    y = Y + np.r_[np.full(31, 3.0), np.zeros(N - 31)]
    for enc in (ohe(), OrdinalEncoder()):
        model = make_pipeline(make_column_transformer((enc, ["c"]), ("passthrough", ["x"])),
                              DecisionTreeRegressor(max_depth=8, random_state=0)).fit(Xo, y)
        assert_pd(model, "x", "exact", Xb=Xo)
        assert_pd(model, "c", "exact", Xb=Xo)


# ------------------------------------------------------------------ scalers, functions, binning
SCALERS = {
    "no mean no std": lambda: StandardScaler(with_mean=False, with_std=False),
    "standard": StandardScaler,
    "minmax clip": lambda: MinMaxScaler(feature_range=(-1, 2), clip=True),
    "robust": lambda: RobustScaler(with_centering=False, quantile_range=(10, 90)),
    "maxabs": MaxAbsScaler,
    "kbins": lambda: KBinsDiscretizer(n_bins=4, encode="ordinal", quantile_method="averaged_inverted_cdf"),
    "function none": FunctionTransformer,
    "declared cbrt": lambda: FunctionTransformer(declare_elementwise(np.cbrt)),
}


@pytest.mark.parametrize("scaler", SCALERS)
def test_monotone_steps_are_exact(scaler):
    cols = ["x", "k", "const"] if scaler != "kbins" else ["x", "k"]  # const: zero variance, scale_ = 1
    for final in FINALS:
        model = make_pipeline(make_column_transformer((SCALERS[scaler](), cols), (ohe(), ["c"])),
                              FINALS[final]()).fit(X, Y)
        assert_pd(model, "x", "exact", custom=[0.0, -1.0], tol=TOL.get(final, 1e-9))
    assert_pd(model, "k", "exact", custom=[0, 3], tol=TOL.get(final, 1e-9))


def test_function_transformer_with_keyword_arguments_refuses():
    def scale(values, factor=1.0):
        return values * factor

    declare_elementwise(scale)
    model = make_pipeline(make_column_transformer((FunctionTransformer(scale, kw_args={"factor": -1.0}), ["x"]),
                                                  (ohe(), ["c"])), DecisionTreeRegressor(random_state=0)).fit(X, Y)
    assert_pd(model, "x", "brute", why="kw_args")
    undeclared = make_pipeline(make_column_transformer((FunctionTransformer(np.square), ["x"]), (ohe(), ["c"])),
                               DecisionTreeRegressor(random_state=0)).fit(X, Y)
    assert_pd(undeclared, "x", "brute", why="declare_elementwise")


def test_kbins_onehot_is_exact_as_sets_of_values():
    """One indicator per bin: a split on one is a set of the column's values (issue 49; tests/adapters/
    test_column_values.py covers the other transforms that make several columns of one)."""
    model = make_pipeline(make_column_transformer(
        (KBinsDiscretizer(n_bins=4, encode="onehot-dense", quantile_method="averaged_inverted_cdf"), ["x"]),
        (ohe(), ["c"])), DecisionTreeRegressor(random_state=0)).fit(X, Y)
    assert_pd(model, "x", "exact")


# ------------------------------------------------------------------ encoders
ENCODERS = {
    "onehot drop first": lambda: OneHotEncoder(drop="first", handle_unknown="ignore"),
    "onehot if_binary": lambda: OneHotEncoder(drop="if_binary", sparse_output=False, handle_unknown="ignore"),
    "onehot infrequent": lambda: OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=30,
                                               sparse_output=False),
    "onehot warn": lambda: OneHotEncoder(handle_unknown="warn", max_categories=4, sparse_output=False),
    "ordinal unknown/missing": lambda: OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-5,
                                                      encoded_missing_value=-7),
}


@pytest.mark.parametrize("final", ["tree", "hgb", "lightgbm"])
@pytest.mark.parametrize("encoder", ENCODERS)
def test_encoders_are_exact(final, encoder):
    Xm = X.copy()
    Xm.loc[rng.random(N) < 0.1, "c"] = np.nan
    model = make_pipeline(make_column_transformer((ENCODERS[encoder](), ["c", "k"]), remainder="passthrough"),
                          FINALS[final]()).fit(Xm, Y)
    assert_pd(model, "c", "exact", Xb=Xm, custom=["never-seen", "?"])
    assert_pd(model, "k", "exact", Xb=Xm, custom=[7], thresholds=False)  # encoded: thresholds need categories


# ------------------------------------------------------------------ class 4: sparse matrices
def sparse_pipe(final, numeric=True):
    parts = [(OneHotEncoder(handle_unknown="ignore"), ["c", "k"])]
    if numeric:
        parts.append((StandardScaler(), ["x", "const"]))  # no NaN: scikit-learn's trees refuse it when sparse
    model = make_pipeline(make_column_transformer(*parts, sparse_threshold=1.0), final).fit(X, Y)
    assert model[0].sparse_output_  # the ColumnTransformer hands the model a sparse matrix
    return model


def test_xgboost_on_a_sparse_matrix_refuses_numeric_splits():
    """XGBoost reads absent entries (a scaled value of exactly 0) as missing: not a threshold."""
    model = sparse_pipe(xgb.XGBRegressor(n_estimators=15, max_depth=4))
    for col in ("x", "c"):
        assert_pd(model, col, "brute", why="absent entries (zeros) it reads as missing", custom=[])


@pytest.mark.parametrize("encoder", [lambda: OneHotEncoder(handle_unknown="ignore"), OrdinalEncoder])
def test_xgboost_on_a_sparse_matrix_is_exact_on_encoded_columns(encoder):
    """Every category evaluated through the steps, absent entries read as missing, as XGBoost does."""
    model = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["c"]),
                                                  (encoder(), ["k"]), sparse_threshold=1.0),
                          xgb.XGBRegressor(n_estimators=15, max_depth=4)).fit(X, Y)
    assert model[0].sparse_output_
    assert_pd(model, "c", "exact", custom=["never-seen"], tol=TOL["xgboost"])
    assert_pd(model, "k", "exact", tol=TOL["xgboost"], thresholds=False)


@pytest.mark.parametrize("final", ["tree", "lightgbm"])
def test_sklearn_trees_and_lightgbm_read_absent_entries_as_zero(final):
    model = sparse_pipe(FINALS[final]())
    assert_pd(model, "x", "exact", custom=[float(X.x.mean()), 0.0])
    assert_pd(model, "c", "exact", custom=["never-seen"])


def test_absent_entries_by_library_and_densify():
    assert absent_entries(DecisionTreeRegressor())[0] == 0.0
    assert absent_entries(lgb.LGBMRegressor())[0] == 0.0
    assert np.isnan(absent_entries(xgb.XGBRegressor())[0])
    value, why = absent_entries(HistGradientBoostingRegressor())  # refuses sparse input itself
    assert "does not know how it reads the absent entries" in why
    m = sp.coo_matrix(([1.0, 2.0, 0.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))  # a duplicate, a stored zero
    np.testing.assert_array_equal(densify(m, np.nan).to_numpy(), [[np.nan, 3.0], [0.0, np.nan]])


# ------------------------------------------------------------------ ColumnTransformer shapes
LAYOUTS = {
    "overlapping columns": lambda: ColumnTransformer([("a", StandardScaler(), ["x", "k"]), ("b", MinMaxScaler(), ["x"]),
                                                      ("o", ohe(), ["c"])]),
    "callable selectors": lambda: make_column_transformer(
        (StandardScaler(), make_column_selector(dtype_include="number")),
        (ohe(), make_column_selector(dtype_include=object))),
    "negative weights": lambda: ColumnTransformer([("a", StandardScaler(), ["x"]), ("o", ohe(), ["c"])],
                                                  transformer_weights={"a": -2.0, "o": 3.0}),
    "pandas output": lambda: make_column_transformer((StandardScaler(), ["x"]), (ohe(), ["c"]),
                                                     verbose_feature_names_out=False).set_output(transform="pandas"),
    "remainder transformer": lambda: make_column_transformer((ohe(), ["c"]), ("drop", ["k"]),
                                                             remainder=MaxAbsScaler()),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_column_transformer_layouts_are_exact(layout):
    model = make_pipeline(LAYOUTS[layout](), DecisionTreeRegressor(max_depth=6, random_state=0)).fit(X, Y)
    assert_pd(model, "x", "exact", custom=[0.0])
    assert_pd(model, "c", "exact")
    # X's columns in another order than at fit: the ColumnTransformer picks them by name
    assert_pd(model, "x", "exact", Xb=X[["k", "z", "c", "const", "x"]])


def test_subclasses_that_override_transform_refuse():
    class Negated(StandardScaler):
        def transform(self, X, copy=None):
            return -super().transform(X, copy)

    class OnlyFit(StandardScaler):
        def fit(self, X, y=None, sample_weight=None):
            return super().fit(X, y, sample_weight)

    class MyColumns(ColumnTransformer):
        pass

    tree = DecisionTreeRegressor(max_depth=6, random_state=0)
    model = make_pipeline(make_column_transformer((Negated(), ["x"]), (ohe(), ["c"])), tree).fit(X, Y)
    assert_pd(model, "x", "brute", why="overrides transform")
    model = make_pipeline(make_column_transformer((OnlyFit(), ["x"]), (ohe(), ["c"])), tree).fit(X, Y)
    assert_pd(model, "x", "exact")
    model = make_pipeline(MyColumns([("s", StandardScaler(), ["x"]), ("o", ohe(), ["c"])]), tree).fit(X, Y)
    assert_pd(model, "x", "brute", why="subclass of ColumnTransformer")


def test_a_classifier_probability_through_a_sentinel_encoder():
    cat = make_pipeline(SimpleImputer(missing_values="?", strategy="constant", fill_value="b"), ohe())
    model = make_pipeline(make_column_transformer((cat, ["c"]), (StandardScaler(), ["x"])),
                          DecisionTreeClassifier(max_depth=6, random_state=0)).fit(X, YC)
    assert_pd(model, "c", "exact", custom=["?"], response="predict_proba")
    assert_pd(model, "x", "exact", custom=[0.0], response="predict_proba")


# ------------------------------------------------------------------ generated configurations
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(missing=st.sampled_from([np.nan, 0, -1]), strategy=st.sampled_from(["mean", "median", "constant"]),
       scaler=st.sampled_from(sorted(SCALERS)), final=st.sampled_from(sorted(FINALS)),
       sparse=st.booleans())
def test_generated_pipelines_equal_the_definition(missing, strategy, scaler, final, sparse):
    num = make_pipeline(SimpleImputer(missing_values=missing, strategy=strategy, fill_value=9.0), SCALERS[scaler]())
    enc = OneHotEncoder(handle_unknown="ignore", sparse_output=sparse and final != "hgb")
    model = make_pipeline(make_column_transformer((num, ["x"]), (enc, ["c"]), sparse_threshold=0.3 * sparse),
                          FINALS[final]()).fit(X, Y)
    res = pdpx.partial_dependence(model, X, ["x"], custom_values={"x": np.array([-1.0, 0.0, 0.5, 2.0, 5.0])})
    ref = definition(model, X, "x", res.grid_values[0])
    np.testing.assert_allclose(_average(res), ref, rtol=TOL.get(final, 1e-9), atol=TOL.get(final, 1e-9))
    if not np.isnan(missing):
        assert res.method == "brute" and any("replaces the value" in n for n in res.notes), res.notes


# ------------------------------------------------------------------ the prediction path
def test_prediction_path_lists_every_call():
    inner = make_pipeline(SimpleImputer(), StandardScaler())
    ct = make_column_transformer((inner, ["x"]), (ohe(), ["c"]), ("drop", ["k"]), remainder="passthrough")
    last = make_pipeline(MinMaxScaler(), DecisionTreeRegressor(random_state=0))
    model = Pipeline([("pre", ct), ("skip", "passthrough"), ("last", last)]).fit(X, Y)
    path = prediction_path(model, "predict")
    assert [(type(o).__name__, m) for o, m in path] == [
        ("Pipeline", "predict"), ("ColumnTransformer", "transform"), ("Pipeline", "transform"),
        ("SimpleImputer", "transform"), ("StandardScaler", "transform"), ("OneHotEncoder", "transform"),
        ("FunctionTransformer", "transform"),  # remainder="passthrough", as scikit-learn fits it
        ("Pipeline", "predict"), ("MinMaxScaler", "transform"), ("DecisionTreeRegressor", "predict")]
    assert path[0][0] is model and path[1][0] is model.named_steps["pre"] and path[-1][0] is last[-1]


def test_nan_in_a_sparse_matrix_is_refused_like_scikit_learn_refuses_it():
    """scikit-learn's trees take NaN in a dense matrix but refuse it in a sparse one: exact refuses alike."""
    model = sparse_pipe(DecisionTreeRegressor(max_depth=6, random_state=0))
    Xn = X.assign(const=np.where(rng.random(N) < 0.1, np.nan, 2.0))
    for method in ("brute", "exact", "auto"):  # exact: "holds value(s) that the preprocessing refuses"
        with pytest.raises(ValueError, match="NaN|nan"):
            pdpx.partial_dependence(model, Xn, ["x"], method=method)


def test_a_pipeline_read_for_one_frames_dtypes_is_read_again_for_another():
    """A scaler computes a float32 column in float32 and a pandas Float32 column in float64 (scikit-learn converts
    the nullable type): the pipeline's trees read for the first frame must not answer for the second."""
    rng = np.random.default_rng(1)
    n = 400
    X32 = pd.DataFrame({"a": rng.normal(size=n).astype(np.float32), "b": rng.normal(size=n).astype(np.float32)})
    y = np.sin(3 * X32["a"]) + X32["b"]
    model = make_pipeline(StandardScaler(), DecisionTreeRegressor(max_depth=6, random_state=0)).fit(X32, y)
    XF = X32.astype("Float32")
    for X in (X32, XF, X32):
        with pdpx.config_context(check_trees=False):  # the engine's own answer, without the check behind it
            res = pdpx.partial_dependence(model, X, "a", grid="thresholds", method="exact")
        want = definition(model, X, "a", res.grid_values[0])
        np.testing.assert_allclose(res.average.reshape(-1), want.reshape(-1), rtol=0, atol=1e-9)
