"""Figures of what the average hides: heterogeneity (bars and curves), regions (their curves side by side) and the
explained-variance ledger.

Styled like every pdpx figure (:mod:`.plot_style`). They draw what the results of
:mod:`pdpx.explain.ice_spread`, :mod:`pdpx.explain.subgroups` and :mod:`pdpx.explain.explained`
hold and compute nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.dates import day_numbers, is_date_grid
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
    from plotnine import aes, facet_wrap, geom_line, geom_point, geom_text, ggplot, labs, theme

    frame = result.to_frame()
    order = result.table.drop_duplicates("feature")["feature"].tolist()
    if top is not None:
        order = order[:top]
    frame = frame[frame["feature"].isin(order)].copy()
    frame["feature"] = pd.Categorical(frame["feature"], categories=order, ordered=True)
    numeric = (frame["feature_type"] == "numeric").to_numpy()
    position = frame.groupby(["feature", "output"], observed=True).cumcount().to_numpy(dtype=np.float64)
    frame["x"] = np.where(numeric, pd.to_numeric(frame["x"].where(numeric, np.nan), errors="coerce"), position)
    p = (ggplot(frame, aes("x", "variance", group="output"))
         + geom_line(aes(color="output"), size=0.8) + geom_point(aes(color="output"), size=1.2)
         + facet_wrap("~feature", scales="free_x"))
    if not numeric.all():  # categories and dates: their labels at their points
        p += geom_text(aes(label="label"), data=frame[~numeric], va="bottom", nudge_y=0.02 * frame["variance"].max(),
                       size=0.6 * base_size, color="#444444")
    p = (p + labs(x="feature value (categories and dates: in grid order, labelled)",
                  y="variance of the centered ICE curves",
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


def plot_regions(result, *, ice: int = 30, title: str | None = None, base_size: float = 11):
    """:func:`pdpx.regions`' result: each region's PD curve in a panel of its own, side by side on a shared y axis,
    with the PD over every row dashed for reference and up to ``ice`` of the region's ICE curves when the result
    holds them (``regions(..., ice=True)``); the panels are titled by the regions' rules. A date feature is drawn on
    a date axis (:mod:`.plot_dates`)."""
    from plotnine import aes, facet_wrap, geom_line, ggplot, labs, theme

    from .plot_dates import DatePlan, finish
    from .plot_lines import geom_curves

    K = len(result.outputs)
    strips = [f"{r.region}: " + r.rule.replace(" and ", "\nand ") + f"\n(n = {r.n_rows:,})" for r in result.regions]
    frame = result.to_frame(kind="average")
    frame["panel"] = pd.Categorical([strips[i - 1] for i in frame["region"]], categories=strips, ordered=True)
    dates = not result.categorical and is_date_grid(result.grid_values)
    frame["x"] = day_numbers(frame["x"], wall=True) if dates else frame["x"].astype(np.float64)
    overall = []
    for s in strips:
        g = _curve(result, result.average)
        g["panel"] = s
        overall.append(g)
    overall = pd.concat(overall, ignore_index=True)
    overall["panel"] = pd.Categorical(overall["panel"], categories=strips, ordered=True)
    p = ggplot(frame, aes("x", "yhat"))
    if result.individual is not None and ice > 0:
        p += geom_curves(aes(group="curve"), data=_ice_frame(result, strips, ice), color="#5b84b1", alpha=0.25,
                         size=0.3)
    p += geom_line(aes(group="output"), data=overall, color="#888888", linetype="dashed", size=0.6)
    p += geom_line(aes(color="output", group="output"), size=1.1)
    p += _colors(result.outputs)
    caption = (f"{result.removed:.0%} of the heterogeneity of {result.feature} removed by {len(result.splits)} "
               f"split(s); dashed: the PD over all {result.n_rows:,} rows ({result.method})")
    p += facet_wrap("~panel", nrow=1)
    p += labs(x=result.feature, y="partial dependence" if K == 1 else "partial dependence (by output)",
              title=title or f"Regions where the curves of {result.feature} agree", caption=caption)
    p += theme_pdpx(base_size=base_size)
    width = min(3.2 * len(strips) + 0.8, 16)
    p += theme(figure_size=(width, 3.8))
    if dates:  # the days drawn become dates again, on a date axis whose title names the zone
        tz = getattr(result.grid_values.dtype, "tz", None)
        p = finish(p, DatePlan("datetime", titles={"x": result.feature + (f" ({tz})" if tz is not None else "")}))
        from plotnine import element_text

        p += theme(axis_text_x=element_text(rotation=30, ha="right"))  # side-by-side panels: dates would overlap
    return p


def _grid_x(result) -> np.ndarray:
    """A regions result's grid as the numbers drawn: positions for categories, wall-clock days for dates (a date axis
    shows them as dates), the values otherwise."""
    if result.categorical:
        return np.arange(len(result.grid_values), dtype=np.float64)
    if is_date_grid(result.grid_values):
        return day_numbers(result.grid_values, wall=True)
    return np.asarray(result.grid_values, dtype=np.float64)


def _curve(result, values) -> pd.DataFrame:
    """Long frame of curves (n_outputs, n_grid) over the result's grid (x as :func:`_grid_x` draws it)."""
    G = len(result.grid_values)
    x = _grid_x(result)
    return pd.DataFrame({"x": np.tile(x, len(result.outputs)),
                         "yhat": np.asarray(values, dtype=np.float64).reshape(-1),
                         "output": np.repeat(np.asarray(result.outputs, dtype=object), G)})


def _ice_frame(result, strips, ice: int) -> pd.DataFrame:
    """Up to ``ice`` rows' ICE curves of each region (the first output), a panel each."""
    rng = np.random.default_rng(0)
    G = len(result.grid_values)
    x = _grid_x(result)
    parts = []
    for r, s in zip(result.regions, strips):
        rows = r.rows if len(r.rows) <= ice else np.sort(rng.choice(r.rows, ice, replace=False))
        parts.append(pd.DataFrame({"x": np.tile(x, len(rows)), "yhat": result.individual[0][rows].reshape(-1),
                                   "curve": np.repeat(rows, G), "panel": s}))
    out = pd.concat(parts, ignore_index=True)
    out["panel"] = pd.Categorical(out["panel"], categories=strips, ordered=True)
    return out


def plot_explained(result, *, title: str | None = None, base_size: float = 11):
    """:func:`pdpx.explained_variance`'s ledger: R^2 of each step as a bar, labelled with its gain, one panel per
    output."""
    from plotnine import aes, coord_flip, facet_wrap, geom_col, geom_text, ggplot, labs, scale_y_continuous, theme

    frame = result.to_frame()
    if frame.empty:
        raise PdpxError("plot(): the ledger is empty")
    frame["bar"] = [f"{s}. {w}" for s, w in zip(frame["step"], frame["what"])]
    order = list(dict.fromkeys(frame["bar"]))[::-1]
    frame["bar"] = pd.Categorical(frame["bar"], categories=order, ordered=True)
    frame["label"] = [f"{r:.3f} ({g:+.3f})" for r, g in zip(frame["r2"], frame["gain"])]
    frame["fill"] = np.where(frame["what"].str.startswith("regions"), "regions",
                             np.where(frame["step"] == 1, "1-way", "pairs"))
    from plotnine import scale_fill_manual

    p = (ggplot(frame, aes("bar", "r2", fill="fill")) + geom_col(width=0.7)
         + geom_text(aes(label="label"), ha="left", nudge_y=0.01, size=0.65 * base_size, color="#444444")
         + coord_flip() + scale_y_continuous(limits=(min(0.0, float(frame["r2"].min())), 1.25),
                                           breaks=[0, 0.25, 0.5, 0.75, 1])
         + scale_fill_manual(values={"1-way": PALETTE[0], "pairs": PALETTE[1], "regions": PALETTE[2]}, guide=None)
         + labs(x="", y="R2: share of the variance of the predictions kept (gain over the step built on)",
                title=title or "How much of the model the curves explain",
                caption=f"on {result.n_rows:,} rows ({result.method})")
         + theme_pdpx(base_size=base_size))
    if frame["output"].nunique() > 1:
        p += facet_wrap("~output")
    return p + theme(figure_size=(7.5, 0.45 * len(order) + 1.8))
