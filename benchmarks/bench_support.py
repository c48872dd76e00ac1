"""The support and extrapolation check (issue 17, item 5) next to the partial dependence they describe."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

import pdpx
from pdpx.core import extrapolation, support

try:
    from .common import best_time, row
except ImportError:  # run as a script
    from common import best_time, row


def run() -> list[dict]:
    rng = np.random.default_rng(0)
    n, p = 100_000, 10
    X = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"x{i}" for i in range(p)])
    X["x1"] = X["x0"] + rng.normal(scale=0.1, size=n)
    y = X["x0"] * X["x2"] + X["x3"]
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)
    rows = []
    for feats, res_grid in ((["x2"], 100), (["x0", "x2"], 30)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pdpx.core.errors.ExtrapolationWarning)
            res = pdpx.partial_dependence(model, X, feats, grid_resolution=res_grid)
            pd_time = best_time(lambda: pdpx.partial_dependence(model, X, feats, grid_resolution=res_grid))
        cols = [X[f] for f in feats]
        idx = [X.columns.get_loc(f) for f in feats]

        def diag():
            counts = support.support_counts(cols, res.grid_values, [False] * len(feats))
            hull = support.outside_hull(cols[0], cols[1], *res.grid_values) if len(feats) == 2 else None
            extrapolation.extrapolation_check(X, idx, res.grid_values, [False] * len(feats), hull=hull)
            return counts

        ours = best_time(diag)
        rows.append(row("support + extrapolation check (issue 17)",
                        f"HGB-100, {n:,} rows x {p} features, {' x '.join(feats)}, grid {res_grid}", ours,
                        "the PD itself (exact)", pd_time, "<= 0.25x the PD's time", ours <= 0.25 * pd_time))
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
