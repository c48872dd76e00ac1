"""The command line reads a CSV's categorical columns with the categories the model stores.

Each PD is checked against the definition: set the column (a pandas category with the
categories of the fit, the dtype the model was fit on) to each grid value, call the model's
own predict, average.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from pdpx.cli import main
from pdpx.cli.model_categories import ModelCategories, apply_categories
from pdpx.cli.model_files import ALLOW_PICKLE_ENV

N = 300


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, env={ALLOW_PICKLE_ENV: None})


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(3)
    # the category order of the fit ('z', 'x', 'y') is not the sorted order a CSV would suggest
    X = pd.DataFrame({
        "a": rng.normal(size=N),
        "c": pd.Categorical(rng.choice(["x", "y", "z"], N), categories=["z", "x", "y"]),
        "b": rng.normal(size=N),
        "d": pd.Categorical(rng.choice(["p", "q"], N), categories=["q", "p"]),
    })
    y = X["a"] + 2.0 * (X["c"] == "y") - 1.5 * (X["c"] == "z") + (X["d"] == "q") + 0.1 * rng.normal(size=N)
    return X, y.to_numpy()


def definition(predict, X, column, values):
    out = []
    for v in values:
        Xv = X.copy()
        Xv[column] = pd.Categorical([v] * len(X), categories=X[column].cat.categories)
        out.append(float(np.mean(predict(Xv))))
    return np.array(out)


def check_pd(model_path, X, predict, tmp_path, csv=None):
    if csv is None:
        csv = tmp_path / "data.csv"
        X.to_csv(csv, index=False)
    for feature in ("c", "d"):
        result = run("pd", model_path, csv, "--feature", feature)
        assert result.exit_code == 0, result.stderr
        table = pd.read_csv(io.StringIO(result.stdout), dtype={"label_1": str})
        assert list(table["label_1"]) == list(X[feature].cat.categories)  # the model's categories, its order
        np.testing.assert_allclose(table["yhat"], definition(predict, X, feature, table["label_1"]), rtol=1e-6,
                                   atol=1e-9)
    result = run("pd", model_path, csv, "--feature", "a", "--grid-resolution", "5")
    assert result.exit_code == 0, result.stderr
    table = pd.read_csv(io.StringIO(result.stdout))
    expected = [float(np.mean(predict(X.assign(a=v)))) for v in table["x_1"]]
    np.testing.assert_allclose(table["yhat"], expected, rtol=1e-6, atol=1e-9)


def test_lightgbm_categorical_csv(frame, tmp_path):
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    X, y = frame
    booster = lgb.train({"num_leaves": 7, "verbose": -1, "min_data_per_group": 5, "cat_smooth": 1,
                         "num_threads": 1}, lgb.Dataset(X, label=y), num_boost_round=15)
    path = tmp_path / "model.txt"
    booster.save_model(str(path))
    check_pd(path, X, booster.predict, tmp_path)


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_xgboost_categorical_csv(frame, tmp_path, suffix):
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    X, y = frame
    booster = xgb.train({"max_depth": 3, "nthread": 1}, xgb.DMatrix(X, label=y, enable_categorical=True),
                        num_boost_round=15)
    try:
        booster.get_categories(export_to_arrow=True)
    except (AttributeError, TypeError):
        pytest.skip(f"XGBoost {xgb.__version__} stores no categories in its model files (3.1 and later do)")
    path = tmp_path / f"model{suffix}"
    booster.save_model(str(path))
    check_pd(path, X, lambda Z: booster.predict(xgb.DMatrix(Z, enable_categorical=True)), tmp_path)


def test_values_the_model_never_saw_are_missing_with_a_note(frame, tmp_path):
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    X, y = frame
    booster = lgb.train({"num_leaves": 7, "verbose": -1, "num_threads": 1}, lgb.Dataset(X, label=y), 5)
    path = tmp_path / "model.txt"
    booster.save_model(str(path))
    csv = tmp_path / "data.csv"
    X.astype({"c": str}).assign(c=lambda f: f["c"].where(f.index % 10 != 0, "w")).to_csv(csv, index=False)
    result = run("pd", path, csv, "--feature", "a", "--grid-resolution", "4")
    assert result.exit_code == 0, result.stderr
    notes = [x for x in result.stderr.splitlines() if x.startswith("pdpx: note:")]
    assert len(notes) == 1 and "'w'" in notes[0] and "missing" in notes[0], result.stderr
    Xw = X.copy()
    Xw.loc[X.index % 10 == 0, "c"] = np.nan
    table = pd.read_csv(io.StringIO(result.stdout))
    expected = [float(np.mean(booster.predict(Xw.assign(a=v)))) for v in table["x_1"]]
    np.testing.assert_allclose(table["yhat"], expected, rtol=1e-6, atol=1e-9)


def test_no_stored_categories_says_to_use_parquet(frame, tmp_path, monkeypatch):
    """A model that stores no categories (XGBoost before 3.1): an error a shell user can act on."""
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    import pdpx.cli.model_categories as mc

    X, y = frame
    booster = xgb.train({"max_depth": 3, "nthread": 1}, xgb.DMatrix(X, label=y, enable_categorical=True), 5)
    path = tmp_path / "model.json"
    booster.save_model(str(path))
    X.to_csv(tmp_path / "data.csv", index=False)
    X.to_parquet(tmp_path / "data.parquet")
    monkeypatch.setattr(mc, "model_categories", lambda model: ModelCategories(unknown=["c", "d"], library="XGBoost"))
    result = run("pd", path, tmp_path / "data.csv", "--feature", "a")
    assert result.exit_code == 1
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "does not store the categories of column 'c'" in err and "Parquet" in err and "to_parquet" in err, err
    # the Parquet file keeps the dtype: it works, and equals the definition
    check_pd(path, X, lambda Z: booster.predict(xgb.DMatrix(Z, enable_categorical=True)), tmp_path,
             csv=tmp_path / "data.parquet")


def test_apply_categories_directly():
    cats = ModelCategories(known={"c": ["b", "a"]}, library="LightGBM")
    frame = pd.DataFrame({"c": ["a", "b", None, "zz"], "n": [1, 2, 3, 4]})
    notes = []
    out = apply_categories(frame, cats, "'data.csv'", note=notes.append)
    assert list(out["c"].cat.categories) == ["b", "a"]
    assert out["c"].cat.codes.tolist() == [1, 0, -1, -1]
    assert len(notes) == 1 and "'zz'" in notes[0]
    with pytest.raises(ValueError, match="Parquet"):
        apply_categories(frame, ModelCategories(unknown=["c"], library="XGBoost"), "'data.csv'")
    # numbers are codes the model can read as they are: no error
    apply_categories(frame, ModelCategories(unknown=["n"], library="XGBoost"), "'data.csv'")
    # LightGBM whose category columns cannot be located: an error unless DATA brings category dtypes
    lost = ModelCategories(unknown=["2 category column(s)"], library="LightGBM")
    with pytest.raises(ValueError, match="Parquet"):
        apply_categories(frame, lost, "'data.csv'")
    apply_categories(frame.astype({"c": "category"}), lost, "'data.parquet'")
