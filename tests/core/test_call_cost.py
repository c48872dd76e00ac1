"""A call costs what its kernel costs: what is computed once, what waits until it is read, and that the
shortcuts give what the definitions give (numpy's quantiles, scipy's hull, scipy's mquantiles)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import extrapolation as E
from pdpx.core import support as S
from pdpx.core.grid import mquantiles


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=list("abcd"))
    return X, (lambda d: d["a"].to_numpy() * 2 + d["b"].to_numpy())


def test_support_is_computed_when_first_read(data, monkeypatch):
    X, f = data
    calls = []
    real = S.support_counts
    monkeypatch.setattr(S, "support_counts", lambda *a, **k: calls.append(1) or real(*a, **k))
    res = pdpx.partial_dependence(f, X, "a", method="brute", grid_resolution=9)
    assert calls == [] and res.extrapolation is not None  # the check came with the call, the counts did not
    first = res.support
    assert calls == [1]
    assert res.support is first and res.unsupported is not None and calls == [1]  # computed once
    col = X["a"].to_numpy()
    lo, hi = S.intervals(res.grid_values[0])
    expected = [((col >= a) & ((col < b) | (i == 8) & (col <= b))).sum() for i, (a, b) in enumerate(zip(lo, hi))]
    np.testing.assert_array_equal(first, expected)


def test_a_result_pickled_before_reading_its_support_reads_it_after(data):
    X, f = data
    res = pdpx.partial_dependence(f, X, ["a", "b"], method="brute", grid_resolution=6)
    back = pickle.loads(pickle.dumps(res))
    np.testing.assert_array_equal(back.support, res.support)
    np.testing.assert_array_equal(back.outside_hull, res.outside_hull)
    pd.testing.assert_frame_equal(back.support_frame(), res.support_frame())


def test_the_extrapolation_warning_still_fires_on_the_call():
    rng = np.random.default_rng(1)
    a = rng.normal(size=600)
    X = pd.DataFrame({"a": a, "b": a + rng.normal(scale=0.05, size=600), "c": rng.normal(size=600)})
    with pytest.warns(pdpx.ExtrapolationWarning):
        pdpx.partial_dependence(lambda d: d["a"] + d["b"], X, "a", method="brute")
    with warnings.catch_warnings():
        warnings.simplefilter("error", pdpx.ExtrapolationWarning)
        pdpx.partial_dependence(lambda d: d["a"] + d["c"], X.drop(columns="b"), "a", method="brute")


def test_a_call_reads_the_trees_once(monkeypatch):
    from sklearn.ensemble import GradientBoostingRegressor

    from pdpx.adapters import sklearn_trees

    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=list("abc"))
    model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, X.a + X.b)
    calls = []
    real = sklearn_trees.tree_model
    monkeypatch.setattr(sklearn_trees, "tree_model", lambda *a: calls.append(1) or real(*a))
    assert pdpx.partial_dependence(model, X, "a", grid_resolution=5).method == "exact"
    assert len(calls) == 1
    calls.clear()
    pdpx.partial_dependence_many(model, X, ["a", "b", ("a", "c")], grid_resolution=5)
    assert len(calls) == 1  # every feature set of the call


def test_quantiles_are_numpys():
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 40, 999, 1000, 1001, 5000):
        x = rng.normal(size=(n, 3)) * 10.0 ** rng.integers(-6, 6)
        x[:, 1] = np.round(x[:, 1])  # ties
        for B in range(2, 11):
            q = np.linspace(0, 1, B + 1)[1:-1]
            np.testing.assert_array_equal(E.quantiles(np.sort(x, axis=0), q), np.quantile(x, q, axis=0))
            np.testing.assert_array_equal(E.quantiles(np.sort(x[:, 0]), q), np.quantile(x[:, 0], q))


def test_grid_quantiles_are_scipys():
    mstats = pytest.importorskip("scipy.stats.mstats", reason="scipy is installed with scikit-learn")
    rng = np.random.default_rng(4)
    for n in (2, 3, 10, 300, 5001):
        x = rng.normal(size=n)
        for p in [(0.05, 0.95), (0.0, 1.0), (0.25, 0.5), (0.013, 0.987)]:
            np.testing.assert_allclose(mquantiles(x, p), mstats.mquantiles(x, p), rtol=0, atol=0)


@pytest.mark.parametrize("shape", ["cloud", "line", "square", "few"])
def test_the_hull_is_the_hull_of_every_row(shape):
    """Points inside the extreme-point polygon are left out of qhull's input: the hull is scipy's of all rows."""
    from scipy.spatial import ConvexHull, QhullError

    rng = np.random.default_rng(5)
    n = {"few": 70, "cloud": 20000, "line": 3000, "square": 5000}[shape]
    a = rng.normal(size=n)
    b = {"cloud": 0.7 * a + rng.normal(scale=0.5, size=n), "line": 2 * a + 1,
         "square": rng.uniform(size=n), "few": rng.normal(size=n)}[shape]
    if shape == "square":
        a = rng.uniform(size=n)
    g1 = np.linspace(a.min() - 0.3, a.max() + 0.3, 25)
    g2 = np.linspace(b.min() - 0.3, b.max() + 0.3, 21)
    got = S.outside_hull(a, b, g1, g2)
    pts = np.column_stack([a, b])
    low, span = pts.min(axis=0), np.ptp(pts, axis=0)
    q = (np.column_stack([np.repeat(g1, len(g2)), np.tile(g2, len(g1))]) - low) / span
    try:
        eq = ConvexHull((pts - low) / span).equations
        inside = np.all(q @ eq[:, :2].T + eq[:, 2] <= 1e-9, axis=1)
        np.testing.assert_array_equal(got, ~inside.reshape(len(g1), len(g2)))
    except QhullError:  # a line: only its own points are inside
        assert got.mean() > 0.9
