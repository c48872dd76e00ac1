"""Figures of 1-way results: PD lines, ICE curves and rugs; categorical features on a shared continuous axis."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from .plot_axis import clear_of_missing, integer_feature, numeric_ticks, text_width, tick_labels
from .plot_bands import (
    band_caption,
    band_columns,
    band_layers,
    colour_scale,
    ice_colours,
    interval_caption,
    interval_layers,
    place_missing,
    unsupported_bands,
)
from .plot_steps import direction, extend_steps, line_layers, outer_ends, step_edges
from .plot_style import (
    ICE_COLOR,
    PD_COLOR,
    UNSUPPORTED_FILL,
    PlotOptions,
    dotted,
    figure_size,
    grid_labels,
    piece_column,
    plot_frame,
    rug_alpha,
    rug_frame,
    theme_pdpx,
    value_label,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..core.result import PartialDependenceResult


def oneway_plot(results: list["PartialDependenceResult"], opts: PlotOptions, ncol: int | None = None):
    """One ggplot of 1-way results: facets per feature (and output), PD lines, ICE curves, rugs."""
    from plotnine import ggplot, labs

    df, notes = plot_frame(results, opts)
    centered, suffix = df.attrs["centered"], df.attrs["suffix"]
    df["feature_set"] = pd.Categorical(df["feature_set"].astype(str), categories=[r.feature_set for r in results])
    df["categorical"] = (df["type_1"] == "categorical").to_numpy(dtype=bool)
    nrow, ncol_ = _panels(results, ncol)
    size = figure_size(nrow, ncol_)
    axis = CategoricalAxis(results, panel_width=(size[0] - 1.3) / ncol_, font_size=0.8 * opts.base_size)
    df, shade = _placed(results, df, axis, opts)
    avg, ice, lines_avg = _drawn_parts(results, df, opts, centered)
    if opts.bands is not None:  # the bands replace the ICE curves, and the caption says what they show
        notes = [band_caption(opts.bands)]
    ice_layers, colour = _ice_layers(results, ice, opts)
    parts = [_shade_layers(shade),
             band_layers(avg, avg["missing"].to_numpy(), opts.bands) if opts.bands is not None else ([], []),
             ice_layers,
             interval_layers(avg, avg["missing"].to_numpy(), opts),
             _pd_layers(results, avg, lines_avg, opts),
             _rug_layers(results, opts),
             _padding_layers(axis, df)]
    layers = [layer for more, _ in parts for layer in more]
    names = [name for _, more_names in parts for name in more_names]
    axis.learn_ranges(layers, single=len(results) == 1)

    p = ggplot()
    for layer in layers:
        p = p + layer
    if colour is not None:
        p = p + colour
    p = _facets(p, results, opts, ncol_)
    p = p + labs(x=results[0].features[0], y=value_label(results, centered) + suffix,
                 caption=_caption(results, notes, names, opts))
    p = _themed(p, axis, opts, size, ncol_, several=len(results) > 1)
    p._pdpx_layers = names
    return p


def _panels(results, ncol: int | None) -> tuple[int, int]:
    """Rows and columns of panels: outputs by features in a grid, else the features (or the outputs) wrapped in
    ``ncol`` columns (default: up to 3)."""
    n_sets, n_outputs = len(results), len(results[0].outputs)
    if n_sets > 1 and n_outputs > 1:
        return n_outputs, n_sets
    if n_sets > 1 or n_outputs > 1:
        n = max(n_sets, n_outputs)
        ncol_ = ncol or min(n, 3)
        return math.ceil(n / ncol_), ncol_
    return 1, 1


def _placed(results, df: pd.DataFrame, axis: "CategoricalAxis", opts: PlotOptions):
    """The frame on the figure's x axis (categories and missing-value points placed, curves cut into pieces,
    threshold grids' steps run on to the data's ends) and the grey bands of unsupported grid steps (or None)."""
    df["x"] = axis.positions(df)
    ends = {r.feature_set: outer_ends(r, 0, r.grid_values[0]) for r in results if direction(r)}
    df["missing"] = place_missing(df, axis, ends)
    axis.learn_missing(df)
    df["row"] = df["row"].astype("float64")  # plotnine groups by a plain column
    if opts.unsupported != "drop":  # curves break only where points are left out
        df["seg"] = 0
    df["piece"] = piece_column(df)
    spans = {r.feature_set: step_edges(r, 0, g[np.isfinite(g)]) for r in results if direction(r)
             for g in [np.asarray(r.grid_values[0], dtype=np.float64)]}
    shade = unsupported_bands(df, spans) if opts.unsupported == "shade" else None
    return extend_steps(df, results), shade  # threshold grids: steps run on to the data's ends (res.steps)


def _drawn_parts(results, df: pd.DataFrame, opts: PlotOptions, centered: bool):
    """The PD points (with the bands' columns when ``bands`` replace the ICE curves), the ICE points, and the
    points of the PD lines (numeric grids, steps run on to the data's ends); unsupported points left out when
    ``unsupported="drop"``."""
    avg = df[df["kind"] == "average"]
    ice = df[df["kind"] == "individual"]
    lines_avg = avg[~avg["categorical"] & ~avg["missing"]]
    avg = avg[~avg["extension"]]
    if opts.bands is not None:
        avg = band_columns(results, avg, opts.bands, centered)
        ice = ice.iloc[:0]
    if opts.unsupported == "drop":
        avg, ice = avg[avg["supported"]], ice[ice["supported"]]
        lines_avg = lines_avg[lines_avg["supported"]]
    return avg, ice, lines_avg


def _shade_layers(shade) -> tuple[list, list[str]]:
    """Grey bands behind the grid steps no row of the data falls in."""
    if shade is None or not len(shade):
        return [], []
    from plotnine import aes, geom_rect

    return [geom_rect(shade, aes(xmin="xmin", xmax="xmax"), ymin=-np.inf, ymax=np.inf, fill=UNSUPPORTED_FILL,
                      alpha=0.22, color="none", inherit_aes=False)], ["unsupported"]


def _ice_layers(results, ice: pd.DataFrame, opts: PlotOptions):
    """The ICE curves (lines, and points at categories and missing-value points), lighter the more curves a panel
    holds, coloured by ``color_by`` if given. Returns (layers, names) and the colour scale (or None)."""
    from plotnine import aes, geom_point

    if not len(ice):
        return ([], []), None
    colour = None
    if opts.color_by is not None:
        values, continuous = ice_colours(results, ice, opts.color_by)
        ice = ice.assign(colour=values)
        colour = colour_scale(continuous, opts.color_by, 0 if continuous else len(values.cat.categories))
    n_curves = ice.groupby(["feature_set", "output"], observed=True)["row"].nunique().max()
    alpha = opts.ice_alpha or float(np.clip(3 / math.sqrt(max(n_curves, 1)), 0.1, 0.5))
    # one integer per (feature set, output, row), increasing with the row number
    n_out = len(ice["output"].cat.categories)
    stride = int(ice["row"].max()) + 1
    n_seg = int(ice["seg"].max()) + 1
    ice = ice.assign(curve=((ice["feature_set"].cat.codes.astype(np.int64) * n_out
                             + ice["output"].cat.codes.astype(np.int64)) * stride
                            + ice["row"].astype(np.int64)) * n_seg + ice["seg"].astype(np.int64))
    lines = ice[~ice["missing"]]
    if colour is None:
        layers = line_layers(lines, aes("x", "yhat", group="curve"), color=ICE_COLOR, alpha=alpha, size=0.35)
    else:
        alpha = opts.ice_alpha or max(alpha, 0.5)
        layers = line_layers(lines, aes("x", "yhat", group="curve", color="colour"), alpha=alpha, size=0.4)
    names = ["ice"] * len(layers)
    apart = ice["categorical"] | ice["missing"]
    if apart.any():
        points = ice[apart & ~ice["extension"]]
        if colour is None:
            layers.append(geom_point(points, aes("x", "yhat"), color=ICE_COLOR, alpha=alpha, size=0.9, stroke=0))
        else:
            layers.append(geom_point(points, aes("x", "yhat", color="colour"), alpha=alpha, size=0.9, stroke=0))
        names.append("ice_points")
    return (layers, names), colour


def _pd_layers(results, avg: pd.DataFrame, lines_avg: pd.DataFrame, opts: PlotOptions) -> tuple[list, list[str]]:
    """The PD: lines over numeric grids (dots on small grids), open circles at categories and missing-value
    points."""
    from plotnine import aes, geom_point

    layers, names = [], []
    num_avg = avg[~avg["categorical"] & ~avg["missing"]]
    cat_avg = avg[avg["categorical"] | avg["missing"]]
    if len(num_avg):
        more = line_layers(lines_avg, aes("x", "yhat", group="piece"), color=PD_COLOR, size=1.1)
        layers += more
        names += ["pd_line"] * len(more)
        small = [r.feature_set for r in results if dotted(opts, r.grid_values[0])]  # dots on small grids only
        dots = num_avg[num_avg["feature_set"].astype(str).isin(small)]
        if len(dots):
            layers.append(geom_point(dots, aes("x", "yhat"), color=PD_COLOR, size=1.3))
            names.append("pd_points")
    if len(cat_avg):
        layers.append(geom_point(cat_avg, aes("x", "yhat"), color=PD_COLOR, fill="white", size=3.2, stroke=1.3,
                                 shape="o"))
        names.append("pd_categories")
    return layers, names


def _rug_layers(results, opts: PlotOptions) -> tuple[list, list[str]]:
    """The data's values of the numeric features along the x axis (``rug``)."""
    from plotnine import aes, geom_rug

    rug = rug_frame(results, opts.seed) if opts.rug else None
    if rug is None or not len(rug):
        return [], []
    return [geom_rug(rug, aes(x="x"), color="#555555", alpha=rug_alpha(rug), size=0.3, length=0.035)], ["rug"]


def _padding_layers(axis: "CategoricalAxis", df: pd.DataFrame) -> tuple[list, list[str]]:
    """An invisible layer that widens the facets the axis needs room in (:meth:`CategoricalAxis.padding`)."""
    from plotnine import aes, geom_blank

    pad = axis.padding(df)
    return ([geom_blank(pad, aes(x="x"))], ["padding"]) if pad is not None else ([], [])


def _facets(p, results, opts: PlotOptions, ncol: int):
    """Facets per feature and output (a grid), per feature or per output (wrapped); none for one panel."""
    from plotnine import facet_grid, facet_wrap

    many_outputs = len(results[0].outputs) > 1
    free = "free_x" if opts.share_y else "free"
    if len(results) > 1 and many_outputs:
        return p + facet_grid("output ~ feature_set", scales=free)
    if len(results) > 1:
        return p + facet_wrap("feature_set", scales=free, ncol=ncol)
    if many_outputs:
        return p + facet_wrap("output", ncol=ncol, scales="fixed" if opts.share_y else "free_y")
    return p


def _caption(results, notes: list[str], names: list[str], opts: PlotOptions) -> str | None:
    """What the thin lines (or bands) are, what grey means and what the shaded interval is (``caption``)."""
    if not opts.caption:
        return None
    cap = next((n for n in notes if n), "")
    if "unsupported" in names:
        cap = "; ".join(c for c in (cap, "grey: no rows of the data within a grid step") if c)
    if {"pd_interval", "pd_interval_points"} & set(names):
        banded = next(r for r in results if r.lower is not None)
        cap = "; ".join(c for c in (cap, f"shaded: {interval_caption(banded)}") if c)
    return cap or None


def _themed(p, axis: "CategoricalAxis", opts: PlotOptions, size, ncol: int, several: bool):
    """The theme at this size; the x axis: no title when the strips name the features (``several``), labels
    slanted when category names would overlap, and the axis's own ticks where it has any."""
    from plotnine import scale_x_continuous, theme

    p = p + theme_pdpx(opts.base_size) + theme(figure_size=size)
    if several:  # the strips name the features
        from plotnine import element_blank

        p = p + theme(axis_title_x=element_blank())
    angle = axis.label_rotation(panel_width=(size[0] - 1.3) / ncol, font_size=0.8 * opts.base_size)
    if angle:
        from plotnine import element_text

        p = p + theme(axis_text_x=element_text(rotation=angle, ha="right" if angle < 90 else "center", va="top"))
    if axis.needed():  # after label_rotation: the scale keeps a copy of the axis
        p = p + scale_x_continuous(breaks=axis.breaks, labels=axis.labels)
    return p


class CategoricalAxis:
    """The x axis of 1-way figures: continuous positions for numeric and categorical features, and each facet's
    ticks and labels.

    Each categorical feature m gets positions ``offset_m + i`` (i: its category
    index) with ``offset_m`` far beyond every numeric feature's range, so numeric and
    categorical features share one ``facet_wrap``. Facets with free x scales share one
    breaks function, which plotnine calls with a panel's limits only: the axis learns the
    x range each facet draws (:meth:`learn_ranges`) and knows the facet by its limits.
    Then each facet gets its own ticks: category names, whole numbers for an integer
    feature (:func:`~.plot_axis.integer_breaks`), and the missing-value point's tick
    ``missing`` with room around it (numeric ticks too close to it are left out, and the
    panel runs on far enough for the label to stay inside it, clear of the next facet's).
    """

    def __init__(self, results, panel_width: float = 4.7, font_size: float = 8.8):
        self.any_categorical = any(r.categorical[0] for r in results)
        self.offsets: dict[str, float] = {}
        self.codes: dict[float, str] = {}
        self.sizes: dict[str, int] = {}
        self.order = [r.feature_set for r in results]
        self.index: dict[float, tuple[str, int]] = {}
        self.steps: dict[str, int] = {}
        self.missing: dict[float, float] = {}  # x of a missing-value point -> end of its numeric grid
        self.missing_of: dict[str, float] = {}  # feature set -> x of its missing-value point
        self.integer = {r.feature_set: integer_feature(r) for r in results}
        self.ranges: dict[str, tuple[float, float]] = {}  # feature set -> x range of what its facet draws
        self.panel_width = panel_width
        self.font_size = font_size
        self._labels: dict[tuple, list[str]] = {}
        if not self.any_categorical:
            return
        numeric_extent = max(
            [float(np.nanmax(np.abs(np.asarray(r.grid_values[0], dtype=float)))) for r in results
             if not r.categorical[0]] + [1.0]
        )
        n_levels = max(len(r.grid_values[0]) for r in results if r.categorical[0])
        base = 10.0 ** (math.ceil(math.log10(max(numeric_extent, n_levels, 1.0))) + 1)
        if base * (len(results) + 1) > 2.0 ** 50:
            raise PdpxError("numeric features too large to share a plot with categorical ones; plot them apart")
        for m, r in enumerate(results):
            if not r.categorical[0]:
                continue
            offset = 0.0 if len(results) == 1 else base * (m + 1)
            self.offsets[r.feature_set] = offset
            self.sizes[r.feature_set] = len(r.grid_values[0])
            for i, v in enumerate(grid_labels(r, 0)):
                self.codes[offset + i] = v
                self.index[offset + i] = (r.feature_set, i)

    def needed(self) -> bool:
        """Whether the figure needs this axis's breaks (categories, a missing point or an integer feature)."""
        return bool(self.any_categorical or self.missing or any(self.integer.values()))

    def add_missing(self, position: float, numeric_end: float) -> None:
        """Label the tick at ``position`` "missing" (the missing-value grid point of a numeric feature)."""
        self.missing[position] = numeric_end

    def learn_missing(self, df: pd.DataFrame) -> None:
        """Which facet each missing-value point belongs to (``df``: the drawn frame, ``missing`` marked)."""
        miss = df["missing"].to_numpy(dtype=bool)
        if miss.any():
            part = df.loc[miss, ["feature_set", "x"]].drop_duplicates("feature_set")
            self.missing_of = {str(fs): float(x) for fs, x in zip(part["feature_set"], part["x"])}

    def learn_ranges(self, layers, single: bool = False) -> None:
        """The x range each facet draws, from the layers' data (x, xmin, xmax, and error bars' widths): what
        plotnine's scale of that facet is trained on. ``single``: one feature set (facets share one scale)."""
        lows: dict[str, float] = {}
        highs: dict[str, float] = {}
        for layer in layers:
            data = getattr(layer, "data", None)
            if not isinstance(data, pd.DataFrame) or not len(data):
                continue
            half = float(layer.params.get("width", 0.0) or 0.0) / 2 if "width" in layer.params else 0.0
            sets = (pd.Series(self.order[0], index=data.index) if single or "feature_set" not in data
                    else data["feature_set"].astype(str))
            for col, shift in (("x", half), ("xmin", 0.0), ("xmax", 0.0)):
                if col not in data:
                    continue
                x = pd.to_numeric(data[col], errors="coerce")
                ok = np.isfinite(x.to_numpy(dtype=float))
                grouped = x[ok].groupby(sets[ok].to_numpy())
                for fs, lo in (grouped.min() - shift).items():
                    lows[fs] = min(lows.get(fs, np.inf), float(lo))
                for fs, hi in (grouped.max() + shift).items():
                    highs[fs] = max(highs.get(fs, -np.inf), float(hi))
        self.ranges = {fs: (lows[fs], highs[fs]) for fs in lows if fs in highs}

    def label_rotation(self, panel_width: float, font_size: float) -> int:
        """Angle for the x labels so category names do not overlap in a panel this wide (inches).

        0 when they fit flat, 35 when slanted labels fit, else 90; when even upright labels
        are too close, only every k-th category is labelled in that facet.
        """
        char = 0.6 * font_size / 72  # width of a character, inches (roughly)
        line = 1.4 * font_size / 72  # height of a line of text
        angle = 0
        for fs, n in self.sizes.items():
            off = self.offsets[fs]
            slot = 0.9 * panel_width / n
            if max(len(self.codes[off + i]) for i in range(n)) * char <= slot:
                continue
            angle = max(angle, 35)
            if line / math.sin(math.radians(35)) > slot:
                angle = 90
                if line > slot:
                    self.steps[fs] = math.ceil(line / slot)
        return angle

    def positions(self, df: pd.DataFrame) -> np.ndarray:
        x = df["x_1"].to_numpy(dtype=float).copy()
        if self.offsets:
            off = df["feature_set"].astype(str).map(self.offsets).fillna(0.0).to_numpy(dtype=float)
            x = x + off
        return x

    def padding(self, df: pd.DataFrame | None = None, categories: bool = True) -> pd.DataFrame | None:
        """Room the facets need beyond their points: half a category on each side of a categorical facet
        (``categories``), and past a missing-value point, half its label's width (so ``missing`` stays inside its
        panel)."""
        rows = []
        for fs, off in self.offsets.items() if categories else ():
            rows += [(fs, off - 0.5), (fs, off + self.sizes[fs] - 0.5)]
        if df is not None:
            half = text_width("missing", self.font_size) / 2 + 0.05  # inches
            share = min(half / max(self.panel_width, 0.5), 0.4)  # of the panel's width
            for fs, m in self.missing_of.items():
                lo = float(np.nanmin(df.loc[df["feature_set"].astype(str) == fs, "x"].to_numpy(dtype=float)))
                d = m - lo
                # the panel spans (lo, m + p) and plotnine adds 5% of that on each side: solve for the
                # room p past m that leaves ``share`` of the panel's width to the right of m
                if d > 0 and 1.1 * share > 0.05:
                    p = d * (1.1 * share - 0.05) / max(1.05 - 1.1 * share, 0.05)
                    rows.append((fs, m + p))
        if not rows:
            return None
        pad = pd.DataFrame(rows, columns=["feature_set", "x"])
        pad["feature_set"] = pd.Categorical(pad["feature_set"], categories=self.order)
        return pad

    def facet(self, limits) -> str | None:
        """The feature set whose facet has these x limits (plotnine's range of the panel), or None."""
        if len(self.order) == 1:  # one feature set: one x scale, whatever the facets (outputs)
            return self.order[0]
        a, b = float(limits[0]), float(limits[1])
        width = b - a
        best, error = None, np.inf
        for fs, (lo, hi) in self.ranges.items():
            span = hi - lo
            for elo, ehi in ((lo - 0.05 * span, hi + 0.05 * span), (lo, hi)):
                e = abs(a - elo) + abs(b - ehi)
                if e < error:
                    best, error = fs, e
        if best is None or not width > 0 or error > 1e-6 * width:
            return None
        return best

    def breaks(self, limits):
        """The ticks of the facet with these limits (see the class docstring); their labels are kept for
        :meth:`labels`."""
        lo, hi = float(limits[0]), float(limits[1])
        fs = self.facet(limits)
        if fs is None:
            return self._unknown_breaks(limits)
        if fs in self.offsets:
            off, step = self.offsets[fs], self.steps.get(fs, 1)
            ticks = [off + i for i in range(self.sizes[fs]) if i % step == 0]
            return self._keep(ticks, [self.codes[t] for t in ticks], lo, hi)
        m = self.missing_of.get(fs)
        top = self.missing[m] if m is not None and m in self.missing else hi
        numeric = numeric_ticks(lo, top, self.integer.get(fs, False))
        texts = tick_labels(numeric)
        if len(self.order) > 1:  # facets side by side: no label reaches past its panel into the next one's
            inside = self._inside(numeric, texts, lo, hi)
            numeric, texts = [numeric[i] for i in inside], [texts[i] for i in inside]
        if m is None:
            return self._keep(numeric, texts, lo, hi)
        keep = self._clear_of(numeric, texts, m, hi - lo)
        return self._keep([numeric[i] for i in keep] + [m], [texts[i] for i in keep] + ["missing"], lo, hi)

    def labels(self, breaks):
        """The labels of ``breaks``: as :meth:`breaks` chose them for its facet."""
        breaks = [float(b) for b in breaks]
        known = self._labels.get(tuple(round(b, 12) for b in breaks))
        if known is not None:
            return list(known)
        numeric = [b for b in breaks if b not in self.codes and b not in self.missing]
        formatted = dict(zip(numeric, tick_labels(numeric))) if numeric else {}
        return [self.codes.get(b, "missing" if b in self.missing else formatted.get(b, "")) for b in breaks]

    # -- helpers of breaks
    def _clear_of(self, numeric, texts, m: float, width: float) -> list[int]:
        """Positions of the numeric ticks whose labels stay clear of the ``missing`` label at ``m``."""
        per_unit = self.panel_width / max(width, 1e-300)  # inches per unit of x
        return clear_of_missing(numeric, texts, m, per_unit, self.font_size)

    def _inside(self, numeric, texts, lo: float, hi: float) -> list[int]:
        """Positions of the numeric ticks whose labels end within a hair of the panel's edges."""
        per_unit = self.panel_width / max(hi - lo, 1e-300)
        slack = 0.04  # inches a label may pass its panel's edge (facets stand further apart)
        return [i for i, (b, t) in enumerate(zip(numeric, texts))
                if min(b - lo, hi - b) * per_unit >= text_width(t, self.font_size) / 2 - slack]

    def _keep(self, ticks, texts, lo: float, hi: float) -> list[float]:
        eps = 1e-9 * max(1.0, abs(lo), abs(hi))
        pairs = [(float(t), x) for t, x in zip(ticks, texts) if lo - eps <= t <= hi + eps]
        ticks = [t for t, _ in pairs]
        self._labels[tuple(round(t, 12) for t in ticks)] = [x for _, x in pairs]
        return ticks

    def _unknown_breaks(self, limits):
        """Ticks for limits no facet is known by: the categories within them, else numbers (whole numbers when
        every numeric facet is an integer feature) and a missing-value point at their right end."""
        lo, hi = float(limits[0]), float(limits[1])
        inside = [c for c in self.codes if lo - 1e-9 <= c <= hi + 1e-9
                  and self.index[c][1] % self.steps.get(self.index[c][0], 1) == 0]
        if inside:
            return self._keep(inside, [self.codes[c] for c in inside], lo, hi)
        numeric_sets = [fs for fs in self.order if fs not in self.offsets]
        integer = bool(numeric_sets) and all(self.integer.get(fs, False) for fs in numeric_sets)
        gaps = [m for m in self.missing if hi - 0.25 * (hi - lo) <= m <= hi + 1e-9]
        if gaps:  # numeric breaks up to the grid's end, then the missing point
            m = max(gaps)
            numeric = numeric_ticks(lo, self.missing[m], integer)
            texts = tick_labels(numeric)
            keep = self._clear_of(numeric, texts, m, hi - lo)
            return self._keep([numeric[i] for i in keep] + [m], [texts[i] for i in keep] + ["missing"], lo, hi)
        numeric = numeric_ticks(lo, hi, integer)
        return self._keep(numeric, tick_labels(numeric), lo, hi)
