"""pdpx.sklearn.partial_dependence vs sklearn.inspection.partial_dependence: same call, one process."""

from __future__ import annotations

import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.inspection import partial_dependence as sk_pd
from sklearn.linear_model import Ridge

from pdpx.sklearn import partial_dependence as pdpx_pd

try:
    from .common import best_time, row
except ImportError:  # run as a script
    from common import best_time, row


def run() -> list[dict]:
    X, y = make_friedman1(n_samples=2000, n_features=10, random_state=0)
    X = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
    models = {
        "Ridge": Ridge().fit(X, y),
        "RandomForestRegressor(50 trees)": RandomForestRegressor(50, max_depth=10, random_state=0, n_jobs=1).fit(X, y),
        "HistGradientBoostingRegressor(100)": HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y),
    }
    rows = []
    for name, model in models.items():
        for kind in ("average", "both"):
            ours = best_time(lambda: pdpx_pd(model, X, ["x0"], method="brute", kind=kind, grid_resolution=50))
            theirs = best_time(lambda: sk_pd(model, X, ["x0"], method="brute", kind=kind, grid_resolution=50))
            rows.append(row("sklearn drop-in (issue 18)", f"{name}, 2,000 rows, grid 50, kind={kind}", ours,
                            "scikit-learn brute", theirs, ">= 1x (not slower)", theirs / ours >= 1.0))
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
