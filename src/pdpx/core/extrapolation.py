"""The extrapolation check: the warning when a PD rests on feature combinations absent from the data.

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
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from .dates import is_date_type
from .support import as_floats, grid_floats

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


# -------------------------------------------------------------- the check
def _bins(column, categorical: bool, n_bins: int) -> tuple[np.ndarray, object]:
    """Coarse bin of each value (missing values: a bin of their own) and what maps grid values to bins."""
    if categorical:
        s = pd.Series(np.asarray(column, dtype=object)) if not isinstance(column, pd.Series) else column
        codes, uniques = pd.factorize(s, use_na_sentinel=True)  # levels in order of appearance, missing: -1
        codes = codes.astype(np.int64)
        codes[codes < 0] = len(uniques)
        return codes, ("levels", pd.Index(np.asarray(uniques, dtype=object)))
    x = as_floats(column)
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
    lo, hi, t, up = _positions(x.shape[0], q)
    shape = (-1,) + (1,) * (x.ndim - 1)
    a, b = x[lo], x[hi]
    diff = b - a
    return np.where(up.reshape(shape), b - diff * (1 - t).reshape(shape), a + diff * t.reshape(shape))


_POSITIONS: dict = {}


def _positions(n: int, q: np.ndarray) -> tuple:
    """(lower and upper order statistics, fraction between them, whether it is >= 0.5) of levels ``q`` among
    ``n`` sorted values (kept per ``n`` and ``q``: a call's checks share them)."""
    key = (n, q.tobytes())
    if key not in _POSITIONS:
        if len(_POSITIONS) > 64:
            _POSITIONS.clear()
        v = (n - 1) * q
        below = np.floor(v)
        lo = below.astype(np.intp)
        hi = lo + 1
        top = v >= n - 1
        lo[top] = hi[top] = n - 1
        t = v - below
        _POSITIONS[key] = (lo, hi, t, t >= 0.5)
    return _POSITIONS[key]


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
            M = np.column_stack([as_floats(sample.iloc[:, k]) for k in partners])
    return list(_code_rows(M, n_bins))


def _code_rows(M: np.ndarray, n_bins: int, *, with_edges: bool = False):
    """:func:`_bins` codes of each column of ``M`` as the rows of one (columns, n) array (``with_edges``: and
    each column's edges, as :func:`_bins` maps values to bins, read by :func:`_inner_edges` when needed)."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, or huge values: the per-column path
        finite = np.isfinite(M.sum(axis=0))  # a column sums to a finite number when every value is (or takes
        # the per-column path below, which codes finite columns alike)
    out = np.empty((M.shape[1], M.shape[0]), dtype=np.int64)
    edges: list = [None] * M.shape[1]
    cols = np.flatnonzero(finite)
    if cols.size:
        F = M if cols.size == M.shape[1] else M[:, cols]
        E = quantiles(np.sort(_for_edges(F), axis=0), _probs(n_bins))  # (n_bins - 1, columns)
        E[1:][E[1:] == E[:-1]] = np.inf  # a repeated edge counts once, as np.unique's would
        codes = np.zeros(F.shape, dtype=np.uint8)  # at most 9 inner edges: a byte counts them (4x less to write)
        for edge in E:  # the edges at or below each value, one level at a time
            codes += F >= edge
        out[cols] = codes.T
        if with_edges:  # a column's edges are read when it is a call's feature: taken out then
            for i, c in enumerate(cols):
                edges[c] = (E, i)
    for c in np.flatnonzero(~finite):
        out[c], (_, inner) = _bins(M[:, c], False, n_bins)
        edges[c] = (inner[:, None], 0)
    return (out, edges) if with_edges else out


def _inner_edges(edge: tuple) -> np.ndarray:
    """A column's distinct inner edges from :func:`_code_rows`' ``edges`` entry (an edge matrix and the column's
    position in it): the finite ones of that column (inf marks a repeat; what is left is np.unique's, in order)."""
    E, i = edge
    return E[:, i][np.isfinite(E[:, i])]


def _grid_bins(grid, mapping) -> np.ndarray:
    kind, m = mapping
    if kind == "levels":
        codes = m.get_indexer(pd.Series(np.asarray(grid), dtype=object))
        return codes.astype(np.int64)  # -1: a level absent from the sample (not judged)
    g = grid_floats(grid)
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
    size = math.prod(shape)
    N = np.bincount(cell, minlength=size).reshape(shape).astype(np.float64)
    if w is None:  # every row weighs 1: the counts are the weights
        return N, N
    return np.bincount(cell, weights=np.tile(w, shape[0]), minlength=size).reshape(shape), N


def _judge(H: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The absent cells of weights ``H`` and counts ``N`` (K, na, nb), and each b bin's weight share (K, nb)."""
    W = H.sum(axis=(1, 2))
    expected_w = H.sum(axis=2)[:, :, None] * H.sum(axis=1)[:, None, :] / W[:, None, None]
    expected_n = expected_w if N is H else (  # rows weighing 1: the counts are the weights
        N.sum(axis=2)[:, :, None] * N.sum(axis=1)[:, None, :] / N.sum(axis=(1, 2))[:, None, None])
    absent = (expected_n >= MIN_EXPECTED) & (H < ABSENT * expected_w)
    return absent, H.sum(axis=1) / W[:, None]


class _Rows:
    """The rows the check looks at: all of them, or a seeded sample of :data:`SAMPLE` (taken out lazily)."""

    def __init__(self, frame: pd.DataFrame, weights):
        n = len(frame)
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)[:n]
        self.pick = None
        if n > SAMPLE:
            self.pick = np.sort(np.random.default_rng(0).choice(n, SAMPLE, replace=False))
            w = w[self.pick]
        self.frame, self.w, self.n = frame, w, len(w)
        self.columns = frame.columns

    def column(self, j: int) -> pd.Series:
        """Column ``j`` of the rows."""
        return self.frame.iloc[:, j] if self.pick is None else self.frame.iloc[self.pick, j]

    def floats(self, dtypes: list | None = None) -> np.ndarray:
        """The rows' columns as floats, (n, p) (NaN where a column holds no numbers); ``dtypes``: the frame's, when
        the caller has them (pandas builds a Series to list them)."""
        dtypes = self.frame.dtypes.tolist() if dtypes is None else dtypes
        numbers = [isinstance(t, np.dtype) and t.kind in "fiub" for t in dtypes]
        if all(numbers):  # every column in one array: a view when the frame is one block of numbers
            A = self.frame.to_numpy()
            return np.asarray(A if self.pick is None else A[self.pick], dtype=np.float64)
        rows = self.frame if self.pick is None else self.frame.iloc[self.pick]
        # text, categories or nullable columns among them: the numeric ones one by one (no object array of
        # the whole frame)
        nan = np.full(self.n, np.nan)
        return np.column_stack([
            as_floats(rows.iloc[:, k]) if (pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t))
            or is_date_type(t) else nan for k, t in enumerate(dtypes)])  # dates: days since 1970


def n_bins(n: int) -> int:
    """Coarse bins per feature for ``n`` rows: about 20 rows per cell under independence, 2 to 10."""
    return min(10, max(2, math.floor(math.sqrt(n / 20))))


def extrapolation_check(frame: pd.DataFrame, features: Sequence[int], grids: Sequence, categorical: Sequence[bool],
                        weights=None, *, numeric: Sequence[bool] | None = None,
                        hull: np.ndarray | None = None, cache: dict | None = None,
                        dtypes: list | None = None) -> Extrapolation | None:
    """The share of the PD's mass on absent combinations (rule in the module docstring); None when not judged.

    ``frame`` holds the rows (model-ordered columns), ``features`` the target columns'
    positions, ``numeric`` which columns may be 1-way partners (default: numeric dtypes
    not marked categorical), ``hull`` the 2-way ``outside_hull`` array if computed. ``cache``: a dict
    kept across the feature sets of one call (same ``frame`` and weights): the sample and the partners'
    coarse bins. ``dtypes``: the frame's column dtypes, when the caller has them listed.
    """
    cache = {} if cache is None else cache
    if "rows" not in cache:
        cache["rows"] = _Rows(frame, weights)
    sample = cache["rows"]
    n, w = sample.n, sample.w
    if n < MIN_ROWS or len(features) > 2 or (weights is not None and w.sum() <= 0):
        return None
    if "unit" not in cache:
        cache["unit"] = weights is None or int(np.count_nonzero(w == 1)) == w.size
    wb = None if cache["unit"] else w  # the weights _absent counts with (None: every row weighs 1)
    B = n_bins(n)
    if "floats" not in cache:  # converted once per call
        cache["floats"] = sample.floats(dtypes)
    F = cache["floats"]
    if numeric is None:
        numeric = [pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_bool_dtype(d)
                   for d in (frame.dtypes if dtypes is None else dtypes)]
    if len(features) == 1 and not categorical[0] and numeric[features[0]] and 1 < sum(numeric) <= MAX_PARTNERS + 1:
        return _one_way(F, features[0], grids[0], numeric, B, cache, wb, sample.columns)  # the usual case
    binned = {j: _bins(sample.column(j) if categorical[i] else F[:, j], categorical[i], B)
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
    partners = [k for k in range(F.shape[1]) if k != ja and numeric[k]]
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
    todo = [k for k in partners if ("bins", k, B) not in cache]
    for k, cb in zip(todo, _partner_bins(F, todo, B)):
        cache[("bins", k, B)] = cb
    CB = np.stack([cache[("bins", k, B)] for k in partners])
    absent, share_b = _absent(ca, CB, wb, na, int(CB.max()) + 1)
    return _largest(absent, share_b, ia[valid], partners, None, n, sample.columns)


def _largest(absent, share_b, cells, partners: list, own, n: int, columns) -> Extrapolation:
    """The partner with the largest share: the weight on absent cells next to the grid points' bins ``cells``."""
    per_bin = np.einsum("kab,kb->ka", absent, share_b)  # each bin of the feature against each partner
    shares = per_bin[:, cells].sum(axis=1) / len(cells)  # the mean over the grid points
    if own is not None:  # the stack holds the feature itself: not its own partner
        shares[own] = -1.0
    i = int(np.argmax(shares))
    if shares[i] > 0.0:
        return Extrapolation(float(shares[i]), str(columns[partners[i]]), n)
    return Extrapolation(0.0, None, n)


def _one_way(F: np.ndarray, ja: int, grid, numeric, B: int, cache: dict, wb, columns) -> Extrapolation:
    """A numeric feature against every other numeric column: the call's stack of bins (:func:`_stack`) gives
    the feature's own bins and edges, and every partner's cells in one bincount."""
    cols, codes, edges, nb, pad, offsets = _stack(F, numeric, B, cache)
    own = cols.index(ja)
    inner = _inner_edges(edges[own])
    g = grid_floats(grid)
    ia = np.searchsorted(inner, g, side="right")  # the grid points' bins, as _grid_bins maps them
    ia[np.isnan(g)] = inner.size + 1
    cell = (offsets + (codes[own] * nb)[None, :]).ravel()  # each partner's cells, the feature's bins padded
    absent, share_b = _judge(*_histograms(cell, wb, (len(cols), pad, nb)))
    return _largest(absent, share_b, ia, cols, own, F.shape[0], columns)


def _stack(F: np.ndarray, numeric, B: int, cache: dict) -> tuple:
    """The coarse bins of every numeric column, for all the 1-way checks of a call: (their positions, their
    codes (P, n), their distinct inner edges, the number of bins to pad them to, the padded number of a
    feature's bins, each row's cell offset (P, n)).

    A numeric feature's bins are at most ``B`` (``B - 1`` inner edges, and missing values), so ``B + 2``
    rows of cells hold them; padding adds empty cells, which are never absent and weigh nothing.
    """
    key = ("stack", B)
    if key not in cache:
        cols = [k for k in range(F.shape[1]) if numeric[k]]
        codes, edges = _code_rows(F if len(cols) == F.shape[1] else F[:, cols], B, with_edges=True)
        nb, pad = int(codes.max()) + 1, B + 2
        cache[key] = (cols, codes, edges, nb, pad, codes + (np.arange(len(cols)) * (pad * nb))[:, None])
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
