"""Figures of :mod:`pdpx.explain`: importance bars, Friedman's H as a heat map and as bars.

Styled like every pdpx figure (:mod:`.plot_style`): ``theme_pdpx``, the Okabe-Ito
colours, a quiet caption.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from .plot_style import PALETTE, PD_COLOR, theme_pdpx

if TYPE_CHECKING:  # pragma: no cover
    from ..explain.interaction import HStatistic

#: Bars of importance and overall H.
BAR_COLOR = PALETTE[0]


def _ordered(frame: pd.DataFrame, column: str, value: str) -> pd.DataFrame:
    """``column`` as a category ordered so that the largest mean ``value`` is drawn on top."""
    order = frame.groupby(column, sort=False)[value].mean().sort_values(ascending=True).index.tolist()
    out = frame.copy()
    out[column] = pd.Categorical(out[column].astype(str), categories=[str(c) for c in order], ordered=True)
    return out


def bars(frame: pd.DataFrame, value: str, label: str, title: str, caption: str, top: int | None,
          base_size: float, fmt: str):
    """Horizontal bars of ``value`` per feature (largest on top; one panel per output), labelled with ``fmt``."""
    from plotnine import aes, coord_flip, facet_wrap, geom_col, geom_text, ggplot, labs, scale_y_continuous

    if frame.empty:
        raise PdpxError(f"{title}: nothing to draw (the frame is empty)")
    key = "feature"
    if top is not None:
        keep = frame.groupby(key, sort=False)[value].max().sort_values(ascending=False).index[:top]
        frame = frame[frame[key].isin(keep)]
    df = _ordered(frame, key, value)
    df["label"] = [fmt.format(v) for v in df[value]]
    peak = float(df[value].max()) if len(df) else 1.0
    p = (
        ggplot(df, aes(key, value))
        + geom_col(fill=BAR_COLOR, width=0.7)
        + geom_text(aes(label="label"), ha="left", nudge_y=0.01 * (peak or 1.0), size=0.65 * base_size,
                    color="#444444")
        + coord_flip()
        + scale_y_continuous(expand=(0, 0, 0.15, 0))
        + labs(x="", y=label, title=title, caption=caption)
        + theme_pdpx(base_size=base_size)
    )
    n_out = df["output"].nunique() if "output" in df else 1
    if n_out > 1:
        p += facet_wrap("~output", ncol=min(n_out, 3))
    n_feat = df[key].nunique()
    width = 6.4 if n_out == 1 else min(4.0 * min(n_out, 3), 12)
    height = max(2.2, 0.32 * n_feat * (1 if n_out <= 3 else int(np.ceil(n_out / 3))) + 1.3)
    from plotnine import theme

    return p + theme(figure_size=(width, height))


def plot_importance(frame: pd.DataFrame, *, top: int | None = None, title: str | None = None,
                    base_size: float = 11):
    """Horizontal bars of :func:`pdpx.importance`'s frame, most important on top.

    Parameters
    ----------
    frame : DataFrame
        What :func:`pdpx.importance` returns (``feature``, ``output``, ``importance``).
    top : int, optional
        Draw only the ``top`` most important features.
    title : str, optional
    base_size : float, default 11
    """
    if not isinstance(frame, pd.DataFrame) or not {"feature", "importance"} <= set(frame.columns):
        raise PdpxError("plot_importance(): pass the DataFrame pdpx.importance returns "
                        "(columns feature, output, importance)")
    kind = str(frame["kind"].iloc[0]) if "kind" in frame and len(frame) else "pd"
    what = "ICE curves" if kind == "ice" else "PD curve"
    caption = (f"importance: sd of the {what} over its grid (numeric), range / 4 (categorical); "
               "Greenwell et al. 2018")
    return bars(frame, "importance", "importance", title or "Feature importance", caption, top, base_size,
                 "{:.3g}")


def plot_h_statistic(h: "HStatistic", which: str = "auto", *, top: int | None = None, title: str | None = None,
                     base_size: float = 11):
    """Friedman's H: ``"pairwise"`` a heat map of ``h`` per pair, ``"overall"`` bars per feature.

    ``"auto"``: pairwise when there are pairs, else overall. ``top`` keeps the
    features with the largest overall H (bars) or appearing in the strongest pairs (heat map).
    """
    if which not in ("auto", "pairwise", "overall"):
        raise PdpxError(f"plot_h_statistic(): which must be 'auto', 'pairwise' or 'overall', got {which!r}")
    if which == "auto":
        which = "pairwise" if len(h.pairwise) else "overall"
    caption = f"Friedman's H on {h.n_rows:,} rows ({h.method})"
    if which == "overall":
        return bars(h.overall, "h", "overall H (share of the variance of f due to interactions of the feature)",
                     title or "Interaction strength of each feature", caption, top, base_size, "{:.3f}")
    return _heat(h.pairwise, top, title or "Pairwise interaction strength (Friedman's H)", caption, base_size)


def _heat(pw: pd.DataFrame, top: int | None, title: str, caption: str, base_size: float):
    from plotnine import (
        aes,
        element_text,
        facet_wrap,
        geom_text,
        geom_tile,
        ggplot,
        labs,
        scale_fill_gradient,
        theme,
    )

    if pw.empty:
        raise PdpxError("plot_h_statistic(): there are no pairs to draw; use which='overall'")
    pw = pw.copy()
    strength = pd.concat([pw[["feature_1", "h"]].rename(columns={"feature_1": "f"}),
                          pw[["feature_2", "h"]].rename(columns={"feature_2": "f"})])
    order = strength.groupby("f")["h"].max().sort_values(ascending=False).index.astype(str).tolist()
    if top is not None:
        order = order[:top]
        pw = pw[pw.feature_1.astype(str).isin(order) & pw.feature_2.astype(str).isin(order)]
    rank = {f: i for i, f in enumerate(order)}
    # the lower triangle: the feature ranked higher on the x axis
    a, b = pw.feature_1.astype(str), pw.feature_2.astype(str)
    swap = np.array([rank[x] > rank[y] for x, y in zip(a, b)], dtype=bool)
    pw["x"] = np.where(swap, b, a)
    pw["y"] = np.where(swap, a, b)
    pw["x"] = pd.Categorical(pw["x"], categories=order, ordered=True)
    pw["y"] = pd.Categorical(pw["y"], categories=order[::-1], ordered=True)
    pw["label"] = [f"{v:.2f}" for v in pw["h"]]
    pw["ink"] = np.where(pw["h"] > 0.6 * max(float(pw["h"].max()), 1e-12), "light", "dark")
    p = (
        ggplot(pw, aes("x", "y", fill="h"))
        + geom_tile(color="white", size=0.6)
        + geom_text(aes(label="label", color="ink"), size=0.7 * base_size, show_legend=False)
        + scale_fill_gradient(low="#f7f7f7", high=PD_COLOR, limits=(0, max(float(pw["h"].max()), 1e-12)),
                              name="H")
        + labs(x="", y="", title=title, caption=caption)
        + theme_pdpx(base_size=base_size)
        + theme(axis_text_x=element_text(rotation=30, ha="right"), panel_grid_major=None)
    )
    from plotnine import scale_color_manual

    p += scale_color_manual(values={"light": "white", "dark": "#222222"}, guide=None)
    n_out = pw["output"].nunique()
    if n_out > 1:
        p += facet_wrap("~output")
    side = max(3.2, 0.55 * len(order) + 2.2)
    # wide enough for the title (bold, 1.1 x base_size: about 0.62 em per character), which is centred on the
    # figure and would otherwise be cut at both ends on a small heatmap
    title_width = 0.62 * 1.1 * base_size / 72 * len(title) + 0.5
    return p + theme(figure_size=(min(max(side * min(n_out, 3), title_width), 14), side))
