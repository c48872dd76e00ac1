"""Coverage study: how often does a 90% band around a PD cover the learner-PD, and is h_test's level right?

Data: Friedman-1 (10 uniform features, y = 10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4 + N(0, 1)), fresh data
for every replication. Learner: a random forest (scikit-learn, bootstrap=True).

The truth a band should cover, per grid point (stated in the output): the learner-PD, E_D[PD of the model trained
on D], D a fresh training set of n rows, the PD averaged over a fixed population sample of --pop rows; estimated
from --truth-refits refits on fresh data (its Monte Carlo error printed). The cross-fitted PD averages models
trained on (K-1)/K of the rows, so it is also scored against the learner-PD at that training size.

Methods (each asked for a 90% band; a method that raises is reported as unavailable):

* bootstrap: interval=0.9 on the model fitted on D, PD over D's rows (the rows' bootstrap);
* jackknife: interval="jackknife", level=0.9 (the infinitesimal jackknife, where that branch exists);
* learner (refits): interval="learner" on pdpx.Refits of --k-refits models, each on a random 80% subsample,
  PD over D's rows;
* cross_fitted: pdpx.cross_fitted with 5 folds.

h_test: type-I rate on an additive process (Friedman-1 with 10 sin(pi x0) + 10 sin(pi x1) in place of
10 sin(pi x0 x1)) and power on Friedman-1's pair (x0, x1), at the 5% level (n_null=19: p = 0.05 is the smallest
p-value, reached when H is above all 19 null H), for both residual kinds.

Run: PYTHONPATH=src python benchmarks/coverage_study.py [--reps 200] [--h-reps 40]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

import pdpx

FEATURES = ["x0", "x2", "x3"]
GRID = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
LEVEL = 0.9


def friedman1(n, rng, additive=False):
    X = pd.DataFrame(rng.uniform(size=(n, 10)), columns=[f"x{j}" for j in range(10)])
    first = 10 * np.sin(np.pi * X.x0) + 10 * np.sin(np.pi * X.x1) if additive else 10 * np.sin(np.pi * X.x0 * X.x1)
    y = first + 20 * (X.x2 - 0.5) ** 2 + 10 * X.x3 + 5 * X.x4 + rng.normal(size=n)
    return X, y.to_numpy()


def forest(seed):
    return RandomForestRegressor(n_estimators=50, min_samples_leaf=3, max_features=0.5, bootstrap=True, n_jobs=1,
                                 random_state=seed)


def pds(model, X):
    return np.stack([pdpx.partial_dependence(model, X, f, custom_values={f: GRID}, progress=False).average[0]
                     for f in FEATURES])


def truth(n, refits, pop, seed):
    rng = np.random.default_rng(seed)
    curves = []
    for r in range(refits):
        X, y = friedman1(n, rng)
        curves.append(pds(forest(10_000 + r).fit(X, y), pop))
    curves = np.asarray(curves)
    return curves.mean(axis=0), curves.std(axis=0, ddof=1) / np.sqrt(refits)


def bands(X, y, seed, k_refits, methods):
    """{method: (lower, upper) of shape (features, grid)} or {method: error text}."""
    out = {}
    model = forest(seed).fit(X, y)

    def refits(f):
        rng = np.random.default_rng(seed)
        models = {}
        for k in range(k_refits):
            idx = rng.choice(len(X), int(0.8 * len(X)), replace=False)
            models[f"m{k}"] = forest(seed * 100 + k).fit(X.iloc[idx], y[idx])
        return [pdpx.partial_dependence(pdpx.Refits(models, train_fraction=0.8), X, g, custom_values={g: GRID},
                                        interval="learner", level=LEVEL, progress=False) for g in f]

    run = {
        "bootstrap": lambda f: [pdpx.partial_dependence(model, X, g, custom_values={g: GRID}, progress=False,
                                                        interval=LEVEL, n_boot=200) for g in f],
        "jackknife": lambda f: [pdpx.partial_dependence(model, X, g, custom_values={g: GRID}, progress=False,
                                                        interval="jackknife", level=LEVEL) for g in f],
        "learner (refits)": refits,
        "cross_fitted": lambda f: [pdpx.cross_fitted(forest(seed), X, y, g, folds=5, level=LEVEL, random_state=seed,
                                                     custom_values={g: GRID}) for g in f],
    }
    for name in methods:
        try:
            rs = run[name](FEATURES)
            out[name] = (np.stack([r.lower[0] for r in rs]), np.stack([r.upper[0] for r in rs]))
        except Exception as exc:  # noqa: BLE001 - reported as unavailable
            out[name] = f"{type(exc).__name__}: {str(exc)[:120]}"
    return out


def coverage(args):
    rng = np.random.default_rng(args.seed)
    pop, _ = friedman1(args.pop, rng)
    t0 = time.perf_counter()
    true_n, mc_n = truth(args.n, args.truth_refits, pop, args.seed + 1)
    true_cf, mc_cf = (truth(int(0.8 * args.n), args.truth_refits, pop, args.seed + 2) if "cross_fitted" in args.methods
                      else (true_n, mc_n))
    print(f"truth: {args.truth_refits} refits per training size in {time.perf_counter() - t0:.0f} s; Monte Carlo se up to "
          f"{max(mc_n.max(), mc_cf.max()):.3f}", flush=True)
    hits, widths, unavailable = {}, {}, {}
    t0 = time.perf_counter()
    for rep in range(args.reps):
        X, y = friedman1(args.n, rng)
        for name, b in bands(X, y, args.seed + 100 + rep, args.k_refits, args.methods.split(",")).items():
            if isinstance(b, str):
                unavailable[name] = b
                continue
            lo, hi = b
            targets = [("learner-PD(n)", true_n)] + ([("learner-PD(0.8n)", true_cf)] if name == "cross_fitted" else [])
            for tname, t in targets:
                hits.setdefault((name, tname), []).append((lo <= t) & (t <= hi))
            widths.setdefault(name, []).append(hi - lo)
        if rep % 10 == 9:
            print(f"  {rep + 1} replications, {time.perf_counter() - t0:.0f} s", flush=True)
    rows = []
    for (name, tname), h in hits.items():
        cov = np.mean(h, axis=0)  # (features, grid)
        for fi, f in enumerate(FEATURES):
            rows.append({"method": name, "truth": tname, "feature": f,
                         **{f"{g:g}": round(float(c), 3) for g, c in zip(GRID, cov[fi])},
                         "mean": round(float(cov[fi].mean()), 3),
                         "width": round(float(np.mean(widths[name], axis=0)[fi].mean()), 3)})
    return pd.DataFrame(rows), unavailable, time.perf_counter() - t0


def h_study(args):
    out = []
    for additive in (True, False):
        for residuals in ("out_of_fold", "in_sample", "additive"):
            rng = np.random.default_rng(args.seed + (7 if additive else 8))
            rejected, t0 = [], time.perf_counter()
            for rep in range(args.h_reps):
                X, y = friedman1(args.n, rng, additive=additive)
                model = GradientBoostingRegressor(n_estimators=60, max_depth=3, random_state=rep).fit(X, y)
                res = pdpx.h_test(model, X, y, pairs=[("x0", "x1")], n_null=19, residuals=residuals,
                                  random_state=rep, progress=False)
                rejected.append(res.to_frame().p_value.iloc[0] <= 0.05)
            out.append({"process": "additive (type-I)" if additive else "Friedman-1 x0*x1 (power)",
                        "residuals": residuals, "replications": args.h_reps,
                        "rejected at 5%": round(float(np.mean(rejected)), 3),
                        "seconds": round(time.perf_counter() - t0)})
            print(out[-1], flush=True)
    return pd.DataFrame(out)


def markdown(df):
    head = "| " + " | ".join(map(str, df.columns)) + " |\n|" + "---|" * len(df.columns) + "\n"
    return head + "\n".join("| " + " | ".join(map(str, r)) + " |" for r in df.itertuples(index=False))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--h-reps", type=int, default=40)
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--pop", type=int, default=1000)
    p.add_argument("--truth-refits", type=int, default=200)
    p.add_argument("--k-refits", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--methods", default="bootstrap,jackknife,learner (refits),cross_fitted")
    p.add_argument("--skip", choices=["coverage", "h"], default=None)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    warnings.simplefilter("ignore")
    result = {"args": vars(args)}
    if args.skip != "coverage":
        table, unavailable, secs = coverage(args)
        print(markdown(table))
        print("unavailable:", unavailable, f"({secs:.0f} s)")
        result.update(coverage=table.to_dict("records"), unavailable=unavailable, seconds=secs)
    if args.skip != "h":
        h = h_study(args)
        print(markdown(h))
        result["h_test"] = h.to_dict("records")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
