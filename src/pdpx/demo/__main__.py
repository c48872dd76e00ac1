"""`make demo`: pdpx's main job on bundled data, start to finish.

Fits models of every supported library on data that ships with the packages (no
network), prints partial dependence tables, and writes figures and an HTML report
to ``demo-output/``.
"""

from __future__ import annotations

import contextlib
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


class Warned:
    """The warnings of the demo's calls, said once each in the demo's own words (never as raw Python lines).

    pdpx's :class:`~pdpx.core.errors.ExtrapolationWarning` carries the feature set and
    the share it is about; each is said once, under the result it concerns. Other
    warnings (a library's deprecation, say) are kept for one list at the end.
    """

    def __init__(self):
        self.said: set = set()
        self.others: dict[str, int] = {}

    @contextlib.contextmanager
    def watch(self):
        """Record the warnings of a block; say pdpx's extrapolation warnings after it."""
        from pdpx.core.errors import ExtrapolationWarning

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        for w in caught:
            if issubclass(w.category, ExtrapolationWarning):
                self.extrapolation(w.message)
            else:
                text = f"{w.category.__name__}: {str(w.message).splitlines()[0]}"
                self.others[text] = self.others.get(text, 0) + 1

    def extrapolation(self, warning) -> None:
        key = (warning.features, warning.partner)
        if key in self.said:
            return
        self.said.add(key)
        what = " x ".join(warning.features)
        if warning.partner:
            print(f"  note: {100 * warning.share:.0f}% of the partial dependence of {what} sets it to values that "
                  f"never occur with the rows' {warning.partner} (the two are strongly dependent): there it is "
                  "the model extrapolating. The figures shade it; pdpx.ale stays within the data.")
        else:
            print(f"  note: {100 * warning.share:.0f}% of the {what} grid are combinations absent from the data: "
                  "there it is the model extrapolating. The figures shade them; pdpx.ale stays within the data.")

    def report_others(self) -> None:
        if self.others:
            heading("Warnings from the libraries used")
            for text, count in self.others.items():
                print(f"  {text}" + (f" ({count} times)" if count > 1 else ""))


WARNED = Warned()


def first_call_line(res, t_first: float, t_again: float) -> str:
    """What the first call's time is made of: the computation (the same call again) and what a process does once."""
    once = max(t_first - t_again, 0.0)
    if res.method == "brute" and any("exact not used" in n for n in res.notes):
        return (f"the first call of the process took {t_first * 1000:.0f} ms and ran brute force (the same numbers): "
                "the exact kernels were not compiled yet, so they are compiling in the background while brute, "
                "quicker here, answered")
    return (f"the first call of the process: {t_first * 1000:.0f} ms = {t_again * 1000:.0f} ms of computing + "
            f"{once * 1000:.0f} ms done once per process (importing numba, loading the compiled kernels from its "
            "cache, reading the model's trees)")


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
    first, t_first = timed(lambda: pdpx.partial_dependence(reg, X, ["bmi"], grid_resolution=50))
    res, t = timed(lambda: pdpx.partial_dependence(reg, X, ["bmi"], grid_resolution=50))
    print(f"pdpx.partial_dependence(reg, X, ['bmi']) ran method={res.method!r} in {t * 1000:.0f} ms")
    print(f"({first_call_line(first, t_first, t)})")
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
        with WARNED.watch():
            call = lambda m=model, **kw: pdpx.partial_dependence(m, X, ["worst_concave_points"], grid_resolution=40,
                                                                 **kw)
            _, t_first = timed(call)  # reads the model's trees (kept for later calls)
            res, t = timed(call)
            brute, tb = timed(lambda c=call: c(method="brute"))
            print(f"P(benign) vs worst_concave_points: method={res.method!r} {t * 1000:.0f} ms ({t_first * 1000:.0f} "
                  f"ms the first time: it reads the model's trees); brute through {name}.predict_proba: "
                  f"{tb * 1000:.0f} ms; max |difference| {np.abs(res.average - brute.average).max():.1e}")
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
    _, t_first = timed(lambda: pdpx.partial_dependence(rf, X, ["Temp"], kind="both", grid_resolution=30))
    res, t = timed(lambda: pdpx.partial_dependence(rf, X, ["Temp"], kind="both", grid_resolution=30))
    brute, tb = timed(lambda: pdpx.partial_dependence(rf, X, ["Temp"], kind="both", method="brute",
                                                      grid_resolution=30))
    print(f"ozone vs temperature: method={res.method!r} {t * 1000:.0f} ms ({t_first * 1000:.0f} ms the first time: "
          f"it reads the forest from R); brute through R's predict {tb * 1000:.0f} ms; max |difference| "
          f"{np.abs(res.individual - brute.individual).max():.1e}")
    print(table(res))
    month = pdpx.partial_dependence(rf, X, ["Month"])
    print("\nozone by month (an R factor):")
    print(table(month))
    OUT.mkdir(parents=True, exist_ok=True)
    return [res.save(OUT / "r-randomforest-temp.png", dpi=110), month.save(OUT / "r-randomforest-month.png", dpi=110)]


def figures_part(models) -> list[Path]:
    """The demo's figures and reports."""
    heading(f"Figures and report -> {OUT}/")
    from pdpx.demo.gallery import write_demo_figures

    with WARNED.watch():
        paths = write_demo_figures(OUT)
    return paths


def main() -> int:
    """Run every part of the demo; returns the exit code."""
    print(f"pdpx {pdpx.__version__}: partial dependence for any fitted model")
    with WARNED.watch():
        models = sklearn_part()
    boosters_part()
    with WARNED.watch():
        paths = r_part()
    paths += figures_part(models)
    heading("Written")
    for p in paths:
        print(f"  {p}")
    WARNED.report_others()
    return 0


if __name__ == "__main__":
    sys.exit(main())
