"""What the ``pdpx`` command line writes: output names checked before any work, and tables a spreadsheet opens safely.

* Each command writes only the extensions it names (:func:`table_format`, :func:`check_output`; the report's
  check is :func:`pdpx.outputs.report_page.check_report_path`, which :func:`pdpx.report` shares).
* An output that is one of the command's inputs (MODEL or DATA: the same file, however it is named, through a
  symbolic or hard link, a relative path, or another case on a file system that folds case) is refused
  (:func:`check_not_input`).
* A CSV table's text cells are written so that a spreadsheet reads them as text (:func:`csv_text`): a cell that
  begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return and is not a number gets a leading single quote
  and is wrapped in double quotes, as OWASP's guidance on CSV injection says; numbers (``-1.5`` too) and every
  other cell are written as before. JSON and Parquet keep every value as it is.
"""

from __future__ import annotations

import io
import json
import numbers
import os
import re
import secrets
import sys
from pathlib import Path

import click
import numpy as np
import pandas as pd

TABLE_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "json"}
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
#: a text cell beginning with one of these is a formula to a spreadsheet (OWASP, "CSV Injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: a text cell that is a number (``-1.5``, ``+2``, ``1e-3``): a spreadsheet reads it as that number, not a formula
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class OutputError(ValueError):
    """An output the command will not write; the message names the command line's flags."""


# ------------------------------------------------------------------ names
def table_format(path: str | None, fmt: str | None) -> str:
    """The table format for ``-o path`` / ``--format fmt``; an extension that is not a table is refused."""
    if path is None:
        return fmt or "csv"
    suffix = Path(path).suffix.lower()
    by_suffix = TABLE_FORMATS.get(suffix)
    if by_suffix is None and suffix:
        hint = (f"; for a figure use pdpx plot ... -o {Path(path).name}" if suffix in FIGURE_SUFFIXES else "")
        raise OutputError(f"-o {path!r}: pdpx pd writes tables: give a file ending in .csv, .parquet (or .pq) or "
                          f".json{hint}")
    if by_suffix is None and fmt is None:
        raise OutputError(f"-o {path!r}: give a file ending in .csv, .parquet or .json, or pass --format")
    if by_suffix is not None and fmt is not None and fmt != by_suffix:
        raise OutputError(f"-o {path!r} and --format {fmt} disagree: a {suffix} file is {by_suffix}; drop --format "
                          f"or name the file .{fmt}")
    return by_suffix or fmt


def check_output(path: str, suffixes: tuple, what: str, hint: str = "", inputs: dict | None = None) -> None:
    """``-o path``, before any work: one of ``suffixes``, writable, and none of ``inputs`` (:func:`check_not_input`)."""
    from ..core.files import check_writable

    suffix = Path(path).suffix.lower()
    if suffix not in suffixes:
        shown = ", ".join(suffixes)
        raise OutputError(f"-o {path!r}: {what} is written as {shown} (not {suffix or 'a file without extension'})"
                          f"{hint}")
    check_writable(path, what="-o")
    check_not_input(path, inputs or {})


def check_not_input(path: str, inputs: dict) -> None:
    """Refuse ``-o path`` when it is one of ``inputs`` (``{"MODEL": path, "DATA": path}``): the same file
    (:func:`same_file`), however it is named."""
    for name, given in inputs.items():
        if same_file(path, given):
            raise OutputError(f"-o {path!r} is {name} ({str(given)!r}): pdpx never writes over a file it reads; "
                              "give -o another file name")


def same_file(a, b) -> bool:
    """Whether the paths ``a`` and ``b`` name one file: ``os.path.samefile`` (symbolic and hard links, relative
    paths, a name in another case where the file system folds case); when one of them does not exist, whether
    they resolve to the same name."""
    a, b = (os.path.expanduser(os.fspath(p)) for p in (a, b))
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them is not there (it cannot be a file the other names), or cannot be looked at
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


# ------------------------------------------------------------------ tables
def write_table(frame, path: str | None, fmt: str) -> None:
    """``frame`` as CSV (:func:`csv_text`) / Parquet / JSON to ``path`` (atomically) or to stdout."""
    from ..core.files import atomic_path, check_writable

    if path is None:
        if fmt == "parquet":
            buf = io.BytesIO()
            frame.to_parquet(buf, index=False)
            sys.stdout.buffer.write(buf.getvalue())
        else:
            click.echo(render(frame, fmt), nl=False)
        return
    target = check_writable(path, what="-o")
    with atomic_path(target) as tmp:
        if fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            tmp.write_text(render(frame, fmt), encoding="utf-8")


def render(frame, fmt: str) -> str:
    """``frame`` as the text of a JSON (records) or CSV (:func:`csv_text`) table."""
    if fmt == "json":
        return json.dumps(json.loads(frame.to_json(orient="records", date_format="iso")), indent=None) + "\n"
    return csv_text(frame)


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV (pandas' ``to_csv``, no index) whose cells a spreadsheet never runs as formulas: a text cell
    (a column name too) that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return and is not a number
    is written ``"'=..."`` (a single quote before it, double quotes around it, its own double quotes doubled).
    Numbers, numeric, boolean and date columns, and every other cell are written as pandas writes them."""
    nonce = secrets.token_hex(8)  # the escaped cells stand in pandas' output as tokens no cell can hold
    escaped: list[str] = []

    def token(text: str) -> str:
        escaped.append('"' + ("'" + text).replace('"', '""') + '"')
        return f"PDPX{nonce}C{len(escaped) - 1}E"

    out = frame.copy(deep=False)
    out.columns = [token(str(c)) if formula_like(c) else c for c in frame.columns]
    for j in range(out.shape[1]):
        column = out.iloc[:, j]
        if not (pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_datetime64_any_dtype(column.dtype)):
            out.isetitem(j, _escaped_column(column, token))
    text = out.to_csv(index=False)
    if len(escaped) <= 16:  # a few distinct cells (names, levels): one pass of str.replace each is the fastest
        for i, cell in enumerate(escaped):
            text = text.replace(f"PDPX{nonce}C{i}E", cell)
        return text
    return re.sub(f"PDPX{nonce}C([0-9]+)E", lambda m: escaped[int(m.group(1))], text)


def formula_like(value) -> bool:
    """Whether a spreadsheet would read the cell ``value`` as a formula: text (as pandas writes it) beginning with one
    of :data:`FORMULA_STARTS` that is not a number; a missing value or a number never is."""
    if value is None or isinstance(value, numbers.Number) or (np.ndim(value) == 0 and pd.isna(value)):
        return False
    text = str(value)
    return text[:1] in FORMULA_STARTS and NUMBER.fullmatch(text) is None


def _escaped_column(column: pd.Series, token) -> pd.Series:
    """``column`` with each formula-like value (:func:`formula_like`) in its token; each distinct value is looked at
    once."""
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    uniques = list(uniques)
    changed = [token(str(v)) if formula_like(v) else v for v in uniques]
    if all(c is u for c, u in zip(changed, uniques)):
        return column
    values = np.empty(len(changed) + 1, dtype=object)
    values[:-1] = changed
    values[-1] = None  # code -1: a missing value, written as pandas writes it (empty)
    return pd.Series(values[codes], index=column.index, name=column.name, dtype=object)
