"""scikit-learn Pipelines and linear ensembles: ``exact`` against ``brute`` on the same model.

Data: 20,000 rows, a categorical ``city`` (12 values) and 6 numeric columns. Rows of
:func:`run`:

* Pipeline (one-hot city + StandardScaler on the numbers + HistGradientBoosting, 200
  iterations), 1-way grid 50 on a numeric column: exact vs brute on the pipeline
  (target >= 20x) and vs one ``pipeline.predict(X)`` (target <= 3x);
* the same on the categorical column ``city`` (exact vs brute);
* reading the pipeline (tracing the steps, rewriting the splits onto the original
  columns: the cold part of the first call) vs one exact call;
* VotingRegressor of HistGradientBoosting + RandomForest + GradientBoosting, 1-way
  grid 50: exact vs brute (target >= 20x).

* issue 49, one column made into several: PD of ``hour`` behind a HistGradientBoosting
  model (50,000 rows), the hour through a periodic ``SplineTransformer`` and through
  sin/cos (a ``FunctionTransformer`` declared with ``declare_columnwise``), each against
  the same model behind a ``StandardScaler`` on the hour (target <= 1.5x), warm and on a
  first call (the pipeline read and checked); and a continuous column (50,000 distinct
  values) behind a spline, informational.

``exact`` is timed warm (kernels compiled, the model read once), as in the other
benchmarks. Set ``PDPX_BENCH_QUICK=1`` for a smaller run.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from common import best_time, once, row

N_ROWS = 20_000
GRID = 50


def make_data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"x{i}" for i in range(6)])
    X.insert(0, "city", rng.choice([f"city{i}" for i in range(12)], n))
    y = (np.sin(2 * X.x0) + X.x1 * X.x2 + 0.5 * X.x3 ** 2 + X.city.str[4:].astype(int) * 0.2
         + rng.normal(scale=0.3, size=n))
    return X, y.to_numpy()


def run() -> list[dict]:
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import (
        GradientBoostingRegressor,
        HistGradientBoostingRegressor,
        RandomForestRegressor,
        VotingRegressor,
    )
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    import pdpx
    from pdpx.core.ir import model_cache

    quick = bool(os.environ.get("PDPX_BENCH_QUICK"))
    n = 4_000 if quick else N_ROWS
    X, y = make_data(n)
    rows: list[dict] = []

    pipe = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["city"]), remainder=StandardScaler()),
        HistGradientBoostingRegressor(max_iter=200, random_state=0),
    ).fit(X, y)
    bench = "Pipeline exact"
    shape = f"one-hot + scaler + HGB-200, {n:,} rows, grid {GRID}"

    def pd_(model, feature, method):
        return pdpx.partial_dependence(model, X, [feature], method=method, grid_resolution=GRID)

    pd_(pipe, "x0", "exact")  # compile and read once
    t_exact = best_time(lambda: pd_(pipe, "x0", "exact"))
    t_brute = once(lambda: pd_(pipe, "x0", "brute"))
    t_predict = best_time(lambda: pipe.predict(X))
    rows.append(row(bench, f"1-way numeric ({shape})", t_exact, "pdpx brute on the pipeline", t_brute,
                    ">= 20x", t_brute / t_exact >= 20))
    rows.append(row(bench, f"1-way numeric ({shape})", t_exact, "one pipeline.predict(X)", t_predict,
                    "<= 3x", t_exact / t_predict <= 3, ratio=t_predict / t_exact))
    t_exact_c = best_time(lambda: pd_(pipe, "city", "exact"))
    t_brute_c = once(lambda: pd_(pipe, "city", "brute"))
    rows.append(row(bench, f"1-way categorical city ({shape})", t_exact_c, "pdpx brute on the pipeline", t_brute_c,
                    ">= 20x", t_brute_c / t_exact_c >= 20))

    def cold():
        model_cache.clear()
        pd_(pipe, "x0", "exact")

    t_cold = once(cold)
    rows.append(row("Pipeline reading", f"first exact call incl. reading the pipeline ({shape})", t_cold,
                    "a warm exact call", t_exact, "informational", True))

    vote = VotingRegressor([
        ("hgb", HistGradientBoostingRegressor(max_iter=100, random_state=0)),
        ("rf", RandomForestRegressor(n_estimators=50, max_depth=10, random_state=0, n_jobs=1)),
        ("gbr", GradientBoostingRegressor(n_estimators=100, max_depth=3, random_state=0)),
    ]).fit(X.drop(columns="city"), y)
    Xn = X.drop(columns="city")

    def pdv(method):
        return pdpx.partial_dependence(vote, Xn, ["x0"], method=method, grid_resolution=GRID)

    pdv("exact")
    t_exact_v = best_time(lambda: pdv("exact"))
    t_brute_v = once(lambda: pdv("brute"))
    rows.append(row("VotingRegressor exact", f"HGB-100 + RF-50 + GBR-100, {n:,} rows, grid {GRID}", t_exact_v,
                    "pdpx brute on the ensemble", t_brute_v, ">= 20x", t_brute_v / t_exact_v >= 20))
    return rows + one_to_many(quick)


def sincos(Z):
    """sin and cos of an hour (the benchmark's column-wise user function)."""
    Z = np.asarray(Z, dtype=np.float64)
    return np.hstack([np.sin(2 * np.pi * Z / 24), np.cos(2 * np.pi * Z / 24)])


def one_to_many(quick: bool) -> list[dict]:
    """Issue 49: PD of an hour behind steps that make several columns of it, against a scaler on it."""
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, SplineTransformer, StandardScaler

    import pdpx
    from pdpx.adapters.sklearn_transforms import declare_columnwise
    from pdpx.core.ir import model_cache

    declare_columnwise(sincos, 2)
    n = 5_000 if quick else 50_000
    rng = np.random.default_rng(49)
    X = pd.DataFrame({"hour": rng.integers(0, 24, n), "temp": rng.normal(15, 6, n), "humidity": rng.uniform(0, 1, n),
                      "weekday": rng.integers(0, 7, n)})
    y = (3 * np.sin(2 * np.pi * X.hour / 24) + 0.2 * X.temp - X.humidity + (X.weekday >= 5)
         + rng.normal(scale=0.5, size=n)).to_numpy()
    encoders = {"StandardScaler": StandardScaler(),
                "periodic SplineTransformer": SplineTransformer(n_knots=8, extrapolation="periodic"),
                "sin/cos FunctionTransformer": FunctionTransformer(sincos)}
    times = {}
    for name, enc in encoders.items():
        pipe = make_pipeline(make_column_transformer((enc, ["hour"]), remainder="passthrough"),
                             HistGradientBoostingRegressor(max_iter=100, random_state=0)).fit(X, y)

        def call(pipe=pipe):
            return pdpx.partial_dependence(pipe, X, ["hour"], method="exact")

        def first(pipe=pipe):
            model_cache.clear()
            call(pipe)

        call()
        times[name] = (best_time(call), once(first))
    rows = []
    shape = f"HGB-100, {n:,} rows, PD of hour (24 points)"
    base_warm, base_first = times["StandardScaler"]
    for name in list(encoders)[1:]:
        warm, cold = times[name]
        rows.append(row("One column made into several", f"{name} on hour, warm ({shape})", warm,
                        "StandardScaler on hour, warm", base_warm, "<= 1.5x", warm / base_warm <= 1.5,
                        ratio=base_warm / warm))
        rows.append(row("One column made into several", f"{name} on hour, first call ({shape})", cold,
                        "StandardScaler on hour, first call", base_first, "<= 1.5x", cold / base_first <= 1.5,
                        ratio=base_first / cold))
    spline = make_pipeline(make_column_transformer((SplineTransformer(n_knots=8), ["temp"]), remainder="passthrough"),
                           HistGradientBoostingRegressor(max_iter=100, random_state=0)).fit(X, y)

    def temp(first=False):
        if first:
            model_cache.clear()
        return pdpx.partial_dependence(spline, X, ["temp"], method="exact", grid_resolution=GRID)

    temp()
    warm, cold = best_time(temp), once(lambda: temp(True))
    rows.append(row("One column made into several", f"SplineTransformer on temp ({n:,} distinct values), first call "
                    f"(HGB-100, grid {GRID})", cold, "the same, warm", warm, "informational", True))
    return rows
