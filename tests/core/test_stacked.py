"""by=: each group's curve is the PD on that group's rows, on the grid built from all rows."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression
from view_data import data_with_missing, direct_ice

import pdpx


@pytest.fixture(scope="module")
def fitted():
    X, y = data_with_missing(seed=7)
    return HistGradientBoostingRegressor(max_iter=40, random_state=0).fit(X, y), X


def test_groups_of_a_category(fitted):
    model, X = fitted
    res = pdpx.partial_dependence(model, X, "b", by="g", kind="both", grid_resolution=7)
    full = pdpx.partial_dependence(model, X, "b", grid_resolution=7)
    assert res.labels == ["p", "q", "r"] and res.column == "g"
    for lab in res.labels:
        r = res[lab]
        np.testing.assert_array_equal(r.grid_values[0], full.grid_values[0])  # one grid, from all rows
        rows = np.flatnonzero((X["g"] == lab).to_numpy())
        ice = direct_ice(model.predict, X.iloc[rows], "b", full.grid_values[0])
        np.testing.assert_allclose(r.average[0], ice.mean(0), rtol=1e-10)
        np.testing.assert_array_equal(r.ice_rows, rows)  # ICE rows are positions in the full X
        np.testing.assert_allclose(r.individual[0], ice, rtol=1e-10)
    # q's slope in b differs from the others': the point of the feature
    assert np.ptp(res["q"].average) > 2 * np.ptp(res["p"].average)
    df = res.to_frame()
    assert list(df.columns[:3]) == ["feature_set", "g", "output"]
    assert set(df["g"].astype(str)) == {"p", "q", "r"}
    ice_rows = df[(df["kind"] == "individual") & (df["g"] == "q")]["row"].unique()
    np.testing.assert_array_equal(np.sort(ice_rows.astype(int)), np.flatnonzero((X["g"] == "q").to_numpy()))


def test_numeric_by_quantile_bins_with_missing_point(fitted):
    model, X = fitted
    res = pdpx.partial_dependence(model, X, "a", by="b", grid_resolution=5)
    codes = pd.qcut(X["b"], 4).cat.codes.to_numpy()
    assert len(res.labels) == 4 and res.labels[0].startswith("[") and res.labels[1].startswith("(")
    grid = res.grid_values[0]
    assert np.isnan(grid[-1])  # the missing point, on every group's curve
    for i, lab in enumerate(res.labels):
        rows = np.flatnonzero(codes == i)
        ice = direct_ice(model.predict, X.iloc[rows], "a", grid)
        np.testing.assert_allclose(res[lab].average[0], ice.mean(0), rtol=1e-10)


def test_custom_grid_weights_and_missing_group():
    X, y = data_with_missing(seed=8)
    X["h"] = X["g"].astype(object).where(np.arange(len(X)) % 5 != 0, None)
    model = LinearRegression().fit(X[["b"]].assign(c=X["a"].fillna(0)), y)

    def f(frame):
        return model.predict(frame[["b"]].assign(c=frame["a"].fillna(0)))

    w = np.random.default_rng(0).uniform(0.5, 1.5, len(X))
    res = pdpx.partial_dependence(f, X, "b", by="h", custom_values={"b": [-1.0, 0.0, 2.0]}, sample_weight=w)
    assert res.labels == ["p", "q", "r", "missing"]
    for lab in res.labels:
        mask = X["h"].isna().to_numpy() if lab == "missing" else (X["h"] == lab).to_numpy()
        ice = direct_ice(f, X[mask], "b", [-1.0, 0.0, 2.0])
        np.testing.assert_allclose(res[lab].average[0], (w[mask][:, None] * ice).sum(0) / w[mask].sum(), rtol=1e-10)


def test_by_errors(fitted):
    model, X = fitted
    with pytest.raises(pdpx.PdpxError, match="by='b' is also a target feature"):
        pdpx.partial_dependence(model, X, "b", by="b")
    with pytest.raises(pdpx.PdpxError, match="unknown feature 'nope'"):
        pdpx.partial_dependence(model, X, "b", by="nope")
    with pytest.raises(pdpx.PdpxError, match="by_bins"):
        pdpx.partial_dependence(model, X, "b", by="a", by_bins=1)
