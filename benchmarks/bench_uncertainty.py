"""How sure is this curve (docs/uncertainty.md): what a bagged forest's jackknife band and out-of-bag PD cost
against the PD alone.

Data: Friedman-1 (10 uniform columns, 5 of them used), 5,000 rows; RandomForestRegressor with 200 trees
(min_samples_leaf=5). Rows of :func:`run`, grid 50 on ``x0``, every call warm (kernels compiled, the trees read):

* ``interval="jackknife"`` (every tree's PD from one ``exact`` pass, the in-bag counts, the variance) against
  the PD alone (target: at most 1.5x its time);
* ``oob=True`` (one ``exact`` pass over the forest with each tree gated by the rows it did not draw) against
  the PD alone (target: at most 1.5x).

The ratio column is the call's time over the PD's (lower is better). ``PDPX_BENCH_QUICK=1``: 1,000 rows,
50 trees.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from common import best_time, row

N_ROWS = 5_000
N_TREES = 200
GRID = 50


def make_data(n: int, seed: int = 0):
    """Friedman-1: y = 10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4 + noise, 10 uniform columns."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(size=(n, 10)), columns=[f"x{i}" for i in range(10)])
    y = (10 * np.sin(np.pi * X.x0 * X.x1) + 20 * (X.x2 - 0.5) ** 2 + 10 * X.x3 + 5 * X.x4
         + rng.normal(size=n))
    return X, y.to_numpy()


def run() -> list[dict]:
    from sklearn.ensemble import RandomForestRegressor

    import pdpx

    quick = bool(os.environ.get("PDPX_BENCH_QUICK"))
    n, trees = (1_000, 50) if quick else (N_ROWS, N_TREES)
    X, y = make_data(n)
    forest = RandomForestRegressor(n_estimators=trees, min_samples_leaf=5, random_state=0, n_jobs=1).fit(X, y)
    shape = f"RF-{trees}, {n:,} rows, grid {GRID}"

    def pd_(**kw):
        return pdpx.partial_dependence(forest, X, "x0", method="exact", grid_resolution=GRID, **kw)

    t_pd = best_time(pd_, repeat=5)
    rows = []
    for label, kw in (("interval='jackknife'", {"interval": "jackknife"}), ("oob=True", {"oob": True})):
        t = best_time(lambda kw=kw: pd_(**kw), repeat=5)
        rows.append(row("Uncertainty: forest", f"{label} ({shape})", t, "the PD alone (exact)", t_pd,
                        "<= 1.5x the PD", t / t_pd <= 1.5, ratio=t / t_pd))
    return rows


if __name__ == "__main__":  # pragma: no cover - a quick look without the runner
    for r in run():
        print(f"{r['case']}: {r['pdpx_s'] * 1000:.0f} ms, the PD {r['reference_s'] * 1000:.0f} ms, "
              f"ratio {r['ratio']:.2f}x, {'met' if r['met'] else 'MISSED'}")
