"""The whole curve (``grid="thresholds"``): one grid point on every step of a tree model's partial dependence.

The partial dependence of a tree model on a numeric feature is a step function:
it changes only where some split on the feature sends values another way. Its
steps are the maximal intervals of values that every split on the feature
routes alike. :func:`threshold_grid` returns one value inside each step, from the
model alone (no data), so a partial dependence on that grid *is* the exact curve:

* a model comparing ``x <= t`` (most libraries): each step but the last ends at
  a threshold, and the threshold itself (as the model compares it) is the point;
  the last step is represented by the next value above the largest threshold;
* a model comparing ``x < t``: each step but the first starts at a threshold, and
  the threshold is the point; the first step is represented by the value just
  below the smallest threshold;
* a feature the trees split on by sets of its values (a column that reached the
  model as several derived columns, ``TreeModel.value_sets``): the last of each run
  of the column's values that every split routes alike (:func:`value_set_grid`).

"As the model compares it": a model that rounds its inputs to float32 compares
float32 values with its thresholds, so the points are float32 values (for
``<=``, the largest float32 that still goes left). Likewise a column that holds
narrower floats than float64 (float32, pandas ``Float32``, float16) gives the model
only values of its type, so the points are values of that type, chosen on each side
of every threshold as the model compares them (the largest such value that still
goes left, for ``<=``); a step that holds no value of the type is not on the curve. Zero is its own step where a
split treats zero as missing (a library's zero-as-missing mode): its point is 0
itself, and it stands for every value the model reads as zero (``|x| <= 1e-35``),
the one exception to the rule above. The missing-value
point is not part of this grid (``include_missing`` adds it).

Steps are found by routing candidate values (each threshold and its neighbours
one float either side) through every split on the feature with the model's own
routing rule (:func:`pdpx.core.splits.side_changes`), so ``<`` vs ``<=``, float32
rounding and NaN modes are those the model uses; :mod:`pdpx.core.splits` is also
where the trees of a sum are walked and the float32 / zero-as-missing rule is written.

:func:`feature_steps` is what a :class:`~pdpx.core.session.Session` calls for
``grid="thresholds"``: it asks the adapter for the model's trees
(``tree_model(response)``), builds the grid of one feature and says, in notes,
what the user should know about it (a feature no tree splits on, points outside
the data). ``docs/getting-started.md`` ("The whole curve") documents the option.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import splits
from .dates import count_dates, is_date_type
from .errors import PdpxError
from .grid import held_dtype


def threshold_grid(tm, position: int, dtype=None) -> np.ndarray:
    """One value per step of the partial dependence of ``tm`` on the feature at column ``position``.

    Parameters
    ----------
    tm : TreeModel or TreeSum
        What an adapter's ``tree_model(response)`` returns.
    position : int
        The feature's position among the model's columns (as ``Request.features``).
    dtype : numpy float dtype, optional
        The type the column holds its values in when narrower than float64
        (:func:`pdpx.core.grid.held_dtype`): every point is then a value of that type.

    Returns
    -------
    ndarray of shape (n_steps,), float64, increasing
        Empty when no tree splits on the feature (its partial dependence is flat).

    Raises
    ------
    PdpxError
        When the model splits on the feature by category sets: its categories
        are then the exact grid already.
    """
    sets = getattr(tm, "value_sets", None) or {}
    if int(position) in sets:
        return value_set_grid(*sets[int(position)])
    try:
        members = [(ens, splits.split_nodes(ens, j)) for ens, j in splits.members(tm, int(position))]
    except splits.Unmapped:
        raise PdpxError(f"a threshold grid needs a TreeModel or TreeSum, got {type(tm).__name__}") from None
    if not members:
        return np.empty(0)
    cand = []
    for ens, nodes in members:
        if splits.by_category(ens, nodes):
            raise PdpxError(f"the model splits on feature {position} by category sets; its grid of categories is "
                            "already the exact curve: use the default grid for it")
        cand.append(_candidates(ens, nodes, dtype))
    values = np.unique(np.concatenate(cand))
    values = values[np.isfinite(values)]
    if values.size == 0:
        return values
    change = np.zeros(values.size - 1, dtype=bool)  # a new step starts at value i + 1
    for ens, nodes in members:
        change |= splits.side_changes(ens, nodes, values)
    if members[0][0].comparison == "<=":  # the last value of each run of equal signatures
        keep = np.append(change, True)
    else:  # the first value of each run
        keep = np.insert(change, 0, True)
    return values[keep]


def value_set_grid(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """A feature split by sets of its values (``TreeModel.value_sets``): the last of each run of its values
    (increasing) that every split routes alike, i.e. that share a code. The curve on these points is exact on
    the values the sets were evaluated on (the column's values in X); between two of them it is not known."""
    values = np.asarray(values, dtype=np.float64)
    codes = np.asarray(codes)
    keep = np.isfinite(values)
    values, codes = values[keep], codes[keep]
    if values.size == 0:
        return values
    return values[np.append(codes[1:] != codes[:-1], True)]


def _candidates(ens, nodes, dtype=None) -> np.ndarray:
    """Each threshold and its neighbours one representable value either side, and zero's neighbourhood where zero
    is missing. Representable in the type the model compares the column in (:func:`pdpx.core.splits.read_type`:
    the column's narrow float type, or its integer type: then the integers around each threshold)."""
    t = splits.thresholds(ens, nodes)
    zero_missing = splits.zero_is_missing(ens, nodes)
    dtype = splits.read_type(ens, dtype)
    if dtype is not None and dtype.kind in "iu":  # an integer column: the integers around each threshold
        info = np.iinfo(dtype)
        base = np.floor(t)
        out = [np.clip(base + k, info.min, info.max) for k in (-1.0, 0.0, 1.0)]
        if zero_missing:
            out.append(np.array([-1.0, 0.0, 1.0]))
        return np.concatenate(out)
    if dtype is None:
        dtype = np.dtype(np.float64)
    up, down = dtype.type(np.inf), dtype.type(-np.inf)
    with np.errstate(over="ignore"):
        tn = t.astype(dtype)
    # the values on both sides of each threshold: tn may have rounded up or down
    out = [a.astype(np.float64) for a in (tn, np.nextafter(tn, up), np.nextafter(tn, down))]
    if zero_missing:  # zero, and the nearest values a zero-as-missing split does not read as zero
        z = np.nextafter(dtype.type(splits.ZERO_READ), up)
        out.append(np.array([0.0, z, -z], dtype=np.float64))
    return np.concatenate(out)


def integer_dtype(dtype) -> np.dtype | None:
    """The numpy integer type of an integer column (numpy's, or pandas' nullable one), or None (booleans too)."""
    base = getattr(dtype, "numpy_dtype", dtype)
    try:
        base = np.dtype(base)
    except TypeError:
        return None
    return base if base.kind in "iu" else None


def readable_trees(adapter, response: str):
    """The trees ``grid="thresholds"`` reads: those of ``response``, else those of any response of the model.

    Every response of a tree model is a function of the leaves a row reaches, so
    all of them step at the same values. Raises a :class:`PdpxError` saying what
    to use instead when the model has no trees pdpx can read.
    """
    tm = adapter.tree_model(response)
    if tm is not None:
        return tm
    reason = adapter.tree_model_unavailable(response)
    for other in adapter.responses():
        if other != response:
            tm = adapter.tree_model(other)
            if tm is not None:
                return tm
    raise PdpxError(
        f"grid='thresholds' reads the split thresholds of a tree model, and pdpx cannot read trees here: {reason}. "
        "Use the default grid (grid='uniform', with grid_resolution for more points) or custom_values for the "
        "values you want")


def feature_steps(adapter, response: str, position: int, name: str, column) -> tuple[np.ndarray, str, list[str]]:
    """``grid="thresholds"`` for one numeric feature: (grid, comparison, notes).

    Parameters
    ----------
    adapter : Adapter
        The session's adapter (its ``tree_model`` gives the trees).
    response : str
        The response computed (its trees, else any response's: :func:`readable_trees`).
    position : int
        The feature's position among the model's columns.
    name : str
        The feature's name, for messages.
    column : Series
        The feature's values in X: the grid of a feature no tree splits on is its
        smallest and largest value (the curve is flat), and points outside its range
        are counted in a note. A column of a float type narrower than float64 gets
        points of that type (:func:`threshold_grid`'s ``dtype``).

    Returns
    -------
    grid : ndarray, float64, increasing
        One point per step (:func:`threshold_grid`).
    comparison : str
        ``"<="`` (each point stands for the step ending at it) or ``"<"`` (the step starting at it).
    notes : list of str
    """
    tm = readable_trees(adapter, response)
    if is_date_type(column.dtype) and position in getattr(tm, "dated", ()):
        return date_steps(tm, position, name, column)
    try:
        grid = threshold_grid(tm, position, held_dtype(column.dtype) or integer_dtype(column.dtype))
    except PdpxError:
        raise PdpxError(
            f"grid='thresholds': the model splits on feature {name!r} by category sets, so its steps are its "
            f"categories: mark it categorical (categorical_features=[{name!r}]) or pass custom_values for it"
        ) from None
    data = column.to_numpy(dtype=np.float64, na_value=np.nan)
    finite = data[np.isfinite(data)]
    notes = []
    if grid.size == 0:
        if finite.size == 0:
            raise PdpxError(f"feature {name!r} has no finite values (only missing or infinite ones); it has no grid")
        grid = np.unique([finite.min(), finite.max()])
        notes.append(f"grid='thresholds': no tree splits on {name!r}, so its partial dependence is flat; its grid "
                     "is its smallest and largest value in X")
    elif finite.size:
        lo, hi = float(finite.min()), float(finite.max())
        outside = int(np.sum((grid < lo) | (grid > hi)))
        if outside:
            notes.append(f"grid='thresholds': {outside} of the {grid.size} steps of {name!r} are represented by "
                         f"points outside its range in X ({lo:g} to {hi:g}); every step is kept (the support "
                         "check counts the rows on each)")
    return grid, splits.comparison(tm), notes


def date_steps(tm, position: int, name: str, column) -> tuple[object, str, list[str]]:
    """``grid="thresholds"`` for a date feature whose trees split on its numbers (``tm.dated``: an R ``Date`` or
    ``POSIXct`` column, read as days or seconds): one date per step that holds one, at the whole unit the model
    reads (a day, a second), in the column's dtype; (grid, comparison, notes) as :func:`feature_steps`. A date
    column the trees split by sets of its dates (``tm.value_sets``: made into several columns, its dates counted by
    :func:`pdpx.core.dates.date_counts`): the last date in X of each run the splits treat alike."""
    sets = getattr(tm, "value_sets", None) or {}
    if int(position) in sets:
        points = value_set_grid(*sets[int(position)])
        if points.size == 0:
            raise PdpxError(f"feature {name!r} has no dates (only missing values); it has no grid")
        return count_dates(points, column.dtype), splits.comparison(tm), []
    tz = getattr(column.dtype, "tz", None)
    epoch = pd.Timestamp("1970-01-01", tz="UTC")
    probe = pd.Series(pd.DatetimeIndex([epoch, epoch + pd.Timedelta(days=1)]))
    probe = probe.dt.tz_convert(tz) if tz is not None else probe.dt.tz_localize(None)
    zero, day = tm.encode_values(position, probe.astype(column.dtype).array)
    per_second = (day - zero) / 86400.0  # the model's numbers are zero + per_second * seconds since 1970 UTC
    comparison = splits.comparison(tm)
    points = threshold_grid(tm, position)
    if points.size == 0:
        present = column.dropna()
        if present.empty:
            raise PdpxError(f"feature {name!r} has no dates (only missing values); it has no grid")
        return (_as_dates(pd.Series([present.min(), present.max()]).unique(), column.dtype), comparison,
                [f"grid='thresholds': no tree splits on {name!r}, so its partial dependence is flat; its grid is its "
                 "first and last date in X"])
    whole = _whole_units(points, comparison)
    seconds = (whole - zero) / per_second
    stamps = pd.to_datetime(np.round(seconds * 1e6).astype(np.int64), unit="us", utc=True)
    stamps = stamps.tz_convert(tz) if tz is not None else stamps.tz_localize(None)
    notes = []
    if whole.size < points.size:
        notes.append(f"grid='thresholds': {points.size - whole.size} of the {points.size} steps of {name!r} hold no "
                     "whole day or second (the unit the model reads its dates in) and are left out")
    return _as_dates(stamps, column.dtype), comparison, notes


def _whole_units(points: np.ndarray, comparison: str) -> np.ndarray:
    """One whole number per step of ``points`` (one point per step, as :func:`threshold_grid` gives them) that
    falls in that step; steps holding none are left out. With ``"<="`` each point but the last is the step's
    upper end (a threshold), with ``"<"`` each point but the first is the step's lower end."""
    if comparison == "<=":
        upper = points[:-1]
        out = np.append(np.floor(upper), np.floor(upper[-1]) + 1.0 if upper.size else np.floor(points[-1]))
        lower = np.concatenate([[-np.inf], upper])
        keep = out > lower
    else:
        lower = points[1:]
        out = np.insert(np.ceil(lower), 0, np.ceil(lower[0]) - 1.0 if lower.size else np.ceil(points[0]))
        upper = np.append(lower, np.inf)
        keep = out < upper
    return np.unique(out[keep])


def _as_dates(values, dtype):
    """Dates as a grid of a column of ``dtype``: a numpy ``datetime64`` array, or a ``DatetimeArray`` with its zone."""
    arr = pd.array(pd.DatetimeIndex(values)).astype(dtype)
    return arr if getattr(dtype, "tz", None) is not None else arr.to_numpy()
