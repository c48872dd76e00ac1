"""A column's values partitioned by a tree model's splits: the one place that reads which values the trees tell apart.

A tree model's output depends on a column only through the side each split on the
column sends a value to. Two consumers ask that question:

* the threshold grid (:mod:`pdpx.core.steps`, ``grid="thresholds"``) wants the
  boundaries: among sorted candidate values, where some split sends neighbours
  apart (:func:`side_changes`, every split asked with the model's own routing rule);
* Friedman's H (:mod:`pdpx.explain.evaluate`) wants the rows grouped into cells
  whose values every split routes alike (:func:`column_classes`), on millions of rows.

Both read the trees here, through one walk of a :class:`~pdpx.core.treesum.TreeSum`
(:func:`leaves`: every tree model it sums, with the columns of X each one reads) and
one rule for how the model reads a value (:func:`as_read`: rounded to float32 when
the model rounds its inputs; :func:`reads_as_zero`: the values a zero-as-missing
split reads as zero, ``|x| <= 1e-35``, :mod:`pdpx.core.ir`'s routing rule).
"""

from __future__ import annotations

import numpy as np

from .ir import ZERO_OR_NAN_MISSING, TreeModel
from .treesum import TreeSum

#: The largest magnitude a zero-as-missing split reads as zero (:mod:`pdpx.core.ir`'s routing rule).
ZERO_READ = 1e-35
#: Node-by-value comparisons held at once (bounded memory: thousands of thresholds stay small).
CHUNK = 1 << 22
#: Largest range of combined keys :func:`factor` ranks with a table (no sort); wider ones are sorted.
DENSE = 1 << 24


class Unmapped(Exception):
    """The trees cannot be mapped to X's columns one for one (the message says why)."""


def leaves(tm, cols=None):
    """Every tree model in ``tm`` (a TreeModel or TreeSum) with the columns of X it reads.

    Yields ``(model, cols)``: ``cols`` lists, for each column of the model's own input,
    its position in X (None: X's columns as they are). Raises :class:`Unmapped` for
    anything that is not trees.
    """
    if isinstance(tm, TreeSum):
        for term in tm.terms:
            if term.columns is None:
                yield from leaves(term.model, cols)
            else:
                yield from leaves(term.model, [c if cols is None else cols[c] for c in term.columns])
        return
    if not isinstance(tm, TreeModel):
        raise Unmapped(f"the adapter hands over a {type(tm).__name__}, not trees")
    yield tm, cols


def members(tm, position: int):
    """``(ensemble, column in its own input)`` of every tree model in ``tm`` reading X's column ``position``."""
    for model, cols in leaves(tm):
        ens = model.ensemble
        local = [position] if cols is None else [i for i, c in enumerate(cols) if c == position]
        for j in local:
            if 0 <= j < ens.n_features:
                yield ens, j


def comparison(tm) -> str:
    """``"<="`` or ``"<"``: how the trees of ``tm`` (a TreeModel or TreeSum) compare a value with a threshold."""
    for model, _ in leaves(tm):
        return model.ensemble.comparison
    return "<="


def split_nodes(ens, column: int) -> np.ndarray:
    """The internal nodes of ``ens`` that split on ``column`` of its input."""
    return np.flatnonzero((ens.left >= 0) & (ens.feature == column))


def by_category(ens, nodes: np.ndarray) -> bool:
    """Whether any of ``nodes`` splits by a set of categories."""
    return bool(np.any(ens.cat_offset[nodes] >= 0))


def read_type(ens, dtype=None):
    """The type the model compares a column's values in: ``dtype`` (the column's own narrow type) when given,
    else float32 when the model rounds its inputs to float32, else None (float64)."""
    if dtype is None and ens.float32_input:
        return np.dtype(np.float32)
    return None if dtype is None else np.dtype(dtype)


def as_read(ens, x: np.ndarray) -> np.ndarray:
    """``x`` (float64) as the model compares it: rounded to float32 when the model rounds its inputs (beyond
    float32's range: inf, as for the model itself)."""
    if not ens.float32_input:
        return x
    with np.errstate(over="ignore"):
        return np.asarray(x).astype(np.float32).astype(np.float64)


def zero_is_missing(ens, nodes: np.ndarray) -> bool:
    """Whether any of ``nodes`` sends zero (:func:`reads_as_zero`) to the missing side."""
    return bool(np.any(ens.nan_mode[nodes] == ZERO_OR_NAN_MISSING))


def reads_as_zero(x: np.ndarray) -> np.ndarray:
    """Which values (as read: :func:`as_read`) a zero-as-missing split reads as zero; NaN is not zero."""
    return np.abs(np.nan_to_num(x, nan=1.0)) <= ZERO_READ


def thresholds(ens, nodes: np.ndarray) -> np.ndarray:
    """The distinct finite thresholds of ``nodes``, increasing."""
    t = ens.threshold[nodes]
    return np.unique(t[np.isfinite(t)])


def side_changes(ens, nodes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(len(values) - 1,) bool: whether some split of ``nodes`` sends ``values[i]`` and ``values[i + 1]`` apart.

    Every node is asked with the model's routing rule
    (:meth:`~pdpx.core.ir.TreeEnsemble.goes_left_many`); nodes that route alike (same
    threshold and missing-value rules) are asked once, a bounded block at a time.
    """
    change = np.zeros(max(values.size - 1, 0), dtype=bool)
    if nodes.size == 0 or values.size < 2:
        return change
    keys = np.stack([ens.threshold[nodes], ens.nan_mode[nodes].astype(np.float64),
                     ens.missing_left[nodes].astype(np.float64)], axis=1)
    _, first = np.unique(keys, axis=0, return_index=True)
    nodes = nodes[np.sort(first)]
    per = max(1, CHUNK // values.size)
    for start in range(0, nodes.size, per):
        sides = ens.goes_left_many(nodes[start:start + per], values)
        change |= np.any(sides[:, 1:] != sides[:, :-1], axis=0)
    return change


def classes(ens, nodes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Class of each value (codes 0..m-1): values that take the same side at every one of ``nodes`` share a class.

    Numeric splits: as the model reads them (:func:`as_read`), two values go the same
    way at every threshold when no threshold separates them, i.e. when as many
    thresholds lie below them (``<=``: ``t < x``; ``<``: ``t <= x``). Missing values, and
    zeros where a split sends zero to the missing side (:func:`reads_as_zero`), get
    classes of their own (a partition finer than needed is still exact). Category sets:
    the side at each node, as :meth:`~pdpx.core.ir.TreeEnsemble.goes_left_many`
    computes it, once per distinct value.
    """
    if by_category(ens, nodes):  # routed per distinct value, then mapped to the rows
        u, inv = np.unique(values, return_inverse=True)
        return _classes(ens, nodes, u)[inv.reshape(-1)]
    return _classes(ens, nodes, values)


def _classes(ens, nodes: np.ndarray, u: np.ndarray) -> np.ndarray:
    """:func:`classes` computed on the values ``u`` themselves."""
    keys = [np.isnan(u).astype(np.int64)]
    cat = ens.cat_offset[nodes] >= 0
    num = nodes[~cat]
    if num.size:
        x = as_read(ens, u)
        thr = np.unique(ens.threshold[num])
        keys.append(np.searchsorted(thr, x, side="left" if ens.comparison == "<=" else "right").astype(np.int64))
        if zero_is_missing(ens, num):
            keys.append(reads_as_zero(x).astype(np.int64))
    cat_nodes = nodes[cat]
    step = max(8, CHUNK // max(len(u), 1))
    for s in range(0, len(cat_nodes), step):
        go = ens.goes_left_many(cat_nodes[s: s + step], u)
        keys.extend(go.astype(np.int64))
    return factor(keys, len(u))


def column_classes(tm, X, columns) -> dict:
    """``{position: [classes, ...]}``: per column of ``X`` among ``columns``, one :func:`classes` array per tree
    model of ``tm`` that splits on it.

    Each tree model reads its own columns of ``X`` (:func:`leaves`) through its own
    encoder. Raises :class:`Unmapped` when the trees' input is not X's columns one for one.
    """
    wanted = set(columns)
    keys: dict = {}
    for model, cols in leaves(tm):
        part = X if cols is None else X.iloc[:, cols]
        outer = list(range(X.shape[1])) if cols is None else list(cols)
        E = np.asarray(model.encode(part), dtype=np.float64)
        ens = model.ensemble
        if E.shape != (len(part), part.shape[1]) or ens.n_features != part.shape[1]:
            raise Unmapped("the trees read encoded columns that are not X's columns one for one")
        internal = np.flatnonzero(ens.left >= 0)
        feats = ens.feature[internal]
        local = [p for p, c in enumerate(outer) if c in wanted]
        for f in np.intersect1d(feats, np.asarray(local, dtype=np.int64)):
            keys.setdefault(outer[int(f)], []).append(classes(ens, internal[feats == f], E[:, f]))
    return keys


def factor(keys: list[np.ndarray], n: int) -> np.ndarray:
    """Codes 0..m-1 of the distinct combinations of the non-negative integer ``keys`` (one array per key, each of
    length n), in the lexicographic order of the keys (the first most significant)."""
    code = np.zeros(n, dtype=np.int64)
    size = 1
    for key in keys:
        k = np.asarray(key, dtype=np.int64).reshape(-1)
        width = int(k.max(initial=0)) + 1
        if size * width > DENSE:
            code = _dense(code, size)
            size = int(code.max(initial=-1)) + 1
        code = code * width + k
        size *= width
    return _dense(code, size)


def _dense(code: np.ndarray, size: int) -> np.ndarray:
    """``code`` (values in 0..size-1) renumbered 0..m-1 in the same order."""
    if size <= DENSE:
        present = np.zeros(size, dtype=bool)
        present[code] = True
        return (np.cumsum(present) - 1)[code]
    return np.unique(code, return_inverse=True)[1].reshape(-1)
