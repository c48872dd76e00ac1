"""The command line's model files: the loader by extension, the pickle opt-in, skops, and no code run unasked.

Every hostile file here would create a marker file if it were loaded; the tests check that it
was refused and that the marker does not exist (and, once, that loading it does create it, so
that the check can fail).
"""

from __future__ import annotations

import io
import operator
import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("sklearn", reason="scikit-learn is not installed")
from sklearn.ensemble import GradientBoostingRegressor  # noqa: E402
from sklearn.inspection import partial_dependence as sk_pd  # noqa: E402

from pdpx.cli import main  # noqa: E402
from pdpx.cli.model_files import ALLOW_PICKLE_ENV  # noqa: E402

N = 120


class Hostile:
    """Unpickling this object creates ``marker`` (what a malicious pickle would do, harmlessly)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def hostile_pickle(marker: Path, protocol: int = pickle.HIGHEST_PROTOCOL) -> bytes:
    return pickle.dumps(Hostile(marker), protocol=protocol)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_files")
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.uniform(size=N)})
    y = X["a"] * X["b"] + rng.normal(scale=0.1, size=N)
    model = GradientBoostingRegressor(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
    with open(d / "model.pkl", "wb") as fh:
        pickle.dump(model, fh)
    X.to_csv(d / "data.csv", index=False)
    return {"dir": d, "X": X, "model": model}


def run(*args, env=None):
    clean = {ALLOW_PICKLE_ENV: None}  # never inherit the opt-in from the environment the tests run in
    clean.update(env or {})
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, env=clean)


def error_line(result) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [x for x in result.stderr.strip().splitlines() if x.startswith("pdpx: error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def reference(files, grid_resolution=6):
    ref = sk_pd(files["model"], files["X"], ["a"], method="brute", grid_resolution=grid_resolution)
    return ref["average"][0]


def test_the_hostile_pickle_does_run_code_when_unpickled(tmp_path):
    """The marker check below can fail: unpickling the hostile bytes creates the marker."""
    marker = tmp_path / "ran"
    pickle.loads(hostile_pickle(marker)).close()  # noqa: S301 - the test's own object
    assert marker.exists()


@pytest.mark.parametrize("suffix", [".json", ".ubj", ".txt", ".cbm", ".skops", ".rds", ".rda", ".RData", ".pdpx.json",
                                    ".csv"])
@pytest.mark.parametrize("protocol", [0, pickle.HIGHEST_PROTOCOL])
@pytest.mark.parametrize("opt_in", [False, True])
def test_a_pickle_under_another_extension_is_refused_and_not_run(files, tmp_path, suffix, protocol, opt_in):
    marker = tmp_path / "ran"
    model = tmp_path / f"model{suffix}"
    model.write_bytes(hostile_pickle(marker, protocol))
    result = run("pd", *(["--allow-pickle"] if opt_in else []), model, files["dir"] / "data.csv", "--feature", "a")
    line = error_line(result)
    assert "looks like a Python pickle" in line and "will not load it" in line, line
    assert "runs code" in line, line
    assert not marker.exists()


@pytest.mark.parametrize("suffix", [".pkl", ".pickle", ".joblib"])
def test_a_pickle_without_the_opt_in_is_refused_and_not_run(files, tmp_path, suffix):
    marker = tmp_path / "ran"
    model = tmp_path / f"model{suffix}"
    model.write_bytes(hostile_pickle(marker))
    for env in ({}, {ALLOW_PICKLE_ENV: "0"}, {ALLOW_PICKLE_ENV: ""}):
        line = error_line(run("pd", model, files["dir"] / "data.csv", "--feature", "a", env=env))
        for words in ("runs code stored in the file", "--allow-pickle", f"{ALLOW_PICKLE_ENV}=1", ".json", ".skops"):
            assert words in line, (words, line)
        assert not marker.exists()


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_opt_in_loads_a_pickle_and_warns_once(files, how):
    d = files["dir"]
    args = ["--allow-pickle"] if how == "flag" else []
    env = {ALLOW_PICKLE_ENV: "1"} if how == "env" else {}
    result = run("pd", *args, d / "model.pkl", d / "data.csv", "--feature", "a", "--grid-resolution", "6", env=env)
    assert result.exit_code == 0, result.stderr
    warnings = [x for x in result.stderr.splitlines() if x.startswith("pdpx: warning:")]
    assert len(warnings) == 1 and "runs code stored in the file" in warnings[0], result.stderr
    np.testing.assert_allclose(pd.read_csv(io.StringIO(result.stdout))["yhat"], reference(files), rtol=1e-9)


def test_the_help_documents_the_opt_in():
    for args in ([], ["pd"], ["plot"], ["report"]):
        text = " ".join(run(*args, "--help").output.split())
        assert "--allow-pickle" in text and ALLOW_PICKLE_ENV in text and ".skops" in text, args


def test_unknown_extensions_say_what_pdpx_reads(files, tmp_path):
    model = tmp_path / "model.bin"
    model.write_bytes(b"\x00\x01binary")
    line = error_line(run("pd", model, files["dir"] / "data.csv", "--feature", "a"))
    assert "cannot identify the model file" in line and ".json" in line and "--allow-pickle" in line


# ------------------------------------------------------------------ skops
def test_skops_file_loads_without_the_opt_in(files, tmp_path):
    sio = pytest.importorskip("skops.io", reason="skops is not installed (pip install 'pdpx[cli]')")
    path = tmp_path / "model.skops"
    sio.dump(files["model"], path)
    result = run("pd", path, files["dir"] / "data.csv", "--feature", "a", "--grid-resolution", "6")
    assert result.exit_code == 0, result.stderr
    assert "warning" not in result.stderr
    np.testing.assert_allclose(pd.read_csv(io.StringIO(result.stdout))["yhat"], reference(files), rtol=1e-9)


def test_skops_untrusted_types_need_the_opt_in(files, tmp_path):
    sio = pytest.importorskip("skops.io", reason="skops is not installed (pip install 'pdpx[cli]')")
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X = files["X"]
    y = X["a"] - 2 * X["b"]
    model = make_pipeline(FunctionTransformer(operator.neg), LinearRegression()).fit(X, y)
    path = tmp_path / "model.skops"
    sio.dump(model, path)
    assert sio.get_untrusted_types(file=path) == ["_operator.neg"]
    line = error_line(run("pd", path, files["dir"] / "data.csv", "--feature", "a"))
    assert "_operator.neg" in line and "--allow-pickle" in line, line
    result = run("pd", path, files["dir"] / "data.csv", "--feature", "a", "--grid-resolution", "5",
                 env={ALLOW_PICKLE_ENV: "1"})
    assert result.exit_code == 0, result.stderr
    assert sum("pdpx: warning:" in x and "_operator.neg" in x for x in result.stderr.splitlines()) == 1
    frame = pd.read_csv(io.StringIO(result.stdout))
    expected = [model.predict(X.assign(a=v)).mean() for v in frame["x_1"]]
    np.testing.assert_allclose(frame["yhat"], expected, rtol=1e-9)


# ------------------------------------------------------------------ CatBoost
def test_catboost_cbm_file(files, tmp_path):
    catboost = pytest.importorskip("catboost", reason="catboost is not installed")
    pytest.importorskip("pdpx_catboost", reason="the pdpx-catboost plugin is not installed "
                                                "(pip install -e contrib/pdpx-catboost)")
    X = files["X"]
    y = X["a"] * X["b"]
    model = catboost.CatBoostRegressor(iterations=15, depth=3, verbose=False, random_seed=0,
                                       thread_count=1).fit(X, y)
    path = tmp_path / "model.cbm"
    model.save_model(str(path))
    result = run("pd", path, files["dir"] / "data.csv", "--feature", "a", "--grid-resolution", "5")
    assert result.exit_code == 0, result.stderr
    frame = pd.read_csv(io.StringIO(result.stdout))
    expected = [model.predict(X.assign(a=v)).mean() for v in frame["x_1"]]
    np.testing.assert_allclose(frame["yhat"], expected, rtol=1e-9)


def test_env_opt_in_is_read_from_the_process_environment(files, monkeypatch):
    """The variable a script sets (os.environ), not only CliRunner's env."""
    d = files["dir"]
    monkeypatch.setitem(os.environ, ALLOW_PICKLE_ENV, "1")
    result = CliRunner().invoke(main, ["pd", str(d / "model.pkl"), str(d / "data.csv"), "--feature", "a"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
