"""pdpx.h_statistic against Friedman and Popescu's definition computed by brute force in this file."""

import itertools

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import PdpxError

sklearn = pytest.importorskip("sklearn")
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

ZERO = 1e-20  # the documented 0/0 rule: a denominator <= ZERO * sum w f^2 gives h2 = 0


# ------------------------------------------------------------------ the definition, by brute force
def _set(frame, col, row_value_frame, i):
    """Column ``col`` of ``frame`` set to row ``i``'s value of ``row_value_frame`` (dtype kept)."""
    frame[col] = pd.Series(row_value_frame[col].iloc[[i] * len(frame)].array, index=frame.index)


def brute_h(predict, X, features, pairs, w=None):
    """Friedman and Popescu (2008) eq. 44 / 45, looping over rows with the model's predict."""
    n = len(X)
    w = np.ones(n) if w is None else np.asarray(w, dtype=float)
    f = predict(X)  # (n, K)
    scale = w @ f ** 2

    def center(v):
        return v - (w @ v) / w.sum()

    def pd_at(cols):
        copies = []
        for i in range(n):  # row i's values of cols, every row's values of the others
            Z = X.copy()
            for c in cols:
                _set(Z, c, X, i)
            copies.append(Z)
        pred = predict(pd.concat(copies, ignore_index=True)).reshape(n, n, -1)  # one call: (i, r, output)
        return center(np.einsum("irk,r->ik", pred, w) / w.sum())

    def ratio(num, den, s):
        return np.where((den <= ZERO * s) | (den <= 0), 0.0, num / np.where(den > 0, den, 1.0))

    one = {c: pd_at([c]) for c in set(features) | {c for p in pairs for c in p}}
    fc = center(f)
    overall = {}
    for c in features:
        rest = pd_at([d for d in X.columns if d != c])
        overall[c] = ratio(w @ (fc - one[c] - rest) ** 2, w @ fc ** 2, scale)
    pairwise = {}
    for a, b in pairs:
        both = pd_at([a, b])
        pairwise[(a, b)] = ratio(w @ (both - one[a] - one[b]) ** 2, w @ both ** 2, scale)
    return pairwise, overall


def check_against_brute(model, X, predict, features=None, pairs=None, w=None, tol=1e-9, **opts):
    features = list(X.columns) if features is None else features
    pairs = list(itertools.combinations(features, 2)) if pairs is None else pairs
    res = pdpx.h_statistic(model, X, features, pairs=pairs, sample_weight=w, **opts)
    ref_pair, ref_over = brute_h(predict, X, features, pairs, w)
    assert len(res.pairwise) == len(pairs) * ref_over[features[0]].size
    for (a, b), ref in ref_pair.items():
        got = res.pairwise[(res.pairwise.feature_1 == a) & (res.pairwise.feature_2 == b)]
        got = got.set_index("output").loc[res.outputs]
        np.testing.assert_allclose(got.h2.to_numpy(), np.ravel(ref), atol=tol, rtol=0)
        np.testing.assert_allclose(got.h.to_numpy(), np.sqrt(np.ravel(ref)), atol=max(tol, 1e-7), rtol=0)
    for c, ref in ref_over.items():
        got = res.overall[res.overall.feature == c].set_index("output").loc[res.outputs]
        np.testing.assert_allclose(got.h2.to_numpy(), np.ravel(ref), atol=tol, rtol=0)
    return res, ref_pair, ref_over


def _data(n=400, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    X["c"] = rng.integers(0, 5, n).astype(float)
    y = X.a * X.b + np.sin(2 * X.c) + 0.5 * X.d + 0.3 * X.a * X.c + rng.normal(scale=0.1, size=n)
    if nan:
        X.loc[rng.random(n) < 0.15, "a"] = np.nan
        X.loc[rng.random(n) < 0.1, "d"] = np.nan
    return X, y


def _from_trees(res):
    """The cells came from the trees' splits (not one per distinct value)."""
    return any("cells of equivalent values from the trees" in n for n in res.notes) and not any(
        "one cell per distinct value" in n for n in res.notes)


def _reg(model):
    return lambda Z: np.asarray(model.predict(Z), dtype=float).reshape(len(Z), -1)


def _proba(model):
    return lambda Z: model.predict_proba(Z)[:, 1:2]


# ------------------------------------------------------------------ tree models: exact == the definition
def test_hgb_regressor_equals_definition():
    X, y = _data()
    m = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, y)
    res, ref_pair, _ = check_against_brute(m, X.iloc[:80], _reg(m))
    assert res.method == "exact" and _from_trees(res)
    assert max(np.max(v) for v in ref_pair.values()) > 0.01  # the model does interact


def test_hgb_classifier_equals_definition():
    X, y = _data(seed=1)
    m = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y > y.median())
    res, _, _ = check_against_brute(m, X.iloc[:80], _proba(m))
    assert res.method == "exact"


def test_random_forest_equals_definition():
    X, y = _data(seed=2)
    m = RandomForestRegressor(n_estimators=15, max_depth=6, random_state=0).fit(X, y)
    res, _, _ = check_against_brute(m, X.iloc[:80], _reg(m), features=["a", "b", "c"])
    assert res.method == "exact"


def test_xgboost_equals_definition():
    xgb = pytest.importorskip("xgboost")
    X, y = _data(seed=3)
    m = xgb.XGBRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    # XGBoost's own predict sums its trees in float32 (pdpx's exact in float64): agreement to float32 precision
    res, _, _ = check_against_brute(m, X.iloc[:80], _reg(m), features=["a", "b", "d"], tol=1e-6)
    assert res.method == "exact"


def test_lightgbm_with_missing_values_equals_definition():
    lgb = pytest.importorskip("lightgbm")
    X, y = _data(seed=4, nan=True)
    m = lgb.LGBMRegressor(n_estimators=20, num_leaves=8, min_child_samples=5, verbose=-1).fit(X, y)
    Xe = X.iloc[:80]
    assert Xe.a.isna().any()
    res, _, _ = check_against_brute(m, Xe, _reg(m), features=["a", "b", "d"])
    assert res.method == "exact"


def test_missing_values_hgb_equals_definition():
    X, y = _data(seed=5, nan=True)
    m = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    res, _, _ = check_against_brute(m, X.iloc[:80], _reg(m), features=["a", "c", "d"])
    assert res.method == "exact"


def test_categorical_feature_equals_definition():
    X, y = _data(seed=6)
    X["c"] = pd.Categorical(X.c.astype(int).map({0: "p", 1: "q", 2: "r", 3: "s", 4: "t"}))
    m = HistGradientBoostingRegressor(max_iter=20, random_state=0, categorical_features="from_dtype").fit(X, y)
    res, _, _ = check_against_brute(m, X.iloc[:80], _reg(m), features=["a", "b", "c"])
    assert res.method == "exact"


def test_pipeline_equals_definition():
    X, y = _data(seed=7)
    X["c"] = X.c.astype(int).map({0: "p", 1: "q", 2: "r", 3: "s", 4: "t"}).astype(object)
    pre = ColumnTransformer([("num", StandardScaler(), ["a", "b", "d"]),
                             ("cat", OneHotEncoder(handle_unknown="ignore"), ["c"])])
    m = make_pipeline(pre, HistGradientBoostingRegressor(max_iter=20, random_state=0)).fit(X, y)
    res, _, _ = check_against_brute(m, X.iloc[:80], _reg(m), features=["a", "c", "d"])
    assert res.method == "exact" and _from_trees(res)


@pytest.mark.parametrize("kind", ["pipeline", "hgb"])
def test_categorical_feature_with_missing_values_equals_definition(kind):
    """A categorical column's missing values are a cell of their own, where the model sees what it sees in those
    rows (a missing value): H equals the definition, on the trees."""
    X, y = _data(seed=8)
    c = X.c.astype(int).map({0: "p", 1: "q", 2: "r", 3: "s", 4: "t"}).astype(object)
    c[np.random.default_rng(8).random(len(X)) < 0.15] = np.nan
    if kind == "pipeline":
        X["c"] = c
        pre = ColumnTransformer([("num", StandardScaler(), ["a", "b", "d"]),
                                 ("cat", OneHotEncoder(handle_unknown="ignore"), ["c"])])
        m = make_pipeline(pre, HistGradientBoostingRegressor(max_iter=20, random_state=0)).fit(X, y)
    else:
        X["c"] = pd.Categorical(c, categories=list("pqrst"))
        m = HistGradientBoostingRegressor(max_iter=20, random_state=0, categorical_features="from_dtype").fit(X, y)
    sub = X.iloc[:80]
    assert sub.c.isna().sum() > 5
    res, _, _ = check_against_brute(m, sub, _reg(m), features=["a", "c", "d"])
    assert res.method == "exact"


def test_sample_weight_weights_every_sum():
    X, y = _data(seed=8)
    m = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    w = np.random.default_rng(0).uniform(0, 3, 80)
    check_against_brute(m, X.iloc[:80], _reg(m), features=["a", "b", "c"], w=w)


def test_multiclass_outputs_equal_definition():
    X, y = _data(seed=9)
    m = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, pd.qcut(y, 3, labels=False))
    res, _, _ = check_against_brute(m, X.iloc[:60], lambda Z: m.predict_proba(Z), features=["a", "b"])
    assert set(res.pairwise.output) == set(res.overall.output) and len(set(res.overall.output)) == 3


# ------------------------------------------------------------------ the model-agnostic path
def test_non_tree_model_equals_definition():
    X, y = _data(seed=10, n=200)
    X["ab"] = X.a * X.b
    m = LogisticRegression().fit(X, y > 0)
    Xe = X.iloc[:80]
    res, ref_pair, _ = check_against_brute(m, Xe, _proba(m), features=["a", "b", "ab"])
    assert res.method == "brute"


def test_function_model_and_sample():
    X, _ = _data(seed=11, n=120)

    def f(Z):
        return Z["a"].to_numpy() * Z["b"].to_numpy() + Z["c"].to_numpy()

    res = pdpx.h_statistic(f, X, ["a", "b", "c"], sample=50, random_state=3)
    take = np.sort(np.random.default_rng(3).choice(len(X), 50, replace=False))
    ref_pair, ref_over = brute_h(lambda Z: f(Z)[:, None], X.iloc[take], ["a", "b", "c"],
                                 list(itertools.combinations(["a", "b", "c"], 2)))
    assert res.n_rows == 50
    for (a, b), ref in ref_pair.items():
        got = res.pairwise[(res.pairwise.feature_1 == a) & (res.pairwise.feature_2 == b)].h2
        np.testing.assert_allclose(got, np.ravel(ref), atol=1e-9)
    for c, ref in ref_over.items():
        np.testing.assert_allclose(res.overall[res.overall.feature == c].h2, np.ravel(ref), atol=1e-9)


def test_generic_default_sample_is_noted():
    X, _ = _data(seed=12, n=400)
    res = pdpx.h_statistic(lambda Z: Z["a"].to_numpy() * 2.0, X, ["a", "b"])
    assert res.n_rows == 300 and any("sample of 300" in n for n in res.notes)


# ------------------------------------------------------------------ known answers
def test_additive_model_has_no_interaction():
    X, _ = _data(seed=13, n=100)

    def f(Z):
        return Z["a"].to_numpy() ** 2 + np.sin(Z["b"].to_numpy()) + 3 * Z["c"].to_numpy()

    res = pdpx.h_statistic(f, X, ["a", "b", "c"])
    assert np.all(res.pairwise.h < 1e-9) and np.all(res.overall.h < 1e-9)
    assert len(res.pairwise) == 3


def test_additive_tree_model_has_no_interaction():
    X, y = _data(seed=14)
    m = HistGradientBoostingRegressor(max_iter=40, interaction_cst=[[0], [1], [2], [3]], random_state=0).fit(X, y)
    res = pdpx.h_statistic(m, X)
    assert res.method == "exact"
    assert np.all(res.pairwise.h < 1e-9) and np.all(res.overall.h < 1e-9)


def test_product_of_independent_centered_features_is_pure_interaction():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(150, 3)), columns=["x1", "x2", "x3"])
    X = X - X.mean()

    def f(Z):
        return Z["x1"].to_numpy() * Z["x2"].to_numpy()

    res = pdpx.h_statistic(f, X)
    pair = res.pairwise.set_index(["feature_1", "feature_2"]).h
    assert pair[("x1", "x2")] == pytest.approx(1.0, abs=1e-9)
    assert pair[("x1", "x3")] == 0.0 and pair[("x2", "x3")] == 0.0  # 0/0: x3 has no effect
    over = res.overall.set_index("feature").h
    assert over["x1"] == pytest.approx(1.0, abs=1e-9) and over["x3"] < 1e-9


def test_tree_product_is_close_to_one():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(3000, 2)), columns=["x1", "x2"])
    m = HistGradientBoostingRegressor(max_iter=200, random_state=0).fit(X, X.x1 * X.x2)
    res = pdpx.h_statistic(m, X)
    assert res.pairwise.h.iloc[0] > 0.95


def test_constant_model_gives_zero():
    X, _ = _data(seed=15, n=60)
    res = pdpx.h_statistic(lambda Z: np.full(len(Z), 2.5), X, ["a", "b"])
    assert (res.pairwise.h2 == 0).all() and (res.overall.h2 == 0).all()


def test_frames_and_plot():
    X, y = _data(seed=16)
    m = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    res = pdpx.h_statistic(m, X, ["a", "b", "c"])
    assert list(res.pairwise.columns) == ["feature_1", "feature_2", "output", "h2", "h"]
    assert list(res.overall.columns) == ["feature", "output", "h2", "h"]
    assert res.pairwise.h2.is_monotonic_decreasing and res.overall.h2.is_monotonic_decreasing
    tidy = res.to_frame()
    assert len(tidy) == 3 + 3 and set(tidy.statistic) == {"pairwise", "overall"}
    pytest.importorskip("plotnine")
    for which in ("pairwise", "overall", "auto"):
        res.plot(which).draw()
    assert "HStatistic" in repr(res)


def test_pairs_only():
    X, y = _data(seed=17)
    m = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    res = pdpx.h_statistic(m, X, pairs=[("a", "b")])
    assert len(res.pairwise) == 1 and set(res.overall.feature) == {"a", "b"}
    res = pdpx.h_statistic(m, X, ["a", "b"], pairs=[])
    assert len(res.pairwise) == 0 and len(res.overall) == 2


# ------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("kwargs, match", [
    (dict(features=["nope"]), "unknown feature 'nope'"),
    (dict(pairs=[("a",)]), "each pair must name two features"),
    (dict(pairs=[("a", "a")]), "more than once"),
    (dict(pairs="ab"), "pairs must be a list of pairs"),
    (dict(sample=10_000), "sample=10000 rows, but X has 400"),
    (dict(sample=1.5), "sample must be a number of rows"),
    (dict(grid_resolution=10), "do not apply"),
    (dict(colour="red"), "unknown option"),
])
def test_bad_inputs(kwargs, match):
    X, y = _data(seed=18)
    m = HistGradientBoostingRegressor(max_iter=5).fit(X, y)
    with pytest.raises((PdpxError, TypeError), match=match):
        pdpx.h_statistic(m, X, **kwargs)


def test_large_pair_grids_in_blocks_equal_definition(monkeypatch):
    from pdpx.explain import evaluate

    monkeypatch.setattr(evaluate, "MAX_CELLS", 60)  # every pair grid is split into blocks of a's cells
    X, y = _data(seed=19, nan=True)
    m = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    res, _, _ = check_against_brute(m, X.iloc[:80], _reg(m), features=["a", "b", "d"])
    assert any("in blocks" in n for n in res.notes)


def test_ensemble_of_tree_models_equals_definition():
    from sklearn.ensemble import VotingRegressor

    X, y = _data(seed=20)
    m = VotingRegressor([("h", HistGradientBoostingRegressor(max_iter=15, random_state=0)),
                         ("f", RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0))],
                        weights=[0.7, 0.3]).fit(X, y)
    res, _, _ = check_against_brute(m, X.iloc[:80], _reg(m), features=["a", "b", "c"])
    assert res.method == "exact" and _from_trees(res)


def test_ice_in_chunks_of_rows_equals_definition(monkeypatch):
    from pdpx.explain import evaluate

    monkeypatch.setattr(evaluate, "ICE_SHARE", 3000)  # with 1 MB: a handful of rows per chunk
    X, y = _data(seed=21, nan=True)
    m = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    # a budget that holds the ICE curves of a few rows at a time
    res, _, _ = check_against_brute(m, X.iloc[:80], _reg(m), features=["a", "b", "c"], memory_budget="1MB")
    assert res.method == "exact"


@pytest.mark.parametrize("lib", ["xgboost", "sklearn"])
def test_rows_in_one_cell_take_the_same_side_at_every_split(lib):
    """Values at thresholds and one float32 / float64 ulp either side: a cell never mixes two routes."""
    from pdpx.core.plugins import adapt
    from pdpx.explain.evaluate import find_cells

    X, y = _data(seed=22, nan=True)
    if lib == "xgboost":
        xgb = pytest.importorskip("xgboost")
        m = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(X, y)
    else:
        m = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    adapter = adapt(m)
    adapter.validate_columns(X)
    ens = adapter.tree_model("predict").ensemble
    internal = np.flatnonzero(ens.left >= 0)
    cols = {}
    for j in range(X.shape[1]):
        t = ens.threshold[internal[ens.feature[internal] == j]]
        t32 = t.astype(np.float32)
        vals = np.concatenate([t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf),
                               np.nextafter(t32, np.float32(np.inf)).astype(float),
                               np.nextafter(t32, np.float32(-np.inf)).astype(float), [np.nan, 0.0]])
        cols[X.columns[j]] = vals
    n = max(len(v) for v in cols.values())
    Z = pd.DataFrame({c: np.resize(v, n) for c, v in cols.items()})
    cells, from_trees, _ = find_cells(adapter, "predict", Z, list(range(Z.shape[1])))
    assert from_trees
    for j in range(Z.shape[1]):
        nodes = internal[ens.feature[internal] == j]
        if not nodes.size:
            continue
        route = ens.goes_left_many(nodes, Z.iloc[:, j].to_numpy(dtype=float))  # (nodes, rows)
        codes = cells[j].codes
        for c in np.unique(codes):
            members = route[:, codes == c]
            assert (members == members[:, :1]).all(), (lib, j, c)
        assert len(np.unique(codes)) < n  # cells do merge values


def test_dependent_features_give_a_note_not_a_warning():
    rng = np.random.default_rng(23)
    a = rng.normal(size=600)
    X = pd.DataFrame({"a": a, "b": a + rng.normal(scale=0.05, size=600), "c": rng.normal(size=600)})
    m = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, X.a + X.b + X.c)
    res = pdpx.h_statistic(m, X)  # the suite turns pdpx warnings into errors: none may escape
    assert any("absent from the data" in n for n in res.notes)


def _half_centred_within_the_call(Z):
    """A user's step whose output depends on the other rows of the call: each column less half its mean over the
    call's rows."""
    Z = np.asarray(Z, dtype=float)
    return Z - 0.5 * Z.mean(axis=0)


def test_a_model_that_reads_the_whole_call_equals_the_definition_called_once_per_point():
    """H's own calls at the rows' pairs of values stack many points into one predict call; for a model whose
    predictions depend on the other rows of the call, the definition is one call per point (a pair of values)
    with all the rows: pdpx then calls so, says why and warns. (The overall H's PD of the other columns is
    computed from the feature's ICE curves, one call per value of the feature: docs/methods.md.)"""
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.preprocessing import FunctionTransformer

    X, y = _data(n=60)
    model = make_pipeline(FunctionTransformer(_half_centred_within_the_call),
                          GradientBoostingRegressor(n_estimators=15, max_depth=3, random_state=0)).fit(X, y)
    n = len(X)

    def per_point(Z):  # brute_h stacks the n points' copies of X into one frame: one call per copy
        return np.concatenate([model.predict(Z.iloc[i * n:(i + 1) * n]) for i in range(len(Z) // n)])[:, None]

    with pytest.warns(pdpx.StackingWarning):
        res = pdpx.h_statistic(model, X, ["a", "b"], pairs=[("a", "b")])
    ref_pair, _ = brute_h(per_point, X, ["a", "b"], [("a", "b")])
    np.testing.assert_allclose(res.pairwise.h2.to_numpy(), ref_pair[("a", "b")], atol=1e-9, rtol=0)
    stacked, _ = brute_h(lambda Z: model.predict(Z)[:, None], X, ["a", "b"], [("a", "b")])
    assert abs(stacked[("a", "b")][0] - ref_pair[("a", "b")][0]) > 0.01  # stacking would have changed it
    assert any("once per point" in note for note in res.notes), res.notes
