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


def by_transform(spark, model, X, feature, grid, column, classes=(1,)):
    """The definition: every row with ``feature`` set to each grid value, through the model's transform, averaged
    (a probability: of each class in ``classes``, one row per class)."""
    from pyspark.ml.functions import vector_to_array

    stacked = pd.concat([X.assign(**{feature: v}, _k=k) for k, v in enumerate(grid)], ignore_index=True)
    out = model.transform(spark.createDataFrame(stacked))
    columns = [column]
    if column == "probability":
        columns = [f"p{c}" for c in classes]
        out = out.select("_k", *[vector_to_array("probability")[c].alias(f"p{c}") for c in classes])
    means = out.groupBy("_k").avg(*columns).toPandas().sort_values("_k")
    got = means.iloc[:, 1:].to_numpy().T
    return got[0] if column != "probability" or classes == (1,) else got


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


def test_forest_classifier_runs_brute_through_transform(spark, data, monkeypatch):
    """Where Spark writes the saved model out of this Python's reach (a cluster's executors), the forest's transform
    is averaged, and the result says why."""
    from pyspark.ml.classification import RandomForestClassifier

    from pdpx.adapters import sparkml
    from pdpx.adapters.sparkml_saved import SavedFormUnreadable

    def unreadable(tree):
        raise SavedFormUnreadable("Spark saved the model where this Python cannot read it")

    monkeypatch.setattr(sparkml, "saved_nodes", unreadable)
    X, sdf = data
    model = pipeline(sdf, RandomForestClassifier(labelCol="label", numTrees=3, maxDepth=2, seed=0))
    rows = X[["a", "b", "g"]]
    res = pdpx.partial_dependence(model, rows, ["a"], grid_resolution=4)
    assert res.method == "brute"
    assert any("saved to a temporary folder of this machine, and could not: Spark saved the model where" in n
               for n in res.notes), res.notes
    with pytest.raises(pdpx.PdpxError, match="could not: Spark saved the model where this Python cannot read"):
        pdpx.partial_dependence(model, rows, ["a"], grid_resolution=4, method="exact")
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


@pytest.mark.parametrize("learner", ["RandomForestClassifier", "DecisionTreeClassifier"])
def test_forest_and_tree_classifiers_read_their_class_counts(spark, data, learner):
    """Three classes, a text column indexed: every class's probability equals transform's, averaged."""
    from pyspark.ml import classification

    X, sdf = data
    sdf = sdf.withColumn("cls", (sdf.y > -0.5).cast("double") + (sdf.y > 0.8).cast("double"))
    est = getattr(classification, learner)(labelCol="cls", maxDepth=3, seed=0,
                                           **({"numTrees": 3} if learner.startswith("Random") else {}))
    model = pipeline(sdf, est)
    rows = X[["a", "b", "g"]]
    for feature in ("b", "g"):
        res = pdpx.partial_dependence(model, rows, [feature], grid_resolution=4, method="exact")
        want = by_transform(spark, model, rows, feature, list(res.grid_values[0]), "probability", (0, 1, 2))
        assert res.outputs == ["0.0", "1.0", "2.0"] and res.method == "exact", res.notes
        np.testing.assert_allclose(res.average, want, rtol=0, atol=1e-9)


def test_a_wrong_reading_of_the_counts_is_caught_and_brute_answers(spark, data, monkeypatch):
    """The check against the model's own probability: class counts read in the wrong order disagree with
    transform, so pdpx warns and averages the transform instead."""
    from pyspark.ml.classification import DecisionTreeClassifier

    from pdpx.adapters import sparkml, sparkml_saved

    def reversed_counts(frame, n_classes):
        trees = sparkml_saved.classifier_trees(frame, n_classes)
        return [(w, {**nodes, "value": [np.asarray(v)[::-1] for v in nodes["value"]]}) for w, nodes in trees]

    monkeypatch.setattr(sparkml, "classifier_trees", reversed_counts)
    X, sdf = data
    model = pipeline(sdf, DecisionTreeClassifier(labelCol="label", maxDepth=2, seed=0), indexed=False)
    rows = X[["a", "b"]]
    with pytest.warns(pdpx.TreeMismatchWarning, match="disagreed with its own predict_proba"):
        res = pdpx.partial_dependence(model, rows, ["a"], grid_resolution=4)
    assert res.method == "brute"
    want = by_transform(spark, model, rows, "a", list(res.grid_values[0]), "probability")
    np.testing.assert_allclose(res.average[-1], want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("drop_last, invalid, learner", [(True, "error", "GBTRegressor"),
                                                         (False, "keep", "RandomForestClassifier")])
def test_one_hot_slots_are_read_as_the_text_column(spark, data, drop_last, invalid, learner):
    """StringIndexer -> OneHotEncoder -> VectorAssembler: the trees split on the text column, PD over its levels
    equals the pipeline's transform averaged."""
    from pyspark.ml import Pipeline, classification, regression
    from pyspark.ml.feature import OneHotEncoder, StringIndexer, VectorAssembler

    X, sdf = data
    est = (regression.GBTRegressor(labelCol="y", maxIter=4, maxDepth=3, seed=0) if learner == "GBTRegressor" else
           classification.RandomForestClassifier(labelCol="label", numTrees=3, maxDepth=3, seed=0))
    stages = [StringIndexer(inputCols=["g"], outputCols=["g_i"], handleInvalid=invalid),
              OneHotEncoder(inputCols=["g_i"], outputCols=["g_v"], dropLast=drop_last, handleInvalid=invalid),
              VectorAssembler(inputCols=["a", "g_v", "b"], outputCol="features"), est]
    model = Pipeline(stages=stages).fit(sdf)
    rows = X[["a", "b", "g"]].copy()
    if invalid == "keep":  # a missing text is the indexer's extra code, after its labels
        rows.loc[rows.index[::7], "g"] = None
    column = "prediction" if learner == "GBTRegressor" else "probability"
    for feature in ("g", "b"):
        res = pdpx.partial_dependence(model, rows, [feature], grid_resolution=4, method="exact")
        want = by_transform(spark, model, rows, feature, list(res.grid_values[0]), column)
        assert res.method == "exact", res.notes  # not brute after a failed check
        np.testing.assert_allclose(res.average[-1], want, rtol=0, atol=1e-9)
        if feature == "g":
            assert sorted(res.grid_values[0]) == ["u", "v", "w"]
            assert np.ptp(res.average[-1]) > 1e-3  # the trees do split on the one-hot slots
    if invalid == "error":  # Spark's indexer fails on a missing text: so does exact, saying what to do
        rows.loc[rows.index[::7], "g"] = None
        with pytest.raises(pdpx.PdpxError, match="'g' has missing values.*handleInvalid='keep'"):
            pdpx.partial_dependence(model, rows, ["b"], grid_resolution=4, method="exact")
    if learner != "GBTRegressor":  # a Spark X: the trees read from the saved form travel to the tasks
        got = pdpx.partial_dependence(model, sdf.select("a", "b", "g").repartition(2), ["g"], method="exact")
        here = pdpx.partial_dependence(model, sdf.select("a", "b", "g").toPandas(), ["g"], method="exact")
        np.testing.assert_allclose(got.average, here.average, rtol=0, atol=1e-9)


def test_a_model_that_is_not_a_tree_is_averaged_through_transform(spark, data):
    """A logistic regression after one-hot columns: brute, every class's probability equals transform's."""
    from pyspark.ml import Pipeline
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.feature import OneHotEncoder, StringIndexer, VectorAssembler

    X, sdf = data
    sdf = sdf.withColumn("cls", (sdf.y > -0.5).cast("double") + (sdf.y > 0.8).cast("double"))
    stages = [StringIndexer(inputCol="g", outputCol="g_i"), OneHotEncoder(inputCol="g_i", outputCol="g_v"),
              VectorAssembler(inputCols=["a", "b", "g_v"], outputCol="features"),
              LogisticRegression(labelCol="cls", maxIter=5)]
    model = Pipeline(stages=stages).fit(sdf)
    rows = X[["a", "b", "g"]]
    res = pdpx.partial_dependence(model, rows, ["g"])
    assert res.method == "brute" and any("is not a tree model" in n for n in res.notes), res.notes
    want = by_transform(spark, model, rows, "g", list(res.grid_values[0]), "probability", (0, 1, 2))
    np.testing.assert_allclose(res.average, want, rtol=0, atol=1e-9)
    # a Spark DataFrame X: the same brute force in Spark (X joined with the grid, transform, one aggregation)
    from pyspark.sql import functions as F

    weighted = sdf.select("a", "b", "g").withColumn("w", 1.0 + (F.col("g") == "v").cast("double")).repartition(2)
    on_spark = pdpx.partial_dependence(model, weighted, ["g", "a"], grid_resolution=3, sample_weight="w")
    assert on_spark.method == "brute" and any("transform in Spark" in n for n in on_spark.notes), on_spark.notes
    local = pdpx.partial_dependence(model, rows, ["g", "a"], custom_values={"a": on_spark.grid_values[1]},
                                    sample_weight=1.0 + (rows["g"] == "v").to_numpy())
    np.testing.assert_allclose(on_spark.average, local.average, rtol=0, atol=1e-9)


def test_one_hot_and_index_splits_move_onto_the_column():
    """The rule of onto_columns on text: a split on the one-hot slot of code 0 sends the codes whose slot value goes
    left; a missing value goes where the indexer's extra code (here 3) goes; a number's missing value goes right."""
    from pdpx.adapters.sparkml_trees import onto_columns

    text = ("If (feature 1 in {0.0})\n Predict: 1.0\nElse (feature 1 not in {0.0})\n"
            " If (feature 3 in {1.0,3.0})\n  Predict: 2.0\n Else (feature 3 not in {1.0,3.0})\n"
            "  If (feature 0 <= 0.5)\n   Predict: 3.0\n  Else (feature 0 > 0.5)\n   Predict: 4.0\n")
    onehot = [tuple(1.0 if k == j else 0.0 for k in range(4)) for j in range(2)]  # codes 0..2 and the extra 3
    slots = [(0, None, None), (1, onehot[0], 3), (1, onehot[1], 3), (1, None, 3)]
    (_, nodes), = onto_columns(parse(text), slots)
    assert nodes["feature"][0] == nodes["feature"][2] == 1 and nodes["cats"][0] == [1, 2, 3] and nodes["missing"][0]
    assert nodes["cats"][2] == [1, 3] and nodes["missing"][2]  # the index slot: code 3 in the set
    assert nodes["feature"][4] == 0 and nodes["cats"][4] is None and not nodes["missing"][4]
