"""Spark DataFrames as X (issue 39): every 1-way and every pair of an XGBoost model on a local[2] session.

* ``partial_dependence_many`` of every 1-way (grid 20) and every pair (grid 10 x 10) of an XGBoost
  regressor (100 trees of depth 6) on 1,000,000 rows x 10 features held in Spark (8 partitions, cached):
  pattern counts gathered partition by partition, only the counts travel. The Spark jobs the call starts
  are counted (the issue: at most two distributed passes for the PD itself; the row count and the grids'
  columns are one pass each before it).
* Against the cross-join-and-group-by recipe (what pdp's sparklyr example does): every grid value crossed
  with the rows, the model's predict in ``mapInPandas``, ``groupBy(grid).avg``. Timed on one 1-way and one
  pair and scaled to the 55 sets by their grid sizes (the recipe's cost is rows x grid points), since the
  whole recipe would predict 4.7 billion rows. Target: pdpx at least 20x faster.
* Against the same pdpx call on a pandas frame of the same rows (target: Spark within 3x).
* What the check of rows that change between actions costs: the tallies of the rows
  (:mod:`pdpx.rows.spark_checks`) timed on the benchmark's rows, against the call's time (a note).
* Against H2O's ``partial_plot`` (peer_h2o.py, in ``benchmarks/.venv-h2o``, made on first use; never a pdpx
  dependency): a local H2O server of its own (4 GB, 2 threads) fits a GBM of the same shape on the same
  fitting rows; ``partial_plot`` of one feature and of one pair (``col_pairs_2dpdp``) on the same rows and
  pdpx's own grid values, scaled to the 55 sets by grid points as the recipe is. Another model, so only the
  times compare. If H2O cannot be installed or start, or runs past ``PDPX_BENCH_H2O_TIMEOUT`` seconds
  (default 3600), its row is left out and the notes say why. ``PDPX_BENCH_H2O=0`` skips it.

``PDPX_BENCH_SPARK_ROWS`` sets the rows (``PDPX_BENCH_QUICK=1``: 20,000). Each side is timed once after a
warm-up call on the same session (Python workers started, kernels loaded).
"""

from __future__ import annotations

import itertools
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

try:
    from .common import row
    from .peer_h2o import run_h2o
except ImportError:  # run as a script or by run.py
    from common import row
    from peer_h2o import run_h2o

_NOTES: list[str] = []
ROWS = 1_000_000


def _rows() -> int:
    if os.environ.get("PDPX_BENCH_SPARK_ROWS"):
        return int(os.environ["PDPX_BENCH_SPARK_ROWS"])
    return 20_000 if os.environ.get("PDPX_BENCH_QUICK") else ROWS


def make_data(n: int, p: int = 10, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"x{i}" for i in range(p)])
    y = X.x0 * X.x1 + np.sin(2 * X.x2) + X.x3 ** 2 - X.x4 + 0.5 * X.x5 * X.x6 + rng.normal(scale=0.3, size=n)
    return X, y.to_numpy()


def recipe(spark, sdf, model, features: list[str], grids: list[np.ndarray]) -> pd.DataFrame:
    """The cross-join-and-group-by recipe: every grid point crossed with the rows, predicted, averaged."""
    from pyspark.sql import functions as F

    points = pd.DataFrame(list(itertools.product(*grids)), columns=[f"g_{f}" for f in features])
    crossed = sdf.drop(*features).crossJoin(F.broadcast(spark.createDataFrame(points)))
    columns = list(sdf.columns)

    def predict(batches):
        for b in batches:
            X = b.rename(columns={f"g_{f}": f for f in features})[columns]
            yield pd.DataFrame({**{f"g_{f}": b[f"g_{f}"] for f in features}, "pred": model.predict(X)})

    schema = ", ".join(f"g_{f} double" for f in features) + ", pred double"
    out = crossed.mapInPandas(predict, schema).groupBy(*[f"g_{f}" for f in features]).agg(F.avg("pred"))
    return out.toPandas()


def scaled(one_s: float, pair_s: float, ones: list, pairs: list) -> float:
    """Seconds for every set from one 1-way's and one pair's: cost per grid point times every set's grid points
    (the first of ``ones`` and of ``pairs`` are the sets timed)."""
    points_one = sum(len(r.grid_values[0]) for r in ones)
    points_pair = sum(len(r.grid_values[0]) * len(r.grid_values[1]) for r in pairs)
    pair_points = len(pairs[0].grid_values[0]) * len(pairs[0].grid_values[1])
    return one_s / len(ones[0].grid_values[0]) * points_one + pair_s / pair_points * points_pair


def h2o_peer(X, y, fit: int, got: list, p: int, spark_s: float, case: str) -> list[dict]:
    """H2O's partial_plot row (scaled like the recipe), or none and a note saying why."""
    if os.environ.get("PDPX_BENCH_H2O") == "0":
        _NOTES.append("H2O not run: PDPX_BENCH_H2O=0")
        return []
    one, pair = got[0], got[p]
    out = run_h2o(X, y, fit_rows=fit, trees=100, depth=6, one=(one.features[0], one.grid_values[0]),
                  pair=(list(pair.features), list(pair.grid_values)),
                  timeout=float(os.environ.get("PDPX_BENCH_H2O_TIMEOUT", 3600)))
    if not out["ran"]:
        _NOTES.append(f"H2O partial_plot not run: {out['why']}")
        return []
    h2o_s = scaled(out["one_seconds"], out["pair_seconds"], got[:p], got[p:])
    theirs, ours = np.asarray(out["one_average"]), np.asarray(one.average, dtype=float).ravel()
    gap = f"up to {np.max(np.abs(theirs - ours)):.3f}" if theirs.shape == ours.shape else "(another grid length)"
    _NOTES.append(f"H2O {out['version']} partial_plot ({out['java']}, a local server, 4 GB, 2 threads) on the same rows and "
                  f"pdpx's grid values: one 1-way ({out['one_seconds']:.2f} s) and one pair "
                  f"({out['pair_seconds']:.2f} s), scaled by grid points; its GBM (100 trees of depth 6, fitted in "
                  f"{out['fit_seconds']:.1f} s) is another model than the XGBoost, so only the times compare: its PD "
                  f"of {one.features[0]} differs from pdpx's by {gap} (a model gap, not an error)")
    return [row("spark", case + " vs H2O", spark_s, "H2O partial_plot (scaled)", h2o_s, ">= 20x",
                h2o_s / spark_s >= 20)]


def tally_note(X: pd.DataFrame, spark_s: float) -> str:
    """What the check of rows that change between actions costs (pdpx.rows.spark_checks): the tallies of every row, as
    the driver reads them for the columns' pass (each task reads the same for its partition's rows in the sums' pass),
    timed here on the benchmark's rows in 8 partitions, against the whole call's time."""
    from pdpx.rows.spark_checks import tallies_by_partition

    cols = list(X.columns)
    parts = X.assign(part=np.repeat(np.arange(8), -(-len(X) // 8))[:len(X)])
    t0 = time.perf_counter()
    tallies_by_partition(parts, cols, "part")
    one = time.perf_counter() - t0
    calls = 2  # partial_dependence_many of the 1-ways, then of the pairs: each reads the rows twice (columns, sums)
    return (f"the tallies that check rows do not change between Spark actions: {one:.2f} s for the {len(X):,} rows x "
            f"{len(cols)} columns; the call reads them {2 * calls} times ({2 * calls * one:.1f} s of work, "
            f"{2 * calls * one / spark_s:.1%} of the call's {spark_s:.1f} s, half of it in Spark's tasks)")


def run() -> list[dict]:
    try:
        import xgboost as xgb
        from pyspark.sql import SparkSession
    except ImportError as exc:
        _NOTES.append(f"bench_spark skipped: {exc}")
        return []
    import pdpx

    warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support pandas.*")
    n = _rows()
    X, y = make_data(n)
    fit = min(n, 100_000)
    model = xgb.XGBRegressor(n_estimators=100, max_depth=6, n_jobs=2, random_state=0).fit(X[:fit], y[:fit])
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "2g").config("spark.log.level", "ERROR").getOrCreate())
    try:
        sdf = spark.createDataFrame(X).repartition(8).cache()
        sdf.count()
        feats = list(X.columns)
        sets = [[f] for f in feats] + [list(p) for p in itertools.combinations(feats, 2)]
        kw = dict(grid_resolution=20)
        pair_kw = dict(grid_resolution=10)

        def on(data):
            ones = pdpx.partial_dependence_many(model, data, sets[:len(feats)], **kw)
            twos = pdpx.partial_dependence_many(model, data, sets[len(feats):], **pair_kw)
            return list(ones) + list(twos)

        pdpx.partial_dependence_many(model, spark.createDataFrame(X.head(2000)), [["x0"], ["x0", "x1"]])  # warm-up
        tracker = spark.sparkContext.statusTracker()  # the benchmark counts jobs; pdpx itself never reads it
        spark.sparkContext.setJobGroup("pdpx", "pdpx")
        t0 = time.perf_counter()
        got = on(sdf)
        spark_s = time.perf_counter() - t0
        jobs = len(tracker.getJobIdsForGroup("pdpx"))
        spark.sparkContext.setJobGroup("recipe", "recipe")
        t0 = time.perf_counter()
        local = on(X)
        pandas_s = time.perf_counter() - t0
        for a, b in zip(got, local):
            assert np.allclose(a.average, b.average, rtol=0, atol=1e-9), a.features
        one, pair = got[0], got[len(feats)]
        t0 = time.perf_counter()
        recipe(spark, sdf, model, one.features, list(one.grid_values))
        one_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        recipe(spark, sdf, model, pair.features, list(pair.grid_values))
        pair_s = time.perf_counter() - t0
        recipe_s = scaled(one_s, pair_s, got[:len(feats)], got[len(feats):])
    finally:
        spark.stop()
    _NOTES.append(tally_note(X, spark_s))
    _NOTES.append(f"bench_spark: {n:,} rows x 10 features, {len(sets)} feature sets; the pdpx call on Spark started "
                  f"{jobs} Spark jobs (row count and text levels, head, the grids' columns, then one per "
                  "partial_dependence_many call gathering counts); the recipe timed on one 1-way "
                  f"({one_s:.2f} s) and one pair ({pair_s:.2f} s), scaled by grid points")
    case = f"every 1-way (20) and pair (10x10), XGBoost 100x6, {n:,} rows, local[2]"
    peer = h2o_peer(X, y, fit, got, len(feats), spark_s, case)  # after spark.stop(): the two cores are its own
    return [
        row("spark", case, spark_s, "cross join + group by (scaled)", recipe_s, ">= 20x", recipe_s / spark_s >= 20),
        row("spark", case + " vs pandas", spark_s, "same pdpx call, pandas X", pandas_s, "within 3x",
            spark_s <= 3 * pandas_s),
    ] + peer


def markdown() -> str:
    """The benchmark's notes for RESULTS.md."""
    return "\n".join(f"* {n}" for n in _NOTES)


if __name__ == "__main__":
    for r in run():
        print(r)
    print(markdown())
