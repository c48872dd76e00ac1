"""Date axes: figures of date features (``datetime64``, with or without a time zone, and periods).

The figure modules draw numbers. A result whose feature is a date is drawn from a
*view* of it (:func:`view`): its grid and data values as days since 1970-01-01 on the
clock of the column's own zone (a period at its start). When the figure is built
(:func:`finish`):

* every x (or, for 2-way tiles, y) of a date feature becomes a date again and the axis
  is plotnine's ``scale_x_datetime`` (``scale_y_datetime``), whose breaks fall on whole
  years, months, weeks, days or hours chosen from each panel's span (:func:`date_breaks`)
  and whose labels are ISO dates (:func:`date_labels`); the missing-value point keeps its
  place and its label ``"missing"``;
* a collection that mixes dates with numeric or categorical features shares one
  continuous x axis (plotnine cannot mix scale types in one plot): each date facet is
  placed at its own offset, far from the others' values, and its breaks and labels are
  dates (:class:`MixedAxis`).

A time-zone aware feature's axis title names the zone.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..core.dates import day_numbers, is_date_grid

_DAY_NS = 86_400 * 10**9


def dated(res) -> list[bool]:
    """Which features of ``res`` have a grid of dates."""
    return [not c and is_date_grid(g) for g, c in zip(res.grid_values, res.categorical)]


def view(res, offset: float = 0.0):
    """``res`` with every date feature's grid and data values as wall-clock days (plus ``offset``)."""
    flags = dated(res)
    if not any(flags):
        return res
    grids = [day_numbers(g, wall=True) + offset if f else g for g, f in zip(res.grid_values, flags)]
    data = dict(res.feature_data or {})
    for name, f in zip(res.features, flags):
        if f and name in data:
            data[name] = day_numbers(data[name], wall=True) + offset
    return dataclasses.replace(res, grid_values=grids, feature_data=data)


def zone_title(res, j: int) -> str:
    """The axis title of feature ``j``: its name, and its time zone when it has one."""
    tz = getattr(res.grid_values[j].dtype, "tz", None)
    return f"{res.features[j]} ({tz})" if tz is not None else res.features[j]


# ------------------------------------------------------------------ breaks and labels
#: (days a step spans, pandas frequency, label format), finest first
STEPS = [
    (1 / 24, "h", "%Y-%m-%d %H:%M"), (3 / 24, "3h", "%Y-%m-%d %H:%M"), (6 / 24, "6h", "%Y-%m-%d %H:%M"),
    (0.5, "12h", "%Y-%m-%d %H:%M"), (1, "D", "%Y-%m-%d"), (2, "2D", "%Y-%m-%d"), (7, "W-MON", "%Y-%m-%d"),
    (14, "2W-MON", "%Y-%m-%d"), (30.4, "MS", "%Y-%m"), (61, "2MS", "%Y-%m"), (91, "3MS", "%Y-%m"),
    (182, "6MS", "%Y-%m"), (365.25, "YS", "%Y"), (730.5, "2YS", "%Y"), (1826, "5YS", "%Y"),
    (3652, "10YS", "%Y"), (9131, "25YS", "%Y"), (18262, "50YS", "%Y"), (36525, "100YS", "%Y"),
]
#: about this many labelled breaks per panel
N_BREAKS = 6
#: share of a panel's width at each end left without a date label
EDGE = 0.03


def _step(span_days: float, n: int = N_BREAKS) -> tuple:
    for days, freq, fmt in STEPS:
        if span_days / days <= n:
            return days, freq, fmt
    return STEPS[-1]


def date_break_days(lo: float, hi: float, n: int = N_BREAKS) -> tuple[np.ndarray, str]:
    """Breaks (wall-clock days) on whole calendar steps between days ``lo`` and ``hi``, and their label format."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        return np.array([]), "%Y-%m-%d"
    _, freq, fmt = _step(hi - lo, n)
    start = pd.Timestamp(int(math.floor(lo)) * _DAY_NS)
    if freq.endswith("YS") or freq.endswith("MS"):
        start = start.to_period("Y" if freq.endswith("YS") else "M").to_timestamp()
    end = pd.Timestamp(int(math.ceil(hi)) * _DAY_NS) + pd.Timedelta(days=1)
    k = int(freq[:-2]) if freq[-2:] in ("YS", "MS") and freq[:-2] else 1
    stops = pd.date_range(start, end, freq=freq[-2:] if k > 1 else freq)
    if k > 1:  # every k years or months: on multiples of k (years 2000, 2010; months 1 and 7)
        on = (stops.year % k == 0) if freq.endswith("YS") else ((stops.month - 1) % k == 0)
        stops = stops[on]
    days = day_numbers(stops)
    margin = EDGE * (hi - lo)  # a label at the panel's very edge runs into the next panel's
    days = days[(days >= lo + margin) & (days <= hi - margin)]
    if fmt == "%Y-%m-%d %H:%M" and days.size and np.all(np.mod(days, 1) == 0):
        fmt = "%Y-%m-%d"
    return days, fmt


def format_days(days, fmt: str) -> list[str]:
    """Wall-clock days as text in ``fmt``."""
    stamps = pd.DatetimeIndex(np.round(np.asarray(days, dtype=np.float64) * _DAY_NS).astype("int64").astype(
        "datetime64[ns]"))
    return [s.strftime(fmt) for s in stamps]


def _as_days(values) -> np.ndarray:
    """Datetimes plotnine hands to a scale's breaks or labels (aware, UTC) as wall-clock days."""
    idx = pd.DatetimeIndex([pd.Timestamp(v) for v in values])
    if idx.tz is not None:
        idx = idx.tz_convert("UTC").tz_localize(None)
    return day_numbers(idx)


def _as_stamps(days) -> list:
    return [pd.Timestamp(int(round(d * _DAY_NS)), tz="UTC") for d in days]


class DateScale:
    """Breaks and labels of a datetime axis, each panel's own (its limits), with the missing-value ticks."""

    def __init__(self, missing: dict | None = None):
        self.missing = dict(missing or {})  # day of a missing-value tick -> day its grid ends
        self.fmt = "%Y-%m-%d"

    def breaks(self, limits):
        lo, hi = _as_days(limits)
        gaps = [m for m in self.missing if lo - 1e-9 <= m <= hi + 1e-9]
        top = self.missing[min(gaps)] if gaps else hi
        days, self.fmt = date_break_days(lo, top)
        return _as_stamps(list(days) + sorted(gaps))

    def labels(self, breaks):
        days = _as_days(breaks)
        miss = set(self.missing)
        shown = format_days(days, self.fmt) if len(days) else []
        return ["missing" if any(abs(d - m) < 1e-6 for m in miss) else s for d, s in zip(days, shown)]


# --------------------------------------------------------------------------- figures
@dataclasses.dataclass
class DatePlan:
    """How a figure's date features are drawn: ``mode`` "datetime" (a datetime axis) or "mixed" (offsets on a
    shared continuous axis), the date facets' ``offsets`` (feature set -> (offset, first day, last day)), the
    aesthetics that carry dates (``"x"`` or ``"y"``) and the axis titles."""

    mode: str
    offsets: dict = dataclasses.field(default_factory=dict)
    axes: tuple = ("x",)
    titles: dict = dataclasses.field(default_factory=dict)


def prepare_oneway(results: list) -> tuple[list, DatePlan | None]:
    """The views of 1-way ``results`` to draw, and the plan :func:`finish` follows (None: no date feature)."""
    flags = [dated(r)[0] for r in results]
    if not any(flags):
        return results, None
    if all(flags):
        title = zone_title(results[0], 0) if len(results) == 1 else None
        return [view(r) for r in results], DatePlan("datetime", titles={"x": title} if title else {})
    extent = max([1.0] + [float(np.nanmax(np.abs(np.asarray(r.grid_values[0], dtype=float))))
                          for r, f in zip(results, flags) if not f and not r.categorical[0]])
    spans = [float(np.ptp(day_numbers(r.grid_values[0])[np.isfinite(day_numbers(r.grid_values[0]))]))
             for r, f in zip(results, flags) if f]
    base = 10.0 ** (math.ceil(math.log10(max(extent, max(spans) * 3, 1.0))) + 1)
    views, offsets = [], {}
    for m, (r, f) in enumerate(zip(results, flags)):
        if not f:
            views.append(r)
            continue
        days = day_numbers(r.grid_values[0], wall=True)
        first = float(np.nanmin(days))
        offset = base * (m + 1) - first
        views.append(view(r, offset))
        offsets[r.feature_set] = (offset, first, float(np.nanmax(days)))
    return views, DatePlan("mixed", offsets=offsets)


def prepare_twoway(res) -> tuple[object, DatePlan | None]:
    """The view of a 2-way result to draw and its plan (None: no date feature). Two numbers are drawn as tiles
    (the second feature on y); a number and a category as lines along the number (on x)."""
    flags = dated(res)
    if not any(flags):
        return res, None
    tiles = not any(res.categorical)
    axes = tuple("y" if tiles and j == 1 else "x" for j, f in enumerate(flags) if f)
    titles = {a: zone_title(res, j) for a, j in zip(axes, [j for j, f in enumerate(flags) if f])}
    return view(res), DatePlan("datetime", axes=axes, titles=titles)


def finish(p, plan: DatePlan | None):
    """The figure ``p`` with its date axes (see the module docstring); ``p`` itself when ``plan`` is None."""
    if plan is None:
        return p
    names = getattr(p, "_pdpx_layers", None)
    if plan.mode == "mixed":
        p = _mixed_axis(p, plan)
    else:
        for axis in plan.axes:
            p = _datetime_axis(p, axis, plan.titles.get(axis))
    if names is not None:
        p._pdpx_layers = names
    return p


def draw_dated(draw, result, **options):
    """``draw(result, **options)``; a by= / several-model result, a derivative or an ALE of one date feature is drawn
    from its view in days and given a date axis (1-way and 2-way results draw theirs in :mod:`.plot`)."""
    figure = getattr(result, "figure", "")
    if figure == "stacked" and len(result.features) == 1 and dated(result.results[0])[0]:
        shown = dataclasses.replace(result, results=[view(r) for r in result.results])
        first = result.results[0]
    elif figure in ("derivative", "ale") and len(result.features) == 1 and dated(result)[0]:
        shown, first = view(result), result
    else:
        return draw(result, **options)
    title = zone_title(first, 0)
    p = finish(draw(shown, **options), DatePlan("datetime", titles={"x": title}))
    y = getattr(p.labels, "y", None)
    if figure == "derivative" and isinstance(y, str) and "per day" not in y:
        from plotnine import labs

        names = getattr(p, "_pdpx_layers", None)
        p = p + labs(y=f"{y} (per day)")
        if names is not None:
            p._pdpx_layers = names
    return p


_AESTHETICS = {"x": ("x", "xmin", "xmax", "xend", "xintercept"), "y": ("y", "ymin", "ymax", "yend", "yintercept")}


def _to_dates(frame: pd.DataFrame, columns) -> pd.DataFrame:
    out = frame.copy()
    for c in columns:
        if c in out.columns and pd.api.types.is_float_dtype(out[c].dtype):
            v = out[c].to_numpy(dtype=np.float64)
            ns = np.where(np.isfinite(v), np.round(np.nan_to_num(v) * _DAY_NS), 0).astype("int64")
            out[c] = pd.Series(ns.astype("datetime64[ns]"), index=out.index).where(np.isfinite(v))
    return out


def _columns(mapping, axis: str) -> list[str]:
    keys = _AESTHETICS[axis]
    return [str(v) for k, v in dict(mapping or {}).items() if k in keys and isinstance(v, str)]


def _old_scale(p, axis: str):
    for s in list(p.scales):
        if axis in s.aesthetics:
            return s
    return None


def _without(p, axis: str):
    from plotnine.scales.scales import Scales

    p.scales = Scales([s for s in p.scales if axis not in s.aesthetics])
    return p


def _datetime_axis(p, axis: str, title: str | None):
    """Dates on ``axis`` of ``p``: its columns converted from days, ``scale_x_datetime`` (``_y_``) in place of its
    continuous scale (the same expansion; the missing-value tick kept)."""
    from plotnine import labs, scale_x_datetime, scale_y_datetime

    base = _columns(p.mapping, axis)
    if isinstance(p.data, pd.DataFrame):
        p.data = _to_dates(p.data, base)
    for layer in p.layers:
        cols = _columns(layer.mapping, axis) + (base if getattr(layer, "inherit_aes", True) else [])
        data = getattr(layer, "_data", None)  # the frame the layer was given (plotnine keeps it there)
        if isinstance(data, pd.DataFrame) and cols:
            layer._data = _to_dates(data, cols)
    old = _old_scale(p, axis)
    missing = {}
    if old is not None:  # the figure's own axis: its missing-value ticks (position -> where the grid ends)
        holder = getattr(getattr(old, "breaks", None), "__self__", None)
        missing = dict(getattr(holder, "missing", {}) or {})
        if getattr(holder, "has_missing", False):  # a 2-way axis: one missing point, apart from the grid
            missing = {float(holder.at): float(holder.hi)}
    scale = DateScale(missing)
    kwargs = {"breaks": scale.breaks, "labels": scale.labels}
    if old is not None and getattr(old, "expand", None) is not None:
        kwargs["expand"] = old.expand
    p = _without(p, axis)
    p = p + (scale_x_datetime if axis == "x" else scale_y_datetime)(**kwargs)
    if title:
        p = p + labs(**{axis: title})
    return p


class MixedAxis:
    """Breaks and labels of a continuous x axis shared by date facets (at their offsets) and other facets, whose
    own breaks and labels (``breaks``, ``labels``: the figure's, or plotnine's defaults) answer outside dates."""

    def __init__(self, offsets: dict, breaks=None, labels=None):
        self.blocks = [(off + first, off + last, off) for off, first, last in offsets.values()]
        self.inner_breaks, self.inner_labels = breaks, labels
        self.fmt: dict[float, str] = {}
        holder = getattr(breaks, "__self__", None)  # the figure's categorical axis: its missing-value ticks
        self.missing = dict(getattr(holder, "missing", {}) or {})

    def _block(self, lo: float, hi: float):
        for first, last, off in self.blocks:
            pad = max(last - first, 1.0)
            if first - pad <= lo and hi <= last + pad:
                return off
        return None

    def breaks(self, limits):
        lo, hi = (float(v) for v in limits)
        off = self._block(lo, hi)
        if off is not None:
            gaps = sorted(m for m in self.missing if lo - 1e-9 <= m <= hi + 1e-9)
            top = self.missing[gaps[0]] if gaps else hi
            days, fmt = date_break_days(lo - off, top - off)
            for d in days:
                self.fmt[float(d + off)] = fmt
            return list(days + off) + gaps
        if callable(self.inner_breaks):
            return self.inner_breaks(limits)
        from mizani.breaks import breaks_extended

        return breaks_extended()(limits)

    def labels(self, breaks):
        breaks = list(breaks)
        out = [None] * len(breaks)
        rest = []
        for i, b in enumerate(breaks):
            off = self._block(float(b), float(b))
            if off is not None and float(b) in self.missing:
                out[i] = "missing"
            elif off is not None and float(b) in self.fmt:
                out[i] = format_days([float(b) - off], self.fmt[float(b)])[0]
            else:
                rest.append(i)
        if rest:
            others = [breaks[i] for i in rest]
            if callable(self.inner_labels):
                shown = self.inner_labels(others)
            else:
                from mizani.labels import label_number

                shown = label_number()(others)
            for i, s in zip(rest, shown):
                out[i] = s
        return out


def _mixed_axis(p, plan: DatePlan):
    from plotnine import scale_x_continuous

    old = _old_scale(p, "x")
    inner_b = getattr(old, "breaks", None) if old is not None else None
    inner_l = getattr(old, "labels", None) if old is not None else None
    axis = MixedAxis(plan.offsets, inner_b if callable(inner_b) else None, inner_l if callable(inner_l) else None)
    p = _without(p, "x")
    return p + scale_x_continuous(breaks=axis.breaks, labels=axis.labels)
