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

The extrapolation check (:class:`ExtrapolationWarning`)
-------------------------------------------------------
A PD averages the model over every row *with the target features set to each grid
value*: when a target feature is tied to another one, most of those combinations
never occur in the data. pdpx measures the share of the PD's mass (grid points x row
weights) that rests on **absent combinations**, on a seeded sample of at most
:data:`SAMPLE` rows, in coarse bins so that sparsity alone is never mistaken for
dependence:

* each feature is cut into ``B = clip(floor(sqrt(n / 20)), 2, 10)`` quantile bins
  (quantiles of at most :data:`EDGE_ROWS` evenly spaced rows of the sample; its levels for
  a categorical feature; missing values are a bin of their own);
* a cell (bin of one feature x bin of the other) is **absent** when the rows in it
  weigh less than :data:`ABSENT` (5%) of what they would weigh if the two features were
  independent (the product of the two bins' shares); cells expected to hold fewer
  than :data:`MIN_EXPECTED` rows under independence are never called absent;
* 1-way, feature ``a``: for each other numeric column ``b`` (the :data:`MAX_PARTNERS`
  most correlated with ``a`` when there are more), the share is the average over
  ``a``'s grid points of the weight of the rows whose ``b`` bin is absent next to the
  grid point's ``a`` bin; the check keeps the largest share and its partner;
* 2-way: the share of grid cells whose coarse cell is absent or (two numeric
  features) that lie outside the convex hull; every row weighs on every cell alike.

The warning fires, once per call, when the share is at least :data:`WARN_SHARE`
(30%); ``res.extrapolation`` holds the share and the partner either way. Fewer than
40 rows are not judged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

#: Rows the extrapolation check looks at (a seeded sample beyond).
SAMPLE = 5_000  # with at most 10 x 10 coarse cells, 50 rows per cell under independence
#: Share of the PD's mass on absent combinations from which the check warns.
WARN_SHARE = 0.3
#: A coarse cell is absent below this fraction of its weight under independence.
ABSENT = 0.05
#: Cells expected to hold fewer rows than this under independence are not judged.
MIN_EXPECTED = 10
#: Other numeric columns a 1-way check compares with (the most correlated ones).
MAX_PARTNERS = 50
#: Rows below which the check does not judge.
MIN_ROWS = 40


@dataclass(frozen=True)
class Extrapolation:
    """The extrapolation check of one result (see the module docstring).

    Attributes
    ----------
    share : float
        Share of the PD's mass (grid points x row weights) on absent combinations.
    partner : str or None
        1-way: the other feature with the largest share; 2-way: None.
    rows : int
        Rows the check looked at.
    """

    share: float
    partner: str | None
    rows: int

    @property
    def warns(self) -> bool:
        """Whether the share reaches :data:`WARN_SHARE`."""
        return self.share >= WARN_SHARE


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
        try:
            self._counts = support_counts(self.columns, self.grids, self.categorical, self.weights)
            if self.outside is None and len(self.columns) == 2 and not any(self.categorical):
                self.outside = outside_hull(self.columns[0], self.columns[1], self.grids[0], self.grids[1])
        except Exception as exc:  # noqa: BLE001 - a diagnostic never refuses: None, and a note
            self._counts = self.outside = None
            notes.append(f"support not computed: {type(exc).__name__}: {exc}")


def _numeric(values) -> np.ndarray:
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":  # numbers already: no pandas
        return values.astype(np.float64, copy=False)
    return pd.to_numeric(pd.Series(np.asarray(values, dtype=object) if isinstance(values, np.ndarray)
                                   and values.dtype == object else values), errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan)


def _halfway(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(a + b) / 2 without overflow for values near the float limits."""
    return a / 2 + b / 2


def intervals(grid) -> tuple[np.ndarray, np.ndarray]:
    """Each finite grid point's interval [low, high) (the last one closed), in grid order; NaN points get NaN."""
    g = np.asarray(grid, dtype=np.float64)
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


def grid_index(column, grid, categorical: bool) -> np.ndarray:
    """The grid point each row supports (position in ``grid``), -1 for none. O(n log G)."""
    grid = np.asarray(grid)
    if categorical:
        levels = pd.Index(pd.Series(grid, dtype=object))
        values = pd.Series(np.asarray(column, dtype=object) if not isinstance(column, pd.Series) else column)
        values = values.astype(object)
        idx = levels.get_indexer(values.where(values.notna(), None))
        idx[values.isna().to_numpy()] = -1
        return idx.astype(np.int64)
    x = _numeric(column)
    g = np.asarray(grid, dtype=np.float64)
    idx = np.full(x.size, -1, dtype=np.int64)
    nan_points = np.flatnonzero(np.isnan(g))
    if nan_points.size:
        idx[np.isnan(x)] = nan_points[0]
    finite = np.flatnonzero(np.isfinite(g))
    if finite.size == 0:
        return idx
    order = finite[np.argsort(g[finite], kind="stable")]
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
                   weights: np.ndarray | None = None) -> np.ndarray:
    """Weighted count of rows in each grid cell: an array of the grid's shape (see the module docstring)."""
    shape = tuple(len(g) for g in grids)
    cell = np.zeros(len(columns[0]), dtype=np.int64)
    ok = np.ones(len(columns[0]), dtype=bool)
    for col, grid, cat, size in zip(columns, grids, categorical, shape):
        idx = grid_index(col, grid, cat)
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

    a, b = _numeric(a), _numeric(b)
    ok = np.isfinite(a) & np.isfinite(b)
    G1, G2 = np.asarray(g1, dtype=np.float64), np.asarray(g2, dtype=np.float64)
    out = np.zeros((G1.size, G2.size), dtype=bool)
    gx, gy = np.meshgrid(G1, G2, indexing="ij")
    applies = np.isfinite(gx) & np.isfinite(gy)
    if not ok.any():
        out[applies] = True
        return out
    pts = np.column_stack([a[ok], b[ok]])
    low = pts.min(axis=0)
    span = pts.max(axis=0) - low
    span[span == 0] = 1.0
    pts = (pts - low) / span
    q = (np.column_stack([gx[applies], gy[applies]]) - low) / span
    tol = 1e-9
    inside = None
    if len(pts) >= 3:
        try:
            hull = ConvexHull(pts)
            eq = hull.equations
            inside = np.all(q @ eq[:, :2].T + eq[:, 2] <= tol, axis=1)
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


def unsupported_cells(counts, grids, categorical, hull=None) -> np.ndarray:
    """Grid cells with no row within one grid step, or outside the hull (see the module docstring)."""
    out = np.asarray(counts, dtype=np.float64).copy()
    for ax, (grid, cat) in enumerate(zip(grids, categorical)):
        if cat:
            continue
        g = np.asarray(grid, dtype=np.float64)
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


# -------------------------------------------------------------- the check
def _bins(column, categorical: bool, n_bins: int) -> tuple[np.ndarray, object]:
    """Coarse bin of each value (missing values: a bin of their own) and what maps grid values to bins."""
    if categorical:
        s = pd.Series(np.asarray(column, dtype=object)) if not isinstance(column, pd.Series) else column
        s = s.reset_index(drop=True).astype(object)
        levels = pd.Index(pd.unique(s[s.notna()]))
        codes = levels.get_indexer(s.where(s.notna(), None))
        codes[s.isna().to_numpy()] = len(levels)
        return codes.astype(np.int64), ("levels", levels)
    x = _numeric(column)
    ok = np.isfinite(x)
    every = int(np.count_nonzero(ok)) == ok.size
    finite = x if every else x[ok]
    if finite.size == 0:
        inner = np.array([])
    else:  # np.unique of sorted edges: the distinct ones
        e = quantiles(np.sort(_for_edges(finite)), _probs(n_bins))
        inner = e[np.concatenate(([True], e[1:] != e[:-1]))]
    codes = np.searchsorted(inner, x, side="right").astype(np.int64, copy=False)
    if not every:
        codes[~ok] = inner.size + 1
    return codes, ("edges", inner)


_PROBS: dict[int, np.ndarray] = {}


def _probs(n_bins: int) -> np.ndarray:
    """The inner quantile levels of ``n_bins`` bins, ``1 / n_bins, ..., (n_bins - 1) / n_bins`` (read-only)."""
    if n_bins not in _PROBS:
        levels = np.linspace(0, 1, n_bins + 1)[1:-1]
        levels.flags.writeable = False
        _PROBS[n_bins] = levels
    return _PROBS[n_bins]


def quantiles(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.quantile(x, q, axis=0)`` (its default, linear method) of ``x`` already sorted along axis 0.

    The same arithmetic as numpy's, value for value, without its overhead per call (the
    check runs on every call): position ``(n - 1) q`` between two order statistics ``a``
    and ``b``, ``a + (b - a) t``, or ``b - (b - a)(1 - t)`` when ``t >= 0.5``.
    """
    n = x.shape[0]
    v = (n - 1) * q
    below = np.floor(v)
    lo = below.astype(np.intp)
    hi = lo + 1
    top = v >= n - 1
    lo[top] = hi[top] = n - 1
    t = v - below
    tt = t.reshape((-1,) + (1,) * (x.ndim - 1))
    a, b = x[lo], x[hi]
    diff = b - a
    out = a + diff * tt
    up = t >= 0.5
    out[up] = b[up] - diff[up] * (1 - tt[up])
    return out


#: Rows whose quantiles place the coarse bin edges (evenly spaced rows of the sample).
EDGE_ROWS = 1_000


def _for_edges(values: np.ndarray) -> np.ndarray:
    """The rows (axis 0) whose quantiles are the coarse bin edges: at most :data:`EDGE_ROWS`, evenly spaced."""
    step = -(-len(values) // EDGE_ROWS)
    return values[::step] if step > 1 else values


def _partner_bins(sample, partners: Sequence[int], n_bins: int) -> list[np.ndarray]:
    """:func:`_bins` codes of the numeric ``partners`` columns of ``sample`` (a DataFrame, or its columns as
    floats): the columns without missing values in one vectorised pass (the same codes: the number of
    distinct quantile edges at or below each value)."""
    if not partners:
        return []
    if isinstance(sample, np.ndarray):
        M = sample[:, list(partners)]
    else:
        try:  # numeric columns (the partners are): one conversion
            M = sample.iloc[:, list(partners)].to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            M = np.column_stack([_numeric(sample.iloc[:, k]) for k in partners])
    finite = np.isfinite(M.sum(axis=0))  # a column sums to a finite number when every value is (or takes the
    # per-column path below, which codes finite columns alike)
    out: list = [None] * len(partners)
    cols = np.flatnonzero(finite)
    if cols.size:
        F = M if cols.size == M.shape[1] else M[:, cols]
        E = quantiles(np.sort(_for_edges(F), axis=0), _probs(n_bins))  # (n_bins - 1, columns)
        E[1:][E[1:] == E[:-1]] = np.inf  # a repeated edge counts once, as np.unique's would
        codes = np.zeros(F.shape, dtype=np.int64)
        for edge in E:  # the edges at or below each value, one level at a time
            codes += F >= edge
        codes = np.ascontiguousarray(codes.T)
        for i, c in enumerate(cols):
            out[c] = codes[i]
    for c in np.flatnonzero(~finite):
        out[c] = _bins(M[:, c], False, n_bins)[0]
    return out


def _grid_bins(grid, mapping) -> np.ndarray:
    kind, m = mapping
    if kind == "levels":
        codes = m.get_indexer(pd.Series(np.asarray(grid), dtype=object))
        return codes.astype(np.int64)  # -1: a level absent from the sample (not judged)
    g = np.asarray(grid, dtype=np.float64)
    codes = np.searchsorted(m, g, side="right")
    codes[np.isnan(g)] = m.size + 1
    return codes.astype(np.int64)


def _absent(ca, CB, w, na: int, nb: int) -> tuple[np.ndarray, np.ndarray]:
    """(absent cells (K, na, nb), weight share of each b bin (K, nb)) for the bins ``ca`` of one feature against
    each row of ``CB`` (K partners' bins, shape (K, n)): all partners in one bincount (``w`` None: weights 1)."""
    K = CB.shape[0]
    return _judge(*_histograms(((np.arange(K)[:, None] * na + ca[None, :]) * nb + CB).ravel(), w, (K, na, nb)))


def _histograms(cell: np.ndarray, w: np.ndarray | None, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(weights, counts) of the rows in each cell (flat ``cell`` ids of K stacked partners), of ``shape``."""
    size = int(np.prod(shape))
    N = np.bincount(cell, minlength=size).reshape(shape).astype(np.float64)
    if w is None:  # every row weighs 1: the counts are the weights
        return N, N
    return np.bincount(cell, weights=np.tile(w, shape[0]), minlength=size).reshape(shape), N


def _judge(H: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The absent cells of weights ``H`` and counts ``N`` (K, na, nb), and each b bin's weight share (K, nb)."""
    W = H.sum(axis=(1, 2))
    expected_w = H.sum(axis=2)[:, :, None] * H.sum(axis=1)[:, None, :] / W[:, None, None]
    expected_n = N.sum(axis=2)[:, :, None] * N.sum(axis=1)[:, None, :] / N.sum(axis=(1, 2))[:, None, None]
    absent = (expected_n >= MIN_EXPECTED) & (H < ABSENT * expected_w)
    return absent, H.sum(axis=1) / W[:, None]


def _sample(frame: pd.DataFrame, weights) -> tuple[pd.DataFrame, np.ndarray]:
    n = len(frame)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)[:n]
    if n > SAMPLE:
        pick = np.sort(np.random.default_rng(0).choice(n, SAMPLE, replace=False))
        return frame.iloc[pick], w[pick]
    return frame, w


def _floats(sample: pd.DataFrame, cache: dict) -> np.ndarray:
    """The sample's columns as floats, (n, p), converted once per call (NaN where a column holds no numbers)."""
    if "floats" not in cache:
        try:
            cache["floats"] = sample.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):  # text or categories among the columns: the numeric ones, one by one
            nan = np.full(len(sample), np.nan)
            cache["floats"] = np.column_stack([
                _numeric(sample.iloc[:, k]) if pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
                else nan for k, t in enumerate(sample.dtypes.tolist())])
    return cache["floats"]


def n_bins(n: int) -> int:
    """Coarse bins per feature for ``n`` rows: about 20 rows per cell under independence, 2 to 10."""
    return min(10, max(2, math.floor(math.sqrt(n / 20))))


def extrapolation_check(frame: pd.DataFrame, features: Sequence[int], grids: Sequence, categorical: Sequence[bool],
                        weights=None, *, numeric: Sequence[bool] | None = None,
                        hull: np.ndarray | None = None, cache: dict | None = None) -> Extrapolation | None:
    """The share of the PD's mass on absent combinations (rule in the module docstring); None when not judged.

    ``frame`` holds the rows (model-ordered columns), ``features`` the target columns'
    positions, ``numeric`` which columns may be 1-way partners (default: numeric dtypes
    not marked categorical), ``hull`` the 2-way ``outside_hull`` array if computed. ``cache``: a dict
    kept across the feature sets of one call (same ``frame`` and weights): the sample and the partners'
    coarse bins.
    """
    cache = {} if cache is None else cache
    if "sample" not in cache:
        cache["sample"] = _sample(frame, weights)
    sample, w = cache["sample"]
    n = len(sample)
    if n < MIN_ROWS or w.sum() <= 0 or len(features) > 2:
        return None
    if "unit" not in cache:
        cache["unit"] = int(np.count_nonzero(w == 1)) == w.size
    wb = None if cache["unit"] else w  # the weights _absent counts with (None: every row weighs 1)
    B = n_bins(n)
    F = _floats(sample, cache)
    binned = {j: _bins(sample.iloc[:, j] if categorical[i] else F[:, j], categorical[i], B)
              for i, j in enumerate(features)}
    if len(features) == 2:
        (ja, jb), (ga, gb) = features, grids
        (ca, ma), (cb, mb) = binned[ja], binned[jb]
        na, nb = int(ca.max()) + 1, int(cb.max()) + 1
        absent = _absent(ca, cb[None, :], wb, na, nb)[0][0]
        ia, ib = _grid_bins(ga, ma), _grid_bins(gb, mb)
        va, vb = (ia >= 0) & (ia < na), (ib >= 0) & (ib < nb)
        cells = np.zeros((len(ia), len(ib)), dtype=bool)
        cells[np.ix_(va, vb)] = absent[np.ix_(ia[va], ib[vb])]
        if hull is not None:
            cells |= hull
        return Extrapolation(float(cells.mean()), None, n)
    ja, ga = features[0], grids[0]
    ca, ma = binned[ja]
    ia = _grid_bins(ga, ma)
    na = int(max(ca.max(), ia.max())) + 1
    if numeric is None:
        numeric = [pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_bool_dtype(d) for d in sample.dtypes]
    partners = [k for k in range(sample.shape[1]) if k != ja and numeric[k]]
    if len(partners) > MAX_PARTNERS and not categorical[0]:
        a = F[:, ja]
        corr = []
        for k in partners:
            b = F[:, k]
            ok = np.isfinite(a) & np.isfinite(b)
            c = np.corrcoef(a[ok], b[ok])[0, 1] if ok.sum() > 2 and np.std(b[ok]) > 0 and np.std(a[ok]) > 0 else 0
            corr.append(abs(c) if np.isfinite(c) else 0.0)
        partners = [partners[i] for i in np.argsort(corr)[::-1][:MAX_PARTNERS]]
    else:
        partners = partners[:MAX_PARTNERS]
    best = Extrapolation(0.0, None, n)
    valid = (ia >= 0) & (ia < na)
    n_valid = int(np.count_nonzero(valid))
    if not n_valid:
        return best
    if not partners:
        return best
    if not categorical[0] and len(partners) == sum(numeric) - 1:  # every numeric column: the call's stack
        partners, nb, pad, offsets = _stack(F, numeric, B, cache)
        cell = (offsets + (ca * nb)[None, :]).ravel()  # each partner's cells, the feature's bins padded to `pad`
        absent, share_b = _judge(*_histograms(cell, wb, (len(partners), pad, nb)))
    else:
        todo = [k for k in partners if ("bins", k, B) not in cache]
        for k, cb in zip(todo, _partner_bins(F, todo, B)):
            cache[("bins", k, B)] = cb
        CB = np.stack([cache[("bins", k, B)] for k in partners])
        absent, share_b = _absent(ca, CB, wb, na, int(CB.max()) + 1)
    per_bin = np.einsum("kab,kb->ka", absent, share_b)  # each bin of the feature against each partner
    shares = per_bin[:, ia[valid]].sum(axis=1) / n_valid  # the mean over the grid points
    if ja in partners:  # the stack holds the feature itself: not its own partner
        shares[partners.index(ja)] = -1.0
    i = int(np.argmax(shares))
    if shares[i] > best.share:
        best = Extrapolation(float(shares[i]), str(sample.columns[partners[i]]), n)
    return best


def _stack(F: np.ndarray, numeric, B: int, cache: dict) -> tuple[list, int, int, np.ndarray]:
    """The coarse bins of every numeric column, for all the 1-way checks of a call: (their positions, the
    number of bins to pad them to, the padded number of a feature's bins, each row's cell offset (P, n)).

    A numeric feature's bins are at most ``B`` (``B - 1`` inner edges, and missing values), so ``B + 2``
    rows of cells hold them; padding adds empty cells, which are never absent and weigh nothing.
    """
    key = ("stack", B)
    if key not in cache:
        cols = [k for k in range(F.shape[1]) if numeric[k]]
        codes = np.stack(_partner_bins(F, cols, B))  # (P, n)
        nb, pad = int(codes.max()) + 1, B + 2
        cache[key] = (cols, nb, pad, codes + (np.arange(len(cols)) * (pad * nb))[:, None])
    return cache[key]


def warning_message(features: Sequence[str], check: Extrapolation) -> str:
    """The text of :class:`~pdpx.core.errors.ExtrapolationWarning` for one result."""
    what = " x ".join(repr(f) for f in features)
    if check.partner is not None:
        where = (f"{100 * check.share:.0f}% of the partial dependence of {what} rests on combinations of "
                 f"{what} with {check.partner!r} that do not occur in the data (the two features are strongly "
                 "dependent)")
    else:
        where = (f"{100 * check.share:.0f}% of the grid cells of the 2-way partial dependence of {what} are "
                 "combinations that do not occur in the data (outside the rows' convex hull, or in empty regions)")
    return (f"{where}: there the curve is the model extrapolated, not learnt. Accumulated local effects "
            f"(pdpx.ale) stay within the data; res.support and res.unsupported show where the grid has rows, "
            f"and res.plot() shades what has none (docs/extrapolation.md).")


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
