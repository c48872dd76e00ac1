"""An average of finite predictions is finite: near the top of the double range, every place pdpx averages.

Predictions of 1e307 for every row average to 1e307 (a plain sum of a few hundred of
them is infinite), and 1.5e308 / 1e308 mixed average to their weighted mean: through
``brute``, ``exact`` (the tree kernels' counts and per-row sums, TreeSum members),
sample weights, ICE, 2-way grids, bootstrap intervals, Dask partitions and the
scikit-learn drop-in. The references are the definition, computed so it cannot
overflow (each prediction times its share of the weight, summed exactly).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx

rng = np.random.default_rng(0)
X = pd.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400)})
W = rng.uniform(0.5, 2.0, 400)


def _huge(frame):
    """1e307 everywhere: any plain sum of more than 17 of them overflows."""
    return np.full(len(frame), 1e307)


def _mixed(frame):
    """1.5e308 where b > 0, 1e308 elsewhere (both finite, their sum is not)."""
    return np.where(frame["b"].to_numpy() > 0, 1.5e308, 1e308)


def _mean(values, weights=None):
    w = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=float)
    return math.fsum(v * (wi / w.sum()) for v, wi in zip(values, w))


@pytest.mark.parametrize("weights", [None, W], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("model", [_huge, _mixed])
def test_brute_averages_huge_predictions_to_their_mean(model, weights):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way either
        res = pdpx.partial_dependence(model, X, ["a", "b"], kind="both", grid_resolution=4, sample_weight=weights)
    assert np.all(np.isfinite(res.average)), res.average
    for i, va in enumerate(res.grid_values[0]):
        for j, vb in enumerate(res.grid_values[1]):
            expected = _mean(model(X.assign(a=va, b=vb)), weights)
            np.testing.assert_allclose(res.average[0, i, j], expected, rtol=1e-12)


def _one_tree():
    """A tree fitted on 10 rows of 1e307 and 1.2e307 (scikit-learn's own leaf means of more
    rows would overflow); on the 400 rows of X a plain sum of its predictions is infinite."""
    from sklearn.tree import DecisionTreeRegressor

    fit = X.iloc[:10]
    return DecisionTreeRegressor(max_depth=1, random_state=0).fit(fit, np.where(fit.b > 0, 1.2e307, 1e307))


@pytest.mark.parametrize("kind", ["average", "both"])
@pytest.mark.parametrize("weights", [None, W], ids=["unweighted", "weighted"])
def test_exact_averages_huge_leaves_to_the_mean_of_the_trees_predictions(kind, weights):
    tree = _one_tree()
    assert tree.predict(X).min() >= 1e307  # (its squares overflow too: it may not split)
    for method in ("exact", "brute"):
        res = pdpx.partial_dependence(tree, X, ["a", "b"], kind=kind, grid_resolution=4, sample_weight=weights,
                                      method=method)
        assert res.method == method and np.all(np.isfinite(res.average)), (method, res.average)
        for i, va in enumerate(res.grid_values[0]):
            for j, vb in enumerate(res.grid_values[1]):
                expected = _mean(tree.predict(X.assign(a=va, b=vb)), weights)
                np.testing.assert_allclose(res.average[0, i, j], expected, rtol=1e-12)


def test_members_of_an_ensemble_that_skip_the_feature_average_without_overflow():
    """A TreeSum member that never reads the target feature is averaged directly (plugins/trees/combine.py)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import VotingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.tree import DecisionTreeRegressor

    fit = X.iloc[:10]
    y = np.where(fit.b > 0, 1.2e307, 1e307)  # 10 rows: scikit-learn's leaf means stay finite
    only_b = make_pipeline(ColumnTransformer([("b", "passthrough", ["b"])]), DecisionTreeRegressor(max_depth=1))
    model = VotingRegressor([("tree", DecisionTreeRegressor(max_depth=1)), ("only_b", only_b)]).fit(fit, y)
    res = pdpx.partial_dependence(model, X, "a", grid_resolution=4)
    assert np.all(np.isfinite(res.average))
    for k, v in enumerate(res.grid_values[0]):
        np.testing.assert_allclose(res.average[0, k], _mean(model.predict(X.assign(a=v))), rtol=1e-12)


def test_bootstrap_intervals_of_huge_predictions_are_finite():
    res = pdpx.partial_dependence(_mixed, X, "b", interval=0.9, n_boot=20, grid_resolution=4)
    assert np.all(np.isfinite(res.lower)) and np.all(np.isfinite(res.upper))
    assert np.all(res.lower <= res.average + 1e-9 * np.abs(res.average))


def test_the_scikit_learn_drop_in_averages_without_overflow():
    from pdpx.sklearn import partial_dependence as dropin

    tree = _one_tree()
    out = dropin(tree, X, ["a"], grid_resolution=4)
    assert np.all(np.isfinite(out["average"]))
    for k, v in enumerate(out["grid_values"][0]):
        np.testing.assert_allclose(out["average"][0, k], _mean(tree.predict(X.assign(a=v))), rtol=1e-12)


def test_dask_partitions_combine_without_overflow():
    dd = pytest.importorskip("dask.dataframe", reason="dask is installed with pdpx[dask]")
    res = pdpx.partial_dependence(_mixed, dd.from_pandas(X, npartitions=4), "a", grid_resolution=4)
    assert np.all(np.isfinite(res.average))
    for k, v in enumerate(res.grid_values[0]):
        np.testing.assert_allclose(res.average[0, k], _mean(_mixed(X.assign(a=v))), rtol=1e-12)
