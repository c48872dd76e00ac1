"""Columns of narrow floats (numpy float32 / float16, pandas ``Float32``): grids hold the values the column holds.

A value written into such a column is rounded to its type, so the model receives the
rounded value. Every grid (default, ``grid="thresholds"``, ``custom_values``) is reported
as those values, and ``exact``, ``auto`` and ``brute`` each equal the definition computed
here by hand at the reported values: the column set (keeping its dtype) to the value, the
model's own predict, the average. Split thresholds are read from each library's own model
(``trees_to_dataframe``, the fitted tree arrays), never from pdpx.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import PdpxError

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeRegressor  # noqa: E402

N = 300
DTYPES = ["float32", "Float32", "float16"]
MODELS = ["lightgbm", "hgb", "pipeline", "xgboost"]


def numpy_type(dtype: str):
    return np.float16 if dtype == "float16" else np.float32


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.normal(size=N) * 3, "b": rng.normal(size=N), "c": rng.uniform(size=N)})
    y = np.sin(X.a) * 2 + X.b * X.c + (X.a > 0.7) + rng.normal(scale=0.1, size=N)
    return X, y.to_numpy()


_FITTED: dict = {}


def fitted(name: str, dtype: str, data):
    """(model, X in ``dtype``) fitted once per module."""
    key = (name, dtype)
    if key not in _FITTED:
        X, y = data
        Xd = X.astype(dtype)
        fit_on = Xd.astype("float32") if dtype == "Float32" else Xd
        if name == "lightgbm":
            model = lgb.LGBMRegressor(n_estimators=25, num_leaves=15, verbose=-1).fit(fit_on, y)
        elif name == "hgb":
            model = HistGradientBoostingRegressor(max_iter=25, random_state=0).fit(fit_on, y)
        elif name == "pipeline":
            model = make_pipeline(StandardScaler(), DecisionTreeRegressor(max_depth=6, random_state=0)).fit(fit_on, y)
        else:
            model = xgb.XGBRegressor(n_estimators=25, max_depth=4).fit(fit_on, y)
        _FITTED[key] = (model, Xd)
    return _FITTED[key]


def splits(model, name: str) -> np.ndarray:
    """The split thresholds on column ``a`` (float64, in the column's own units), from the library itself."""
    if name == "lightgbm":
        df = model.booster_.trees_to_dataframe()
        t = df.loc[df.split_feature == "a", "threshold"].to_numpy(dtype=np.float64)
    elif name == "xgboost":
        df = model.get_booster().trees_to_dataframe()
        t = df.loc[df.Feature == "a", "Split"].to_numpy(dtype=np.float64)
    elif name == "hgb":
        t = np.concatenate([
            p.nodes["num_threshold"][(p.nodes["is_leaf"] == 0) & (p.nodes["feature_idx"] == 0)]
            for preds in model._predictors for p in preds])
    else:
        scaler, tree = model[0], model[-1].tree_
        z = tree.threshold[(tree.children_left >= 0) & (tree.feature == 0)]
        t = z * scaler.scale_[0] + scaler.mean_[0]  # back to the column's units (within an ulp or two)
    return np.unique(t[np.isfinite(t)])


def near(t: np.ndarray, dtype: str) -> np.ndarray:
    """Values within one or two units in the last place of ``t``: in float64, and in the column's type."""
    nt = numpy_type(dtype)
    with np.errstate(over="ignore"):
        tn = t.astype(nt)
    up, down = nt(np.inf), nt(-np.inf)
    vals = [t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), tn.astype(np.float64)]
    for side in (up, down):
        one = np.nextafter(tn, side)
        vals += [one.astype(np.float64), np.nextafter(one, side).astype(np.float64)]
    v = np.concatenate(vals)
    return np.unique(v[np.isfinite(v)])


def definition(model, X: pd.DataFrame, f: str, values) -> np.ndarray:
    """PD of ``f`` at each of ``values``: every row with ``f`` set to the value (the column keeps its dtype, and
    the value must be one it holds), the model's own predict, the average."""
    values = np.asarray(values, dtype=np.float64)
    n, k = len(X), len(values)
    Z = X.iloc[np.tile(np.arange(n), k)].reset_index(drop=True)
    col = pd.array(np.repeat(values, n), dtype=X[f].dtype)
    Z[f] = col
    assert Z[f].dtype == X[f].dtype
    written = Z[f].to_numpy(dtype=np.float64, na_value=np.nan)
    np.testing.assert_array_equal(written, np.repeat(values, n))  # the column holds each value exactly
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = np.asarray(model.predict(Z), dtype=np.float64)
    return pred.reshape(k, n).mean(axis=1)


def assert_held(grid, dtype: str):
    g = np.asarray(grid, dtype=np.float64)
    np.testing.assert_array_equal(g.astype(numpy_type(dtype)).astype(np.float64), g)


def tolerance(name: str) -> dict:
    return dict(rtol=1e-5, atol=1e-5) if name == "xgboost" else dict(rtol=1e-9, atol=1e-9)  # XGBoost sums in float32


def run(model, X, method, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pdpx.partial_dependence(model, X, ["a"], method=method, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", MODELS)
def test_threshold_grid_of_a_narrow_column_is_its_values_and_every_method_equals_the_definition(data, name, dtype):
    model, X = fitted(name, dtype, data)
    results = {m: run(model, X, m, grid="thresholds") for m in ("exact", "auto", "brute")}
    assert results["exact"].method == "exact", results["exact"].notes
    grid = np.asarray(results["exact"].grid_values[0], dtype=np.float64)
    assert grid.size > 10 and np.all(np.diff(grid) > 0)
    assert_held(grid, dtype)
    want = definition(model, X, "a", grid)
    for method, res in results.items():
        np.testing.assert_array_equal(res.grid_values[0], grid)
        np.testing.assert_allclose(res.average[0], want, err_msg=method, **tolerance(name))
    # one point on every step: at values one or two ulps either side of each split (as the column holds them),
    # the definition equals the grid point standing for the value's step
    t = splits(model, name)
    rng = np.random.default_rng(0)
    t = t[np.sort(rng.choice(t.size, size=min(t.size, 25), replace=False))]
    v = np.unique(near(t, dtype).astype(numpy_type(dtype)).astype(np.float64))
    comparison = results["exact"].steps["a"]
    idx = (np.minimum(np.searchsorted(grid, v, side="left"), grid.size - 1) if comparison == "<="
           else np.maximum(np.searchsorted(grid, v, side="right") - 1, 0))
    np.testing.assert_allclose(definition(model, X, "a", v), want[idx], **tolerance(name))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", MODELS)
def test_custom_values_within_an_ulp_of_a_split_are_rounded_to_the_column_and_reported_so(data, name, dtype):
    model, X = fitted(name, dtype, data)
    t = splits(model, name)
    given = near(t[:: max(1, t.size // 6)], dtype)
    held = np.unique(given.astype(numpy_type(dtype)).astype(np.float64))
    results = {m: run(model, X, m, custom_values={"a": list(given)}) for m in ("exact", "auto", "brute")}
    assert results["exact"].method == "exact", results["exact"].notes
    want = definition(model, X, "a", held)
    for method, res in results.items():
        np.testing.assert_array_equal(res.grid_values[0], held)  # the values the model received, each once
        np.testing.assert_allclose(res.average[0], want, err_msg=method, **tolerance(name))
        notes = [n for n in res.notes if n.startswith("custom_values for 'a'")]
        assert len(notes) == 1 and numpy_type(dtype).__name__ in notes[0], res.notes


@pytest.mark.parametrize("dtype", DTYPES)
def test_default_grid_of_a_narrow_column_holds_its_values(data, dtype):
    model, X = fitted("lightgbm", dtype, data)
    results = {m: run(model, X, m, grid_resolution=60) for m in ("exact", "brute")}
    grid = np.asarray(results["exact"].grid_values[0], dtype=np.float64)
    assert_held(grid, dtype)
    assert np.all(np.diff(grid) > 0)
    want = definition(model, X, "a", grid)
    for res in results.values():
        np.testing.assert_allclose(res.average[0], want, rtol=1e-9, atol=1e-9)


def test_float16_values_that_collapse_are_kept_once():
    X = pd.DataFrame({"a": np.linspace(1000, 1003, 200).astype(np.float16), "b": np.arange(200.0)})
    model = lgb.LGBMRegressor(n_estimators=5, verbose=-1, min_child_samples=5).fit(X, X.a.astype(float) + X.b)
    res = run(model, X, "auto", grid_resolution=100)  # float16 holds 1000, 1000.5, ..., 1003 here: 7 values
    np.testing.assert_array_equal(res.grid_values[0], np.arange(1000, 1003.5, 0.5))
    np.testing.assert_allclose(res.average[0], definition(model, X, "a", res.grid_values[0]), rtol=1e-9)


def test_a_custom_value_beyond_the_columns_range_is_refused():
    X = pd.DataFrame({"a": np.linspace(0, 10, 50).astype(np.float16), "b": np.arange(50.0)})
    model = lgb.LGBMRegressor(n_estimators=3, verbose=-1, min_child_samples=5).fit(X, np.arange(50.0))
    with pytest.raises(PdpxError, match="beyond what its float16 column can hold"):
        run(model, X, "auto", custom_values={"a": [1.0, 1e5]})


def test_custom_values_the_column_holds_get_no_note(data):
    model, X = fitted("lightgbm", "float32", data)
    res = run(model, X, "auto", custom_values={"a": [0.5, 1.25, -2.0]})
    np.testing.assert_array_equal(res.grid_values[0], [0.5, 1.25, -2.0])
    assert not any("custom_values" in n for n in res.notes)


def test_missing_point_of_a_nullable_float32_column(data):
    model, X = fitted("lightgbm", "Float32", data)
    X = X.copy()
    X.loc[::7, "a"] = pd.NA
    out = {m: run(model, X, m, grid="thresholds", include_missing=True) for m in ("exact", "brute")}
    grid = np.asarray(out["exact"].grid_values[0], dtype=np.float64)
    assert np.isnan(grid[-1])
    assert_held(grid[:-1], "Float32")
    want = definition(model, X, "a", grid)  # NaN written into a Float32 column: missing
    for res in out.values():
        np.testing.assert_allclose(res.average[0], want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", ["int64", "int8", "Int64"])
def test_a_non_integer_custom_value_of_an_integer_column_is_given_as_a_float(dtype):
    """2.5 does not fit an integer column: every method gives the model a float column holding 2.5 (the column's
    values unchanged), and the grid reports 2.5."""
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.integers(0, 10, 200), "b": rng.normal(size=200)}).astype({"a": dtype})
    model = lgb.LGBMRegressor(n_estimators=10, verbose=-1, min_child_samples=3).fit(X, X.a * 1.0 + (X.a > 4) * 3)
    values = [1.5, 4.5, 4.75, 300.0]
    want = []
    for v in values:
        Z = X.copy()
        Z["a"] = np.full(len(Z), v)
        want.append(model.predict(Z).mean())
    for method in ("exact", "brute"):
        res = run(model, X, method, custom_values={"a": values})
        assert res.method == method
        np.testing.assert_array_equal(res.grid_values[0], values)
        np.testing.assert_allclose(res.average[0], want, rtol=1e-9)
