"""plotnine figures of partial dependence results.

Every figure is built from the tidy frame (:meth:`PartialDependenceResult.to_frame`)
and returned undrawn, so it can be restyled (``+ theme_bw()``, ``+ labs(...)``)
before it is drawn or saved. plotnine is imported inside the functions only:
``import pdpx`` never needs it.

=============================  ==========================================================
result                         figure
=============================  ==========================================================
1 numeric feature              PD line + points, rug of the feature's values; ICE lines
                               (a seeded subsample, light) under the PD line
1 categorical feature          one point per category; ICE as connected points per row
numeric x numeric              filled tiles with contour lines at the legend's breaks
numeric x categorical          one PD line per category (colour), numeric on x
categorical x categorical      tiles with the values written in them
several outputs                one facet per output (class, target)
collection of 1-way results    ``facet_wrap`` per feature, free x scales, shared y
collection with 2-way results  a plotnine composition: the 1-way facets on top, then
                               one panel per 2-way result
=============================  ==========================================================

Date features (``datetime64``, periods) are drawn on a datetime axis, with breaks on
whole calendar steps and ISO labels; beside numeric or categorical features in a
collection, at offsets on the shared continuous axis with date labels (:mod:`.plot_dates`).

Categorical features in a collection are drawn on a continuous x axis at their
positions in the category list, with the categories as tick labels, so numeric and
categorical features can share one ``facet_wrap`` (plotnine cannot mix discrete and
continuous x scales in one plot). See ``docs/plotting.md``.
"""

from __future__ import annotations

from copy import deepcopy
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..core.errors import PdpxError, PdpxTypeError
from ..core.files import atomic_path, check_writable
from ..core.validation import Integral, Options, PathLike, Real, check_param, shown, validate_params
from . import plot_dates
from .plot_oneway import oneway_plot
from .plot_style import (
    ICE_COLOR,
    PALETTE,
    PD_COLOR,
    PlotOptions,
    check_backend,
    check_plot_options,
    literal_text,
    theme_pdpx,
)
from .plot_twoway import compose, twoway_plot

if TYPE_CHECKING:  # pragma: no cover
    from ..core.result import PartialDependenceCollection, PartialDependenceResult

__all__ = [
    "plot",
    "plot_result",
    "plot_collection",
    "save",
    "layer_data",
    "layer_names",
    "theme_pdpx",
    "ICE_COLOR",
    "PD_COLOR",
    "PALETTE",
    "PlotOptions",
]

#: Formats :func:`save` writes.
FORMATS = ("png", "svg", "pdf")


def plot(res, **options):
    """``res.plot(**options)``: :func:`plot_result` for a result, :func:`plot_collection` for a collection.

    Option names are checked first, so a misspelt one is a pdpx error listing the known ones.
    """
    from ..core.result import PartialDependenceCollection

    if isinstance(res, PartialDependenceCollection):
        check_plot_options("plot", options, extra=("ncol",))
        return plot_collection(res, **options)
    check_plot_options("plot", options)
    return plot_result(res, **options)


def plot_result(
    res: "PartialDependenceResult",
    *,
    n_ice: int | None = 100,
    seed: int = 0,
    centered: bool | None = None,
    ice: bool = True,
    rug: bool = True,
    points: bool = True,
    contours: bool = True,
    share_y: bool = True,
    ice_alpha: float | None = None,
    caption: bool = True,
    base_size: float = 11,
    bands: tuple | None = None,
    color_by: str | None = None,
    ribbon: bool = True,
    unsupported: str = "shade",
):
    """An undrawn plotnine ``ggplot`` of one partial dependence result.

    Parameters
    ----------
    res : PartialDependenceResult
        From :func:`pdpx.partial_dependence`.
    n_ice : int or None, default 100
        Draw at most this many ICE curves: a random subsample of the rows, the same
        rows for every output. ``None`` draws all of them.
    seed : int, default 0
        Seed of the ICE subsample (and of the rug's, for large data).
    centered : bool, optional
        ``True`` centres every curve at its first grid point (centered ICE) even if
        the result was not computed centered. Default: as computed.
    ice : bool, default True
        Draw the ICE curves the result holds (``kind="individual"`` or ``"both"``).
    rug : bool, default True
        Mark the feature's data values on the x axis (numeric features), so sparse
        regions of the grid are visible.
    points : bool, default True
        Mark the grid points on the numeric PD line, where its grid has at most 25 points (more make a
        beaded line); categories and the missing-value point are always marked.
    contours : bool, default True
        Contour lines on numeric x numeric tiles.
    share_y : bool, default True
        One y scale for all facets (outputs). ``False`` frees it.
    ice_alpha : float, optional
        Opacity of ICE curves; default depends on how many are drawn.
    caption : bool, default True
        Say in a caption how many ICE curves are drawn.
    base_size : float, default 11
        Base font size of :func:`theme_pdpx`.
    bands : (float, float), optional
        Draw the ICE curves as quantile bands instead of lines: at each grid point, the
        band between these quantiles of all ICE curves (e.g. ``(0.1, 0.9)``).
    color_by : str, optional
        Colour each ICE curve by its row's value of this column of X (a continuous
        scale for numbers, a palette for categories).
    ribbon : bool, default True
        Draw the bootstrap interval (``interval=``) of the PD as a ribbon.
    unsupported : {"shade", "drop", "show"}, default "shade"
        Grid points with no row of the data within one grid step, or outside the
        convex hull of two numeric features (``res.unsupported``; ``docs/extrapolation.md``).
        ``"shade"``: grey bands over them (1-way), grey cells (2-way tiles), dotted
        stretches of lines (numeric x categorical); nothing is drawn when every point
        is supported. ``"drop"``: leave them out (curves break there). ``"show"``:
        draw them like the others.

    Returns
    -------
    plotnine.ggplot
        Undrawn; add layers, scales or themes, or save with :func:`save`.
    """
    opts = PlotOptions(n_ice=n_ice, seed=seed, centered=centered, ice=ice, rug=rug, points=points,
                    contours=contours, share_y=share_y, ice_alpha=ice_alpha, caption=caption,
                    base_size=base_size, bands=bands, color_by=color_by, ribbon=ribbon,
                    unsupported=unsupported)
    d = len(res.features)
    if d == 1:
        return oneway_plot_dated([res], opts)
    if d == 2:
        return twoway_plot_dated(res, opts)
    raise PdpxError(
        f"cannot plot partial dependence on {d} features at once ({res.feature_set}); "
        "plot 1- or 2-feature results, or use res.to_frame() for your own figure"
    )


def plot_collection(coll: "PartialDependenceCollection", **kwargs):
    """An undrawn figure of every result in a collection.

    1-way results share one ``ggplot``: ``facet_wrap`` by feature with free x
    scales and one y scale (``share_y=False`` frees it); several outputs make a
    grid of facets (outputs in rows). 2-way results cannot share those axes: when
    the collection holds any, the return value is a plotnine composition
    (``Compose``) with the 1-way facets on top and one panel per 2-way result
    below, each the figure of :func:`plot_result`. Add a theme to all of its plots
    with ``&`` (``fig & theme_bw()``).

    Parameters
    ----------
    coll : PartialDependenceCollection
    **kwargs
        The options of :func:`plot_result`, plus ``ncol`` (facets per row).

    Returns
    -------
    plotnine.ggplot or plotnine.composition.Compose
    """
    results = list(coll)
    if not results:
        raise PdpxError("the collection is empty; nothing to plot")
    check_plot_options("plot", kwargs, extra=("ncol",))
    ncol = kwargs.pop("ncol", None)
    check_param("plot", "ncol", ncol, [Integral(low=1), None])
    opts = PlotOptions(**kwargs)
    too_wide = [r.feature_set for r in results if len(r.features) > 2]
    if too_wide:
        raise PdpxError(f"cannot plot feature sets of more than 2 features: {too_wide}; drop them from the collection")
    one = [r for r in results if len(r.features) == 1]
    two = [r for r in results if len(r.features) == 2]
    oneway = oneway_plot_dated(one, opts, ncol=ncol) if one else None
    twoway = [twoway_plot_dated(r, opts) for r in two]
    if not twoway:
        return oneway
    if oneway is None and len(twoway) == 1:
        return twoway[0]
    return compose(oneway, twoway, wide=[len(r.outputs) > 1 for r in two])


def oneway_plot_dated(results: list, opts: PlotOptions, ncol: int | None = None):
    """:func:`.plot_oneway.oneway_plot`, date features drawn on date axes (:mod:`.plot_dates`)."""
    views, plan = plot_dates.prepare_oneway(results)
    return plot_dates.finish(oneway_plot(views, opts, ncol=ncol), plan)


def twoway_plot_dated(res, opts: PlotOptions):
    """:func:`.plot_twoway.twoway_plot`, a date feature drawn on a date axis (:mod:`.plot_dates`)."""
    shown, plan = plot_dates.prepare_twoway(res)
    return plot_dates.finish(twoway_plot(shown, opts), plan)


@validate_params({
    "path": [PathLike()],
    "width": [Real(0, 200, low_open=True), None],
    "height": [Real(0, 200, low_open=True), None],
    "dpi": [Integral(low=1, high=2400)],
    "units": [Options("in", "cm", "mm")],
}, name="save")
def save(
    plot,
    path: str | Path,
    *,
    width: float | None = None,
    height: float | None = None,
    dpi: int = 200,
    units: str = "in",
    **savefig_kwargs: Any,
) -> Path:
    """Write a figure to PNG, SVG or PDF (chosen by the file's extension).

    Parameters
    ----------
    plot : plotnine.ggplot or Compose
        E.g. ``res.plot()``.
    path : str or Path
        Ending in ``.png``, ``.svg`` or ``.pdf``. Missing folders are created.
    width, height : float, optional
        Size in ``units``; give both or neither. Default: the size the plot was
        made with (6 x 4 inches for one panel, up to 11 inches wide for
        facets; text sizes fit a report page).
    dpi : int, default 200
        Resolution of PNGs (vector formats ignore it).
    units : {"in", "cm", "mm"}
    **savefig_kwargs
        Passed to matplotlib's ``savefig``.

    Returns
    -------
    Path
        The file written.
    """
    from plotnine import ggplot, theme

    path = check_writable(path, suffixes=tuple("." + f for f in FORMATS))
    fmt = path.suffix.lower().lstrip(".")
    if (width is None) != (height is None):
        raise PdpxError("save(): give both width and height, or neither (the plot's own size is used then)")
    if not isinstance(plot, ggplot) and type(plot).__module__.split(".")[0] != "plotnine":
        raise PdpxTypeError(f"save(): plot must be a plotnine figure (res.plot()); got {shown(plot)}")
    check_backend("save")
    with atomic_path(path) as tmp, literal_text():  # a figure restyled with a theme of its own keeps literal text
        if isinstance(plot, ggplot):
            plot.save(tmp, format=fmt, width=width, height=height, units=units, dpi=dpi, verbose=False,
                      **savefig_kwargs)
            return path
        # a composition: its size is the last plot's figure_size
        if width is not None:
            factor = {"in": 1.0, "cm": 1 / 2.54, "mm": 1 / 25.4}[units]
            plot = plot + theme(figure_size=(width * factor, height * factor))
        plot = plot + theme(dpi=dpi)
        figure = plot.draw()
        try:
            figure.savefig(tmp, format=fmt, **savefig_kwargs)
        finally:
            import matplotlib.pyplot as plt

            plt.close(figure)
    return path


_SAVE_PARAMS = {
    "path": [PathLike()],
    "width": [Real(0, 200, low_open=True), None],
    "height": [Real(0, 200, low_open=True), None],
    "dpi": [Integral(low=1, high=2400)],
}


@validate_params(_SAVE_PARAMS, name="save")
def save_result(res, path, *, width=None, height=None, dpi: int = 200, **plot_options) -> Path:
    """``res.save(...)``: check the file and every option first, then draw ``res.plot(**plot_options)`` and write it.

    ``res`` is a result or a collection; see :func:`save` for the file and size.
    """
    check_writable(path, suffixes=tuple("." + f for f in FORMATS))
    check_plot_options("save", plot_options, extra=("ncol",))
    return save(res.plot(**plot_options), path, width=width, height=height, dpi=dpi)


def layer_data(plot, i: int | str = 0) -> pd.DataFrame:
    """The data of layer ``i`` after the plot is built (what gets drawn).

    plotnine 0.15 has no ``layer_data``; this builds a copy of the plot and returns
    the layer's computed data (positions after scales and stats, fills as colours).

    Parameters
    ----------
    plot : plotnine.ggplot
    i : int or str
        Position of the layer, or its name in :func:`layer_names`.
    """
    if isinstance(i, str):
        names = layer_names(plot)
        if i not in names:
            raise KeyError(f"no layer named {i!r}; this plot has {names}")
        i = names.index(i)
    built = deepcopy(plot)
    built._build()
    return built.layers[i].data


def layer_names(plot) -> list[str]:
    """Names of the layers pdpx drew, in order (``"ice"``, ``"pd_line"``, ``"rug"`` ...)."""
    return list(getattr(plot, "_pdpx_layers", []))


