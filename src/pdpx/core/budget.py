"""The memory budget's estimate of a computation's peak, made before any grid is built.

Every entry that computes partial dependence through a :class:`~pdpx.core.session.Session`
(:func:`pdpx.partial_dependence`, ``partial_dependence_many``, importance, ALE,
heterogeneity, regions, explained variance) asks :func:`check_sets` before it builds a
grid; Friedman's H asks :func:`check_h` for the functions it holds at every row. Both
count what a call holds at once and does not slice to fit:

* the grid points of each feature set: ``levels`` multiplied over its features, each
  feature's count read without building its grid (:func:`grid_points`: a pandas
  category column's codes, a custom grid's length, ``grid_resolution`` for a numeric
  column; an upper bound where counting would cost as much as the grid);
* the result: ``8 x outputs x grid points``, times the rows of its ICE curves when it
  keeps them (every row for an ``interval``);
* per grid point, brute force's stacked grid (the index mesh, each feature's value
  and the running sums: :data:`PER_POINT` bytes per feature and per output).

The method's own work (brute force's stacked frames, ``exact``'s row slices) is sliced
to fit what the result leaves of the budget (:meth:`Session._check_result_size`), so it
is not counted here. Over the budget, the call is refused with :class:`BudgetError`: the
estimate, the budget and the settings that would make it fit.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import config as _config
from .dates import is_date_type
from .errors import PdpxError

#: Bytes per grid point and per feature of brute force's stacked grid: the index mesh (int64) and the value.
PER_POINT = 16
#: How the budget is changed, named in every refusal.
HOW = ("raise the memory budget (memory_budget='4GB' in the call, pdpx.set_config(memory_budget='4GB'), or "
       "--memory-budget 4GB on the command line)")


class BudgetError(PdpxError):
    """A computation whose estimated peak is over the memory budget, refused before it allocates.

    ``need`` and ``budget`` are in bytes."""

    def __init__(self, message: str, need: int, budget: int):
        super().__init__(message)
        self.need, self.budget = int(need), int(budget)


def refuse(what: str, need: float, budget: int, advice: str) -> BudgetError:
    """The :class:`BudgetError` of ``what`` (its estimate ``need`` over ``budget``): ``advice`` first, then how to
    raise the budget."""
    return BudgetError(f"{what} would take {_config.format_bytes(need)}, over the memory budget of "
                       f"{_config.format_bytes(budget)}. To fit: {advice}, or {HOW}.", int(min(need, 2**62)), budget)


def grid_points(inputs, j: int) -> int | None:
    """At most how many grid points feature ``j`` of ``inputs`` (:class:`~pdpx.core.inputs.Inputs`) gets, read
    without building its grid; None where the grid is cheap to build and has no bound known beforehand
    (``grid="thresholds"``: the model's own split points)."""
    options = inputs.options
    extra = 0 if options.include_missing is False or inputs.categorical[j] else 1  # the missing-value point
    if j in inputs.custom_values:
        try:
            return len(inputs.custom_values[j]) + extra
        except TypeError:
            return None
    if not inputs.data.supports_ice_sample:  # Dask, Spark: the columns live elsewhere; their grids are small
        return None
    column = inputs.data.column(j)
    if inputs.categorical[j]:
        return categorical_levels(column)
    if is_date_type(column.dtype):
        return int(options.grid_resolution)
    if options.grid == "thresholds":
        return None
    return int(min(options.grid_resolution, len(column))) + extra


def categorical_levels(column: pd.Series) -> int:
    """The levels a categorical column's grid holds (the categories that occur): counted from its codes for a
    pandas category column, a bool column has two at most, else the distinct values (hashed, not sorted)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = np.asarray(column.cat.codes)
        codes = codes[codes >= 0]
        if not codes.size:
            return 0
        return int(np.count_nonzero(np.bincount(codes, minlength=len(column.cat.categories))))
    if pd.api.types.is_bool_dtype(column.dtype):
        return 2
    return int(column.nunique(dropna=True))


def set_bytes(K: int, G: int, d: int, rows: int) -> int:
    """The bytes one feature set's computation holds beside its method's slices: its result (``rows`` ICE curves,
    0 for the average alone) and brute force's stacked grid of ``d`` features."""
    return 8 * K * G * (1 + rows) + G * (PER_POINT * d + 8 * K)


def check_sets(session, feature_sets: list, *, held: bool = True) -> None:
    """Refuse (:class:`BudgetError`) the feature sets of ``session`` whose results (all of them, when the call
    returns them together: ``held``) and grids are estimated over the budget, before any grid is built."""
    inp = session.inputs
    budget = int(inp.memory_budget)
    K = len(inp.outputs)
    individual = inp.request_kind != "average"
    rows = (inp.n_rows if inp.options.interval is not None or inp.ice_rows is None else len(inp.ice_rows)) \
        if individual else 0
    if inp.options.interval is not None:
        rows *= 2  # the bootstrap resamples a centered copy
    total, counts, worst = 0, {}, None
    for features in feature_sets:
        sizes = []
        for j in features:
            if j not in counts:
                counts[j] = grid_points(inp, j)
            sizes.append(counts[j])
        if any(s is None for s in sizes):
            continue
        G = math.prod(max(1, s) for s in sizes)
        need = set_bytes(K, G, len(features), rows)
        total = total + need if held else max(total, need)
        if worst is None or need > worst[0]:
            worst = (need, features, sizes, G)
    if worst is None or total <= budget:
        return
    need, features, sizes, G = worst
    names = [inp.names[j] for j in features]
    shape = " x ".join(f"{s:,} ({n!r})" for s, n in zip(sizes, names))
    what = (f"{'ICE curves' if individual else 'partial dependence'} on a grid of {shape} = {G:,} points for "
            f"{K} output(s)" + (f" and {rows:,} rows" if individual else ""))
    if len(feature_sets) > 1 and held:
        what = f"{len(feature_sets)} feature sets held together (the largest: {what})"
        need = total
    advice = []
    if any(inp.categorical[j] for j in features):
        advice.append("group rare levels of the categorical feature(s) into one, or pass custom_values with the "
                      "levels wanted")
    if any(not inp.categorical[j] for j in features):
        advice.append("lower grid_resolution")
    if individual and inp.options.interval is None:
        advice.append("use kind='average', or ICE for a sample of rows (ice_sample=1000)")
    if len(features) > 1:
        advice.append("compute fewer features together")
    if len(feature_sets) > 1 and held:
        advice.append("ask for fewer feature sets per call")
    raise refuse(what, need, budget, "; ".join(advice))


def check_h(inputs, n: int, feats: list, pairs: list, cells: int | None = None) -> None:
    """Refuse (:class:`BudgetError`) Friedman's H on ``n`` rows when the functions it holds at every row (the
    response, each used feature's 1-way PD and its centred copy, each feature's PD of the others, each pair's PD)
    are estimated over the budget, before any of them is computed."""
    budget = int(inputs.memory_budget)
    K = len(inputs.outputs)
    used = len(set(feats) | {j for p in pairs for j in p})
    need = 8 * K * n * (3 + 2 * used + len(feats) + len(pairs))
    if need <= budget:
        return
    raise refuse(f"Friedman's H of {len(feats)} feature(s) and {len(pairs):,} pair(s) on {n:,} rows and {K} "
                 "output(s) (every function at every row)", need, budget,
                 "pass fewer pairs (pairs=[...]) or features, or a sample of the rows (sample=10000)")
