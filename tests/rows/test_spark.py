"""Spark DataFrames as X: equal to the same call on the same rows as pandas (weights, NaN, categories), only
sums crossing the cluster; empty partitions, a schema the model was not fitted on, the model once per worker."""

import pickle

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pdpx[spark]')")

import spark_connect  # noqa: E402

import pdpx  # noqa: E402
from pdpx.core.errors import PdpxError  # noqa: E402
from pdpx.rows import spark as spark_data  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(2000, 3)), columns=["a", "b", "c"])
    X.loc[::13, "b"] = np.nan
    X["g"] = pd.Categorical(rng.choice(["u", "v", "w"], len(X)))
    y = X.a + 2 * X.c * (X.g == "v") + np.nan_to_num(X.b) ** 2
    return X, y.to_numpy(), rng.uniform(0, 2, len(X))


@pytest.fixture(scope="module")
def sdf(spark, rows):
    X, _, w = rows
    # Spark has no category type: the text column becomes a category again with the levels of the data
    return spark.createDataFrame(X.assign(g=X.g.astype(str), w=w)).repartition(3).cache()


def as_pandas(sdf):
    """The Spark rows, in the order Spark holds them, as the pandas frame and weights a user would pass."""
    X = sdf.toPandas()
    w = X.pop("w").to_numpy()
    return X.assign(g=X.g.astype("category")), w


def assert_same(a, b):
    np.testing.assert_allclose(a.average, b.average, rtol=0, atol=1e-9)
    for g1, g2 in zip(a.grid_values, b.grid_values):
        np.testing.assert_array_equal(np.asarray(g1), np.asarray(g2))  # NaN: the missing-value point
    assert a.n_rows == b.n_rows


def models(X, y):
    from sklearn.ensemble import HistGradientBoostingRegressor

    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    return {
        "sklearn": HistGradientBoostingRegressor(max_iter=15, random_state=0).fit(X, y),
        "xgboost": xgb.XGBRegressor(n_estimators=15, max_depth=3, enable_categorical=True, tree_method="hist",
                                    n_jobs=1).fit(X, y),
        "lightgbm": lgb.LGBMRegressor(n_estimators=15, num_leaves=8, verbose=-1, n_jobs=1).fit(X, y),
    }


def predict_function():
    """A predict function (no library: brute), made here so that it travels by value, as a notebook's does (the
    workers cannot import this test module)."""

    def plain(X):
        return X["a"].to_numpy() * 2 + np.nan_to_num(X["b"].to_numpy()) * (X["g"].astype(str) == "u").to_numpy()

    return plain


plain = predict_function()


@pytest.mark.parametrize("name", ["sklearn", "xgboost", "lightgbm", "function"])
def test_partial_dependence_equals_pandas(rows, sdf, name):
    X, y, _ = rows
    model = plain if name == "function" else models(X[["a", "b", "c", "g"]], y)[name]
    local, w = as_pandas(sdf)
    for feats in (["b"], ["a", "g"]):
        kw = dict(grid_resolution=6, sample_weight="w")
        got = pdpx.partial_dependence(model, sdf, feats, **kw)
        want = pdpx.partial_dependence(model, local, feats, **dict(kw, sample_weight=w))
        assert_same(got, want)
        assert got.method == want.method == ("brute" if name == "function" else "exact")


def test_partial_dependence_many_gathers_counts_once(rows, sdf):
    X, y, _ = rows
    model = models(X[["a", "b", "c", "g"]], y)["xgboost"]
    local, w = as_pandas(sdf)
    sets = [["a"], ["b"], ["g"], ["a", "b"], ["b", "g"]]
    got = pdpx.partial_dependence_many(model, sdf, sets, grid_resolution=5, sample_weight="w")
    want = pdpx.partial_dependence_many(model, local, sets, grid_resolution=5, sample_weight=w)
    for a, b in zip(got, want):
        assert_same(a, b)
    assert any("gathered partition by partition" in n for n in got[0].notes), got[0].notes


def test_importance_equals_pandas(rows, sdf):
    X, y, _ = rows
    model = models(X[["a", "b", "c", "g"]], y)["lightgbm"]
    local, w = as_pandas(sdf)
    got = pdpx.importance(model, sdf, grid_resolution=5, sample_weight="w").to_frame()
    want = pdpx.importance(model, local, grid_resolution=5, sample_weight=w).to_frame()
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=0, atol=1e-9)


def test_brute_on_a_tree_model_equals_pandas(rows, sdf):
    X, y, _ = rows
    model = models(X[["a", "b", "c", "g"]], y)["sklearn"]
    local, w = as_pandas(sdf)
    got = pdpx.partial_dependence(model, sdf, ["c", "g"], method="brute", grid_resolution=4, sample_weight="w")
    assert_same(got, pdpx.partial_dependence(model, local, ["c", "g"], method="brute", grid_resolution=4,
                                             sample_weight=w))
    assert "computed over 3 Spark partitions" in got.notes


def test_empty_partitions_contribute_nothing(rows, spark):
    X, y, _ = rows
    few = spark.createDataFrame(X.head(40).assign(g=X.g.head(40).astype(str)))
    sparse = few.repartition(12)  # 40 rows over 12 partitions, then most partitions emptied
    sparse = sparse.filter(sparse.a > 0.5)
    local = sparse.toPandas().assign(g=lambda d: d.g.astype("category"))
    assert 0 < len(local) < 40
    got = pdpx.partial_dependence(plain, sparse, ["a"], grid_resolution=4)
    assert_same(got, pdpx.partial_dependence(plain, local, ["a"], grid_resolution=4))
    parts = int(got.notes[0].split()[2])
    assert parts < 12, got.notes  # only partitions with rows returned a row


def test_schema_not_the_training_types_names_the_column(rows, sdf):
    from pyspark.sql import functions as F

    X, y, _ = rows
    model = models(X[["a", "b", "c", "g"]], y)["sklearn"]
    wrong = sdf.withColumn("c", F.col("c").cast("string"))
    with pytest.raises(PdpxError, match=r"'c' \(string\)"):
        pdpx.partial_dependence(model, wrong, ["a"], sample_weight="w")


def test_weights_not_a_column_and_ice_of_every_row_over_the_budget_are_refused(rows, sdf):
    with pytest.raises(PdpxError, match="name of X's column of weights"):
        pdpx.partial_dependence(plain, sdf.drop("w"), ["a"], sample_weight=np.ones(len(rows[0])))
    with pytest.raises(PdpxError, match="'nope' is not a column of X"):
        pdpx.partial_dependence(plain, sdf, ["a"], sample_weight="nope")
    # the curves (20,000 rows x 6 points, 960 KB) fit 1 MiB, the rows they come from do not: pass ice_sample=
    many = sdf.sparkSession.range(20000).selectExpr("cast(id as double) as a")
    with pytest.raises(PdpxError, match=r"every row of a Spark X.*Pass ice_sample="):
        pdpx.partial_dependence(lambda X: X["a"].to_numpy(), many, ["a"], kind="both", grid_resolution=6,
                                memory_budget=2**20)


@pytest.mark.parametrize("name", ["xgboost", "function"])
def test_ice_equals_pandas_for_the_same_rows(rows, sdf, name):
    X, y, _ = rows
    model = plain if name == "function" else models(X[["a", "b", "c", "g"]], y)[name]
    local, w = as_pandas(sdf)
    kw = dict(kind="both", ice_sample=25, random_state=3, grid_resolution=5, centered=True)
    got = pdpx.partial_dependence(model, sdf, ["b", "g"], sample_weight="w", **kw)
    want = pdpx.partial_dependence(model, local, ["b", "g"], sample_weight=w, **kw)
    assert_same(got, want)
    np.testing.assert_array_equal(got.ice_rows, want.ice_rows)
    np.testing.assert_allclose(got.individual, want.individual, rtol=0, atol=1e-9)
    assert got.individual.shape == (1, 25, 6, 3)  # b's 5 points and its missing point, g's 3 levels


def test_ice_of_every_row_is_the_model_on_each_row(sdf):
    local, _ = as_pandas(sdf.limit(40))
    got = pdpx.partial_dependence(plain, sdf.limit(40).drop("w"), ["a"], kind="individual", grid_resolution=4)
    assert got.individual.shape == (1, 40, 4) and got.ice_rows is None
    grid = got.grid_values[0]
    for r in (0, 17, 39):  # the definition: row r with a set to each grid value, the model's own prediction
        np.testing.assert_allclose(got.individual[0, r], plain(local.iloc[[r] * 4].assign(a=grid)), rtol=0,
                                   atol=1e-12)


class Counted:
    """A model that counts how often it is unpickled."""

    loads = 0

    def __reduce__(self):
        return (_load_counted, ())

    def predict(self, X):
        return X["a"].to_numpy()


def _load_counted():
    Counted.loads += 1
    return Counted()


def test_the_model_is_unpickled_once_per_worker():
    payload = pickle.dumps(Counted())
    part = pd.DataFrame({"a": [1.0, 2.0], "w": [1.0, 3.0]})

    def task(model, batch, w, scale):
        return model.predict(batch) @ w * scale

    before = Counted.loads
    outs = [list(spark_data.partition_run(iter([part, part.iloc[:0], part]), payload, "digest-x", task, (2.0,),
                                          ["a"], {}, "w")) for _ in range(3)]
    assert Counted.loads == before + 1  # three tasks on one worker: one unpickling
    got = [pickle.loads(o[0]["sums"][0]) for o in outs]  # (partition: -1 outside Spark, the rows' tally, sums)
    assert [g[2] for g in got] == [2 * 2 * (1 + 6)] * 3
    assert [(g[0], g[1].n) for g in got] == [(-1, 4)] * 3
    assert list(spark_data.partition_run(iter([part.iloc[:0]]), payload, "digest-x", task, (1.0,), ["a"], {},
                                         None)) == []  # an empty partition returns no row


CONNECT = """
import os, sys, warnings
warnings.simplefilter("ignore")
os.environ["PYSPARK_PYTHON"] = sys.executable
import numpy as np, pandas as pd
from pyspark.sql import SparkSession
from sklearn.ensemble import HistGradientBoostingRegressor
import pdpx

rng = np.random.default_rng(0)
X = pd.DataFrame(rng.normal(size=(1000, 3)), columns=["a", "b", "c"])
X["w"] = rng.uniform(0, 2, len(X))
model = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X[["a", "b", "c"]], X.a * X.b)
sdf = spark.createDataFrame(X).repartition(3)
assert type(sdf).__module__ == "pyspark.sql.connect.dataframe", type(sdf)
local = sdf.toPandas()
sets = [["a"], ["a", "b"]]
got = pdpx.partial_dependence_many(model, sdf, sets, grid_resolution=5, sample_weight="w")
want = pdpx.partial_dependence_many(model, local[["a", "b", "c"]], sets, grid_resolution=5,
                                    sample_weight=local.w.to_numpy())
print(max(float(np.abs(g.average - h.average).max()) for g, h in zip(got, want)))
"""
spark_connect.register("rows/test_spark.py", CONNECT)


def test_spark_connect_runs_the_same(tmp_path):
    """Under Spark Connect (no RDD, no SparkContext exists in the client), in a process of its own: a Connect
    session cannot share this process with the classic one the other tests use (tests/spark_connect.py: one such
    process for every Connect test)."""
    pytest.importorskip("grpc", reason="Spark Connect needs grpcio (pip install 'pdpx[spark]')")
    out = spark_connect.output("rows/test_spark.py", tmp_path)
    assert float(out.strip().splitlines()[-1]) <= 1e-9


RETRIED = """
import os, sys, warnings
warnings.simplefilter("ignore")
os.environ["PYSPARK_PYTHON"] = sys.executable
import numpy as np, pandas as pd
from pyspark.sql import SparkSession
import pdpx

MARK = os.path.abspath("failed-once")

def flaky(X):  # the first Spark task to predict fails once (a lost executor, say); Spark runs it again
    # a task's stacked call, not brute's check of the function on a few rows (which a failure does not retry)
    if "pyspark.worker" in sys.modules and len(X) > 100 and not os.path.exists(MARK):
        open(MARK, "w").close()
        raise RuntimeError("task lost")
    return X["a"].to_numpy() * X["b"].to_numpy()

spark = (SparkSession.builder.master("local[2,3]").config("spark.ui.enabled", "false")
         .config("spark.log.level", "ERROR").getOrCreate())
rng = np.random.default_rng(0)
X = pd.DataFrame(rng.normal(size=(600, 2)), columns=["a", "b"])
sdf = spark.createDataFrame(X).repartition(4)
local = sdf.toPandas()
got = pdpx.partial_dependence(flaky, sdf, ["a"], grid_resolution=5, method="brute")
assert os.path.exists(MARK)
want = pdpx.partial_dependence(flaky, local, ["a"], grid_resolution=5, method="brute")
print(float(np.abs(got.average - want.average).max()))
spark.stop()
"""


def test_a_retried_task_is_counted_once(tmp_path):
    """A task that fails and is run again by Spark (local[2,3]: three attempts) adds its partition once."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", RETRIED], capture_output=True, text=True, timeout=600,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "task lost" in out.stderr  # the failure happened and Spark retried it
    assert float(out.stdout.strip().splitlines()[-1]) <= 1e-9


def test_a_function_that_reads_rows_here_says_so(rows, sdf, tmp_path):
    # report and h_statistic take a Spark X (tests/outputs/test_report_spark.py, tests/explain/test_interaction_spark.py)
    with pytest.raises(PdpxError, match="does not take a Spark DataFrame"):  # a dict of models' report
        pdpx.report({"plain": plain}, sdf.drop("w"), str(tmp_path / "r.html"), features=["a"])
    from pdpx.core.rows import message

    with pytest.raises(PdpxError) as err:
        pdpx.explained_variance(plain, sdf.drop("w"), ["a", "b"])
    assert str(err.value) == message("explained_variance", "spark", "explained_variance")
    assert "X.sample(fraction=...).toPandas()" in str(err.value)


def test_bands_from_the_model_and_the_bootstrap_equal_pandas(rows, sdf):
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

    X, y, _ = rows
    local, w = as_pandas(sdf)
    forest = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X[["a", "b", "c"]], y)
    got = pdpx.partial_dependence(forest, sdf.drop("g"), ["b"], interval="members", grid_resolution=5,
                                  sample_weight="w")
    want = pdpx.partial_dependence(forest, local.drop(columns="g"), ["b"], interval="members", grid_resolution=5,
                                   sample_weight=w)
    assert_same(got, want)
    for name in ("lower", "upper", "members"):  # each tree's own PD, from the trees each task reads
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=0, atol=1e-9)
    quantiles = {q: HistGradientBoostingRegressor(loss="quantile", quantile=q, max_iter=5).fit(X[["a", "b", "c", "g"]],
                                                                                             y) for q in (0.5, 0.9)}
    got = pdpx.partial_dependence(quantiles, sdf, ["b"], interval="quantiles", grid_resolution=5, sample_weight="w")
    want = pdpx.partial_dependence(quantiles, local, ["b"], interval="quantiles", grid_resolution=5, sample_weight=w)
    assert_same(got, want)
    np.testing.assert_allclose(got.upper, want.upper, rtol=0, atol=1e-9)
    # the bootstrap: each partition adds its rows' draws of the same seeded stream, so the same replicates
    kw = dict(interval=0.9, n_boot=20, random_state=5, centered=True, grid_resolution=5)
    got = pdpx.partial_dependence(forest, sdf.drop("g"), ["b"], sample_weight="w", **kw)
    want = pdpx.partial_dependence(forest, local.drop(columns="g"), ["b"], sample_weight=w, **kw)
    for name in ("average", "lower", "upper"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=0, atol=1e-9)
    assert not np.allclose(got.lower, got.upper)  # a band, not a line
