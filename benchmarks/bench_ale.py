"""ALE and derivative ICE (issue 17), one process, side by side.

20,000 rows x 10 features (make_friedman1), HistGradientBoostingRegressor (100 iterations).

* ALE 1-way (20 bins) costs two predictions per row, 2-way (10 x 10 bins) four: timed
  against one ``model.predict(X)`` over the same rows (ratio = predict time / ALE time).
* Derivative ICE (grid 50, ICE on the exact engine) against what a user would write
  without it: brute-force ICE (``method="brute"``) and ``numpy.gradient``.
* ``compare_methods`` (grid 50) against scikit-learn computing the same two curves
  (``partial_dependence`` with ``method="brute"`` and ``method="recursion"``).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor

import pdpx

try:
    from .common import best_time, once, row
except ImportError:  # run as a script
    from common import best_time, once, row

QUICK = os.environ.get("PDPX_BENCH_QUICK") == "1"


def data(n: int = 20_000):
    X, y = make_friedman1(n_samples=n, n_features=10, random_state=0)
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(10)]), y


def interleaved(fns: dict, repeat: int) -> dict:
    """Best time of each function, the functions called in turn (one warm-up round first)."""
    best = {k: float("inf") for k in fns}
    for i in range(repeat + 1):
        for k, fn in fns.items():
            t = once(fn)
            if i:
                best[k] = min(best[k], t)
    return best


def run() -> list[dict]:
    X, y = data(5_000 if QUICK else 20_000)
    model = HistGradientBoostingRegressor(max_iter=100, early_stopping=False, random_state=0).fit(X, y)
    label = f"HistGradientBoostingRegressor(100), {len(X):,} rows"
    rows = []
    # interleaved, best of 7 each: on a shared machine, load then hits all three alike
    times = interleaved({
        "predict": lambda: model.predict(X),
        "ale1": lambda: pdpx.ale(model, X, "x0", grid_resolution=20),
        "ale2": lambda: pdpx.ale(model, X, ["x0", "x1"], grid_resolution=10),
    }, repeat=7)
    pred, ale1, ale2 = times["predict"], times["ale1"], times["ale2"]
    rows.append(row("ALE 1-way (issue 17)", f"{label}, 20 bins", ale1, "one model.predict(X)", pred,
                    "ALE <= 3x predict (2 predictions per row)", ale1 / pred <= 3, ratio=pred / ale1))
    rows.append(row("ALE 2-way (issue 17)", f"{label}, 10 x 10 bins", ale2, "one model.predict(X)", pred,
                    "ALE <= 6x predict (4 predictions per row)", ale2 / pred <= 6, ratio=pred / ale2))

    def by_hand():
        ice = pdpx.partial_dependence(model, X, "x0", kind="individual", method="brute", grid_resolution=50)
        return np.gradient(ice.individual, ice.grid_values[0], axis=-1)

    dice = best_time(lambda: pdpx.derivative_ice(model, X, "x0", grid_resolution=50), repeat=3)
    brute = once(by_hand)
    rows.append(row("derivative ICE (issue 17)", f"{label}, grid 50", dice,
                    "brute-force ICE + numpy.gradient", brute, ">= 5x", brute / dice >= 5))

    # compare_methods: exact and recursion on one grid, against scikit-learn computing the same two curves
    from sklearn.inspection import partial_dependence as sk_partial_dependence

    grid = {"x0": np.linspace(*np.quantile(X["x0"], [0.05, 0.95]), 50)}
    cmp = best_time(lambda: pdpx.compare_methods(model, X, "x0", custom_values=grid), repeat=3)
    sk = once(lambda: [sk_partial_dependence(model, X, ["x0"], method=m, custom_values=grid)
                       for m in ("brute", "recursion")])
    rows.append(row("compare_methods (issue 17)", f"{label}, grid 50, exact and recursion", cmp,
                    "scikit-learn partial_dependence, brute and recursion", sk, ">= 5x", sk / cmp >= 5))
    return rows


if __name__ == "__main__":
    for r in run():
        print(json.dumps(r))
