"""X as a pandas frame: what every source of rows converts with (the sources are :mod:`pdpx.rows`).

* :func:`as_frame` / :func:`named_frame`: X (a frame, an array, a polars / pyarrow / interchange table) as a
  pandas DataFrame with named columns, refusing what cannot be background rows;
* :func:`to_backend`: a result's frame for another library; :func:`has_missing`, :func:`short_list`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .adapter import Adapter
from .errors import PdpxError


def as_frame(X, adapter: Adapter) -> pd.DataFrame:
    """``X`` as a DataFrame with named columns (an array takes the model's feature names).

    Refuses what cannot be background rows: a Series, a sparse matrix, anything
    not 2-D, no rows, no columns, repeated column names. A table with named
    columns (polars, pyarrow, any DataFrame of the interchange protocol) becomes a
    pandas one here with the same names and dtypes (:func:`from_named`), so its
    columns are matched to the model's by name, as a pandas frame's are; only an
    array takes the model's names by position.
    """
    return named_frame(X, adapter)[0]


def named_frame(X, adapter: Adapter) -> tuple[pd.DataFrame, list[str]]:
    """:func:`as_frame`, and its column names as text (read once: a frame's columns are slow to list)."""
    X = from_named(X)
    if isinstance(X, pd.DataFrame):
        frame = X
    elif isinstance(X, pd.Series):
        raise PdpxError("X is a Series; pass a DataFrame (X.to_frame() for a single column)")
    else:
        if hasattr(X, "toarray") and hasattr(X, "nnz"):
            raise PdpxError("X is a sparse matrix; pass a dense array or DataFrame (X.toarray())")
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise PdpxError(f"X must be 2-D (rows x features), got an array of shape {arr.shape}")
        names = adapter.feature_names()
        if names is not None and len(names) == arr.shape[1]:
            columns = names
        elif names is not None:
            raise PdpxError(
                f"X has {arr.shape[1]} columns but {type(adapter.model).__name__} was fitted on {len(names)}: "
                f"{short_list(names)}. Pass a DataFrame with these columns"
            )
        else:
            columns = [f"x{i}" for i in range(arr.shape[1])]
        frame = pd.DataFrame(arr, columns=columns)
    if frame.shape[0] == 0:
        raise PdpxError("X has no rows; partial dependence averages over rows, so pass at least one")
    if frame.shape[1] == 0:
        raise PdpxError("X has no columns")
    names = [str(c) for c in frame.columns.tolist()]
    if len(set(names)) != frame.shape[1]:
        raise PdpxError("X has repeated column names; give each column a distinct name")
    return frame, names


def is_polars(obj) -> bool:
    """Whether ``obj`` is a polars object (by its class's module: polars is never imported for this)."""
    return type(obj).__module__.split(".")[0] == "polars"


def from_polars(X):
    """A polars DataFrame / LazyFrame as a pandas DataFrame; anything else unchanged.

    A polars Series is refused like a pandas one.
    """
    if not is_polars(X):
        return X
    name = type(X).__name__
    if name == "LazyFrame":
        X = X.collect()
    elif name == "Series":
        raise PdpxError("X is a polars Series; pass a DataFrame (X.to_frame() for a single column)")
    try:
        return X.to_pandas()
    except ImportError as exc:  # polars needs pyarrow for this
        raise PdpxError(f"converting a polars DataFrame to pandas needs pyarrow: pip install pyarrow ({exc})") from None


def from_named(X):
    """A table whose columns have names, as a pandas DataFrame with those names; anything else unchanged.

    polars (:func:`from_polars`), a pyarrow ``Table`` or ``RecordBatch`` (its own
    ``to_pandas``), and any other object of the DataFrame interchange protocol
    (``__dataframe__``, through pandas). Without this, numpy would read such a table
    as an array and its columns would be taken by position, whatever their names.
    A pyarrow array (one column) is refused like a Series. No library is imported.
    """
    if isinstance(X, (pd.DataFrame, pd.Series, np.ndarray)):
        return X
    if is_polars(X):
        return from_polars(X)
    kind = type(X).__name__
    if type(X).__module__.startswith("pyspark.sql") and kind == "DataFrame":  # what reads every row here
        raise PdpxError("this function reads X's rows in this process and does not take a Spark DataFrame "
                        "(partial_dependence, partial_dependence_many, importance, h_statistic and the report of "
                        "one model do); pass a pandas sample: X.sample(fraction=...).toPandas()")
    if type(X).__module__.split(".")[0] == "pyarrow":
        if kind in ("Table", "RecordBatch"):
            return X.to_pandas()
        if kind in ("ChunkedArray", "Array") or kind.endswith("Array"):
            raise PdpxError(f"X is a pyarrow {kind} (one column); pass a pyarrow Table, or a pandas DataFrame")
    if hasattr(X, "__dataframe__") and not hasattr(X, "toarray"):
        try:
            return pd.api.interchange.from_dataframe(X)
        except Exception as exc:  # noqa: BLE001 - any failure of a third-party table's protocol
            raise PdpxError(f"X ({type(X).__name__}) could not be read as a table with named columns ({exc}); "
                            "pass a pandas DataFrame (most libraries have a to_pandas())") from None
    return X


def to_backend(frame: pd.DataFrame, backend: str):
    """``frame`` as a ``backend`` DataFrame: ``"pandas"`` (itself) or ``"polars"`` (a column of periods as the dates
    they start)."""
    if backend == "pandas":
        return frame
    if backend == "polars":
        try:
            import polars as pl
        except ImportError:
            raise PdpxError('to_frame(backend="polars") needs polars: pip install "pdpx[polars]"') from None
        periods = [c for c in frame.columns if isinstance(frame[c].dtype, pd.PeriodDtype)]
        if periods:  # polars has no periods: each as the date it starts (label_j keeps the period's text)
            frame = frame.assign(**{c: frame[c].dt.start_time for c in periods})
        return pl.from_pandas(frame)
    raise PdpxError(f"to_frame(): backend must be 'pandas' or 'polars'; got {backend!r}")


def has_missing(column: pd.Series) -> bool:
    """Whether ``column`` holds a missing value (NaN, None, ``pd.NA``); one pass over a float column's array."""
    if isinstance(column.dtype, np.dtype) and column.dtype.kind == "f":
        return bool(np.isnan(column.to_numpy()).any())
    return bool(column.isna().any())


def short_list(items: Sequence, limit: int = 10) -> str:
    """``[a, b, ...]`` with at most ``limit`` items shown (for error messages)."""
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:limit])
    return "[" + shown + (", ...]" if len(items) > limit else "]")
