"""The views users ask for (docs/views.md): what the missing-value point, groups, several models and
bootstrap intervals cost, against the way a user would get the same numbers without them.

Data: 20,000 rows, 8 numeric columns, 10% of ``x0`` missing; HistGradientBoostingRegressor
(200 iterations), which routes missing values. Rows of :func:`run`, grid 50 on ``x0``:

* ``include_missing=True`` (the grid ends in the missing-value point): ``exact`` vs ``brute``
  on the same request (target >= 20x);
* ``by="x1"`` (4 quantile groups): ``exact`` vs ``brute`` (target >= 20x);
* a dict of 3 models on one grid: ``exact`` vs ``brute`` (target >= 20x);
* ``interval=0.95`` with 200 bootstrap replicates (one ICE matrix, resampled): vs the naive
  bootstrap a user would write, 200 PD calls on resampled rows, estimated as 200 times one
  ``sklearn.inspection.partial_dependence`` call (target: faster than the naive bootstrap
  by >= 20x), and vs one plain ``exact`` PD call (informational).

``exact`` is timed warm (kernels compiled, the model read once). ``PDPX_BENCH_QUICK=1``: 4,000 rows.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from common import best_time, once, row

N_ROWS = 20_000
GRID = 50
N_BOOT = 200


def make_data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 8)), columns=[f"x{i}" for i in range(8)])
    y = np.sin(2 * X.x0) + X.x1 * X.x2 + 0.5 * X.x3 ** 2 + rng.normal(scale=0.3, size=n)
    X.loc[rng.random(n) < 0.1, "x0"] = np.nan
    return X, y.to_numpy()


def run() -> list[dict]:
    from sklearn.ensemble import ExtraTreesRegressor, HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.inspection import partial_dependence as sk_partial_dependence

    import pdpx

    quick = bool(os.environ.get("PDPX_BENCH_QUICK"))
    n = 4_000 if quick else N_ROWS
    X, y = make_data(n)
    hgb = HistGradientBoostingRegressor(max_iter=200, random_state=0).fit(X, y)
    shape = f"HGB-200, {n:,} rows, grid {GRID}"
    rows: list[dict] = []

    def pd_(method, **kw):
        return pdpx.partial_dependence(hgb, X, "x0", method=method, grid_resolution=GRID, **kw)

    pd_("exact", include_missing=True)  # compile and read once
    t_exact = best_time(lambda: pd_("exact", include_missing=True))
    t_brute = once(lambda: pd_("brute", include_missing=True))
    rows.append(row("Views: missing-value point", f"include_missing=True ({shape})", t_exact,
                    "pdpx brute, same request", t_brute, ">= 20x", t_brute / t_exact >= 20))

    t_exact_by = best_time(lambda: pd_("exact", by="x1"))
    t_brute_by = once(lambda: pd_("brute", by="x1"))
    rows.append(row("Views: by groups", f"by='x1', 4 groups ({shape})", t_exact_by,
                    "pdpx brute, same request", t_brute_by, ">= 20x", t_brute_by / t_exact_by >= 20))

    Xf = X.fillna(0.0)
    models = {
        "hgb": HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(Xf, y),
        "rf": RandomForestRegressor(n_estimators=30, max_depth=8, random_state=0, n_jobs=1).fit(Xf, y),
        "et": ExtraTreesRegressor(n_estimators=30, max_depth=8, random_state=0, n_jobs=1).fit(Xf, y),
    }

    def pdm(method):
        return pdpx.partial_dependence(models, Xf, "x0", method=method, grid_resolution=GRID)

    pdm("exact")
    t_exact_m = best_time(lambda: pdm("exact"))
    t_brute_m = once(lambda: pdm("brute"))
    rows.append(row("Views: several models", f"HGB-100 + RF-30 + ET-30 on one grid, {n:,} rows, grid {GRID}",
                    t_exact_m, "pdpx brute, same request", t_brute_m, ">= 20x", t_brute_m / t_exact_m >= 20))

    t_interval = best_time(lambda: pd_("exact", interval=0.95, n_boot=N_BOOT), repeat=2)
    t_sklearn = once(lambda: sk_partial_dependence(hgb, X, ["x0"], grid_resolution=GRID, method="brute"))
    naive = N_BOOT * t_sklearn
    rows.append(row("Views: bootstrap interval", f"interval=0.95, n_boot={N_BOOT} ({shape})", t_interval,
                    f"{N_BOOT} x one sklearn partial_dependence (naive bootstrap, estimated)", naive,
                    ">= 20x", naive / t_interval >= 20))
    t_plain = best_time(lambda: pd_("exact"))
    rows.append(row("Views: bootstrap interval", f"interval=0.95, n_boot={N_BOOT} ({shape})", t_interval,
                    "one plain exact PD call", t_plain, "informational", True))
    return rows
