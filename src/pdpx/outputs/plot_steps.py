"""Step curves: how the figures draw a feature whose grid is ``grid="thresholds"`` (``res.steps``).

Such a grid has one point per step of the model's curve, and the value at a point
holds over its whole step (:mod:`pdpx.core.steps`). So the figures draw steps, not
straight lines between the points:

* a model comparing ``x <= t``: point ``g[i]`` stands for the step ``(g[i-1], g[i]]``,
  so the curve rises or falls at ``g[i-1]`` and runs flat to ``g[i]``: ``geom_step``
  with ``direction="vh"``; the last point stands for every value above the largest
  threshold (the one before it);
* a model comparing ``x < t``: point ``g[i]`` stands for ``[g[i], g[i+1])``:
  ``direction="hv"``; the first point stands for every value below the smallest threshold.

The outer steps run on to the ends of the feature's data (or a little past the grid),
so that each step has its width on the axis. 2-way tiles span each step the same way
(:func:`step_edges`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: ``geom_step``'s direction for each comparison.
DIRECTION = {"<=": "vh", "<": "hv"}


def direction(res, j: int = 0) -> str:
    """``geom_step``'s direction for feature ``j`` of ``res``, or "" when its grid is not a threshold grid."""
    steps = getattr(res, "steps", None) or {}
    return DIRECTION.get(steps.get(res.features[j], ""), "")


def outer_ends(res, j: int, grid) -> tuple[float, float]:
    """How far the first and last steps of feature ``j`` run: to its data's ends, and at least a little past
    the grid (5% of its span)."""
    g = np.asarray(grid, dtype=np.float64)
    g = g[np.isfinite(g)]
    span = float(g[-1] - g[0]) if g.size > 1 else 0.0
    pad = 0.05 * span if span > 0 else max(0.05 * abs(float(g[0])), 0.5)
    lo, hi = float(g[0]) - pad, float(g[-1]) + pad
    data = res.feature_data.get(res.features[j]) if res.feature_data else None
    if data is not None:
        x = pd.to_numeric(pd.Series(np.asarray(data)), errors="coerce").to_numpy(dtype=np.float64)
        x = x[np.isfinite(x)]
        if x.size:
            lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
    return lo, hi


def step_edges(res, j: int, grid) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) bound of the step each grid point of feature ``j`` stands for (2-way tiles)."""
    g = np.asarray(grid, dtype=np.float64)
    lo_end, hi_end = outer_ends(res, j, g)
    if direction(res, j) == "vh":  # (g[i-1], g[i]]; the last: above the largest threshold
        lower = np.concatenate([[lo_end], g[:-1]])
        upper = np.concatenate([g[:-1], [hi_end]]) if g.size > 1 else np.array([hi_end])
    else:  # [g[i], g[i+1]); the first: below the smallest threshold
        lower = np.concatenate([[lo_end], g[1:]]) if g.size > 1 else np.array([lo_end])
        upper = np.concatenate([g[1:], [hi_end]])
    return lower, upper


def extend_steps(df: pd.DataFrame, results) -> pd.DataFrame:
    """The 1-way frame with a ``step`` column (the direction, "" for other features) and, for each step curve,
    a copy of its first and last point moved to the ends the outer steps run to (``extension`` True)."""
    df = df.assign(step="", extension=False)
    parts = [df]
    for r in results:
        d = direction(r)
        if not d:
            continue
        here = (df["feature_set"].astype(str) == r.feature_set).to_numpy()
        df.loc[here, "step"] = d
        grid = np.asarray(r.grid_values[0], dtype=np.float64)
        lo, hi = outer_ends(r, 0, grid)
        curve = df[here & ~df["missing"].to_numpy(dtype=bool)]
        parts += outer_rows(curve, ["output", "kind", curve["row"].fillna(-1)], lo, hi, d)
    if len(parts) == 1:
        return df
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values(["x"], kind="stable", ignore_index=True)


def outer_rows(curve: pd.DataFrame, keys: list, lo: float, hi: float, d: str) -> list[pd.DataFrame]:
    """Each curve's (by ``keys``) first point moved to ``lo`` and last point to ``hi``: where its outer steps end."""
    groups = curve.sort_values("x", kind="stable").groupby(keys, sort=False, observed=True)
    return [groups.head(1).assign(x=lo, step=d, extension=True), groups.tail(1).assign(x=hi, step=d, extension=True)]


def extend_stacked(line: pd.DataFrame, stacked) -> pd.DataFrame:
    """:func:`extend_steps` for the overlay of a :class:`~pdpx.core.stacked.StackedResult` (one curve per model
    or group, each by its own steps)."""
    line = line.assign(step="", extension=False)
    parts = [line]
    for label, r in zip(stacked.labels, stacked.results):
        d = direction(r)
        if not d:
            continue
        here = (line[stacked.column].astype(str) == str(label)).to_numpy()
        line.loc[here, "step"] = d
        lo, hi = outer_ends(r, 0, np.asarray(r.grid_values[0], dtype=np.float64))
        parts += outer_rows(line[here], ["output"], lo, hi, d)
    if len(parts) == 1:
        return line
    return pd.concat(parts, ignore_index=True).sort_values(["x"], kind="stable", ignore_index=True)


def line_layers(frame: pd.DataFrame, mapping, **style) -> list:
    """``geom_line`` for the curves of ordinary grids (as :class:`~.plot_lines.geom_curves`, which draws many
    curves of one style at once) and ``geom_step`` (by direction) for step curves."""
    from plotnine import geom_step

    from .plot_lines import geom_curves

    layers = []
    plain = frame[frame["step"] == ""]
    if len(plain):
        layers.append(geom_curves(plain, mapping, **style))
    for d in ("vh", "hv"):
        part = frame[frame["step"] == d]
        if len(part):
            layers.append(geom_step(part, mapping, direction=d, **style))
    return layers
