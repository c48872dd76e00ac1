"""DATA for the ``pdpx`` command line: a CSV or Parquet file read into the frame the model expects.

A CSV file has no column types, so the command line decides them, in this order:

* ``--dtypes COL=TYPE,...``: pandas dtypes (``Int64``, ``string``, ``category``, ``float32``...;
  ``datetime64[ns]`` or ``date`` reads the column as dates);
* ``--dates COL,...``: these columns are parsed as dates (``datetime64``);
* the categories a model stores for its categorical columns (:mod:`pdpx.cli.model_categories`);
* any other text column whose every value is an ISO date (``2021-03-04``, ``2021-03-04 10:30``,
  ``2021-03-04T10:30:00Z``) is read as dates, with a ``pdpx: note:`` saying so and how to keep it
  as text (``--categorical COL``); a date column is never silently a categorical grid of its
  hundreds of distinct strings.

``--weights COL`` takes a column out of the rows and returns it as the rows' weights;
``--drop COL`` leaves columns out. :func:`check_columns` compares the columns with those the
model was fit on and says which ``--drop`` is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

DATA_SUFFIXES = (".csv", ".parquet", ".pq")
#: an ISO 8601 date, optionally with a time and a time zone
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?$")
DATE_TYPES = ("date", "datetime", "datetime64", "datetime64[ns]", "datetime64[us]", "datetime64[ms]",
              "datetime64[s]")


class DataError(ValueError):
    """DATA cannot be read as asked; the message names the command line's flags."""


@dataclass
class DataSpec:
    """How to read DATA: the command line's ``--drop``, ``--dates``, ``--dtypes``, ``--categorical``, ``--weights``."""

    drop: tuple = ()
    dates: tuple = ()
    dtypes: dict = field(default_factory=dict)
    categorical: tuple = ()
    weights: str | None = None


def split_list(values) -> list[str]:
    """``("a,b", "c")`` -> ``["a", "b", "c"]``: a repeatable option that also takes comma-separated names."""
    return [v.strip() for value in values or () for v in str(value).split(",") if v.strip()]


def parse_dtypes(values) -> dict:
    """``("age=Int64,zip=string",)`` -> ``{"age": "Int64", "zip": "string"}``, each type checked."""
    out = {}
    for item in split_list(values):
        name, eq, kind = item.partition("=")
        if not eq or not name.strip() or not kind.strip():
            raise DataError(f"--dtypes {item!r}: give COLUMN=TYPE, e.g. --dtypes zip=string,age=Int64")
        name, kind = name.strip(), kind.strip()
        if kind.lower() not in DATE_TYPES and not kind.lower().startswith("datetime64["):
            try:
                pd.api.types.pandas_dtype(kind)
            except TypeError:
                raise DataError(f"--dtypes {item!r}: {kind!r} is not a pandas dtype (for example int64, float64, "
                                "Int64, string, category, bool, or date for dates)") from None
        out[name] = kind
    return out


def parse_values(items, frame: pd.DataFrame) -> dict:
    """``("age=20,40,60", "city=north")`` -> ``{"age": [20, 40, 60], "city": ["north"]}``: ``--values``, a
    feature's own grid, each value in its column's type (numbers, a category's own labels, dates as text)."""
    out: dict = {}
    for item in items or ():
        name, eq, text = str(item).partition("=")
        name = name.strip()
        if not eq or not name or not text.strip():
            raise DataError(f"--values {item!r}: give COLUMN=V1,V2,..., e.g. --values age=20,40,60")
        if name not in frame.columns:
            raise DataError(f"--values {item!r}: {name!r} is not a column of DATA; its columns are "
                            f"{[str(c) for c in frame.columns]}")
        out[name] = [_value(v.strip(), frame[name], item) for v in text.split(",") if v.strip()]
    return out


def _value(text: str, column: pd.Series, item: str):
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        labels = {str(c): c for c in dtype.categories}
        if text not in labels:
            raise DataError(f"--values {item!r}: {text!r} is not a category of {column.name!r}; its categories are "
                            f"{', '.join(labels)}")
        return labels[text]
    if pd.api.types.is_bool_dtype(dtype):
        if text.lower() not in ("true", "false", "1", "0"):
            raise DataError(f"--values {item!r}: {column.name!r} holds true / false, not {text!r}")
        return text.lower() in ("true", "1")
    if pd.api.types.is_numeric_dtype(dtype):
        try:
            number = float(text)
        except ValueError:
            raise DataError(f"--values {item!r}: {column.name!r} holds numbers, not {text!r}") from None
        return int(number) if pd.api.types.is_integer_dtype(dtype) and number.is_integer() else number
    return text  # text and dates (the grid reads dates given as text)


def _is_date_type(kind: str) -> bool:
    return kind.lower() in DATE_TYPES or kind.lower().startswith("datetime64[")


def read_data(path: str, spec: DataSpec, model=None, note: Callable[[str], None] | None = None):
    """The rows of ``path`` as the model expects them, and the ``--weights`` column (or None).

    Raises :class:`DataError` with a message in the command line's words.
    """
    from .model_categories import ModelCategories, apply_categories, model_categories

    p = Path(path)
    name = repr(str(p))
    suffix = p.suffix.lower()
    if suffix not in DATA_SUFFIXES:
        raise DataError(f"cannot identify the data file {name}: expected a CSV (.csv) or Parquet (.parquet, .pq) "
                        "file")
    cats = model_categories(model) if model is not None else ModelCategories()
    dates = list(dict.fromkeys(list(spec.dates) + [c for c, k in spec.dtypes.items() if _is_date_type(k)]))
    typed = {c: k for c, k in spec.dtypes.items() if not _is_date_type(k)}
    try:
        if suffix == ".csv":
            header = pd.read_csv(p, nrows=0).columns
            _check_named(header, spec, name)
            as_text = {**cats.csv_dtypes(), **{c: str for c in dates}}
            frame = pd.read_csv(p, dtype={c: as_text.get(c, typed.get(c)) for c in header
                                          if c in as_text or c in typed} or None)
        else:
            frame = pd.read_parquet(p)
            _check_named(frame.columns, spec, name)
            frame = frame.astype(typed) if typed else frame
    except ImportError:
        raise DataError("reading Parquet needs pyarrow: pip install pyarrow") from None
    except DataError:
        raise
    except (TypeError, ValueError) as exc:
        if typed:
            raise DataError(f"could not read {name} with --dtypes {_dtypes_text(typed)}: {_one_line(exc)}") from None
        raise DataError(f"could not read {name}: {_one_line(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - an unreadable data file
        raise DataError(f"could not read {name}: {_one_line(exc)}") from None
    for col in dates:
        frame[col] = _dates(frame[col], col, name, "--dates" if col in spec.dates else "--dtypes")
    weights = None
    if spec.weights is not None:
        weights = _weights(frame[spec.weights], spec.weights, name)
        frame = frame.drop(columns=[spec.weights])
    frame = frame.drop(columns=[c for c in spec.drop if c in frame.columns])
    keep_text = set(spec.categorical) | set(spec.dtypes) | set(cats.known)
    for col in frame.columns:
        if col in keep_text:
            continue
        share, other = _date_share(frame[col])
        if 0.5 <= share < 1:
            raise DataError(f"column {col!r} of {name} holds dates except {other}: fix those values (leave a "
                            f"missing date empty) and pass --dates {col}, or pass --categorical {col} to use the "
                            "column as text")
        if share == 1:
            frame[col] = _dates(frame[col], col, name, None)
            if note is not None:
                note(f"column {col!r} of {name} holds dates ({_span(frame[col])}): read as dates; "
                     f"pass --categorical {col} to keep it as text")
    try:
        return apply_categories(frame, cats, name, note=note), weights
    except ValueError as exc:
        raise DataError(str(exc)) from None


def _check_named(columns, spec: DataSpec, name: str) -> None:
    """Every column a flag names is a column of DATA."""
    have = [str(c) for c in columns]
    asked = [("--drop", list(spec.drop)), ("--dates", list(spec.dates)), ("--dtypes", list(spec.dtypes)),
             ("--categorical", list(spec.categorical)), ("--weights", [spec.weights] if spec.weights else [])]
    for flag, names in asked:
        unknown = [c for c in names if c not in have]
        if unknown:
            raise DataError(f"{flag}: {', '.join(map(repr, unknown))} not among the columns of {name}: {have}")
    if spec.weights is not None and spec.weights in spec.drop:
        raise DataError(f"--weights {spec.weights} and --drop {spec.weights}: the weights column is left out of the "
                        "rows already; give it to --weights only")


def _dtypes_text(typed: dict) -> str:
    return ",".join(f"{c}={k}" for c, k in typed.items())


def _date_share(values: pd.Series) -> tuple[float, str]:
    """The share of a text column's values that are ISO dates, and the others (counted, one shown)."""
    if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
        return 0.0, ""
    present = values.dropna()
    if present.empty or not all(isinstance(v, str) for v in present):
        return 0.0, ""
    dates = present.str.strip().str.match(ISO_DATE)
    others = present[~dates]
    shown = f"{len(others)} value(s) such as {others.iloc[0]!r}" if len(others) else ""
    return float(dates.mean()), shown


def _dates(values: pd.Series, col: str, name: str, flag: str | None) -> pd.Series:
    """``values`` parsed as dates (ISO 8601 first, then any format pandas recognises); an error names the flag."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return values
    text = values.where(values.isna(), values.astype(str).str.strip())
    for kw in ({"format": "ISO8601"}, {"format": "ISO8601", "utc": True}, {"format": "mixed"}):
        try:
            return pd.to_datetime(text, **kw)
        except (ValueError, TypeError):
            continue
    bad = next((v for v in text.dropna() if pd.isna(pd.to_datetime(v, errors="coerce", format="mixed"))), None)
    what = f"{bad!r} is not a date" if bad is not None else "its values are not dates of one time zone"
    fix = (f"check the column, or leave it out of {flag}" if flag else
           f"pass --categorical {col} to keep it as text, or --dates {col} after fixing the value")
    raise DataError(f"column {col!r} of {name}: {what}; {fix}")


def _span(values: pd.Series) -> str:
    present = values.dropna()
    lo, hi = present.min(), present.max()
    if (present == present.dt.normalize()).all():
        return f"{lo.date()} to {hi.date()}"
    return f"{lo} to {hi}"


def _weights(values: pd.Series, col: str, name: str) -> np.ndarray:
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        sample = next((v for v in values.dropna() if not isinstance(v, (int, float))), None)
        raise DataError(f"--weights {col}: the column {col!r} of {name} must hold numbers (it holds "
                        f"{sample!r}); give a column of non-negative weights")
    w = values.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(w)
    if bad.any():
        raise DataError(f"--weights {col}: {int(bad.sum())} row(s) of {name} have no finite weight (first: row "
                        f"{int(np.argmax(bad)) + 1}); give every row a weight (0 leaves a row out)")
    if (w < 0).any():
        raise DataError(f"--weights {col}: {int((w < 0).sum())} row(s) of {name} have a negative weight; weights "
                        "must be >= 0 (0 leaves a row out)")
    if not (w > 0).any():
        raise DataError(f"--weights {col}: every weight in {name} is 0; give some rows a positive weight")
    return w


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def check_columns(adapter, frame: pd.DataFrame, data_name: str, spec: DataSpec) -> None:
    """Refuse rows whose columns differ from those the model was fit on, saying which ``--drop`` to add."""
    names = adapter.feature_names()
    cols = [str(c) for c in frame.columns]
    left_out = [c for c in list(spec.drop) + ([spec.weights] if spec.weights else [])]
    if names is not None:
        names = [str(n) for n in names]
        wanted = set(names)
        extra = [c for c in cols if c not in wanted and adapter.column_key(c) not in wanted]
        keys = {adapter.column_key(c) for c in cols} | set(cols)
        missing = [n for n in names if n not in keys]
        parts = []
        if extra:
            index = [c for c in extra if c.startswith("Unnamed: ")]
            why = (f"{index[0]!r} is a row index pandas saved: write the CSV with to_csv(..., index=False), or drop "
                   "it" if index else "the target?")
            parts.append(f"{data_name} has column(s) the model was not fit on: {extra} ({why}); leave them "
                         f"out with {' '.join(f'--drop {_shell(c)}' for c in extra)}")
        if missing:
            gone = [c for c in missing if c in left_out]
            why = (f" (you left {', '.join(map(repr, gone))} out with --drop / --weights: keep it)" if gone else "")
            parts.append(f"{data_name} lacks column(s) the model was fit on: {missing}{why}")
        if parts:
            raise DataError("; ".join(parts) + f". The model's columns: {names}")
        return
    n = _n_features(adapter)
    if n is None or n == len(cols):
        return
    if len(cols) > n:
        raise DataError(f"{data_name} has {len(cols)} columns ({cols}) but the model was fit on {n}: leave the others "
                        f"(the target, an ID...) out with --drop COLUMN, keeping the {n} columns used for fitting in "
                        "their order")
    raise DataError(f"{data_name} has {len(cols)} columns ({cols}) but the model was fit on {n}"
                    + (f"; --drop / --weights left out {left_out}" if left_out else ""))


#: a text feature with more distinct values than this gets a word (dates or numbers written as text?)
MANY_LEVELS = 50


def check_text_features(frame: pd.DataFrame, features, spec: DataSpec, note=None) -> None:
    """A text feature with many distinct values: refused when its values are dates in another format than ISO
    (``--dates`` parses them), else a note that its grid has one point per value."""
    import warnings

    for f in features:
        if f not in frame.columns or f in spec.categorical:
            continue
        values = frame[f]
        if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
            continue
        present = values.dropna()
        levels = present.nunique()
        if levels <= MANY_LEVELS:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = pd.to_datetime(present.astype(str), errors="coerce", format="mixed")
        if parsed.notna().mean() >= 0.9:
            raise DataError(f"--feature {f}: column {f!r} holds dates written as text (such as {present.iloc[0]!r}): "
                            f"pass --dates {f} to read them as dates, or --categorical {f} for a grid of its "
                            f"{levels:,} texts")
        if note is not None:
            note(f"--feature {f}: column {f!r} is text with {levels:,} distinct values, so its grid has a point per "
                 f"value; if it holds numbers, pass --dtypes {f}=float64")


def _n_features(adapter) -> int | None:
    try:
        n = adapter.n_features()
    except Exception:  # noqa: BLE001 - adapters without the fact, or models that cannot say
        return None
    return int(n) if isinstance(n, (int, np.integer)) else None


def _shell(name: str) -> str:
    import shlex

    return shlex.quote(name)
