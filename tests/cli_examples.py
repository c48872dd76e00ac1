"""The files the command line's examples name (its --help and docs/cli.md), and a runner for one example line.

``make_example_files(folder)`` writes them as ``pdpx demo files`` does (:mod:`pdpx.demo.files`), from one seeded
data set:

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

from click.testing import CliRunner

from pdpx.demo.files import example_frame, sales_frame, write_files


def make_example_files(folder: Path) -> dict:
    """Write every file the examples name into ``folder`` (what ``pdpx demo files`` writes:
    :func:`pdpx.demo.files.write_files`); returns the frames and the models read back from the files."""
    import xgboost as xgb

    folder = Path(folder)
    written, skipped = write_files(folder)
    needed = {"data.csv", "model.json", "churn.json", "model.pkl", "sales.pkl"}
    assert needed <= set(written), skipped
    reg, clf = xgb.XGBRegressor(), xgb.XGBClassifier()
    reg.load_model(folder / "model.json")
    clf.load_model(folder / "churn.json")
    with open(folder / "model.pkl", "rb") as fh:
        gbr = pickle.load(fh)
    sys.path.insert(0, str(folder))
    try:
        with open(folder / "sales.pkl", "rb") as fh:
            pipe = pickle.load(fh)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("helpers", None)  # the command line must find it on its own
    return {"frame": example_frame(), "reg": reg, "clf": clf, "gbr": gbr, "sales": sales_frame(), "pipe": pipe}


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
