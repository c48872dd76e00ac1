"""brute: batching under a memory budget, threads, progress, weights, ICE, centering, tidy output."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor

import pdpx
from pdpx.core import stacking
from pdpx.core.result import SCHEMA_HEAD
from pdpx.plugins.brute import plan_chunks


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    y = X.a * X.b + np.sin(X.c)
    return X, RandomForestRegressor(n_estimators=8, max_depth=5, random_state=0).fit(X, y)


class CountingModel:
    """A model that records the size of each predict call."""

    def __init__(self):
        self.calls = []

    def predict(self, X):
        self.calls.append(len(X))
        return X["a"].to_numpy() * 2 + X["b"].to_numpy() ** 2


def test_known_answer_by_hand(fitted):
    X, _ = fitted
    model = CountingModel()
    res = pdpx.partial_dependence(model, X, ["a"], kind="both", grid_resolution=7)
    g = res.grid_values[0]
    expected = 2 * g + np.mean(X.b**2)
    np.testing.assert_allclose(res.average[0], expected)
    np.testing.assert_allclose(res.individual[0], 2 * g[None, :] + (X.b.to_numpy() ** 2)[:, None])


def test_many_grid_points_per_predict_call(fitted):
    X, _ = fitted
    model = CountingModel()
    pdpx.partial_dependence(model, X, ["a", "b"], grid_resolution=10)
    # + the one-row probe for the output count, + the stacking check's sample (the model is the user's code:
    # one stacked call of ROWS rows at POINTS grid points, one call per grid point)
    assert sum(model.calls) == 100 * len(X) + 1 + 2 * stacking.ROWS * stacking.POINTS
    sample = [stacking.ROWS * stacking.POINTS] + [stacking.ROWS] * stacking.POINTS
    assert model.calls[1:2 + stacking.POINTS] == sample
    assert max(model.calls) >= 10 * len(X), "grid points should be stacked into few predict calls"


def test_small_memory_budget_splits_calls_but_not_the_answer(fitted):
    X, model = fitted
    big = pdpx.partial_dependence(model, X, ["a", "b"], kind="both", grid_resolution=10, method="brute")
    counting = CountingModel()
    small = pdpx.partial_dependence(counting, X, ["a", "b"], grid_resolution=10, memory_budget="1MB")
    assert max(counting.calls) < 100 * len(X)
    tiny = pdpx.partial_dependence(model, X, ["a", "b"], kind="both", grid_resolution=10, method="brute",
                                   memory_budget="1MB")
    np.testing.assert_allclose(tiny.average, big.average, atol=1e-12)
    np.testing.assert_allclose(tiny.individual, big.individual, atol=1e-12)
    assert small.average.shape == (1, 10, 10)


def test_rows_are_split_when_one_grid_point_exceeds_the_budget():
    tasks = plan_chunks(n_rows=1_000_000, n_points=3, bytes_per_row=200, budget=2**20, jobs=1)
    assert all(p1 - p0 == 1 for p0, p1, _, _ in tasks)
    rows = [(r0, r1) for p0, _, r0, r1 in tasks if p0 == 0]
    assert rows[0][0] == 0 and rows[-1][1] == 1_000_000
    assert max(r1 - r0 for r0, r1 in rows) * 200 * 4 <= 2**20


def test_threads_give_the_same_answer(fitted):
    X, model = fitted
    one = pdpx.partial_dependence(model, X, ["c"], kind="both", method="brute", grid_resolution=9)
    two = pdpx.partial_dependence(model, X, ["c"], kind="both", method="brute", grid_resolution=9, n_jobs=2)
    np.testing.assert_allclose(two.average, one.average, atol=1e-12)
    np.testing.assert_allclose(two.individual, one.individual, atol=1e-12)


def test_progress_bar_when_asked(fitted, capsys):
    X, model = fitted
    pdpx.partial_dependence(model, X, ["a"], method="brute", progress=True, grid_resolution=5)
    assert "pdpx brute" in capsys.readouterr().err


def test_no_progress_bar_by_default_outside_a_terminal(fitted, capsys):
    X, model = fitted
    pdpx.partial_dependence(model, X, ["a"], method="brute", grid_resolution=5)
    assert capsys.readouterr().err == ""


def test_weighted_average_and_unweighted_ice(fitted):
    X, _ = fitted
    model = CountingModel()
    w = np.arange(len(X)) % 4
    res = pdpx.partial_dependence(model, X, ["a"], kind="both", sample_weight=w, grid_resolution=5)
    np.testing.assert_allclose(res.average[0], np.average(res.individual[0], axis=0, weights=w))


def test_centered_ice_and_pd_start_at_zero(fitted):
    X, model = fitted
    plain = pdpx.partial_dependence(model, X, ["a"], kind="both", grid_resolution=6)
    cen = pdpx.partial_dependence(model, X, ["a"], kind="both", grid_resolution=6, centered=True)
    np.testing.assert_allclose(cen.individual[0][:, 0], 0)
    np.testing.assert_allclose(cen.average[0][0], 0)
    np.testing.assert_allclose(cen.individual, plain.individual - plain.individual[:, :, :1])
    np.testing.assert_allclose(cen.average, plain.average - plain.average[:, :1])


def test_tidy_frame_schema(fitted):
    X, model = fitted
    res = pdpx.partial_dependence(model, X, ["a", "b"], kind="both", grid_resolution=3)
    df = res.to_frame()
    assert list(df.columns) == SCHEMA_HEAD + ["feature_1", "type_1", "x_1", "label_1",
                                              "feature_2", "type_2", "x_2", "label_2", "yhat"]
    assert len(df) == 9 + 9 * len(X)
    avg = df[df.kind == "average"]
    assert avg.row.isna().all()
    np.testing.assert_allclose(avg.yhat.to_numpy(), res.average.ravel())
    ice = df[(df.kind == "individual") & (df.row == 5)]
    np.testing.assert_allclose(ice.yhat.to_numpy(), res.individual[0, 5].ravel())
    assert str(df.row.dtype) == "Int64" and df.yhat.dtype == np.float64


def test_collection_stacks_results_of_different_sizes(fitted):
    X, model = fitted
    coll = pdpx.partial_dependence_many(model, X, ["a", ("a", "b"), 3], grid_resolution=4)
    assert [r.features for r in coll] == [["a"], ["a", "b"], ["d"]]
    assert coll[("a", "b")].grid_shape == (4, 4)
    assert coll["d"].features == ["d"]
    df = coll.to_frame()
    assert set(df.feature_set) == {"a", "a, b", "d"}
    assert df.loc[df.feature_set == "a", "feature_2"].isna().all()
    assert len(df) == 4 + 16 + 4


def test_categorical_feature_in_frame():
    X = pd.DataFrame({"g": pd.Categorical(["x", "y", "z", "x"]), "v": [1.0, 2.0, 3.0, 4.0]})
    model = lambda d: d["v"].to_numpy() + (d["g"] == "y").to_numpy() * 10.0  # noqa: E731
    res = pdpx.partial_dependence(model, X, ["g"])
    df = res.to_frame()
    assert list(df.label_1) == ["x", "y", "z"]
    assert list(df.x_1) == [0.0, 1.0, 2.0]
    assert list(df.type_1) == ["categorical"] * 3
    np.testing.assert_allclose(df.yhat, [2.5, 12.5, 2.5])


def test_config_context_sets_the_default_budget(fitted):
    X, model = fitted
    with pdpx.config_context(memory_budget="1MB"):
        assert pdpx.get_config()["memory_budget"] == 2**20
        with pytest.raises(pdpx.PdpxError, match="memory budget of 1.0 MiB"):
            pdpx.partial_dependence(model, X, ["a", "b"], kind="both", grid_resolution=60)
    from pdpx.core.config import machine_budget

    assert pdpx.get_config()["memory_budget"] == machine_budget()  # the default again: half the memory available


def test_ice_sample_keeps_the_full_average(fitted):
    X, model = fitted
    full = pdpx.partial_dependence(model, X, ["a"], kind="both", grid_resolution=5)
    for method in ("brute", "exact"):
        sub = pdpx.partial_dependence(model, X, ["a"], kind="both", grid_resolution=5, ice_sample=20, method=method)
        assert sub.individual.shape == (1, 20, 5)
        assert len(sub.ice_rows) == 20 and np.all(np.diff(sub.ice_rows) > 0)
        np.testing.assert_allclose(sub.average, full.average, atol=1e-9)
        np.testing.assert_allclose(sub.individual[0], full.individual[0][sub.ice_rows], atol=1e-9)
        df = sub.to_frame()
        assert set(df.loc[df.kind == "individual", "row"]) == set(sub.ice_rows)


def test_oversized_ice_is_refused_with_ice_sample_as_the_way(fitted):
    X, model = fitted
    with pytest.raises(pdpx.PdpxError, match="ice_sample=1000"):
        pdpx.partial_dependence(model, X, ["a", "b"], kind="both", grid_resolution=50, memory_budget="2MB")
    res = pdpx.partial_dependence(model, X, ["a", "b"], kind="both", grid_resolution=50, memory_budget="2MB",
                                  ice_sample=10)
    assert res.individual.shape == (1, 10, 50, 50)
