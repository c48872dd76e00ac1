"""The memory budget holds for what a call computes besides its result (docs/guarantees.md).

``memory_budget`` bounds the result and everything the call holds next to it: the
tree engine's row slices share what the result leaves of the budget, and the convex
hull of the extrapolation check and the scikit-learn adapter's look for infinite values
read the rows a bounded slice at a time. Peaks are
measured with tracemalloc (numpy reports its arrays to it), so they do not depend on
the machine's allocator; the answers are checked against brute force, scipy's hull
of every row and the columns' own values.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import support as S

MiB = 2**20


def traced_peak(fn):
    """(fn(), the most bytes traced at once while it ran, over what was traced before)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak - before


@pytest.fixture(scope="module")
def big():
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(size=(200_000, 5)), columns=list("abcde"))
    y = X.a * X.b + np.sin(6 * X.c)
    return HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X[:5000], y[:5000]), X


def test_exact_ice_of_a_sample_peaks_within_the_budget(big):
    """ICE of 2,000 rows on a 40 x 40 grid (24.4 MiB) over 200,000 rows with a 32 MiB budget: the engine's
    slices, the checks on the result and the hull of 200,000 pairs share the 7.6 MiB left."""
    model, X = big
    grid = {"a": np.linspace(0.02, 0.98, 40), "b": np.linspace(0.02, 0.98, 40)}
    kw = dict(kind="both", ice_sample=2000, custom_values=grid, random_state=0, n_jobs=2)
    pdpx.partial_dependence(model, X.head(300), ["a", "b"], method="exact", **kw)  # compile, import
    budget = 32 * MiB
    res, peak = traced_peak(lambda: pdpx.partial_dependence(model, X, ["a", "b"], method="exact",
                                                            memory_budget=budget, **kw))
    assert res.individual.nbytes > 24 * MiB
    assert peak <= budget, f"peak {peak / MiB:.1f} MiB over the budget of {budget / MiB:.0f} MiB"


@pytest.mark.parametrize("classes", [None, 2, 3])
def test_exact_in_slices_of_a_few_rows_equals_brute(classes):
    """A budget that leaves the engine room for slices of a few dozen rows (not whole blocks): every link,
    one or several outputs, the same numbers as brute force."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    z = X.a + X.b * X.c
    if classes is None:
        model = HistGradientBoostingRegressor(max_iter=15, random_state=0).fit(X, z)
    else:
        y = np.digitize(z, np.quantile(z, np.linspace(0, 1, classes + 1)[1:-1]))
        model = HistGradientBoostingClassifier(max_iter=15, random_state=0).fit(X, y)
    kw = dict(kind="both", grid_resolution=30, n_jobs=2, memory_budget=3 * (classes or 1) * MiB)
    e = pdpx.partial_dependence(model, X, ["a", "b"], method="exact", **kw)
    b = pdpx.partial_dependence(model, X, ["a", "b"], method="brute", **kw)
    assert e.method == "exact"
    np.testing.assert_allclose(e.individual, b.individual, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(e.average, b.average, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", ["cloud", "line", "square", "nan"])
def test_the_hull_read_in_slices_is_the_hull_of_every_row(shape, monkeypatch):
    """Slices of 700 rows (extreme points and candidates gathered slice by slice): scipy's hull of all rows."""
    from scipy.spatial import ConvexHull, QhullError

    monkeypatch.setattr(S, "HULL_ROWS", 700)
    rng = np.random.default_rng(7)
    n = 5000
    a = rng.normal(size=n)
    b = {"cloud": 0.7 * a + rng.normal(scale=0.5, size=n), "line": 2 * a + 1, "square": rng.uniform(size=n),
         "nan": rng.normal(size=n)}[shape]
    if shape == "square":
        a = rng.uniform(size=n)
    if shape == "nan":
        a[rng.uniform(size=n) < 0.2] = np.nan
        b[rng.uniform(size=n) < 0.2] = np.inf
    ok = np.isfinite(a) & np.isfinite(b)
    g1 = np.linspace(a[ok].min() - 0.3, a[ok].max() + 0.3, 25)
    g2 = np.linspace(b[ok].min() - 0.3, b[ok].max() + 0.3, 21)
    got = S.outside_hull(a, b, g1, g2)
    pts = np.column_stack([a[ok], b[ok]])
    low, span = pts.min(axis=0), np.ptp(pts, axis=0)
    q = (np.column_stack([np.repeat(g1, len(g2)), np.tile(g2, len(g1))]) - low) / span
    try:
        eq = ConvexHull((pts - low) / span).equations
    except QhullError:  # a line: only its own points are inside
        assert shape == "line" and got.mean() > 0.9
        return
    inside = np.all(q @ eq[:, :2].T + eq[:, 2] <= 1e-9, axis=1)
    np.testing.assert_array_equal(got, ~inside.reshape(len(g1), len(g2)))


def test_the_hull_of_a_million_pairs_holds_a_few_slices_at_most():
    """The hull's own arrays do not grow with the rows: under 8 MiB for 1,000,000 pairs (16 MB of input)."""
    rng = np.random.default_rng(3)
    a = rng.uniform(size=1_000_000)
    b = a * 0.5 + rng.uniform(size=1_000_000)
    g = np.linspace(0.05, 0.95, 50)
    S.outside_hull(a[:100], b[:100], g, g)  # import scipy's hull first
    _, peak = traced_peak(lambda: S.outside_hull(a, b, g, g))
    assert peak < 8 * MiB, f"{peak / MiB:.1f} MiB"


def test_the_domain_check_read_in_slices_finds_every_column(monkeypatch):
    """Slices of 7 rows: the columns holding infinity or values beyond float32 anywhere, with all their values."""
    from pdpx.adapters import sklearn as A

    monkeypatch.setattr(A, "CHECK_ROWS", 7)
    X = pd.DataFrame(np.random.default_rng(2).normal(size=(50, 4)), columns=list("abcd"))
    X.iloc[45, 1] = -np.inf
    X.iloc[20, 3] = 1e39
    X.iloc[3, 0] = np.nan
    got = A.candidates(X)
    assert [c for c, _ in got] == ["b", "d"]
    for col, values in got:
        np.testing.assert_array_equal(values, X[col].to_numpy())


def test_the_domain_check_of_many_rows_holds_a_few_slices_at_most():
    """The scikit-learn adapter's look for infinite values: under 16 MiB for 500,000 x 10 (40 MB of input)."""
    from pdpx.adapters import sklearn as A

    X = pd.DataFrame(np.random.default_rng(4).uniform(size=(500_000, 10)), columns=[f"x{i}" for i in range(10)])
    A.candidates(X.head(10))
    got, peak = traced_peak(lambda: A.candidates(X))
    assert got == []
    assert peak < 16 * MiB, f"{peak / MiB:.1f} MiB"
