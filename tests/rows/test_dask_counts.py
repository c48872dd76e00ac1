"""Pattern counts over Dask partitions (``DaskData.gather_counts``): each partition gathers its counts, only
the counts travel, and their sum is what one pandas frame gives.

Checked against the definition: the counts of one pandas frame (bit for bit when unweighted, within
rounding with weights), and every 1-way and 2-way PD from the summed counts against brute force on the
pandas frame (set the column, the model's own ``predict``, weighted average).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
pytest.importorskip("numba", reason="the counts kernels need numba")

from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor  # noqa: E402

from pdpx.core.errors import PdpxError  # noqa: E402
from pdpx.core.method import Request  # noqa: E402
from pdpx.core.plugins import adapt  # noqa: E402
from pdpx.plugins.trees import counts as C  # noqa: E402
from pdpx.plugins.trees import counts_pd as CP  # noqa: E402
from pdpx.rows.dask import DaskData  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(3000, 4)), columns=list("abcd"))
    y = X.a * X.b + np.sin(X.c) + 0.3 * X.d
    X.loc[rng.random(len(X)) < 0.1, "b"] = np.nan  # missing values routed by the model's own rule
    w = rng.uniform(0, 2, len(X))
    models = {
        "hgb": HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, y),  # shallow: patterns kernel
        "forest": RandomForestRegressor(n_estimators=5, max_depth=9, random_state=0).fit(X.fillna(0), y),
    }
    return X, w, models


def brute(model, X, features, grid, w):
    """The definition: every grid point set in every row, the model's own predict, the weighted average."""
    out = np.empty([len(g) for g in grid])
    for idx in np.ndindex(*out.shape):
        Xg = X.copy()
        for f, g, i in zip(features, grid, idx):
            Xg[X.columns[f]] = g[i]
        out[idx] = np.average(model.predict(Xg), weights=w)
    return out


def local_counts(model, X, w, order):
    ad = adapt(model)
    return C.gather(ad.tree_model("predict"), ad.validate_columns(X), w, order=order)


def dask_counts(model, X, w, order, **kw):
    frame = dd.from_pandas(X, npartitions=3)
    assert frame.npartitions == 3
    data = DaskData(frame, adapt(model))
    return data.gather_counts(model, "predict", order, 256 << 20, task=C.gather_task, sample_weight=w, **kw)


@pytest.mark.parametrize("name", ["hgb", "forest"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("order", [1, 2])
def test_three_partitions_give_the_counts_of_one_frame_and_pd_equal_to_brute(data, name, weighted, order):
    X, w_all, models = data
    model = models[name]
    X = X if name == "hgb" else X.fillna(0)
    w = w_all if weighted else None
    one = local_counts(model, X, w, order)
    many = dask_counts(model, X, w, order)
    assert many.key == one.key and many.n_rows == one.n_rows == len(X)
    if weighted:
        np.testing.assert_allclose(many.counts, one.counts, rtol=1e-12, atol=1e-9)
        assert many.total_weight == pytest.approx(one.total_weight, rel=1e-12)
    else:
        np.testing.assert_array_equal(many.counts, one.counts)
    tm = adapt(model).tree_model("predict")
    ww = np.ones(len(X)) if w is None else w
    grids = {0: np.array([-1.0, 0.0, 0.7]), 1: np.array([-0.5, 0.2, np.nan]), 2: np.array([0.1, 1.5])}
    sets = [(0,), (1,), (2,)] + ([(0, 1), (1, 2)] if order == 2 else [])
    for feats in sets:
        grid = [grids[f] for f in feats]
        req = Request(X=X, features=list(feats), grid_values=grid, categorical=[False] * len(feats),
                      response="predict", outputs=[0], kind="average", sample_weight=w, memory_budget=1 << 28)
        got = CP.partial_dependence(tm, many, req).average[0]
        np.testing.assert_allclose(got, brute(model, X, feats, grid, ww), rtol=1e-9, atol=1e-9)


def test_on_a_distributed_client_the_counts_are_the_same(data):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    X, w, models = data
    model = models["hgb"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
                                  silence_logs=50) as cluster, distributed.Client(cluster):
        many = dask_counts(model, X, w, 2)
        unweighted = dask_counts(model, X, None, 2)
    np.testing.assert_allclose(many.counts, local_counts(model, X, w, 2).counts, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(unweighted.counts, local_counts(model, X, None, 2).counts)


def test_weights_of_the_wrong_length_are_refused(data):
    X, w, models = data
    with pytest.raises(PdpxError, match="one weight per row"):
        dask_counts(models["hgb"], X, w[:-1], 1)


def test_a_dask_series_of_weights_is_computed(data):
    X, w, models = data
    series = dd.from_pandas(pd.Series(w), npartitions=3)
    got = dask_counts(models["hgb"], X, series, 1)
    np.testing.assert_allclose(got.counts, local_counts(models["hgb"], X, w, 1).counts, rtol=1e-12, atol=1e-9)
