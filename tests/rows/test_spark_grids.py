"""Grids of a Spark X's columns too large for the memory budget on the driver: from Spark's aggregations, with the
rules of a pandas X (few distinct values: the same grid exactly; many: percentiles within approxQuantile's rank
error), and the support diagnostics saying why they are not counted."""

import numpy as np
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pdpx[spark]')")

import pdpx  # noqa: E402
from pdpx.rows.spark_grids import RELATIVE_ERROR  # noqa: E402

#: Rows: 8 bytes each do not fit the smallest memory budget (1 MiB) as one column
N = 140_000


def predict_function():
    """A predict function made here so that it travels by value to Spark's workers."""

    def plain(X):
        return np.nan_to_num(X["a"].to_numpy()) * X["k"].to_numpy() + (X["g"].astype(str) == "u").to_numpy()

    return plain


plain = predict_function()


@pytest.fixture(scope="module")
def big(spark):
    """N rows made in Spark (no pandas frame to convert), seeded, in two partitions, cached: the same on each action."""
    return spark.range(0, N, numPartitions=2).selectExpr(
        "if(id % 17 = 0, null, randn(1)) as a", "cast(floor(rand(2) * 6) as bigint) as k",
        "element_at(array('w', 'u', 'v'), cast(floor(rand(3) * 3) as int) + 1) as g").cache()


def test_grids_of_columns_too_large_for_the_driver(big):
    local = big.toPandas().assign(g=lambda d: d.g.astype("category"))
    with pdpx.config_context(memory_budget="1MB"):
        got = pdpx.partial_dependence_many(plain, big, [["k"], ["g"], ["a"]], grid_resolution=8)
    want = pdpx.partial_dependence_many(plain, local, [["k"], ["g"], ["a"]], grid_resolution=8)
    for g, w in zip(got[:2], want[:2]):  # few distinct values (6 < 8; text levels): the pandas grid, exactly
        np.testing.assert_array_equal(g.grid_values[0], w.grid_values[0])
        assert g.grid_values[0].dtype == w.grid_values[0].dtype
        np.testing.assert_allclose(g.average, w.average, rtol=0, atol=1e-9)
        assert g.support is None and w.support is not None
        assert any("does not fit the memory budget here, so its rows' support is not counted" in n for n in g.notes)
    # many values: the ends are approxQuantile's percentiles, each within its rank error of the exact one
    a, b = np.asarray(got[2].grid_values[0], dtype=float), np.asarray(want[2].grid_values[0], dtype=float)
    assert np.isnan(a[-1]) == np.isnan(b[-1]) and a.size == b.size  # the missing-value point as for pandas
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    values = np.sort(local.a.dropna().to_numpy())
    slack = RELATIVE_ERROR * values.size + 1
    for end, p in ((a[0], 0.05), (a[-1], 0.95)):
        rank = np.searchsorted(values, end, side="left")
        assert abs(rank - p * values.size) <= slack, (end, rank, p * values.size)
    assert np.all(np.abs(a - b) <= max(abs(a[0] - b[0]), abs(a[-1] - b[-1])) + 1e-12)  # evenly spaced between ends
    assert any("approxQuantile, relative error 0.001" in n for n in got[2].notes), got[2].notes
    # on that grid the curve is the definition's: the same call on the pandas rows with that grid
    same = pdpx.partial_dependence(plain, local, ["a"], custom_values={"a": a})
    np.testing.assert_allclose(got[2].average[..., :a.size], same.average[..., :a.size], rtol=0, atol=1e-9)
