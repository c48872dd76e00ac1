"""One raw column read by the model as several derived columns: its splits as sets of raw values.

A step that maps one numeric column to several (a spline basis, one-hot bins, powers of the
column, sin and cos of an hour) gives the model splits on derived columns. Read on the raw column,
such a split sends an arbitrary set of raw values left: no threshold says which. Here the fitted
steps are evaluated once on the finite set of raw values a call can meet (the column's values in X
and the grid points), each value is routed through every split on the column's derived columns,
and each distinct route (a *class*: values every split treats alike) gets a code. The raw column
then reaches the rewritten trees as codes and each split is a set of codes (the IR's categorical
set splits): values that route alike share a code, so the sets are as small as the number of
distinct routes (24 at most for an hour), whatever the number of values.

A ``datetime64`` column made into parts by a step declared column-wise (year, month, day of week,
hour) is read the same way: its dates are exact numbers inside the reading only
(:func:`pdpx.core.dates.date_counts`; ``Column.dates`` holds its dtype, the steps are given dates
again), and the TreeModel marks it ``dated``.

A value outside the evaluated set (met later, e.g. by another measure's points) is evaluated and
routed when it is met: it takes the code of the class it routes with, and is refused (a
:class:`~pdpx.core.errors.UnreadValueError`) when it routes like no class, where a code would have to be
added to trees already in use; ``method="auto"`` then answers with ``brute``, saying so in the notes.

The trees are read in two stages: :func:`pdpx.adapters.column_trees.rewrite` once per fitted
pipeline (thresholds of the other columns, by bisection: the costly part), then
:meth:`ValueTrees.complete` per set of values met (each new set of values evaluated once; the last
few kept). This module is library-free: :mod:`pdpx.adapters.sklearn_pipeline` finds which columns
need it and supplies the evaluation of the fitted steps.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np
import pandas as pd

from ..core.dates import date_counts
from ..core.errors import PdpxError, UnreadValueError
from ..core.ir import TreeModel, fingerprint
from .column_trees import encoders, pack


class ValueSet:
    """The codes of one raw column split by sets of its values.

    Attributes
    ----------
    name : str
        The column's name (for messages).
    values : ndarray of float64
        The values the steps were evaluated on (finite or infinite; increasing).
    value_codes : ndarray of int64
        Each value's code (its class).
    reps : list of float
        One value per code (its class's first value): the value evaluated for the code.
    nan_code : int
        The code of a missing value, or -1 when the steps refuse it.
    to_numbers : callable, optional
        A date column's dates as the numbers ``values`` holds (:func:`pdpx.core.dates.date_counts`); None for a
        numeric column.
    """

    def __init__(self, name: str, values, value_codes, reps, patterns: dict, nan_code: int, route: Callable,
                 to_numbers: Callable | None = None):
        self.name = name
        self.values = np.asarray(values, dtype=np.float64)
        self.value_codes = np.asarray(value_codes, dtype=np.int64)
        self.reps = list(reps)
        self.patterns = patterns
        self.nan_code = int(nan_code)
        self._route = route
        self.to_numbers = to_numbers
        self._index = pd.Index(self.values)
        self._met: dict = {}

    def codes(self, values) -> np.ndarray:
        """The code of each of ``values`` (float64; a missing value the steps refuse: -1)."""
        if self.to_numbers is not None:
            try:
                x = self.to_numbers(values)
            except PdpxError as exc:  # a date no number of the reading holds: the trees have no code for it
                raise UnreadValueError(f"column {self.name!r}: {exc}") from None
        else:
            if not isinstance(values, pd.Series):
                values = pd.Series(np.asarray(values).reshape(-1))
            if values.dtype == object:  # numbers and None
                values = pd.to_numeric(values)
            x = values.to_numpy(dtype=np.float64, na_value=np.nan)
        pos = self._index.get_indexer(x)
        known = pos >= 0
        out = np.where(known, self.value_codes[np.maximum(pos, 0)] if len(self.values) else 0, -1)
        nan = np.isnan(x)
        out[nan] = self.nan_code
        miss = ~known & ~nan
        if miss.any():
            out[miss] = self._unknown(x[miss])
        return out.astype(np.float64)

    def _unknown(self, x: np.ndarray) -> np.ndarray:
        """Codes of values outside the evaluated set: the class each routes with (evaluated once per value)."""
        todo = np.unique(x[[v not in self._met for v in x.tolist()]])
        if todo.size:
            for v, pattern in zip(todo.tolist(), self._route(todo)):
                code = self.patterns.get(pattern)
                if code is None:
                    raise UnreadValueError(
                        f"value {v!r} of column {self.name!r} reaches the model's splits in a way none of the values "
                        "pdpx evaluated the pipeline's steps on does (the column's values in X and the grid "
                        "points); pass it in X or in the grid (custom_values), or use method='brute'")
                self._met[v] = code
        return np.array([self._met[v] for v in x.tolist()], dtype=np.int64)


def route_patterns(ens, nodes_of: list, Z: np.ndarray) -> list:
    """The route of each row of ``Z`` (derived values, one column per derived column) through the nodes of
    ``nodes_of`` (per column of ``Z``, the internal nodes of ``ens`` splitting on it), as bytes."""
    total = sum(len(n) for n in nodes_of)
    if total == 0:
        return [b""] * len(Z)
    out: list = []
    step = max(1, (1 << 22) // total)
    for s in range(0, len(Z), step):
        block = Z[s: s + step]
        go = np.zeros((len(block), total), dtype=bool)
        at = 0
        for p, nodes in enumerate(nodes_of):
            if len(nodes):
                go[:, at: at + len(nodes)] = ens.goes_left_many(np.asarray(nodes), block[:, p]).T
                at += len(nodes)
        packed = np.packbits(go, axis=1)
        out.extend(bytes(r) for r in packed)
    return out


def build(name: str, values: np.ndarray, evaluate: Callable, ens, nodes_of: list, nan_ok: bool,
          to_numbers: Callable | None = None) -> ValueSet:
    """The :class:`ValueSet` of one column.

    Parameters
    ----------
    name : str
        The column's name.
    values : ndarray of float64
        The raw values a call can meet (NaN and repeats allowed: dropped here).
    evaluate : callable
        ``evaluate(values) -> ndarray (len(values), k)``: the column's k derived columns as the model
        reads them (after its encoder), computed by the fitted steps.
    ens : TreeEnsemble
        The model on the derived columns.
    nodes_of : list of arrays
        Per derived column, the internal nodes of ``ens`` that split on it.
    nan_ok : bool
        Whether the steps accept a missing value (it then gets a code of its own class).
    to_numbers : callable, optional
        A date column's dates as numbers (``values`` and ``evaluate`` take those numbers already).
    """
    vals = np.unique(np.asarray(values, dtype=np.float64))
    vals = vals[~np.isnan(vals)]

    def route(x):
        return route_patterns(ens, nodes_of, np.asarray(evaluate(np.asarray(x, dtype=np.float64)), np.float64))

    patterns = route(vals) if vals.size else []
    order: dict = {}
    codes = np.array([order.setdefault(p, len(order)) for p in patterns], dtype=np.int64)
    first = np.unique(codes, return_index=True)[1] if codes.size else np.zeros(0, dtype=np.int64)
    reps = [float(v) for v in vals[first]]
    nan_code = -1
    if nan_ok:
        p = route(np.array([np.nan]))[0]
        if p not in order:
            order[p] = len(order)
            reps.append(np.nan)
        nan_code = order[p]
    return ValueSet(name, vals, codes, reps, order, nan_code, route, to_numbers)


def check_images(name: str, actual: np.ndarray, evaluated: np.ndarray, raw: np.ndarray) -> str:
    """Why rows' derived columns (``actual``: as the pipeline computes them for whole rows) are not the
    image of their raw values (``evaluated``: the column's values alone through the steps), or ``""``."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(evaluated, dtype=np.float64)
    same = np.isclose(a, e, rtol=1e-9, atol=1e-12, equal_nan=True).all(axis=1)
    if same.all():
        return ""
    i = int(np.flatnonzero(~same)[0])
    return (f"the columns derived from {name!r} in row {i} ({np.round(a[i], 6).tolist()}) are not the image of its "
            f"value {float(raw[i])!r} under the steps ({np.round(e[i], 6).tolist()}): a step declared column-wise "
            "reads other columns or the batch, so a split on them is no set of values of this column")


def attach(plan: list, ens, evaluate: Callable, values_of: Callable, rows=None, encoded_rows=None) -> str:
    """Give each column of ``plan`` of kind ``"values"`` its :class:`ValueSet` (its codes, and one value per code
    in its table); ``""``, or why a column cannot be read so (the pipeline then runs brute).

    Parameters
    ----------
    plan : list of Column
        :mod:`pdpx.adapters.column_trees`' columns; ``outputs`` are the model's columns made of each.
    ens : TreeEnsemble
        The model on its own (derived) columns.
    evaluate : callable
        ``evaluate({position: values}) -> {position: matrix}`` (:data:`pdpx.adapters.column_trees.Evaluate`).
    values_of : callable
        ``values_of(position)``: the raw values a call meets in that column, or None when not known.
    rows, encoded_rows : DataFrame and ndarray, optional
        Rows of X and the model's columns the steps make of them: each row's derived columns must be the
        image of its raw value (computed alone); otherwise the column is refused.
    """
    internal = np.flatnonzero(ens.left >= 0)
    for j, col in enumerate(plan):
        if col.kind != "values":
            continue
        values = values_of(j)
        if values is None:
            return (f"column {col.name!r} reaches the model as several derived columns, read as sets of its values, "
                    "and pdpx does not know the values this call meets (X has one row)")

        def ev(x, j=j):
            return evaluate({j: np.asarray(x, dtype=np.float64)})[j]

        try:
            if rows is not None and len(rows):
                raw = numbers(col, rows.iloc[:, j])
                enc = np.asarray(encoded_rows)[:, col.outputs]
                why = check_images(col.name, enc, ev(raw), raw)
                # and each of a few values alone (a batch of one): a step that reads the batch differs there
                k = min(3, len(raw))
                why = why or check_images(col.name, enc[:k], np.vstack([ev(raw[i: i + 1]) for i in range(k)]), raw[:k])
                if why:
                    return why
            nodes_of = [internal[ens.feature[internal] == c] for c in col.outputs]
            vs = build(col.name, values, ev, ens, nodes_of, nan_ok=not col.nan_invalid, to_numbers=_to_numbers(col))
        except Exception as exc:  # noqa: BLE001 - the steps refuse some value (e.g. out of a spline's range)
            return (f"the steps refuse some values of column {col.name!r} (in X or the grid: "
                    f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
        col.value_set, col.table, col.reps, col.nan_code = vs, vs.reps, None, vs.nan_code
    return ""


def value_splits(base: TreeModel, inner, plan: list, evaluate: Callable) -> TreeModel:
    """``base`` (the rewritten trees, their sets of values left as placeholders) with each split on a derived
    column of a ``"values"`` column of ``plan`` as the set of its codes that go left (one value per code,
    ``Column.table``, routed through the split of ``inner``, the model on its own columns)."""
    ens = base.ensemble
    internal = np.flatnonzero(inner.left >= 0)
    cat_offset, cat_nwords = ens.cat_offset.copy(), ens.cat_nwords.copy()
    words, n_words = [ens.cat_words], len(ens.cat_words)
    for j, col in enumerate(plan):
        if col.kind != "values":
            continue
        got = evaluate({j: np.asarray(col.table, dtype=np.float64)})[j]
        size = len(col.table)
        nw = (size + 31) // 32
        for p, c in enumerate(col.outputs):
            nd = internal[inner.feature[internal] == c]
            if not len(nd):
                continue
            bits = np.zeros((len(nd), nw * 32), dtype=bool)
            bits[:, :size] = inner.goes_left_many(nd, got[:, p])
            words.append(pack(bits))
            cat_offset[nd] = n_words + np.arange(len(nd)) * nw
            cat_nwords[nd] = nw
            n_words += len(nd) * nw
    new = replace(ens, cat_offset=cat_offset, cat_nwords=cat_nwords, cat_words=np.concatenate(words))
    encode, encode_values = encoders(plan)
    sets = dict(base.value_sets)
    sets.update({j: (c.value_set.values, c.value_set.value_codes) for j, c in enumerate(plan) if c.kind == "values"})
    dated = frozenset(j for j, c in enumerate(plan) if c.kind == "values" and c.dates is not None)
    return TreeModel(ensemble=new, encode=encode, encode_values=encode_values, notes=list(base.notes),
                     recursion_weights=base.recursion_weights, value_sets=sets, dated=dated)


def numbers(col, values) -> np.ndarray:
    """A column's raw values as the float64 numbers its value set holds: a date column's dates as exact counts
    (:func:`pdpx.core.dates.date_counts`: raises PdpxError for a date no count holds), a numeric column's numbers."""
    if col.dates is not None:
        return date_counts(values, col.dates)
    if isinstance(values, pd.Series):
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(values, dtype=np.float64)


def _to_numbers(col) -> Callable | None:
    if col.dates is None:
        return None
    dtype = col.dates
    return lambda values: date_counts(values, dtype)


class ValueTrees:
    """A pipeline's trees on its raw columns whose columns made into several wait for the values a call meets.

    ``complete(values_of, rows)`` gives the TreeModel (or why there is none) for those values; the result is
    kept per set of values (the last four).
    """

    def __init__(self, base: TreeModel, inner, plan: list, evaluate: Callable, encode_rows: Callable):
        self.base, self.inner, self.plan = base, inner, plan
        self.evaluate, self.encode_rows = evaluate, encode_rows
        self.columns = [j for j, c in enumerate(plan) if c.kind == "values"]
        self._done: dict = {}

    def complete(self, values_of: Callable, rows=None):
        """The TreeModel for the raw values ``values_of(position)`` of each column made into several (checked on
        ``rows``, up to 256 rows of X), or the sentence saying why there is none."""
        tables = {}
        for j in self.columns:
            try:
                tables[j] = _known_numbers(self.plan[j], values_of(j))
            except PdpxError as exc:  # a date no exact number holds: the reading cannot give it a code
                return f"column {self.plan[j].name!r}: {exc}"
        sample = rows.iloc[:256] if rows is not None else None
        key = fingerprint(*[np.asarray(t, dtype=np.float64) if t is not None else "none" for t in tables.values()],
                          _rows_digest(sample))
        if key not in self._done:
            plan = [replace(c) for c in self.plan]
            encoded = self.encode_rows(sample) if sample is not None else None
            why = attach(plan, self.inner, self.evaluate, tables.get, sample, encoded)
            self._done[key] = why or value_splits(self.base, self.inner, plan, self.evaluate)
            while len(self._done) > 4:
                self._done.pop(next(iter(self._done)))
        return self._done[key]


def _known_numbers(col, values):
    """The values a call meets in a column (``values_of``'s: numbers, or a date column's dates) as numbers."""
    return None if values is None else numbers(col, values)


def several(paths: list) -> bool:
    """Whether a column's traced paths (per model column made of it, its ``(treatment, categories)`` steps) make it
    a ``"values"`` column: a step derives several columns of it, or it is encoded after a map of its numbers
    (binned, then one-hot encoded), or it is both encoded and used as a number."""
    if any(t == "derived" for p in paths for t, _ in p):
        return True
    enc = [next((i for i, (t, _) in enumerate(p) if t == "encoder"), None) for p in paths]
    if all(e is None for e in enc):
        return False
    return not all(e is not None and all(t in ("preserve", "sentinel") for t, _ in p[:e]) for e, p in zip(enc, paths))


def complete_for(out, adapter):
    """``out`` (what a pipeline's reading gave), completed with the values this call meets when it is a
    :class:`ValueTrees`: the values of the adapter's validated X (``adapter.column_values``, with the grids
    checked so far), checked on its rows. A single row of X (a member of a composite model) gives no values."""
    if not isinstance(out, ValueTrees):
        return out
    X = vars(adapter).get("_validated")
    values = getattr(adapter, "column_values", None)
    if X is None or len(X) < 2 or not callable(values):
        return out.complete(lambda j: None, None)
    return out.complete(lambda j: values(X.columns[j]), X)


def _rows_digest(rows) -> object:
    """A digest of the rows the images are checked on (they are checked again for other rows)."""
    if rows is None:
        return ""
    try:
        return pd.util.hash_pandas_object(rows, index=False).to_numpy()
    except (TypeError, ValueError):  # unhashable cells: by identity, so checked again each time
        return object()
