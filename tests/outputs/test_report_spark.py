"""pdpx.report of a Spark DataFrame: every number on the page equals the report of the same rows as pandas (the PD
curves, importance and H from all rows where they live; the ICE curves, heterogeneity, regions and the ledger on
the seeded rows the pandas report reads, brought here), and the page says on which rows each part rests."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pdpx[spark]')")

import pdpx  # noqa: E402
from pdpx import reporting  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(7)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    X.loc[::13, "b"] = np.nan
    X["g"] = pd.Categorical(rng.choice(["u", "v"], len(X)))
    y = X.a * X.c + 2 * X.c * (X.g == "v") + np.nan_to_num(X.b)
    return X, y.to_numpy(), np.round(rng.uniform(0.1, 2, len(X)), 3)


def pages(monkeypatch):
    """The Page objects the reports would write (their numbers), captured as they are built."""
    got = []
    real = reporting.Page

    def keep(**kw):
        got.append(kw)
        return real(**kw)

    monkeypatch.setattr(reporting, "Page", keep)
    return got


def test_the_report_of_a_spark_dataframe_equals_the_pandas_report(spark, rows, tmp_path, monkeypatch):
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y, w = rows
    model = HistGradientBoostingRegressor(max_iter=15, max_leaf_nodes=8, random_state=0).fit(X, y)
    sdf = spark.createDataFrame(X.assign(g=X.g.astype(str), w=w)).repartition(2).cache()
    local = sdf.toPandas()
    wl = local.pop("w").to_numpy()
    local["g"] = local.g.astype(pd.CategoricalDtype(["u", "v"]))
    got = pages(monkeypatch)
    kw = dict(features=["a", "c", "g"], interactions=1, ice_sample=20, random_state=3, heterogeneity=1,
              progress=False, grid_resolution=8)
    pdpx.report(model, sdf, tmp_path / "spark.html", sample_weight="w", **kw)
    pdpx.report(model, local, tmp_path / "pandas.html", sample_weight=wl, **kw)
    s, p = got
    for a, b in zip(s["results"], p["results"]):
        assert a.features == b.features and a.n_rows == b.n_rows == len(X)
        np.testing.assert_allclose(a.average, b.average, rtol=0, atol=1e-9)
        np.testing.assert_allclose(a.individual, b.individual, rtol=0, atol=1e-9)  # the same 20 rows' curves
        np.testing.assert_array_equal(a.ice_rows, b.ice_rows)
        assert a.interval == b.interval == 0.95  # the report's default band, from every row's curves
        np.testing.assert_allclose(a.lower, b.lower, rtol=0, atol=1e-9)
        np.testing.assert_allclose(a.upper, b.upper, rtol=0, atol=1e-9)
    pd.testing.assert_frame_equal(pd.DataFrame(s["importance"]), pd.DataFrame(p["importance"]), rtol=0, atol=1e-9)
    for part in ("pairwise", "overall"):
        pd.testing.assert_frame_equal(getattr(s["hstat"], part), getattr(p["hstat"], part), rtol=0, atol=1e-9)
    hs, hp = s["sections"][0], p["sections"][0]
    pd.testing.assert_frame_equal(hs.heterogeneity.table, hp.heterogeneity.table, rtol=0, atol=1e-9)
    assert [r.rules for r, _ in hs.regions] == [r.rules for r, _ in hp.regions] and hs.regions
    pd.testing.assert_frame_equal(hs.explained.ledger, hp.explained.ledger, rtol=0, atol=1e-9)
    assert len(s["frame"]) == len(p["frame"]) == len(X)  # the page's rows: all of them
    page = (tmp_path / "spark.html").read_text()
    assert "X is a Spark DataFrame" in page and "average all 300 rows" in page and "sample of 20 rows" in page
    assert "H rests on all 300 rows" in page and "misleads&#x27; rests on a seeded sample of 300 rows" in page
    assert "X is a Spark DataFrame" not in (tmp_path / "pandas.html").read_text()


def test_sample_brings_the_rows_the_pandas_report_samples(spark, rows):
    from sklearn.ensemble import HistGradientBoostingRegressor

    from pdpx.core.options import PDOptions
    from pdpx.report_rows import spark_rows

    X, y, w = rows
    model = HistGradientBoostingRegressor(max_iter=5, random_state=0).fit(X, y)
    sdf = spark.createDataFrame(X.assign(g=X.g.astype(str), w=w)).repartition(3).cache()
    local = sdf.toPandas()
    frame, sampled_from, options = spark_rows(model, sdf, PDOptions.checked("report", {"sample_weight": "w"}), 4, 50)
    take = np.sort(np.random.default_rng(4).choice(len(X), 50, replace=False))  # what the pandas report draws
    assert sampled_from == len(X) and len(frame) == 50
    np.testing.assert_array_equal(frame[["a", "b", "c"]].to_numpy(), local[["a", "b", "c"]].to_numpy()[take])
    np.testing.assert_array_equal(options.sample_weight, local["w"].to_numpy()[take])
    assert spark_rows(model, sdf, options, 4, None)[0] is sdf  # no sample: the rows stay in Spark
