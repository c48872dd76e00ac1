"""The measures on a survival model, per time: by=, interval=, importance, H and heterogeneity of the tree engine
equal those of brute force (the model's own step functions), and by= groups equal the definition on their rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdpx

pytest.importorskip("sksurv", reason="scikit-survival is the survival extra (pdpx[survival])")
from sksurv.ensemble import RandomSurvivalForest  # noqa: E402
from sksurv.util import Surv  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(4)
    n = 160
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(0, 2, n), "c": rng.integers(0, 3, n).astype(float)})
    t = np.ceil(rng.exponential(40 * np.exp(-0.6 * X["a"] * X["c"]))).clip(1, 250)
    y = Surv.from_arrays(event=rng.uniform(size=n) < 0.8, time=t)
    forest = RandomSurvivalForest(n_estimators=6, min_samples_leaf=8, random_state=0).fit(X, y)
    return X, forest, forest.unique_times_[[2, 15, 40]]


def test_by_groups_equal_the_definition_on_their_rows(fitted):
    X, forest, times = fitted
    res = pdpx.partial_dependence(forest, X, "a", by="c", response="survival", times=times, grid_resolution=5,
                                  method="exact")
    frame = res.to_frame()
    assert frame["time"].dtype == np.float64
    checked = 0
    for level, rows in X.groupby("c"):
        group = frame[frame["c"].astype(str) == f"{level:g}"]
        for v in group["x_1"].unique():
            fns = forest.predict_survival_function(rows.assign(a=v))
            ref = np.mean([f(times) for f in fns], axis=0)
            got = group[group["x_1"] == v].sort_values("time")["yhat"]
            np.testing.assert_allclose(got.to_numpy(), ref, rtol=0, atol=1e-12)
            checked += 1
    assert checked == 3 * 5


def test_bootstrap_bands_per_time_equal_brutes(fitted):
    X, forest, times = fitted
    kw = dict(response="survival", times=times, grid_resolution=5, interval=0.9)
    exact = pdpx.partial_dependence(forest, X, "b", method="exact", **kw)
    brute = pdpx.partial_dependence(forest, X, "b", method="brute", **kw)
    assert exact.lower.shape == (len(times), 5)
    for name in ("average", "lower", "upper"):
        np.testing.assert_allclose(getattr(exact, name), getattr(brute, name), rtol=0, atol=1e-12)


def test_member_bands_are_the_trees_own_curves(fitted):
    X, forest, times = fitted
    res = pdpx.partial_dependence(forest, X, "b", response="survival", times=times, grid_resolution=4,
                                  interval="members")
    assert res.members.shape == (len(forest.estimators_), len(times), 4)
    for m, tree in enumerate(forest.estimators_):
        for k, v in enumerate(res.grid_values[0]):
            ref = np.mean([f(times) for f in tree.predict_survival_function(X.assign(b=v).to_numpy(np.float32))], axis=0)
            np.testing.assert_allclose(res.members[m, :, k], ref, rtol=0, atol=1e-12)


def test_importance_h_and_heterogeneity_per_time_equal_brutes(fitted):
    X, forest, times = fitted
    kw = dict(response="survival", times=times)
    for fn, extra in ((pdpx.importance, {"grid_resolution": 6}), (pdpx.heterogeneity, {"grid_resolution": 6}),
                      (pdpx.h_statistic, {})):
        exact = fn(forest, X, **kw, **extra, method="exact").to_frame()
        brute = fn(forest, X, **kw, **extra, method="brute").to_frame()
        assert set(exact["output"]) == {f"t={t:.9g}" for t in times}
        numeric = exact.select_dtypes("number").columns
        pd.testing.assert_frame_equal(exact.drop(columns=numeric), brute.drop(columns=numeric))
        np.testing.assert_allclose(exact[numeric].to_numpy(float), brute[numeric].to_numpy(float), rtol=1e-9,
                                   atol=1e-12)
