"""The scikit-learn drop-in on a feature that holds NaN (no custom_values given): scikit-learn's grid then
holds NaN (a point per distinct value plus NaN when the column has few values; every point NaN when its
percentiles are NaN), and pdpx answered "custom_values contains NaN". Now the NaN grid point is pdpx's
missing-value point; every case is compared with scikit-learn's brute and with the definition.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402
from sklearn.inspection import partial_dependence as sk_pd  # noqa: E402

from pdpx.sklearn import partial_dependence as pdpx_pd  # noqa: E402


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": np.round(rng.normal(size=150)), "b": rng.normal(size=150), "c": rng.normal(size=150)})
    X.loc[::7, "a"] = np.nan
    X.loc[::5, "c"] = np.nan
    y = np.nan_to_num(X["a"].to_numpy(), nan=-1.0) + X["b"].to_numpy() + np.nan_to_num(X["c"].to_numpy())
    return HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y), X


def definition(model, X, features, grids):
    """The average of the model's predict with ``features`` set to each point of the product of ``grids``."""
    out = np.empty([len(g) for g in grids])
    for idx in np.ndindex(*out.shape):
        Z = X.copy()
        for f, g, i in zip(features, grids, idx):  # the column keeps its dtype
            Z[f] = pd.array(np.repeat(g[i], len(Z)), dtype=X[f].dtype)
        out[idx] = model.predict(Z).mean()
    return out


@pytest.mark.parametrize("features", [["a"], ["c"], ["a", "b"], ["a", "c"]])
@pytest.mark.parametrize("kind", ["average", "both"])
def test_nan_feature_equals_scikit_learn(case, features, kind):
    model, X = case
    theirs = sk_pd(model, X, features, method="brute", kind=kind, grid_resolution=6)
    mine = pdpx_pd(model, X, features, method="brute", kind=kind, grid_resolution=6)
    assert any(np.isnan(g).any() for g in theirs["grid_values"])  # the case this pins
    for g, h in zip(mine["grid_values"], theirs["grid_values"]):
        np.testing.assert_array_equal(g, h)
    np.testing.assert_allclose(mine["average"], theirs["average"], rtol=1e-12, atol=1e-12)
    want = definition(model, X, features, theirs["grid_values"])
    np.testing.assert_allclose(mine["average"][0], want, rtol=1e-12, atol=1e-12)
    if kind == "both":
        np.testing.assert_allclose(mine["individual"], theirs["individual"], rtol=1e-12, atol=1e-12)
    auto = pdpx_pd(model, X, features, kind=kind, grid_resolution=6)  # pdpx's exact: brute's numbers
    np.testing.assert_allclose(auto["average"], theirs["average"], rtol=1e-12, atol=1e-12)


def test_custom_values_on_a_nan_column(case):
    model, X = case
    theirs = sk_pd(model, X, ["a"], method="brute", custom_values={"a": [0.0, 1.5]})
    mine = pdpx_pd(model, X, ["a"], method="brute", custom_values={"a": [0.0, 1.5]})
    np.testing.assert_allclose(mine["average"], theirs["average"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mine["average"][0], definition(model, X, ["a"], [[0.0, 1.5]]), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["Float32", "float32"])
def test_float32_column(dtype):
    """The drop-in's grid on a float32 column holds the column's values (they were matched to pdpx's grid by
    value, which raised StopIteration): Float32 against scikit-learn (it refuses float32 itself: pandas will
    not write its float64 grid into the column) and both against the definition."""
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=120).astype(np.float32), "b": rng.normal(size=120)}).astype({"a": dtype})
    y = X["a"].to_numpy(dtype=float) ** 2 + X["b"].to_numpy()
    for model in (HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y), LinearRegression().fit(X, y)):
        for method in ("brute", "auto"):
            mine = pdpx_pd(model, X, ["a"], method=method, kind="both", grid_resolution=7)
            grid = mine["grid_values"][0]
            np.testing.assert_allclose(mine["average"][0], definition(model, X, ["a"], [grid]), rtol=1e-9)
            if dtype == "Float32":
                theirs = sk_pd(model, X, ["a"], method="brute", kind="both", grid_resolution=7)
                np.testing.assert_array_equal(grid, theirs["grid_values"][0])
                np.testing.assert_allclose(mine["average"], theirs["average"], rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(mine["individual"], theirs["individual"], rtol=1e-12, atol=1e-12)
