"""Accumulated local effects (ALE; Apley and Zhu 2020, JRSS-B 82(4)): :func:`ale`.

ALE describes how a model's prediction changes with a feature using only
changes *within* the data: each row is moved across the small interval its own
value lies in, never to a far-away value the other features make implausible (what
partial dependence does on correlated data). The estimators are those of the paper and
of its R package ALEPlot:

* **one numeric feature**: bin edges ``z_0 < ... < z_K`` at the quantiles ``0, 1/K, ..., 1``
  of the feature's empirical distribution, as the paper defines them (observed values:
  R's type 1, as iml computes them; repeated edges merged). So every
  bin holds the rows at its upper edge: ALEPlot's interpolated quantiles (type 7) can put
  edges between the values of a discrete feature and leave the bin where its step is
  without rows, losing the step.
  A row with value in ``(z_{k-1}, z_k]`` (the first bin includes ``z_0``) is in bin
  ``k``; the bin's local effect is the mean over its rows of
  ``f(z_k, x_C) - f(z_{k-1}, x_C)``. The effects are summed from ``z_0`` (value 0 there),
  then centered: the mean over the rows, each row counted at the centre of its bin
  (the mean of its bin's two edge values), is 0 (ALEPlot's and iml's convention).
* **two numeric features** (second order, the pure interaction): each row's second
  difference over the four corners of its cell, averaged per cell; cells without rows
  take the value of the nearest cell with rows (distance between cell centres, each
  axis divided by its feature's range); accumulated over both axes; then each feature's
  own first-order effect in that surface is removed and the rest centered (each row at
  the mean of its cell's four corners).
* **one categorical feature**: the categories are put in an order (Apley and Zhu's
  suggestion, as ALEPlot does it): the distance between two categories is the sum over
  the other features of the Kolmogorov-Smirnov distance of their distributions in the
  two categories (numeric features, evaluated at 100 quantiles) or the total variation
  distance (categorical features); classical multidimensional scaling in one dimension
  orders them (``order=`` overrides). The effect between neighbours ``c`` and ``c+1`` is
  the mean of ``f(c+1) - f(c)`` over the rows of both categories; summed and centered
  (mean over the rows 0).

With ``sample_weight``, every mean above is weighted (the bin edges stay the unweighted
quantiles; a bin whose rows all have weight 0 contributes no change). Rows whose target
feature is missing take no part (a note says how many). Predictions go through the
model's adapter in batches that fit the memory budget: 2 (numeric), 4 (two features) or
at most 3 (categorical) predictions per row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import stacking
from ..core.adapter import checked_predict
from ..core.dates import is_date_type
from ..core.errors import PdpxError
from ..core.grid import column_dtype
from ..core.progress import progress_bar
from ..core.result import PartialDependenceResult
from ..core.rows import require
from ..core.session import Session
from ..core.validation import InstanceOf, Integral, validate_params

#: Prediction code typically holds a few copies of its input: budget for that.
_COPIES = 4


@dataclass(repr=False)
class ALEResult(PartialDependenceResult):
    """Accumulated local effects on one feature or a pair (a :class:`PartialDependenceResult`, ``method="ale"``).

    ``grid_values`` are the bin edges (numeric) or the ordered categories; ``average``
    (n_outputs, *grid_shape) the centered ALE at them; ``individual`` is None.

    Attributes
    ----------
    counts : ndarray
        Rows (sum of weights with ``sample_weight``) per bin (n_bins), per cell
        (n_bins_1, n_bins_2) or per category, in grid order.
    order : str
        How the categories were ordered (``"given"`` or ``"mds"``); "" for numeric features.
    """

    figure = "ale"

    counts: np.ndarray | None = None
    order: str = ""

    def __repr__(self) -> str:
        shape = " x ".join(str(s) for s in self.grid_shape)
        return (f"<ALEResult features={self.features} grid={shape} outputs={self.outputs} "
                f"response={self.response!r} rows={self.n_rows}>")


@validate_params({
    "grid_resolution": [Integral(low=1, what="a number of bins (>= 1)")],
    "order": [InstanceOf(list, tuple, np.ndarray, pd.Index, what="a list of the categories in order"), None],
})
def ale(model, X, features, *, grid_resolution: int = 20, order=None, response: str = "auto", target=None,
        categorical_features=None, sample_weight=None, memory_budget=None, progress=None) -> ALEResult:
    """Accumulated local effects of ``model`` on one feature, or the second-order effect of two.

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence` (X a pandas DataFrame or array; not Dask).
    features : str, int, or list of one or two of them
        One numeric or categorical feature, or two numeric features.
    grid_resolution : int, default 20
        Number of bins of a numeric feature (fewer when quantiles coincide); the grid is
        their edges, one more than the bins.
    order : list, optional
        The categories of a categorical feature in the order to accumulate along
        (default: ordered by the similarity of the other features, see the module).
    response, target, categorical_features, sample_weight, memory_budget, progress
        As in :func:`pdpx.partial_dependence`.

    Returns
    -------
    ALEResult
        ``grid_values``, ``average``, ``counts``, ``to_frame()``, ``plot()``.
    """
    t0 = time.perf_counter()
    session = Session(model, X, function="ale", response=response, target=target,
                      categorical_features=categorical_features, sample_weight=sample_weight,
                      memory_budget=memory_budget, progress=progress)
    require(session.data, "ale", "ale")
    feats = session.resolve_features(features)
    cats = [session.categorical[j] for j in feats]
    if len(feats) > 2:
        raise PdpxError(f"ale(): features must be one or two columns; got {len(feats)} "
                        f"({[session.names[j] for j in feats]})")
    if order is not None and (len(feats) != 1 or not cats[0]):
        raise PdpxError("ale(): order= orders the categories of one categorical feature; "
                        f"{[session.names[j] for j in feats]} is not one categorical feature")
    dated = [session.names[j] for j, c in zip(feats, cats) if not c and is_date_type(session.dtypes[j])]
    if dated and len(feats) == 2:
        raise PdpxError(f"ale(): feature {dated[0]!r} holds dates; second-order ALE takes two numeric features. "
                        f"Use pdpx.ale(model, X, {dated[0]!r}) for its first-order ALE, or "
                        f"pdpx.partial_dependence(model, X, {[session.names[j] for j in feats]!r})")
    w = session.sample_weight if session.sample_weight is not None else np.ones(session.n_rows)
    notes: list[str] = []
    if len(feats) == 2:
        if any(cats):
            raise PdpxError("ale(): second-order ALE needs two numeric features; "
                            f"{[session.names[j] for j, c in zip(feats, cats) if c]} is categorical")
        grids, values, counts = _ale_2way(session, feats, grid_resolution, w, notes)
        how = ""
    elif cats[0]:
        grids, values, counts, how = _ale_categorical(session, feats[0], order, w, notes)
    else:
        grids, values, counts = _ale_1way(session, feats[0], grid_resolution, w, notes)
        how = ""
    names = session.adapter.output_names(session.response)
    return ALEResult(
        features=[session.names[j] for j in feats], grid_values=grids, categorical=cats,
        average=values, individual=None, outputs=[names[k] for k in session.outputs],
        response=session.response, response_label=session.adapter.response_label(session.response),
        method="ale", kind="average", centered=False, n_rows=session.n_rows,
        elapsed=time.perf_counter() - t0, notes=notes,
        feature_data={session.names[j]: _shown(session.data.column(j)) for j in feats},
        model_name=type(session.adapter.model).__name__, background=session.X, counts=counts, order=how,
    )


# ------------------------------------------------------------------ predictions
def predict_set(session: Session, rows: np.ndarray, values: dict, bar, notes: list | None = None) -> np.ndarray:
    """Predictions (len(rows), n_outputs) of X's ``rows`` with column ``pos`` set row by row to ``values[pos]``.

    In batches of rows whose copies fit the session's memory budget. A model whose predictions depend on the other
    rows of the call (:func:`pdpx.core.stacking.apart`) is called once per combination of the values set (a bin
    edge: the rows of that bin), and the reason goes into ``notes``.
    """
    if values and notes is not None:
        why = _apart(session, values)
        if why is not None:
            if why not in notes:
                notes.append(why)
            key = pd.MultiIndex.from_arrays([pd.factorize(pd.Series(v))[0] for v in values.values()])
            group, _ = pd.factorize(key)
            out = np.empty((len(rows), len(session.outputs)))
            for g in range(group.max() + 1):
                at = np.flatnonzero(group == g)
                out[at] = predict_set(session, rows[at], {pos: v[at] if isinstance(v, pd.api.extensions.ExtensionArray)
                                                          else np.asarray(v)[at] for pos, v in values.items()}, bar)
            return out
    return _predict_rows(session, rows, values, bar)


def _apart(session: Session, values: dict) -> str | None:
    """Why ALE must call the model once per bin edge (a note), or None (:func:`pdpx.core.stacking.apart`)."""
    few = []
    for v in values.values():
        few.append(pd.Series(v).drop_duplicates().array[:3])
    if min(len(f) for f in few) < 2:
        return None
    n = min(len(f) for f in few)
    return stacking.apart(session.adapter, session.response, session.X, list(values), [f[:n] for f in few])


def _predict_rows(session: Session, rows: np.ndarray, values: dict, bar) -> np.ndarray:
    X = session.X
    n, K = len(rows), len(session.outputs)
    bytes_per_row = max(8.0, X.memory_usage(index=False, deep=False).sum() / max(len(X), 1)) + 8 * (K + 8)
    per_call = max(1, int(session.memory_budget // (bytes_per_row * _COPIES)))
    dtypes = {pos: column_dtype(X.dtypes.iloc[pos], v) if not session.categorical[pos] else X.dtypes.iloc[pos]
              for pos, v in values.items()}
    out = np.empty((n, K))
    for r0 in range(0, n, per_call):
        r1 = min(n, r0 + per_call)
        frame = X.iloc[rows[r0:r1]].copy()
        for pos, v in values.items():
            col = np.asarray(v)[r0:r1]
            try:
                col = pd.array(col, dtype=dtypes[pos])
            except (TypeError, ValueError):
                pass  # e.g. 2.5 in an integer column: keep the values, let the column widen
            frame.isetitem(pos, col)
        out[r0:r1] = checked_predict(session.adapter, frame, session.response)[:, session.outputs]
        bar.update(1)
    return out


def _calls(session: Session, n: int) -> int:
    X = session.X
    bytes_per_row = max(8.0, X.memory_usage(index=False, deep=False).sum() / max(len(X), 1)) + 8 * 16
    return -(-n // max(1, int(session.memory_budget // (bytes_per_row * _COPIES))))


def _numeric(session: Session, j: int) -> np.ndarray:
    col = session.data.column(j)
    try:
        return pd.to_numeric(col).to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise PdpxError(f"ale(): feature {session.names[j]!r} is not numeric; mark it categorical "
                        "(categorical_features=[...]) or pass a numeric column") from None


def quantile_edges(x: np.ndarray, n_bins: int, name: str) -> np.ndarray:
    """The unique quantiles ``0, 1/n_bins, ..., 1`` of the finite values of ``x``: observed values (inverted CDF)."""
    x = x[np.isfinite(x)]
    if x.size == 0:
        raise PdpxError(f"ale(): feature {name!r} has no finite values")
    x = np.sort(x)
    k = np.arange(n_bins + 1, dtype=np.int64)
    # the k / n_bins quantile: the smallest value whose ECDF reaches it, index ceil(k n / K) - 1 in integers
    edges = np.unique(x[np.maximum((k * x.size + n_bins - 1) // n_bins - 1, 0)])
    if edges.size < 2:
        raise PdpxError(f"ale(): feature {name!r} is constant (every value is {edges[0]!r}); it has no effect "
                        "to accumulate")
    return edges


def bin_index(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value, 1..K: ``(z_{k-1}, z_k]``, the first bin closed on the left."""
    return np.clip(np.searchsorted(edges, x, side="left"), 1, edges.size - 1)


def _used_rows(session: Session, x: np.ndarray, w: np.ndarray, names: str, notes: list) -> np.ndarray:
    ok = np.isfinite(x) if x.ndim == 1 else np.isfinite(x).all(axis=0)
    if not ok.all():
        notes.append(f"{int((~ok).sum())} row(s) with {names} missing take no part in the ALE")
    if w[ok].sum() <= 0:
        raise PdpxError(f"ale(): no row with {names} present has a positive weight")
    return np.flatnonzero(ok)


def _empty_note(counts: np.ndarray, notes: list, what: str) -> None:
    empty = int((counts <= 0).sum())
    if empty:
        notes.append(f"{empty} {what} without rows (or weight): their local effect is taken as "
                     + ("0" if what == "bin(s)" else "that of the nearest cell with rows"))


# ------------------------------------------------------------------ one numeric feature
def _shown(col: pd.Series):
    """A feature's values as a result keeps them: dates as dates (their own array type), else numpy."""
    return col.array if is_date_type(col.dtype) else col.to_numpy()


def _date_axis(col: pd.Series):
    """(each date's rank among the column's distinct dates, as float64 with NaN for a missing date; the distinct
    dates in order, as a grid holds them). ALE needs only the order of the values and edges that are observed
    values, so it bins the ranks (exact at any unit, where nanoseconds since 1970 overflow a float's 53 bits) and
    reads the edges back as dates."""
    codes, uniques = pd.factorize(col, sort=True)
    x = codes.astype(np.float64)
    x[codes < 0] = np.nan
    dates = uniques.array
    return x, (np.asarray(dates) if isinstance(dates.dtype, np.dtype) else dates)


def _ale_1way(session: Session, j: int, n_bins: int, w: np.ndarray, notes: list):
    name = session.names[j]
    if is_date_type(session.dtypes[j]):  # a date feature: bins of its dates, the grid and the model's values dates
        x, dates = _date_axis(session.data.column(j))
        ranks = quantile_edges(x, n_bins, name)
        edges = dates[ranks.astype(np.int64)]
    else:
        x = _numeric(session, j)
        edges = ranks = quantile_edges(x, n_bins, name)
    rows = _used_rows(session, x, w, repr(name), notes)
    b = bin_index(x[rows], ranks) - 1  # 0-based bins
    nb = edges.size - 1
    with progress_bar(2 * _calls(session, rows.size), progress=session.progress, desc="pdpx ale") as bar:
        upper = predict_set(session, rows, {j: edges[b + 1]}, bar, notes)
        lower = predict_set(session, rows, {j: edges[b]}, bar, notes)
    wr = w[rows]
    counts = np.bincount(b, weights=wr, minlength=nb)
    _empty_note(counts, notes, "bin(s)")
    K = upper.shape[1]
    out = np.empty((K, nb + 1))
    for k in range(K):
        sums = np.bincount(b, weights=wr * (upper[:, k] - lower[:, k]), minlength=nb)
        local = np.divide(sums, counts, out=np.zeros(nb), where=counts > 0)
        acc = np.concatenate([[0.0], np.cumsum(local)])
        out[k] = acc - np.sum(counts * (acc[:-1] + acc[1:]) / 2) / counts.sum()
    return [edges], out, counts


# ------------------------------------------------------------------ two numeric features
def _ale_2way(session: Session, feats: list[int], n_bins: int, w: np.ndarray, notes: list):
    j1, j2 = feats
    x = np.vstack([_numeric(session, j1), _numeric(session, j2)])
    e1 = quantile_edges(x[0], n_bins, session.names[j1])
    e2 = quantile_edges(x[1], n_bins, session.names[j2])
    rows = _used_rows(session, x, w, f"{session.names[j1]!r} or {session.names[j2]!r}", notes)
    b1, b2 = bin_index(x[0, rows], e1) - 1, bin_index(x[1, rows], e2) - 1
    K1, K2 = e1.size - 1, e2.size - 1
    corners = [(1, 1, 1.0), (0, 1, -1.0), (1, 0, -1.0), (0, 0, 1.0)]
    with progress_bar(4 * _calls(session, rows.size), progress=session.progress, desc="pdpx ale") as bar:
        diff = sum(s * predict_set(session, rows, {j1: e1[b1 + a], j2: e2[b2 + c]}, bar, notes)
                   for a, c, s in corners)
    wr = w[rows]
    cell = b1 * K2 + b2
    W = np.bincount(cell, weights=wr, minlength=K1 * K2).reshape(K1, K2)
    _empty_note(W, notes, "cell(s)")
    nearest = nearest_filled(W > 0, e1, e2)
    out = np.empty((diff.shape[1], K1 + 1, K2 + 1))
    for k in range(diff.shape[1]):
        S = np.bincount(cell, weights=wr * diff[:, k], minlength=K1 * K2).reshape(K1, K2)
        delta = np.divide(S, W, out=np.zeros_like(S), where=W > 0).reshape(-1)[nearest].reshape(K1, K2)
        out[k] = second_order(delta, W)
    return [e1, e2], out, W


def nearest_filled(filled: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> np.ndarray:
    """For each cell (flat index), the flat index of the nearest cell with rows (itself if it has rows).

    Distances between cell centres, each axis divided by its feature's range; ties go to
    the first cell in row-major order.
    """
    c1 = (e1[:-1] + e1[1:]) / 2 / (e1[-1] - e1[0])
    c2 = (e2[:-1] + e2[1:]) / 2 / (e2[-1] - e2[0])
    g1, g2 = np.meshgrid(c1, c2, indexing="ij")
    idx = np.arange(filled.size)
    have = np.flatnonzero(filled.reshape(-1))
    empty = np.flatnonzero(~filled.reshape(-1))
    if empty.size:
        p1, p2 = g1.reshape(-1), g2.reshape(-1)
        for i in empty:  # empty cells are few: quantile bins hold rows by construction
            d = (p1[have] - p1[i]) ** 2 + (p2[have] - p2[i]) ** 2
            idx[i] = have[int(np.argmin(d))]
    return idx


def second_order(delta: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The centered pure interaction on the (K1+1) x (K2+1) edges from the cells' mean second differences."""
    K1, K2 = delta.shape
    F = np.zeros((K1 + 1, K2 + 1))
    F[1:, 1:] = np.cumsum(np.cumsum(delta, axis=0), axis=1)
    # the first-order effect of each feature in F, rows counted at the middle of their cell's side
    d1 = F[1:, :] - F[:-1, :]
    n1 = W.sum(axis=1)
    m1 = np.divide((W * (d1[:, :-1] + d1[:, 1:]) / 2).sum(axis=1), n1, out=np.zeros(K1), where=n1 > 0)
    d2 = F[:, 1:] - F[:, :-1]
    n2 = W.sum(axis=0)
    m2 = np.divide((W * (d2[:-1, :] + d2[1:, :]) / 2).sum(axis=0), n2, out=np.zeros(K2), where=n2 > 0)
    F = F - np.concatenate([[0.0], np.cumsum(m1)])[:, None] - np.concatenate([[0.0], np.cumsum(m2)])[None, :]
    mid = (F[:-1, :-1] + F[:-1, 1:] + F[1:, :-1] + F[1:, 1:]) / 4
    return F - (W * mid).sum() / W.sum()


# ------------------------------------------------------------------ one categorical feature
def _levels(col: pd.Series) -> list:
    """Categories present in the column, in their natural order (a categorical's own, else sorted)."""
    present = pd.unique(col.dropna())
    if isinstance(col.dtype, pd.CategoricalDtype):
        have = set(present)
        return [c for c in col.cat.categories if c in have]
    try:
        return sorted(present)
    except TypeError:
        return sorted(present, key=str)


def _ale_categorical(session: Session, j: int, order, w: np.ndarray, notes: list):
    name = session.names[j]
    col = session.data.column(j)
    levels = _levels(col)
    if len(levels) < 2:
        raise PdpxError(f"ale(): categorical feature {name!r} has {len(levels)} category in X; it needs two or more")
    if order is not None:
        levels, how = _given_order(order, levels, name), "given"
    else:
        levels, how = mds_order(session, j, levels, w), "mds"
        notes.append(f"categories of {name!r} ordered by similarity of the other features (1-D MDS): "
                     f"{[str(c) for c in levels]}")
    codes = level_codes(col, levels)
    ok = codes >= 0
    if not ok.all():
        notes.append(f"{int((~ok).sum())} row(s) with {name!r} missing take no part in the ALE")
    rows = np.flatnonzero(ok)
    c = codes[rows]
    L = len(levels)
    up, down = rows[c < L - 1], rows[c > 0]
    lv = np.array(levels, dtype=object)
    n_calls = _calls(session, rows.size) + _calls(session, up.size) + _calls(session, down.size)
    with progress_bar(n_calls, progress=session.progress, desc="pdpx ale") as bar:
        own = predict_set(session, rows, {}, bar)
        f_up = predict_set(session, up, {j: lv[codes[up] + 1]}, bar, notes)
        f_down = predict_set(session, down, {j: lv[codes[down] - 1]}, bar, notes)
    pos = np.empty(session.n_rows, dtype=np.int64)
    pos[rows] = np.arange(rows.size)
    counts = np.bincount(c, weights=w[rows], minlength=L)
    pair_w = counts[:-1] + counts[1:]
    out = np.empty((own.shape[1], L))
    for k in range(own.shape[1]):
        sums = (np.bincount(codes[up], weights=w[up] * (f_up[:, k] - own[pos[up], k]), minlength=L - 1)[:L - 1]
                + np.bincount(codes[down] - 1, weights=w[down] * (own[pos[down], k] - f_down[:, k]),
                              minlength=L - 1)[:L - 1])
        acc = np.concatenate([[0.0], np.cumsum(np.divide(sums, pair_w, out=np.zeros(L - 1), where=pair_w > 0))])
        out[k] = acc - np.sum(counts * acc) / counts.sum()
    return [np.array(levels, dtype=object)], out, counts, how


def level_codes(col: pd.Series, levels: list) -> np.ndarray:
    """Position of each row's category in ``levels`` (-1: missing)."""
    values = col.astype(object) if isinstance(col.dtype, pd.CategoricalDtype) else col
    return np.asarray(pd.Categorical(values, categories=levels).codes, dtype=np.int64)


def _given_order(order, levels: list, name: str) -> list:
    given = list(order)
    by_text = {str(c): c for c in levels}
    out = []
    for c in given:
        key = c if c in levels else by_text.get(str(c))
        if key is None:
            raise PdpxError(f"ale(): order lists {c!r}, not a category of {name!r} in X; its categories are "
                            f"{[str(v) for v in levels]}")
        if key in out:
            raise PdpxError(f"ale(): order lists {c!r} twice")
        out.append(key)
    missing = [v for v in levels if v not in out]
    if missing:
        raise PdpxError(f"ale(): order leaves out {[str(v) for v in missing]}; list every category of {name!r} in X")
    return out


def mds_order(session: Session, j: int, levels: list, w: np.ndarray) -> list:
    """The categories of feature ``j`` ordered by 1-D classical scaling of their distances (see the module)."""
    codes = level_codes(session.data.column(j), levels)
    member = [np.flatnonzero(codes == i) for i in range(len(levels))]
    L = len(levels)
    D = np.zeros((L, L))
    for o in range(len(session.names)):
        if o == j:
            continue
        if session.categorical[o]:
            other = session.data.column(o).astype(object).where(session.data.column(o).notna(), "<missing>")
            vals = pd.Categorical(other.astype(str))
            ocodes, n_vals = vals.codes, len(vals.categories)
            P = np.array([np.bincount(ocodes[m], weights=w[m], minlength=n_vals) for m in member])
            P = P / np.maximum(P.sum(axis=1, keepdims=True), 1e-300)
            D += np.abs(P[:, None, :] - P[None, :, :]).sum(axis=2) / 2
        else:
            x = _numeric(session, o)
            fin = np.isfinite(x)
            if not fin.any():
                continue
            q = np.quantile(x[fin], np.linspace(0, 1, 100))
            E = np.array([_ecdf(x[m][fin[m]], w[m][fin[m]], q) for m in member])
            D += np.abs(E[:, None, :] - E[None, :, :]).max(axis=2)
    Jc = np.eye(L) - 1.0 / L
    B = -0.5 * Jc @ (D ** 2) @ Jc
    vals, vecs = np.linalg.eigh(B)
    coord = vecs[:, -1] * np.sqrt(max(vals[-1], 0.0))
    if coord[0] > coord[-1]:  # the sign of an eigenvector is arbitrary: keep the natural first category first
        coord = -coord
    coord = np.round(coord, 12)
    return [levels[i] for i in np.argsort(coord, kind="stable")]


def _ecdf(x: np.ndarray, w: np.ndarray, q: np.ndarray) -> np.ndarray:
    if x.size == 0 or w.sum() <= 0:
        return np.zeros(q.size)
    o = np.argsort(x, kind="stable")
    cw = np.concatenate([[0.0], np.cumsum(w[o])])
    return cw[np.searchsorted(x[o], q, side="right")] / cw[-1]
