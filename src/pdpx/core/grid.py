"""Grids of values for the target features."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import dates
from .errors import PdpxError


def is_categorical_dtype(series: pd.Series) -> bool:
    """pandas ``category``, ``bool``, object and string columns are categorical."""
    return is_categorical_type(series.dtype)


def is_categorical_type(dtype) -> bool:
    """:func:`is_categorical_dtype` of a column's dtype (no need to take the column out of its frame)."""
    if isinstance(dtype, np.dtype):  # numpy: bool, object and text (the pandas checks below, answered at once)
        return dtype.kind in "bOSU"
    return (
        isinstance(dtype, pd.CategoricalDtype)
        or pd.api.types.is_bool_dtype(dtype)
        or pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
    )


def mquantiles(values: np.ndarray, probs) -> np.ndarray:
    """Sample quantiles with plotting positions alpha = beta = 0.4.

    The same estimator as ``scipy.stats.mstats.mquantiles`` (its default), so
    grids match those of the tools that build theirs with it.
    """
    return sorted_mquantiles(np.sort(values), probs)


def sorted_mquantiles(x: np.ndarray, probs) -> np.ndarray:
    """:func:`mquantiles` of ``x`` already sorted, one probability at a time (the same arithmetic, value for
    value, without numpy's overhead on arrays of two numbers)."""
    return _interpolate(x, _positions(x.size, probs))


def _positions(n: int, probs) -> list[tuple[int, float]]:
    """For each probability, ``(k, gamma)``: its quantile among ``n`` sorted values is the mix of the order
    statistics ``x[k - 1]`` and ``x[k]`` that :func:`_interpolate` takes (plotting positions alpha = beta = 0.4)."""
    alphap = betap = 0.4
    out = []
    for p in probs:
        p = float(p)
        aleph = n * p + (alphap + p * (1.0 - alphap - betap))
        k = math.floor(min(max(aleph, 1), n - 1))
        out.append((k, min(max(aleph - k, 0), 1)))
    return out


def _interpolate(x: np.ndarray, positions) -> np.ndarray:
    """The quantiles at ``positions`` (:func:`_positions`) from ``x``, whose entries ``k - 1`` and ``k`` hold the
    order statistics of those ranks (a sorted array, or one partitioned at those ranks)."""
    return np.array([(1.0 - gamma) * x[k - 1] + gamma * x[k] for k, gamma in positions], dtype=np.float64)


def feature_grid(
    column: pd.Series,
    *,
    categorical: bool,
    grid_resolution: int,
    percentiles: tuple[float, float],
    custom=None,
    notes: list | None = None,
) -> np.ndarray:
    """The grid for one feature.

    Numeric features: ``grid_resolution`` equally spaced values between the given
    percentiles of the data, or the unique values when there are fewer; integer
    columns get whole numbers. Categorical features: the categories that occur,
    in the column's category order (sorted for object / string columns).
    Date features (``datetime64``, with or without a time zone, and periods): a grid of
    dates of the column's own type (:func:`pdpx.core.dates.date_grid`).
    Neither ``NaN`` nor infinity ever enters a grid, and a grid of an integer column
    has a dtype that holds every value (:func:`grid_dtype`). ``custom`` replaces all
    of this.

    A column of a float type narrower than float64 (float16, float32, pandas'
    ``Float32``: :func:`held_dtype`) holds only the values of that type, so each grid
    value is rounded to the nearest of them (what the model receives when the value
    is written into the column), and values that coincide after rounding are kept
    once: every method computes at the values reported. ``notes`` (a list) receives a
    sentence when custom values were changed by this rounding.

    Returns
    -------
    ndarray of shape (n_values,)
    """
    name = column.name
    if custom is not None:
        return _custom_grid(column, custom, categorical, notes)
    if not categorical and dates.is_date_type(column.dtype):  # dates: a grid of dates (pdpx.core.dates)
        return dates.date_grid(column, grid_resolution=grid_resolution, percentiles=percentiles,
                               quantiles=sorted_mquantiles)

    if categorical:
        present = column.dropna()
        if isinstance(column.dtype, pd.CategoricalDtype):  # the categories whose codes occur: no set of values
            codes = np.asarray(column.cat.codes)
            seen = np.bincount(codes[codes >= 0], minlength=len(column.cat.categories)) > 0
            values = np.asarray(column.cat.categories.to_numpy(dtype=object)[seen], dtype=object)
        else:
            try:
                values = np.array(sorted(present.unique()), dtype=object)
            except TypeError:
                raise PdpxError(
                    f"feature {name!r} mixes types that cannot be sorted (e.g. strings and numbers); "
                    "convert it to one type, or to a pandas 'category' column"
                ) from None
            if pd.api.types.is_bool_dtype(column.dtype):
                values = values.astype(bool)
        if values.size == 0:
            raise PdpxError(f"feature {name!r} has only missing values; it has no grid")
        if values.size == 1:
            raise _constant(name, values[0])
        return values

    try:
        data = column.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise PdpxError(
            f"feature {name!r} is not numeric; mark it categorical with categorical_features=[{name!r}]"
        ) from None
    finite = data[np.isfinite(data)]  # a grid holds finite values: NaN and +-inf never enter it
    if finite.size == 0:
        raise PdpxError(f"feature {name!r} has no finite values (only missing or infinite ones); it has no grid")
    if _has_distinct(finite, max(grid_resolution, 2)):  # many values: the percentiles' order statistics alone
        lo_hi = _selected_quantiles(finite, percentiles)
        if lo_hi is not None:
            return grid_between(name, column.dtype, *lo_hi, grid_resolution, percentiles)
        finite = data[np.isfinite(data)]  # partitioned in place above: the column's own order again
    ordered = np.sort(finite)
    uniques = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]  # np.unique, from the sorted values
    if uniques.size == 1:
        raise _constant(name, uniques[0])
    if uniques.size < grid_resolution:
        values = uniques
        if pd.api.types.is_integer_dtype(column.dtype):
            return values.astype(grid_dtype(column.dtype, values))
        return values.astype(np.float64)
    lo, hi = sorted_mquantiles(ordered, percentiles)
    return grid_between(name, column.dtype, lo, hi, grid_resolution, percentiles)


#: How many of a column's values :func:`_has_distinct` looks at (evenly spaced through the column).
_PROBE = 4096


def _has_distinct(finite: np.ndarray, count: int) -> bool:
    """Whether a sample of ``finite`` (about :data:`_PROBE` values spread through it) already holds ``count``
    distinct values: then the whole column does, and its grid is spaced between percentiles. False proves
    nothing (the caller counts every value)."""
    sample = np.sort(finite[:: max(1, finite.size // _PROBE)])
    return 1 + int(np.count_nonzero(sample[1:] != sample[:-1])) >= count


def _selected_quantiles(finite: np.ndarray, percentiles) -> tuple | None:
    """:func:`sorted_mquantiles` of ``np.sort(finite)`` at ``percentiles``, from the order statistics they read
    (``finite`` partitioned in place at those ranks: linear time, no sort), value for value.

    None when an order statistic read is zero and ``finite`` holds both -0.0 and 0.0: which of the two the sort
    puts at that rank is the sort's own choice, so the caller sorts (the sign of a zero is kept as it was).
    """
    positions = _positions(finite.size, percentiles)
    finite.partition(sorted({r for k, _ in positions for r in (k - 1, k)}))
    if any(finite[r] == 0 for k, _ in positions for r in (k - 1, k)):
        zeros = np.signbit(finite[finite == 0])
        if zeros.any() and not zeros.all():
            return None
    return tuple(_interpolate(finite, positions))


def grid_between(name, dtype, lo: float, hi: float, grid_resolution: int, percentiles) -> np.ndarray:
    """A numeric feature's grid from its percentiles' values ``lo`` and ``hi`` (:func:`feature_grid`, many values):
    ``grid_resolution`` equally spaced values, whole numbers for an integer ``dtype``, the values a narrow float
    ``dtype`` holds."""
    if not hi > lo:
        raise PdpxError(
            f"the percentiles {percentiles} of feature {name!r} are equal ({lo:g}): most of its values "
            "are the same. Widen percentiles (e.g. (0, 1)) or pass custom_values for it"
        )
    values = spaced(lo, hi, grid_resolution)
    integer = pd.api.types.is_integer_dtype(dtype)
    if integer:
        values = np.unique(np.round(values))
    narrow = held_dtype(dtype)
    if narrow is not None:  # the values the column holds (lo and hi lie within the data: no overflow)
        values = np.unique(held_values(values, narrow))
    if values.size < 2:
        raise PdpxError(
            f"feature {name!r} spans too narrow a range ({lo!r} to {hi!r}) for distinct grid points; "
            "pass custom_values for it"
        )
    if integer:
        return values.astype(grid_dtype(dtype, values))
    return values.astype(np.float64)


_UNIT: dict[int, np.ndarray] = {}


def spaced(lo: float, hi: float, n: int) -> np.ndarray:
    """``n`` equally spaced values from ``lo`` to ``hi`` (both included), without overflow.

    ``np.linspace`` computes ``hi - lo``, which overflows to inf for data spanning
    most of the float range; a convex combination does not. Duplicates (a range only
    a few ulps wide) are dropped.
    """
    if n not in _UNIT:  # the fractions 0, 1 / (n - 1), ..., 1 of each grid size, computed once
        unit = np.linspace(0.0, 1.0, n)
        unit.flags.writeable = False
        _UNIT[n] = unit
    t = _UNIT[n]
    values = lo * (1.0 - t) + hi * t
    values[0], values[-1] = lo, hi
    return np.unique(values)


def grid_dtype(dtype, values) -> np.dtype:
    """The numpy dtype a grid of an integer column takes: the column's own when every value fits in it.

    Otherwise the smallest wider integer type that holds them all (``float64`` for
    values that are not whole numbers or exceed int64), so a value is never wrapped
    into a narrow type (300 into ``int8`` would become 44).
    """
    base = np.dtype(getattr(dtype, "numpy_dtype", dtype))
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0 or base.kind not in "iu":
        return base if v.size == 0 else np.dtype(np.float64)
    if not np.all(np.isfinite(v)) or not np.all(v == np.round(v)):
        return np.dtype(np.float64)
    lo, hi = float(v.min()), float(v.max())
    info = np.iinfo(base)
    if info.min <= lo and hi <= info.max:
        return base
    for cand in (np.int8, np.int16, np.int32, np.int64):
        ci = np.iinfo(cand)
        if ci.min <= lo and hi <= ci.max and np.dtype(cand).itemsize >= base.itemsize:
            return np.dtype(cand)
    if lo >= 0 and hi <= np.iinfo(np.uint64).max and base.kind == "u":
        return np.dtype(np.uint64)
    return np.dtype(np.float64)


def held_dtype(dtype) -> np.dtype | None:
    """The numpy float type narrower than float64 in which a column of ``dtype`` holds its values, or None.

    ``float16`` and ``float32`` columns, and the pandas types built on them (nullable
    ``Float32``, Arrow-backed ``float[pyarrow]``): a value written into such a column is
    rounded to that type, so the model receives the rounded value.
    """
    if isinstance(dtype, pd.CategoricalDtype):
        return None
    try:
        base = np.dtype(getattr(dtype, "numpy_dtype", dtype))
    except TypeError:
        return None
    return base if base.kind == "f" and base.itemsize < 8 else None


def held_values(values, narrow: np.dtype) -> np.ndarray:
    """``values`` rounded to the nearest value of the float type ``narrow`` (as writing them into a column of
    that type does), as float64. A value beyond the type's range becomes infinite."""
    with np.errstate(over="ignore"):
        return np.asarray(values, dtype=np.float64).astype(narrow).astype(np.float64)


def column_dtype(dtype, values):
    """The dtype a column of ``dtype`` takes when set to grid ``values``: its own, unless a value does not fit.

    Then a wider one of the same family (nullable pandas integers stay nullable),
    as :func:`grid_dtype` chooses. Every method feeds the model these same values.
    """
    if not pd.api.types.is_integer_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        return dtype
    wide = grid_dtype(dtype, values)
    base = np.dtype(getattr(dtype, "numpy_dtype", dtype))
    if wide == base:
        return dtype
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):  # nullable Int8 -> Int16 / Float64
        return pd.api.types.pandas_dtype("Float64" if wide.kind == "f" else f"{'U' if wide.kind == 'u' else ''}Int"
                                         f"{wide.itemsize * 8}")
    return wide


def _constant(name, value) -> PdpxError:
    value = value.item() if isinstance(value, np.generic) else value  # 40.0, not np.float64(40.0)
    return PdpxError(
        f"feature {name!r} is constant (every non-missing value is {value!r}), so its partial dependence "
        "is a single point. Drop it from features, or pass custom_values={" + repr(name) + ": [...]} "
        "to evaluate the model at values of your choice"
    )


def _is_missing(value) -> bool:
    """Whether ``value`` is a missing scalar (None, NaN, pd.NA, NaT)."""
    return np.ndim(value) == 0 and bool(pd.isna(value))


def _custom_grid(column: pd.Series, custom, categorical: bool, notes: list | None = None) -> np.ndarray:
    name = column.name
    if isinstance(custom, (str, bytes)) or np.ndim(custom) != 1:
        raise PdpxError(f"custom_values for {name!r} must be a 1-D list of values, got {custom!r}")
    values = list(custom)
    if len(values) == 0:
        raise PdpxError(f"custom_values for {name!r} is empty; give at least one value")
    if categorical:
        if isinstance(column.dtype, pd.CategoricalDtype):
            # a missing value is no category but is what the column holds in its missing rows: it is accepted
            unknown = [v for v in values if v not in set(column.cat.categories) and not _is_missing(v)]
            if unknown:
                raise PdpxError(
                    f"custom_values for {name!r} has values that are not categories of the column: "
                    f"{unknown!r}; its categories are {list(column.cat.categories)!r}"
                )
        if len(set(values)) != len(values):
            raise PdpxError(f"custom_values for {name!r} has repeated values; give each value once")
        return np.array(values, dtype=object)
    if dates.is_date_type(column.dtype):
        return dates.custom_dates(column, values, notes)
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise PdpxError(f"custom_values for numeric feature {name!r} must be numbers, got {custom!r}") from None
    if np.isnan(arr).any():
        raise PdpxError(f"custom_values for {name!r} contains NaN; a grid holds values, not missing ones")
    if np.isinf(arr).any():
        raise PdpxError(f"custom_values for {name!r} contains an infinite value; a grid holds finite values")
    if np.unique(arr).size != arr.size:
        raise PdpxError(f"custom_values for {name!r} has repeated values; give each value once")
    if pd.api.types.is_integer_dtype(column.dtype) and np.all(arr == np.round(arr)):
        return arr.astype(grid_dtype(column.dtype, arr))
    narrow = held_dtype(column.dtype)
    if narrow is not None:
        arr = _held_custom(name, arr, narrow, notes)
    return arr


def _held_custom(name, arr: np.ndarray, narrow: np.dtype, notes: list | None) -> np.ndarray:
    """Custom values of a column of the float type ``narrow``, rounded to the values it holds (the first of those
    that coincide kept, in the order given), with a note in ``notes`` when any changed."""
    held = held_values(arr, narrow)
    if np.isinf(held).any():
        big = float(arr[np.isinf(held)][0])
        top = float(np.finfo(narrow).max)
        raise PdpxError(
            f"custom_values for {name!r} holds {big!r}, beyond what its {narrow.name} column can hold "
            f"(at most {top:g} in size): give values within that range, or convert the column to float64")
    changed = held != arr
    if not changed.any():
        return arr
    _, first = np.unique(held, return_index=True)
    keep = np.sort(first)
    if notes is not None:
        i = int(np.flatnonzero(changed)[0])
        merged = arr.size - keep.size
        notes.append(
            f"custom_values for {name!r}: {int(changed.sum())} of {arr.size} values are not {narrow.name} numbers, "
            f"so they are given as the nearest {narrow.name} value, which its {narrow.name} column holds and the "
            f"model receives (e.g. {float(arr[i])!r} as {float(held[i])!r}); the grid reports these values"
            + (f"; {merged} value(s) became equal to another after rounding and are kept once" if merged else ""))
    return held[keep]
