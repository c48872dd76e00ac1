"""Figures of 1-way results: PD lines, ICE curves and rugs; categorical features on a shared continuous axis."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from .plot_bands import (
    band_caption,
    band_columns,
    band_layers,
    colour_scale,
    ice_colours,
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
    figure_size,
    grid_labels,
    piece_column,
    rescale_values,
    result_frame,
    rug_alpha,
    rug_frame,
    theme_pdpx,
    value_label,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..core.result import PartialDependenceResult


def oneway_plot(results: list["PartialDependenceResult"], opts: PlotOptions, ncol: int | None = None):
    """One ggplot of 1-way results: facets per feature (and output), PD lines, ICE curves, rugs."""
    from plotnine import (
        aes,
        facet_grid,
        facet_wrap,
        geom_blank,
        geom_point,
        geom_rug,
        ggplot,
        labs,
        scale_x_continuous,
        theme,
    )

    frames, notes = [], []
    for r in results:
        df, note = result_frame(r, opts)
        frames.append(df)
        notes.append(note)
    centered = bool(frames[0].attrs["centered"])
    df = pd.concat(frames, ignore_index=True)
    suffix = rescale_values(df)
    sets = [r.feature_set for r in results]
    df["feature_set"] = pd.Categorical(df["feature_set"].astype(str), categories=sets)
    df["output"] = pd.Categorical(df["output"].astype(str), categories=list(dict.fromkeys(results[0].outputs)))
    df["categorical"] = (df["type_1"] == "categorical").to_numpy(dtype=bool)

    axis = CategoricalAxis(results)
    df["x"] = axis.positions(df)
    ends = {r.feature_set: outer_ends(r, 0, r.grid_values[0]) for r in results if direction(r)}
    df["missing"] = place_missing(df, axis, ends)
    df["row"] = df["row"].astype("float64")  # plotnine groups by a plain column
    if opts.unsupported != "drop":  # curves break only where points are left out
        df["seg"] = 0
    df["piece"] = piece_column(df)
    spans = {r.feature_set: step_edges(r, 0, g[np.isfinite(g)]) for r in results if direction(r)
             for g in [np.asarray(r.grid_values[0], dtype=np.float64)]}
    shade = unsupported_bands(df, spans) if opts.unsupported == "shade" else None
    df = extend_steps(df, results)  # threshold grids: steps run on to the data's ends (res.steps)

    avg = df[df["kind"] == "average"]
    ice = df[df["kind"] == "individual"]
    lines_avg = avg[~avg["categorical"] & ~avg["missing"]]
    avg = avg[~avg["extension"]]
    if opts.bands is not None:  # the bands replace the ICE lines
        avg = band_columns(results, avg, opts.bands, centered)
        ice = ice.iloc[:0]
        notes = [band_caption(opts.bands)]
    if opts.unsupported == "drop":
        avg, ice = avg[avg["supported"]], ice[ice["supported"]]
        lines_avg = lines_avg[lines_avg["supported"]]
    num_avg = avg[~avg["categorical"] & ~avg["missing"]]
    cat_avg = avg[avg["categorical"] | avg["missing"]]
    cat_ice = ice[ice["categorical"] | ice["missing"]]

    layers, names = [], []
    if shade is not None and len(shade):
        from plotnine import geom_rect

        layers.append(geom_rect(shade, aes(xmin="xmin", xmax="xmax"), ymin=-np.inf, ymax=np.inf,
                                fill=UNSUPPORTED_FILL, alpha=0.22, color="none", inherit_aes=False))
        names.append("unsupported")
    if opts.bands is not None:
        more, more_names = band_layers(avg, avg["missing"].to_numpy(), opts.bands)
        layers += more
        names += more_names
    colour = None
    if len(ice) and opts.color_by is not None:
        values, continuous = ice_colours(results, ice, opts.color_by)
        ice = ice.assign(colour=values)
        cat_ice = ice[ice["categorical"] | ice["missing"]]
        colour = colour_scale(continuous, opts.color_by, 0 if continuous else len(values.cat.categories))
    if len(ice):
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
            more = line_layers(lines, aes("x", "yhat", group="curve"), color=ICE_COLOR, alpha=alpha, size=0.35)
        else:
            alpha = opts.ice_alpha or max(alpha, 0.5)
            more = line_layers(lines, aes("x", "yhat", group="curve", color="colour"), alpha=alpha, size=0.4)
        layers += more
        names += ["ice"] * len(more)
        if len(cat_ice):
            cat_ice = ice[(ice["categorical"] | ice["missing"]) & ~ice["extension"]]
            if colour is None:
                layers.append(geom_point(cat_ice, aes("x", "yhat"), color=ICE_COLOR, alpha=alpha, size=0.9, stroke=0))
            else:
                layers.append(geom_point(cat_ice, aes("x", "yhat", color="colour"), alpha=alpha, size=0.9, stroke=0))
            names.append("ice_points")
    more, more_names = interval_layers(avg, avg["missing"].to_numpy(), opts)
    layers += more
    names += more_names
    if len(num_avg):
        more = line_layers(lines_avg, aes("x", "yhat", group="piece"), color=PD_COLOR, size=1.1)
        layers += more
        names += ["pd_line"] * len(more)
        if opts.points:
            layers.append(geom_point(num_avg, aes("x", "yhat"), color=PD_COLOR, size=1.3))
            names.append("pd_points")
    if len(cat_avg):
        layers.append(geom_point(cat_avg, aes("x", "yhat"), color=PD_COLOR, fill="white", size=3.2, stroke=1.3,
                                 shape="o"))
        names.append("pd_categories")
    if opts.rug:
        rug = rug_frame(results, opts.seed)
        if len(rug):
            layers.append(geom_rug(rug, aes(x="x"), color="#555555", alpha=rug_alpha(rug), size=0.3,
                                   length=0.035))
            names.append("rug")
    pad = axis.padding()
    if pad is not None:
        layers.append(geom_blank(pad, aes(x="x")))
        names.append("padding")

    p = ggplot()
    for layer in layers:
        p = p + layer
    if colour is not None:
        p = p + colour
    many_outputs = len(results[0].outputs) > 1
    n_sets = len(results)
    free = "free_x" if opts.share_y else "free"
    if n_sets > 1 and many_outputs:
        p = p + facet_grid("output ~ feature_set", scales=free)
        nrow, ncol_ = len(results[0].outputs), n_sets
    elif n_sets > 1:
        ncol_ = ncol or min(n_sets, 3)
        nrow = math.ceil(n_sets / ncol_)
        p = p + facet_wrap("feature_set", scales=free, ncol=ncol_)
    elif many_outputs:
        k = len(results[0].outputs)
        ncol_ = ncol or min(k, 3)
        nrow = math.ceil(k / ncol_)
        p = p + facet_wrap("output", ncol=ncol_, scales="fixed" if opts.share_y else "free_y")
    else:
        nrow = ncol_ = 1

    cap = next((n for n in notes if n), "") if opts.caption else ""
    if opts.caption and "unsupported" in names:
        cap = "; ".join(c for c in (cap, "grey: no rows of the data within a grid step") if c)
    if opts.caption and {"pd_interval", "pd_interval_points"} & set(names):
        level = next(r.interval for r in results if r.interval is not None)
        cap = "; ".join(c for c in (cap, f"shaded: {100 * level:g}% bootstrap interval of the PD") if c)
    p = p + labs(x=results[0].features[0], y=value_label(results, centered) + suffix, caption=cap or None)
    size = figure_size(nrow, ncol_)
    p = p + theme_pdpx(opts.base_size) + theme(figure_size=size)
    if n_sets > 1:  # the strips name the features
        from plotnine import element_blank

        p = p + theme(axis_title_x=element_blank())
    angle = axis.label_rotation(panel_width=(size[0] - 1.3) / ncol_, font_size=0.8 * opts.base_size)
    if angle:
        from plotnine import element_text

        p = p + theme(axis_text_x=element_text(rotation=angle, ha="right" if angle < 90 else "center", va="top"))
    if axis.any_categorical or axis.missing:  # after label_rotation: the scale keeps a copy of the axis
        p = p + scale_x_continuous(breaks=axis.breaks, labels=axis.labels)
    p._pdpx_layers = names
    return p


class CategoricalAxis:
    """Continuous x positions for a mix of numeric and categorical features.

    Each categorical feature m gets positions ``offset_m + i`` (i: its category
    index) with ``offset_m`` far beyond every numeric feature's range, so one
    breaks function and one labels function serve every facet: positions in a
    categorical block get the category names, anything else plotnine's numbers.
    """

    def __init__(self, results):
        self.any_categorical = any(r.categorical[0] for r in results)
        self.offsets: dict[str, float] = {}
        self.codes: dict[float, str] = {}
        self.sizes: dict[str, int] = {}
        self.order = [r.feature_set for r in results]
        self.index: dict[float, tuple[str, int]] = {}
        self.steps: dict[str, int] = {}
        self.missing: dict[float, float] = {}  # x of a missing-value point -> end of its numeric grid
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

    def add_missing(self, position: float, numeric_end: float) -> None:
        """Label the tick at ``position`` "missing" (the missing-value grid point of a numeric feature)."""
        self.missing[position] = numeric_end

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

    def padding(self) -> pd.DataFrame | None:
        """Half a category of room on each side of a categorical facet."""
        if not self.offsets:
            return None
        rows = []
        for fs, off in self.offsets.items():
            rows += [(fs, off - 0.5), (fs, off + self.sizes[fs] - 0.5)]
        pad = pd.DataFrame(rows, columns=["feature_set", "x"])
        pad["feature_set"] = pd.Categorical(pad["feature_set"], categories=self.order)
        return pad

    def breaks(self, limits):
        from mizani.breaks import breaks_extended

        lo, hi = limits
        inside = [c for c in self.codes if lo - 1e-9 <= c <= hi + 1e-9
                  and self.index[c][1] % self.steps.get(self.index[c][0], 1) == 0]
        if inside:
            return inside
        gaps = [m for m in self.missing if lo - 1e-9 <= m <= hi + 1e-9]
        if gaps:  # numeric breaks up to the grid's end, then the missing point
            m = min(gaps)
            top = self.missing[m]
            numeric = [b for b in breaks_extended()((lo, top)) if lo - 1e-9 <= b <= top + 1e-9]
            return numeric + sorted(gaps)
        return breaks_extended()(limits)

    def labels(self, breaks):
        from mizani.labels import label_number

        breaks = list(breaks)
        numeric = [b for b in breaks if b not in self.codes]
        formatted = dict(zip(numeric, label_number()(numeric))) if numeric else {}
        return [self.codes.get(b, "missing" if b in self.missing else formatted.get(b, "")) for b in breaks]


