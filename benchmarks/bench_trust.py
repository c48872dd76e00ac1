"""The check behind ``exact`` (issue 35): what it costs on the first call and on later calls.

The first time a model answers through the tree engine for a response, dtypes and feature, pdpx compares
the engine's ICE values with the model's own predict on a sample (8 rows x up to 16 grid points); the
verdict is kept with the model. Each row times the same call with the check on and off
(``pdpx.config_context(check_trees=...)``), side by side in this process:

* first call: a fresh copy of the fitted model each time (the trees are read anew in both columns, the check
  runs in the first only);
* later calls: the same model, verdict already kept: the check costs a dictionary look-up.
"""

from __future__ import annotations

import copy
import os

import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

import pdpx

try:
    from .common import best_time, row
except ImportError:  # run as a script
    from common import best_time, row

QUICK = os.environ.get("PDPX_BENCH_QUICK") == "1"


def _models():
    X, y = make_friedman1(n_samples=5000, n_features=10, random_state=0)
    X = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
    out = {
        "HistGradientBoostingRegressor(200), 5,000 rows": (HistGradientBoostingRegressor(
            max_iter=50 if QUICK else 200, early_stopping=False, random_state=0).fit(X, y), X),
        "RandomForestRegressor(100), 5,000 rows": (RandomForestRegressor(
            n_estimators=20 if QUICK else 100, random_state=0, n_jobs=-1).fit(X, y), X),
    }
    try:
        import xgboost as xgb
    except ImportError:  # pragma: no cover - installed by make setup
        return out
    rng = np.random.default_rng(0)
    Xb = pd.DataFrame(rng.normal(size=(20000, 20)), columns=[f"f{i}" for i in range(20)])
    yb = Xb["f0"] * 2 + np.sin(Xb["f1"] * 3) + Xb["f2"] * Xb["f3"] + rng.normal(size=len(Xb)) * 0.1
    model = xgb.XGBRegressor(n_estimators=100 if QUICK else 500, max_depth=6, n_jobs=2).fit(Xb, yb)
    out["XGBoost(500, depth 6), 20,000 rows"] = (model, Xb)
    return out


def _call(model, X, check: bool):
    with pdpx.config_context(check_trees=check):
        res = pdpx.partial_dependence(model, X, [X.columns[0]], grid_resolution=100)
    assert res.method == "exact", res.notes
    return res


def run():
    rows = []
    for name, (model, X) in _models().items():
        fresh = [copy.deepcopy(model) for _ in range(8)]  # copied before the timing: each call meets a new model
        first_on = best_time(lambda: _call(fresh.pop(), X, True), repeat=3)
        first_off = best_time(lambda: _call(fresh.pop(), X, False), repeat=3)
        rows.append(row("exact's check (issue 35)", f"{name}, 1-way grid 100, first call (fresh model): check on",
                        first_on, "same call, check off", first_off, "check on <= 1.5x the call without",
                        first_on <= 1.5 * first_off))
        _call(model, X, True)
        later_on = best_time(lambda: _call(model, X, True), repeat=5)
        later_off = best_time(lambda: _call(model, X, False), repeat=5)
        rows.append(row("exact's check (issue 35)", f"{name}, 1-way grid 100, later calls: check on (verdict kept)",
                        later_on, "same call, check off", later_off, "within noise: ratio >= 0.95",
                        later_off / later_on >= 0.95))
    return rows


if __name__ == "__main__":  # pragma: no cover
    for r in run():
        print(r)
