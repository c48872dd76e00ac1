"""The missing-value grid point (``include_missing``): does the model accept a missing value, and the grid.

Grids are finite by construction (:func:`pdpx.core.grid.feature_grid`); the
missing point is an explicit extra value, NaN, appended to a numeric feature's
grid when :class:`~pdpx.core.session.Session` decides it is on. Every method then
sets the feature to NaN for every row at that point: ``brute`` predicts on it,
``exact`` routes it as each tree routes a missing value (``missing_left`` /
``nan_mode`` of :mod:`pdpx.core.ir`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import dates
from .adapter import checked_predict

#: Rows of X the probe predicts on.
PROBE_ROWS = 8


def with_missing(grid: np.ndarray) -> np.ndarray:
    """``grid`` with NaN appended (as float64: NaN is not an integer); a grid of dates gets a missing date (NaT)."""
    if dates.is_date_grid(grid):
        return dates.with_missing(grid)
    return np.append(np.asarray(grid, dtype=np.float64), np.nan)


def refusal(adapter, X: pd.DataFrame, j: int, response: str) -> str | None:
    """Why the model does not accept a missing value in column ``j``, or None when it does.

    The model accepts it when its ``response`` on a few rows of ``X`` with column
    ``j`` set to missing returns finite numbers (no error).
    """
    probe = X.iloc[:PROBE_ROWS].copy()
    dtype = probe.dtypes.iloc[j]
    if dates.is_date_type(dtype):  # a missing date of the column's own type
        col = dates.missing_column(dtype, len(probe))
    elif isinstance(dtype, pd.api.extensions.ExtensionDtype):
        col = pd.array([pd.NA] * len(probe), dtype=dtype if not pd.api.types.is_integer_dtype(dtype) else "Float64")
    else:
        col = np.full(len(probe), np.nan)
    probe.isetitem(j, col)
    try:
        pred = checked_predict(adapter, probe, response)
    except Exception as exc:  # noqa: BLE001 - whatever the model raises means it refuses NaN
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"its {response} raised {type(exc).__name__} ({first[:200]})"
    if not np.all(np.isfinite(pred)):
        return f"its {response} returned NaN or infinite values"
    return None
