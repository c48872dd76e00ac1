"""pdpx.heterogeneity against its definition: ICE by brute force on every row (the column set keeping its dtype,
the model's own predict), each row's curve centered on its own mean, the weighted variance across rows by numpy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from ice_reference import ice_by_brute, variance_by_hand

import pdpx

LEVEL = {"u": 0.0, "v": 1.0, "w": -2.0}


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n), "x3": rng.uniform(-1, 1, n),
                         "g": pd.Categorical(rng.choice(list("uvw"), n), categories=list("uvw"))})


def _f(d):
    """The known-answer model: x1's slope is +3 where x2 > 0 and -3 elsewhere; x3 and g add; g also scales x3."""
    s = np.where(d["x2"].to_numpy() > 0, 1.0, -1.0)
    level = d["g"].astype(str).map(LEVEL).to_numpy()
    return 3 * d["x1"].to_numpy() * s + d["x3"].to_numpy() * (1 + level) + level


@pytest.mark.parametrize("weighted", [False, True])
def test_curves_and_scalar_equal_the_definition(weighted):
    X = _data()
    w = np.random.default_rng(1).uniform(0, 3, len(X)) if weighted else None
    res = pdpx.heterogeneity(_f, X, grid_resolution=7, sample_weight=w)
    assert res.features == ["x1", "x2", "x3", "g"] and res.categorical == [False, False, False, True]
    for i, feat in enumerate(res.features):
        ice = ice_by_brute(_f, X, feat, res.grid_values[i])
        want = variance_by_hand(ice, np.ones(len(X)) if w is None else w)
        np.testing.assert_allclose(res.variance[i][0], want, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(res.average[i][0], np.average(ice, axis=0, weights=w), rtol=1e-9, atol=1e-12)
        table = res.table.set_index("feature")
        assert table.loc[feat, "heterogeneity"] == pytest.approx(want.mean(), rel=1e-9, abs=1e-12)
    frame = res.to_frame()
    assert {"feature", "output", "x", "label", "variance", "average", "heterogeneity"} <= set(frame.columns)
    g = frame[frame.feature == "g"]
    assert g["label"].tolist() == ["u", "v", "w"] and g["x"].tolist() == [0.0, 1.0, 2.0]


def test_weights_change_the_answer_and_zero_weight_rows_drop_out():
    X = _data()
    w = np.where(X["x2"] > 0, 1.0, 0.0)  # only the rows where x1's slope is +3: their x1 curves agree
    res = pdpx.heterogeneity(_f, X, ["x1"], sample_weight=w)
    kept = pdpx.heterogeneity(_f, X[w > 0].reset_index(drop=True), ["x1"], custom_values={"x1": res.grid_values[0]})
    np.testing.assert_allclose(res.variance[0], kept.variance[0], atol=1e-12)
    assert res.heterogeneity[0, 0] < 1e-20 < pdpx.heterogeneity(_f, X, ["x1"]).heterogeneity[0, 0]


def test_chunks_of_rows_give_the_whole_answer():
    X = _data(n=3000)
    whole = pdpx.heterogeneity(_f, X, ["x1", "g"])
    chunked = pdpx.heterogeneity(_f, X, ["x1", "g"], memory_budget="1MB")
    assert any("rows at a time" in n for n in chunked.notes)
    assert not any("rows at a time" in n for n in whole.notes)
    for a, b in zip(whole.variance, chunked.variance):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_additive_model_has_no_heterogeneity():
    X = _data()

    def additive(d):
        return np.sin(3 * d["x1"].to_numpy()) + d["x2"].to_numpy() ** 2 + d["g"].astype(str).map(LEVEL).to_numpy()

    res = pdpx.heterogeneity(additive, X)
    assert np.all(res.heterogeneity < 1e-20)
    known = pdpx.heterogeneity(_f, X, ["x1"])  # x1's slope flips with x2: 9 var(sign) times the grid's spread
    grid = known.grid_values[0]
    s = np.where(X["x2"] > 0, 1.0, -1.0)
    want = 9 * s.var() * (grid - grid.mean()) ** 2
    np.testing.assert_allclose(known.variance[0][0], want, rtol=1e-9)


def test_tree_model_exact_equals_brute_on_every_row():
    from sklearn.tree import DecisionTreeRegressor

    X = _data(n=400).drop(columns="g")
    y = 3 * X.x1 * np.where(X.x2 > 0, 1, -1) + X.x3
    model = DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y)
    res = pdpx.heterogeneity(model, X, method="exact", grid_resolution=9)
    assert res.method == "exact"
    for i, feat in enumerate(res.features):
        ice = ice_by_brute(model.predict, X, feat, res.grid_values[i])
        np.testing.assert_allclose(res.variance[i][0], variance_by_hand(ice, np.ones(len(X))), rtol=1e-9, atol=1e-12)


def test_multi_output_classifier_one_curve_per_class():
    from sklearn.linear_model import LogisticRegression

    X = _data(n=200).drop(columns="g")
    y = np.digitize(X.x1 + X.x2 * X.x3, [-0.3, 0.3])
    model = LogisticRegression().fit(X, y)
    res = pdpx.heterogeneity(model, X, ["x1", "x3"], grid_resolution=5)
    assert res.outputs == ["0", "1", "2"]
    for i, feat in enumerate(res.features):
        ice = ice_by_brute(model.predict_proba, X, feat, res.grid_values[i])  # (n, K, G)
        for k in range(3):
            np.testing.assert_allclose(res.variance[i][k], variance_by_hand(ice[:, k, :], np.ones(len(X))),
                                       rtol=1e-9, atol=1e-14)
    assert set(res.table["output"]) == {"0", "1", "2"} and len(res.to_frame()) == 2 * 3 * 5


def test_options_that_do_not_apply_are_refused():
    with pytest.raises(pdpx.PdpxError, match=r"heterogeneity\(\): option\(s\) \['centered', 'kind'\] do not apply"):
        pdpx.heterogeneity(_f, _data(), kind="both", centered=True)


def test_plots_draw():
    pytest.importorskip("plotnine")
    res = pdpx.heterogeneity(_f, _data(), grid_resolution=5)
    for which in ("bars", "curves"):
        res.plot(which=which).draw()
    with pytest.raises(pdpx.PdpxError, match="which must be one of"):
        res.plot(which="pie")


def test_dask_input_gathers_each_partitions_moments_and_equals_pandas():
    """A Dask X: each partition's moments (weights, uneven partitions) merged here equal the same call on the same
    rows as pandas; regions, which keep every row's curve, are refused with the table of needs' message."""
    dd = pytest.importorskip("dask.dataframe")
    from pdpx.core.rows import message

    X = _data(n=300).drop(columns="g")
    w = np.random.default_rng(3).random(len(X))
    f = lambda d: d["x1"].to_numpy() * d["x2"].to_numpy() + np.sin(d["x2"].to_numpy())  # noqa: E731
    got = pdpx.heterogeneity(f, dd.from_pandas(X, npartitions=3), sample_weight=w, grid_resolution=7)
    want = pdpx.heterogeneity(f, X, sample_weight=w, grid_resolution=7)
    assert any("3 Dask partitions" in note for note in got.notes)
    for a, b in zip(got.variance + got.average, want.variance + want.average):
        np.testing.assert_allclose(a, b, atol=1e-12, rtol=0)
    with pytest.raises(pdpx.PdpxError) as err:
        pdpx.regions(f, dd.from_pandas(X, npartitions=2), "x1")
    assert str(err.value) == message("regions", "dask", "regions")


def test_spark_input_gathers_each_partitions_moments_and_equals_pandas(spark):
    """A Spark X: each partition's moments (weights from a column, missing values, the missing point) merged on the
    driver equal the same call on the same rows as pandas; regions, which need every row's curve, are refused."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(600, 3)), columns=list("abc"))
    X.loc[::9, "b"] = np.nan
    X["w"] = rng.random(len(X))
    model = HistGradientBoostingRegressor(max_iter=20, max_depth=3, random_state=0).fit(
        X[list("abc")], X["a"] * (X["b"].fillna(0) > 0) + X["c"])
    sdf = spark.createDataFrame(X).repartition(3)
    got = pdpx.heterogeneity(model, sdf, sample_weight="w", include_missing=True)
    rows = sdf.toPandas()
    want = pdpx.heterogeneity(model, rows[list("abc")], sample_weight=rows["w"].to_numpy(), include_missing=True)
    assert got.method == "exact" and any("Spark partitions" in note for note in got.notes)
    for a, b in zip(got.variance + got.average, want.variance + want.average):
        np.testing.assert_allclose(a, b, atol=1e-12, rtol=0)
    from pdpx.core.rows import message

    with pytest.raises(pdpx.PdpxError) as err:
        pdpx.regions(model, sdf.drop("w"), "a")
    assert str(err.value) == message("regions", "spark", "regions")


def test_regions_refuse_curves_over_the_memory_budget():
    X = _data(n=3000)
    with pytest.raises(pdpx.PdpxError, match=r"regions\(\): the ICE curves of 'x1' for 3,000 rows.*raise memory_budget"):
        pdpx.regions(_f, X, "x1", grid_resolution=100, memory_budget="1MB")


def test_the_missing_point_is_a_grid_point_in_chunks_too():
    X = _data(n=3000).drop(columns="g")
    X.loc[X.index[::7], "x2"] = np.nan

    def f(d):
        x2 = d["x2"].to_numpy()
        return d["x1"].to_numpy() * np.where(np.isnan(x2), 2.0, x2) + d["x3"].to_numpy()

    whole = pdpx.heterogeneity(f, X, ["x1", "x2"], include_missing="auto", grid_resolution=12)
    chunked = pdpx.heterogeneity(f, X, ["x1", "x2"], include_missing="auto", grid_resolution=12, memory_budget="1MB")
    assert np.isnan(whole.grid_values[1][-1]) and not np.isnan(whole.grid_values[0]).any()
    assert any("rows at a time" in n for n in chunked.notes)
    for i, feat in enumerate(whole.features):
        ice = ice_by_brute(f, X, feat, whole.grid_values[i])
        np.testing.assert_allclose(whole.variance[i][0], variance_by_hand(ice, np.ones(len(X))), rtol=1e-9)
        np.testing.assert_allclose(chunked.variance[i][0], whole.variance[i][0], rtol=1e-9)
    assert whole.to_frame().query("feature == 'x2'")["label"].iloc[-1] == "missing"
