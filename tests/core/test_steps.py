"""``grid="thresholds"``: one grid point per step of a tree model's partial dependence, so the result is the curve.

The reference is the definition, computed here: every row of X with the target
columns set to a value, the library's own prediction, the (weighted) average.
For values of the feature drawn at random (and one float either side of every grid
point), the PD there equals the PD the threshold-grid result holds at the point
standing for the value's step (:func:`representative`, the rule ``res.steps``
documents). Libraries that round inputs to float32 compare float32 values: the
representative is taken of the value the model compares, and they agree to
float32 precision. Which libraries round (scikit-learn's trees, forests and
gradient boosting, XGBoost) and which compare float64 values (scikit-learn's
HistGradientBoosting, LightGBM, a pipeline's rewritten trees on the raw columns) is
written here, not read from pdpx.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx import PdpxError

sk = pytest.importorskip("sklearn", reason="scikit-learn is not installed")

from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
    VotingRegressor,
)
from sklearn.neural_network import MLPRegressor  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeRegressor  # noqa: E402

N = 150


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.uniform(-2, 2, N), "c": rng.integers(0, 6, N).astype(float)})
    X.loc[rng.random(N) < 0.25, "b"] = 0.0  # zeros: a zero-as-missing model routes them apart
    y = 2 * X["a"] + np.sin(2 * X["b"]) + 0.3 * X["c"] + rng.normal(scale=0.1, size=N)
    w = rng.uniform(0, 2, N)
    w[::7] = 0.0
    return X, y.to_numpy(), w


def representative(grid, v, comparison, zero_missing=False):
    """The grid point standing for value ``v``: for ``<=`` the first point at or above ``v`` (the last point
    for values above it), for ``<`` the last point at or below ``v`` (the first for values below it). Where
    the model reads zero as missing, the values it reads as zero (``|v| <= 1e-35``) are the point 0."""
    if comparison == "<=":
        i = np.minimum(np.searchsorted(grid, v, side="left"), grid.size - 1)
    else:
        i = np.maximum(np.searchsorted(grid, v, side="right") - 1, 0)
    if zero_missing:
        i = np.where(np.abs(v) <= 1e-35, int(np.flatnonzero(grid == 0.0)[0]), i)
    return i


def brute(predict, X, values: dict, w=None):
    """PD at each combination of ``values`` (a dict feature -> array), from the definition."""
    names = list(values)
    shape = tuple(len(values[f]) for f in names)
    out = np.empty(shape)
    for idx in np.ndindex(*shape):
        Z = X.copy()
        for f, i in zip(names, idx):
            Z[f] = float(values[f][i])
        out[idx] = np.average(np.asarray(predict(Z), dtype=np.float64).reshape(len(X), -1)[:, -1], weights=w)
    return out


def probes(grid, X, f, rng, n=12):
    """Values of feature ``f``: random ones over (and beyond) its range, and one float either side of grid points."""
    lo, hi = float(X[f].min()), float(X[f].max())
    span = hi - lo
    g = grid[rng.choice(grid.size, size=min(4, grid.size), replace=False)]
    return np.unique(np.concatenate([rng.uniform(lo - 0.2 * span, hi + 0.2 * span, n),
                                     np.nextafter(g, np.inf), np.nextafter(g, -np.inf)]))


def compared(v, float32):
    return v.astype(np.float32).astype(np.float64) if float32 else v


def check_oneway(model, predict, X, f, w=None, float32=False, rtol=1e-10, seed=0, zero_missing=False):
    res = pdpx.partial_dependence(model, X, f, grid="thresholds", sample_weight=w)
    assert res.grid_kind == "thresholds" and set(res.steps) == {f}
    grid = np.asarray(res.grid_values[0], dtype=np.float64)
    assert grid.size >= 2 and np.all(np.diff(grid) > 0)
    v = probes(grid, X, f, np.random.default_rng(seed))
    rep = representative(grid, compared(v, float32), res.steps[f], zero_missing)
    expected = brute(predict, X, {f: v}, w)
    np.testing.assert_allclose(res.average[-1][rep], expected, rtol=rtol, atol=rtol)
    # and at the grid itself, the result is the model's PD (not only consistent with itself)
    np.testing.assert_allclose(res.average[-1], brute(predict, X, {f: grid}, w), rtol=rtol, atol=rtol)
    return res


def check_twoway(model, predict, X, f1, f2, float32=False, rtol=1e-10, seed=1, zero_missing=False):
    res = pdpx.partial_dependence(model, X, [f1, f2], grid="thresholds")
    assert set(res.steps) == {f1, f2}
    g1, g2 = (np.asarray(g, dtype=np.float64) for g in res.grid_values)
    rng = np.random.default_rng(seed)
    v1, v2 = probes(g1, X, f1, rng, 5), probes(g2, X, f2, rng, 5)
    r1 = representative(g1, compared(v1, float32), res.steps[f1], zero_missing)
    r2 = representative(g2, compared(v2, float32), res.steps[f2], zero_missing)
    expected = brute(predict, X, {f1: v1, f2: v2})
    np.testing.assert_allclose(res.average[-1][np.ix_(r1, r2)], expected, rtol=rtol, atol=rtol)


# ------------------------------------------------------------------ scikit-learn
SKLEARN = {
    "tree": lambda: DecisionTreeRegressor(max_depth=5, random_state=0),
    "gb": lambda: GradientBoostingRegressor(n_estimators=15, max_depth=3, random_state=0),
    "hgb": lambda: HistGradientBoostingRegressor(max_iter=15, max_depth=3, random_state=0),
    "forest": lambda: RandomForestRegressor(n_estimators=8, max_depth=4, random_state=0),
    "pipeline": lambda: make_pipeline(StandardScaler(), GradientBoostingRegressor(n_estimators=10, max_depth=3,
                                                                                    random_state=0)),
    "voting": lambda: VotingRegressor([("t", DecisionTreeRegressor(max_depth=4, random_state=0)),
                                       ("g", GradientBoostingRegressor(n_estimators=8, random_state=0))]),
}


@pytest.mark.parametrize("name", sorted(SKLEARN))
def test_sklearn_oneway_is_the_curve(data, name):
    X, y, w = data
    model = SKLEARN[name]().fit(X, y)
    f32 = name not in ("pipeline", "hgb")  # scikit-learn's trees compare float32 inputs (not HGB, not scaled ones)
    check_oneway(model, model.predict, X, "a", w=w, float32=f32)
    check_oneway(model, model.predict, X, "b", float32=f32)


@pytest.mark.parametrize("name", ["gb", "hgb", "pipeline", "voting"])
def test_sklearn_twoway_is_the_surface(data, name):
    X, y, _ = data
    model = SKLEARN[name]().fit(X, y)
    check_twoway(model, model.predict, X, "a", "b", float32=name not in ("pipeline", "hgb"))


def test_classifier_probabilities_step_where_the_margins_do(data):
    X, y, _ = data
    model = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y > np.median(y))
    check_oneway(model, model.predict_proba, X, "a", float32=True)


def test_ice_curves_are_step_functions_too(data):
    X, y, _ = data
    model = GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(model, X, "a", grid="thresholds", kind="individual", ice_sample=5)
    grid = np.asarray(res.grid_values[0])
    v = probes(grid, X, "a", np.random.default_rng(5))
    rep = representative(grid, v.astype(np.float32).astype(np.float64), res.steps["a"])
    for k, row in enumerate(res.ice_rows):
        Z = pd.DataFrame(np.repeat(X.iloc[[row]].to_numpy(), v.size, axis=0), columns=X.columns)
        Z["a"] = v
        np.testing.assert_allclose(res.individual[0, k][rep], model.predict(Z), rtol=1e-10)


# ------------------------------------------------------------------ float32 libraries
def test_xgboost_float32_thresholds(data):
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    X, y, w = data
    model = xgb.XGBRegressor(n_estimators=15, max_depth=3, tree_method="exact").fit(X, y)
    check_oneway(model, model.predict, X, "a", w=w, float32=True, rtol=1e-5)
    check_twoway(model, model.predict, X, "a", "b", float32=True, rtol=1e-5)


def test_lightgbm_zero_as_missing(data):
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    X, y, _ = data
    model = lgb.LGBMRegressor(n_estimators=15, num_leaves=8, min_child_samples=5, zero_as_missing=True,
                              verbose=-1).fit(X, y)
    res = check_oneway(model, model.predict, X, "b", rtol=1e-9, zero_missing=True)  # it compares float64 values
    assert 0.0 in res.grid_values[0]  # zero is a step of its own: it goes the missing way
    check_twoway(model, model.predict, X, "a", "b", rtol=1e-9, zero_missing=True)


# ------------------------------------------------------------------ what the option decides
def test_custom_values_win_and_categories_keep_their_levels(data):
    X, y, _ = data
    Xc = X.assign(k=pd.Categorical(np.where(X["c"] > 2, "hi", "lo")))
    model = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype", random_state=0).fit(Xc, y)
    coll = pdpx.partial_dependence_many(model, Xc, ["a", "k", ("a", "k")], grid="thresholds",
                                        custom_values={"c": [1.0, 2.0]})
    assert coll[0].steps == {"a": "<="}
    assert coll[1].steps == {} and list(coll[1].grid_values[0]) == ["hi", "lo"]
    assert coll[2].steps == {"a": "<="} and list(coll[2].grid_values[1]) == ["hi", "lo"]
    res = pdpx.partial_dependence(model, Xc, "c", grid="thresholds", custom_values={"c": [1.0, 2.0]})
    assert res.steps == {} and res.grid_values[0].tolist() == [1.0, 2.0]


def test_a_feature_no_tree_splits_on_gets_its_range_and_a_note(data):
    X, y, _ = data
    model = DecisionTreeRegressor(max_depth=1, random_state=0).fit(X, y)  # one split, on one feature
    used = X.columns[model.tree_.feature[0]]
    flat = next(c for c in X.columns if c != used)
    res = pdpx.partial_dependence(model, X, flat, grid="thresholds")
    assert res.grid_values[0].tolist() == [X[flat].min(), X[flat].max()]
    assert any("no tree splits on" in n for n in res.notes)
    np.testing.assert_allclose(res.average[0], brute(model.predict, X, {flat: res.grid_values[0]}))


def test_a_model_without_readable_trees_is_refused_with_what_to_do(data):
    X, y, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MLPRegressor(hidden_layer_sizes=(3,), max_iter=20, random_state=0).fit(X, y)
    with pytest.raises(PdpxError, match=r"grid='thresholds' reads the split thresholds.*grid='uniform'"):
        pdpx.partial_dependence(model, X, "a", grid="thresholds")
    with pytest.raises(PdpxError, match="grid"):
        pdpx.partial_dependence(model, X, "a", grid="quantile")


def test_a_large_two_way_grid_says_how_large_and_how_to_fit(data):
    X, y, _ = data
    model = GradientBoostingRegressor(n_estimators=30, max_depth=4, random_state=0).fit(X, y)
    with pytest.raises(PdpxError, match=r"(?s)\d+ x \d+ grid.*over the memory budget.*grid='uniform'"):
        pdpx.partial_dependence(model, pd.concat([X] * 40), ["a", "b"], grid="thresholds", kind="individual",
                                memory_budget="1MB")


def test_the_frame_says_it_is_a_step_curve(data):
    X, y, _ = data
    model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(model, X, "a", grid="thresholds")
    assert res.to_frame().attrs["steps"] == {"a": "<="}
    plain = pdpx.partial_dependence(model, X, "a")
    assert plain.grid_kind == "values" and plain.to_frame().attrs["steps"] == {}


# ------------------------------------------------------------------ the figures draw the step function
def drawn(xs, ys, direction, x):
    """The value a ``geom_step`` through (xs, ys) draws at ``x``: "vh" rises at x[k] to y[k+1], "hv" at x[k+1]."""
    if direction == "vh":
        return ys[np.minimum(np.searchsorted(xs, x, side="left"), xs.size - 1)]
    return ys[np.maximum(np.searchsorted(xs, x, side="right") - 1, 0)]


def step_layer(p, name):
    from plotnine import geom_step

    from pdpx.outputs.plot import layer_names

    layers = [layer for layer, n in zip(p.layers, layer_names(p)) if n == name]
    steps = [la for la in layers if isinstance(la.geom, geom_step)]
    assert len(steps) == 1, f"{name}: {[type(la.geom).__name__ for la in layers]}"
    return steps[0]


def model_cases(data):
    X, y, _ = data
    yield DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y), "<="
    try:
        import xgboost as xgb
    except ImportError:
        return
    yield xgb.XGBRegressor(n_estimators=5, max_depth=3, tree_method="exact").fit(X, y), "<"


def test_the_pd_and_ice_lines_are_the_models_step_function(data):
    pytest.importorskip("plotnine", reason="plotnine is not installed")
    X = data[0]
    for model, comparison in model_cases(data):
        res = pdpx.partial_dependence(model, X, "a", grid="thresholds", kind="both", ice_sample=3)
        assert res.steps == {"a": comparison}
        p = res.plot()
        want = {"<=": "vh", "<": "hv"}[comparison]
        line = step_layer(p, "pd_line")
        assert line.geom.params["direction"] == want
        d = line.geom.data.sort_values("x")
        xs, ys = d["x"].to_numpy(), d["yhat"].to_numpy()
        assert xs[0] <= X["a"].min() and xs[-1] >= X["a"].max()  # the outer steps reach the data's ends
        v = np.random.default_rng(2).uniform(X["a"].min(), X["a"].max(), 25)
        np.testing.assert_allclose(drawn(xs, ys, want, v), brute(model.predict, X, {"a": v}), rtol=1e-5)
        ice = step_layer(p, "ice").geom.data
        row = ice[ice["row"] == ice["row"].iloc[0]].sort_values("x")
        Z = pd.DataFrame(np.repeat(X.iloc[[int(row["row"].iloc[0])]].to_numpy(), v.size, axis=0), columns=X.columns)
        Z["a"] = v
        np.testing.assert_allclose(drawn(row["x"].to_numpy(), row["yhat"].to_numpy(), want, v), model.predict(Z),
                                   rtol=1e-5)


def test_two_way_tiles_span_the_steps(data):
    pytest.importorskip("plotnine", reason="plotnine is not installed")
    X = data[0]
    for model, comparison in model_cases(data):
        res = pdpx.partial_dependence(model, X, ["a", "b"], grid="thresholds")
        assert res.steps == {"a": comparison, "b": comparison}
        p = res.plot()
        from pdpx.outputs.plot import layer_names

        assert "contours" not in layer_names(p)
        tiles = p.layers[layer_names(p).index("tiles")].geom.data
        rng = np.random.default_rng(4)
        va, vb = rng.uniform(X["a"].min(), X["a"].max(), 6), rng.uniform(X["b"].min(), X["b"].max(), 6)
        expected = brute(model.predict, X, {"a": va, "b": vb})
        for i, a in enumerate(va):
            for k, b in enumerate(vb):
                hit = tiles[(tiles["xmin"] < a) & (a < tiles["xmax"]) & (tiles["ymin"] < b) & (b < tiles["ymax"])]
                assert len(hit) == 1
                np.testing.assert_allclose(hit["yhat"].iloc[0], expected[i, k], rtol=1e-5)


def test_support_counts_the_rows_of_each_step(data):
    X, y, _ = data
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(model, X, "a", grid="thresholds")
    grid = np.asarray(res.grid_values[0])
    x32 = X["a"].to_numpy().astype(np.float32).astype(np.float64)
    step = representative(grid, x32, "<=")  # float32 grid points: each row's value as the model compares it
    np.testing.assert_array_equal(res.support, np.bincount(step, minlength=grid.size))
    assert not res.unsupported.any()


def test_cli_grid_thresholds(data, tmp_path):
    from click.testing import CliRunner

    from pdpx.cli import main

    X, y, _ = data
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    pd.to_pickle(model, tmp_path / "m.pkl")
    X.to_csv(tmp_path / "x.csv", index=False)
    out = CliRunner().invoke(main, ["pd", "--allow-pickle", str(tmp_path / "m.pkl"), str(tmp_path / "x.csv"), "--feature", "a",
                                    "--grid", "thresholds", "-o", str(tmp_path / "pd.csv")])
    assert out.exit_code == 0, out.output
    table = pd.read_csv(tmp_path / "pd.csv")
    res = pdpx.partial_dependence(model, X, "a", grid="thresholds")
    np.testing.assert_allclose(table["x_1"], res.grid_values[0])
    np.testing.assert_allclose(table["yhat"], brute(model.predict, X, {"a": res.grid_values[0]}))


def test_models_side_by_side_and_groups_keep_their_steps(data):
    pytest.importorskip("plotnine", reason="plotnine is not installed")
    from plotnine import geom_step

    X, y, _ = data
    models = dict(model_cases(data))
    named = {f"m{i}": m for i, m in enumerate(models)}
    res = pdpx.partial_dependence(named, X, "a", grid="thresholds")
    assert [r.steps for r in res.results] == [{"a": c} for c in models.values()]
    directions = {la.geom.params["direction"] for la in res.plot().layers if isinstance(la.geom, geom_step)}
    assert directions == {{"<=": "vh", "<": "hv"}[c] for c in models.values()}
    tree = next(iter(models))
    by = pdpx.partial_dependence(tree, X, "a", grid="thresholds", by="c", by_bins=2)
    for r, (_, rows) in zip(by.results, X.groupby(pd.cut(X["c"], [-1, 2.5, 10]), observed=True)):
        assert r.steps == {"a": "<="}
        grid = np.asarray(r.grid_values[0])
        x32 = rows["a"].to_numpy().astype(np.float32).astype(np.float64)
        np.testing.assert_array_equal(r.support, np.bincount(representative(grid, x32, "<="), minlength=grid.size))


def test_the_missing_value_point_sits_past_the_outer_step(data):
    pytest.importorskip("plotnine", reason="plotnine is not installed")
    X, y, _ = data
    Xm = X.assign(a=X["a"].where(np.arange(len(X)) % 9 != 0))
    model = HistGradientBoostingRegressor(max_iter=10, max_depth=3, random_state=0).fit(Xm, y)
    res = pdpx.partial_dependence(model, Xm, "a", grid="thresholds")
    assert np.isnan(res.grid_values[0][-1])  # include_missing="auto": the model accepts missing values
    p = res.plot()
    from pdpx.outputs.plot import layer_names

    line = step_layer(p, "pd_line").geom.data
    point = p.layers[layer_names(p).index("pd_categories")].geom.data
    assert line["x"].max() >= Xm["a"].max() and (point["x"] > line["x"].max()).all()


@pytest.mark.parametrize("dtype", ["int64", "Int64", "int8"])
@pytest.mark.parametrize("library", ["sklearn", "hgb", "lightgbm", "xgboost"])
def test_thresholds_of_an_integer_column_are_integers_on_both_sides(library, dtype):
    """An integer column holds no 0.5: its steps are integers, and every method equals the definition there."""
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.tree import DecisionTreeRegressor

    from tests.treetools import by_definition

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=150), "k": rng.integers(-3, 8, 150)}).astype({"k": dtype})
    y = (X["k"] > 0).astype(float) + X["a"] + (X["k"] > 4)
    if library == "sklearn":
        model = DecisionTreeRegressor(max_depth=3, random_state=0)
    elif library == "hgb":
        model = HistGradientBoostingRegressor(max_iter=10)
    elif library == "lightgbm":
        model = pytest.importorskip("lightgbm").LGBMRegressor(n_estimators=10, min_child_samples=5, verbose=-1)
    else:
        model = pytest.importorskip("xgboost").XGBRegressor(n_estimators=10, max_depth=3)
    model.fit(X, y)
    for method in ("exact", "brute", "auto"):
        res = pdpx.partial_dependence(model, X, ["k"], grid="thresholds", method=method)
        grid = res.grid_values[0]
        assert np.array_equal(grid, np.round(grid)) and len(grid) >= 3, grid
        want = by_definition(model, X, "k", grid).ravel()
        np.testing.assert_allclose(res.average.ravel(), want, rtol=1e-6, atol=1e-6)
