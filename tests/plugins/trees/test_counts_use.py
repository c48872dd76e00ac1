"""Pattern counts used by everything that asks for many feature sets: each path equals brute force.

The reference is written here from the definition: every background row with the
target columns set to a grid point, the model's own ``predict`` (or
``predict_proba`` / margins), the weighted average. Each path is also checked to
have taken the counts (the result's note, or the counts kept with the model), and
``method_options={"engine": "rows"}`` to give the same numbers.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from treetools import booster_data

import pdpx
from pdpx.core.plugins import adapt
from pdpx.plugins.trees import counts_use
from pdpx.plugins.trees.counts import choose_kernel

pytest.importorskip("numba", reason="the counts kernels need numba")
pytest.importorskip("sklearn", reason="scikit-learn is not installed")

from sklearn.compose import make_column_transformer  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    VotingRegressor,
)
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

N = 150
GATHERED = "pattern counts gathered"
KEPT = "pattern counts of these rows kept"


@pytest.fixture(scope="module")
def data():
    d = booster_data(N, cat_weight=0.6, zero_weight=0.4, seed=5)
    d["w"] = np.random.default_rng(3).uniform(0, 2, N)
    d["w"][::7] = 0.0
    return d


@pytest.fixture(autouse=True)
def fresh_cache():
    counts_use.counts_cache.clear()
    yield
    counts_use.counts_cache.clear()


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    """``auto`` uses counts only once their kernels are compiled; the tests of the choice do not wait for that."""
    monkeypatch.setattr(counts_use, "compile_seconds", lambda kernels: 0.0)


def brute(predict, X, res, w):
    """(n_outputs, *grid_shape) of ``res``'s features and grids: set the columns, predict, weighted average."""
    names, grids = list(res.features), [np.asarray(g, dtype=object) for g in res.grid_values]
    shape = tuple(len(g) for g in grids)
    w = np.ones(len(X)) if w is None else np.asarray(w, dtype=float)
    out = np.empty((0,))
    for idx in np.ndindex(shape):
        Xm = X.copy()
        for k, name in enumerate(names):
            value = grids[k][idx[k]]
            if isinstance(X[name].dtype, pd.CategoricalDtype):
                Xm[name] = pd.Categorical([value] * len(X), categories=X[name].cat.categories)
            elif not pd.api.types.is_numeric_dtype(X[name].dtype):
                Xm[name] = pd.Series([value] * len(X), dtype=X[name].dtype, index=X.index)
            else:
                Xm[name] = np.full(len(X), np.nan if value is None else float(value))
        pred = np.asarray(predict(Xm), dtype=float).reshape(len(X), -1)
        out = np.concatenate([out, (w @ pred) / w.sum()])
    return out.reshape(shape + (-1,)).transpose((len(shape),) + tuple(range(len(shape))))


def every_set(names, pairs=True):
    return [[n] for n in names] + ([list(p) for p in itertools.combinations(names, 2)] if pairs else [])


def check(coll, predict, X, w, outputs=None, rtol=1e-9, atol=1e-9):
    for res in coll:
        ref = brute(predict, X, res, w)
        if outputs is not None:
            ref = ref[outputs]
        scale = atol * (1.0 + np.abs(ref).max())
        np.testing.assert_allclose(np.asarray(res.average), ref, rtol=rtol, atol=scale, err_msg=str(res.features))


def notes_of(coll) -> str:
    return " | ".join(n for r in coll for n in r.notes)


# ------------------------------------------------------------------ partial_dependence_many
def test_many_xgboost_categories_missing_float32_weights(data):
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    X, w = data["X"], data["w"]
    m = xgb.XGBRegressor(n_estimators=20, max_depth=4, enable_categorical=True, tree_method="hist",
                         random_state=0).fit(X, data["f"])
    sets = every_set(list(X.columns))
    kw = dict(sample_weight=w, grid_resolution=6)
    got = pdpx.partial_dependence_many(m, X, sets, **kw)
    assert all(r.method == "exact" for r in got)
    assert GATHERED in got[0].notes[-1] and "order 2" in got[0].notes[-1]
    assert all(KEPT in r.notes[-1] or GATHERED in r.notes[-1] for r in got)
    assert np.isnan(np.asarray(got[0].grid_values[0], dtype=float)).any()  # a's missing-value grid point
    check(got, m.predict, X, w, rtol=1e-5, atol=1e-6)
    rows = pdpx.partial_dependence_many(m, X, sets, method_options={"engine": "rows"}, **kw)
    assert "pattern counts" not in notes_of(rows)
    for a, b in zip(got, rows):
        np.testing.assert_allclose(np.asarray(a.average), np.asarray(b.average), rtol=1e-9, atol=1e-9)


def test_many_lightgbm_multi_output_margins(data):
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    X, w = data["X"], data["w"]
    m = lgb.LGBMClassifier(n_estimators=15, num_leaves=15, min_child_samples=5, random_state=0,
                           verbose=-1).fit(X, data["multi"])
    got = pdpx.partial_dependence_many(m, X, every_set(["a", "c", "z", "d"]), response="raw", sample_weight=w,
                                       grid_resolution=5)
    assert GATHERED in notes_of(got)
    assert np.asarray(got[0].average).shape[0] == 3
    check(got, lambda f: m.predict(f, raw_score=True), X, w)


def test_many_forest_probabilities_and_no_counts_for_boosted_probabilities(data):
    X = data["X"][["a", "b", "z", "d"]]
    rf = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0).fit(X, data["multi"])
    got = pdpx.partial_dependence_many(rf, X, every_set(list(X.columns)), grid_resolution=5, sample_weight=data["w"])
    assert GATHERED in notes_of(got)
    check(got, rf.predict_proba, X, data["w"])
    from sklearn.ensemble import HistGradientBoostingClassifier

    hgb = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, data["bin"])
    probs = pdpx.partial_dependence_many(hgb, X, every_set(list(X.columns), pairs=False), grid_resolution=5)
    assert probs[0].method == "exact" and "pattern counts" not in notes_of(probs)  # a logistic link: rows
    check(probs, hgb.predict_proba, X, None, outputs=[1])
    with pytest.raises(pdpx.PdpxError, match="(?s)engine.*counts.*link"):
        pdpx.partial_dependence_many(hgb, X, [["a"]], method_options={"engine": "counts"})


def test_many_pipeline_and_ensemble_rewrite(data):
    X = data["X"].fillna({"a": 0.0})
    X = X.assign(c=X["c"].astype(str))
    ct = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["c"]),
                                 (StandardScaler(), ["a", "b", "z", "d"]))
    pipe = make_pipeline(ct, RandomForestRegressor(n_estimators=6, max_depth=5, random_state=0)).fit(X, data["f"])
    got = pdpx.partial_dependence_many(pipe, X, every_set(["a", "c", "z", "d"]), grid_resolution=5,
                                       sample_weight=data["w"])
    assert GATHERED in notes_of(got)
    check(got, pipe.predict, X, data["w"])
    Xn = data["X"][["a", "b", "z", "d"]]
    vote = VotingRegressor([("h", HistGradientBoostingRegressor(max_iter=8, random_state=0)),
                            ("r", RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0))],
                           weights=[1, 3]).fit(Xn, data["f"])
    got = pdpx.partial_dependence_many(vote, Xn, every_set(list(Xn.columns)), grid_resolution=5)
    assert GATHERED in notes_of(got)
    check(got, vote.predict, Xn, None)


# ------------------------------------------------------------------ the choice and the option
def test_engine_option_forces_forbids_and_refuses(data):
    X = data["X"][["a", "b", "z", "d"]]
    m = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, data["f"])
    one = pdpx.partial_dependence(m, X, ["a"], grid_resolution=5)  # one feature set, nothing kept: rows
    assert "pattern counts" not in " ".join(one.notes)
    forced = pdpx.partial_dependence(m, X, ["a"], grid_resolution=5, method_options={"engine": "counts"})
    assert GATHERED in forced.notes[-1]
    check([forced], m.predict, X, None)
    with pytest.raises(pdpx.PdpxError, match="ICE"):
        pdpx.partial_dependence(m, X, ["a"], kind="both", method_options={"engine": "counts"})
    with pytest.raises(pdpx.PdpxError, match="one or two features"):
        pdpx.partial_dependence(m, X, ["a", "b", "z"], grid_resolution=3, method_options={"engine": "counts"})
    with pytest.raises(pdpx.PdpxError, match="expected one of"):
        pdpx.partial_dependence(m, X, ["a"], method_options={"engine": "fast"})
    ice = pdpx.partial_dependence_many(m, X, every_set(["a", "b"], pairs=False), kind="both", grid_resolution=4)
    assert "pattern counts" not in notes_of(ice)  # ICE walks the rows


def test_few_sets_walk_the_rows_and_uncompiled_kernels_are_not_waited_for(data, monkeypatch):
    X = data["X"][["a", "b", "z", "d"]]
    m = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, data["f"])
    two = pdpx.partial_dependence_many(m, X, [["a"], ["b"]], grid_resolution=5)
    assert "pattern counts" not in notes_of(two)  # a gather costs more than two row walks
    from pdpx.plugins.trees import jit

    monkeypatch.setattr(counts_use, "compile_seconds", jit.cold_seconds_of)  # as if none were compiled
    started = []
    monkeypatch.setattr("pdpx.plugins.trees.jit.compile_in_background", lambda: started.append(1) or True)
    cold = pdpx.partial_dependence_many(m, X, every_set(list(X.columns)), grid_resolution=5)
    assert "pattern counts" not in notes_of(cold)  # 150 rows: compiling would cost more than walking them
    assert started  # the kernels compile in the background for later calls
    check(cold, m.predict, X, None)
    monkeypatch.setattr("pdpx.plugins.trees.plan.ROW_TREE_SECONDS", 1.0)  # as if the rows were many: compiling pays
    hot = pdpx.partial_dependence_many(m, X, every_set(list(X.columns)), grid_resolution=5)
    assert GATHERED in notes_of(hot)
    check(hot, m.predict, X, None)


def test_counts_over_the_budget_are_not_gathered(data):
    X = data["X"][["a", "b", "z", "d"]]
    m = RandomForestRegressor(n_estimators=300, max_depth=12, random_state=0).fit(X, data["f"])
    from pdpx.core.plugins import adapt
    from pdpx.plugins.trees.counts import counts_nbytes

    need = counts_nbytes(adapt(m).tree_model("predict"), 2)
    assert need > 1.2 * 2**20, "the forest's counts must exceed the smallest budget (1 MB) for this test"
    budget = f"{int(need * 1.5) // 1024}KB"  # the counts fit the budget, but not half of it
    got = pdpx.partial_dependence_many(m, X, every_set(list(X.columns)), grid_resolution=4, memory_budget=budget)
    assert "pattern counts" not in notes_of(got)
    check(got, m.predict, X, None)
    with pytest.raises(pdpx.PdpxError, match="memory budget"):
        pdpx.partial_dependence_many(m, X, [["a", "b"]], grid_resolution=4, memory_budget="1MB",
                                     method_options={"engine": "counts"})


# ------------------------------------------------------------------ counts kept with the model
def test_kept_counts_are_reused_and_never_stale(data):
    X = data["X"][["a", "b", "z", "d"]]
    m = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, data["f"])
    pdpx.partial_dependence_many(m, X, every_set(list(X.columns)), grid_resolution=5, sample_weight=data["w"])
    again = pdpx.partial_dependence(m, X, ["b"], grid_resolution=7, sample_weight=data["w"])  # order 2 serves 1-way
    assert KEPT in again.notes[-1]
    check([again], m.predict, X, data["w"])
    other_w = pdpx.partial_dependence(m, X, ["b"], grid_resolution=7)  # other weights: not these counts
    assert "pattern counts" not in " ".join(other_w.notes)
    changed = X.copy()
    changed.iloc[3, 1] += 1.0
    moved = pdpx.partial_dependence(m, changed, ["b"], grid_resolution=7, sample_weight=data["w"])
    assert "pattern counts" not in " ".join(moved.notes)
    check([moved], m.predict, changed, data["w"])
    swapped = X.rename(columns={"a": "b", "b": "a"})[list(X.columns)]  # the same values under other names
    moved = pdpx.partial_dependence(m, swapped, ["b"], grid_resolution=7, sample_weight=data["w"])
    assert "pattern counts" not in " ".join(moved.notes)
    check([moved], m.predict, swapped, data["w"])
    m.fit(X, data["f"] ** 2)  # refit in place: the same object, new trees
    refit = pdpx.partial_dependence(m, X, ["b"], grid_resolution=7, sample_weight=data["w"])
    assert "pattern counts" not in " ".join(refit.notes)
    check([refit], m.predict, X, data["w"])


def test_a_few_pairs_are_gathered_alone_and_kept_for_those_pairs(data):
    """Four 1-way sets and two pairs (the display's benchmark): one order-2 gather counting only those two pairs
    (trees of at most 64 leaves), every set from it; the next call takes them all from the kept counts; another
    pair is not answered by them."""
    X = data["X"][["a", "b", "z", "d"]].fillna(0.0)
    # trees of at most 64 leaves too deep for the patterns kernel's histograms: the leafsets kernel gathers
    m = HistGradientBoostingRegressor(max_iter=15, max_leaf_nodes=60, min_samples_leaf=1, random_state=0).fit(
        X, data["f"])
    assert choose_kernel(adapt(m).tree_model("predict").ensemble, "auto", 1 << 28, 2) == "leafsets"
    sets = [["a"], ["b"], ["z"], ["d"], ["a", "b"], ["z", "d"]]
    got = pdpx.partial_dependence_many(m, X, sets, grid_resolution=5, sample_weight=data["w"])
    assert all(GATHERED in r.notes[-1] and "counting only its 2 pair(s)" in r.notes[-1] for r in got)
    check(got, m.predict, X, data["w"])
    again = pdpx.partial_dependence_many(m, X, sets, grid_resolution=6, sample_weight=data["w"])
    assert all(KEPT in r.notes[-1] for r in again)
    check(again, m.predict, X, data["w"])
    other = pdpx.partial_dependence(m, X, ["b", "z"], grid_resolution=5, sample_weight=data["w"])
    assert "pattern counts" not in " ".join(other.notes)  # not counted: one pair walks the rows
    check([other], m.predict, X, data["w"])
    forced = pdpx.partial_dependence(m, X, ["b", "z"], grid_resolution=5, sample_weight=data["w"],
                                     method_options={"engine": "counts"})
    assert GATHERED in forced.notes[-1]  # gathered again, for this pair
    check([forced], m.predict, X, data["w"])


# ------------------------------------------------------------------ the measures and the drop-ins
def test_importance_from_counts_equals_the_spread_of_brute_curves(data):
    X = data["X"][["a", "b", "z", "d"]]
    m = RandomForestRegressor(n_estimators=6, max_depth=5, random_state=0).fit(X, data["f"])
    imp = pdpx.importance(m, X, grid_resolution=6, sample_weight=data["w"])
    assert counts_use.counts_cache.holds(m)  # the counts path ran
    curves = pdpx.partial_dependence_many(m, X, None, grid_resolution=6, include_missing=False,
                                          sample_weight=data["w"])  # for the grids only
    for res in curves:
        ref = brute(m.predict, X, res, data["w"])[0]
        got = imp.set_index("feature").loc[res.features[0], "importance"]
        assert got == pytest.approx(np.std(ref, ddof=1), rel=1e-9)


def test_h_statistic_from_counts_equals_brute(data):
    X = data["X"][["a", "b", "z", "d"]].fillna(0.0)
    m = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, data["f"])
    got = pdpx.h_statistic(m, X, pairs=[("a", "b"), ("a", "z"), ("b", "z"), ("z", "d")])
    assert counts_use.counts_cache.holds(m)
    counts_use.counts_cache.clear()
    ref = pdpx.h_statistic(m, X, pairs=[("a", "b"), ("a", "z"), ("b", "z"), ("z", "d")], method="brute")
    assert not counts_use.counts_cache.holds(m)
    a, b = got.to_frame(), ref.to_frame()
    np.testing.assert_allclose(a.select_dtypes("number").to_numpy(), b.select_dtypes("number").to_numpy(),
                               rtol=1e-7, atol=1e-9)


def test_sklearn_display_uses_counts_and_equals_brute(data):
    pytest.importorskip("matplotlib", reason="the display draws with matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from pdpx.sklearn import PartialDependenceDisplay

    X = data["X"][["a", "b", "z", "d"]].fillna(0.0)
    m = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, data["f"])
    disp = PartialDependenceDisplay.from_estimator(m, X, ["a", "b", "z", "d", ("a", "b"), ("a", "z"), ("b", "z")],
                                                   grid_resolution=6,
                                                   method="brute", kind="average")
    assert counts_use.counts_cache.holds(m)
    for feats, bunch in zip([["a"], ["b"], ["z"], ["d"], ["a", "b"], ["a", "z"], ["b", "z"]], disp.pd_results):
        res = type("R", (), {"features": feats, "grid_values": bunch["grid_values"]})
        np.testing.assert_allclose(bunch["average"], brute(m.predict, X, res, None), rtol=1e-9, atol=1e-9)


def test_report_computes_its_pairs_from_counts(data, tmp_path):
    pytest.importorskip("plotnine", reason="the report draws with plotnine")
    X = data["X"][["a", "b", "z", "d"]].fillna(0.0)
    m = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, data["f"])
    pdpx.report(m, X, tmp_path / "r.html", interactions=[("a", "b"), ("a", "z"), ("b", "d")],
                progress=False, grid_resolution=5)
    assert counts_use.counts_cache.holds(m)


# ------------------------------------------------------------------ Dask: counts gathered per partition
def test_dask_gathers_counts_per_partition_and_equals_brute(data):
    dd = pytest.importorskip("dask.dataframe", reason="dask is not installed")
    X = data["X"][["a", "b", "z", "d"]]  # NaN kept: each partition routes it as the model does
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(X))
    m = HistGradientBoostingRegressor(max_iter=20, max_depth=3, random_state=0).fit(X.fillna(0.0), data["f"])
    ddf = dd.from_pandas(X, npartitions=3)
    sets = every_set(["a", "b", "z"])
    got = pdpx.partial_dependence_many(m, ddf, sets, grid_resolution=4)
    assert "gathered partition by partition" in notes_of(got)
    check(got, m.predict, X, None)
    weighted = pdpx.partial_dependence_many(m, ddf, sets, grid_resolution=4, sample_weight=w)
    assert "gathered partition by partition" in notes_of(weighted)
    check(weighted, m.predict, X, w)
    rows = pdpx.partial_dependence_many(m, ddf, sets, grid_resolution=4, sample_weight=w,
                                        method_options={"engine": "rows"})
    assert "pattern counts" not in notes_of(rows)
    for a, b in zip(rows, weighted):
        np.testing.assert_allclose(a.average, b.average, rtol=1e-10, atol=1e-10)


def test_dask_single_set_and_ice_walk_the_partitions(data):
    dd = pytest.importorskip("dask.dataframe", reason="dask is not installed")
    X = data["X"][["a", "b", "z", "d"]].fillna(0.0)
    m = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, data["f"])
    ddf = dd.from_pandas(X, npartitions=3)
    one = pdpx.partial_dependence_many(m, ddf, [["a"]], grid_resolution=4)
    assert "pattern counts" not in notes_of(one)  # one set: a gather costs more than one walk
    check(one, m.predict, X, None)
    with pytest.raises(pdpx.PdpxError, match="engine"):
        pdpx.partial_dependence_many(m, ddf, [["a"]], kind="both", grid_resolution=4,
                                     method_options={"engine": "counts"})
