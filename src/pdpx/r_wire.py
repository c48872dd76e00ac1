"""What R sends to Python, decoded: the wire format the R package and the R adapters share.

Everything crossing the language boundary through reticulate is plain data, because
reticulate 1.28 (Debian's) cannot convert NumPy arrays under NumPy 2: numbers travel
as raw little-endian float64 bytes (R: ``writeBin(as.double(x), raw())``), text as
lists of str, and an R vector of length one arrives as a scalar. This module reads
those forms:

* :func:`as_array`: a numeric vector (bytes, a list, a scalar, numpy) as a numpy array,
  R's ``NA`` a quiet NaN;
* :func:`as_list`: an R vector as a Python list (a scalar becomes a list of one);
* :func:`decode_prediction`: what an R predict function returns, as a matrix of
  one column per output;
* :func:`epoch_seconds`, :func:`time_units`, :func:`r_time_numbers`: dates and times as R's
  tree libraries read them (``data.matrix()``: a ``Date``'s days, a ``POSIXct``'s seconds since
  1970-01-01 UTC), for a forest fitted on a ``Date`` or ``POSIXct`` column.

It sits beside :mod:`pdpx.r_bridge` (which decodes the R package's data.frames and
options with it) but on a floor of its own below the adapters (``pyproject.toml``'s
floors contract: it imports the core only), so the R adapters
(:mod:`pdpx.adapters.rfunction`, the randomForest, ranger and gbm readers) use it too.
"""

from __future__ import annotations

import numbers
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .core.adapter import as_2d
from .core.errors import PdpxError


def as_array(x: Any, dtype=np.float64) -> np.ndarray:
    """A numeric array from numpy, a list/scalar, or raw little-endian float64 bytes."""
    if isinstance(x, (bytes, bytearray, memoryview)):
        arr = np.frombuffer(bytes(x) if isinstance(x, memoryview) else x, dtype="<f8")
        # R's NA is a signalling NaN: make it a quiet one before any arithmetic
        return np.where(np.isnan(arr), np.nan, arr).astype(dtype)
    if x is None:
        return np.zeros(0, dtype=dtype)
    arr = np.asarray(x)
    if arr.dtype == object:
        arr = np.asarray([np.nan if v is None else v for v in arr.ravel()], dtype=np.float64).reshape(arr.shape)
    return np.array(arr, dtype=dtype)  # a copy: never a view of someone else's memory


def as_list(x: Any) -> list | None:
    """R vectors of length one arrive as scalars through reticulate: make a list."""
    if x is None:
        return None
    if isinstance(x, (str, bytes, numbers.Number)):
        return [x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, Mapping):
        return list(x.values())
    return list(x)


def decode_prediction(out: Any, n_rows: int) -> np.ndarray:
    """Predictions returned by an R function, as (n_rows, n_outputs) float64.

    Accepts raw float64 bytes (R: ``writeBin(as.double(p), raw())``, matrices in
    column-major order), a dict or list of columns (R: a data.frame or list of
    vectors), a flat list, or anything numpy reads.
    """
    if isinstance(out, (bytes, bytearray, memoryview)):
        arr = np.frombuffer(bytes(out), dtype="<f8")
        if n_rows == 0 or arr.size % n_rows:
            raise PdpxError(f"the R predict function returned {arr.size} values for {n_rows} rows")
        return np.ascontiguousarray(arr.reshape(arr.size // n_rows, n_rows).T)
    if isinstance(out, Mapping):
        out = list(out.values())
    if isinstance(out, (list, tuple)) and out and isinstance(out[0], (list, tuple, np.ndarray)):
        return np.column_stack([as_array(c) for c in out])
    if isinstance(out, (list, tuple)):
        return as_2d(as_array(out))
    return as_2d(out)


#: Seconds per unit of the numbers R's ``data.matrix()`` makes of a date or time column: a ``Date`` holds days, a
#: ``POSIXct`` seconds, both since 1970-01-01 UTC.
TIME_UNITS = {"days": 86400.0, "seconds": 1.0}


def epoch_seconds(values) -> np.ndarray:
    """Seconds since 1970-01-01 UTC of datetime values (naive ones read as UTC), NaN for NaT.

    R's POSIXct holds exactly this number; a Date holds it divided by 86400.
    """
    idx = pd.DatetimeIndex(values)
    if idx.tz is not None:
        idx = idx.tz_convert("UTC").tz_localize(None)
    ns = idx.as_unit("ns").asi8.astype(np.float64)
    return np.where(idx.isna(), np.nan, ns / 1e9)


def time_units(units: Any, n: int) -> list:
    """Per model input, the unit R sends for a column of dates or times (``"days"``: a ``Date``, ``"seconds"``: a
    ``POSIXct``), None for the others (R sends ``""``); ``units`` None: none of them."""
    if units is None:
        return [None] * n
    out = [str(u) if u else None for u in (as_list(units) or [])]
    if len(out) != n or any(u is not None and u not in TIME_UNITS for u in out):
        raise PdpxError(f"time units from R must be one of {sorted(TIME_UNITS)} or \"\" per input ({n}); got {out!r}")
    return out


def r_time_numbers(values, unit: str) -> np.ndarray:
    """Dates or times (``datetime64``, tz-aware or not: naive ones are read as UTC, as R's Date is) as the numbers
    R's tree libraries split on: days (``unit="days"``, a ``Date``) or seconds (``"seconds"``, a ``POSIXct``)
    since 1970-01-01 UTC; NaN for a missing one."""
    return epoch_seconds(values) / TIME_UNITS[unit]
