"""The `pdpx` command line: each command against the library call it stands for, and its failures."""

from __future__ import annotations

import io
import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("sklearn", reason="scikit-learn is not installed")
from sklearn.ensemble import GradientBoostingRegressor  # noqa: E402
from sklearn.inspection import partial_dependence as sk_pd  # noqa: E402

from pdpx.cli import main  # noqa: E402

N = 150
PK = "--allow-pickle"  # the tests' own pickles: the opt-in (tests/cli/test_cli_model_files.py tests it)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.uniform(size=N), "c": rng.normal(size=N)})
    y = X["a"] * X["b"] + X["c"] + rng.normal(scale=0.1, size=N)
    model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    with open(d / "model.pkl", "wb") as fh:
        pickle.dump(model, fh)
    import joblib

    joblib.dump(model, d / "model.joblib", compress=3)
    X.to_csv(d / "data.csv", index=False)
    X.assign(y=y).to_parquet(d / "data.parquet")
    (d / "notes.txt").write_text("just some text\n")
    (d / "data.xlsx").write_bytes(b"PK\x03\x04 not really")
    return {"dir": d, "X": X, "y": y, "model": model}


def run(*args, **kw):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, **kw)
    return result


def assert_one_line_error(result, *words):
    assert result.exit_code != 0
    # the --allow-pickle warning may come first: the error itself is one line
    err = "\n".join(x for x in result.stderr.strip().splitlines() if not x.startswith("pdpx: warning: loading"))
    assert "Traceback" not in result.output + result.stderr
    assert len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, err


def test_help_warns_about_pickles():
    for args in ([], ["report"], ["plot"], ["pd"]):
        out = run(*args, "--help").output
        assert "runs code stored in the file" in " ".join(out.split()), args


def test_pd_to_stdout_equals_sklearns_partial_dependence(files):
    d = files["dir"]
    result = run("pd", PK, d / "model.pkl", d / "data.csv", "--feature", "a", "--grid-resolution", "12")
    assert result.exit_code == 0, result.stderr
    frame = pd.read_csv(io.StringIO(result.stdout))
    ref = sk_pd(files["model"], files["X"], ["a"], method="brute", grid_resolution=12)
    np.testing.assert_allclose(frame["x_1"], ref["grid_values"][0], rtol=1e-6)
    np.testing.assert_allclose(frame["yhat"], ref["average"][0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("suffix", [".parquet", ".json", ".csv"])
def test_pd_to_files_in_each_format(files, tmp_path, suffix):
    d = files["dir"]
    out = tmp_path / f"pd{suffix}"
    result = run("pd", PK, d / "model.joblib", d / "data.parquet", "--drop", "y", "--feature", "a", "--feature", "b",
                 "--grid-resolution", "5", "-o", out)
    assert result.exit_code == 0, result.stderr
    frame = {".parquet": pd.read_parquet, ".json": pd.read_json, ".csv": pd.read_csv}[suffix](out)
    ref = sk_pd(files["model"], files["X"], ["a", "b"], method="brute", grid_resolution=5)
    assert len(frame) == 25
    np.testing.assert_allclose(frame["yhat"], ref["average"][0].ravel(), rtol=1e-9)


def test_pd_json_and_parquet_to_stdout(files):
    d = files["dir"]
    result = run("pd", PK, d / "model.pkl", d / "data.csv", "--feature", "b", "--format", "json", "--grid-resolution", "4")
    rows = json.loads(result.stdout)
    assert [r["feature_1"] for r in rows] == ["b"] * 4
    result = run("pd", PK, d / "model.pkl", d / "data.csv", "--feature", "b", "--format", "parquet", "--grid-resolution", "4")
    assert pd.read_parquet(io.BytesIO(result.stdout_bytes))["yhat"].size == 4


@pytest.mark.parametrize("features", [["a"], ["a", "b"]])
def test_plot_writes_a_png(files, tmp_path, features):
    pytest.importorskip("plotnine", reason="plotnine is not installed")
    d, out = files["dir"], tmp_path / "fig.png"
    args = [x for f in features for x in ("--feature", f)]
    result = run("plot", PK, d / "model.pkl", d / "data.csv", *args, "-o", out, "--grid-resolution", "10")
    assert result.exit_code == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_writes_one_html_file(files, tmp_path):
    pytest.importorskip("plotnine", reason="plotnine is not installed")
    d, out = files["dir"], tmp_path / "r" / "report.html"
    result = run("report", PK, d / "model.pkl", d / "data.csv", "-o", out, "--feature", "a", "--feature", "b", "--no-progress")
    assert result.exit_code == 0, result.stderr
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") or html.lower().startswith("<!doctype html>")
    assert list(out.parent.iterdir()) == [out]


def test_unidentifiable_files_are_refused_in_one_line(files, tmp_path):
    d = files["dir"]
    assert_one_line_error(run("pd", d / "notes.txt", d / "data.csv", "--feature", "a"), "cannot identify the model file")
    assert_one_line_error(run("pd", PK, d / "model.pkl", d / "data.xlsx", "--feature", "a"), "cannot identify the data file")
    empty = tmp_path / "empty.pkl"
    empty.write_bytes(b"")
    assert_one_line_error(run("pd", PK, empty, d / "data.csv", "--feature", "a"), "empty")
    broken = tmp_path / "broken.pkl"
    broken.write_bytes(pickle.dumps(files["model"])[:200])
    assert_one_line_error(run("pd", PK, broken, d / "data.csv", "--feature", "a"), "could not load")


def test_mistakes_leave_no_output_behind(files, tmp_path):
    d = files["dir"]
    for cmd, out, extra in (("pd", "pd.csv", []), ("plot", "fig.png", []), ("report", "report.html", ["--no-progress"])):
        target = tmp_path / out
        result = run(cmd, PK, d / "model.pkl", d / "data.csv", "--feature", "nope", "-o", target, *extra)
        assert_one_line_error(result, "nope")
        assert list(tmp_path.iterdir()) == [], cmd
    assert_one_line_error(run("pd", PK, d / "model.pkl", d / "data.csv", "--feature", "a", "--drop", "zz"), "--drop")
    assert_one_line_error(run("plot", PK, d / "model.pkl", d / "data.csv", "--feature", "a", "-o", tmp_path / "f.gif"), "f.gif")
    assert list(tmp_path.iterdir()) == []


def test_wrong_command_lines_exit_2(files):
    d = files["dir"]
    assert run("pd", PK, d / "model.pkl", d / "data.csv").exit_code == 2           # --feature missing
    assert run("pd", d / "missing.pkl", d / "data.csv", "--feature", "a").exit_code == 2


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_booster_model_files(files, tmp_path, library):
    lib = pytest.importorskip(library, reason=f"{library} is not installed")
    X, y = files["X"], files["y"]
    import pdpx

    if library == "xgboost":
        booster = lib.train({"max_depth": 3}, lib.DMatrix(X, label=y), num_boost_round=10)
        paths = [tmp_path / "m.json", tmp_path / "m.ubj"]
        for p in paths:
            booster.save_model(str(p))
    else:
        booster = lib.train({"num_leaves": 7, "verbose": -1}, lib.Dataset(X, label=y), num_boost_round=10)
        paths = [tmp_path / "m.txt"]
        booster.save_model(str(paths[0]))
    ref = pdpx.partial_dependence(booster, X, ["a"], method="brute", grid_resolution=6).average[0]
    for p in paths:
        result = run("pd", p, files["dir"] / "data.csv", "--feature", "a", "--grid-resolution", "6")
        assert result.exit_code == 0, result.stderr
        np.testing.assert_allclose(pd.read_csv(io.StringIO(result.stdout))["yhat"], ref, rtol=1e-6)


def test_r_rds_model(files, tmp_path):
    """An .rds file needs the opt-in (R files are code); with it, R reads it in a process of its own and pdpx
    computes from the trees it writes: the PD is R's predict averaged (docs/cli.md)."""
    if shutil.which("Rscript") is None:
        pytest.skip("R is not installed")
    d = files["dir"]
    rds = tmp_path / "rf.rds"
    code = (f"suppressMessages(library(randomForest)); set.seed(1); d <- read.csv('{d / 'data.csv'}'); "
            f"d$y <- d$a * d$b + d$c; m <- randomForest(y ~ ., data = d, ntree = 20); saveRDS(m, '{rds}'); "
            "cat(sprintf('%.17g', sapply(c(0.1, 0.5, 0.9), function(v) { d$a <- v; mean(predict(m, d)) })))")
    expected = subprocess.run(["Rscript", "-e", code], check=True, capture_output=True, text=True).stdout.split()
    assert run("pd", rds, d / "data.csv", "--feature", "a").exit_code == 1
    for method in ("brute", "exact"):
        result = run("pd", "--allow-pickle", rds, d / "data.csv", "--feature", "a", "--values", "a=0.1,0.5,0.9",
                     "--method", method)
        assert result.exit_code == 0, result.stderr
        np.testing.assert_allclose(pd.read_csv(io.StringIO(result.stdout))["yhat"], np.array(expected, dtype=float),
                                   rtol=1e-12)


def test_console_script_is_installed(files):
    exe = Path(sys.executable).parent / "pdpx"
    assert exe.exists(), "pip install -e . installs the `pdpx` command"
    done = subprocess.run([str(exe), "pd", str(files["dir"] / "notes.txt"), str(files["dir"] / "data.csv"),
                           "--feature", "a"], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().startswith("pdpx: error: cannot identify the model file")
    assert "Traceback" not in done.stderr
