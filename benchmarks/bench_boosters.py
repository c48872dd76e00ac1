"""XGBoost and LightGBM: ``exact`` against ``brute`` and against one native predict.

Models: 500 trees of depth 6 (LightGBM: max_depth=6, num_leaves=63) on 20,000 rows
x 20 features; a binary classifier (PD of the positive-class probability) and a
regressor, for each library. Rows of :func:`run`:

* exact 1-way (grid 100) vs brute through the library's own multithreaded predict
  (pdpx ``method="brute"``, which stacks grid points into large predict calls):
  target >= 30x;
* exact 1-way vs one native ``predict(X)`` / ``predict_proba(X)``: target <= 5x;
* exact 2-way 30 x 30 vs brute: target >= 200x. Brute is timed on 90 of the 900
  grid points (30 x 3) and scaled by 10, as the case name says;
* tree extraction (model -> IR, the cold part of the first call on a model) vs the
  exact 1-way call it precedes: target <= 1x (extraction must not dominate).

``exact`` is timed warm (numba kernels compiled, model already extracted: the
usual situation after the first call); the extraction rows give the cold cost.
Set ``PDPX_BENCH_QUICK=1`` for a smaller, faster run (fewer rows and trees).

Run standalone: ``python benchmarks/bench_boosters.py``.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd

N_ROWS = 20_000
N_FEATURES = 20
N_TREES = 500
DEPTH = 6


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


def build_models(X, y_reg, y_bin, n_trees):
    import lightgbm as lgb
    import xgboost as xgb

    xkw = dict(n_estimators=n_trees, max_depth=DEPTH, learning_rate=0.1, tree_method="hist", random_state=0)
    lkw = dict(n_estimators=n_trees, max_depth=DEPTH, num_leaves=63, learning_rate=0.1, verbose=-1, random_state=0)
    return {
        ("XGBoost", "binary, probability"): xgb.XGBClassifier(**xkw).fit(X, y_bin),
        ("XGBoost", "regression"): xgb.XGBRegressor(**xkw).fit(X, y_reg),
        ("LightGBM", "binary, probability"): lgb.LGBMClassifier(**lkw).fit(X, y_bin),
        ("LightGBM", "regression"): lgb.LGBMRegressor(**lkw).fit(X, y_reg),
    }


def _time(fn, repeat: int = 1) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _row(benchmark, case, pdpx_s, reference, reference_s, target, met):
    return {
        "benchmark": benchmark, "case": case, "pdpx_s": float(pdpx_s), "reference": reference,
        "reference_s": float(reference_s), "ratio": float(reference_s / pdpx_s) if pdpx_s > 0 else float("inf"),
        "target": target, "met": bool(met),
    }


def run() -> list[dict]:
    import pdpx
    from pdpx.core.ir import model_cache
    from pdpx.core.plugins import adapt

    n, n_trees = _sizes()
    X, y_reg, y_bin = make_data(n)
    models = build_models(X, y_reg, y_bin, n_trees)
    rows: list[dict] = []
    shape = f"{n_trees} trees depth {DEPTH}, {n:,} x {N_FEATURES}"
    for (lib, task), model in models.items():
        bench = f"{lib} exact"
        is_clf = task.startswith("binary")
        native = (lambda m=model: m.predict_proba(X)) if is_clf else (lambda m=model: m.predict(X))
        native_name = "predict_proba(X)" if is_clf else "predict(X)"

        # cold: extraction of the trees into the IR (first call on a model)
        adapter = adapt(model)
        response = adapter.responses()[0]
        model_cache.clear()
        t_extract = _time(lambda: (model_cache.clear(), adapt(model).tree_model(response)), repeat=2)

        pd1 = lambda: pdpx.partial_dependence(model, X, "x0", method="exact", grid_resolution=100)  # noqa: E731
        pd1()  # warm-up: numba compilation, extraction
        t_exact1 = _time(pd1, repeat=3)
        t_native = _time(native, repeat=3)
        t_brute1 = _time(lambda: pdpx.partial_dependence(model, X, "x0", method="brute", grid_resolution=100))

        grid30 = lambda col: np.linspace(*np.quantile(X[col], [0.05, 0.95]), 30)  # noqa: E731
        g0, g1 = grid30("x0"), grid30("x1")
        pd2 = lambda: pdpx.partial_dependence(  # noqa: E731
            model, X, ["x0", "x1"], method="exact", custom_values={"x0": g0, "x1": g1})
        pd2()
        t_exact2 = _time(pd2, repeat=2)
        t_brute2_part = _time(lambda: pdpx.partial_dependence(
            model, X, ["x0", "x1"], method="brute", custom_values={"x0": g0, "x1": g1[::10]}))
        t_brute2 = t_brute2_part * (30 * 30) / (30 * len(g1[::10]))

        # the exact result must be brute's (a benchmark that is fast and wrong is worthless)
        e = pdpx.partial_dependence(model, X.iloc[:500], "x0", method="exact", grid_resolution=20)
        b = pdpx.partial_dependence(model, X.iloc[:500], "x0", method="brute", grid_resolution=20)
        err = float(np.abs(e.average - b.average).max())
        tag = f"{task}; {shape}; max |exact - brute| = {err:.1e}"

        rows.append(_row(bench, f"1-way, grid 100 ({tag})", t_exact1,
                         f"brute via {lib} predict (pdpx method='brute', batched)", t_brute1,
                         ">= 30x", t_brute1 / t_exact1 >= 30))
        rows.append(_row(bench, f"1-way, grid 100 ({task})", t_exact1, f"one native {lib} {native_name}",
                         t_native, "<= 5x of predict", t_exact1 <= 5 * t_native))
        rows.append(_row(bench, f"2-way, 30 x 30 ({task}; brute estimated from 90 of 900 grid points, x10)",
                         t_exact2, f"brute via {lib} predict (pdpx method='brute', batched)", t_brute2,
                         ">= 200x", t_brute2 / t_exact2 >= 200))
        fmt = "UBJSON save_raw('ubj')" if lib == "XGBoost" else "model_to_string()"
        rows.append(_row(f"{lib} extraction", f"{n_trees} trees -> IR via {fmt} ({task})", t_extract,
                         "the exact 1-way PD call it precedes (warm)", t_exact1,
                         "<= 1x of the PD call", t_extract <= t_exact1))
    return rows


def extraction_formats(n_trees: int = 1000, n: int = 20_000) -> list[dict]:
    """Time the serialisations pdpx could read a 1000-tree model from (for the docs)."""
    import json

    import lightgbm as lgb
    import xgboost as xgb

    from pdpx.adapters import lightgbm as la
    from pdpx.adapters import xgboost as xa

    X, y_reg, _ = make_data(n)
    out = []
    xm = xgb.XGBRegressor(n_estimators=n_trees, max_depth=DEPTH, tree_method="hist").fit(X, y_reg)
    b = xm.get_booster()
    rounds = b.num_boosted_rounds()
    out.append(("xgboost save_raw('json') + json.loads", _time(lambda: json.loads(b.save_raw("json")), 3)))
    out.append(("xgboost save_raw('ubj') + pdpx UBJSON reader", _time(lambda: xa.ubj_loads(b.save_raw("ubj")), 3)))
    learner = xa.ubj_loads(b.save_raw("ubj"))["learner"]
    out.append(("xgboost tree arrays from the parsed model", _time(lambda: xa.extract_trees(learner, rounds), 3)))
    out.append(("xgboost trees_to_dataframe()", _time(lambda: b.trees_to_dataframe(), 1)))
    out.append(("xgboost full tree_model() (parse, arrays, IR validation, self-check)",
                _time(lambda: (_clear(), xa.XGBoostAdapter(xm).tree_model("predict")), 3)))
    out.append(("xgboost predict(X), for scale", _time(lambda: xm.predict(X), 3)))
    lm = lgb.LGBMRegressor(n_estimators=n_trees, max_depth=DEPTH, num_leaves=63, verbose=-1).fit(X, y_reg)
    lb = lm.booster_
    out.append(("lightgbm dump_model() (JSON -> Python objects)", _time(lambda: lb.dump_model(num_iteration=-1), 2)))
    out.append(("lightgbm model_to_string()", _time(lambda: lb.model_to_string(num_iteration=-1), 3)))
    text = lb.model_to_string(num_iteration=-1)
    out.append(("lightgbm parse model text -> arrays", _time(lambda: la.parse_model_string(text), 3)))
    out.append(("lightgbm full tree_model() (text, arrays, IR validation, self-check)",
                _time(lambda: (_clear(), la.LightGBMAdapter(lm).tree_model("predict")), 3)))
    out.append(("lightgbm predict(X), for scale", _time(lambda: lm.predict(X), 3)))
    return [{"step": k, "seconds": v} for k, v in out]


def _clear():
    from pdpx.core.ir import model_cache

    model_cache.clear()


def main():
    import sys

    if "--formats" in sys.argv:
        for r in extraction_formats():
            print(f"{r['seconds']:8.3f} s  {r['step']}")
        return
    rows = run()
    df = pd.DataFrame(rows)
    with pd.option_context("display.max_colwidth", 90, "display.width", 250):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
