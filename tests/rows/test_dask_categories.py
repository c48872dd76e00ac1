"""LightGBM (and XGBoost) with a pandas category column on Dask input: each partition's adapter is a fresh one
and learns the column's encoding from its rows (``pdpx.rows.dask.partition_task``); it used to refuse the
category column as "not numeric". Compared with the definition (the column set to each grid value on every
row, the model's predict, averaged) and with the pandas result, for ``partial_dependence`` and
``partial_dependence_many``, including partitions whose category sets differ.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
lgb = pytest.importorskip("lightgbm")

import pdpx  # noqa: E402

N = 300


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"a": rng.normal(size=N), "c": pd.Categorical(rng.choice(list("pqrst"), N)),
                      "b": rng.uniform(size=N)})
    y = X["a"].to_numpy() + 0.7 * X["c"].cat.codes.to_numpy() + X["b"].to_numpy()
    model = lgb.LGBMRegressor(n_estimators=12, num_leaves=6, min_child_samples=5, min_data_per_group=5,
                              cat_smooth=1.0, verbose=-1, random_state=0).fit(X, y)
    return model, X


def dask_frames(X):
    same = dd.from_pandas(X, npartitions=3)
    # partitions that each know only their own categories (the model's stored list codes them)
    parts = [X.iloc[i: i + 100].copy() for i in range(0, N, 100)]
    for k, p in enumerate(parts):
        p["c"] = p["c"].cat.remove_unused_categories()
        if k == 1:
            p["c"] = p["c"].cat.reorder_categories(list(reversed(p["c"].cat.categories)))
    own = dd.concat([dd.from_pandas(p, npartitions=1) for p in parts])
    return {"same categories": same, "own categories": own}


def definition(model, X, feature, grid):
    out = []
    for v in grid:
        Z = X.copy()
        Z[feature] = pd.Categorical([v] * len(Z), categories=X[feature].cat.categories) if feature == "c" else v
        out.append(model.predict(Z).mean())
    return np.array(out)


@pytest.mark.parametrize("method", ["auto", "exact", "brute"])
@pytest.mark.parametrize("feature", ["c", "a"])
def test_partial_dependence_on_dask(case, method, feature):
    model, X = case
    local = pdpx.partial_dependence(model, X, feature, method=method, grid_resolution=8)
    for name, D in dask_frames(X).items():
        res = pdpx.partial_dependence(model, D, feature, method=method, grid_resolution=8)
        assert res.method == local.method, name
        assert list(res.grid_values[0]) == list(local.grid_values[0]), name
        np.testing.assert_allclose(res.average[0], definition(model, X, feature, res.grid_values[0]),
                                   rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(res.average, local.average, rtol=1e-12, atol=1e-12, err_msg=name)


def test_partial_dependence_many_on_dask(case):
    model, X = case
    for name, D in dask_frames(X).items():
        got = pdpx.partial_dependence_many(model, D, ["c", "a", ("a", "c")], grid_resolution=6)
        want = pdpx.partial_dependence_many(model, X, ["c", "a", ("a", "c")], grid_resolution=6)
        assert got.method == want.method == ["exact"] * 3, name
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.average, w.average, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(got[0].average[0], definition(model, X, "c", got[0].grid_values[0]),
                                   rtol=1e-12, atol=1e-12, err_msg=name)
