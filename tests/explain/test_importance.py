"""pdpx.importance against Greenwell, Boehmke and McCarthy's measure computed in this file from the model's predict."""

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import PdpxError

pytest.importorskip("sklearn")
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402


def _data(n=300, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(0, 3, n), "c": rng.normal(size=n),
                      "g": pd.Categorical(rng.choice(["x", "y", "z"], n))})
    y = 2 * X.a + np.sin(3 * X.b) * X.c + X.g.map({"x": 0.0, "y": 1.5, "z": -1.0}).astype(float)
    if nan:
        X.loc[rng.random(n) < 0.2, "a"] = np.nan
    return X, y


def curves(predict, X, col, grid):
    """ICE curves by brute force: (n_rows, n_grid), column ``col`` set to each grid value."""
    copies = []
    for v in grid:
        Z = X.copy()
        Z[col] = pd.Series([v] * len(Z), index=Z.index, dtype=X[col].dtype) if isinstance(
            X[col].dtype, pd.CategoricalDtype) else v
        copies.append(Z)
    pred = np.asarray(predict(pd.concat(copies, ignore_index=True)), dtype=float)  # one call
    return pred.reshape(len(grid), len(X)).T


def grid_of(X, col):
    if isinstance(X[col].dtype, pd.CategoricalDtype):
        return list(X[col].cat.categories)
    res = pdpx.partial_dependence(lambda Z: np.zeros(len(Z)), X, col, include_missing=False)
    return list(res.grid_values[0])  # pdpx's grid (the measure's input); the curve itself is ours


def reference(predict, X, kind="pd", w=None):
    out = {}
    for col in X.columns:
        grid = grid_of(X, col)
        ice = curves(predict, X, col, grid)
        cat = isinstance(X[col].dtype, pd.CategoricalDtype)

        def measure(c, cat=cat):
            return (c.max(axis=-1) - c.min(axis=-1)) / 4 if cat else c.std(axis=-1, ddof=1)

        if kind == "pd":
            out[col] = measure(np.average(ice, axis=0, weights=w))
        else:
            out[col] = np.average(measure(ice), weights=w)
    return out


def test_pd_importance_equals_definition():
    X, y = _data()
    m = HistGradientBoostingRegressor(max_iter=30, categorical_features="from_dtype", random_state=0).fit(X, y)
    imp = pdpx.importance(m, X)
    ref = reference(m.predict, X)
    assert list(imp.columns[:3]) == ["feature", "output", "importance"]
    assert imp.importance.is_monotonic_decreasing
    assert imp.set_index("feature").loc["g", "feature_type"] == "categorical"
    for col, v in ref.items():
        assert imp.set_index("feature").loc[col, "importance"] == pytest.approx(v, abs=1e-9)


def test_ice_importance_equals_definition_with_weights():
    X, y = _data(n=120, seed=1)
    m = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype", random_state=0).fit(X, y)
    w = np.random.default_rng(0).uniform(0.5, 2, len(X))
    imp = pdpx.importance(m, X, kind="ice", sample_weight=w)
    ref = reference(m.predict, X, kind="ice", w=w)
    for col, v in ref.items():
        assert imp.set_index("feature").loc[col, "importance"] == pytest.approx(v, abs=1e-9)
    # c acts only through its product with sin(3 b): its ICE spread exceeds its PD spread
    pdv = pdpx.importance(m, X, sample_weight=w).set_index("feature").importance
    assert imp.set_index("feature").importance["c"] > pdv["c"]


def test_missing_point_never_enters_the_measure():
    X, y = _data(seed=2, nan=True)
    m = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype", random_state=0).fit(X, y)
    with_point = pdpx.importance(m, X, ["a"], include_missing=True)
    without = pdpx.importance(m, X, ["a"])
    grid = grid_of(X, "a")
    ref = curves(m.predict, X, "a", grid).mean(axis=0).std(ddof=1)
    assert with_point.importance.iloc[0] == pytest.approx(ref, abs=1e-9)
    assert without.importance.iloc[0] == pytest.approx(ref, abs=1e-9)
    assert with_point.n_grid.iloc[0] == len(grid)


def test_linear_model_ranks_by_slope_times_spread():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.uniform(0, 1, size=(200, 3)), columns=["p", "q", "r"])
    m = LinearRegression().fit(X, 5 * X.p + 1 * X.q + 0.1 * X.r)
    imp = pdpx.importance(m, X, grid_resolution=11, percentiles=(0, 1))
    assert list(imp.feature) == ["p", "q", "r"]
    g = np.linspace(X.p.min(), X.p.max(), 11)
    assert imp.importance.iloc[0] == pytest.approx(5 * g.std(ddof=1), rel=1e-6)


def test_outputs_and_skipped_constant_columns():
    X, y = _data(seed=4)
    X["k"] = 1.0
    m = HistGradientBoostingClassifier(max_iter=10, categorical_features="from_dtype", random_state=0)
    m.fit(X, pd.qcut(y, 3, labels=["lo", "mid", "hi"]))
    imp = pdpx.importance(m, X)
    assert "k" not in set(imp.feature) and "k" in imp.attrs["skipped"]
    assert len(imp) == 4 * 3 and imp.output.nunique() == 3


def test_plot_importance():
    pytest.importorskip("plotnine")
    X, y = _data(seed=5)
    m = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype").fit(X, y)
    imp = pdpx.importance(m, X)
    p = pdpx.plot_importance(imp)
    p.draw()
    from pdpx.outputs.plot import layer_data

    bars = layer_data(p, 0)
    assert len(bars) == 4
    with pytest.raises(PdpxError, match="pass the DataFrame pdpx.importance returns"):
        pdpx.plot_importance(pd.DataFrame({"x": [1]}))


@pytest.mark.parametrize("kwargs, match", [
    (dict(kind="median"), "kind must be one of"),
    (dict(features=["zz"]), "unknown feature 'zz'"),
    (dict(features=[]), "features is empty"),
    (dict(centered=True), "kind='pd' or 'ice'"),
    (dict(ice_sample=10), "ice_sample applies to kind='ice'"),
    (dict(colour=1), "unknown option"),
])
def test_bad_inputs(kwargs, match):
    X, y = _data(seed=6)
    m = HistGradientBoostingRegressor(max_iter=5, categorical_features="from_dtype").fit(X, y)
    with pytest.raises((PdpxError, TypeError), match=match):
        pdpx.importance(m, X, **kwargs)
