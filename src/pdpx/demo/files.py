"""``pdpx demo files [FOLDER]``: every file the command line's examples use (its ``--help`` and docs/cli.md).

From one seeded data set (:func:`example_frame`, the rows docs/cli.md's first Python block makes too):

* ``data.csv`` (age, income, y), ``weighted.csv`` (the same with a weight column w), ``data.parquet``;
* ``model.json`` (an XGBoost regressor of y on age and income), ``churn.json`` (an XGBoost classifier of
  y > median), ``model.skops``, ``model.pkl`` and ``model.joblib`` (a scikit-learn regressor);
* ``sales.csv`` (day as ISO dates, price, units), ``helpers.py`` (the user's own module) and ``sales.pkl``:
  a pipeline whose first step is a function of ``helpers``, as a user's pickle is; ``elsewhere/``, a
  folder without ``helpers.py``;
* ``forest.pdpx.json`` and ``forest.rds``: an R randomForest of y on age and income, exported with the R
  package's ``export_model()`` and saved with ``saveRDS``, when ``Rscript`` and randomForest are installed.

A file whose library is not installed is left out, and :func:`write_files` says which and why.
"""

from __future__ import annotations

import importlib
import pickle
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

HELPERS = '''"""The user's own code, which the pickled pipeline sales.pkl refers to."""
import pandas as pd


def as_numbers(X):
    """The day as days since 2021-01-01 (the model sees numbers)."""
    X = X.copy()
    X["day"] = (X["day"] - pd.Timestamp("2021-01-01")).dt.days
    return X
'''


def example_frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """age, income, y (as docs/cli.md's first Python block draws them) and a weight column w."""
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


def _missing(*modules: str) -> str | None:
    """The first of ``modules`` that cannot be imported, or None."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def write_files(folder) -> tuple[list[str], dict]:
    """Write the examples' files into ``folder`` (made if needed): (the files written, {file: why not written})."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written, skipped = [], {}
    full = example_frame()
    X, y = full[["age", "income"]], full["y"]
    full[["age", "income", "y"]].to_csv(folder / "data.csv", index=False)
    full.to_csv(folder / "weighted.csv", index=False)
    written += ["data.csv", "weighted.csv"]
    (folder / "elsewhere").mkdir(exist_ok=True)
    parts = [
        (["data.parquet"], ("pyarrow",), lambda: full[["age", "income", "y"]].to_parquet(folder / "data.parquet")),
        (["model.json", "churn.json"], ("xgboost",), lambda: _xgboost(folder, X, y)),
        (["model.skops", "model.pkl", "model.joblib"], ("sklearn", "skops", "joblib"), lambda: _sklearn(folder, X, y)),
        (["helpers.py", "sales.csv", "sales.pkl"], ("sklearn",), lambda: _sales(folder)),
        (["forest.pdpx.json", "forest.rds"], (), lambda: _r_forest(folder)),
    ]
    for names, modules, write in parts:
        lacking = _missing(*modules)
        why = f"needs {lacking} (pip install \"pdpx[all]\")" if lacking else write()
        if why:
            skipped.update({name: why for name in names})
        else:
            written += names
    return written, skipped


def _xgboost(folder: Path, X, y) -> None:
    import xgboost as xgb

    xgb.XGBRegressor(n_estimators=20, max_depth=3).fit(X, y).save_model(folder / "model.json")
    xgb.XGBClassifier(n_estimators=20, max_depth=3).fit(X, (y > y.median()).astype(int)).save_model(
        folder / "churn.json")


def _sklearn(folder: Path, X, y) -> None:
    import joblib
    import skops.io as sio
    from sklearn.ensemble import GradientBoostingRegressor

    gbr = GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    sio.dump(gbr, folder / "model.skops")
    with open(folder / "model.pkl", "wb") as fh:
        pickle.dump(gbr, fh)
    joblib.dump(gbr, folder / "model.joblib")


def _sales(folder: Path) -> None:
    """sales.csv, helpers.py and sales.pkl: a pipeline of the user's function, pickled as a user pickles it."""
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    sales = sales_frame()
    sales.assign(day=sales["day"].dt.strftime("%Y-%m-%d")).to_csv(folder / "sales.csv", index=False)
    (folder / "helpers.py").write_text(HELPERS)
    before = sys.modules.pop("helpers", None)
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
        sys.modules.pop("helpers", None)
        if before is not None:
            sys.modules["helpers"] = before


def _r_forest(folder: Path) -> str | None:
    """forest.pdpx.json and forest.rds, written by R (None), or why not."""
    if shutil.which("Rscript") is None:
        return "needs R (Rscript) with the randomForest package"
    exporter = Path(str(resources.files("pdpx.cli").joinpath("export_model.R")))
    code = ('if (!requireNamespace("randomForest", quietly = TRUE)) quit(status = 3); '
            f'source({str(exporter)!r}); set.seed(1); d <- read.csv({str(folder / "data.csv")!r}); '
            "m <- randomForest::randomForest(y ~ age + income, data = d, ntree = 50); "
            f'export_model(m, {str(folder / "forest.pdpx.json")!r}); saveRDS(m, {str(folder / "forest.rds")!r})')
    try:
        done = subprocess.run(["Rscript", "--vanilla", "-e", code], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"R failed ({type(exc).__name__})"
    if done.returncode == 3:
        return "needs the R package randomForest (install.packages(\"randomForest\"))"
    if done.returncode != 0:
        return f"R failed: {(done.stderr.strip().splitlines() or [''])[-1]}"
    return None
