"""How much data supports each grid point of a result, and the warning when a PD rests on absent combinations.

Support of a grid point (``res.support``, an array of ``res.grid_shape``)
-------------------------------------------------------------------------
The number of rows of X (the sum of their ``sample_weight`` when given) whose value of
the feature lies in the grid point's **interval**:

* numeric feature: from the midpoint to the previous grid point (included) to the
  midpoint to the next one (excluded), the grid taken in increasing order. The outer
  ends mirror the inner half-width: the first point's interval starts as far below it
  as its upper midpoint lies above it, and the last point's interval (closed on both
  sides) ends as far above it. A grid of one point supports the rows equal to it.
  Rows outside every interval (beyond the 5th / 95th percentile grid) support no point.
  On a threshold grid (``grid="thresholds"``, ``res.steps``) the interval is the step the
  point stands for (:mod:`pdpx.core.steps`): every row supports the point of its step.
* categorical feature: the rows at that level;
* the missing-value point (NaN in ``grid_values``, see :mod:`pdpx.core.missing`): the
  rows whose value is missing.

For two features a cell's support counts the rows in its rectangle (the product of the
two intervals); empty cells hold 0. For two numeric features ``res.outside_hull``
also says which grid points lie outside the convex hull of the rows' observed pairs
(degenerate hulls, a segment or a point, hold only the points on them).

``res.unsupported`` (what figures shade) marks the grid points with **no row within
one grid step**: the support of the point plus that of its neighbours along each
numeric feature's grid (a 3 x 3 block of cells for two numeric features) is 0, or
the point lies outside the hull. An empty interval between two supported neighbours
is interpolation, not extrapolation, and a fine grid over few rows has many such
intervals. Categories and the missing-value point have no neighbours: support 0.

The extrapolation check (``res.extrapolation`` and :class:`~pdpx.core.errors.ExtrapolationWarning`)
is :mod:`pdpx.core.extrapolation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from . import dates


# ------------------------------------------------------------------ support
@dataclass(eq=False)
class SupportInputs:
    """What a result's support diagnostics are computed from, when first read.

    ``columns`` are the target features' values over every row (each group's own rows for
    ``by=``), ``grids`` and ``categorical`` the result's, ``weights`` the rows' ``sample_weight``;
    ``outside`` is the convex-hull mask when the extrapolation check already computed it.
    :meth:`counts` and :meth:`hull` compute once; what fails is None, with a note saying why.
    """

    columns: list
    grids: list
    categorical: list
    weights: np.ndarray | None = None
    outside: np.ndarray | None = None
    steps: list | None = None  # per feature: its trees' comparison when its grid is a threshold grid, else None
    _counts: np.ndarray | None = field(default=None, repr=False)
    _done: bool = field(default=False, repr=False)

    def counts(self, notes: list) -> np.ndarray | None:
        """:func:`support_counts` of the rows (``notes`` gets a line if it cannot be computed)."""
        self._compute(notes)
        return self._counts

    def hull(self, notes: list) -> np.ndarray | None:
        """:func:`outside_hull` for two numeric features, else None."""
        self._compute(notes)
        return self.outside

    def _compute(self, notes: list) -> None:
        if self._done:
            return
        self._done = True
        why = [c.attrs["stand_in"] for c in self.columns if "stand_in" in getattr(c, "attrs", {})]
        if why:  # a column of a Spark X too large to bring here (pdpx.rows.spark_grids): not every row's value
            self._counts = self.outside = None
            notes.append(f"support not computed: {why[0]}")
            return
        try:
            self._counts = support_counts(self.columns, self.grids, self.categorical, self.weights, self.steps)
            if self.outside is None and len(self.columns) == 2 and not any(self.categorical):
                self.outside = outside_hull(self.columns[0], self.columns[1], self.grids[0], self.grids[1])
        except Exception as exc:  # noqa: BLE001 - a diagnostic never refuses: None, and a note
            self._counts = self.outside = None
            notes.append(f"support not computed: {type(exc).__name__}: {exc}")


def as_floats(values) -> np.ndarray:
    """``values`` as float64, NaN where a value is missing or not a number; dates as days since 1970-01-01
    (:func:`pdpx.core.dates.day_numbers`)."""
    if dates.is_date_grid(values) or (isinstance(values, pd.Series) and dates.is_date_type(values.dtype)):
        return dates.day_numbers(values)
    if isinstance(values, (np.ndarray, pd.Series)) and isinstance(values.dtype, np.dtype) \
            and values.dtype.kind in "fiu":  # numbers already: no conversion by pandas
        return np.asarray(values, dtype=np.float64)
    return pd.to_numeric(pd.Series(np.asarray(values, dtype=object) if isinstance(values, np.ndarray)
                                   and values.dtype == object else values), errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan)


def grid_floats(grid) -> np.ndarray:
    """A numeric grid as float64, a grid of dates as days since 1970-01-01 (the missing point: NaN)."""
    return dates.day_numbers(grid) if dates.is_date_grid(grid) else np.asarray(grid, dtype=np.float64)


def _halfway(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(a + b) / 2 without overflow for values near the float limits."""
    return a / 2 + b / 2


def intervals(grid) -> tuple[np.ndarray, np.ndarray]:
    """Each finite grid point's interval [low, high) (the last one closed), in grid order; NaN points get NaN."""
    g = grid_floats(grid)
    lo, hi = np.full(g.size, np.nan), np.full(g.size, np.nan)
    finite = np.flatnonzero(np.isfinite(g))
    if finite.size == 0:
        return lo, hi
    order = finite[np.argsort(g[finite], kind="stable")]
    v = g[order]
    if v.size == 1:
        lo[order], hi[order] = v, v
        return lo, hi
    mid = _halfway(v[:-1], v[1:])
    low = np.concatenate([[v[0] - (mid[0] - v[0])], mid])
    high = np.concatenate([mid, [v[-1] + (v[-1] - mid[-1])]])
    lo[order], hi[order] = low, high
    return lo, hi


def grid_index(column, grid, categorical: bool, step: str | None = None) -> np.ndarray:
    """The grid point each row supports (position in ``grid``), -1 for none. O(n log G).

    ``step`` (``"<="`` or ``"<"``): ``grid`` is a threshold grid, each point stands for a step.
    """
    if categorical:
        grid = np.asarray(grid)
        levels = pd.Index(pd.Series(grid, dtype=object))
        values = pd.Series(np.asarray(column, dtype=object) if not isinstance(column, pd.Series) else column)
        values = values.astype(object)
        idx = levels.get_indexer(values.where(values.notna(), None))
        idx[values.isna().to_numpy()] = -1
        return idx.astype(np.int64)
    x = as_floats(column)
    g = grid_floats(grid)
    idx = np.full(x.size, -1, dtype=np.int64)
    nan_points = np.flatnonzero(np.isnan(g))
    if nan_points.size:
        idx[np.isnan(x)] = nan_points[0]
    finite = np.flatnonzero(np.isfinite(g))
    if finite.size == 0:
        return idx
    order = finite[np.argsort(g[finite], kind="stable")]
    if step is not None:  # the point of each row's step: the rule of pdpx.core.steps
        v, ok = g[order], np.isfinite(x)
        if step == "<=":
            pos = np.minimum(np.searchsorted(v, x[ok], side="left"), v.size - 1)
        else:
            pos = np.maximum(np.searchsorted(v, x[ok], side="right") - 1, 0)
        idx[ok] = order[pos]
        return idx
    lo, hi = intervals(g)
    if order.size == 1:
        idx[x == g[order[0]]] = order[0]
        return idx
    edges = np.concatenate([lo[order], [hi[order[-1]]]])  # increasing
    ok = np.isfinite(x) & (x >= edges[0]) & (x <= edges[-1])
    pos = np.searchsorted(edges, x[ok], side="right") - 1
    pos = np.minimum(pos, order.size - 1)  # x equal to the last edge: the closed end
    idx[ok] = order[pos]
    return idx


def support_counts(columns: Sequence, grids: Sequence, categorical: Sequence[bool],
                   weights: np.ndarray | None = None, steps: Sequence | None = None) -> np.ndarray:
    """Weighted count of rows in each grid cell: an array of the grid's shape (see the module docstring).

    ``steps``: per feature, the comparison of a threshold grid (None for other grids).
    """
    shape = tuple(len(g) for g in grids)
    cell = np.zeros(len(columns[0]), dtype=np.int64)
    ok = np.ones(len(columns[0]), dtype=bool)
    for col, grid, cat, size, step in zip(columns, grids, categorical, shape, steps or [None] * len(grids)):
        idx = grid_index(col, grid, cat, step)
        ok &= idx >= 0
        cell = cell * size + np.maximum(idx, 0)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[ok]
    counts = np.bincount(cell[ok], weights=w, minlength=int(np.prod(shape)))
    return counts.astype(np.float64).reshape(shape)


def outside_hull(a, b, g1, g2) -> np.ndarray:
    """Whether each grid point (g1[i], g2[k]) lies outside the convex hull of the finite pairs (a, b).

    Coordinates are scaled to [0, 1] by the data's range first. Fewer than three distinct
    pairs, or pairs on one line, make a degenerate hull: only points on it are inside.
    NaN grid points (the missing-value point) are never outside.
    """
    from scipy.spatial import ConvexHull, QhullError

    a, b = as_floats(a), as_floats(b)
    ok = np.isfinite(a) & np.isfinite(b)
    G1, G2 = grid_floats(g1), grid_floats(g2)
    out = np.zeros((G1.size, G2.size), dtype=bool)
    gx, gy = np.meshgrid(G1, G2, indexing="ij")
    applies = np.isfinite(gx) & np.isfinite(gy)
    if not ok.any():
        out[applies] = True
        return out
    low = np.array([np.min(a, where=ok, initial=np.inf), np.min(b, where=ok, initial=np.inf)])
    span = np.array([np.max(a, where=ok, initial=-np.inf), np.max(b, where=ok, initial=-np.inf)]) - low
    span[span == 0] = 1.0
    pts = _hull_candidates(a, b, None if ok.all() else ok, low, span)
    q = (np.column_stack([gx[applies], gy[applies]]) - low) / span
    tol = 1e-9
    inside = None
    if len(pts) >= 3:
        try:
            hull = ConvexHull(pts)
            eq = hull.equations
            # inside every facet: the largest of a point's facet values within the tolerance (a max per
            # row, which numpy does far faster than an all() over a boolean matrix)
            inside = (q @ np.ascontiguousarray(eq[:, :2].T) + eq[:, 2]).max(axis=1) <= tol
        except QhullError:  # collinear
            inside = None
    if inside is None:
        pts = np.unique(pts, axis=0)  # degenerate: few distinct points, or one line
        p0 = pts[0]
        far = pts[np.argmax(np.sum((pts - p0) ** 2, axis=1))]
        d = far - p0
        length2 = float(d @ d)
        if length2 == 0:
            inside = np.all(np.abs(q - p0) <= tol, axis=1)
        else:
            t = (q - p0) @ d / length2
            tmin, tmax = (((pts - p0) @ d) / length2).min(), (((pts - p0) @ d) / length2).max()
            proj = p0 + np.outer(t, d)
            dist = np.sqrt(np.sum((q - proj) ** 2, axis=1))
            inside = (dist <= tol) & (t >= tmin - tol) & (t <= tmax + tol)
    out[applies] = ~inside
    return out


#: rows the hull's candidate search scales and filters at a time (its memory does not grow with the rows)
HULL_ROWS = 2**16


def _hull_candidates(a: np.ndarray, b: np.ndarray, ok: np.ndarray | None, low: np.ndarray,
                     span: np.ndarray) -> np.ndarray:
    """The scaled pairs ``((a - low) / span, (b - low) / span)`` (those marked ``ok``; None: all) that may be
    vertices of their convex hull: those not strictly inside the polygon of the extreme points in eight
    directions (the hull is the same, and qhull reads far fewer points). :data:`HULL_ROWS` rows at a time."""
    n = len(a)

    def scaled(r0):
        x, y = a[r0:r0 + HULL_ROWS], b[r0:r0 + HULL_ROWS]
        if ok is not None:
            x, y = x[ok[r0:r0 + HULL_ROWS]], y[ok[r0:r0 + HULL_ROWS]]
        return (x - low[0]) / span[0], (y - low[1]) / span[1]

    def every():
        return np.concatenate([np.column_stack(scaled(r0)) for r0 in range(0, n, HULL_ROWS)])

    if (n if ok is None else np.count_nonzero(ok)) < 64:
        return every()
    ends = [None] * 8  # (value, x, y) of the first extreme point in each direction
    for r0 in range(0, n, HULL_ROWS):
        x, y = scaled(r0)
        if x.size == 0:
            continue
        for d, v in enumerate((x, y, x + y, x - y)):
            for e, (f, better) in enumerate(((np.argmin, np.less), (np.argmax, np.greater))):
                i = int(f(v))
                if ends[2 * d + e] is None or better(v[i], ends[2 * d + e][0]):
                    ends[2 * d + e] = (v[i], x[i], y[i])
    poly = np.unique(np.array([end[1:] for end in ends]), axis=0)
    if len(poly) < 3:
        return every()
    c = poly.mean(axis=0)
    poly = poly[np.argsort(np.arctan2(poly[:, 1] - c[1], poly[:, 0] - c[0]))]  # counter-clockwise
    ex, ey = (np.roll(poly, -1, axis=0) - poly).T
    kept, dropped = [], 0
    for r0 in range(0, n, HULL_ROWS):
        x, y = scaled(r0)
        inner = np.ones(len(x), dtype=bool)  # the points strictly inside every edge so far (with a margin)
        for k in range(len(poly)):  # edge by edge over the whole slice (no gathers): no (rows x edges) array
            inner &= ex[k] * (y - poly[k, 1]) - ey[k] * (x - poly[k, 0]) > 1e-9
        keep = ~inner
        dropped += len(x) - int(np.count_nonzero(keep))
        kept.append(np.column_stack([x[keep], y[keep]]))
    if dropped == 0 or all(len(k) == 0 for k in kept):
        return every()
    return np.concatenate(kept)


def unsupported_cells(counts, grids, categorical, hull=None) -> np.ndarray:
    """Grid cells with no row within one grid step, or outside the hull (see the module docstring)."""
    out = np.asarray(counts, dtype=np.float64).copy()
    for ax, (grid, cat) in enumerate(zip(grids, categorical)):
        if cat:
            continue
        g = grid_floats(grid)
        finite = np.flatnonzero(np.isfinite(g))
        order = finite[np.argsort(g[finite], kind="stable")]
        moved = np.moveaxis(out, ax, 0).copy()
        sub = moved[order]
        wide = sub.copy()
        wide[1:] += sub[:-1]
        wide[:-1] += sub[1:]
        moved[order] = wide
        out = np.moveaxis(moved, 0, ax)
    mask = out <= 0
    if hull is not None:
        mask |= np.asarray(hull, dtype=bool)
    return mask


def support_summary(res) -> str | None:
    """One sentence on a result's unsupported grid points and its extrapolation share, or None when all is well.

    For the report: a flag to show next to the result's figure.
    """
    mask = getattr(res, "unsupported", None)
    check = getattr(res, "extrapolation", None)
    parts = []
    if mask is not None and mask.any():
        n, total = int(mask.sum()), mask.size
        unit = "grid points" if len(res.features) == 1 else "grid cells"
        why = "no rows of the data within a grid step" if getattr(res, "outside_hull", None) is None else \
            "no rows of the data within a grid step, or lie outside the convex hull of the data"
        parts.append(f"{n} of {total} {unit} of {res.feature_set} have {why} (shaded in the figure)")
    if check is not None and check.warns:
        partner = f" with {check.partner!r}" if check.partner else ""
        parts.append(f"{100 * check.share:.0f}% of the partial dependence rests on combinations{partner} absent "
                     "from the data; accumulated local effects (pdpx.ale) stay within the data")
    return "; ".join(parts) + "." if parts else None
