"""Spark ML tree models: the trees read from their text equal the model's own transform, averaged by brute
force here (each grid value set in a copy of the rows, the copies transformed in one Spark DataFrame, averaged)."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pdpx[spark]')")

import pdpx  # noqa: E402
from pdpx.adapters.sparkml_trees import parse  # noqa: E402


@pytest.fixture(scope="module")
def data(spark):
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(300, 2)), columns=["a", "b"])
    X["g"] = rng.choice(["u", "v", "w"], len(X))
    X["y"] = X.a + (X.g == "v") * X.b + 0.3 * X.b ** 2
    X["label"] = (X.y > 0.2).astype(float)
    return X, spark.createDataFrame(X)


def pipeline(sdf, learner, indexed=True):
    from pyspark.ml import Pipeline
    from pyspark.ml.feature import StringIndexer, VectorAssembler

    stages = [StringIndexer(inputCol="g", outputCol="g_i")] if indexed else []
    cols = ["a", "b", "g_i"] if indexed else ["a", "b"]
    return Pipeline(stages=stages + [VectorAssembler(inputCols=cols, outputCol="features"), learner]).fit(sdf)


def by_transform(spark, model, X, feature, grid, column):
    """The definition: every row with ``feature`` set to each grid value, through the model's transform, averaged."""
    from pyspark.ml.functions import vector_to_array

    stacked = pd.concat([X.assign(**{feature: v}, _k=k) for k, v in enumerate(grid)], ignore_index=True)
    out = model.transform(spark.createDataFrame(stacked))
    if column == "probability":
        out = out.withColumn("p1", vector_to_array("probability")[1])
        column = "p1"
    means = out.groupBy("_k").avg(column).toPandas().sort_values("_k")
    return means.iloc[:, 1].to_numpy()


@pytest.mark.parametrize("learner", ["GBTRegressor", "RandomForestRegressor", "DecisionTreeRegressor"])
def test_regression_trees_equal_transform(spark, data, learner):
    from pyspark.ml import regression

    X, sdf = data
    est = getattr(regression, learner)(labelCol="y", maxDepth=3, seed=0,
                                       **({"numTrees": 4} if learner.startswith("Random") else
                                          {"maxIter": 4} if learner.startswith("GBT") else {}))
    model = pipeline(sdf, est)
    rows = X[["a", "b", "g"]]
    for feature in ("a", "g"):
        res = pdpx.partial_dependence(model, rows, [feature], grid_resolution=5, method="exact")
        want = by_transform(spark, model, rows, feature, list(res.grid_values[0]), "prediction")
        np.testing.assert_allclose(res.average[0], want, rtol=0, atol=1e-9)


def test_boosted_classifier_probability_equals_transform(spark, data):
    from pyspark.ml.classification import GBTClassifier

    X, sdf = data
    model = pipeline(sdf, GBTClassifier(labelCol="label", maxIter=4, maxDepth=2, seed=0), indexed=False)
    rows = X[["a", "b"]]
    res = pdpx.partial_dependence(model, rows, ["b"], grid_resolution=5, method="exact")
    want = by_transform(spark, model, rows, "b", list(res.grid_values[0]), "probability")
    assert res.outputs[-1] == "1.0"
    np.testing.assert_allclose(res.average[-1], want, rtol=0, atol=1e-9)


def test_forest_classifier_runs_brute_through_transform(spark, data):
    from pyspark.ml.classification import RandomForestClassifier

    X, sdf = data
    model = pipeline(sdf, RandomForestClassifier(labelCol="label", numTrees=3, maxDepth=2, seed=0))
    rows = X[["a", "b", "g"]]
    res = pdpx.partial_dependence(model, rows, ["a"], grid_resolution=4)
    assert res.method == "brute"
    want = by_transform(spark, model, rows, "a", list(res.grid_values[0]), "probability")
    assert res.outputs[-1] == "1.0"
    np.testing.assert_allclose(res.average[-1], want, rtol=0, atol=1e-9)


def test_a_tree_model_alone_reads_x_columns_in_order(spark, data):
    from pyspark.ml.regression import GBTRegressor

    X, sdf = data
    alone = pipeline(sdf, GBTRegressor(labelCol="y", maxIter=3, maxDepth=2, seed=0), indexed=False).stages[-1]
    rows = X[["a", "b"]].set_axis(["x0", "x1"], axis=1)
    res = pdpx.partial_dependence(alone, rows, ["x1"], grid_resolution=4, method="exact")
    brute = pdpx.partial_dependence(alone, rows, ["x1"], grid_resolution=4, method="brute")
    np.testing.assert_allclose(res.average, brute.average, rtol=0, atol=1e-9)


def test_the_text_is_read_exactly():
    text = ("GBTRegressionModel: uid=x, numTrees=2\n  Tree 0 (weight 1.0):\n    If (feature 1 <= 0.1317898814905241)\n"
            "     Predict: -1.6062481734138874\n    Else (feature 1 > 0.1317898814905241)\n"
            "     If (feature 0 in {0.0,2.0})\n      Predict: 2.5\n     Else (feature 0 not in {0.0,2.0})\n"
            "      Predict: 3.0\n  Tree 1 (weight 0.1):\n    Predict: 7.0\n")
    (w0, t0), (w1, t1) = parse(text)
    assert (w0, w1) == (1.0, 0.1)
    assert t0["threshold"][0] == 0.1317898814905241 and t0["value"][1] == -1.6062481734138874
    assert t0["cats"][2] == [0, 2] and t0["left"][2] == 3 and t0["right"][2] == 4
    assert t1["value"] == [7.0] and t1["feature"] == [-1]


def test_on_a_spark_dataframe_the_trees_travel_not_the_model(spark, data):
    from pyspark.ml.regression import GBTRegressor

    X, sdf = data
    model = pipeline(sdf, GBTRegressor(labelCol="y", maxIter=4, maxDepth=3, seed=0))
    rows = sdf.select("a", "b", "g").repartition(3)
    local = rows.toPandas()
    for feats in (["a"], ["b", "g"]):
        got = pdpx.partial_dependence(model, rows, feats, grid_resolution=4)
        want = pdpx.partial_dependence(model, local, feats, grid_resolution=4)
        assert got.method == want.method == "exact"
        np.testing.assert_allclose(got.average, want.average, rtol=0, atol=1e-9)
    sets = [["a"], ["b"], ["a", "g"]]
    many = pdpx.partial_dependence_many(model, rows, sets, grid_resolution=4, method="exact",
                                        method_options={"engine": "counts"})
    assert any("gathered partition by partition" in n for n in many[0].notes), many[0].notes
    for res, want in zip(many, pdpx.partial_dependence_many(model, local, sets, grid_resolution=4)):
        np.testing.assert_allclose(res.average, want.average, rtol=0, atol=1e-9)
