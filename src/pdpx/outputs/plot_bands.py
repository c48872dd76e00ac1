"""What 1-way figures draw beyond lines: the missing-value point, interval ribbons, ICE quantile bands, ICE colours.

Used by :mod:`.plot_oneway` and :mod:`.plot_overlay`:

* the missing-value grid point (``include_missing``) is drawn apart from the numeric
  axis, a little right of the numeric grid, under a tick labelled ``missing``;
* the band of the PD (``interval=``: the rows' bootstrap, the model's members or quantile
  models) is a ribbon (an error bar at a categorical or missing point), named in the caption
  (:func:`interval_caption`);
* ``bands=(lo, hi)`` draws, at each grid point, the band between these quantiles of
  every ICE curve (all of them, not the drawn subsample);
* ``color_by="column"`` colours each ICE curve by its row's value of a column of X;
* ``unsupported="shade"`` draws grey bands over the grid points no row supports
  (:func:`unsupported_bands`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.data import short_list
from ..core.errors import PdpxError
from ..core.support import intervals
from .plot_style import ICE_COLOR, PALETTE, PD_COLOR

#: Gap between the numeric grid's end and the missing point, as a share of the grid's span.
MISSING_GAP = 0.12


def place_missing(df: pd.DataFrame, axis, ends: dict | None = None) -> np.ndarray:
    """Mark the missing-value rows of a drawn frame and give them their x; returns the mask.

    ``axis`` (the figure's :class:`~.plot_oneway.CategoricalAxis`) learns the tick to label.
    ``ends``: feature set -> (low, high) x the curve is drawn over, when it runs past its grid
    (the outer steps of a threshold grid, :mod:`.plot_steps`).
    """
    numeric = (df["type_1"] != "categorical").to_numpy(dtype=bool)
    miss = numeric & np.isnan(df["x_1"].to_numpy(dtype=float))
    if not miss.any():
        return miss
    x = df["x"].to_numpy(dtype=float).copy()
    sets = df["feature_set"].astype(str).to_numpy()
    for fs in pd.unique(sets[miss]):
        here = sets == fs
        finite = x[here & ~miss]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if ends and fs in ends:
            lo, hi = ends[fs]
        pos = hi + (MISSING_GAP * (hi - lo) if hi > lo else 1.0)
        x[here & miss] = pos
        axis.add_missing(pos, hi)
    df["x"] = x
    return miss


def interval_layers(avg: pd.DataFrame, miss: np.ndarray, opts) -> tuple[list, list[str]]:
    """The PD's bootstrap interval: a ribbon along numeric curves, error bars at other points."""
    from plotnine import aes, geom_errorbar, geom_ribbon

    if not opts.ribbon or "lower" not in avg.columns or avg["lower"].isna().all():
        return [], []
    layers, names = [], []
    line = avg[~avg["categorical"] & ~miss]
    if len(line):
        layers.append(geom_ribbon(line, aes("x", ymin="lower", ymax="upper", group="piece"),
                                  fill=PD_COLOR, alpha=0.22, outline_type="full", color="none"))
        names.append("pd_interval")
    points = avg[avg["categorical"] | miss]
    if len(points):
        layers.append(geom_errorbar(points, aes("x", ymin="lower", ymax="upper"), color=PD_COLOR, width=0.25,
                                    size=0.7))
        names.append("pd_interval_points")
    return layers, names


def interval_caption(result) -> str:
    """What a result's shaded band is: its own label (a band from the model: :mod:`pdpx.core.members`), else
    the rows' bootstrap at its level."""
    label = getattr(result, "band", "")
    return label if label else f"{100 * result.interval:g}% bootstrap interval of the PD"


def band_columns(results, avg: pd.DataFrame, bands, centered: bool) -> pd.DataFrame:
    """``avg`` with ``band_lo`` / ``band_hi``: quantiles of each result's ICE curves at each grid point.

    The rows of ``avg`` follow the results' tidy frames (output-major, then grid cells).
    """
    lo_parts, hi_parts = [], []
    for r in results:
        K, G = len(r.outputs), int(np.prod(r.grid_shape))
        if r.individual is None:
            lo_parts.append(np.full(K * G, np.nan))
            hi_parts.append(np.full(K * G, np.nan))
            continue
        ind = np.asarray(r.individual, dtype=float).reshape(K, r.individual.shape[1], G)
        if centered and not r.centered:
            ind = ind - ind[:, :, :1]
        q = np.nanquantile(ind, list(bands), axis=1)  # (2, K, G)
        lo_parts.append(q[0].reshape(-1))
        hi_parts.append(q[1].reshape(-1))
    lo, hi = np.concatenate(lo_parts), np.concatenate(hi_parts)
    if lo.size != len(avg):
        raise PdpxError("bands: the figure's curves do not match the results' grids")  # pragma: no cover
    return avg.assign(band_lo=lo, band_hi=hi)


def band_layers(avg: pd.DataFrame, miss: np.ndarray, bands) -> tuple[list, list[str]]:
    """The ICE quantile bands: a ribbon along numeric grids, a bar at categorical or missing points."""
    from plotnine import aes, geom_linerange, geom_ribbon

    layers, names = [], []
    line = avg[~avg["categorical"] & ~miss & avg["band_lo"].notna()]
    if len(line):
        layers.append(geom_ribbon(line, aes("x", ymin="band_lo", ymax="band_hi", group="piece"),
                                  fill=ICE_COLOR, alpha=0.3, outline_type="full", color="none"))
        names.append("ice_band")
    points = avg[(avg["categorical"] | miss) & avg["band_lo"].notna()]
    if len(points):
        layers.append(geom_linerange(points, aes("x", ymin="band_lo", ymax="band_hi"), color=ICE_COLOR, size=4,
                                     alpha=0.45))
        names.append("ice_band_points")
    return layers, names


def band_caption(bands) -> str:
    """What the band shows, for the caption."""
    lo, hi = (100 * float(b) for b in bands)
    return f"band: {lo:g}th to {hi:g}th percentile of the ICE curves at each grid point"


def ice_colours(results, ice: pd.DataFrame, column: str) -> tuple[pd.Series, bool]:
    """Each ICE row's value of ``column`` of X (by its ``row``); and whether the scale is continuous."""
    background = next((r.background for r in results if getattr(r, "background", None) is not None), None)
    if background is None:
        raise PdpxError("color_by: this result does not hold the rows of X (Dask input, or built by hand); "
                        "colour the curves yourself from res.to_frame() and res.ice_rows")
    names = [str(c) for c in background.columns]
    if column not in names:
        raise PdpxError(f"color_by={column!r} is not a column of X; columns: {short_list(names)}")
    values = background.iloc[:, names.index(column)]
    rows = ice["row"].to_numpy(dtype=np.int64)
    picked = values.iloc[rows].reset_index(drop=True)
    continuous = (pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype)
                  and values.nunique(dropna=True) > len(PALETTE))
    if continuous:
        return pd.Series(pd.to_numeric(picked, errors="coerce").to_numpy(dtype=float), index=ice.index), True
    text = picked.astype(object).where(picked.notna(), "missing").astype(str)
    levels = [str(v) for v in (values.cat.categories if isinstance(values.dtype, pd.CategoricalDtype)
                               else sorted(values.dropna().unique(), key=str))]
    if text.eq("missing").any():
        levels.append("missing")
    levels = [v for v in dict.fromkeys(levels) if v in set(text)]
    return pd.Series(pd.Categorical(text, categories=levels), index=ice.index), False


def colour_scale(continuous: bool, column: str, n_levels: int):
    """The colour scale of ``color_by``: viridis for numbers, the Okabe-Ito palette for levels."""
    from plotnine import scale_color_cmap, scale_color_manual

    if continuous:
        return scale_color_cmap("viridis", name=column)
    colours = (PALETTE * (n_levels // len(PALETTE) + 1))[:n_levels]
    return scale_color_manual(values=colours, name=column)


def unsupported_bands(df: pd.DataFrame, spans: dict | None = None) -> pd.DataFrame:
    """The x extent of every stretch of unsupported grid points of each feature set (1-way frames).

    Numeric points span their support interval (:mod:`pdpx.core.support`), or the step they
    stand for (``spans``: feature set -> (lower, upper) bounds of its numeric points, threshold
    grids); categories and the missing point half a slot either side; neighbouring spans merge
    into one band.
    """
    cols = ["feature_set", "xmin", "xmax"]
    first = df[df["kind"] == "average"]
    rows = []
    for fs, part in first.groupby("feature_set", observed=True, sort=False):
        part = part.drop_duplicates("x").sort_values("x")
        if part["supported"].all():
            continue
        x = part["x"].to_numpy(dtype=float)
        point = (part["categorical"] | part["missing"]).to_numpy(dtype=bool)
        lo, hi = x - 0.5, x + 0.5
        if (~point).any():
            num_lo, num_hi = spans[fs] if spans and fs in spans else intervals(x[~point])
            lo[~point], hi[~point] = num_lo, num_hi
            if point.any() and (~point).sum() > 1:  # the missing point: as wide as a numeric step
                step = float(np.median(np.diff(x[~point])))
                lo[point], hi[point] = x[point] - step / 2, x[point] + step / 2
        spans = []
        for a, b, ok in zip(lo, hi, part["supported"].to_numpy(dtype=bool)):
            if ok:
                continue
            if spans and a <= spans[-1][1] + 1e-12 * max(1.0, abs(a)):
                spans[-1][1] = b
            else:
                spans.append([a, b])
        rows += [(fs, a, b) for a, b in spans]
    out = pd.DataFrame(rows, columns=cols)
    if len(out):
        out["feature_set"] = pd.Categorical(out["feature_set"], categories=df["feature_set"].cat.categories)
    return out
