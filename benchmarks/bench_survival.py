"""Survival models (issue 51): a survival forest's PD at every event time, against brute force and one prediction.

A scikit-survival ``RandomSurvivalForest`` (50 trees, its default leaves) fitted on 2,000 rows x 6 features
(exponential times, 70% events: about 1,400 distinct event times), the PD of ``x0`` on a 20-point grid at every
event time of the model, on the same 2,000 rows. Rows of :func:`run`:

1. pdpx (``method="exact"``: the tree engine, vector leaves) against brute force written out: for each grid
   point, the column set and the model's own ``predict_survival_function(X, return_array=True)`` (its fastest
   form) read at the times and averaged. Target: >= 100x.
2. pdpx against one ``predict_survival_function(X, return_array=True)`` of the rows. Target: <= 1x.
3. The first call of the process on this model (it reads the forest's leaves at the asked times into the tree
   representation, kept with the model for later calls) against the same one prediction (reported, no target).
4. The same forest's PD over 100,000 rows (drawn as the first 2,000), at every event time: its time, and the
   process's peak memory growth (``ru_maxrss``) against the memory budget (target: within it). Not run with
   ``--small``.

Both results are compared (largest absolute difference, in the case's text). Timings are the best of 3 calls
after a warm-up (the tree kernels compiled, the leaves read), ``check_trees`` off as in every benchmark of the
engine. ``PDPX_BENCH_QUICK=1`` (or ``--small``) runs 500 rows and 10 trees.

Run standalone: ``python benchmarks/bench_survival.py [--small]``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import best_time, row  # noqa: E402

N_ROWS, N_TREES = 2_000, 50
SMALL_ROWS, SMALL_TREES = 500, 10
GRID = 20
BENCH = "survival (issue 51)"


def small() -> bool:
    return bool(os.environ.get("PDPX_BENCH_QUICK") or os.environ.get("PDPX_BENCH_SMALL"))


def make_data(n: int, seed: int = 0):
    from sksurv.util import Surv

    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"x{j}" for j in range(6)])
    hazard = np.exp(0.5 * X["x0"] + 0.3 * X["x1"] * X["x2"] - 0.2 * X["x3"])
    times = rng.exponential(100 / hazard)
    return X, Surv.from_arrays(event=rng.uniform(size=n) < 0.7, time=times)


def brute(model, X: pd.DataFrame, grid: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The definition: (times, grid) from the model's own survival function on every row, grid point by point."""
    out = np.empty((len(cols), len(grid)))
    Xv = X.copy()
    for k, v in enumerate(grid):
        Xv["x0"] = v
        out[:, k] = model.predict_survival_function(Xv, return_array=True)[:, cols].mean(axis=0)
    return out


def run() -> list[dict]:
    from sksurv.ensemble import RandomSurvivalForest

    import pdpx

    n, trees = (SMALL_ROWS, SMALL_TREES) if small() else (N_ROWS, N_TREES)
    X, y = make_data(n)
    model = RandomSurvivalForest(n_estimators=trees, random_state=0, n_jobs=1).fit(X, y)
    times = model.unique_times_[model.is_event_time_]
    cols = np.flatnonzero(model.is_event_time_)
    options = dict(response="survival", times=times, grid_resolution=GRID, method="exact")
    with pdpx.config_context(check_trees=False):
        t0 = time.perf_counter()
        res = pdpx.partial_dependence(model, X, "x0", **options)
        t_first = time.perf_counter() - t0
        t_pdpx = best_time(lambda: pdpx.partial_dependence(model, X, "x0", **options), repeat=3)
    grid = res.grid_values[0]
    t_brute = best_time(lambda: brute(model, X, grid, cols), repeat=1)
    gap = float(np.max(np.abs(brute(model, X, grid, cols) - res.average)))
    t_one = best_time(lambda: model.predict_survival_function(X, return_array=True), repeat=3)
    case = (f"RandomSurvivalForest {trees} trees, {n:,} rows, PD of x0 at every event time ({len(times):,}) x "
            f"{GRID} grid points ({res.method}; largest difference from brute {gap:.1e})")
    rows = [
        row(BENCH, case, t_pdpx, "brute force (predict_survival_function per grid point)", t_brute, ">= 100x",
            t_brute / t_pdpx >= 100),
        row(BENCH, case + ", against one prediction", t_pdpx, "one predict_survival_function(X)", t_one,
            "<= 1x one prediction", t_pdpx <= t_one, ratio=t_pdpx / t_one),
        row(BENCH, case + ", the process's first call (leaves read)", t_first, "one predict_survival_function(X)",
            t_one, "reported", True, ratio=t_first / t_one),
    ]
    if not small():
        rows.append(large_rows(model, options, len(times)))
    return rows


def large_rows(model, options: dict, n_times: int) -> dict:
    """Row 4: the PD over 100,000 rows, the peak memory growth against the budget."""
    import resource

    import pdpx

    X, _ = make_data(100_000, seed=1)
    budget = pdpx.get_config()["memory_budget"]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with pdpx.config_context(check_trees=False):
        t0 = time.perf_counter()
        res = pdpx.partial_dependence(model, X, "x0", **options)
        seconds = time.perf_counter() - t0
    grown = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before, 1)
    mib = 2**20
    return row(BENCH, f"the same forest's PD over 100,000 rows at every event time ({n_times:,}) x {GRID} grid "
               f"points ({res.method})", seconds, f"peak memory growth (budget {budget / mib:,.0f} MiB)",
               grown / mib, "peak <= budget", grown <= budget, ratio=budget / grown, unit="MiB")


def main(argv: list[str]) -> None:
    if "--small" in argv:
        os.environ["PDPX_BENCH_SMALL"] = "1"
    for r in run():
        print(f"{r['case']}: pdpx {r['pdpx_s']:.3f} s, {r['reference']} {r['reference_s']:.3f} s, "
              f"ratio {r['ratio']:.2f}x, target {r['target']}: {'met' if r['met'] else 'MISSED'}")


if __name__ == "__main__":
    main(sys.argv[1:])
