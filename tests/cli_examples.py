"""The files the command line's examples name (its --help and docs/cli.md), and a runner for one example line.

``make_example_files(folder)`` writes, from one seeded data set:

* ``data.csv`` (age, income, y), ``weighted.csv`` (the same with a weight column w), ``data.parquet``;
* ``model.json`` (an XGBoost regressor of y on age and income), ``churn.json`` (an XGBoost classifier
  of y > median), ``model.skops``, ``model.pkl`` and ``model.joblib`` (a scikit-learn regressor);
* ``sales.csv`` (day as ISO dates, price, units) and ``sales.pkl``: a pipeline whose first step is
  a function of the user's own module ``helpers.py`` (written in the folder), as a user's pickle is;
* ``forest.pdpx.json`` and ``forest.rds`` (an R randomForest of y on age and income, exported with the R
  package's ``export_model()`` and saved with ``saveRDS``), when R is installed.

``run_example(line, folder)`` runs one shell line ``[VAR=value ...] pdpx ARGS`` in ``folder`` through
click's test runner and returns the result.
"""

from __future__ import annotations

import os
import pickle
import shlex
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from click.testing import CliRunner

HELPERS = '''"""The user's own code, which the pickled pipeline sales.pkl refers to."""
import pandas as pd


def as_numbers(X):
    """The day as days since 2021-01-01 (the model sees numbers)."""
    X = X.copy()
    X["day"] = (X["day"] - pd.Timestamp("2021-01-01")).dt.days
    return X
'''


def example_frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """age, income, y (and a weight column w)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, size=n)
    income = np.round(rng.lognormal(10, 0.5, size=n), 2)
    y = 0.05 * age + np.log(income) + rng.normal(scale=0.3, size=n)
    return pd.DataFrame({"age": age, "income": income, "y": y, "w": np.round(rng.uniform(0.5, 2.0, size=n), 3)})


def sales_frame(n: int = 200, seed: int = 1) -> pd.DataFrame:
    """day (dates), price, units."""
    rng = np.random.default_rng(seed)
    day = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 365, size=n), unit="D")
    price = np.round(rng.uniform(1, 10, size=n), 2)
    units = 50 + 20 * np.sin(2 * np.pi * (day.day_of_year.to_numpy() / 365)) - 2 * price + rng.normal(size=n)
    return pd.DataFrame({"day": day, "price": price, "units": units})


def make_example_files(folder: Path) -> dict:
    """Write every file the examples name into ``folder``; returns the frames and models."""
    import joblib
    import skops.io as sio
    import xgboost as xgb
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    folder = Path(folder)
    full = example_frame()
    X, y = full[["age", "income"]], full["y"]
    full[["age", "income", "y"]].to_csv(folder / "data.csv", index=False)
    full.to_csv(folder / "weighted.csv", index=False)
    (folder / "elsewhere").mkdir(exist_ok=True)  # a folder without helpers.py
    full[["age", "income", "y"]].to_parquet(folder / "data.parquet")
    reg = xgb.XGBRegressor(n_estimators=20, max_depth=3).fit(X, y)
    reg.save_model(folder / "model.json")
    clf = xgb.XGBClassifier(n_estimators=20, max_depth=3).fit(X, (y > y.median()).astype(int))
    clf.save_model(folder / "churn.json")
    gbr = GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    sio.dump(gbr, folder / "model.skops")
    with open(folder / "model.pkl", "wb") as fh:
        pickle.dump(gbr, fh)
    joblib.dump(gbr, folder / "model.joblib")

    sales = sales_frame()
    sales.assign(day=sales["day"].dt.strftime("%Y-%m-%d")).to_csv(folder / "sales.csv", index=False)
    (folder / "helpers.py").write_text(HELPERS)
    sys.path.insert(0, str(folder))
    try:
        import helpers  # the user's module, as the user imported it when fitting

        pipe = make_pipeline(FunctionTransformer(helpers.as_numbers),
                             GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0))
        pipe.fit(sales[["day", "price"]], sales["units"])
        with open(folder / "sales.pkl", "wb") as fh:
            pickle.dump(pipe, fh)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("helpers", None)  # the command line must find it on its own
    _r_forest(folder)
    return {"frame": full, "reg": reg, "clf": clf, "gbr": gbr, "sales": sales, "pipe": pipe}


def _r_forest(folder: Path) -> None:
    """forest.pdpx.json and forest.rds: an R randomForest, exported and saved (skipped without R)."""
    import shutil
    import subprocess

    if shutil.which("Rscript") is None:
        return
    exporter = Path(__file__).resolve().parents[1] / "r" / "pdpx" / "R" / "export.R"
    code = (f'suppressMessages(library(randomForest)); source("{exporter}"); set.seed(1); '
            f'd <- read.csv("{folder / "data.csv"}"); m <- randomForest(y ~ age + income, data = d, ntree = 50); '
            f'export_model(m, "{folder / "forest.pdpx.json"}"); saveRDS(m, "{folder / "forest.rds"}")')
    subprocess.run(["Rscript", "-e", code], check=True, capture_output=True, timeout=600)


def shell_lines(text: str) -> list[str]:
    """The commands of a shell snippet: continuation lines joined, comments and blank lines left out."""
    lines, current = [], ""
    for raw in text.splitlines():
        current += raw.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        if shlex.split(current, comments=True):
            lines.append(current)
        current = ""
    return lines


def run_example(line: str, folder: Path):
    """Run ``[cd DIR &&] [VAR=value ...] pdpx ARGS`` in ``folder``; returns click's result (with the parsed args)."""
    from pdpx.cli import main

    words = shlex.split(line, comments=True)
    if words[:1] == ["cd"] and words[2:3] == ["&&"]:
        folder = Path(folder) / words[1]
        words = words[3:]
    env = {"PDPX_ALLOW_PICKLE": None}
    while words and "=" in words[0] and not words[0].startswith("-"):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    assert words and words[0] == "pdpx", f"an example runs pdpx and nothing else: {line!r}"
    before = os.getcwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(main, words[1:], env=env, catch_exceptions=False)
    finally:
        os.chdir(before)
        sys.modules.pop("helpers", None)
    result.args = words[1:]
    return result


def written_file(args: list[str]) -> str | None:
    """The ``-o`` file an example names, if any."""
    for flag in ("-o", "--output"):
        if flag in args:
            return args[args.index(flag) + 1]
    return None
