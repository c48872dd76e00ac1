"""The memory budget's estimate holds before the work (pdpx.core.budget; docs/guarantees.md).

A call whose estimated peak is over the budget is refused before its grids are built (the
peak of a child process stays far below the size it would have taken); a call near the
budget still runs and equals the definition; regions and heterogeneity of every feature
free each group's arrays before the next (measured with tracemalloc, which numpy reports
its arrays to, with the garbage collector off: what is freed is freed by its last reference).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.budget import BudgetError, categorical_levels
from pdpx.plugins.brute import plan_chunks

MiB = 2**20


class ByCodes:
    """A model of a category column's codes and a numeric column (predict: a function of each row alone)."""

    def predict(self, X):
        return X["x"].to_numpy() * (1 + X["cat"].cat.codes.to_numpy() % 3)


def levels_frame(n: int, levels: int) -> pd.DataFrame:
    cats = pd.Categorical.from_codes(np.arange(n) % levels, categories=[f"L{i}" for i in range(levels)])
    return pd.DataFrame({"cat": cats, "x": np.random.default_rng(0).normal(size=n)})


CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy as np, pandas as pd
    import pdpx
    from pdpx.core.budget import BudgetError
    n = int(sys.argv[1])
    class ByCodes:
        def predict(self, X):
            return X["x"].to_numpy() * (1 + X["cat"].cat.codes.to_numpy() % 3)
    cats = pd.Categorical.from_codes(np.arange(n), categories=[f"L{i}" for i in range(n)])
    X = pd.DataFrame({"cat": cats, "cat2": cats, "x": np.random.default_rng(0).normal(size=n)})
    pdpx.partial_dependence(ByCodes(), X.head(50), ["cat", "x"], memory_budget="64MB")  # imports, warm
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = {}
    for feats in (["cat", "cat2"], ["cat"]):
        try:
            pdpx.partial_dependence(ByCodes(), X, feats, kind="individual", memory_budget="64MB")
            out[feats[-1]] = None
        except BudgetError as err:
            out[feats[-1]] = [str(err), err.need, err.budget]
    out["grew"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    print(json.dumps(out))
""")


def test_a_grid_of_many_levels_is_refused_before_it_is_built():
    """Two category columns of 200,000 levels (a 4e10-point grid) and ICE of one (4e10 values): refused with the
    estimate, the budget and the settings, while the child's peak grows by a few MiB (not the grid's GBs)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    got = subprocess.run([sys.executable, "-c", CHILD, "200000"], capture_output=True, text=True, env=env,
                         timeout=300, check=True)
    out = json.loads(got.stdout.strip().splitlines()[-1])
    for key, G in (("cat2", 200_000 ** 2), ("cat", 200_000)):
        message, need, budget = out[key]
        assert budget == 64 * MiB
        assert need >= 8 * G * (1 if key == "cat2" else 200_000)
        assert "over the memory budget of 64.0 MiB" in message
        assert "memory_budget=" in message and "--memory-budget" in message
        assert "custom_values" in message
    assert "ice_sample" in out["cat"][0]
    assert out["grew"] < 48 * MiB, f"the refused calls grew the process by {out['grew'] / MiB:.0f} MiB"


def test_levels_are_counted_from_the_codes():
    """The categories that occur, not those declared; bools two; other columns their distinct values."""
    col = pd.Series(pd.Categorical(["a", "c", None, "a"], categories=["a", "b", "c", "d"]))
    assert categorical_levels(col) == 2
    assert categorical_levels(pd.Series([True, False, True])) == 2
    assert categorical_levels(pd.Series(["x", "y", None, "x"], dtype=object)) == 2


def test_brute_plans_a_million_grid_points_without_holding_their_tasks():
    """1e6 grid points over 1e6 rows in slices of 500,000: 2e6 tasks, counted and read one by one (a few KiB
    held)."""
    tracemalloc.start()
    try:
        tasks = plan_chunks(n_rows=10**6, n_points=10**6, bytes_per_row=100, budget=2 * 10**8, jobs=1)
        first = next(iter(tasks))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(tasks) == 10**6 * 2 and first == (0, 1, 0, 500_000)
    assert peak < MiB
    small = list(plan_chunks(n_rows=10, n_points=7, bytes_per_row=100, budget=10**6, jobs=2))
    assert small == [(0, 4, 0, 10), (4, 7, 0, 10)]


def test_a_call_near_the_budget_runs_and_equals_the_definition():
    """ICE of 400 rows on the 400 of 500 declared levels that occur (1.23 MiB of result and grid estimated, under
    a 1.3 MiB budget): computed, and each curve is the model's own predict with the level set in that row."""
    X = levels_frame(400, 500)
    X["cat"] = pd.Categorical.from_codes(np.arange(400) + 100 * (np.arange(400) >= 200),
                                         categories=[f"L{i}" for i in range(500)])
    model = ByCodes()
    res = pdpx.partial_dependence(model, X, "cat", kind="both", memory_budget=int(1.3 * MiB))
    grid = res.grid_values[0]
    assert len(grid) == 400
    for g in (0, 77, len(grid) - 1):
        Z = X.copy()
        Z["cat"] = pd.Categorical([grid[g]] * len(X), categories=X["cat"].cat.categories)
        np.testing.assert_allclose(res.individual[0, :, g], model.predict(Z), rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.average[0, g], model.predict(Z).mean(), rtol=0, atol=1e-12)


def test_many_feature_sets_are_refused_together_when_their_results_pass_the_budget():
    """Each set's ICE fits, all of them together do not: refused before any grid, naming fewer sets per call."""
    X = pd.DataFrame(np.random.default_rng(1).normal(size=(4000, 6)), columns=list("abcdef"))

    def f(Z):
        return Z.to_numpy().sum(axis=1)

    with pytest.raises(BudgetError, match="6 feature sets held together") as err:
        pdpx.partial_dependence_many(f, X, list("abcdef"), kind="individual", grid_resolution=50,
                                     memory_budget=8 * MiB, method="brute")
    assert "fewer feature sets" in str(err.value)
    one = pdpx.partial_dependence(f, X, "a", kind="individual", grid_resolution=50, memory_budget=8 * MiB)
    assert one.individual.shape == (1, 4000, 50)


def test_h_statistic_refuses_its_functions_at_every_row_before_computing_them():
    """45 pairs' functions at 100,000 rows: refused, naming pairs= and sample=."""
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(100_000, 10)), columns=[f"x{i}" for i in range(10)])
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X[:500], X.x0[:500] * X.x1[:500])
    with pytest.raises(BudgetError, match="45 pair") as err:
        pdpx.h_statistic(model, X, memory_budget=32 * MiB)
    assert "pairs=" in str(err.value) and "sample=" in str(err.value)


def traced_peak_without_gc(fn):
    """(fn(), the most bytes traced at once while it ran): the garbage collector off, so only arrays freed by their
    last reference are freed."""
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        gc.enable()
    return out, peak - before


@pytest.fixture(scope="module")
def wide():
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.uniform(size=(60_000, 6)), columns=[f"x{i}" for i in range(6)])
    y = X.x0 * X.x1 + np.sin(6 * X.x2) + (X.x3 > 0.5) * X.x4
    fits = {leaves: HistGradientBoostingRegressor(max_iter=8, max_leaf_nodes=leaves, random_state=0)
            .fit(X[:2000], y[:2000]) for leaves in (15, 127)}
    return fits, X


#: What regions and heterogeneity may pass the budget by (docs/guarantees.md): a quarter of it.
SLACK = 1.25


@pytest.mark.parametrize("leaves", [15, 127])
@pytest.mark.parametrize("what", ["regions", "heterogeneity"])
def test_every_feature_stays_within_the_budget(wide, what, leaves):
    """Every feature's curves of 60,000 rows (9.2 MiB each, 55 MiB for six) under a 40 MB budget: the peak stays
    within the budget and its slack, with the collector off (one walk's group, or one feature, at a time:
    15 leaves from the one-pass walk, 127 leaves feature by feature)."""
    fits, X = wide
    fn = getattr(pdpx, what)
    fn(fits[leaves], X.head(3000), None, memory_budget="40MB")  # compile, import
    budget = 40 * 10**6
    res, peak = traced_peak_without_gc(lambda: fn(fits[leaves], X, None, memory_budget=budget))
    assert len(res) == 6 if what == "regions" else len(res.features) == 6
    assert peak <= SLACK * budget, f"peak {peak / MiB:.1f} MiB, budget {budget / MiB:.1f} MiB"


def test_a_measure_that_reads_its_curves_in_chunks_is_not_refused_for_their_total():
    """heterogeneity asks for averages and chunks of ICE: 60,000 rows x 20 points (9.2 MiB of curves) at 4 MiB runs,
    and equals the definition (an additive model: every centered curve alike, heterogeneity 0)."""
    X = pd.DataFrame(np.random.default_rng(4).normal(size=(60_000, 2)), columns=["a", "b"])

    def f(Z):
        return 2 * Z["a"].to_numpy() + Z["b"].to_numpy() ** 2

    res = pdpx.heterogeneity(f, X, ["a"], memory_budget=4 * MiB)
    np.testing.assert_allclose(res.variance[0], 0, atol=1e-18)
    assert any("rows at a time" in n for n in res.notes)
