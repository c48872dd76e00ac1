"""The command line as a shell user meets it (issue 36): the user's own modules for pickles, errors in its own
flags, output extensions, and the options --target, --response, --categorical, --dates, --dtypes, --weights,
--ice, each against the definition (set the column keeping its dtype, call the model's own predict, average)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn", reason="scikit-learn is not installed")
pytest.importorskip("xgboost", reason="xgboost is not installed")
pytest.importorskip("skops", reason="skops is not installed")

from cli_examples import make_example_files, run_example  # noqa: E402

from pdpx.cli.data import DataError, DataSpec, read_data  # noqa: E402
from pdpx.cli.model_files import missing_module, working_directory_importable  # noqa: E402

API_WORDS = ("categorical_features", "sample_weight", "custom_values", "ice_sample", "grid_resolution", "grid='",
             "response='", "partial_dependence(", "n_ice", "X has", "X does not")


@pytest.fixture(scope="module")
def ex(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_flags")
    made = make_example_files(d)
    made["dir"] = d
    return made


def run(ex, line: str):
    return run_example(line, ex["dir"])


def table(result) -> pd.DataFrame:
    assert result.exit_code == 0, result.stderr
    return pd.read_csv(io.StringIO(result.stdout))


def error(result, *words) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    err = [x for x in result.stderr.splitlines() if x.startswith("pdpx: error:")]
    assert len(err) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for w in words:
        assert w in err[0], err[0]
    for w in API_WORDS:
        assert w not in err[0], f"the Python API's word {w!r} in a command line error: {err[0]}"
    return err[0]


def pd_by_definition(model, X, col, values, method="predict", column=None, weights=None):
    out = []
    for v in values:
        Xv = X.copy()
        Xv[col] = pd.Series([v] * len(X), index=X.index).astype(X[col].dtype)
        pred = getattr(model, method)(Xv)
        pred = pred if column is None else pred[:, column]
        out.append(np.average(pred, weights=weights))
    return np.array(out)


# ------------------------------------------------------------------ the user's own module in a pickle
def test_a_pickle_using_the_users_module_loads_from_its_folder(ex):
    sales, pipe = ex["sales"], ex["pipe"]
    frame = table(run(ex, "pdpx pd --allow-pickle sales.pkl sales.csv --drop units --feature price "
                          "--grid-resolution 5"))
    X = sales[["day", "price"]]
    np.testing.assert_allclose(frame["yhat"], pd_by_definition(pipe, X, "price", frame["x_1"]), rtol=1e-9)
    assert "helpers" not in sys.modules and str(ex["dir"]) not in sys.path  # nothing left behind in-process


def test_the_console_script_imports_from_the_working_directory_and_says_how_to_fix_it(ex):
    exe = Path(sys.executable).parent / "pdpx"
    assert exe.exists()
    d = ex["dir"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PDPX_ALLOW_PICKLE")}
    args = [str(exe), "pd", "--allow-pickle", "sales.pkl", "sales.csv", "--drop", "units", "--feature", "price",
            "--grid-resolution", "4"]
    done = subprocess.run(args, cwd=d, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert len(pd.read_csv(io.StringIO(done.stdout))) == 4
    elsewhere = [a if not a.startswith("sales.") else f"../{a}" for a in args]
    done = subprocess.run(elsewhere, cwd=d / "elsewhere", env=env, capture_output=True, text=True)
    assert done.returncode == 1
    err = done.stderr.strip().splitlines()[-1]
    assert err.startswith("pdpx: error:") and "helpers.py is in" in err and "PYTHONPATH" in err, err
    assert "pip install" not in err
    done = subprocess.run(elsewhere, cwd=d / "elsewhere", env={**env, "PYTHONPATH": str(d)}, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_without_the_opt_in_no_module_of_the_working_directory_is_imported(ex, tmp_path):
    marker = tmp_path / "imported"
    (tmp_path / "helpers.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    shutil.copy(ex["dir"] / "sales.pkl", tmp_path)
    shutil.copy(ex["dir"] / "sales.csv", tmp_path)
    error(run_example("pdpx pd sales.pkl sales.csv --drop units --feature price", tmp_path), "--allow-pickle")
    assert not marker.exists()
    result = run_example("pdpx pd --allow-pickle sales.pkl sales.csv --drop units --feature price", tmp_path)
    assert marker.exists()  # the check can fail: with the opt-in, the working directory's helpers.py is imported
    error(result, "helpers", "does not define")  # that helpers.py lacks as_numbers: named, not "pip install"


def test_a_missing_module_is_the_users_code_unless_it_is_a_known_package(ex, tmp_path, monkeypatch):
    import sklearn

    from pdpx.cli import model_files

    shutil.copy(ex["dir"] / "data.csv", tmp_path)
    monkeypatch.setitem(model_files.PACKAGES, "pdpx_absent_pkg", "pdpx-absent-dist")
    cases = {  # a protocol-0 pickle naming module.attribute, and what the error says
        "own.pkl": (b"cmy_features.cleaning\nclean\n.", ("module 'my_features'", "your own code", "PYTHONPATH")),
        "known.pkl": (b"cpdpx_absent_pkg.models\nModel\n.", ("pip install pdpx-absent-dist",)),
        "version.pkl": (b"csklearn.no_such_module\nThing\n.",
                        ("sklearn.no_such_module", f"scikit-learn {sklearn.__version__} installed here",
                         "another version of scikit-learn")),
    }
    for name, (content, words) in cases.items():
        (tmp_path / name).write_bytes(content)
        err = error(run_example(f"pdpx pd --allow-pickle {name} data.csv --drop y --feature age", tmp_path), *words)
        assert ("pip install" in err) == (name != "own.pkl"), err  # never for the user's own module
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "my_features").mkdir()
    (tmp_path / "models" / "my_features" / "__init__.py").write_text("")
    shutil.copy(tmp_path / "own.pkl", tmp_path / "models")
    near = missing_module(tmp_path / "models" / "own.pkl", "pickle", "my_features")
    assert f"the folder my_features/ is in {str((tmp_path / 'models').resolve())!r}" in near
    assert "pip install" not in near


def test_the_working_directory_goes_last_on_the_path_and_leaves(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    with working_directory_importable():
        assert sys.path[-1] == str(tmp_path)  # after every installed package: it shadows none
    assert str(tmp_path) not in sys.path


# ------------------------------------------------------------------ columns and --drop
def test_forgetting_drop_names_the_flag(ex, tmp_path):
    import xgboost as xgb

    error(run(ex, "pdpx pd model.json data.csv --feature age"), "--drop y", "['y']")
    error(run(ex, "pdpx plot model.json weighted.csv --drop y --feature age -o f.png"), "--drop w")
    error(run(ex, "pdpx report model.json data.csv -o r.html"), "--drop y")
    error(run(ex, "pdpx pd model.json data.csv --drop y,income --feature age"), "income", "--drop")
    full = ex["frame"]
    booster = xgb.train({"max_depth": 2}, xgb.DMatrix(full[["age", "income"]].to_numpy(), label=full["y"]), 5)
    booster.save_model(tmp_path / "nameless.json")
    full[["age", "income", "y"]].to_csv(tmp_path / "data.csv", index=False)
    error(run_example("pdpx pd nameless.json data.csv --feature age", tmp_path), "3 columns", "fit on 2", "--drop")
    assert len(table(run_example("pdpx pd nameless.json data.csv --drop y --feature age --grid-resolution 3",
                                 tmp_path))) == 3


def test_a_saved_row_index_is_named_as_such(ex):
    ex["frame"][["age", "income", "y"]].to_csv(ex["dir"] / "indexed.csv")
    error(run(ex, "pdpx pd model.json indexed.csv --drop y --feature age"), "index=False", "--drop 'Unnamed: 0'")
    assert len(table(run(ex, "pdpx pd model.json indexed.csv --drop y --drop 'Unnamed: 0' --feature age "
                             "--grid-resolution 3"))) == 3


def test_flags_naming_columns_DATA_lacks_say_which(ex):
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature agee"), "--feature agee")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature y"), "--feature y", "--drop")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --categorical agee"), "--categorical", "agee")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --weights ww"), "--weights", "ww")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --dates dayy"), "--dates", "dayy")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --dtypes age=nonsense"), "--dtypes",
          "nonsense")


def test_the_python_apis_words_never_reach_the_shell(ex, tmp_path):
    bad = ex["frame"].copy()
    bad.loc[3, "w"] = np.nan
    bad.to_csv(ex["dir"] / "bad_weights.csv", index=False)
    error(run(ex, "pdpx pd model.json bad_weights.csv --drop y --weights w --feature age"), "--weights w")
    error(run(ex, "pdpx pd model.json data.csv --drop y --weights income --feature age"), "--weights")
    error(run(ex, "pdpx pd --allow-pickle sales.pkl sales.csv --drop units --feature price --grid thresholds"),
          "--grid thresholds")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --method nope"), "--method")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --target 3"), "--target")
    error(run(ex, "pdpx pd churn.json data.csv --drop y --feature age --target 7"), "--target 7", "0, 1")
    error(run(ex, "pdpx pd model.skops data.csv --drop y --feature age --response predict_proba"), "--response")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --feature age"), "--feature")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --ice 5"), "--ice", "--kind")
    error(run(ex, "pdpx plot model.json data.csv --drop y --feature age --feature income --kind both -o f.png"),
          "--kind both")


# ------------------------------------------------------------------ output extensions
def test_a_pdf_report_is_refused_with_the_supported_extensions(ex):
    out = ex["dir"] / "report.pdf"
    error(run(ex, "pdpx report model.json data.csv --drop y -o report.pdf"), ".html", ".htm", "'report.pdf'")
    assert not out.exists()
    error(run(ex, "pdpx report model.json data.csv --drop y -o report"), ".html")


@pytest.mark.parametrize("name, words", [("pd.png", ("pdpx plot", ".csv", ".parquet", ".json")),
                                         ("pd.xlsx", (".csv", ".parquet", ".json")),
                                         ("pd.txt", (".csv",))])
def test_pd_refuses_what_is_not_a_table(ex, name, words):
    error(run(ex, f"pdpx pd model.json data.csv --drop y --feature age -o {name}"), *words)
    assert not (ex["dir"] / name).exists()


def test_pd_refuses_a_format_that_contradicts_the_extension(ex):
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age -o t.csv --format json"), "--format json",
          ".csv")


@pytest.mark.parametrize("suffix, read", [(".csv", pd.read_csv), (".parquet", pd.read_parquet),
                                          (".pq", pd.read_parquet), (".json", pd.read_json)])
def test_pd_writes_each_table_format_and_says_so(ex, suffix, read):
    name = f"t{suffix}"
    result = run(ex, f"pdpx pd model.json data.csv --drop y --feature age --grid-resolution 7 -o {name}")
    assert result.exit_code == 0, result.stderr
    frame = read(ex["dir"] / name)
    X = ex["frame"][["age", "income"]]
    np.testing.assert_allclose(frame["yhat"], pd_by_definition(ex["reg"], X, "age", frame["x_1"]), rtol=1e-6)
    assert f"pdpx: wrote {len(frame)} rows of" in result.stderr and repr(name) in result.stderr


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".pdf", b"%PDF-"), (".svg", b"<?xml")])
def test_plot_writes_each_figure_format(ex, suffix, magic):
    pytest.importorskip("plotnine", reason="plotnine is not installed")
    name = f"fig{suffix}"
    result = run(ex, f"pdpx plot model.json data.csv --drop y --feature age --ice 10 --grid-resolution 8 -o {name}")
    assert result.exit_code == 0, result.stderr
    assert (ex["dir"] / name).read_bytes()[:len(magic)] == magic
    assert f"pdpx: wrote {name!r}: {suffix[1:].upper()} figure, PD and 10 ICE curves of age" in result.stderr


def test_plot_refuses_what_is_not_a_figure(ex):
    error(run(ex, "pdpx plot model.json data.csv --drop y --feature age -o fig.csv"), ".png", ".svg", ".pdf",
          "pdpx pd")


# ------------------------------------------------------------------ options against the definition
def test_target_and_response_of_a_classifier(ex):
    X = ex["frame"][["age", "income"]]
    for flag in ("--target", "--class"):
        frame = table(run(ex, f"pdpx pd churn.json data.csv --drop y --feature age --grid-resolution 6 {flag} 0 "
                              "--response predict_proba"))
        assert set(frame["output"].astype(str)) == {"0"}
        np.testing.assert_allclose(frame["yhat"], pd_by_definition(ex["clf"], X, "age", frame["x_1"],
                                                                    "predict_proba", column=0), rtol=1e-5)
    raw = table(run(ex, "pdpx pd churn.json data.csv --drop y --feature age --grid-resolution 6 --response raw"))
    margin = [ex["clf"].predict(X.assign(age=v), output_margin=True).mean() for v in raw["x_1"]]
    np.testing.assert_allclose(raw["yhat"], margin, rtol=1e-5, atol=1e-6)
    both = table(run(ex, "pdpx pd churn.json data.csv --drop y --feature age --grid-resolution 4 --target 0,1"))
    assert sorted(set(both["output"].astype(str))) == ["0", "1"]


def test_weights_are_the_rows_weights_and_not_a_feature(ex):
    full = ex["frame"]
    frame = table(run(ex, "pdpx pd model.json weighted.csv --drop y --weights w --feature income "
                          "--grid-resolution 5"))
    ref = pd_by_definition(ex["reg"], full[["age", "income"]], "income", frame["x_1"], weights=full["w"])
    np.testing.assert_allclose(frame["yhat"], ref, rtol=1e-6)
    unweighted = pd_by_definition(ex["reg"], full[["age", "income"]], "income", frame["x_1"])
    assert not np.allclose(ref, unweighted, rtol=1e-6)  # the weights change the answer: the check can fail


def test_ice_is_that_many_rows_each_its_own_curve(ex):
    X = ex["frame"][["age", "income"]]
    frame = table(run(ex, "pdpx pd model.json data.csv --drop y --feature age --kind individual --ice 4 "
                          "--grid-resolution 3"))
    assert frame["row"].nunique() == 4 and len(frame) == 12
    for row, curve in frame.groupby("row"):
        np.testing.assert_allclose(curve["yhat"], pd_by_definition(ex["reg"], X.iloc[[int(row)]], "age",
                                                                   curve["x_1"]), rtol=1e-6)


def test_categorical_makes_the_grid_the_columns_values(ex):
    X = ex["frame"][["age", "income"]]
    frame = table(run(ex, "pdpx pd model.json data.csv --drop y --feature age --categorical age"))
    ages = sorted(X["age"].unique())
    assert frame["label_1"].astype(int).tolist() == ages
    np.testing.assert_allclose(frame["yhat"], pd_by_definition(ex["reg"], X, "age", ages), rtol=1e-6)


def test_a_date_column_is_a_grid_of_dates_equal_to_the_definition(ex):
    sales, pipe = ex["sales"], ex["pipe"]
    X = sales[["day", "price"]]
    for extra in ("--dates day", ""):
        result = run(ex, f"pdpx pd --allow-pickle sales.pkl sales.csv --drop units --feature day "
                         f"--grid-resolution 6 {extra}")
        frame = table(result)
        assert ("holds dates" in result.stderr) == (extra == ""), result.stderr  # the note when detected
        days = pd.to_datetime(frame["x_1"])
        assert days.min() >= X["day"].min() and days.max() <= X["day"].max()
        np.testing.assert_allclose(frame["yhat"], pd_by_definition(pipe, X, "day", list(days)), rtol=1e-9)
    as_json = run(ex, "pdpx pd --allow-pickle sales.pkl sales.csv --drop units --feature day --grid-resolution 6 "
                      "--format json")
    assert as_json.exit_code == 0, as_json.stderr
    assert pd.to_datetime([r["x_1"] for r in json.loads(as_json.stdout)]).tolist() == list(days)


# ------------------------------------------------------------------ reading DATA
def write(tmp_path, frame, name="d.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_iso_dates_are_read_as_dates_with_a_note_and_kept_as_text_on_request(tmp_path):
    path = write(tmp_path, pd.DataFrame({"day": ["2020-01-02", "2020-03-04", None], "t": ["2020-01-02T10:30:00Z",
                                                                                          "2021-06-01 08:00", None],
                                         "x": [1, 2, 3]}))
    notes = []
    X, w = read_data(str(path), DataSpec(), note=notes.append)
    assert pd.api.types.is_datetime64_any_dtype(X["day"]) and pd.api.types.is_datetime64_any_dtype(X["t"])
    assert X["day"].iloc[1] == pd.Timestamp("2020-03-04") and pd.isna(X["day"].iloc[2]) and w is None
    assert len(notes) == 2 and "--categorical day" in notes[0] and "2020-01-02 to 2020-03-04" in notes[0]
    X, _ = read_data(str(path), DataSpec(categorical=("day", "t")), note=notes.append)
    assert X["day"].tolist()[:2] == ["2020-01-02", "2020-03-04"] and len(notes) == 2


def test_a_date_column_with_a_few_non_dates_is_refused_not_made_categorical(tmp_path):
    days = [str(d.date()) for d in pd.date_range("2020-01-01", periods=40)] + ["n/a", "soon"]
    path = write(tmp_path, pd.DataFrame({"day": days}))
    with pytest.raises(DataError, match=r"holds dates except 1 value\(s\) such as 'soon'.*--dates day.*--categorical"):
        read_data(str(path), DataSpec())
    with pytest.raises(DataError, match="'soon' is not a date"):
        read_data(str(path), DataSpec(dates=("day",)))
    X, _ = read_data(str(path), DataSpec(categorical=("day",)))
    assert X["day"].iloc[-1] == "soon" and pd.isna(X["day"].iloc[-2])  # n/a: missing, as pandas reads it


def test_dates_and_dtypes_flags(tmp_path):
    path = write(tmp_path, pd.DataFrame({"when": ["03/04/2021", "12/25/2021"], "zip": ["01234", "98765"],
                                         "n": [1, 2], "other": ["2021-01-01", "2021-02-01"]}))
    X, _ = read_data(str(path), DataSpec(dates=("when",), dtypes={"zip": "string", "n": "Int64",
                                                                  "other": "date"}))
    assert X["when"].tolist() == [pd.Timestamp("2021-03-04"), pd.Timestamp("2021-12-25")]
    assert X["zip"].tolist() == ["01234", "98765"] and str(X["zip"].dtype) == "string"
    assert str(X["n"].dtype) == "Int64" and pd.api.types.is_datetime64_any_dtype(X["other"])
    X, _ = read_data(str(path), DataSpec(dtypes={"n": "float32"}))
    assert X["n"].dtype == np.float32 and X["zip"].tolist() == [1234, 98765]  # without --dtypes: numbers


def test_weights_column_is_taken_out_and_checked(tmp_path):
    path = write(tmp_path, pd.DataFrame({"x": [1.0, 2.0, 3.0], "w": [0.5, 1.0, 2.0], "bad": [1.0, -1.0, 1.0],
                                         "text": ["a", "b", "c"]}))
    X, w = read_data(str(path), DataSpec(weights="w", drop=("bad", "text")))
    assert list(X.columns) == ["x"] and w.tolist() == [0.5, 1.0, 2.0]
    with pytest.raises(DataError, match="--weights bad: 1 row"):
        read_data(str(path), DataSpec(weights="bad"))
    with pytest.raises(DataError, match="--weights text: .*must hold numbers"):
        read_data(str(path), DataSpec(weights="text"))


def test_values_percentiles_and_memory_budget(ex):
    X = ex["frame"][["age", "income"]]
    frame = table(run(ex, "pdpx pd model.json data.csv --drop y --feature age --values age=20,45,70"))
    assert frame["x_1"].tolist() == [20, 45, 70]
    np.testing.assert_allclose(frame["yhat"], pd_by_definition(ex["reg"], X, "age", [20, 45, 70]), rtol=1e-6)
    sales, pipe = ex["sales"], ex["pipe"]
    frame = table(run(ex, "pdpx pd --allow-pickle sales.pkl sales.csv --drop units --feature day "
                          "--values day=2021-03-01,2021-06-01"))
    days = [pd.Timestamp("2021-03-01"), pd.Timestamp("2021-06-01")]
    assert pd.to_datetime(frame["x_1"]).tolist() == days
    np.testing.assert_allclose(frame["yhat"], pd_by_definition(pipe, sales[["day", "price"]], "day", days),
                               rtol=1e-9)
    frame = table(run(ex, "pdpx pd model.json data.csv --drop y --feature income --percentiles 0,1 "
                          "--grid-resolution 5"))
    assert frame["x_1"].iloc[0] == X["income"].min() and frame["x_1"].iloc[-1] == X["income"].max()
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --values age=20,x"), "--values", "'x'")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --percentiles 0.9,0.1"), "--percentiles")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --feature income --grid-resolution 100 "
                  "--kind both --memory-budget 2MB"), "--memory-budget", "--kind average", "--ice")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age --memory-budget lots"), "--memory-budget")


def test_a_constant_feature_points_to_values(ex):
    ex["frame"].assign(age=40)[["age", "income", "y"]].to_csv(ex["dir"] / "constant.csv", index=False)
    error(run(ex, "pdpx pd model.json constant.csv --drop y --feature age"), "--values age=", "--feature")


@pytest.mark.parametrize("message, flag", [
    ("X does not have the columns the model was fitted on: not seen at fit time ['y']. Pass X with exactly these "
     "columns: ['a', 'b'].", "--drop"),
    ("X has 3 columns but this Booster was fitted on 2; pass X with the 2 columns used for fitting, in the same order",
     "--drop"),
    ("partial_dependence(): ice_sample must be an integer >= 1, or None; got 0", "--ice"),
    ("to_frame(): the tidy frame of this result would take about 9 GiB (...), over the memory budget of 1 GiB. Use "
     "to_frame(kind='average'), the arrays res.average / res.individual directly, ICE for a sample of rows "
     "(ice_sample=1000 when computing), or raise the budget (to_frame(memory_budget='4GB') or "
     "pdpx.set_config(memory_budget='4GB')).", "--memory-budget 4GB"),
    ("the percentiles (0.05, 0.95) of feature 'x' are equal (0): most of its values are the same. Widen percentiles "
     "(e.g. (0, 1)) or pass custom_values for it", "--percentiles 0,1"),
    ("unknown categorical feature 'zz': X has no such column. Columns: ['a']", "--categorical"),
])
def test_the_apis_messages_in_the_command_lines_words(message, flag):
    from pdpx.cli.main import cli_words

    text = cli_words(message)
    assert flag in text, text
    for w in API_WORDS + ("res.", "set_config", "to_frame", "kind='"):
        assert w not in text, (w, text)


def test_common_slips_of_the_command_line(ex):
    error(run(ex, "pdpx pd data.csv model.json --feature age"), "the model comes first")
    error(run(ex, "pdpx pd model.json data.csv --drop y --feature age,income"), "--feature age --feature income")
    error(run(ex, "pdpx plot model.json weighted.csv --drop y,w --feature age --feature income --feature age -o f.png"),
          "--feature given 3 times")


def test_parquet_columns_take_dates_and_dtypes_too(tmp_path):
    path = tmp_path / "d.parquet"
    pd.DataFrame({"day": ["2021-01-02", "2021-05-06"], "n": [1, 2], "when": pd.to_datetime(["2020-01-01", None])}
                 ).to_parquet(path)
    X, _ = read_data(str(path), DataSpec(dates=("day",), dtypes={"n": "float32"}))
    assert X["day"].tolist() == [pd.Timestamp("2021-01-02"), pd.Timestamp("2021-05-06")]
    assert X["n"].dtype == np.float32 and pd.api.types.is_datetime64_any_dtype(X["when"])
    with pytest.raises(DataError, match="--dtypes n=Int8"):
        pd.DataFrame({"n": [1.5]}).to_parquet(path)
        read_data(str(path), DataSpec(dtypes={"n": "Int8"}))


def test_dates_written_otherwise_than_iso_are_refused_until_dates_is_passed(ex):
    sales, pipe = ex["sales"], ex["pipe"]
    sales.assign(day=sales["day"].dt.strftime("%m/%d/%Y")).to_csv(ex["dir"] / "us_dates.csv", index=False)
    for cmd in ("pd", "report"):
        out = "-o r.html --no-progress" if cmd == "report" else ""
        error(run(ex, f"pdpx {cmd} --allow-pickle sales.pkl us_dates.csv --drop units --feature day {out}"),
              "--dates day", "--categorical day", "holds dates written as text")
    frame = table(run(ex, "pdpx pd --allow-pickle sales.pkl us_dates.csv --drop units --feature day --dates day "
                          "--grid-resolution 4"))
    days = list(pd.to_datetime(frame["x_1"]))
    np.testing.assert_allclose(frame["yhat"], pd_by_definition(pipe, sales[["day", "price"]], "day", days), rtol=1e-9)


def test_a_text_feature_of_many_values_gets_a_note():
    from pdpx.cli.data import check_text_features

    notes = []
    frame = pd.DataFrame({"code": [f"c{i}" for i in range(80)], "few": ["a", "b"] * 40})
    check_text_features(frame, ["code", "few"], DataSpec(), note=notes.append)
    assert len(notes) == 1 and "80 distinct values" in notes[0] and "--dtypes code=float64" in notes[0]
    check_text_features(frame, ["code"], DataSpec(categorical=("code",)), note=notes.append)
    assert len(notes) == 1  # --categorical says the grid of texts is meant
