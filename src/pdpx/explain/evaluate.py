"""Partial dependence functions evaluated at the rows of X, exactly, for Friedman's H.

Friedman and Popescu's H needs ``PD_j(x_ij)``, ``PD_jk(x_ij, x_ik)`` and
``PD_-j(x_i,-j)`` at every row ``i``: brute force costs ``n^2`` predictions per
function. Two facts make it cheap on tree models without changing a digit:

* A tree model's output depends on a column only through the side each split on
  that column sends the value to. Rows whose values take the same side at *every*
  split on the column (over all trees and members) form a **cell**: replacing one
  value by another of its cell changes no prediction, whatever the other columns.
  The cells are found by :mod:`pdpx.core.splits` (:func:`~pdpx.core.splits.column_classes`:
  the model's own routing rule, float32 rounding, ``<`` or ``<=``, missing values and
  categorical sets included), and each cell is
  represented by a value observed in it (missing values always have a cell of their own).
* So every PD function need only be computed on the cells' representatives, by
  pdpx's own :func:`~pdpx.core.compute.compute` (``exact`` on trees),
  and read off at each row's cell. ``PD_-j(x_i,-j)`` is row ``i``'s ICE curve over
  the cells of ``j``, averaged with the cells' weights (the data's distribution of ``x_j``).

A model without readable trees gets one cell per distinct value (the same
formulas, at brute force's cost); its 2-way functions are evaluated at the
observed pairs only (:func:`pair_at_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core import stacking
from ..core.adapter import checked_predict
from ..core.compute import compute, compute_many
from ..core.curves import CurveMeans, reduce_curves
from ..core.dates import is_date_type
from ..core.errors import PdpxError
from ..core.options import PDOptions
from ..core.progress import progress_bar
from ..core.session import Session
from ..core.splits import Unmapped, column_classes, factor

#: Grid cells of one 2-way exact call; larger pair grids are computed in blocks of rows of cells.
MAX_CELLS = 1 << 18
#: The ICE curves of one chunk of rows take at most 1 / ICE_SHARE of the memory budget.
ICE_SHARE = 4
#: Rows of one predict call of the model-agnostic 2-way evaluation.
_BATCH_ROWS = 1 << 17


@dataclass
class Cells:
    """How the rows of X fall into cells of one column.

    codes : (n_rows,) the cell of each row (0..m-1)
    reps : (m,) the row whose value represents each cell
    missing : (m,) whether a cell is the missing-value cell
    """

    codes: np.ndarray
    reps: np.ndarray
    missing: np.ndarray

    @property
    def m(self) -> int:
        return len(self.reps)


def distinct_cells(column: pd.Series) -> Cells:
    """One cell per distinct value of ``column`` (missing values: one cell)."""
    codes, _ = pd.factorize(column, use_na_sentinel=False)
    return _cells(np.asarray(codes, dtype=np.int64), column)


def _cells(codes: np.ndarray, column: pd.Series) -> Cells:
    """Cells of ``codes`` 0..m-1 (every code present), each represented by its first row."""
    seen = pd.Series(codes).drop_duplicates()  # hashed: first occurrences without sorting the rows
    first = np.empty(len(seen), dtype=np.int64)
    first[seen.to_numpy()] = seen.index.to_numpy()
    missing = column.isna().to_numpy()[first]
    return Cells(codes=codes, reps=first, missing=np.asarray(missing, dtype=bool))


def find_cells(adapter, response: str, X: pd.DataFrame, columns: list[int]) -> tuple[dict, bool, list]:
    """Cells of each of ``columns`` of the model-ordered ``X``: ``({j: Cells}, from_trees, notes)``."""
    notes: list = []
    tm = None
    try:
        tm = adapter.tree_model(response)
    except PdpxError as exc:  # a tree reader that refuses this model: the model-agnostic path
        notes.append(f"trees not read ({exc})")
    if tm is not None:
        try:
            keys = column_classes(tm, X, columns)
        except Unmapped as exc:
            notes.append(f"one cell per distinct value: {exc}")
        else:
            out = {}
            for j in columns:
                col = X.iloc[:, j]
                nan = col.isna().to_numpy().astype(np.int64)
                codes = factor([nan] + keys.get(j, []), len(X))
                out[j] = _cells(codes, col)
            return out, True, notes
        return {j: distinct_cells(X.iloc[:, j]) for j in columns}, True, notes
    return {j: distinct_cells(X.iloc[:, j]) for j in columns}, False, notes


def cells_of(codes: np.ndarray, column: pd.Series) -> Cells:
    """Cells of ``codes`` 0..m-1 (every code present) over all rows of ``column``, each represented by its first
    row."""
    return _cells(np.asarray(codes, dtype=np.int64), column)


@dataclass
class ValueCells:
    """Which cell each distinct value of a column falls in: ``cell[Index(keys).get_indexer(key(column))]``,
    the key of a category column its codes (:func:`value_keys`)."""

    keys: np.ndarray
    cell: np.ndarray

    def codes(self, column: pd.Series) -> np.ndarray:
        """The cell of each value of ``column`` (refused if a value was not seen)."""
        at = pd.Index(self.keys).get_indexer(value_keys(column))
        if (at < 0).any():
            raise PdpxError(f"column {str(column.name)!r} holds values the first pass over X did not see: its rows "
                            "change between passes; cache X first (X = X.cache(); X.count())")
        return self.cell[at]


def value_keys(column: pd.Series) -> np.ndarray:
    """What identifies a value of ``column``: its codes for a category column, else the values."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return np.asarray(column.cat.codes)
    return column.to_numpy()


def cells_by_value(adapter, response: str, head: pd.DataFrame, columns: dict) -> tuple[dict, dict, bool, list]:
    """:func:`find_cells` of the columns ``{position: all rows}`` of a model whose other columns are only known
    by ``head`` (a few rows in the model's order): the cells are found on each column's distinct values (a cell
    depends on the column alone) and each row takes the cell of its value. Returns ``({j: Cells}, {j:
    ValueCells}, from_trees, notes)``: the same cells and codes :func:`find_cells` gives on all rows."""
    keys, first = {}, {}
    for j, col in columns.items():
        inv, uniq = pd.factorize(value_keys(col), use_na_sentinel=False)
        keys[j] = (np.asarray(uniq), inv)
        first[j] = pd.Series(inv).drop_duplicates().index.to_numpy()  # first row of each distinct value, in order
    size = max(len(f) for f in first.values())
    distinct = head.iloc[np.zeros(size, dtype=np.int64)].reset_index(drop=True)
    for j, col in columns.items():  # row r: the r-th distinct value of each column (the first value repeated after)
        pad = np.concatenate([first[j], np.full(size - len(first[j]), first[j][0])])
        distinct.isetitem(j, col.iloc[pad].reset_index(drop=True))
    found, from_trees, notes = find_cells(adapter, response, distinct, list(columns))
    cells, lookup = {}, {}
    for j, col in columns.items():
        uniq, inv = keys[j]
        at_value = found[j].codes[: len(uniq)]
        cells[j] = cells_of(at_value[inv], col)
        lookup[j] = ValueCells(keys=uniq, cell=at_value)
    return cells, lookup, from_trees, notes


@dataclass
class Grid:
    """The grid given to partial_dependence for a column's cells, and where each cell lands on it.

    ``missing_value``: the missing cell is a value of ``values`` itself (a categorical column's, given as a missing
    value among its levels); a numeric column's missing cell is the missing-value point that ``include_missing``
    appends after ``values``."""

    values: list
    position: np.ndarray  # (m,) grid position of each cell
    notes: list = field(default_factory=list)
    missing_value: bool = False


def cell_grid(X: pd.DataFrame, j: int, cells: Cells, categorical: bool, subset=None) -> Grid:
    """Representative values of the (non-missing) cells in ``subset`` (all by default).

    The missing cell of a numeric column is the grid's missing-value point (``include_missing``), which pdpx appends
    last; a categorical column's is a missing value given last among its levels (the model then sees what it sees
    in those rows). Positions of cells outside ``subset`` are -1.
    """
    return column_grid(X.iloc[:, j], cells, categorical, subset)


def column_grid(col: pd.Series, cells: Cells, categorical: bool, subset=None) -> Grid:
    """:func:`cell_grid` of one column (all rows of it), named by the Series' name."""
    subset = np.arange(cells.m) if subset is None else np.asarray(subset)
    keep = subset[~cells.missing[subset]]
    vals = col.iloc[cells.reps[keep]]
    values = list(vals) if categorical or is_date_type(col.dtype) else [  # dates stay dates (their own dtype)
        float(v) for v in vals.to_numpy(dtype=np.float64, na_value=np.nan)]
    position = np.full(cells.m, -1, dtype=np.int64)
    position[keep] = np.arange(len(keep))
    has_missing = bool(cells.missing.any())
    if has_missing:
        position[cells.missing] = len(keep)
        if categorical:
            values.append(np.nan)
    return Grid(values=values, position=position, missing_value=categorical and has_missing)


def _check_grid(res, grid: Grid, name: str, axis: int) -> None:
    n = len(res.grid_values[axis])
    want = len(grid.values) + (1 if (grid.position == len(grid.values)).any() else 0)
    if n != want:  # pragma: no cover - the model refused the missing-value point
        raise PdpxError(f"h_statistic(): feature {name!r} has missing values the model does not accept")


@dataclass
class OneWay:
    """The 1-way functions: ``average[j]`` (K, m_j) on the cell grid, ``rest[j]`` (K, n) = PD_-j at each row
    (not centered), ``f`` (K, n) the model's response at each row."""

    average: dict
    rest: dict
    f: np.ndarray
    method: str
    outputs: list


def one_way(model, X: pd.DataFrame, names: list[str], grids: dict, cells: dict, ice_for: list,
            weights: np.ndarray, options: PDOptions) -> OneWay:
    """PD_j of every column of ``grids``; PD_-j (and f) at every row for the features ``ice_for``
    (:func:`averages`, then :func:`at_rows` with the cells' weights as the shares)."""
    average, method, outputs, _ = averages(model, X, names, grids, options)
    wsum = float(weights.sum())
    shares = {j: np.bincount(grids[j].position[cells[j].codes], weights=weights, minlength=average[j].shape[1]) / wsum
              for j in ice_for}
    rest, f = at_rows(model, X, names, grids, cells, ice_for, shares, len(outputs), options)
    return OneWay(average=average, rest=rest, f=f, method=method, outputs=outputs)


def averages(model, X, names: list[str], grids: dict, options: PDOptions, pairs=()) -> tuple[dict, str, list, dict]:
    """``({j: PD_j (K, m_j) on the cell grid}, method, outputs, {(j, k): PD_jk (K, m_j, m_k)})`` of every column
    of ``grids`` and of the ``pairs`` (whose grids fit :data:`MAX_CELLS`) over the rows of ``X`` (a pandas frame,
    or any X :func:`~pdpx.core.compute.compute_many` takes: a Spark DataFrame), in one call (a method that shares
    work among the feature sets, such as exact's pattern counts, then reads the rows once)."""
    custom = {names[j]: g.values for j, g in grids.items()}
    coll = compute_many(model, X, [[names[j]] for j in grids] + [[names[j], names[k]] for j, k in pairs],
                        options.but(kind="average", custom_values=custom, include_missing="auto"))
    average, both = {}, {}
    for j, res in zip(grids, coll):
        _check_grid(res, grids[j], names[j], 0)
        average[j] = np.asarray(res.average)
    for (j, k), res in zip(pairs, list(coll)[len(grids):]):
        _check_grid(res, grids[j], names[j], 0)
        _check_grid(res, grids[k], names[k], 1)
        both[(j, k)] = np.asarray(res.average)
    return average, coll[0].method, list(coll[0].outputs), both


def at_rows(model, X: pd.DataFrame, names: list[str], grids: dict, cells: dict, ice_for: list, shares: dict, K: int,
            options: PDOptions) -> tuple[dict, np.ndarray]:
    """``({j: PD_-j (K, n)}, f (K, n))`` at the rows of the pandas ``X``: each row's ICE curve over the cells of
    ``j`` averaged with ``shares[j]`` (the cells' weights in the background, summing to 1), and the response.

    The curve reducer :class:`~pdpx.core.curves.CurveMeans` (:func:`~pdpx.core.curves.reduce_curves`): from
    the method's one pass over the rows where it has one (``exact`` on sums of leaf values, every feature at
    once), otherwise from the ICE curves of a chunk of rows at a time, so memory stays within the budget
    whatever the number of rows.
    """
    custom = {names[j]: g.values for j, g in grids.items()}
    session = Session(model, X, options.but(kind="individual", custom_values=custom, include_missing="auto"))
    j0 = ice_for[0]
    reducer = CurveMeans({j: shares[j] for j in ice_for}, grids[j0].position[cells[j0].codes])
    means, f = reduce_curves(session, list(ice_for), reducer, share=ICE_SHARE).value
    return {j: means[j] for j in ice_for}, f


def two_way_grid(model, X: pd.DataFrame, names: list[str], pairs: list, grids: dict, options: PDOptions) -> dict:
    """``{(j, k): average (K, m_j', m_k')}`` on the cell grids of pairs whose grid fits :data:`MAX_CELLS`."""
    if not pairs:
        return {}
    custom = {names[j]: g.values for j, g in grids.items()}
    coll = compute_many(model, X, [[names[j], names[k]] for j, k in pairs],
                        options.but(kind="average", custom_values=custom, include_missing="auto"))
    out = {}
    for (j, k), res in zip(pairs, coll):
        _check_grid(res, grids[j], names[j], 0)
        _check_grid(res, grids[k], names[k], 1)
        out[(j, k)] = np.asarray(res.average)
    return out


def two_way_blocks(model, X, names, j, k, cells: dict, categorical: list, options: PDOptions,
                   columns: dict | None = None) -> np.ndarray:
    """PD_jk at each row's cells, the pair's grid computed in blocks of ``j``'s cells (large grids). ``columns``
    (``{position: all rows of the column}``) are read for the grids when ``X`` is not a pandas frame (Spark)."""
    cj, ck = cells[j], cells[k]
    col = (lambda i: X.iloc[:, i]) if columns is None else columns.__getitem__
    gk = column_grid(col(k), ck, categorical[k])
    nk = len(gk.values) + int(ck.missing.any())
    plain = np.flatnonzero(~cj.missing)
    size = max(1, MAX_CELLS // max(nk, 1))
    out = None
    for s in range(0, max(len(plain), 1), size):
        block = plain[s: s + size]
        gj = column_grid(col(j), cj, categorical[j], subset=np.concatenate([block, np.flatnonzero(cj.missing)]))
        res = compute(model, X, [names[j], names[k]], options.but(
            kind="average", include_missing="auto", custom_values={names[j]: gj.values, names[k]: gk.values}))
        avg = np.asarray(res.average)
        if out is None:
            out = np.empty((avg.shape[0], len(cj.codes)))
        rows = np.flatnonzero(gj.position[cj.codes] >= 0)
        out[:, rows] = avg[:, gj.position[cj.codes[rows]], gk.position[ck.codes[rows]]]
    return out


def pair_at_rows(adapter, response: str, outputs: list, X: pd.DataFrame, j: int, k: int, cells: dict,
                 weights: np.ndarray, bar, notes: list | None = None) -> np.ndarray:
    """PD_jk at each row's values by brute force over the distinct observed pairs (models without trees).

    ``PD_jk(a, b) = sum_r w_r f(a, b, x_r,-jk) / sum_r w_r``: one prediction per
    (distinct pair, row), in batches; one pair per call for a model whose predictions depend on the other rows of
    the call (:func:`pdpx.core.stacking.apart`, the reason then in ``notes``).
    """
    n = len(X)
    cj, ck = cells[j], cells[k]
    pair_codes = cj.codes * ck.m + ck.codes
    uniq, inv = np.unique(pair_codes, return_inverse=True)
    first_j = cj.reps[uniq // ck.m]
    first_k = ck.reps[uniq % ck.m]
    values = np.empty((len(outputs), len(uniq)))
    batch = max(1, _BATCH_ROWS // max(n, 1))
    few = np.arange(min(3, len(uniq)))
    why = None if len(few) < 2 else stacking.apart(
        adapter, response, X, [j, k], [X.iloc[first_j[few], j].array, X.iloc[first_k[few], k].array])
    if why is not None:  # predictions that depend on the other rows of the call: one pair of values per call
        batch = 1
        if notes is not None and why not in notes:
            notes.append(why)
    wsum = weights.sum()
    for s in range(0, len(uniq), batch):
        b = min(batch, len(uniq) - s)
        big = X.iloc[np.tile(np.arange(n), b)].reset_index(drop=True)
        big.isetitem(j, X.iloc[np.repeat(first_j[s: s + b], n), j].reset_index(drop=True).array)
        big.isetitem(k, X.iloc[np.repeat(first_k[s: s + b], n), k].reset_index(drop=True).array)
        pred = checked_predict(adapter, big, response)[:, outputs].reshape(b, n, len(outputs))
        values[:, s: s + b] = np.einsum("bno,n->ob", pred, weights / wsum)  # shares first: no overflow
        bar.update(b)
    return values[:, inv.reshape(-1)]


def pair_count(cells: dict, j: int, k: int) -> int:
    """Distinct observed (cell of j, cell of k) pairs: the model-agnostic path's predict calls per row."""
    return len(np.unique(cells[j].codes * cells[k].m + cells[k].codes))


def bar_for(total: int, progress) -> object:
    """The progress bar of the model-agnostic path."""
    return progress_bar(total, progress=progress, desc="pdpx h_statistic")
