"""Rows of a Spark DataFrame by position: ``SparkData.take`` gives the rows ``toPandas().iloc[positions]`` gives,
with the text columns as the pandas path's categories and the weights of those rows."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pdpx[spark]')")

from pdpx.core.errors import PdpxError  # noqa: E402
from pdpx.core.plugins import adapt  # noqa: E402
from pdpx.rows.spark import SparkData  # noqa: E402


def model(X):
    """A predict function on the columns a, b, g (g text)."""
    return X["a"].to_numpy() + (X["g"].astype(str) == "u").to_numpy()


@pytest.fixture(scope="module")
def frame(spark):
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.integers(0, 5, 300),
                      "g": rng.choice(["v", "u", "w"], 300), "w": rng.uniform(0, 2, 300)})
    X.loc[::7, "a"] = np.nan
    # 4 uneven partitions, one of them empty after the filter; cached: the same rows on each action
    sdf = spark.createDataFrame(X).repartition(4, "b").filter("b != 2").cache()
    return sdf


def test_take_equals_topandas_iloc(frame):
    data = SparkData(frame, adapt(model))
    data.weights("w")
    local = frame.toPandas()
    assert data.n_rows == len(local)
    positions = np.array([len(local) - 1, 0, 5, 5, 117, 42, len(local) // 2])
    conf = frame.sparkSession.conf
    before = conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "16")  # each partition in several batches
    try:
        got, w = data.take(positions)
    finally:
        conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", before)
    want = local.iloc[positions].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want[data.names].assign(g=pd.Categorical(want.g, categories=["u", "v", "w"])))
    np.testing.assert_array_equal(w, want.w.to_numpy())
    assert got.dtypes.tolist() == data.dtypes
    assert (data.check.counts() > 0).sum() >= 2, data.check.counts()  # rows in several partitions: their order matters
    every, _ = data.take(np.arange(len(local)))  # every row: toPandas() itself
    pd.testing.assert_frame_equal(every.drop(columns="g"), local[data.names].drop(columns="g"))
    with pytest.raises(PdpxError, match=r"between 0 and"):
        data.take([len(local)])


def test_rows_not_where_they_were_counted_are_refused(frame):
    from pdpx.rows.spark_rows import partition_counts, take_rows

    counts = partition_counts(frame)
    assert counts.sum() == frame.count()
    moved = counts.copy()  # as if the DataFrame had put its rows in other partitions on this action
    first, last = np.flatnonzero(counts)[[0, -1]]
    moved[first] += 5
    moved[last] -= 5
    with pytest.raises(PdpxError, match=r"not in the same partitions and order on each action. Cache it first"):
        take_rows(frame, ["a"], [int(moved[:first + 1].sum()) - 1], moved)  # a row partition `first` does not hold
