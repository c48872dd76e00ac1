"""Figures of accumulated local effects, derivative ICE and the exact / recursion comparison.

* :func:`plot_ale`: 1 numeric feature, the ALE line over the bin edges with a rug of the
  data; 1 categorical feature, one point per category in the accumulation order; 2
  features, tiles around the edges (diverging colours, 0 white) over the data points.
* :func:`plot_derivative`: the rows' derivative curves (light) and their mean, with the
  standard deviation of the derivatives in a panel below (ICEbox's "dice" plot).
* :func:`plot_comparison`: the ``exact`` and ``recursion`` curves, and their gap below
  (1 feature), or tiles of the gap (2 features).

Results reach them through ``res.plot()``; every figure is returned undrawn, styled by
:func:`pdpx.outputs.plot_style.theme_pdpx`, with its layers named (``_pdpx_layers``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import PdpxError, PdpxTypeError
from ..core.validation import check_param
from .plot_style import (
    DOTS_MAX,
    ICE_COLOR,
    PALETTE,
    PD_COLOR,
    PLOT_OPTIONS,
    RUG_MAX,
    figure_size,
    rug_alpha,
    theme_pdpx,
)

#: Drawing options each figure takes (a subset of :data:`pdpx.outputs.plot_style.PLOT_OPTIONS`).
_OPTIONS = {
    "plot_ale": ("rug", "points", "caption", "base_size", "share_y", "seed"),
    "plot_derivative": ("n_ice", "seed", "ice", "rug", "caption", "base_size", "ice_alpha"),
    "plot_comparison": ("points", "caption", "base_size", "share_y"),
}
_DEFAULTS = {"rug": True, "points": True, "caption": True, "base_size": 11.0, "share_y": True, "seed": 0,
             "n_ice": 100, "ice": True, "ice_alpha": None}
_DIVERGING = dict(low="#2166ac", mid="#f7f7f7", high="#b2182b", midpoint=0)


def _options(function: str, given: dict) -> dict:
    known = _OPTIONS[function]
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise PdpxTypeError(f"{function}(): unknown option(s) {unknown}; its options are {sorted(known)}")
    for name, value in given.items():
        check_param(function, name, value, PLOT_OPTIONS[name])
    return {**{k: _DEFAULTS[k] for k in known}, **given}


def _what(res) -> str:
    what = res.response_label or res.response
    if len(res.outputs) == 1 and res.outputs[0] != what:
        o = res.outputs[0]
        what = f"probability of {o}" if res.response == "predict_proba" else f"{what}, {o}"
    return what


def _output_facets(p, res, opts, rows=None):
    from plotnine import facet_grid, facet_wrap

    if rows is not None:
        cols = "output" if len(res.outputs) > 1 else "."
        return p + facet_grid(f"{rows} ~ {cols}", scales="free_y")
    if len(res.outputs) > 1:
        return p + facet_wrap("output", scales="fixed" if opts["share_y"] else "free_y")
    return p


def _size(res, rows: int = 1) -> tuple[float, float]:
    k = len(res.outputs)
    w, h = figure_size(1, min(k, 3))
    return (w, h) if rows == 1 else (max(w, 7.5), h * 1.5)


def _finish(p, names, res, opts, caption: str, rows: int = 1):
    from plotnine import labs, theme

    if opts["caption"] and caption:
        p = p + labs(caption=caption)
    p = p + theme_pdpx(opts["base_size"]) + theme(figure_size=_size(res, rows))
    p._pdpx_layers = names
    return p


def _outputs_cat(df: pd.DataFrame, res) -> pd.DataFrame:
    df["output"] = pd.Categorical(df["output"].astype(str), categories=list(dict.fromkeys(res.outputs)))
    return df


def _rug(res, seed: int) -> pd.DataFrame:
    v = pd.to_numeric(pd.Series(np.asarray(res.feature_data.get(res.features[0]))), errors="coerce")
    v = v[np.isfinite(v)].to_numpy(dtype=float)
    if v.size > RUG_MAX:
        v = np.random.default_rng(seed).choice(v, RUG_MAX, replace=False)
    return pd.DataFrame({"feature_set": res.feature_set, "x": v})


# ------------------------------------------------------------------ ALE
def plot_ale(res, **options):
    """An undrawn figure of an :class:`~pdpx.explain.accumulated.ALEResult` (see the module).

    Options: ``rug``, ``points`` (dots on at most 25 bin edges, :data:`~.plot_style.DOTS_MAX`), ``caption``,
    ``base_size``, ``share_y``, ``seed`` (of the rug's and the data points' subsample), as in
    :func:`pdpx.outputs.plot.plot_result`.
    """
    opts = _options("plot_ale", options)
    if len(res.features) == 2:
        return _ale_tiles(res, opts)
    from plotnine import aes, geom_hline, geom_line, geom_point, geom_rug, ggplot, labs, scale_x_continuous

    df = _outputs_cat(res.to_frame(), res)
    cat = res.categorical[0]
    names = ["zero", "ale_line"]
    layers = [geom_hline(yintercept=0, color="#9e9e9e", linetype="dashed", size=0.4)]
    if cat:
        df["x"] = df["x_1"]
        layers.append(geom_line(df, aes("x", "yhat", group="output"), color=PD_COLOR, size=0.6, alpha=0.5))
        layers.append(geom_point(df, aes("x", "yhat"), color=PD_COLOR, size=2.5))
        names.append("ale_points")
        labels = [str(v) for v in res.grid_values[0]]
        layers.append(scale_x_continuous(breaks=list(range(len(labels))), labels=labels))
        caption = ("categories in the order of accumulation (" + ("given" if res.order == "given"
                   else "by similarity of the other features") + "); centered: mean over the rows = 0")
    else:
        df["x"] = df["x_1"]
        layers.append(geom_line(df, aes("x", "yhat"), color=PD_COLOR, size=1.0))
        if opts["points"] and len(res.grid_values[0]) <= DOTS_MAX:  # dots on small grids only
            layers.append(geom_point(df, aes("x", "yhat"), color=PD_COLOR, size=1.3))
            names.append("ale_points")
        if opts["rug"]:
            rug = _rug(res, opts["seed"])
            layers.append(geom_rug(rug, aes(x="x"), inherit_aes=False, sides="b", alpha=rug_alpha(rug),
                                   color="#555555", length=0.03))
            names.append("rug")
        caption = (f"{len(res.grid_values[0]) - 1} bins at quantiles of {res.features[0]}; "
                   "centered: mean over the rows = 0")
    p = ggplot() + layers[0]
    for layer in layers[1:]:
        p = p + layer
    p = p + labs(x=res.features[0], y=f"accumulated local effect ({_what(res)})")
    return _finish(_output_facets(p, res, opts), names, res, opts, caption)


def _bounds(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tile bounds around each value: midway to its neighbours (the outer ones as far out)."""
    mid = (v[1:] + v[:-1]) / 2
    lo = np.concatenate([[v[0] - (mid[0] - v[0])], mid])
    hi = np.concatenate([mid, [v[-1] + (v[-1] - mid[-1])]])
    return lo, hi


def _tiles(res, values: np.ndarray) -> pd.DataFrame:
    g1, g2 = (np.asarray(g, dtype=float) for g in res.grid_values)
    lo1, hi1 = _bounds(g1)
    lo2, hi2 = _bounds(g2)
    i, j = np.meshgrid(np.arange(g1.size), np.arange(g2.size), indexing="ij")
    parts = []
    for k, out in enumerate(res.outputs):
        parts.append(pd.DataFrame({"output": out, "xmin": lo1[i.ravel()], "xmax": hi1[i.ravel()],
                                   "ymin": lo2[j.ravel()], "ymax": hi2[j.ravel()],
                                   "value": np.asarray(values[k]).ravel()}))
    return _outputs_cat(pd.concat(parts, ignore_index=True), res)


def _data_points(res, seed: int) -> pd.DataFrame:
    a, b = (pd.to_numeric(pd.Series(np.asarray(res.feature_data[f])), errors="coerce").to_numpy(dtype=float)
            for f in res.features)
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    if a.size > RUG_MAX:
        pick = np.random.default_rng(seed).choice(a.size, RUG_MAX, replace=False)
        a, b = a[pick], b[pick]
    return pd.DataFrame({"x": a, "y": b})


def _ale_tiles(res, opts):
    from plotnine import aes, geom_point, geom_rect, ggplot, labs, scale_fill_gradient2

    tiles = _tiles(res, res.average)
    p = (ggplot() + geom_rect(tiles, aes(xmin="xmin", xmax="xmax", ymin="ymin", ymax="ymax", fill="value"))
         + scale_fill_gradient2(name=f"ALE\n({_what(res)})", **_DIVERGING))
    names = ["ale_tiles"]
    if opts["rug"]:
        pts = _data_points(res, opts["seed"])
        p = p + geom_point(pts, aes("x", "y"), inherit_aes=False, size=0.4, alpha=0.35, color="#333333")
        names.append("data")
    p = p + labs(x=res.features[0], y=res.features[1])
    caption = ("second-order ALE: the interaction alone, both features' own effects removed; "
               "dots: the data" if opts["rug"] else "second-order ALE: the interaction alone")
    return _finish(_output_facets(p, res, opts), names, res, opts, caption)


# ------------------------------------------------------------------ derivative ICE
def plot_derivative(res, **options):
    """An undrawn figure of a :class:`~pdpx.explain.derivative.DerivativeResult` (see the module).

    Options: ``n_ice`` (curves drawn, a seeded subsample), ``seed``, ``ice``, ``rug``,
    ``caption``, ``base_size``, ``ice_alpha``.
    """
    opts = _options("plot_derivative", options)
    from plotnine import aes, geom_hline, geom_line, geom_rug, ggplot, labs

    grid = np.asarray(res.grid_values[0], dtype=float)
    panels = ["derivative", "sd of derivative"]
    top, bottom = [], []
    K = len(res.outputs)
    for k, out in enumerate(res.outputs):
        top.append(pd.DataFrame({"output": out, "x": grid, "y": res.average[k], "panel": panels[0]}))
        bottom.append(pd.DataFrame({"output": out, "x": grid, "y": res.sd[k], "panel": panels[1]}))
    avg = pd.concat(top, ignore_index=True)
    sd = pd.concat(bottom, ignore_index=True)
    names = ["zero"]
    p = ggplot() + geom_hline(pd.DataFrame({"panel": panels, "y": [0.0, 0.0]}), aes(yintercept="y"),
                              color="#9e9e9e", linetype="dashed", size=0.4)
    note = ""
    if opts["ice"]:
        n = res.individual.shape[1]
        pick = np.arange(n)
        if opts["n_ice"] is not None and n > opts["n_ice"]:
            pick = np.sort(np.random.default_rng(opts["seed"]).choice(n, opts["n_ice"], replace=False))
        curves = res.individual[:, pick]
        ice = pd.DataFrame({
            "output": np.repeat(np.asarray(res.outputs, dtype=object), len(pick) * grid.size),
            "curve": np.tile(np.repeat(np.arange(len(pick)), grid.size), K) + np.repeat(np.arange(K), len(pick)
                                                                                        * grid.size) * len(pick),
            "x": np.tile(grid, K * len(pick)), "y": curves.reshape(-1), "panel": panels[0]})
        alpha = opts["ice_alpha"] or float(np.clip(3 / np.sqrt(max(len(pick), 1)), 0.1, 0.5))
        p = p + geom_line(_panel(_outputs_cat(ice, res), panels), aes("x", "y", group="curve"), color=ICE_COLOR,
                          alpha=alpha, size=0.35)
        names.append("dice")
        note = f"thin: {len(pick)} of {n:,} rows' derivatives; "
    p = p + geom_line(_panel(_outputs_cat(avg, res), panels), aes("x", "y"), color=PD_COLOR, size=1.0)
    p = p + geom_line(_panel(_outputs_cat(sd, res), panels), aes("x", "y"), color="#333333", size=0.8)
    names += ["mean_derivative", "sd"]
    if opts["rug"]:
        rug = _rug(res, opts["seed"]).assign(panel=panels[1])
        rug = rug[(rug["x"] >= grid.min()) & (rug["x"] <= grid.max())]
        p = p + geom_rug(_panel(rug, panels), aes(x="x"), inherit_aes=False, sides="b", alpha=rug_alpha(rug),
                         color="#555555", length=0.03)
        names.append("rug")
    p = p + labs(x=res.features[0], y=f"d {_what(res)} / d {res.features[0]}")
    caption = note + "thick: mean derivative; below: sd across rows"
    return _finish(_output_facets(p, res, opts, rows="panel"), names, res, opts, caption, rows=2)


def _panel(df: pd.DataFrame, panels: list[str]) -> pd.DataFrame:
    df["panel"] = pd.Categorical(df["panel"], categories=panels)
    return df


# ------------------------------------------------------------------ exact vs recursion
def plot_comparison(cmp, **options):
    """An undrawn figure of a :class:`~pdpx.explain.compare.MethodComparison` (see the module).

    Options: ``points`` (marks on grids of at most 25 points, :data:`~.plot_style.DOTS_MAX`), ``caption``,
    ``base_size``, ``share_y``.
    """
    opts = _options("plot_comparison", options)
    res = cmp.exact
    if len(res.features) == 2:
        if any(res.categorical):
            raise PdpxError("plot_comparison(): 2-way comparisons are drawn for two numeric features; "
                            "use cmp.to_frame() for categorical ones")
        from plotnine import aes, geom_rect, ggplot, labs, scale_fill_gradient2

        tiles = _tiles(res, cmp.difference)
        p = (ggplot() + geom_rect(tiles, aes(xmin="xmin", xmax="xmax", ymin="ymin", ymax="ymax", fill="value"))
             + scale_fill_gradient2(name="recursion\n- exact", **_DIVERGING)
             + labs(x=res.features[0], y=res.features[1]))
        return _finish(_output_facets(p, res, opts), ["gap_tiles"], res, opts,
                       f"recursion minus {res.method} partial dependence")
    from plotnine import aes, geom_hline, geom_line, geom_point, ggplot, labs, scale_color_manual

    df = cmp.to_frame()
    cat = res.categorical[0]
    x = df["x_1"].to_numpy(dtype=float)
    panels = ["partial dependence", "recursion - exact"]
    exact_name = f"exact ({res.method})" if res.method != "exact" else "exact"
    curves = pd.concat([
        pd.DataFrame({"output": df["output"], "x": x, "y": df["exact"], "method": exact_name}),
        pd.DataFrame({"output": df["output"], "x": x, "y": df["recursion"], "method": "recursion"}),
    ], ignore_index=True).assign(panel=panels[0])
    curves["method"] = pd.Categorical(curves["method"], categories=[exact_name, "recursion"])
    gap = pd.DataFrame({"output": df["output"], "x": x, "y": df["difference"], "panel": panels[1]})
    curves, gap = (_panel(_outputs_cat(d, res), panels) for d in (curves, gap))
    p = (ggplot() + geom_hline(_panel(pd.DataFrame({"panel": [panels[1]], "y": [0.0]}), panels),
                               aes(yintercept="y"), color="#9e9e9e", linetype="dashed", size=0.4)
         + geom_line(curves, aes("x", "y", color="method", group="method"), size=0.9)
         + geom_line(gap, aes("x", "y"), color="#333333", size=0.8)
         + scale_color_manual(values=[PALETTE[0], PALETTE[5]], name="method"))
    names = ["zero", "curves", "gap"]
    if (opts["points"] and len(res.grid_values[0]) <= DOTS_MAX) or cat:
        p = p + geom_point(curves, aes("x", "y", color="method"), size=1.4) + geom_point(gap, aes("x", "y"),
                                                                                         size=1.2)
        names += ["curve_points", "gap_points"]
    if cat:
        from plotnine import scale_x_continuous

        labels = [str(v) for v in res.grid_values[0]]
        p = p + scale_x_continuous(breaks=list(range(len(labels))), labels=labels)
    p = p + labs(x=res.features[0], y=_what(res))
    caption = "exact: brute's answer over the rows of X; recursion: weighted by training fractions"
    return _finish(_output_facets(p, res, opts, rows="panel"), names, res, opts, caption, rows=2)
