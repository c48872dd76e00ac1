"""One pass for every feature set: pattern counts against exact per feature set, one predict, and woodelf.

Workloads (the issue's): 10 numeric features; every 1-way PD on a grid of 100,
and every pair (45) on 20 x 20; models XGBoost (200 trees, depth 6), LightGBM
(200 trees, its default 31 leaves), a scikit-learn random forest (100 trees,
depth 10), regression. Rows: 50,000, 400,000 and 1,000,000.

Columns, all in one process:

* ``counts``: one gather (order 1 for the 1-way workload, 2 for pairs) plus every
  PD from the counts (:mod:`pdpx.plugins.trees.counts`, ``counts_pd``);
* ``exact``: today's ``exact``, one feature set at a time (the engine directly,
  no session overhead) -- measured on the smallest row count, where it is
  affordable, and scaled by rows above it (it is linear in rows; marked "est.");
* ``predict``: one native ``predict`` of all rows (the model's own, all cores);
* ``woodelf``: the peer (``woodelf_explainer``: ``woodelf_pdp`` for 1-way,
  ``woodelf_pdp_joint`` for pairs), on the same model, data and grids.

The peer is not a pdpx dependency: the benchmark creates its own environment
under ``benchmarks/.venv-peer`` (ignored by git) with the peer, pdpx (from this
checkout) and the model libraries, and re-runs itself there so both run in one
process. When that environment cannot be made (no network), the woodelf column
is skipped with a note.

Run: ``python benchmarks/bench_onepass.py [--rows 50000,400000] [--quick] [--models xgboost]
[--no-peer] [--no-build-peer]``; ``run()`` gives rows for ``benchmarks/run.py``
(``make bench``): 400,000 rows only, and the woodelf columns only when the peer's
environment was made before (``make bench`` does not build it; it is skipped with
a note). Timings on a shared machine are indicative; the ratios are measured in
one run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: The peer's environment (``PDPX_PEER_ENV`` names another one already made).
PEER_ENV = Path(os.environ.get("PDPX_PEER_ENV") or HERE / ".venv-peer")
PEER_PACKAGES = ["woodelf_explainer", "xgboost", "lightgbm", "scikit-learn"]
N_FEATURES = 10
GRID_1D = 100
GRID_2D = 20
ROWS = (50_000, 400_000, 1_000_000)
MODELS = ("xgboost", "lightgbm", "forest")


# --------------------------------------------------------------- the peer's environment
def peer_python(build: bool = True) -> Path | None:
    """The peer environment's python, made on first use when ``build``; None (with a note) when absent."""
    py = PEER_ENV / "bin" / "python"
    if py.exists() and subprocess.run([str(py), "-c", "import woodelf, numba"], capture_output=True).returncode == 0:
        return py
    if not build:
        print("note: benchmarks/.venv-peer is absent, so woodelf is skipped; `python benchmarks/bench_onepass.py` "
              "makes it (a few minutes: the peer and the model libraries from PyPI)", file=sys.stderr)
        return None
    try:
        subprocess.run([sys.executable, "-m", "venv", str(PEER_ENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PEER_PACKAGES], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "-e", f"{ROOT}[fast]"], check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"note: the peer environment could not be made ({exc}); woodelf is skipped", file=sys.stderr)
        return None
    return py


def have_peer() -> bool:
    try:
        import woodelf  # noqa: F401
    except ImportError:
        return False
    return True


# --------------------------------------------------------------- data, models, grids
def make_data(n: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    y = (X[:, 0] + np.sin(2 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.5 * (X[:, 4] > 0) * X[:, 5] + 0.3 * X[:, 6] ** 2
         + 0.2 * X[:, 7] * X[:, 8] + rng.normal(scale=0.3, size=n))
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(N_FEATURES)]), y


def fit(name: str, X: pd.DataFrame, y: np.ndarray):
    """The model, fitted on the first 50,000 rows (the fit is not what is measured)."""
    Xf, yf = X.iloc[:50_000], y[:50_000]
    if name == "xgboost":
        import xgboost as xgb

        return xgb.XGBRegressor(n_estimators=200, max_depth=6, tree_method="hist", random_state=0).fit(Xf, yf)
    if name == "lightgbm":
        import lightgbm as lgb

        return lgb.LGBMRegressor(n_estimators=200, random_state=0, verbose=-1).fit(Xf, yf)
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=100, max_depth=10, random_state=0, n_jobs=-1).fit(Xf, yf)


def grids(X: pd.DataFrame, k: int) -> dict:
    """k equally spaced values between the 5% and 95% quantiles (alpha = beta = 0.4), as the peer builds them."""
    from pdpx.core.grid import mquantiles

    return {c: np.linspace(*mquantiles(X[c].to_numpy(), [0.05, 0.95]), k) for c in X.columns}


# --------------------------------------------------------------- the three pdpx-side computations
def tree_model(model, X):
    from pdpx.core.plugins import adapt

    ad = adapt(model)
    Xv = ad.validate_columns(X)
    return ad.tree_model("predict"), Xv


def request(Xv, feats, grid_values):
    from pdpx.core.method import Request

    return Request(X=Xv, features=list(feats), grid_values=list(grid_values), categorical=[False] * len(feats),
                   response="predict", outputs=[0], kind="average", sample_weight=None, memory_budget=1 << 30)


def sets(pairs: bool):
    return list(itertools.combinations(range(N_FEATURES), 2)) if pairs else [(j,) for j in range(N_FEATURES)]


def counts_all(tm, Xv, g, pairs: bool) -> dict:
    """Every PD of the workload from one gather."""
    from pdpx.plugins.trees import counts, counts_pd

    c = counts.gather(tm, Xv, order=2 if pairs else 1, memory_budget=1 << 30)
    cols = list(Xv.columns)
    return {s: counts_pd.partial_dependence(tm, c, request(Xv, s, [g[cols[j]] for j in s])).average[0]
            for s in sets(pairs)}


def exact_all(tm, Xv, g, pairs: bool) -> dict:
    """Today's exact, one feature set at a time."""
    from pdpx.plugins.trees import engine

    cols = list(Xv.columns)
    return {s: engine.exact(tm, request(Xv, s, [g[cols[j]] for j in s])).average[0] for s in sets(pairs)}


def woodelf_all(model, X, pairs: bool):
    from woodelf.pdp import woodelf_pdp, woodelf_pdp_joint

    if pairs:
        return woodelf_pdp_joint(model, X, k=GRID_2D, verbose=False)
    return woodelf_pdp(model, X, k=GRID_1D, centered=False)


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


# --------------------------------------------------------------- one model, one row count
def measure(name: str, n: int, *, peer: bool, exact_rows: int) -> list[dict]:
    X, y = make_data(n)
    model = fit(name, X, y)
    tm, Xv = tree_model(model, X)
    out = []
    for pairs in (False, True):
        g = grids(X, GRID_2D if pairs else GRID_1D)
        workload = "all 45 pairs, 20 x 20" if pairs else "every feature, grid 100"
        counts_all(tm, Xv.iloc[:2000], g, pairs)  # both compiled and warm before anything is timed
        exact_all(tm, Xv.iloc[:2000], g, pairs)
        t_counts, res = timed(lambda: counts_all(tm, Xv, g, pairs))
        model.predict(X.iloc[:1000])
        t_predict, _ = timed(lambda: model.predict(X))
        # exact on at most exact_rows rows, scaled by rows (its cost is linear in them)
        m = min(n, exact_rows)
        t_exact, ref = timed(lambda: exact_all(tm, Xv.iloc[:m], g, pairs))
        t_exact *= n / m
        if m == n:  # the same numbers, as a check (both are brute's answer)
            err = max(float(np.max(np.abs(res[s] - ref[s]))) for s in res)
            assert err < 1e-6 * (1 + max(float(np.max(np.abs(v))) for v in ref.values())), err
        t_peer = None
        if peer:
            t_peer, _ = timed(lambda: woodelf_all(model, X, pairs))
        out.append({"model": name, "rows": n, "workload": workload, "counts_s": t_counts, "predict_s": t_predict,
                    "exact_s": t_exact, "exact_estimated": m < n, "woodelf_s": t_peer})
        print(json.dumps(out[-1]), flush=True)
    return out


def rows_to_results(results: list[dict]) -> list[dict]:
    """Rows for benchmarks/run.py (common.row): counts against woodelf (>= 5x) and one predict (<= 3x / 10x)."""
    from common import row

    out = []
    for r in results:
        pairs = "pairs" in r["workload"]
        case = f"{r['model']}, {r['rows']:,} rows, {r['workload']}"
        limit = 10 if pairs else 3
        ratio = r["counts_s"] / r["predict_s"]
        out.append(row("onepass", f"{case} (x one predict)", r["counts_s"], "one native predict", r["predict_s"],
                       f"<= {limit}x one predict", ratio <= limit, ratio=ratio))
        if r["woodelf_s"] is not None:
            out.append(row("onepass", f"{case} (vs woodelf)", r["counts_s"], "woodelf", r["woodelf_s"],
                           ">= 5x faster than woodelf", r["woodelf_s"] / r["counts_s"] >= 5))
    return out


def run() -> list[dict]:
    """For benchmarks/run.py (quick mode): the 400,000-row rows of every model (the issue's targets); the
    woodelf columns only when the peer's environment was made before (it is not built here)."""
    return rows_to_results(main(["--quick", "--no-build-peer"], collect=True))


def table(results: list[dict]) -> str:
    lines = ["| model | rows | workload | counts | one predict | counts / predict | exact per set | "
             "exact / counts | woodelf | woodelf / counts |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        est = " (est.)" if r["exact_estimated"] else ""
        peer = "skipped" if r["woodelf_s"] is None else f"{r['woodelf_s']:.2f} s"
        speed = "" if r["woodelf_s"] is None else f"{r['woodelf_s'] / r['counts_s']:.1f}x"
        lines.append(f"| {r['model']} | {r['rows']:,} | {r['workload']} | {r['counts_s']:.2f} s | "
                     f"{r['predict_s']:.2f} s | {r['counts_s'] / r['predict_s']:.2f}x | {r['exact_s']:.2f} s{est} | "
                     f"{r['exact_s'] / r['counts_s']:.1f}x | {peer} | {speed} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None, *, collect: bool = False):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=",".join(map(str, ROWS)))
    ap.add_argument("--quick", action="store_true", help="400,000 rows only (what benchmarks/run.py runs)")
    ap.add_argument("--no-build-peer", action="store_true", help="skip woodelf unless its environment exists")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--no-peer", action="store_true", help="skip woodelf (no peer environment)")
    ap.add_argument("--exact-rows", type=int, default=50_000, help="rows exact runs on (then scaled)")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows = "400000"
    if not args.no_peer and not have_peer() and os.environ.get("PDPX_BENCH_IN_PEER") != "1":
        py = peer_python(build=not args.no_build_peer)
        if py is not None:  # the same run inside the peer's environment, both libraries in one process
            out = HERE / ".onepass-results.json"
            cmd = [str(py), str(Path(__file__).resolve()), *(argv if argv is not None else sys.argv[1:]),
                   "--json", str(out)]
            # this checkout's pdpx first, whatever the peer's environment has installed
            env = {**os.environ, "PDPX_BENCH_IN_PEER": "1", "PYTHONPATH": str(ROOT / "src"), "TQDM_DISABLE": "1"}
            subprocess.run(cmd, check=True, env=env)
            results = json.loads(out.read_text())
            return results if collect else print(table(results))
        args.no_peer = True
    peer = not args.no_peer and have_peer()
    results = []
    for name in args.models.split(","):
        for n in (int(r) for r in args.rows.split(",")):
            results += measure(name, n, peer=peer, exact_rows=args.exact_rows)
    if args.json:
        Path(args.json).write_text(json.dumps(results))
    if collect:
        return results
    print(table(results))
    if not peer:
        print("\nwoodelf skipped: no peer environment (see the note above)")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
