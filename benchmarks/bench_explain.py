"""Importance and Friedman's H (issue 17) on a HistGradientBoosting-100 model, beside one predict.

5,000 rows x 10 features (make_friedman1). ``h_statistic`` computes every pair of
the 10 features plus every feature's overall H on all 5,000 rows, exactly (no
subsampling); the definition by brute force needs about 5,000^2 x 65 predictions.
The reference is one ``model.predict(X)`` on the same rows.
"""

from __future__ import annotations

import json

import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor

import pdpx

try:
    from .common import best_time, once, row
except ImportError:  # run as a script
    from common import best_time, once, row


def data():
    X, y = make_friedman1(n_samples=5000, n_features=10, random_state=0)
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(10)]), y


def run() -> list[dict]:
    X, y = data()
    model = HistGradientBoostingRegressor(max_iter=100, early_stopping=False, random_state=0).fit(X, y)
    pred = best_time(lambda: model.predict(X), repeat=7)
    pdpx.h_statistic(model, X, ["x0", "x1"])  # warm-up: kernels loaded, trees read
    h = once(lambda: pdpx.h_statistic(model, X))
    imp = best_time(lambda: pdpx.importance(model, X), repeat=3)
    case = "HistGradientBoostingRegressor(100), 5,000 rows x 10 features"
    return [
        row("H statistic (issue 17)", f"{case}: 45 pairs + 10 overall, exact, all rows", h,
            "one model.predict(X)", pred, "<= 200x predict", h / pred <= 200, ratio=h / pred),
        row("importance (issue 17)", f"{case}: every feature, grid 100", imp,
            "one model.predict(X)", pred, "<= 20x predict", imp / pred <= 20, ratio=imp / pred),
    ]


if __name__ == "__main__":
    for r in run():
        print(json.dumps(r))
