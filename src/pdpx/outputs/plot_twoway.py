"""Figures of 2-way results: tiles with contours (numeric x numeric), one line per category
(numeric x categorical), tiles with their values (categorical x categorical), and the
composition that stacks them under 1-way facets.

The missing-value grid point of a numeric feature (``include_missing``) is drawn apart
from its numeric axis: on tiles, a narrow band of tiles beside the grid (a column right
of it for the first feature, a row above it for the second, their corner cell where
both are missing), under a tick labelled ``missing``; on lines per category, one point
per category right of the lines. Numeric ticks too close to that label are left out,
and integer features get whole-number ticks.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .plot_axis import clear_of_missing, integer_feature, numeric_ticks, tick_labels
from .plot_steps import direction, step_edges
from .plot_style import (
    PALETTE,
    RUG_MAX,
    UNSUPPORTED_FILL,
    PlotOptions,
    dotted,
    figure_size,
    grid_labels,
    plot_frame,
    rug_alpha,
    rug_frame,
    theme_pdpx,
    value_label,
)

#: The missing-value band of a tile grid: its gap from the grid and its width, as shares of the grid's span.
BAND_GAP = 0.04
BAND_WIDTH = 0.09
#: Gap between the numeric grid's end and the missing-value point of lines per category (share of the span).
POINT_GAP = 0.12

if TYPE_CHECKING:  # pragma: no cover
    from ..core.result import PartialDependenceResult


def twoway_plot(res: "PartialDependenceResult", opts: PlotOptions):
    """One ggplot of a 2-way result, by the features' types (see the module docstring)."""
    df, _ = plot_frame([dataclasses.replace(res, individual=None, kind="average")], opts)
    centered = df.attrs["centered"]
    cats = res.categorical
    if not any(cats):
        p, names = _tiles_numeric(res, df, opts, centered)
    elif all(cats):
        p, names = _tiles_categorical(res, df, opts, centered)
    else:
        p, names = _lines_by_category(res, df, opts, centered)

    from plotnine import facet_wrap, theme

    k = len(res.outputs)
    if k > 1:
        ncol = min(k, 3)
        p = p + facet_wrap("output", ncol=ncol, scales="fixed" if opts.share_y or not all(cats) else "free")
        size = figure_size(math.ceil(k / ncol), ncol)
        size = (size[0] + 1.0, size[1])  # room for the legend
    else:
        size = (6.5, 4.5)
    if opts.caption and "unsupported" in names:
        from plotnine import labs

        what = "dotted" if names[0] == "unsupported" else "grey"
        p = p + labs(caption=f"{what}: no rows of the data within a grid step" + (
            ", or outside their convex hull" if res.outside_hull is not None else ""))
    p = p + theme_pdpx(opts.base_size) + theme(figure_size=size)
    p._pdpx_layers = names
    return p


def _edges(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tile bounds around each grid value: midway to its neighbours."""
    v = np.asarray(values, dtype=float)
    if v.size == 1:
        return v - 0.5, v + 0.5
    mid = (v[1:] + v[:-1]) / 2
    lo = np.concatenate([[v[0] - (mid[0] - v[0])], mid])
    hi = np.concatenate([mid, [v[-1] + (v[-1] - mid[-1])]])
    return lo, hi


def _bounds(res, j: int, values) -> tuple[np.ndarray, np.ndarray]:
    """Tile bounds of feature ``j``: each step of a threshold grid (``res.steps``), else :func:`_edges`."""
    if direction(res, j):
        return step_edges(res, j, values)
    return _edges(values)


def _fill_scale(centered: bool, name: str):
    from plotnine import guide_colorbar, scale_fill_cmap, scale_fill_gradient2

    guide = guide_colorbar()
    if centered:
        return scale_fill_gradient2(low="#2166ac", mid="#f7f7f7", high="#b2182b", midpoint=0, name=name,
                                    guide=guide)
    return scale_fill_cmap("viridis", name=name, guide=guide)


def _legend_name(res, centered: bool) -> str:
    what = res.response_label or res.response
    if len(res.outputs) == 1 and res.outputs[0] != what:
        what = f"P({res.outputs[0]})" if res.response == "predict_proba" else f"{what}, {res.outputs[0]}"
    return ("centered\n" if centered else "") + "partial\ndependence\n" + f"({what})"


class MissingAxis:
    """A numeric axis of a 2-way figure with, when its grid holds the missing-value point, that point apart:
    the grid's span, where the point (or band) sits, and the ticks and labels of the axis."""

    def __init__(self, res, j: int, bounds, gap: float, width: float, inches: float, font_size: float,
                 across: bool = True):
        grid = np.asarray(res.grid_values[j], dtype=float)
        self.finite = grid[np.isfinite(grid)]
        self.has_missing = bool(np.isnan(grid).any())
        self.integer = integer_feature(res, j)
        lo, hi = bounds(self.finite)
        self.lo, self.hi = float(lo[0]), float(hi[-1])
        span = self.hi - self.lo if self.hi > self.lo else max(1.0, abs(self.hi))
        self.band = (self.hi + gap * span, self.hi + (gap + width) * span)  # its tiles (or point at its middle)
        self.at = sum(self.band) / 2 if width else self.band[0]
        self.inches, self.font_size, self.across = inches, font_size, across
        self.end = self.band[1] if self.has_missing else self.hi

    def position(self, x: np.ndarray) -> np.ndarray:
        """x as drawn: the missing-value point at :attr:`at`."""
        x = np.asarray(x, dtype=float)
        return np.where(np.isnan(x), self.at, x)

    def scale(self, aesthetic: str, **kwargs):
        """The continuous scale of this axis, with its breaks and labels."""
        from plotnine import scale_x_continuous, scale_y_continuous

        scale = scale_x_continuous if aesthetic == "x" else scale_y_continuous
        if not (self.has_missing or self.integer):
            return scale(**kwargs)
        return scale(breaks=self.breaks, labels=self.labels, **kwargs)

    def breaks(self, limits):
        """Numeric ticks over the grid (whole numbers for an integer feature), then the missing point's."""
        lo = float(limits[0])
        ticks = numeric_ticks(lo, self.hi if self.has_missing else float(limits[1]), self.integer)
        if not self.has_missing:
            return ticks
        per_unit = self.inches / max(float(limits[1]) - lo, 1e-300)
        if self.across:  # labels side by side (x): their widths
            keep = clear_of_missing(ticks, tick_labels(ticks), self.at, per_unit, self.font_size)
        else:  # labels one above the other (y): a line's height
            keep = [i for i, b in enumerate(ticks) if (self.at - b) * per_unit >= 1.3 * self.font_size / 72]
        return [ticks[i] for i in keep] + [self.at]

    def labels(self, breaks):
        """Numbers, and ``missing`` at the missing point."""
        breaks = [float(b) for b in breaks]
        numeric = [b for b in breaks if not (self.has_missing and b == self.at)]
        text = dict(zip(numeric, tick_labels(numeric)))
        return [text.get(b, "missing") for b in breaks]


def _panel_inches(res, opts) -> tuple[float, float]:
    """Rough (width, height) in inches of one panel of a 2-way figure (for spacing tick labels)."""
    k = len(res.outputs)
    if k > 1:
        ncol = min(k, 3)
        w, h = figure_size(math.ceil(k / ncol), ncol)
        return max((w + 1.0 - 2.3) / ncol, 0.8), max((h - 0.9) / math.ceil(k / ncol), 0.8)
    return 6.5 - 2.6, 4.5 - 1.1


def _tiles_numeric(res, df, opts, centered):
    from plotnine import aes, geom_path, geom_rect, geom_rug, ggplot, labs

    f1, f2 = res.features
    width, height = _panel_inches(res, opts)
    font = 0.8 * opts.base_size
    ax1 = MissingAxis(res, 0, lambda g: _bounds(res, 0, g), BAND_GAP, BAND_WIDTH, width, font, across=True)
    ax2 = MissingAxis(res, 1, lambda g: _bounds(res, 1, g), BAND_GAP, BAND_WIDTH, height, font, across=False)
    lo1, hi1 = _bounds(res, 0, ax1.finite)
    lo2, hi2 = _bounds(res, 1, ax2.finite)
    x1, x2 = df["x_1"].to_numpy(dtype=float), df["x_2"].to_numpy(dtype=float)
    miss1, miss2 = np.isnan(x1), np.isnan(x2)
    i1 = np.minimum(np.searchsorted(ax1.finite, np.where(miss1, ax1.finite[0], x1)), ax1.finite.size - 1)
    i2 = np.minimum(np.searchsorted(ax2.finite, np.where(miss2, ax2.finite[0], x2)), ax2.finite.size - 1)
    tiles = df.assign(xmin=np.where(miss1, ax1.band[0], lo1[i1]), xmax=np.where(miss1, ax1.band[1], hi1[i1]),
                      ymin=np.where(miss2, ax2.band[0], lo2[i2]), ymax=np.where(miss2, ax2.band[1], hi2[i2]))
    drop = opts.unsupported == "drop"
    shown_tiles = tiles[tiles["supported"]] if drop else tiles
    layers = [geom_rect(shown_tiles, aes(xmin="xmin", xmax="xmax", ymin="ymin", ymax="ymax", fill="yhat"))]
    names = ["tiles"]
    if opts.contours and not (direction(res, 0) or direction(res, 1)):  # a step surface has no contour lines
        lines = _contour_lines(res, df[~miss1 & ~miss2], ax1.finite, ax2.finite, drop=drop)
        if len(lines):
            ink = "#333333" if centered else "white"  # the diverging scale is light around 0
            layers.append(geom_path(lines, aes("x", "y", group="piece"), color=ink, alpha=0.6 if centered else 0.75,
                                    size=0.45))
            names.append("contours")
    if opts.unsupported == "shade" and not tiles["supported"].all():
        grey = tiles[~tiles["supported"]]
        layers.append(geom_rect(grey, aes(xmin="xmin", xmax="xmax", ymin="ymin", ymax="ymax"),
                                fill=UNSUPPORTED_FILL, alpha=0.7, color="none"))
        names.append("unsupported")
    if opts.rug:
        pts = _joint_rug(res, (lo1[0], hi1[-1]), (lo2[0], hi2[-1]), opts.seed)
        if len(pts):
            layers.append(geom_rug(pts, aes(x="x", y="y"), sides="bl", color="#555555", alpha=rug_alpha(
                pts.assign(feature_set="_")), size=0.3, length=0.03))
            names.append("rug")
    p = ggplot()
    for layer in layers:
        p = p + layer
    zero = (0.0, 0.0)
    p = (p + ax1.scale("x", expand=zero) + ax2.scale("y", expand=zero)
         + _fill_scale(centered, _legend_name(res, centered) + df.attrs.get("suffix", "")) + labs(x=f1, y=f2))
    return p, names


def contour_levels(z: np.ndarray) -> np.ndarray:
    """Contour levels at round numbers strictly inside the range of ``z``."""
    from mizani.breaks import breaks_extended

    lo, hi = float(np.nanmin(z)), float(np.nanmax(z))
    if not np.isfinite(lo) or hi - lo <= 1e-12 * max(1.0, abs(hi)):
        return np.array([])
    levels = np.asarray(breaks_extended(n=7)((lo, hi)), dtype=float)
    return levels[(levels > lo) & (levels < hi)]


def _contour_lines(res, df, g1, g2, drop: bool = False) -> pd.DataFrame:
    """Contour lines of each output's surface over the numeric grids ``g1`` x ``g2`` (``df``: its cells, the
    missing-value points left out); with ``drop``, not through unsupported cells."""
    import contourpy

    g1, g2 = np.asarray(g1, dtype=float), np.asarray(g2, dtype=float)
    if g1.size < 2 or g2.size < 2:
        return pd.DataFrame({"x": [], "y": [], "piece": [], "output": [], "level": []})
    levels = contour_levels(df["yhat"].to_numpy())
    parts = []
    for k, out in enumerate(res.outputs):
        here = df["output"] == out
        z = df.loc[here, "yhat"].to_numpy().reshape(g1.size, g2.size).T  # rows: feature 2
        if drop:
            z = np.ma.masked_array(z, mask=~df.loc[here, "supported"].to_numpy(dtype=bool).reshape(
                g1.size, g2.size).T)
        gen = contourpy.contour_generator(x=g1, y=g2, z=z, line_type=contourpy.LineType.Separate)
        for level in levels:
            for j, seg in enumerate(gen.lines(level)):
                if len(seg) < 2:
                    continue
                parts.append(pd.DataFrame({
                    "x": seg[:, 0], "y": seg[:, 1], "piece": f"{k}|{level:.12g}|{j}", "output": out,
                    "level": level,
                }))
    if not parts:
        return pd.DataFrame({"x": [], "y": [], "piece": [], "output": [], "level": []})
    lines = pd.concat(parts, ignore_index=True)
    lines["output"] = pd.Categorical(lines["output"], categories=list(dict.fromkeys(res.outputs)))
    return lines


def _joint_rug(res, range1, range2, seed) -> pd.DataFrame:
    f1, f2 = res.features
    if f1 not in res.feature_data or f2 not in res.feature_data:
        return pd.DataFrame({"x": [], "y": []})
    a = pd.to_numeric(pd.Series(np.asarray(res.feature_data[f1])), errors="coerce").to_numpy(dtype=float)
    b = pd.to_numeric(pd.Series(np.asarray(res.feature_data[f2])), errors="coerce").to_numpy(dtype=float)
    ok = (np.isfinite(a) & np.isfinite(b) & (a >= range1[0]) & (a <= range1[1]) & (b >= range2[0])
          & (b <= range2[1]))
    a, b = a[ok], b[ok]
    if a.size > RUG_MAX:
        pick = np.random.default_rng(seed).choice(a.size, RUG_MAX, replace=False)
        a, b = a[pick], b[pick]
    return pd.DataFrame({"x": a, "y": b})


def _format_values(v: np.ndarray) -> list[str]:
    v = np.asarray(v, dtype=float)
    top = float(np.nanmax(np.abs(v))) if v.size else 0.0
    digits = 3 if top == 0 else int(np.clip(2 - math.floor(math.log10(top)), 0, 4))
    return [f"{x:,.{digits}f}" for x in v]


def _tiles_categorical(res, df, opts, centered):
    from plotnine import (
        aes,
        geom_text,
        geom_tile,
        ggplot,
        labs,
        scale_color_identity,
        scale_x_discrete,
        scale_y_discrete,
    )

    f1, f2 = res.features
    levels1, levels2 = grid_labels(res, 0), grid_labels(res, 1)
    t = df.assign(
        a=pd.Categorical(df["label_1"].astype(str), categories=levels1),
        b=pd.Categorical(df["label_2"].astype(str), categories=levels2),
        text=_format_values(df["yhat"].to_numpy()),
    )
    z = t["yhat"].to_numpy()
    span = float(np.ptp(z)) or 1.0
    if centered:
        light = np.abs(z) / max(float(np.abs(z).max()), 1e-300) < 0.6
    else:
        light = (z - z.min()) / span > 0.55  # upper viridis is light: dark text
    t["ink"] = np.where(light, "#1a1a1a", "white")
    names = ["tiles"]
    if opts.unsupported == "drop":
        t = t[t["supported"]]
    p = ggplot(t, aes("a", "b")) + geom_tile(aes(fill="yhat"), color="white", size=0.8)
    if opts.unsupported == "shade" and not t["supported"].all():
        p = p + geom_tile(t[~t["supported"]], fill=UNSUPPORTED_FILL, alpha=0.85, color="white", size=0.8)
        t.loc[~t["supported"], "ink"] = "#1a1a1a"
        names.append("unsupported")
    names.append("values")
    p = (
        p
        + geom_text(t, aes(label="text", color="ink"), size=0.8 * opts.base_size)
        + scale_color_identity()
        + scale_x_discrete(expand=(0, 0))
        + scale_y_discrete(expand=(0, 0))
        + _fill_scale(centered, _legend_name(res, centered) + df.attrs.get("suffix", ""))
        + labs(x=f1, y=f2)
    )
    return p, names


def _lines_by_category(res, df, opts, centered):
    from plotnine import aes, geom_line, geom_point, geom_rug, ggplot, labs, scale_color_manual

    num = 0 if not res.categorical[0] else 1
    cat = 1 - num
    fn, fc = res.features[num], res.features[cat]
    levels = grid_labels(res, cat)
    step = direction(res, num)
    if step:
        from .plot_steps import outer_ends

        def span(g):
            lo, hi = outer_ends(res, num, g)
            return np.array([lo]), np.array([hi])
    else:
        def span(g):
            return np.array([np.min(g)]), np.array([np.max(g)])
    width, _ = _panel_inches(res, opts)
    axis = MissingAxis(res, num, span, POINT_GAP, 0.0, width, 0.8 * opts.base_size, across=True)
    t = df.assign(
        x=axis.position(df[f"x_{num + 1}"].to_numpy(dtype=float)),
        category=pd.Categorical(df[f"label_{cat + 1}"].astype(str), categories=levels),
    )
    t["curve"] = t["output"].astype(str) + "|" + t["category"].astype(str)
    missing = np.isnan(df[f"x_{num + 1}"].to_numpy(dtype=float))
    apart, t = t[missing], t[~missing]  # the missing-value point: one point per category, right of the lines
    palette = PALETTE if len(levels) <= len(PALETTE) else None
    p = ggplot(t, aes("x", "yhat", color="category", group="curve"))
    names = []
    if step:  # threshold grid: the model's steps (plot_steps), each category's curve on to the data's ends
        from plotnine import geom_step

        lo, hi = axis.lo, axis.hi
        keys = t.groupby("curve", sort=False)
        drawn = pd.concat([keys.head(1).assign(x=lo), t, keys.tail(1).assign(x=hi)]).sort_values("x", kind="stable")
        p = p + geom_step(drawn, direction=step, size=1.0)
        names.append("lines")
        kept = t
    elif opts.unsupported == "show" or t["supported"].all():
        p = p + geom_line(size=1.0)
        names.append("lines")
        kept = t
    else:  # solid lines along supported stretches only
        t["piece"] = t["curve"] + "|" + (~t["supported"]).groupby(t["curve"]).cumsum().astype(str)
        kept = t[t["supported"]]
        if opts.unsupported == "shade":
            p = p + geom_line(size=0.7, linetype="dotted")
            names.append("unsupported")
        p = p + geom_line(kept, aes(group="piece"), size=1.0)
        names.append("lines")
    if dotted(opts, res.grid_values[num]):  # dots on small grids only
        p = p + geom_point(kept, size=1.1)
        names.append("points")
    if len(apart):
        shown = apart if opts.unsupported != "drop" else apart[apart["supported"]]
        p = p + geom_point(shown, fill="white", size=2.6, stroke=1.1, shape="o")
        names.append("missing")
    if opts.rug:
        rug = rug_frame([dataclasses.replace(res, features=[fn], grid_values=[res.grid_values[num]],
                                              categorical=[False])], opts.seed)
        if len(rug):
            p = p + geom_rug(rug.drop(columns="feature_set"), aes(x="x"), inherit_aes=False, color="#555555",
                             alpha=rug_alpha(rug), size=0.3, length=0.035)
            names.append("rug")
    if palette is not None:
        p = p + scale_color_manual(values=palette[: len(levels)], name=fc)
    if len(apart) or axis.integer:
        p = p + axis.scale("x")
    p = p + labs(x=fn, y=value_label([res], centered) + df.attrs.get("suffix", ""), color=fc)
    return p, names


def compose(oneway, twoway: list, wide: list[bool]):
    """Stack the 1-way facets (if any) over the 2-way figures.

    Single-output 2-way figures go two to a row; faceted ones (``wide``) get a row each.
    """
    from plotnine import theme

    rows, pending = [], []
    for p, is_wide in zip(twoway, wide):
        if is_wide:
            rows.append(p)
            continue
        pending.append(p)
        if len(pending) == 2:
            rows.append(pending[0] | pending[1])
            pending = []
    if pending:  # an odd one out keeps the width of its neighbours above
        narrow = sum(not w for w in wide)
        if narrow > 1:
            from plotnine.composition import plot_spacer

            rows.append(pending[0] | plot_spacer())
        else:
            rows.append(pending[0])
    parts = ([oneway] if oneway is not None else []) + rows
    out = parts[0]
    for part in parts[1:]:
        out = out / part
    heights = [oneway.theme.getp("figure_size")[1]] if oneway is not None else []
    heights += [4.5] * len(rows)
    width = 9.0 if len(twoway) > 1 or any(wide) else 7.0
    if oneway is not None:
        width = max(width, oneway.theme.getp("figure_size")[0])
    return out & theme(figure_size=(width, min(24.0, sum(heights))))
