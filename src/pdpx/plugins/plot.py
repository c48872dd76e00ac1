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

Categorical features in a collection are drawn on a continuous x axis at their
positions in the category list, with the categories as tick labels, so numeric and
categorical features can share one ``facet_wrap`` (plotnine cannot mix discrete and
continuous x scales in one plot). See ``docs/plotting.md``.
"""

from __future__ import annotations

import dataclasses
import math
from copy import deepcopy
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from ..core.errors import PdpxError

if TYPE_CHECKING:  # pragma: no cover
    from ..core.result import PartialDependenceCollection, PartialDependenceResult

__all__ = [
    "plot_result",
    "plot_collection",
    "save",
    "layer_data",
    "layer_names",
    "theme_pdpx",
    "ICE_COLOR",
    "PD_COLOR",
    "PALETTE",
]

#: Colour of ICE curves (drawn light, under the PD curve).
ICE_COLOR = "#5b84b1"
#: Colour of the partial dependence curve.
PD_COLOR = "#d55e00"
#: Okabe-Ito colours for categories (colour-blind safe).
PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"]

#: Formats :func:`save` writes.
FORMATS = ("png", "svg", "pdf")
#: Largest number of data points drawn in a rug (a seeded subsample beyond).
RUG_MAX = 1500


# ====================================================================== public
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
        Mark the grid points on the numeric PD line.
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

    Returns
    -------
    plotnine.ggplot
        Undrawn; add layers, scales or themes, or save with :func:`save`.
    """
    opts = _Options(n_ice=n_ice, seed=seed, centered=centered, ice=ice, rug=rug, points=points,
                    contours=contours, share_y=share_y, ice_alpha=ice_alpha, caption=caption,
                    base_size=base_size)
    d = len(res.features)
    if d == 1:
        return _oneway_plot([res], opts)
    if d == 2:
        return _twoway_plot(res, opts)
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
    ncol = kwargs.pop("ncol", None)
    opts = _Options(**kwargs)
    too_wide = [r.feature_set for r in results if len(r.features) > 2]
    if too_wide:
        raise PdpxError(f"cannot plot feature sets of more than 2 features: {too_wide}; drop them from the collection")
    one = [r for r in results if len(r.features) == 1]
    two = [r for r in results if len(r.features) == 2]
    oneway = _oneway_plot(one, opts, ncol=ncol) if one else None
    twoway = [_twoway_plot(r, opts) for r in two]
    if not twoway:
        return oneway
    if oneway is None and len(twoway) == 1:
        return twoway[0]
    return _compose(oneway, twoway, wide=[len(r.outputs) > 1 for r in two])


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

    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise PdpxError(f"cannot save {path.name!r}: the file name must end in one of {['.' + f for f in FORMATS]}")
    if (width is None) != (height is None):
        raise PdpxError("give both width and height, or neither (the plot's own size is used then)")
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(plot, ggplot):
        plot.save(path, format=fmt, width=width, height=height, units=units, dpi=dpi, verbose=False,
                  **savefig_kwargs)
        return path
    # a composition: its size is the last plot's figure_size
    if width is not None:
        factor = {"in": 1.0, "cm": 1 / 2.54, "mm": 1 / 25.4}[units]
        plot = plot + theme(figure_size=(width * factor, height * factor))
    plot = plot + theme(dpi=dpi)
    figure = plot.draw()
    try:
        figure.savefig(path, format=fmt, **savefig_kwargs)
    finally:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return path


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


def theme_pdpx(base_size: float = 11, base_family: str | None = None):
    """The pdpx theme: ``theme_bw`` with light grid, soft strips and a quiet caption."""
    from plotnine import element_blank, element_line, element_rect, element_text, theme, theme_bw

    return theme_bw(base_size=base_size, base_family=base_family) + theme(
        panel_grid_minor=element_blank(),
        panel_grid_major=element_line(color="#ebebeb", size=0.5),
        panel_border=element_rect(color="#bdbdbd", fill="none"),
        strip_background=element_rect(fill="#f2f2f2", color="#bdbdbd"),
        strip_text=element_text(size=0.85 * base_size, color="#222222"),
        axis_text=element_text(size=0.8 * base_size, color="#444444"),
        axis_title=element_text(size=0.9 * base_size, color="#222222"),
        axis_ticks=element_line(color="#bdbdbd"),
        legend_title=element_text(size=0.85 * base_size),
        legend_text=element_text(size=0.8 * base_size),
        legend_key=element_blank(),
        plot_title=element_text(size=1.1 * base_size, weight="bold"),
        plot_caption=element_text(size=0.7 * base_size, color="#777777"),
    )


# ===================================================================== options
@dataclasses.dataclass
class _Options:
    n_ice: int | None = 100
    seed: int = 0
    centered: bool | None = None
    ice: bool = True
    rug: bool = True
    points: bool = True
    contours: bool = True
    share_y: bool = True
    ice_alpha: float | None = None
    caption: bool = True
    base_size: float = 11

    def __post_init__(self):
        if self.n_ice is not None and (not isinstance(self.n_ice, (int, np.integer)) or self.n_ice < 1):
            raise PdpxError(f"n_ice must be a positive integer or None (all rows), got {self.n_ice!r}")
        if self.ice_alpha is not None and not 0 < self.ice_alpha <= 1:
            raise PdpxError(f"ice_alpha must be in (0, 1], got {self.ice_alpha!r}")


# ================================================================ tidy frames
def _result_frame(res: "PartialDependenceResult", opts: _Options) -> tuple[pd.DataFrame, str]:
    """The tidy frame to draw: ICE subsampled, average always present, centred if asked.

    Returns the frame and a note on the ICE curves drawn ("" when none).
    """
    individual = res.individual if opts.ice else None
    note = ""
    rows = None
    if individual is not None:
        n = individual.shape[1]
        if opts.n_ice is not None and n > opts.n_ice:
            rows = np.sort(np.random.default_rng(opts.seed).choice(n, opts.n_ice, replace=False))
            individual = individual[:, rows]
            note = f"thin lines: ICE curves of {opts.n_ice} of {n:,} rows (random, seed {opts.seed})"
        else:
            note = f"thin lines: ICE curves of all {n:,} rows"
    view = dataclasses.replace(res, individual=individual, kind="both" if individual is not None else "average")
    df = view.to_frame()
    if rows is not None:
        ice_mask = df["kind"] == "individual"
        df.loc[ice_mask, "row"] = rows[df.loc[ice_mask, "row"].to_numpy(dtype=np.int64)]
    centered = res.centered
    if opts.centered and not res.centered:
        keys = ["output", "kind", df["row"].fillna(-1)]
        df["yhat"] = df["yhat"] - df.groupby(keys, sort=False)["yhat"].transform("first")
        centered = True
    elif opts.centered is False and res.centered:
        raise PdpxError(
            "this result was computed centered and cannot be un-centered; "
            "compute it again with centered=False"
        )
    df.attrs["centered"] = centered
    return df, note


def _value_label(results: Sequence["PartialDependenceResult"], centered: bool) -> str:
    res = results[0]
    what = res.response_label or res.response
    outputs = res.outputs
    if len(outputs) == 1 and outputs[0] != what:
        o = outputs[0]
        what = f"probability of {o}" if res.response == "predict_proba" else f"{what}, {o}"
    return ("centered " if centered else "") + f"partial dependence ({what})"


# ====================================================================== 1-way
def _oneway_plot(results: list["PartialDependenceResult"], opts: _Options, ncol: int | None = None):
    from plotnine import (
        aes, facet_grid, facet_wrap, geom_blank, geom_line, geom_point, geom_rug, ggplot, labs,
        scale_x_continuous, theme,
    )

    frames, notes = [], []
    for r in results:
        df, note = _result_frame(r, opts)
        frames.append(df)
        notes.append(note)
    centered = bool(frames[0].attrs["centered"])
    df = pd.concat(frames, ignore_index=True)
    sets = [r.feature_set for r in results]
    df["feature_set"] = pd.Categorical(df["feature_set"].astype(str), categories=sets)
    df["output"] = pd.Categorical(df["output"].astype(str), categories=list(dict.fromkeys(results[0].outputs)))
    df["categorical"] = (df["type_1"] == "categorical").to_numpy(dtype=bool)

    axis = _CategoricalAxis(results)
    df["x"] = axis.positions(df)
    df["row"] = df["row"].astype("float64")  # plotnine groups by a plain column

    avg = df[df["kind"] == "average"]
    ice = df[df["kind"] == "individual"]
    num_avg, cat_avg = avg[~avg["categorical"]], avg[avg["categorical"]]
    cat_ice = ice[ice["categorical"]]

    layers, names = [], []
    if len(ice):
        n_curves = ice.groupby(["feature_set", "output"], observed=True)["row"].nunique().max()
        alpha = opts.ice_alpha or float(np.clip(3 / math.sqrt(max(n_curves, 1)), 0.1, 0.5))
        # one integer per (feature set, output, row), increasing with the row number
        n_out = len(ice["output"].cat.categories)
        stride = int(ice["row"].max()) + 1
        ice = ice.assign(curve=(ice["feature_set"].cat.codes.astype(np.int64) * n_out
                                + ice["output"].cat.codes.astype(np.int64)) * stride
                         + ice["row"].astype(np.int64))
        layers.append(geom_line(ice, aes("x", "yhat", group="curve"), color=ICE_COLOR, alpha=alpha, size=0.35))
        names.append("ice")
        if len(cat_ice):
            layers.append(geom_point(ice[ice["categorical"]], aes("x", "yhat"), color=ICE_COLOR,
                                     alpha=alpha, size=0.9, stroke=0))
            names.append("ice_points")
    if len(num_avg):
        layers.append(geom_line(num_avg, aes("x", "yhat", group="feature_set"), color=PD_COLOR, size=1.1))
        names.append("pd_line")
        if opts.points:
            layers.append(geom_point(num_avg, aes("x", "yhat"), color=PD_COLOR, size=1.3))
            names.append("pd_points")
    if len(cat_avg):
        layers.append(geom_point(cat_avg, aes("x", "yhat"), color=PD_COLOR, fill="white", size=3.2, stroke=1.3,
                                 shape="o"))
        names.append("pd_categories")
    if opts.rug:
        rug = _rug_frame(results, opts.seed)
        if len(rug):
            layers.append(geom_rug(rug, aes(x="x"), color="#555555", alpha=_rug_alpha(rug), size=0.3,
                                   length=0.035))
            names.append("rug")
    pad = axis.padding()
    if pad is not None:
        layers.append(geom_blank(pad, aes(x="x")))
        names.append("padding")

    p = ggplot()
    for layer in layers:
        p = p + layer
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
    p = p + labs(x=results[0].features[0], y=_value_label(results, centered), caption=cap or None)
    size = _figure_size(nrow, ncol_)
    p = p + theme_pdpx(opts.base_size) + theme(figure_size=size)
    if n_sets > 1:  # the strips name the features
        from plotnine import element_blank

        p = p + theme(axis_title_x=element_blank())
    angle = axis.label_rotation(panel_width=(size[0] - 1.3) / ncol_, font_size=0.8 * opts.base_size)
    if angle:
        from plotnine import element_text

        p = p + theme(axis_text_x=element_text(rotation=angle, ha="right" if angle < 90 else "center", va="top"))
    if axis.any_categorical:  # after label_rotation: the scale keeps a copy of the axis
        p = p + scale_x_continuous(breaks=axis.breaks, labels=axis.labels)
    p._pdpx_layers = names
    return p


class _CategoricalAxis:
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
            for i, v in enumerate(_grid_labels(r, 0)):
                self.codes[offset + i] = v
                self.index[offset + i] = (r.feature_set, i)

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
        return breaks_extended()(limits)

    def labels(self, breaks):
        from mizani.labels import label_number

        breaks = list(breaks)
        numeric = [b for b in breaks if b not in self.codes]
        formatted = dict(zip(numeric, label_number()(numeric))) if numeric else {}
        return [self.codes.get(b, formatted.get(b, "")) for b in breaks]


def _grid_labels(res, j: int) -> list[str]:
    """Feature j's grid values as text, exactly as ``to_frame()`` writes them in ``label_j``."""
    from ..core.result import _label

    return [_label(v) for v in res.grid_values[j]]


def _rug_frame(results, seed: int) -> pd.DataFrame:
    parts = []
    rng = np.random.default_rng(seed)
    for r in results:
        if r.categorical[0]:
            continue
        values = r.feature_data.get(r.features[0])
        if values is None:
            continue
        v = pd.to_numeric(pd.Series(np.asarray(values)), errors="coerce").to_numpy(dtype=float)
        grid = np.asarray(r.grid_values[0], dtype=float)
        v = v[np.isfinite(v) & (v >= grid.min()) & (v <= grid.max())]
        if v.size > RUG_MAX:
            v = rng.choice(v, RUG_MAX, replace=False)
        parts.append(pd.DataFrame({"feature_set": r.feature_set, "x": v}))
    if not parts:
        return pd.DataFrame({"feature_set": [], "x": []})
    rug = pd.concat(parts, ignore_index=True)
    rug["feature_set"] = pd.Categorical(rug["feature_set"], categories=[r.feature_set for r in results])
    return rug


def _rug_alpha(rug: pd.DataFrame) -> float:
    per_panel = rug.groupby("feature_set", observed=True).size().max()
    return float(np.clip(8 / math.sqrt(max(per_panel, 1)), 0.1, 0.6))


def _figure_size(nrow: int, ncol: int) -> tuple[float, float]:
    if nrow == 1 and ncol == 1:
        return (6.0, 4.0)
    width = {1: 5.5, 2: 7.5}.get(ncol, min(11.0, 2.4 * ncol + 1.3))
    return (width, min(24.0, 0.9 + 2.4 * nrow))


# ====================================================================== 2-way
def _twoway_plot(res: "PartialDependenceResult", opts: _Options):
    df, _ = _result_frame(dataclasses.replace(res, individual=None, kind="average"), opts)
    centered = bool(df.attrs["centered"])
    df["output"] = pd.Categorical(df["output"].astype(str), categories=list(dict.fromkeys(res.outputs)))
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
        size = _figure_size(math.ceil(k / ncol), ncol)
        size = (size[0] + 1.0, size[1])  # room for the legend
    else:
        size = (6.5, 4.5)
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


def _tiles_numeric(res, df, opts, centered):
    from plotnine import aes, geom_path, geom_rect, geom_rug, ggplot, labs, scale_x_continuous, scale_y_continuous

    f1, f2 = res.features
    g1, g2 = (np.asarray(g, dtype=float) for g in res.grid_values)
    lo1, hi1 = _edges(g1)
    lo2, hi2 = _edges(g2)
    i1 = np.searchsorted(g1, df["x_1"].to_numpy())
    i2 = np.searchsorted(g2, df["x_2"].to_numpy())
    tiles = df.assign(xmin=lo1[i1], xmax=hi1[i1], ymin=lo2[i2], ymax=hi2[i2])
    layers = [geom_rect(tiles, aes(xmin="xmin", xmax="xmax", ymin="ymin", ymax="ymax", fill="yhat"))]
    names = ["tiles"]
    if opts.contours:
        lines = _contour_lines(res, df)
        if len(lines):
            ink = "#333333" if centered else "white"  # the diverging scale is light around 0
            layers.append(geom_path(lines, aes("x", "y", group="piece"), color=ink, alpha=0.6 if centered else 0.75,
                                    size=0.45))
            names.append("contours")
    if opts.rug:
        pts = _joint_rug(res, g1, g2, opts.seed)
        if len(pts):
            layers.append(geom_rug(pts, aes(x="x", y="y"), sides="bl", color="#555555", alpha=_rug_alpha(
                pts.assign(feature_set="_")), size=0.3, length=0.03))
            names.append("rug")
    p = ggplot()
    for layer in layers:
        p = p + layer
    zero = (0.0, 0.0)
    p = (p + scale_x_continuous(expand=zero) + scale_y_continuous(expand=zero)
         + _fill_scale(centered, _legend_name(res, centered)) + labs(x=f1, y=f2))
    return p, names


def _contour_levels(z: np.ndarray) -> np.ndarray:
    from mizani.breaks import breaks_extended

    lo, hi = float(np.nanmin(z)), float(np.nanmax(z))
    if not np.isfinite(lo) or hi - lo <= 1e-12 * max(1.0, abs(hi)):
        return np.array([])
    levels = np.asarray(breaks_extended(n=7)((lo, hi)), dtype=float)
    return levels[(levels > lo) & (levels < hi)]


def _contour_lines(res, df) -> pd.DataFrame:
    import contourpy

    g1, g2 = (np.asarray(g, dtype=float) for g in res.grid_values)
    if g1.size < 2 or g2.size < 2:
        return pd.DataFrame({"x": [], "y": [], "piece": [], "output": [], "level": []})
    levels = _contour_levels(df["yhat"].to_numpy())
    parts = []
    for k, out in enumerate(res.outputs):
        z = df.loc[df["output"] == out, "yhat"].to_numpy().reshape(g1.size, g2.size).T  # rows: feature 2
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


def _joint_rug(res, g1, g2, seed) -> pd.DataFrame:
    f1, f2 = res.features
    if f1 not in res.feature_data or f2 not in res.feature_data:
        return pd.DataFrame({"x": [], "y": []})
    a = pd.to_numeric(pd.Series(np.asarray(res.feature_data[f1])), errors="coerce").to_numpy(dtype=float)
    b = pd.to_numeric(pd.Series(np.asarray(res.feature_data[f2])), errors="coerce").to_numpy(dtype=float)
    lo1, hi1 = _edges(g1)
    lo2, hi2 = _edges(g2)
    ok = (np.isfinite(a) & np.isfinite(b) & (a >= lo1[0]) & (a <= hi1[-1]) & (b >= lo2[0]) & (b <= hi2[-1]))
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
    from plotnine import aes, geom_text, geom_tile, ggplot, labs, scale_color_identity, scale_x_discrete, \
        scale_y_discrete

    f1, f2 = res.features
    levels1, levels2 = _grid_labels(res, 0), _grid_labels(res, 1)
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
    p = (
        ggplot(t, aes("a", "b"))
        + geom_tile(aes(fill="yhat"), color="white", size=0.8)
        + geom_text(aes(label="text", color="ink"), size=0.8 * opts.base_size)
        + scale_color_identity()
        + scale_x_discrete(expand=(0, 0))
        + scale_y_discrete(expand=(0, 0))
        + _fill_scale(centered, _legend_name(res, centered))
        + labs(x=f1, y=f2)
    )
    return p, ["tiles", "values"]


def _lines_by_category(res, df, opts, centered):
    from plotnine import aes, geom_line, geom_point, geom_rug, ggplot, labs, scale_color_manual

    num = 0 if not res.categorical[0] else 1
    cat = 1 - num
    fn, fc = res.features[num], res.features[cat]
    levels = _grid_labels(res, cat)
    t = df.assign(
        x=df[f"x_{num + 1}"].to_numpy(dtype=float),
        category=pd.Categorical(df[f"label_{cat + 1}"].astype(str), categories=levels),
    )
    t["curve"] = t["output"].astype(str) + "|" + t["category"].astype(str)
    palette = PALETTE if len(levels) <= len(PALETTE) else None
    p = ggplot(t, aes("x", "yhat", color="category", group="curve")) + geom_line(size=1.0)
    names = ["lines"]
    if opts.points:
        p = p + geom_point(size=1.1)
        names.append("points")
    if opts.rug:
        rug = _rug_frame([dataclasses.replace(res, features=[fn], grid_values=[res.grid_values[num]],
                                              categorical=[False])], opts.seed)
        if len(rug):
            p = p + geom_rug(rug.drop(columns="feature_set"), aes(x="x"), inherit_aes=False, color="#555555",
                             alpha=_rug_alpha(rug), size=0.3, length=0.035)
            names.append("rug")
    if palette is not None:
        p = p + scale_color_manual(values=palette[: len(levels)], name=fc)
    p = p + labs(x=fn, y=_value_label([res], centered), color=fc)
    return p, names


# ================================================================ composition
def _compose(oneway, twoway: list, wide: list[bool]):
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
