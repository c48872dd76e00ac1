"""Friedman's H of a Spark DataFrame equals H of the same rows as pandas (weights, NaN, categories): on trees from
all rows, only sums crossing the cluster; any other model on the same sampled rows."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pdpx[spark]')")

import pdpx  # noqa: E402
from pdpx.core.errors import PdpxError  # noqa: E402
from pdpx.explain import evaluate  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    X.loc[::11, "b"] = np.nan
    X["g"] = pd.Categorical(rng.choice(["u", "v", "w"], len(X)))
    y = X.a * X.c + 2 * X.c * (X.g == "v") + np.nan_to_num(X.b) ** 2 + X.a
    return X, y.to_numpy(), np.round(rng.uniform(0, 2, len(X)), 3)


@pytest.fixture(scope="module")
def sdf(spark, rows):
    X, _, w = rows
    return spark.createDataFrame(X.assign(g=X.g.astype(str), w=w)).repartition(3).cache()


def as_pandas(sdf):
    """The Spark rows in the order Spark holds them, as the pandas frame and weights a user would pass."""
    X = sdf.toPandas()
    w = X.pop("w").to_numpy()
    return X.assign(g=X.g.astype("category")), w


def assert_same(a, b):
    for part in ("pairwise", "overall"):
        x, y = getattr(a, part), getattr(b, part)
        keys = [c for c in x.columns if c not in ("h2", "h")]
        x, y = x.sort_values(keys).reset_index(drop=True), y.sort_values(keys).reset_index(drop=True)
        pd.testing.assert_frame_equal(x[keys], y[keys])
        np.testing.assert_allclose(x.h2, y.h2, rtol=0, atol=1e-9)
        np.testing.assert_allclose(x.h, y.h, rtol=0, atol=1e-9)
    assert a.n_rows == b.n_rows and a.method == b.method and a.outputs == b.outputs


def tree_model(name, X, y):
    from sklearn.ensemble import HistGradientBoostingRegressor

    if name == "xgboost":
        xgb = pytest.importorskip("xgboost")
        return xgb.XGBRegressor(n_estimators=15, max_depth=3, enable_categorical=True, tree_method="hist",
                                n_jobs=1).fit(X, y)
    if name == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        return lgb.LGBMRegressor(n_estimators=15, num_leaves=8, verbose=-1, n_jobs=1).fit(X, y)
    return HistGradientBoostingRegressor(max_iter=20, max_leaf_nodes=8, random_state=0).fit(X, y)


@pytest.mark.parametrize("name", ["sklearn", "xgboost", "lightgbm"])
def test_trees_on_all_rows_equal_pandas(rows, sdf, name):
    X, y, _ = rows
    model = tree_model(name, X, y)
    local, w = as_pandas(sdf)
    got = pdpx.h_statistic(model, sdf, sample_weight="w")
    want = pdpx.h_statistic(model, local, sample_weight=w)
    assert_same(got, want)
    assert got.n_rows == len(X) and got.pairwise.h.max() > 0.05  # the model has interactions to find
    assert any("only sums brought here" in n for n in got.notes)


def test_cells_by_value_are_the_cells_of_all_rows(rows):
    """The cells found on each column's distinct values, and each row's, are those found on all rows."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y, _ = rows
    model = HistGradientBoostingRegressor(max_iter=20, max_leaf_nodes=8, random_state=0).fit(X, y)
    adapter = pdpx.core.plugins.adapt(model)
    used = [0, 1, 3]
    want, from_trees, _ = evaluate.find_cells(adapter, "predict", X, used)
    got, lookup, also, _ = evaluate.cells_by_value(adapter, "predict", X.head(2), {j: X.iloc[:, j] for j in used})
    assert from_trees and also
    for j in used:
        np.testing.assert_array_equal(got[j].codes, want[j].codes)
        np.testing.assert_array_equal(got[j].reps, want[j].reps)
        np.testing.assert_array_equal(lookup[j].codes(X.iloc[::-1, j]), want[j].codes[::-1])
    with pytest.raises(PdpxError, match="cache X first"):
        lookup[0].codes(pd.Series([123.0], name="a"))


def predict_function():
    """A predict function (no trees: brute force), made here so that it travels by value, as a notebook's does."""

    def plain(X):
        return X["a"].to_numpy() * X["c"].to_numpy() + np.nan_to_num(X["b"].to_numpy()) * (
            X["g"].astype(str) == "u").to_numpy()

    return plain


def test_a_model_without_trees_reads_the_rows_pandas_samples(rows, sdf):
    plain = predict_function()
    local, w = as_pandas(sdf)
    got = pdpx.h_statistic(plain, sdf, ["a", "b", "g"], sample=40, random_state=5, sample_weight="w")
    want = pdpx.h_statistic(plain, local, ["a", "b", "g"], sample=40, random_state=5, sample_weight=w)
    assert_same(got, want)
    assert got.n_rows == 40 and any("40 of the 400 rows" in n for n in got.notes)
    assert got.pairwise.h.max() > 0.05
    # sample= every row: brute force on all of them, brought here
    got = pdpx.h_statistic(plain, sdf, ["a", "g"], sample=400, sample_weight="w")
    assert_same(got, pdpx.h_statistic(plain, local, ["a", "g"], sample=400, sample_weight=w))
    assert got.n_rows == 400


def test_moments_of_parts_add_to_the_moments_of_all_rows():
    from pdpx.explain.interaction_spark import Moments

    rng = np.random.default_rng(0)
    u, w = 1e6 + rng.normal(size=(2, 3, 50)), rng.uniform(0, 2, 50)
    w[10:20] = 0
    whole = Moments.of(u, w)
    parts = Moments.of(u[..., :10], w[:10]) + Moments.of(u[..., 10:20], w[10:20]) + Moments.of(u[..., 20:], w[20:])
    centered = u - ((u @ w) / w.sum())[..., None]
    np.testing.assert_allclose(parts.m2, (centered ** 2) @ w, rtol=1e-9)
    np.testing.assert_allclose(parts.mean, whole.mean, rtol=1e-12)
    assert parts.W == pytest.approx(w.sum())


def test_a_spark_ml_pipeline_equals_pandas(spark):
    """A Spark ML model lives in the driver: its trees travel to the tasks, checked once here against its transform
    (the tasks cannot call it)."""
    from pyspark.ml import Pipeline
    from pyspark.ml.feature import StringIndexer, VectorAssembler
    from pyspark.ml.regression import GBTRegressor

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    X["g"] = rng.choice(["u", "v", "w"], len(X))
    sdf = spark.createDataFrame(X.assign(y=X.a + (X.g == "v") * X.b + 0.3 * X.b ** 2))
    model = Pipeline(stages=[StringIndexer(inputCol="g", outputCol="g_i"),
                             VectorAssembler(inputCols=["a", "b", "g_i"], outputCol="features"),
                             GBTRegressor(labelCol="y", maxIter=3, maxDepth=3, seed=0)]).fit(sdf)
    rows = sdf.select("a", "b", "g").repartition(2).cache()
    got, want = pdpx.h_statistic(model, rows), pdpx.h_statistic(model, rows.toPandas())
    assert_same(got, want)
    assert got.method == "exact" and got.pairwise.h.max() > 0.05
