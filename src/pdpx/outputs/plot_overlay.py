"""Figures of a :class:`~pdpx.core.stacked.StackedResult`: one coloured PD curve per model or group, overlaid.

One panel per feature set (facets per output for several outputs); a legend names
the models or groups. The bootstrap interval (``interval=``) is a ribbon per curve;
the missing-value grid point is drawn apart under a ``missing`` tick, as in
:mod:`.plot_oneway`. Each model's or group's grid points without supporting rows
(its ``res.unsupported``) are drawn dotted (``unsupported="shade"``), left out
(``"drop"``) or like the others (``"show"``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from .plot_bands import place_missing
from .plot_oneway import CategoricalAxis
from .plot_steps import direction, extend_stacked, line_layers, outer_ends
from .plot_style import (
    PALETTE,
    PlotOptions,
    check_plot_options,
    dotted,
    figure_size,
    theme_pdpx,
    unsupported_mask,
    value_label,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..core.stacked import StackedResult

#: The plot options an overlay understands (ICE curves are not drawn: one curve per model or group).
OVERLAY_OPTIONS = ("points", "share_y", "caption", "base_size", "ribbon", "centered", "unsupported")


def overlay_plot(stacked: "StackedResult", **options):
    """An undrawn ``ggplot``: the curves of every model or group in one panel, coloured, with a legend."""
    from plotnine import (
        aes,
        element_text,
        facet_wrap,
        geom_blank,
        geom_errorbar,
        geom_point,
        geom_ribbon,
        ggplot,
        labs,
        scale_color_manual,
        scale_fill_manual,
        scale_x_continuous,
        theme,
    )

    check_plot_options("plot", options)
    ignored = sorted(set(options) - set(OVERLAY_OPTIONS))
    if ignored:
        raise PdpxError(f"plot(): {ignored} do not apply to overlaid {stacked.column}s; the overlay's options are "
                        f"{list(OVERLAY_OPTIONS)} (plot one of them, e.g. res[{stacked.labels[0]!r}].plot(...))")
    opts = PlotOptions(**options)
    if len(stacked.features) != 1:
        raise PdpxError(f"cannot overlay 2-way results ({stacked.feature_set}); plot each "
                        f"{stacked.column} apart (res[{stacked.labels[0]!r}].plot()) or use res.to_frame()")
    df = stacked.to_frame(kind="average")
    bad = np.concatenate([np.tile(unsupported_mask(r), len(r.outputs)) for r in stacked.results])
    df["supported"] = ~bad
    centered = stacked.results[0].centered
    if opts.centered and not centered:
        df["yhat"] = df["yhat"] - df.groupby([stacked.column, "output"], observed=True)["yhat"].transform("first")
        for b in ("lower", "upper"):
            if b in df:
                df[b] = float("nan")
        centered = True
    df["categorical"] = (df["type_1"] == "categorical").to_numpy(dtype=bool)
    k = len(stacked.outputs)
    ncol = min(k, 3)
    nrow = math.ceil(k / ncol)
    w, h = figure_size(nrow, ncol)
    axis = CategoricalAxis([stacked.results[0]], panel_width=(w - 1.3) / ncol, font_size=0.8 * opts.base_size)
    df["x"] = axis.positions(df)
    ends = [outer_ends(r, 0, r.grid_values[0]) for r in stacked.results if direction(r)]
    miss = place_missing(df, axis, {stacked.feature_set: (min(e[0] for e in ends), max(e[1] for e in ends))}
                         if ends else None)
    df["missing"] = miss
    axis.learn_missing(df)
    df["output"] = pd.Categorical(df["output"].astype(str), categories=list(dict.fromkeys(stacked.outputs)))
    by = stacked.column
    line = df[~df["categorical"] & ~df["missing"]]
    points = df[df["categorical"] | df["missing"]]
    marked = opts.unsupported != "show" and bad.any()
    full_line = line
    if marked:  # solid lines, points and ribbons along supported stretches only
        keys = [by, "output"]
        line = line.assign(piece=line[by].astype(str) + "|" + line["output"].astype(str) + "|"
                           + (~line["supported"]).groupby([line[k] for k in keys], observed=True).cumsum().astype(str))
        line = line[line["supported"]]
        points = points[points["supported"]]
    else:
        line = line.assign(piece=line[by].astype(str))
    colours = (PALETTE * (len(stacked.labels) // len(PALETTE) + 1))[:len(stacked.labels)]
    line, full_line = extend_stacked(line, stacked), extend_stacked(full_line, stacked)
    ends, line = line, line[~line["extension"]]  # threshold grids: steps on to the data's ends (plot_steps)

    layers, names = [], []
    has_interval = opts.ribbon and "lower" in df and df["lower"].notna().any()
    if has_interval and len(line):
        layers.append(geom_ribbon(line, aes("x", ymin="lower", ymax="upper", fill=by, group="piece"), alpha=0.18,
                                  outline_type="full", color="none"))
        names.append("pd_interval")
    if has_interval and len(points):
        layers.append(geom_errorbar(points, aes("x", ymin="lower", ymax="upper", color=by), width=0.2, size=0.6))
        names.append("pd_interval_points")
    if marked and opts.unsupported == "shade" and len(full_line):
        more = line_layers(full_line, aes("x", "yhat", color=by, group=by), size=0.6, linetype="dotted")
        layers += more
        names += ["unsupported"] * len(more)
    if len(line):
        more = line_layers(ends, aes("x", "yhat", color=by, group="piece"), size=1.0)
        layers += more
        names += ["pd_line"] * len(more)
        if dotted(opts, stacked.grid_values[0]):  # dots on small grids only
            layers.append(geom_point(line, aes("x", "yhat", color=by), size=1.0))
            names.append("pd_points")
    if len(points):
        layers.append(geom_point(points, aes("x", "yhat", color=by), size=2.8, shape="D"))
        names.append("pd_categories")
    pad = axis.padding(df, categories=False)
    if pad is not None:  # room for the missing point's label
        layers.append(geom_blank(pad, aes(x="x")))
        names.append("padding")
    p = ggplot()
    for layer in layers:
        p = p + layer
    p = p + scale_color_manual(values=colours, name=by) + scale_fill_manual(values=colours, name=by)
    if k > 1:
        p = p + facet_wrap("output", ncol=ncol, scales="fixed" if opts.share_y else "free_y")
    cap = None
    if opts.caption and has_interval:
        cap = f"band: {100 * stacked.results[0].interval:g}% bootstrap interval of the PD over the rows"
    if opts.caption and "unsupported" in names:
        cap = "; ".join(c for c in (cap, f"dotted: grid points without rows of that {by}") if c)
    p = p + labs(x=stacked.features[0], y=value_label(stacked.results, centered), caption=cap)
    p = p + theme_pdpx(opts.base_size) + theme(figure_size=(w + 1.4, h))
    if axis.needed():
        if axis.any_categorical:
            p = p + theme(axis_text_x=element_text(rotation=30, ha="right"))
        p = p + scale_x_continuous(breaks=axis.breaks, labels=axis.labels)
    p._pdpx_layers = names
    return p
