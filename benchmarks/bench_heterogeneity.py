"""What the average hides (issue 38): heterogeneity, regions and member bands against one predict, beside effector.

Rows: 1,000,000 x 20, uniform on [-1, 1], a response with known regions (``x0``'s slope flips sign
at ``x1 = 0``, ``x2`` has a slope only where ``x3 > 0.5``, ``x5 * x6``, ``sin(3 x4)``, small linear
terms in the rest). Models are fitted on the first 50,000 rows (the fit is not what is measured);
every measure runs on all the rows. Rows of :func:`run`:

1. ``pdpx.heterogeneity`` of every feature (grid 20) of an XGBoost model (200 trees, depth 6)
   against one native ``predict`` of the same rows: target <= 5x;
2. ``pdpx.regions(model, X, None, max_depth=2)``: every feature's regions in one call (one walk
   over the rows writes every feature's curves), against one ``predict``: target <= 10x;
3. ``partial_dependence(..., interval="members")`` of a RandomForestRegressor (500 trees, depth
   10) against its PD alone (same feature, rows and grid): target <= 1.5x;
4. effector (its own environment, :mod:`peer_effector`): ``effector.PDP`` with ``fit("all")``,
   every ``heter_score`` and ``find_regions(features="all")`` on the same model (through a predict
   function) and rows; it subsamples to 10,000 rows. Row 5: the same with ``effector.ShapDP`` (its
   1,000-row subsample; SHAP values from shap's model-agnostic explainer), when shap is in effector's
   environment. The ratio is effector's time over pdpx's heterogeneity + regions (which ran on every
   row); "met" says whether the answers agree:
   the same root split (feature, and position within one of effector's 20 grid steps) for every
   feature where either tool splits, and heterogeneity ranks that correlate >= 0.9. The detail,
   feature by feature, is in the markdown below the table (:func:`markdown`).

``PDPX_BENCH_QUICK=1`` (or ``PDPX_BENCH_SMALL=1``, or ``--small``) runs 20,000 rows and a 100-tree
forest. The effector environment is made on the first run (PyPI; a few minutes);
``PDPX_BENCH_NO_PEER_BUILD=1`` skips effector unless it was made before; ``PDPX_EFFECTOR_SHAPDP=0``
skips ShapDP (about 13 minutes on the 2-core machine, whatever the rows: its cost is its 1,000-row
subsample's SHAP values). When it cannot be made
or run, rows 4 and 5 are replaced by a note saying why.

Run standalone: ``python benchmarks/bench_heterogeneity.py [--small]``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import best_time, row  # noqa: E402

N_ROWS = 1_000_000
SMALL_ROWS = 20_000
FIT_ROWS = 50_000
N_FEATURES = 20
XGB_TREES, XGB_DEPTH = 200, 6
FOREST_TREES, SMALL_FOREST_TREES, FOREST_DEPTH = 500, 100, 10
BENCH = "heterogeneity (issue 38)"
#: The rank correlation of the two tools' heterogeneity scores over the features that counts as agreeing (their
#: scales and weights differ: near-equal features may swap places).
RANKS_AGREE = 0.9
#: What markdown() shows below the table, filled by run().
_DETAIL: list = []


def small() -> bool:
    return bool(os.environ.get("PDPX_BENCH_QUICK") or os.environ.get("PDPX_BENCH_SMALL"))


def make_data(n: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, N_FEATURES))
    y = (3 * X[:, 0] * np.where(X[:, 1] > 0, 1.0, -1.0) + 2 * X[:, 2] * (X[:, 3] > 0.5) + np.sin(3 * X[:, 4])
         + X[:, 5] * X[:, 6] + 0.2 * X[:, 7:].sum(axis=1) + rng.normal(scale=0.1, size=n))
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(N_FEATURES)]), y


def fit_models(X: pd.DataFrame, y: np.ndarray, forest_trees: int):
    import xgboost as xgb
    from sklearn.ensemble import RandomForestRegressor

    Xf, yf = X.iloc[:FIT_ROWS], y[:FIT_ROWS]
    booster = xgb.XGBRegressor(n_estimators=XGB_TREES, max_depth=XGB_DEPTH, tree_method="hist",
                               random_state=0).fit(Xf, yf)
    forest = RandomForestRegressor(n_estimators=forest_trees, max_depth=FOREST_DEPTH, random_state=0,
                                   n_jobs=-1).fit(Xf, yf)
    return booster, forest


def every_region(model, X: pd.DataFrame) -> dict:
    import pdpx

    return pdpx.regions(model, X, None, max_depth=2)


def pdpx_side(model, X: pd.DataFrame) -> dict:
    """Rows 1 and 2: heterogeneity and regions of every feature, and one predict, on all the rows."""
    import pdpx

    warm = X.iloc[:2000]
    pdpx.heterogeneity(model, warm)  # compiled kernels and the model's trees read before anything is timed
    every_region(model, warm)
    t_predict = best_time(lambda: model.predict(X), repeat=3)
    het, t_het, first_het = _twice(lambda: pdpx.heterogeneity(model, X))
    found, t_reg, first_reg = _twice(lambda: every_region(model, X))
    return {"predict": t_predict, "heterogeneity": t_het, "regions": t_reg, "het": het, "found": found,
            "first": {"heterogeneity": first_het, "regions": first_reg}}


def _twice(fn):
    """(the result, the faster of two calls' seconds, the first call's): the first call in a process also pays
    for memory the process has not touched before (on this benchmark's virtual machine ~2 s per GB of fresh pages:
    regions of every feature hold 3.2 GB of curves), so both are reported."""
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, min(times), times[0]


def members_side(forest, X: pd.DataFrame) -> dict:
    """Row 3: member bands against the PD alone, feature x0 (default grid), best of 3 each."""
    import pdpx

    pdpx.partial_dependence(forest, X.iloc[:2000], "x0", interval="members")
    pdpx.partial_dependence(forest, X.iloc[:2000], "x0")
    t_pd = best_time(lambda: pdpx.partial_dependence(forest, X, "x0"), repeat=3)
    t_members = best_time(lambda: pdpx.partial_dependence(forest, X, "x0", interval="members"), repeat=3)
    res = pdpx.partial_dependence(forest, X, "x0", interval="members")
    alone = pdpx.partial_dependence(forest, X, "x0")
    gap = float(np.max(np.abs(np.asarray(res.average) - np.asarray(alone.average))))
    return {"pd": t_pd, "members": t_members, "gap": gap, "n_members": len(res.members)}


# --------------------------------------------------------------- comparing the answers
def pdpx_first_split(found) -> dict | None:
    """The root's split (the first found: the search is depth first), as peer_effector reports effector's."""
    if not found.splits:
        return None
    s = found.splits[0]
    if s.kind == "threshold":
        return {"feature": s.feature, "position": float(s.threshold)}
    return {"feature": s.feature, "levels": list(s.levels or ())}


def show(split: dict | None) -> str:
    if split is None:
        return "no split"
    if "position" in split:
        return f"{split['feature']} at {split['position']:.3g}"
    return f"{split['feature']} in {split['levels']}"


def agreement(pd_side: dict, peer: dict, X: pd.DataFrame) -> tuple[bool, list, dict]:
    """Whether effector's answer agrees with pdpx's, the per-feature lines of the detail table, and a summary."""
    step = {c: float(X[c].max() - X[c].min()) / 20 for c in X.columns}  # one of effector's 20 grid steps
    lines, agree_splits, compared = [], 0, 0
    h_pdpx = pd_side["het"].table.set_index("feature")["heterogeneity"]
    for f in X.columns:
        ours = pdpx_first_split(pd_side["found"][f])
        theirs = (peer["splits"].get(f) or [None, []])[0]
        same = ours is None and theirs is None
        if ours is not None and theirs is not None and ours["feature"] == theirs["feature"]:
            same = "position" in ours and "position" in theirs and \
                abs(ours["position"] - theirs["position"]) <= step[ours["feature"]]
        if ours is not None or theirs is not None:
            compared += 1
            agree_splits += same
        lines.append(f"| {f} | {h_pdpx[f]:.3g} | {peer['heterogeneity'][f]:.3g} | {show(ours)} | {show(theirs)} | "
                     f"{'yes' if same else '**no**'} |")
    top_pdpx = list(pd_side["het"].table.feature[:3])
    top_peer = sorted(peer["heterogeneity"], key=lambda f: -peer["heterogeneity"][f])[:3]
    order_p = pd.Series(h_pdpx).reindex(X.columns).rank()
    order_e = pd.Series(peer["heterogeneity"]).reindex(X.columns).rank()
    spearman = float(np.corrcoef(order_p, order_e)[0, 1])
    summary = {"splits_agree": agree_splits, "compared": compared, "top_pdpx": top_pdpx, "top_peer": top_peer,
               "spearman": spearman, "step": max(step.values())}
    return agree_splits == compared and spearman >= RANKS_AGREE, lines, summary


def effector_rows(model, X: pd.DataFrame, pd_side: dict) -> list[dict]:
    """Row 4 (effector's PDP) and row 5 (its ShapDP, when shap is in its environment), and the detail for
    markdown()."""
    from peer_effector import run_effector

    peer = run_effector(model, X, build=not os.environ.get("PDPX_BENCH_NO_PEER_BUILD"))
    if not peer["ran"]:
        _DETAIL.append(f"effector skipped: {peer['why']}.")
        print(f"note: effector skipped: {peer['why']}", file=sys.stderr)
        return []
    t_pdpx = pd_side["heterogeneity"] + pd_side["regions"]
    _DETAIL.append(
        f"**pdpx beside effector {peer['version']}** ({len(X):,} rows x {N_FEATURES}, XGBoost {XGB_TREES} trees depth "
        f"{XGB_DEPTH}). pdpx: every row, exact ICE from the trees; heterogeneity {pd_side['heterogeneity']:.2f} s, "
        f"regions {pd_side['regions']:.2f} s. effector: through a predict function (its predictions equal the "
        f"model's to {peer['max_prediction_gap']:.1e}) on its own subsample of the rows; timed: the method on the "
        "rows, `fit('all')`, every `heter_score` and `find_regions(features='all')` (default finder, depth 2). "
        "pdpx's heterogeneity is the variance of the centered ICE curves, effector's `heter_score` a standard "
        "deviation (of the centered ICE for PDP, of the SHAP values around their curve for ShapDP), so only the "
        f"ranking is compared (agreeing at a rank correlation >= {RANKS_AGREE}: the scores weigh the range "
        "differently, so near-equal features may swap). A root split agrees when the feature is the same and the "
        "positions are within one of effector's 20 grid steps.")
    out = []
    for key, label in (("pdp", "PDP"), ("shapdp", "ShapDP")):
        ans = peer[key]
        if "why" in ans:
            _DETAIL.extend(["", f"effector {label}: not run ({ans['why']})."])
            continue
        met, lines, s = agreement(pd_side, ans, X)
        case = (f"every feature's heterogeneity + depth-2 regions, XGBoost {XGB_TREES} trees, {len(X):,} rows "
                f"(effector {label}: its {ans['nof_instances']:,}-row subsample); root splits agree on "
                f"{s['splits_agree']} of {s['compared']} features, heterogeneity ranks correlate {s['spearman']:.2f}")
        out.append(row(BENCH, case, t_pdpx, f"effector {peer['version']} {label} + find_regions", ans["seconds"],
                       f"answers agree (root splits; ranks >= {RANKS_AGREE})", met))
        _DETAIL.extend([
            "", f"effector {label} on {ans['nof_instances']:,} rows: `fit('all')` {ans['fit_seconds']:.2f} s, all "
            f"{ans['seconds']:.2f} s. Rank correlation {s['spearman']:.2f}; top 3 pdpx {s['top_pdpx']}, effector "
            f"{s['top_peer']}; root splits agree on {s['splits_agree']} of {s['compared']}.", "",
            f"| feature | pdpx heterogeneity | effector {label} heter_score | pdpx root split | effector root split "
            "| agree |", "|---|---|---|---|---|---|", *lines])
    return out


def run() -> list[dict]:
    _DETAIL.clear()
    n = SMALL_ROWS if small() else N_ROWS
    forest_trees = SMALL_FOREST_TREES if small() else FOREST_TREES
    X, y = make_data(n)
    booster, forest = fit_models(X, y, forest_trees)
    shape = f"{n:,} x {N_FEATURES}"
    side = pdpx_side(booster, X)
    r_het = side["heterogeneity"] / side["predict"]
    r_reg = side["regions"] / side["predict"]
    out = [
        row(BENCH, f"heterogeneity of every feature (grid 20, {side['het'].method}), XGBoost {XGB_TREES} trees depth "
            f"{XGB_DEPTH}, {shape} (x one predict; faster of 2 calls, the first {side['first']['heterogeneity']:.2f} s)",
            side["heterogeneity"], "one native predict", side["predict"], "<= 5x one predict", r_het <= 5,
            ratio=r_het),
        row(BENCH, f"regions, depth 2, of every feature (one call), XGBoost {XGB_TREES} trees depth {XGB_DEPTH}, "
            f"{shape} (x one predict; faster of 2 calls, the first {side['first']['regions']:.2f} s)",
            side["regions"], "one native predict", side["predict"], "<= 10x one predict", r_reg <= 10, ratio=r_reg),
    ]
    m = members_side(forest, X)
    r_m = m["members"] / m["pd"]
    out.append(row(BENCH, f"interval='members' ({m['n_members']} members' PDs), RandomForest {forest_trees} trees "
                   f"depth {FOREST_DEPTH}, {shape}, x0 (x the PD alone; curves differ by {m['gap']:.1e})",
                   m["members"], "the PD alone", m["pd"], "<= 1.5x the PD alone", r_m <= 1.5, ratio=r_m))
    out += effector_rows(booster, X, side)
    return out


def markdown() -> str:
    """The meaning of the rows, for benchmarks/RESULTS.md."""
    head = ("### What the average hides (issue 38)\n\nRatios of the first three rows are pdpx's time over its "
            "reference (lower is better; the target is a ceiling); of the effector rows, effector's time over "
            "pdpx's (higher is better for pdpx), and \"met\" there means the two answers agree. ")
    return head + ("\n".join(_DETAIL) if _DETAIL else "effector was not run.")


def main(argv: list[str]) -> None:
    if "--small" in argv:
        os.environ["PDPX_BENCH_SMALL"] = "1"
    from run import fmt_s

    for r in run():
        print(f"{r['case']}: pdpx {fmt_s(r['pdpx_s'])}, {r['reference']} {fmt_s(r['reference_s'])}, "
              f"ratio {r['ratio']:.2f}x, target {r['target']}: {'met' if r['met'] else 'MISSED'}")
    print()
    print(markdown())


if __name__ == "__main__":
    main(sys.argv[1:])
