"""Many feature sets in one call: ``exact`` from pattern counts against its row walks and one native predict.

* ``partial_dependence_many`` of every 1-way (grid 100) and every pair (20 x 20) of an
  XGBoost regressor (200 trees of depth 6; HistGradientBoosting when xgboost is missing),
  10 features, 400,000 rows: ``method_options={"engine": "auto"}`` (counts gathered once),
  ``{"engine": "rows"}`` (one row walk per feature set) and one native ``predict`` of the rows,
  all measured in this process. Targets (issue 26): every 1-way within 3x one predict, every
  pair within 10x.
* ``pdpx.report`` on 1,000,000 rows x 20 features (``PDPX_BENCH_REPORT_ROWS`` for another number) against
  one predict (target 20x); a note
  gives the share of its parts (the 1-way section, importance, Friedman's H, the pairs,
  the figures), since H's ICE-based half (every row's curve) does not come from counts.

``PDPX_BENCH_QUICK=1``: 50,000 and 100,000 rows. Each side is timed best of a few calls
after a warm-up call (compilation and the trees' reading are not timed); the counts kept
with the model are cleared before every timed ``auto`` call, so each call gathers.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

try:
    from .common import best_time, row
except ImportError:  # run as a script or by run.py
    from common import best_time, row

_NOTES: list[str] = []
#: Rows of the report row in ``make bench``: the issue's 1,000,000 (``PDPX_BENCH_REPORT_ROWS`` sets another
#: number; at 200,000 rows and below the report adds the bootstrap ribbon, which needs every row's ICE curves).
REPORT_ROWS = 1_000_000


def _quick() -> bool:
    return bool(os.environ.get("PDPX_BENCH_QUICK"))


def make_data(n: int, p: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"x{i}" for i in range(p)])
    y = (X["x0"] * X["x1"] + np.sin(2 * X["x2"]) + X["x3"] ** 2 - X["x4"] + 0.5 * X["x5"] * X["x6"]
         + rng.normal(scale=0.3, size=n))
    return X, y.to_numpy()


def fit(X: pd.DataFrame, y: np.ndarray):
    try:
        import xgboost as xgb
    except ImportError:
        from sklearn.ensemble import HistGradientBoostingRegressor

        return "HistGradientBoostingRegressor(200)", HistGradientBoostingRegressor(
            max_iter=200, early_stopping=False, random_state=0).fit(X, y)
    return "XGBRegressor(200 trees, depth 6)", xgb.XGBRegressor(
        n_estimators=200, max_depth=6, tree_method="hist", random_state=0).fit(X, y)


def _cold(fn):
    """``fn`` with nothing kept from an earlier call (each call gathers its own counts)."""
    from pdpx.plugins.trees.counts_use import counts_cache

    def call():
        counts_cache.clear()
        return fn()

    return call


def gather_only(model, X, order: int):
    """The gather alone, as ``exact`` runs it in the call (for the note's share)."""
    from pdpx.core.plugins import adapt
    from pdpx.plugins.trees.counts import gather

    adapter = adapt(model)
    Xv = adapter.validate_columns(X)
    return gather(adapter.tree_model("predict"), Xv, None, order=order, memory_budget=1 << 30)


def many_rows(n: int) -> list[dict]:
    import pdpx

    X, y = make_data(n, 10)
    name, model = fit(X, y)
    names = list(X.columns)
    predict = best_time(lambda: model.predict(X))
    out = []
    for label, sets, grid, target in (("every 1-way (10), grid 100", [[f] for f in names], 100, 3.0),
                                      ("every pair (45), 20 x 20", [list(p) for p in itertools.combinations(names, 2)],
                                       20, 10.0)):
        def run(engine, sets=sets, grid=grid):
            return pdpx.partial_dependence_many(model, X, sets, grid_resolution=grid, progress=False,
                                                method_options={"engine": engine})

        got = run("auto")
        assert any("pattern counts" in n for n in got[0].notes), got[0].notes
        counts_s = best_time(_cold(lambda: run("auto")), repeat=2)
        rows_s = best_time(lambda: run("rows"), repeat=1)
        case = f"{name}, {n:,} rows, {label}"
        order = 2 if len(sets[0]) == 2 else 1
        gather_s = best_time(lambda: gather_only(model, X, order), repeat=2)
        _NOTES.append(f"**{case}:** the call took {counts_s:.2f} s with counts ({counts_s / predict:.1f} predicts), "
                      f"of which the one gather (order {order}) {gather_s:.2f} s ({gather_s / predict:.1f} predicts); "
                      f"{rows_s:.2f} s walking the rows per set.")
        out.append(row("many feature sets (issue 26)", case + ": engine auto (counts), x one predict", counts_s,
                       "one native predict", predict, f"<= {target:g}x one predict", counts_s <= target * predict,
                       ratio=counts_s / predict))
        out.append(row("many feature sets (issue 26)", case + ": engine auto (counts)", counts_s,
                       "pdpx engine='rows' (a row walk per set)", rows_s, "> 1x", rows_s > counts_s))
    return out


def report_rows(n: int, p: int = 20) -> list[dict]:
    import pdpx
    import pdpx.reporting as reporting

    X, y = make_data(n, p, seed=1)
    name, model = fit(X, y)
    predict = best_time(lambda: model.predict(X))
    parts: dict[str, float] = {}
    wrapped = {}
    for fn in ("h_statistic_of", "embed"):
        original = getattr(reporting, fn)
        wrapped[fn] = original

        def timed(*a, _f=original, _n=fn, **k):
            t0 = time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                parts[_n] = parts.get(_n, 0.0) + time.perf_counter() - t0

        setattr(reporting, fn, timed)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "report.html"
            pdpx.report(model, X.iloc[:20_000], path, progress=False)  # warm-up: compiles, reads the trees
            from pdpx.plugins.trees.counts_use import counts_cache

            counts_cache.clear()
            parts.clear()
            t0 = time.perf_counter()
            pdpx.report(model, X, path, progress=False)
            total = time.perf_counter() - t0
    finally:
        for fn, original in wrapped.items():
            setattr(reporting, fn, original)
    h = parts.get("h_statistic_of", 0.0)
    fig = parts.get("embed", 0.0)
    ribbon = "with" if reporting._interval_fits(X, reporting.PDOptions()) else "without"
    _NOTES.append(
        f"**report, {n:,} rows x {p} features ({name}, {ribbon} the bootstrap ribbon, which needs every row's ICE "
        f"curves):** {total:.1f} s = {total / predict:.0f} predicts. Friedman's H {h:.1f} s "
        f"({100 * h / total:.0f}%); the figures took {fig:.1f} s of drawing on a side "
        "thread, beside the computation (the time spent in each part, which overlap)."
    )
    return [row("many feature sets (issue 26)", f"pdpx.report, {name}, {n:,} rows x {p} features, x one predict",
                total, "one native predict", predict, "<= 20x one predict", total <= 20 * predict,
                ratio=total / predict)]


def run() -> list[dict]:
    _NOTES.clear()
    out = many_rows(50_000 if _quick() else 400_000)
    out += report_rows(100_000 if _quick() else int(os.environ.get("PDPX_BENCH_REPORT_ROWS", REPORT_ROWS)))
    return out


def markdown() -> str:
    return "\n\n".join(_NOTES)


if __name__ == "__main__":  # pragma: no cover - by hand
    for r in run():
        print(f"{r['case']}: pdpx {r['pdpx_s']:.3f} s, {r['reference']} {r['reference_s']:.3f} s, "
              f"ratio {r['ratio']:.2f}x (target {r['target']})")
    print(markdown())
