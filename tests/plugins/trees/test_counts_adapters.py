"""Pattern counts on every adapter family: each 1-way and 2-way average equals brute force.

The reference is written here from the definition: every background row with
the target columns set to a grid point, the library's own prediction
(``predict``, ``predict_proba``, ``decision_function``, XGBoost's
``output_margin``, LightGBM's ``raw_score``), the weighted average. Weights
(some zero), missing values, zeros, unused categories, several outputs and the
Pipeline and ensemble rewrites are in the cases. Libraries that predict in
float32 agree to float32 precision.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from treetools import booster_data

from pdpx.core.grid import is_categorical_dtype
from pdpx.core.method import Request
from pdpx.core.plugins import adapt, reset_plugin_manager
from pdpx.core.steps import threshold_grid
from pdpx.plugins.trees import counts as C
from pdpx.plugins.trees import counts_pd as CP

pytest.importorskip("numba", reason="the counts kernels need numba")
sk = pytest.importorskip("sklearn", reason="scikit-learn is not installed")

from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    BaggingRegressor,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    VotingRegressor,
)
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeRegressor  # noqa: E402

N = 160


@pytest.fixture(scope="module")
def data():
    d = booster_data(N, cat_weight=0.6, zero_weight=0.4, seed=4)
    d["w"] = np.random.default_rng(9).uniform(0, 2, N)
    d["w"][::9] = 0.0
    return d


def numeric(d):
    return d["X"][["a", "b", "z", "d"]]


def is_category(col):
    return is_categorical_dtype(col)


def grids_for(X, names, nan=True, extra=None):
    """A few quantiles per numeric column (and NaN when the model takes it), every category (unused ones too)."""
    out = {}
    for name in names:
        col = X[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            out[name] = np.array(col.cat.categories, dtype=object)
            continue
        if is_category(col):
            out[name] = np.array(sorted(col.dropna().unique()), dtype=object)
            continue
        g = np.unique(np.quantile(col.dropna(), [0.05, 0.3, 0.5, 0.8, 0.95]))
        g = np.concatenate([g, [0.0]] + ([extra[name]] if extra and name in extra else []))
        out[name] = np.concatenate([np.sort(g), [np.nan]]) if nan else np.sort(g)
    return out


def brute(predict, X, names, grids, w):
    """(n_outputs, *grid_shape): every row with the columns set to each grid point, predicted in one call."""
    shape = tuple(len(grids[n]) for n in names)
    frames = []
    for idx in np.ndindex(shape):
        Xm = X.copy()
        for k, name in enumerate(names):
            value = grids[name][idx[k]]
            if isinstance(X[name].dtype, pd.CategoricalDtype):
                Xm[name] = pd.Categorical([value] * len(X), categories=X[name].cat.categories)
            elif is_category(X[name]):
                Xm[name] = pd.Series([value] * len(X), dtype=X[name].dtype)
            else:
                Xm[name] = np.full(len(X), value, dtype=np.float64)
        frames.append(Xm)
    pred = np.asarray(predict(pd.concat(frames, ignore_index=True)), dtype=np.float64)
    pred = pred.reshape(len(frames), len(X), -1)
    avg = np.einsum("gnk,n->kg", pred, w) / w.sum()
    return avg.reshape((pred.shape[2],) + shape)


def check_all(model, X, response, predict, w, *, order=2, nan=True, rtol=1e-9, atol=1e-9, kernel="auto",
              extra=None, names=None):
    """Every feature and every pair (order 2) from one gather equals brute; returns the counts."""
    ad = adapt(model)
    Xv = ad.validate_columns(X)
    tm = ad.tree_model(response)
    assert tm is not None, ad.tree_model_unavailable(response)
    counts = C.gather(tm, Xv, w, order=order, kernel=kernel)
    names = list(Xv.columns) if names is None else names
    grids = grids_for(Xv, names, nan=nan, extra=extra)
    outputs = list(range(len(ad.output_names(response))))
    sets = [[n] for n in names] + ([list(p) for p in itertools.combinations(names, 2)] if order == 2 else [])
    for feats in sets:
        pos = [list(Xv.columns).index(n) for n in feats]
        req = Request(X=Xv, features=pos, grid_values=[grids[n] for n in feats],
                      categorical=[is_category(Xv[n]) for n in feats], response=response,
                      outputs=outputs, kind="average", sample_weight=w, memory_budget=1 << 28)
        assert CP.unavailable(tm, req, counts) is None
        got = CP.partial_dependence(tm, counts, req).average
        ref = brute(predict, Xv, feats, grids, w)
        scale = atol * (1.0 + np.abs(ref).max())
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=scale, err_msg=str(feats))
    return tm, counts


# ------------------------------------------------------------------ scikit-learn
SK_REG = {
    "tree": lambda: DecisionTreeRegressor(max_depth=7, random_state=0),
    "forest": lambda: RandomForestRegressor(n_estimators=12, max_depth=8, random_state=0),
    "extra-trees": lambda: ExtraTreesRegressor(n_estimators=8, max_depth=6, random_state=0),
    "gradient-boosting": lambda: GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0),
    "hist-gradient-boosting": lambda: HistGradientBoostingRegressor(max_iter=20, random_state=0),
}


@pytest.mark.parametrize("kernel", ["auto", "partition"])
@pytest.mark.parametrize("name", list(SK_REG))
def test_sklearn_regressors(data, name, kernel):
    X = numeric(data)
    nan = name != "gradient-boosting"  # GradientBoosting refuses missing values
    if not nan:
        X = X.fillna(0.0)
    m = SK_REG[name]().fit(X, data["f"])
    check_all(m, X, "predict", m.predict, data["w"], nan=nan, kernel=kernel)


def test_sklearn_categorical_hist_gradient_boosting(data):
    X = data["X"]
    m = HistGradientBoostingRegressor(max_iter=25, categorical_features="from_dtype", random_state=0).fit(X, data["f"])
    check_all(m, X, "predict", m.predict, data["w"])
    c = HistGradientBoostingClassifier(max_iter=10, categorical_features="from_dtype", random_state=0)
    c.fit(X, data["multi"])
    check_all(c, X, "decision_function", c.decision_function, data["w"], order=1)


def test_sklearn_forest_probabilities_and_multi_output(data):
    X = numeric(data)
    rf = RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0).fit(X, data["multi"])
    check_all(rf, X, "predict_proba", rf.predict_proba, data["w"])
    multi = RandomForestRegressor(n_estimators=6, max_depth=6, random_state=0)
    multi.fit(X, np.c_[data["f"], -data["f"] ** 2])
    tm, _ = check_all(multi, X, "predict", multi.predict, data["w"], order=1)
    assert tm.ensemble.n_outputs == 2


def test_sklearn_gradient_boosting_margins(data):
    X = numeric(data).fillna(0.0)
    gb = GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, data["multi"])
    check_all(gb, X, "decision_function", gb.decision_function, data["w"], nan=False)


def test_boosted_probabilities_are_refused_not_approximated(data):
    X = numeric(data)
    c = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, data["bin"])
    tm = adapt(c).tree_model("predict_proba")
    req = Request(X=X, features=[0], grid_values=[np.array([0.0])], categorical=[False], response="predict_proba",
                  outputs=[0], kind="average", sample_weight=None, memory_budget=1 << 28)
    assert "binary_logistic link" in CP.unavailable(tm, req)


# ------------------------------------------------------------------ Pipelines and ensembles
def test_pipeline_column_rewrites(data):
    X = data["X"].fillna({"a": 0.0})
    X = X.assign(c=X["c"].astype(str))
    ct = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["c"]),
                                 (StandardScaler(), ["a", "b", "z", "d"]))
    pipe = make_pipeline(ct, RandomForestRegressor(n_estimators=8, max_depth=6, random_state=0)).fit(X, data["f"])
    check_all(pipe, X, "predict", pipe.predict, data["w"], nan=False)


def test_ensembles_linear_in_their_members(data):
    X = numeric(data)
    vote = VotingRegressor([("h", HistGradientBoostingRegressor(max_iter=10, random_state=0)),
                            ("r", RandomForestRegressor(n_estimators=5, max_depth=5, random_state=0))],
                           weights=[1, 3]).fit(X, data["f"])
    tm, counts = check_all(vote, X, "predict", vote.predict, data["w"])
    assert isinstance(counts, C.SumCounts)
    bag = BaggingRegressor(DecisionTreeRegressor(max_depth=4), n_estimators=6, max_features=2,
                           bootstrap_features=True, random_state=0).fit(X.fillna(0.0), data["f"])
    check_all(bag, X.fillna(0.0), "predict", bag.predict, data["w"], nan=False)  # members read 2 of 4 columns


# ------------------------------------------------------------------ XGBoost, LightGBM, CatBoost
def test_xgboost_categories_missing_values_and_margins(data):
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    X = data["X"]
    kw = dict(n_estimators=25, max_depth=4, enable_categorical=True, tree_method="hist", random_state=0)
    reg = xgb.XGBRegressor(**kw).fit(X, data["f"])
    tm, _ = check_all(reg, X, "predict", reg.predict, data["w"], rtol=1e-5, atol=1e-6,
                      extra={"a": threshold_grid(adapt(reg).tree_model("predict"), 0)[:5]})
    assert tm.ensemble.float32_input
    clf = xgb.XGBClassifier(**kw).fit(X, data["multi"])
    check_all(clf, X, "raw", lambda f: clf.predict(f, output_margin=True), data["w"], rtol=1e-5, atol=1e-6,
              kernel="partition")
    rf = xgb.XGBRFRegressor(**{**kw, "n_estimators": 6}).fit(X, data["f"])
    check_all(rf, X, "predict", rf.predict, data["w"], rtol=1e-5, atol=1e-6, order=1)


def test_lightgbm_categories_and_zero_as_missing(data):
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    X = data["X"]
    kw = dict(n_estimators=25, num_leaves=15, min_child_samples=5, random_state=0, verbose=-1)
    reg = lgb.LGBMRegressor(zero_as_missing=True, **kw).fit(X, data["f"])
    tm = adapt(reg).tree_model("predict")
    assert np.any(tm.ensemble.nan_mode == 2), "the model has no zero-as-missing split to test"
    check_all(reg, X, "predict", reg.predict, data["w"], rtol=1e-9, atol=1e-9,
              extra={"z": threshold_grid(tm, 2)})
    clf = lgb.LGBMClassifier(**kw).fit(X, data["multi"])
    check_all(clf, X, "raw", lambda f: clf.predict(f, raw_score=True), data["w"], rtol=1e-9, atol=1e-9)


def test_catboost_plugin(monkeypatch):
    catboost = pytest.importorskip("catboost", reason="catboost is not installed")
    pytest.importorskip("pdpx_catboost", reason="the pdpx-catboost plugin is not installed")
    monkeypatch.setenv("PDPX_DISABLE_PLUGINS", "0")
    reset_plugin_manager()
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": np.round(rng.normal(size=N), 1),
                      "c": rng.choice(["x", "y", "z"], N)})
    X.loc[rng.random(N) < 0.1, "a"] = np.nan
    y = X["a"].fillna(-1).to_numpy() + (X["c"] == "x") + np.sin(2 * X["b"])
    m = catboost.CatBoostRegressor(iterations=20, depth=4, verbose=0, random_seed=0, thread_count=1,
                                   allow_writing_files=False, one_hot_max_size=8, cat_features=["c"]).fit(X, y)
    w = rng.uniform(0, 2, N)
    for kernel in ("patterns", "leafsets", "partition"):
        check_all(m, X, "predict", m.predict, w, rtol=1e-5, atol=1e-6, kernel=kernel)


# ------------------------------------------------------------------ Dask: counts travel, not rows
def test_dask_partitions_add_up_to_the_whole(data):
    dd = pytest.importorskip("dask.dataframe", reason="dask is not installed")
    X = data["X"]
    m = HistGradientBoostingRegressor(max_iter=15, categorical_features="from_dtype", random_state=0)
    m.fit(X, data["f"])
    w = data["w"]
    ddf = dd.from_pandas(X, npartitions=3)
    sizes = ddf.map_partitions(len).compute().to_numpy()
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    parts = [C.gather_task(m, ddf.get_partition(i).compute(), w[offsets[i]: offsets[i + 1]], "predict",
                           list(X.columns)) for i in range(len(sizes))]
    assert len(parts) == 3
    total = sum(parts)
    ad = adapt(m)
    whole = C.gather(ad.tree_model("predict"), ad.validate_columns(X), w)
    np.testing.assert_allclose(total.counts, whole.counts, rtol=1e-12, atol=1e-12)
    assert total.total_weight == pytest.approx(w.sum())
