"""CatBoost through the pdpx-catboost plugin (contrib/pdpx-catboost): exact against brute, against
one native predict, and the extraction of the trees (binary model -> IR, a cold read: the plugin's cache
cleared) against the PD call it precedes.

500 oblivious trees of depth 6 on 20,000 x 20 (PDPX_BENCH_QUICK=1: 100 trees on 4,000 rows).
Skipped (no rows) when catboost or the plugin is not installed.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from common import best_time, row

N_ROWS, N_TREES, DEPTH, N_FEATURES = 20_000, 500, 6, 20


def _sizes():
    if os.environ.get("PDPX_BENCH_QUICK"):
        return 4_000, 100
    return N_ROWS, N_TREES


def make_data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, N_FEATURES)), columns=[f"x{i}" for i in range(N_FEATURES)])
    f = (np.sin(2 * X["x0"]) + X["x1"] * X["x2"] + 0.5 * X["x3"] ** 2 - 0.3 * X["x4"]
         + 0.2 * X.iloc[:, 5:].sum(axis=1))
    y_reg = f + rng.normal(scale=0.5, size=n)
    y_bin = (f + rng.logistic(scale=0.5, size=n) > np.median(f)).astype(int)
    return X, y_reg.to_numpy(), y_bin


def run() -> list[dict]:
    try:
        import catboost
        from pdpx_catboost.adapter import clear_cache
    except ImportError:
        return []
    import pdpx
    from pdpx.core.plugins import adapt

    n, n_trees = _sizes()
    X, y_reg, y_bin = make_data(n)
    kw = dict(iterations=n_trees, depth=DEPTH, learning_rate=0.1, random_seed=0, verbose=0, allow_writing_files=False,
              thread_count=int(os.environ.get("OMP_NUM_THREADS", "2")))
    models = {
        "binary, probability": catboost.CatBoostClassifier(**kw).fit(X, y_bin),
        "regression": catboost.CatBoostRegressor(**kw).fit(X, y_reg),
    }
    shape = f"{n_trees} trees depth {DEPTH}, {n:,} x {N_FEATURES}"
    rows: list[dict] = []
    bench = "CatBoost exact"
    for task, model in models.items():
        is_clf = task.startswith("binary")
        native = (lambda m=model: m.predict_proba(X)) if is_clf else (lambda m=model: m.predict(X))
        native_name = "predict_proba(X)" if is_clf else "predict(X)"
        response = adapt(model).responses()[0]

        def extract(model=model, response=response):
            clear_cache()
            ad = adapt(model)
            ad.validate_columns(X)
            assert ad.tree_model(response) is not None

        t_extract = best_time(extract, repeat=2)
        pd1 = lambda: pdpx.partial_dependence(model, X, "x0", method="exact", grid_resolution=100)
        assert pd1().method == "exact"
        t_exact1 = best_time(pd1, repeat=10)
        t_native = best_time(native, repeat=10)
        t_brute1 = best_time(lambda: pdpx.partial_dependence(model, X, "x0", method="brute", grid_resolution=100),
                             repeat=1)

        grid30 = lambda col: np.linspace(*np.quantile(X[col], [0.05, 0.95]), 30)
        g0, g1 = grid30("x0"), grid30("x1")
        pd2 = lambda: pdpx.partial_dependence(model, X, ["x0", "x1"], method="exact",
                                              custom_values={"x0": g0, "x1": g1})
        t_exact2 = best_time(pd2, repeat=10)
        t_brute2_part = best_time(lambda: pdpx.partial_dependence(
            model, X, ["x0", "x1"], method="brute", custom_values={"x0": g0, "x1": g1[::10]}), repeat=1)
        t_brute2 = t_brute2_part * (30 * 30) / (30 * len(g1[::10]))

        e = pdpx.partial_dependence(model, X.iloc[:500], "x0", method="exact", grid_resolution=20)
        b = pdpx.partial_dependence(model, X.iloc[:500], "x0", method="brute", grid_resolution=20)
        err = float(np.abs(e.average - b.average).max())
        tag = f"{task}; {shape}; max |exact - brute| = {err:.1e}"
        brute_name = "brute via CatBoost predict (pdpx method='brute', batched)"
        rows.append(row(bench, f"1-way, grid 100 ({tag})", t_exact1, brute_name, t_brute1,
                        ">= 30x", t_brute1 / t_exact1 >= 30))
        rows.append(row(bench, f"1-way, grid 100 ({task})", t_exact1, f"one native CatBoost {native_name}",
                        t_native, "<= 5x of predict", t_exact1 <= 5 * t_native))
        rows.append(row(bench, f"2-way, 30 x 30 ({task}; brute estimated from 90 of 900 grid points, x10)",
                        t_exact2, brute_name, t_brute2, ">= 200x", t_brute2 / t_exact2 >= 200))
        rows.append(row("CatBoost extraction", f"{n_trees} trees -> IR from the binary model (.cbm), cold ({task})",
                        t_extract, "the exact 1-way PD call it precedes (warm)", t_exact1,
                        "<= 1x of the PD call", t_extract <= t_exact1))
    return rows


if __name__ == "__main__":
    with pd.option_context("display.max_colwidth", 90, "display.width", 250):
        print(pd.DataFrame(run()).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
