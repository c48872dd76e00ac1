"""Date features: columns of dates and times (``datetime64``, with or without a time zone) and of periods.

A date feature is neither a category nor a plain number: its grid holds dates of the
column's own type, so the model sees the timestamps it was trained on, and results
print them as dates.

* :func:`date_kind` tells a date column by its dtype: ``"datetime"`` for numpy
  ``datetime64[ns|us|ms|s]`` and pandas ``DatetimeTZDtype``, ``"period"`` for pandas
  ``PeriodDtype``.
* :func:`date_grid` builds the grid: the unique dates when fewer than ``grid_resolution``,
  else ``grid_resolution`` dates equally spaced in time between the ``percentiles``
  of the column, rounded to a calendar step: the finest the column uses (whole years,
  months, days, hours, minutes or seconds: a column of midnights gets whole days), or
  a coarser one of at most a day when the grid's spacing is at least four of them
  (timestamps to the second over two years: whole days).
  Periods: periods of the column's frequency, equally spaced between the percentiles.
* :func:`custom_dates` reads ``custom_values`` given as dates (text, ``datetime``,
  ``Timestamp``, ``numpy.datetime64``, ``Period``) into the column's type.
* A grid is a numpy ``datetime64`` array (no time zone), a pandas ``DatetimeArray``
  (time zone kept) or a ``PeriodArray``; :func:`day_numbers` turns dates into days since
  1970-01-01 (floats) for the measures that need numbers (support, the extrapolation
  check, derivatives: a date feature's derivative is per day).
* :func:`date_counts` turns dates into exact numbers (whole counts of the column's unit since
  1970 UTC) and :func:`count_dates` back into dates of the column's dtype: how a pipeline's
  reading reads a date column made into several columns (date parts), never shown to users.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import PdpxError

#: Nanoseconds in one of each calendar step finer than a month.
_NS = {"day": 86_400 * 10**9, "hour": 3_600 * 10**9, "minute": 60 * 10**9, "second": 10**9,
       "millisecond": 10**6, "microsecond": 10**3}
_PER_UNIT = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_DAY_NS = 86_400 * 10**9


def date_kind(dtype) -> str | None:
    """``"datetime"`` for a ``datetime64`` dtype (with or without a time zone), ``"period"`` for a pandas
    ``PeriodDtype``, None for anything else."""
    if isinstance(dtype, np.dtype):
        return "datetime" if dtype.kind == "M" else None
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "datetime"
    if isinstance(dtype, pd.PeriodDtype):
        return "period"
    return None


def is_date_type(dtype) -> bool:
    """Whether a column of ``dtype`` is a date feature (:func:`date_kind`)."""
    return date_kind(dtype) is not None


def is_date_grid(values) -> bool:
    """Whether ``values`` (a grid) holds dates: a ``datetime64`` array, or a pandas datetime or period array."""
    if isinstance(values, np.ndarray):
        return values.dtype.kind == "M"
    return isinstance(values, (pd.arrays.DatetimeArray, pd.arrays.PeriodArray, pd.DatetimeIndex, pd.PeriodIndex))


def as_index(values) -> pd.Index:
    """Dates (a grid, a column, a list of Timestamps) as a pandas ``DatetimeIndex`` or ``PeriodIndex``."""
    if isinstance(values, pd.Series):
        values = values.array
    return pd.Index(values)


def day_numbers(values, *, wall: bool = False) -> np.ndarray:
    """Dates as float64 days since 1970-01-01 (NaN for a missing date).

    Time-zone aware dates count from 1970-01-01 UTC, or with ``wall=True`` on the
    clock of their own zone (what a figure's axis shows). Periods count from the start
    of each period.
    """
    idx = as_index(values)
    if isinstance(idx, pd.PeriodIndex):
        idx = idx.to_timestamp(how="start")
    if not isinstance(idx, pd.DatetimeIndex):
        idx = pd.DatetimeIndex(idx)
    if wall and idx.tz is not None:
        idx = idx.tz_localize(None)
    ns = idx.as_unit("ns").asi8.astype(np.float64) if len(idx) else np.zeros(0)
    out = ns / _DAY_NS
    out[np.asarray(idx.isna())] = np.nan
    return out


# ------------------------------------------------------------------ labels
def midnight_only(values) -> bool:
    """Whether every date in ``values`` falls at midnight (on its own zone's clock): labels show the day only."""
    idx = as_index(values)
    if isinstance(idx, pd.PeriodIndex):
        return True
    idx = idx[~idx.isna()]
    if idx.tz is not None:
        idx = idx.tz_localize(None)
    return bool(len(idx) == 0 or (idx.as_unit("ns").asi8 % _DAY_NS == 0).all())


def date_labels(values, like=None) -> list[str]:
    """ISO text of each date: the day alone when every date is at midnight, else day and time (to the finest
    unit used); periods as pandas writes them; a missing date ``"missing"``. ``like``: the dates whose finest
    unit sets the form (default: ``values`` themselves)."""
    idx = as_index(values)
    if isinstance(idx, pd.PeriodIndex):
        return ["missing" if pd.isna(v) else str(v) for v in idx]
    wall = idx.tz_localize(None) if idx.tz is not None else idx
    ref = wall if like is None else as_index(like)
    if like is not None and getattr(ref, "tz", None) is not None:
        ref = ref.tz_localize(None)
    fmt = _format(ref)
    return ["missing" if pd.isna(v) else v.strftime(fmt) for v in wall]


def day_labels(days) -> list[str]:
    """Wall-clock days since 1970-01-01 (floats, as :func:`day_numbers` gives them) as :func:`date_labels` writes
    dates, to the microsecond."""
    us = np.round(np.asarray(days, dtype=np.float64) * 86_400e6).astype(np.int64)
    return date_labels(pd.DatetimeIndex(us.astype("datetime64[us]")))


def date_label(value) -> str:
    """One date as :func:`date_labels` writes it on its own."""
    return date_labels([value])[0]


def _format(wall: pd.DatetimeIndex) -> str:
    ns = wall[~wall.isna()].as_unit("ns").asi8
    if ns.size == 0 or (ns % _DAY_NS == 0).all():
        return "%Y-%m-%d"
    if (ns % _NS["minute"] == 0).all():
        return "%Y-%m-%d %H:%M"
    if (ns % _NS["second"] == 0).all():
        return "%Y-%m-%d %H:%M:%S"
    return "%Y-%m-%d %H:%M:%S.%f"


# -------------------------------------------------------------------- grids
def _step(wall: pd.DatetimeIndex) -> str | None:
    """The coarsest calendar step every date of ``wall`` (no zone, no NaT) sits on, or None (finer than µs)."""
    ns = wall.as_unit("ns").asi8
    if (ns % _DAY_NS == 0).all():
        if (wall.day == 1).all():
            return "year" if (wall.month == 1).all() else "month"
        return "day"
    for name in ("hour", "minute", "second", "millisecond", "microsecond"):
        if (ns % _NS[name] == 0).all():
            return name
    return None


#: calendar steps, coarsest first (None: finer than a microsecond)
_ORDER = ["year", "month", "day", "hour", "minute", "second", "millisecond", "microsecond", None]


def _readable(spacing_ns: float) -> str | None:
    """The coarsest step of a day or less that moves grid points this far apart by at most an eighth of the gap."""
    return next((name for name in _ORDER[2:-1] if 4 * _NS[name] <= spacing_ns), None)


def _coarser(a: str | None, b: str | None) -> str | None:
    return a if _ORDER.index(a) <= _ORDER.index(b) else b


def _snap(ns: np.ndarray, step: str | None) -> np.ndarray:
    """Nanosecond times rounded to the nearest ``step`` (a calendar month or year: its first day)."""
    if step is None:
        return np.unique(ns)
    if step in _NS:
        u = _NS[step]
        return np.unique((np.floor_divide(ns + u // 2, u)) * u)
    idx = pd.DatetimeIndex(ns.astype("datetime64[ns]"))
    freq = "Y" if step == "year" else "M"
    start = idx.to_period(freq).to_timestamp(how="start").as_unit("ns")
    nxt = (idx.to_period(freq) + 1).to_timestamp(how="start").as_unit("ns")
    pick = np.where(ns - start.asi8 < nxt.asi8 - ns, start.asi8, nxt.asi8)
    return np.unique(pick)


def _spread(values: np.ndarray, name, percentiles, n: int, quantiles) -> tuple[np.ndarray, float]:
    """``n`` integers equally spaced between the ``percentiles`` of the integer ``values`` (a period's ordinals, a
    date's nanoseconds), and the width of that span; ``quantiles`` is the grids' estimator. Quantiles are taken
    from the smallest value, so float64 keeps the nanoseconds of a span of centuries exact enough; a span of zero
    width is refused."""
    base = int(values.min())
    lo, hi = quantiles(np.sort(values - base).astype(np.float64), percentiles)
    if not hi > lo:
        raise _narrow(name, percentiles)
    return np.round(_spaced_ints(lo, hi, n)).astype(np.int64) + base, hi - lo


def _spaced_ints(lo: float, hi: float, n: int) -> np.ndarray:
    t = np.linspace(0.0, 1.0, n)
    return lo * (1.0 - t) + hi * t


def date_grid(column: pd.Series, *, grid_resolution: int, percentiles: tuple[float, float],
              quantiles) -> np.ndarray | pd.api.extensions.ExtensionArray:
    """The grid of a date column (rules in the module docstring); ``quantiles(sorted_values, probs)`` is the
    estimator numeric grids use."""
    name = column.name
    kind = date_kind(column.dtype)
    present = column.array[~np.asarray(column.isna())]
    if len(present) == 0:
        raise PdpxError(f"feature {name!r} has only missing dates; it has no grid")
    if kind == "period":
        ordinals = np.unique(present.asi8)
        if ordinals.size == 1:
            raise _constant(name, str(present[0]))
        if ordinals.size < grid_resolution:
            chosen = ordinals
        else:
            chosen = np.unique(_spread(present.asi8, name, percentiles, grid_resolution, quantiles)[0])
        return pd.arrays.PeriodArray(chosen, dtype=column.dtype)
    idx = pd.DatetimeIndex(present)
    tz, unit = idx.tz, idx.unit
    wall = idx.tz_localize(None) if tz is not None else idx
    ns = np.unique(wall.as_unit("ns").asi8)
    if ns.size == 1:
        raise _constant(name, date_label(idx[0]))
    if ns.size < grid_resolution:
        chosen = ns
    else:
        points, span = _spread(wall.as_unit("ns").asi8, name, percentiles, grid_resolution, quantiles)
        own = _step(pd.DatetimeIndex(ns.astype("datetime64[ns]")))  # the finest step the column uses
        step = _coarser(own, _readable(span / (grid_resolution - 1)))
        chosen = _snap(points, step)
        if chosen.size < 2:
            raise PdpxError(f"feature {name!r} spans too short a time between its percentiles {percentiles} "
                            "for distinct grid dates; widen percentiles or pass custom_values for it")
    return _in_column_type(chosen, tz, unit)


def _in_column_type(ns: np.ndarray, tz, unit: str):
    """Wall-clock nanoseconds as the grid of a column with zone ``tz`` and ``unit``: naive ``datetime64[unit]``,
    or a zone-aware ``DatetimeArray`` (times the zone skips move forward; repeated ones are dropped)."""
    idx = pd.DatetimeIndex(ns.astype("datetime64[ns]")).as_unit(unit)
    if tz is None:
        return idx.to_numpy()
    local = idx.tz_localize(tz, ambiguous="NaT", nonexistent="shift_forward")
    local = local[~local.isna()]
    return local.unique().array


def with_missing(grid):
    """A date grid with a missing date (NaT) appended: the missing-value grid point."""
    if isinstance(grid, np.ndarray):
        return np.append(grid, np.array(["NaT"], dtype=grid.dtype))
    return pd.Index(grid).insert(len(grid), pd.NaT).array


def missing_column(dtype, n: int):
    """``n`` missing dates of ``dtype`` (to set a date column to missing)."""
    return pd.array([pd.NaT] * n, dtype=dtype)


# ----------------------------------------------------------- custom values
def custom_dates(column: pd.Series, custom, notes: list | None = None):
    """``custom_values`` for a date column, in the column's own type (zone and unit, or period frequency)."""
    name = column.name
    dtype = column.dtype
    values = list(custom)
    if date_kind(dtype) == "period":
        try:
            idx = pd.PeriodIndex([v if isinstance(v, pd.Period) else pd.Period(v, freq=dtype.freq) for v in values],
                                 dtype=dtype)
        except (TypeError, ValueError) as exc:
            raise PdpxError(f"custom_values for {name!r} must be periods of its frequency {dtype.freq.freqstr!r} "
                            f"(e.g. '{column.dropna().iloc[0] if column.notna().any() else '2020-01'}', "
                            f"a Timestamp or a Period); {_first_bad(values, dtype)} ({exc})") from None
        return _checked(name, idx).array
    if any(isinstance(v, (bool, np.bool_)) or isinstance(v, (int, float, np.number)) for v in values):
        raise PdpxError(f"custom_values for date feature {name!r} must be dates (e.g. '2020-03-01', a datetime, "
                        f"a Timestamp or numpy.datetime64), not numbers: got {custom!r}")
    tz = getattr(dtype, "tz", None)
    unit = np.datetime_data(dtype)[0] if isinstance(dtype, np.dtype) else dtype.unit
    try:
        stamps = [pd.Timestamp(v) for v in values]
    except (TypeError, ValueError) as exc:
        raise PdpxError(f"custom_values for {name!r} must be dates (e.g. '2020-03-01', a datetime, a Timestamp "
                        f"or numpy.datetime64); {_first_bad(values, None)} ({exc})") from None
    aware = [s.tz is not None for s in stamps if not pd.isna(s)]
    if tz is None and any(aware):
        raise PdpxError(f"custom_values for {name!r} hold dates with a time zone, but column {name!r} has none; "
                        "give dates without a time zone (e.g. Timestamp(...).tz_localize(None))")
    if tz is not None and any(aware) and not all(aware):
        raise PdpxError(f"custom_values for {name!r} mix dates with and without a time zone; give them all in one "
                        f"form (dates without a zone are read on the column's clock, {tz})")
    try:
        idx = pd.DatetimeIndex(stamps)
        if tz is not None:
            idx = idx.tz_convert(tz) if idx.tz is not None else idx.tz_localize(tz, nonexistent="raise",
                                                                                 ambiguous="raise")
        held = idx.round(f"{_PER_UNIT[unit]}ns") if unit != "ns" else idx
        held = held.as_unit(unit)
    except (ValueError, OverflowError) as exc:
        raise PdpxError(f"custom_values for {name!r}: {exc}; give dates the column's type (datetime64[{unit}]"
                        f"{', ' + str(tz) if tz is not None else ''}) can hold") from None
    changed = int((held.as_unit("ns").asi8 != idx.as_unit("ns").asi8).sum())
    if changed and notes is not None:
        notes.append(f"custom_values for {name!r}: {changed} date(s) finer than the column's unit ({unit}) are "
                     "given rounded to it, as the column holds them and the model receives them")
    held = _checked(name, held)
    return held.to_numpy() if tz is None else held.array


def _checked(name, idx: pd.Index) -> pd.Index:
    if idx.isna().any():
        raise PdpxError(f"custom_values for {name!r} contains a missing date; a grid holds dates, not missing ones")
    if idx.has_duplicates:
        raise PdpxError(f"custom_values for {name!r} has repeated dates; give each date once")
    return idx


def _first_bad(values, dtype) -> str:
    for v in values:
        try:
            pd.Period(v, freq=dtype.freq) if dtype is not None else pd.Timestamp(v)
        except (TypeError, ValueError):
            return f"{v!r} is not one"
    return "a value is not one"


def _constant(name, shown: str) -> PdpxError:
    return PdpxError(
        f"feature {name!r} is constant (every date is {shown}), so its partial dependence is a single point. "
        "Drop it from features, or pass custom_values={" + repr(name) + ": [...]} with the dates of your choice")


def _narrow(name, percentiles) -> PdpxError:
    return PdpxError(f"the percentiles {percentiles} of feature {name!r} are the same date: most of its values are "
                     "equal. Widen percentiles (e.g. (0, 1)) or pass custom_values for it")


# ------------------------------------------------------------ dates as exact numbers
_EXACT = 2.0 ** 53  # float64 holds every integer below it


def count_unit(dtype) -> str:
    """The unit :func:`date_counts` counts a ``datetime64`` column of ``dtype`` in: the column's own (``"s"``,
    ``"ms"``, ``"us"``), microseconds for a nanosecond column (nanoseconds since 1970 pass 2**53 within 105 days)."""
    unit = dtype.unit if isinstance(dtype, pd.DatetimeTZDtype) else np.datetime_data(dtype)[0]
    return "us" if unit == "ns" else unit


def date_counts(values, dtype) -> np.ndarray:
    """Dates of a ``datetime64`` column of ``dtype`` (naive or time-zone aware) as exact float64 numbers: whole
    :func:`count_unit` counts since 1970-01-01 UTC (an aware date counts its instant, whatever its zone), NaN for a
    missing date. One number per date and one date per number (:func:`count_dates` inverts it).

    Raises PdpxError for a date no float64 count holds exactly: in a nanosecond column, a date that is not a whole
    microsecond; in any column, a count of 2**53 or more (microseconds: beyond 285 years from 1970)."""
    unit = count_unit(dtype)
    idx = as_index(values)
    if not isinstance(idx, pd.DatetimeIndex):
        idx = pd.DatetimeIndex(idx)
    if idx.tz is not None:
        idx = idx.tz_convert("UTC").tz_localize(None)
    missing = np.asarray(idx.isna())
    raw = idx.to_numpy()
    counted = raw.astype(f"datetime64[{unit}]")
    exact = missing | (counted.astype(raw.dtype) == raw)
    n = counted.view(np.int64)
    with np.errstate(invalid="ignore"):
        exact &= missing | (np.abs(n.astype(np.float64)) < _EXACT)
    if not exact.all():
        bad = idx[~exact][0]
        raise PdpxError(f"the date {bad} is not a whole number of {unit} below 2**53 from 1970-01-01, the numbers "
                        f"exact reads a column of {dtype} as (sub-microsecond times, or beyond the float64 range)")
    out = n.astype(np.float64)
    out[missing] = np.nan
    return out


def count_dates(numbers, dtype):
    """The dates of :func:`date_counts` numbers (NaN: a missing date), in the column's ``dtype``: a numpy
    ``datetime64`` array, or a ``DatetimeArray`` with its zone."""
    x = np.asarray(numbers, dtype=np.float64)
    ints = np.where(np.isnan(x), 0, x).astype(np.int64)
    stamps = ints.astype(f"datetime64[{count_unit(dtype)}]")
    stamps[np.isnan(x)] = np.datetime64("NaT")
    tz = getattr(dtype, "tz", None)
    if tz is None:
        return stamps.astype(dtype)
    return pd.array(pd.DatetimeIndex(stamps).tz_localize("UTC").tz_convert(tz)).astype(dtype)
