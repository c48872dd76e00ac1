"""Grids of a Spark DataFrame's columns too large to bring here, from Spark's aggregations, by pandas' rules.

When a column of a Spark ``X`` does not fit the memory budget on the driver (8 bytes a row),
:class:`~pdpx.rows.spark.SparkData` holds a *stand-in* for it (:func:`stand_in`): the column's
values in the local head, its exact smallest and largest finite values and, when any row misses
a value, one missing value, in the column's dtype; its ``attrs["stand_in"]`` says so. What reads
only those facts gets the answer of all the rows: the missing-value point, ``grid="thresholds"``
(the model's splits within the column's range). The grid (:func:`spark_grid`) follows
:func:`pdpx.core.grid.feature_grid`:

* fewer distinct finite values than ``grid_resolution`` (read with one ``distinct`` query that
  stops at ``grid_resolution``): those values, exactly the pandas grid; a categorical feature
  (text columns: their levels; a numeric column marked categorical: all its distinct values)
  likewise;
* else ``grid_resolution`` values evenly spaced between the ``percentiles`` of the column, which
  come from Spark's ``approxQuantile`` with relative error :data:`RELATIVE_ERROR`: each end of
  the grid is a value of the column whose rank is within ``RELATIVE_ERROR * n`` of the exact
  percentile's (pandas interpolates between the two values around that rank), so the grid is
  approximate, and the result's notes say so.

The support counts need every row's value and are not computed for a stand-in (the result's
notes say why); its rug shows the head's values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from ..core.grid import feature_grid, grid_between
from .spark_checks import changed

#: ``approxQuantile``'s relative error for the percentiles of a column too large to bring here
RELATIVE_ERROR = 1e-3


def fits(n_rows: int, budget: int) -> bool:
    """Whether one column of ``n_rows`` values (8 bytes each) fits ``budget`` bytes on the driver."""
    return 8 * n_rows <= budget


def _finite(name: str, numeric: bool):
    """The condition "a finite value" on column ``name`` (a Spark column expression)."""
    from pyspark.sql import functions as F

    col = F.col(name)
    if not numeric:
        return col.isNotNull()
    return col.isNotNull() & ~F.isnan(col) & (F.abs(col) != F.lit(float("inf")))


def stand_in(frame, name: str, head: pd.Series, levels: list | None, n_rows: int) -> pd.Series:
    """The stand-in for column ``name`` of ``frame`` (see the module's docstring): one aggregation."""
    from pyspark.sql import functions as F

    col = F.col(name)
    numeric = levels is None and isinstance(head.dtype, np.dtype) and head.dtype.kind in "iuf"
    finite = _finite(name, numeric)
    aggs = [F.sum(F.when(finite, 0).otherwise(1)).alias("missing"), F.count(F.lit(1)).alias("n")]
    if numeric:
        aggs += [F.min(F.when(finite, col)).alias("lo"), F.max(F.when(finite, col)).alias("hi"),
                 F.sum(F.when(col.isNull() | F.isnan(col), 1).otherwise(0)).alias("nan")]
    got = frame.agg(*aggs).collect()[0]
    if got["n"] != n_rows:
        raise changed(f"X counted {n_rows:,} rows, then {got['n']:,}")
    if levels is not None:
        values = list(levels) + ([None] if got["missing"] else [])
        out = pd.Series(pd.Categorical(values, categories=levels), name=name)
    else:
        extra = [got["lo"], got["hi"]] if numeric and got["lo"] is not None else []
        missing = bool(got["nan"]) if numeric else bool(got["missing"])
        values = list(head.dropna().to_numpy()) + extra + ([np.nan] if missing else [])
        dtype = head.dtype
        if missing and isinstance(dtype, np.dtype) and dtype.kind in "iub":  # as toPandas() gives such a column
            dtype = np.dtype(np.float64) if dtype.kind in "iu" else np.dtype(object)
        out = pd.Series(values, name=name).astype(dtype)
    out.attrs["stand_in"] = (f"column {name!r} of the Spark X ({n_rows:,} rows) does not fit the memory budget here, "
                             "so its rows' support is not counted (its rug shows the first rows)")
    return out


def spark_grid(frame, column: pd.Series, *, categorical: bool, grid_resolution: int, percentiles, n_rows: int,
               notes: list) -> np.ndarray:
    """The grid of ``column``, the stand-in of a column of ``frame`` (see the module's docstring)."""
    name = column.name
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):  # a text column: its levels, all of them present in the rows
        return feature_grid(column, categorical=True, grid_resolution=grid_resolution, percentiles=percentiles)
    numeric = isinstance(dtype, np.dtype) and dtype.kind in "iuf"
    rows = frame.select(name).where(_finite(name, numeric)).distinct()
    if not categorical:
        rows = rows.limit(grid_resolution)
    values = [r[0] for r in rows.collect()]
    if categorical or len(values) < grid_resolution:  # every distinct value: the pandas grid, exactly
        return feature_grid(pd.Series(values, name=name).astype(dtype), categorical=categorical,
                            grid_resolution=grid_resolution, percentiles=percentiles)
    lo, hi = frame.where(_finite(name, numeric)).approxQuantile(name, [float(p) for p in percentiles],
                                                                RELATIVE_ERROR)
    if lo is None or hi is None:  # pragma: no cover - the distinct values above exist
        raise PdpxError(f"feature {name!r} has no finite values (only missing or infinite ones); it has no grid")
    notes.append(f"the grid of {name!r} spans Spark's approximate percentiles {tuple(percentiles)} of its "
                 f"{n_rows:,} rows (approxQuantile, relative error {RELATIVE_ERROR:g}: each end's rank is within "
                 f"{RELATIVE_ERROR * n_rows:,.0f} rows of the exact percentile's): its column does not fit the memory "
                 "budget here")
    return grid_between(name, dtype, float(lo), float(hi), grid_resolution, percentiles)
