"""`make demo`: pdpx's main job on bundled data, start to finish.

Fits models of every supported library on data that ships with the packages (no
network), prints partial dependence tables, and writes figures and an HTML report
to ``demo-output/``.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pdpx

OUT = Path("demo-output")


def heading(text: str) -> None:
    """Print a section heading."""
    print()
    print(text)
    print("-" * len(text))


def table(res, rows: int = 6) -> str:
    """A compact PD table: a few grid points per output."""
    df = res.to_frame()
    df = df[df.kind == "average"]
    wide = df.pivot_table(index="label_1", columns="output", values="yhat", sort=False)
    if len(wide) > rows:
        idx = np.unique(np.linspace(0, len(wide) - 1, rows).round().astype(int))
        wide = wide.iloc[idx]
    wide.index.name = res.features[0]
    wide.columns.name = None
    return wide.round(4).to_string()


def timed(fn):
    """Run ``fn()``; return its result and the seconds it took."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def penguins() -> tuple[pd.DataFrame, pd.Series]:
    """The Palmer penguins (bundled with the palmerpenguins package): predictors and body mass."""
    from palmerpenguins import load_penguins

    df = load_penguins().dropna().reset_index(drop=True)
    X = df[["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "island", "sex"]].copy()
    X["island"] = X["island"].astype("category")
    X["sex"] = X["sex"].astype("category")
    return X, df["species"].astype(str)


def sklearn_part():
    """scikit-learn models: pdpx next to scikit-learn's own partial_dependence."""
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.inspection import partial_dependence as sk_pd

    heading("scikit-learn regressor: HistGradientBoostingRegressor on the diabetes data (442 rows)")
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    reg = HistGradientBoostingRegressor(max_iter=200, random_state=0).fit(X, y)
    res, t_first = timed(lambda: pdpx.partial_dependence(reg, X, ["bmi"], grid_resolution=50))
    res, t = timed(lambda: pdpx.partial_dependence(reg, X, ["bmi"], grid_resolution=50))
    print(f"pdpx.partial_dependence(reg, X, ['bmi']) ran method={res.method!r} in {t * 1000:.0f} ms "
          f"(the first call of the process: {t_first * 1000:.0f} ms, loading compiled kernels and reading the trees)")
    print(table(res))
    (brute, tb) = timed(lambda: pdpx.partial_dependence(reg, X, ["bmi"], method="brute", grid_resolution=50))
    (sk, ts) = timed(lambda: sk_pd(reg, X, ["bmi"], method="brute", grid_resolution=50))
    print(f"same curve as brute: max |exact - brute| = {np.abs(res.average - brute.average).max():.1e}; "
          f"vs scikit-learn brute {np.abs(res.average - sk['average']).max():.1e}")
    print(f"time: exact {t * 1000:.0f} ms, pdpx brute {tb * 1000:.0f} ms, scikit-learn brute {ts * 1000:.0f} ms")

    heading("scikit-learn classifier: HistGradientBoostingClassifier on palmerpenguins (333 rows)")
    Xp, yp = penguins()
    clf = HistGradientBoostingClassifier(max_iter=100, random_state=0).fit(Xp, yp)
    res = pdpx.partial_dependence(clf, Xp, ["flipper_length_mm"], grid_resolution=30)
    print(f"probability of each species vs flipper length (method={res.method!r}):")
    print(table(res))
    res = pdpx.partial_dependence(clf, Xp, ["island"])
    print("\nprobability of each species by island (categorical feature):")
    print(table(res))
    return {"diabetes": (reg, X), "penguins": (clf, Xp)}


def boosters_part():
    """XGBoost and LightGBM classifiers: exact next to brute."""
    import lightgbm as lgb
    import xgboost as xgb
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X.columns = [c.replace(" ", "_") for c in X.columns]
    for name, model in (
        ("XGBClassifier", xgb.XGBClassifier(n_estimators=200, max_depth=4, learning_rate=0.1, n_jobs=2)),
        ("LGBMClassifier", lgb.LGBMClassifier(n_estimators=200, num_leaves=15, verbose=-1, n_jobs=2)),
    ):
        heading(f"{name} on the breast cancer data (569 rows, 30 features)")
        model.fit(X, y)
        res, t = timed(lambda m=model: pdpx.partial_dependence(m, X, ["worst_concave_points"], grid_resolution=40))
        brute, tb = timed(lambda m=model: pdpx.partial_dependence(m, X, ["worst_concave_points"], method="brute",
                                                          grid_resolution=40))
        print(f"P(benign) vs worst_concave_points: method={res.method!r} {t * 1000:.0f} ms "
              f"(brute through {name}.predict_proba: {tb * 1000:.0f} ms, "
              f"max |difference| {np.abs(res.average - brute.average).max():.1e})")
        print(table(res))


def r_part() -> list[Path]:
    """An R randomForest through rpy2 (skipped with the reason when R is missing)."""
    heading("R: randomForest fitted in R on airquality (111 complete rows), through rpy2")
    import rpy2.robjects as ro
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    ro.r("suppressMessages(library(randomForest)); set.seed(1); aq <- na.omit(airquality); "
         "aq$Month <- factor(aq$Month, labels = month.abb[5:9]); "
         "rf <- randomForest(Ozone ~ ., data = aq, ntree = 300)")
    with localconverter(ro.default_converter + pandas2ri.converter) as cv:
        aq = cv.rpy2py(ro.r("aq"))
    X = aq.drop(columns="Ozone")
    rf = ro.r("rf")
    res, t = timed(lambda: pdpx.partial_dependence(rf, X, ["Temp"], kind="both", grid_resolution=30))
    brute, tb = timed(lambda: pdpx.partial_dependence(rf, X, ["Temp"], kind="both", method="brute",
                                                      grid_resolution=30))
    print(f"ozone vs temperature: method={res.method!r} {t * 1000:.0f} ms (brute through R's predict "
          f"{tb * 1000:.0f} ms, max |difference| {np.abs(res.individual - brute.individual).max():.1e})")
    print(table(res))
    month = pdpx.partial_dependence(rf, X, ["Month"])
    print("\nozone by month (an R factor):")
    print(table(month))
    OUT.mkdir(parents=True, exist_ok=True)
    return [res.save(OUT / "r-randomforest-temp.png", dpi=110), month.save(OUT / "r-randomforest-month.png", dpi=110)]


def figures_part(models) -> list[Path]:
    """The demo's figures and reports."""
    heading(f"Figures and report -> {OUT}/")
    from pdpx.core.errors import ExtrapolationWarning
    from pdpx.demo.gallery import write_demo_figures

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ExtrapolationWarning)
        paths = write_demo_figures(OUT)
    flagged = sorted({str(w.message).split(" that do not occur")[0].split(" are combinations")[0]
                      for w in caught if issubclass(w.category, ExtrapolationWarning)})
    if flagged:  # pdpx warns about these; the demo lists them once, briefly
        print("pdpx flagged curves that rest on feature combinations absent from the data "
              "(shaded in the figures; docs/extrapolation.md):")
        for text in flagged:
            print(f"  - {text}")
    for w in caught:
        if not issubclass(w.category, ExtrapolationWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return paths


def main() -> int:
    """Run every part of the demo; returns the exit code."""
    warnings.simplefilter("default")
    print(f"pdpx {pdpx.__version__}: partial dependence for any fitted model")
    models = sklearn_part()
    boosters_part()
    paths = r_part()
    paths += figures_part(models)
    heading("Written")
    for p in paths:
        print(f"  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
