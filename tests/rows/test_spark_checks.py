"""A Spark X whose rows change between actions is refused (naming cache() and checkpoint()), and one that does not
is read as one set of rows (a PD is the mean of its ICE curves); columns of types pdpx does not read are refused by
their Spark type before any pass over the rows."""

import random

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pdpx[spark]')")

import spark_connect  # noqa: E402

import pdpx  # noqa: E402
from pdpx.core.errors import ExtrapolationWarning, PdpxError  # noqa: E402
from pdpx.rows.spark_checks import RowCheck, tallies_by_partition, tally  # noqa: E402

#: What every refusal of changing rows says to do
CACHE = r"Cache it first \(X = X.cache\(\); X.count\(\)\) or checkpoint it \(X = X.checkpoint\(\)\)"


def functions():
    """A predict function and two UDFs made here, so that they travel by value to Spark's workers."""

    def plain(X):
        return X["a"].to_numpy() * X["b"].to_numpy() + X["a"].to_numpy() ** 2

    def noise(a):  # another value on each action: a non-deterministic column
        return random.random()

    def boom(a):  # raises when any pass reads the column
        raise RuntimeError("a pass over the rows ran")

    def stage(a):  # the Spark stage reading the row: a larger number on each action
        from pyspark import TaskContext

        return TaskContext.get().stageId()

    return plain, noise, boom, stage


plain, noise, boom, stage = functions()


@pytest.fixture(scope="module")
def base(spark):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(600, 2)), columns=["a", "b"])
    return spark.createDataFrame(X).repartition(3).cache()


@pytest.fixture(scope="module")
def noisy(base):
    from pyspark.sql import functions as F

    return base.withColumn("b", F.udf(noise, "double").asNondeterministic()("a"))


def test_tallies_see_changed_values_combinations_order_and_counts():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=50), "g": rng.choice(["u", "v"], 50), "p": np.repeat([0, 2], 25)})
    cols = ["a", "g"]

    def check(frame, *, by_position=False, ref=X):
        rows = RowCheck(len(ref))
        rows.seen(tallies_by_partition(ref, cols, "p"))
        rows.seen(tallies_by_partition(frame, cols, "p"), by_position=by_position)

    check(X, by_position=True)  # the same rows: no refusal
    check(X.sample(frac=1, random_state=0))  # another order, not by position: the sums are the same
    with pytest.raises(PdpxError, match="came in another order"):
        check(pd.concat([X.iloc[:25].iloc[::-1], X.iloc[25:]]), by_position=True)
    with pytest.raises(PdpxError, match=r"column\(s\) 'a' changed"):
        check(X.assign(a=X.a + 1e-12))
    with pytest.raises(PdpxError, match="in other combinations"):  # each column's values the same, not their rows
        check(X.assign(g=X.g.to_numpy()[::-1]))
    with pytest.raises(PdpxError, match="counted 50 rows, then 49"):
        check(X.iloc[1:])
    with pytest.raises(PdpxError, match="not in the same partitions"):
        check(X.assign(p=np.repeat([0, 1], 25)), by_position=True)
    local = X.assign(g=pd.Categorical(X.g, categories=["u"]))  # "v" was not there when the levels were counted
    with pytest.raises(PdpxError, match=r"text column\(s\) 'g' hold values that were not there"):
        RowCheck(50).seen({0: tally(X, cols, 0, local)})
    # a tally of batches is the tally of their rows together
    whole, halves = tally(X, cols), tally(X.iloc[:20], cols) + tally(X.iloc[20:], cols, 20)
    assert (whole.n, whole.columns, whole.rows, whole.ordered) == (halves.n, halves.columns, halves.rows,
                                                                   halves.ordered)


@pytest.fixture(scope="module")
def grows(spark):
    """A source that gains rows on each action (as a table appended to while it is read): row ``i`` is there once
    the stage reading it is numbered above ``i / 50``."""
    from pyspark.sql import functions as F

    return (spark.range(0, 100_000, numPartitions=2).withColumn("s", F.udf(stage, "long")("id"))
            .where("id < s * 50").selectExpr("cast(id as double) as a", "cast(id % 7 as double) as b"))


@pytest.mark.parametrize("call", ["average", "ice", "bootstrap", "h_statistic"])
def test_a_column_that_changes_between_actions_is_refused(base, noisy, call):
    from sklearn.ensemble import HistGradientBoostingRegressor

    kw = {"average": dict(kind="average"), "ice": dict(kind="both", ice_sample=20, random_state=0),
          "bootstrap": dict(interval=0.9, n_boot=5, random_state=0)}
    with pytest.raises(PdpxError, match=r"\(the values of column\(s\) 'b' changed\): its rows change between Spark "
                                        r"actions: .*asNondeterministic.*" + CACHE):
        if call == "h_statistic":  # a tree model: H from passes over every row (pdpx.explain.interaction_spark)
            local = base.toPandas()
            model = HistGradientBoostingRegressor(max_iter=5).fit(local[["a", "b"]], plain(local))
            pdpx.h_statistic(model, noisy, ["a", "b"])
        else:
            pdpx.partial_dependence(plain, noisy, ["a"], grid_resolution=4, **kw[call])


def test_a_source_that_gains_rows_is_refused(grows):
    with pytest.raises(PdpxError, match=r"\(X counted [\d,]+ rows, then [\d,]+\): its rows change .*" + CACHE):
        pdpx.partial_dependence(plain, grows, ["a"], grid_resolution=4)


def test_cached_it_is_read_as_one_set_of_rows(noisy):
    cached = noisy.cache()
    try:
        got = pdpx.partial_dependence(plain, cached, ["a"], kind="both", grid_resolution=5)
        local = cached.select("a", "b").toPandas()  # a new plan: one made before cache() would not read it
    finally:
        cached.unpersist()
    assert got.individual.shape == (1, 600, 5)
    # the PD is the mean of the ICE curves of every row (the sums' order differs: to 1e-12) ...
    np.testing.assert_allclose(got.average, got.individual.mean(axis=1), rtol=0, atol=1e-12)
    # ... and the definition on those rows: the model's own predictions with a set to each grid value, averaged
    grid = got.grid_values[0]
    want = [plain(local.assign(a=v)).mean() for v in grid]
    np.testing.assert_allclose(got.average[0], want, rtol=0, atol=1e-12)


def test_rows_in_another_order_are_refused_where_positions_count(base):
    from pyspark.sql import functions as F

    shuffled = base.sortWithinPartitions(F.udf(noise, "double").asNondeterministic()("a"))
    local = base.toPandas()  # the same rows, each partition's in another order on each action
    got = pdpx.partial_dependence(plain, shuffled, ["a"], grid_resolution=4)  # an average: order does not count
    want = pdpx.partial_dependence(plain, local, ["a"], grid_resolution=4)
    np.testing.assert_allclose(got.average, want.average, rtol=0, atol=1e-12)
    with pytest.raises(PdpxError, match=r"the rows of partition \d came in another order\): .*" + CACHE):
        pdpx.partial_dependence(plain, shuffled, ["a"], kind="both", ice_sample=10, random_state=0,
                                grid_resolution=4)


def test_the_report_sample_of_a_source_that_gains_rows_is_refused(grows):
    from pdpx.core.options import PDOptions
    from pdpx.report_rows import spark_rows

    with pytest.raises(PdpxError, match=r"X counted [\d,]+ rows, then [\d,]+\): .*" + CACHE):
        spark_rows(plain, grows, PDOptions.checked("report", {}), 0, 10)


def test_every_readable_type_reads_alike_on_every_pass(base):
    """The driver (the columns brought here) and Spark's tasks (sums, ICE rows, the bootstrap) hash each type alike: an
    X that does not change is not refused, and the result is the pandas call's on the same rows."""
    X = base.selectExpr("a", "b", "if(a > 1, null, cast(b * 10 as bigint)) as i", "a > 0 as t",
                        "date_add(date'2020-01-01', cast(a * 10 as int)) as d",
                        "timestamp_seconds(cast(a * 1000 as bigint)) as ts", "if(b > 1, null, if(b > 0, 'u', 'v')) as g",
                        "cast(b as decimal(10,3)) as dec")
    local = X.toPandas().assign(g=lambda d: d.g.astype("category"), dec=lambda d: d.dec.astype(float))
    assert local.i.isna().any() and local.g.isna().any()
    kw = dict(kind="both", ice_sample=30, random_state=0, grid_resolution=4, interval=0.9, n_boot=5)
    # ts follows a: both sides warn that the curve rests on combinations the data does not hold
    with pytest.warns(ExtrapolationWarning):
        got = pdpx.partial_dependence(plain, X, ["a"], **kw)
    with pytest.warns(ExtrapolationWarning):
        want = pdpx.partial_dependence(plain, local, ["a"], **kw)
    for name in ("average", "individual", "lower", "upper"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=0, atol=1e-12)


TYPES = {
    "struct": ("named_struct('x', 1, 'y', 'z')", r"struct<x:int,y:string>; .*select or flatten its fields"),
    "array": ("array(1, 2)", r"array<int>; .*take its elements as columns"),
    "map": ("map('k', 1)", r"map<string,int>; .*take its values as columns"),
    "binary": ("cast('ab' as binary)", r"binary; .*decode it to a string"),
    "interval": ("interval 1 day", r"interval day; .*convert it to a number"),
    "void": ("null", r"void; .*it holds only nulls"),
}


@pytest.mark.parametrize("kind", sorted(TYPES))
def test_columns_of_types_pdpx_does_not_read_are_refused_by_type(base, kind):
    from pyspark.sql import functions as F

    expr, says = TYPES[kind]
    # a reads raise when any pass runs: the refusal comes from the schema, before any pass over the rows
    X = base.withColumn("a", F.udf(boom, "double")("a")).selectExpr("a", "b", f"{expr} as s")
    with pytest.raises(PdpxError, match=r"column 's' is a Spark " + says):
        pdpx.partial_dependence(plain, X, ["a"])


def test_a_column_the_model_was_not_fitted_on_is_refused_as_on_pandas(base):
    from pyspark.sql import functions as F
    from sklearn.linear_model import LinearRegression

    local = base.toPandas()
    model = LinearRegression().fit(local[["a", "b"]], local.a - local.b)
    X = base.withColumn("s", F.struct("a", "b"))
    with pytest.raises(PdpxError, match=r"not seen at fit time \['s'\]"):  # as for a pandas X with that column
        pdpx.partial_dependence(model, X, ["a"])
    with pytest.raises(PdpxError, match=r"column 's' is a Spark struct<a:double,b:double>"):
        pdpx.partial_dependence(model, X, ["a"], sample_weight="s")
    with pytest.raises(PdpxError, match="weights must be numbers"):
        pdpx.partial_dependence(model, X.withColumn("s", F.lit("1")), ["a"], sample_weight="s")


def test_decimal_columns_are_read_as_numbers(base):
    from pyspark.sql import functions as F

    X = base.withColumn("a", F.col("a").cast("decimal(12,4)")).withColumn("w", F.lit(2).cast("decimal(3,1)"))
    local = X.toPandas().astype(float)
    got = pdpx.partial_dependence(plain, X, ["a"], grid_resolution=5, sample_weight="w")
    want = pdpx.partial_dependence(plain, local[["a", "b"]], ["a"], grid_resolution=5,
                                   sample_weight=local.w.to_numpy())
    np.testing.assert_array_equal(got.grid_values[0], want.grid_values[0])
    np.testing.assert_allclose(got.average, want.average, rtol=0, atol=1e-12)


CONNECT = """
import os, random, sys, warnings
warnings.simplefilter("ignore")
os.environ["PYSPARK_PYTHON"] = sys.executable
import numpy as np, pandas as pd
from pyspark.sql import SparkSession, functions as F
import pdpx
from pdpx.core.errors import PdpxError

def plain(X):
    return X["a"].to_numpy() * X["b"].to_numpy()

def noise(a):
    return random.random()

rng = np.random.default_rng(0)
base = spark.createDataFrame(pd.DataFrame(rng.normal(size=(600, 2)), columns=["a", "b"])).repartition(3)
assert type(base).__module__ == "pyspark.sql.connect.dataframe", type(base)
noisy = base.withColumn("b", F.udf(noise, "double").asNondeterministic()("a"))
for kind in ("average", "both"):
    try:
        pdpx.partial_dependence(plain, noisy, ["a"], grid_resolution=4, kind=kind)
        print("not refused", kind)
    except PdpxError as exc:
        print("refused", "X = X.cache()" in str(exc) and "X.checkpoint()" in str(exc))
cached = noisy.cache()
got = pdpx.partial_dependence(plain, cached, ["a"], grid_resolution=4, kind="both")
print("gap", float(np.abs(got.average - got.individual.mean(axis=1)).max()))
try:
    pdpx.partial_dependence(plain, base.withColumn("s", F.struct("a", "b")), ["a"])
except PdpxError as exc:
    print("type", str(exc).split(";")[0])
"""
spark_connect.register("rows/test_spark_checks.py", CONNECT)


def test_under_spark_connect_too(tmp_path):
    """The same refusals under Spark Connect (in a process of its own: a Connect session cannot share this process
    with the classic one the other tests use: tests/spark_connect.py, one such process for every Connect test), and
    a cached X read as one set of rows."""
    pytest.importorskip("grpc", reason="Spark Connect needs grpcio (pip install 'pdpx[spark]')")
    out = spark_connect.output("rows/test_spark_checks.py", tmp_path)
    lines = [s for s in out.splitlines() if s.split(" ")[0] in ("refused", "not", "gap", "type")]
    assert lines[:2] == ["refused True"] * 2, lines
    assert float(lines[2].split()[1]) <= 1e-12, lines
    assert lines[3] == "type column 's' is a Spark struct<a:double,b:double>", lines
