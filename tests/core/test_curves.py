"""core.curves: a new curve reducer, run by the one driver, equals its definition whichever way the curves come
(the method's fused walk, ICE chunks from the session, Dask partitions)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression

import pdpx
from pdpx.core.plugins import plugin_manager
from pdpx.extend import CurveMoments, CurveReducer, reduce_ice
from pdpx.plugins.brute import Brute


class Rise(CurveReducer):
    """Per feature, the weighted mean over the rows of (curve at the last grid point - curve at the first)."""

    def start(self, part):
        out = Rise()
        out.part, out.sums, out.w = part, {}, 0.0
        out.w = float(part.weights.sum())
        return out

    def add(self, rows, ice):
        w = self.part.weights[rows]
        for j, curves in ice.items():
            self.sums[j] = self.sums.get(j, 0.0) + (curves[:, :, -1] - curves[:, :, 0]) @ w

    def merge(self, other):
        out = Rise()
        out.part, out.w = self.part, self.w + other.w
        out.sums = {j: self.sums.get(j, 0.0) + other.sums.get(j, 0.0) for j in set(self.sums) | set(other.sums)}
        return out

    def finish(self):
        return {j: s / self.w for j, s in self.sums.items()}


def rise(predict, X, col, grid, w):
    """The definition: the model's own predictions at the grid's ends, weighted over the rows."""
    lo, hi = X.copy(), X.copy()
    lo[col], hi[col] = grid[0], grid[-1]
    return float((predict(hi) - predict(lo)) @ w / w.sum())


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = X.a * X.b + np.sin(X.c)
    return X, y, rng.uniform(0.1, 2.0, len(X))


def test_a_new_reducer_in_chunks_equals_its_definition(data, monkeypatch):
    from pdpx.core import curves

    monkeypatch.setattr(curves, "ICE_SHARE", 2000)  # with 1 MB: a few dozen rows per chunk
    X, y, w = data
    model = LinearRegression().fit(X.assign(ab=X.a * X.b), y)
    predict = lambda Z: model.predict(Z.assign(ab=Z.a * Z.b))  # noqa: E731
    grid = {"a": [-1.0, 0.0, 1.5], "c": [-2.0, 2.0]}
    got = reduce_ice(predict, X, ["a", "c"], Rise(), custom_values=grid, sample_weight=w, memory_budget="1MB")
    assert got.how == "chunks" and got.method == "brute"
    assert any("rows at a time" in n for n in got.notes)  # the budget cut the rows into chunks
    for j, col in zip(got.features, ["a", "c"]):
        assert got.value[j] == pytest.approx([rise(predict, X, col, grid[col], w)], rel=1e-12)


def test_heterogeneity_moments_from_the_walk_equal_the_chunks_and_the_definition(data):
    X, y, w = data
    model = HistGradientBoostingRegressor(max_iter=20, max_leaf_nodes=8, random_state=0).fit(X, y)
    grid = {"a": [-1.0, 0.0, 1.5]}
    walk = reduce_ice(model, X, "a", CurveMoments(), custom_values=grid, sample_weight=w)
    chunks = reduce_ice(model, X, "a", CurveMoments(), custom_values=grid, sample_weight=w,
                        method_options={"engine": "rows"})
    assert (walk.how, chunks.how) == ("walk", "chunks")
    ice = np.stack([model.predict(X.assign(a=v)) for v in grid["a"]], axis=1)  # (n, G), the definition
    c = ice - ice.mean(axis=1, keepdims=True)
    mean_c = (w @ c) / w.sum()
    var_c = (w @ (c - mean_c) ** 2) / w.sum()
    for got in (walk, chunks):
        centered, plain = got.value[got.features[0]]
        np.testing.assert_allclose(centered.mean[0], mean_c, atol=1e-10)
        np.testing.assert_allclose(centered.variance[0], var_c, atol=1e-10)
        np.testing.assert_allclose(plain.mean[0], (w @ ice) / w.sum(), atol=1e-10)


class _Walking(Brute):
    """brute's curves, and a fused walk for :class:`Rise` (the definition at the grid's ends, no curves formed)."""

    name = "walking-brute"
    equals_brute = False

    def reduce_curves(self, adapter, requests, reducer):
        if not isinstance(reducer, Rise):
            return None
        for r in requests:
            lo, hi = r.X.copy(), r.X.copy()
            lo.iloc[:, r.features[0]], hi.iloc[:, r.features[0]] = r.grid_values[0][0], r.grid_values[0][-1]
            diff = adapter.predict(hi, r.response)[:, r.outputs] - adapter.predict(lo, r.response)[:, r.outputs]
            reducer.sums[r.features[0]] = diff.T @ reducer.part.weights
        return reducer


class _Plugin:
    @pdpx.hookimpl
    def pdpx_register_methods(self, register):
        register(_Walking())


def test_a_method_offers_a_fused_walk_through_reduce_curves(data):
    X, y, w = data
    model = LinearRegression().fit(X, y)
    pm = plugin_manager()
    plugin = _Plugin()
    pm.register(plugin)
    try:
        got = reduce_ice(model, X, ["b"], Rise(), method="walking-brute", custom_values={"b": [-0.5, 0.25, 1.0]},
                         sample_weight=w)
    finally:
        pm.unregister(plugin)
    assert got.how == "walk" and got.method == "walking-brute"
    assert got.value[1] == pytest.approx([rise(model.predict, X, "b", [-0.5, 1.0], w)], rel=1e-9)


def test_a_new_reducer_per_dask_partition_equals_its_definition(data):
    dd = pytest.importorskip("dask.dataframe", reason="the partitions of a Dask X need dask")
    X, y, _ = data
    model = LinearRegression().fit(X, y)
    grid = {"b": [-1.0, 1.0]}
    got = reduce_ice(model, dd.from_pandas(X, npartitions=3), ["b"], Rise(), custom_values=grid)
    assert got.how == "partitions" and got.parts == 3
    assert got.value[1] == pytest.approx([rise(model.predict, X, "b", grid["b"], np.ones(len(X)))], rel=1e-12)


def test_options_that_do_not_apply_are_refused(data):
    X, y, _ = data
    model = LinearRegression().fit(X, y)
    with pytest.raises(pdpx.PdpxError, match=r"reduce_ice\(\): option\(s\) \['centered', 'kind'\] do not apply"):
        reduce_ice(model, X, ["a"], Rise(), kind="average", centered=True)
