"""Figures of what the average hides: heterogeneity (bars and curves), regions (their curves side by side) and the
explained-variance ledger.

Styled like every pdpx figure (:mod:`.plot_style`). They draw what the results of
:mod:`pdpx.explain.ice_spread`, :mod:`pdpx.explain.subgroups` and :mod:`pdpx.explain.explained`
hold and compute nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from .plot_explain import bars
from .plot_style import PALETTE, PD_COLOR, theme_pdpx

#: Heterogeneity figures ``which`` takes.
WHICH = ("bars", "curves")


def plot_heterogeneity(result, which: str = "bars", *, top: int | None = None, title: str | None = None,
                       base_size: float = 11):
    """:func:`pdpx.heterogeneity`'s result: ``"bars"`` (the scalar by feature, largest on top) or ``"curves"``
    (each feature's variance of the centered ICE curves over its grid, one panel per feature)."""
    if which not in WHICH:
        raise PdpxError(f"plot(): which must be one of {list(WHICH)}, got {which!r}")
    caption = f"variance across {result.n_rows:,} rows of the ICE curves centered on their own mean ({result.method})"
    if which == "bars":
        return bars(result.table, "heterogeneity", "heterogeneity (mean over the grid of the variance)",
                     title or "Heterogeneity of each feature's ICE curves", caption, top, base_size, "{:.3g}")
    from plotnine import aes, facet_wrap, geom_line, geom_point, ggplot, labs, theme

    frame = result.to_frame()
    order = result.table.drop_duplicates("feature")["feature"].tolist()
    if top is not None:
        order = order[:top]
    frame = frame[frame["feature"].isin(order)].copy()
    frame["feature"] = pd.Categorical(frame["feature"], categories=order, ordered=True)
    frame["x"] = frame["x"].astype(np.float64)
    p = (ggplot(frame, aes("x", "variance", group="output"))
         + geom_line(aes(color="output"), size=0.8) + geom_point(aes(color="output"), size=1.2)
         + facet_wrap("~feature", scales="free_x")
         + labs(x="feature value (categories: their position)", y="variance of the centered ICE curves",
                title=title or "Where along each feature the ICE curves disagree", caption=caption)
         + theme_pdpx(base_size=base_size))
    p += _colors(frame["output"].unique())
    ncol = min(len(order), 3)
    nrow = int(np.ceil(len(order) / 3))
    return p + theme(figure_size=(3.4 * ncol + 0.6, 2.6 * nrow + 1.0))


def _colors(outputs):
    from plotnine import scale_color_manual

    values = {str(o): PALETTE[i % len(PALETTE)] for i, o in enumerate(outputs)}
    if len(values) == 1:
        values = {k: PD_COLOR for k in values}
    return scale_color_manual(values=values, guide=None if len(values) == 1 else "legend")
