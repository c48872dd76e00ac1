"""``brute``: set the target features to each grid point, predict, average.

Works for any model. Many grid points are stacked into each predict call (fewer,
larger calls), as many as the memory budget allows; when even one grid point
over all rows would exceed it, the rows are split too. That assumes the model is a
function of each row alone (docs/methods.md, "Models are per-row functions").
``method_options={"stack": False}`` calls the model once per grid point with all
the rows, as scikit-learn's brute does, for a model whose output on a row depends on
the other rows of the call (it standardises within predict, say).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import stacking
from ..core.adapter import checked_predict
from ..core.errors import PdpxError, model_failure, reraisable
from ..core.grid import column_dtype
from ..core.hookspecs import hookimpl
from ..core.method import Method, MethodOptions, MethodResult, Request, option
from ..core.progress import progress_bar
from ..core.result import message_value
from ..core.stacking import stacked_frame  # noqa: F401 - re-exported: pdpx.extend and methods import it here
from ..core.threads import in_order, model_threads

#: Prediction code typically holds a few copies of its input: budget for that.
_COPIES = 4
#: Most bytes one stacked predict call takes, whatever the budget (larger calls are no faster).
CHUNK_BYTES = 256 * 2**20


def grid_points(req: Request) -> list[np.ndarray]:
    """For each target feature, its value at every grid point (C order over the grid)."""
    mesh = np.indices(req.grid_shape).reshape(len(req.grid_shape), -1)
    # a pandas array (dates with a time zone, periods) stays one: no Python object per value
    return [g.take(m) if isinstance(g, pd.api.extensions.ExtensionArray) else np.asarray(g)[m]
            for g, m in zip(req.grid_values, mesh)]


def stack_option(options: dict) -> bool:
    """The ``stack`` method option, checked: True (the default) stacks grid points into each call."""
    stack = options.get("stack", True)
    if not isinstance(stack, (bool, np.bool_)):
        raise PdpxError(f"method_options={{'stack': {stack!r}}}: expected True (several grid points per predict "
                        "call, the default) or False (one call per grid point with all the rows)")
    return bool(stack)


class Tasks:
    """The (point_start, point_stop, row_start, row_stop) tasks of :func:`plan_chunks`, made one at a time as they
    are read: a million grid points split into row slices are millions of tasks, which a list would hold at once
    (bytes the memory budget does not count)."""

    def __init__(self, n_rows: int, n_points: int, per_call: int, rows_per_call: int):
        self.n_rows, self.n_points, self.per_call, self.rows = n_rows, n_points, per_call, rows_per_call
        self._slices = -(-n_rows // rows_per_call)

    def __len__(self) -> int:
        return -(-self.n_points // self.per_call) * self._slices

    def __iter__(self):
        for p in range(0, self.n_points, self.per_call):
            for r in range(0, self.n_rows, self.rows):
                yield p, min(p + self.per_call, self.n_points), r, min(r + self.rows, self.n_rows)


def plan_chunks(n_rows: int, n_points: int, bytes_per_row: float, budget: int, jobs: int, stack: bool = True):
    """(point_start, point_stop, row_start, row_stop) tasks whose stacked frames fit the budget
    (``stack=False``: one task per grid point with every row, whatever the budget), as :class:`Tasks`."""
    if not stack:
        return Tasks(n_rows, n_points, 1, max(1, n_rows))
    rows_per_call = max(1, int(budget // max(1, jobs) // (bytes_per_row * _COPIES)))
    if rows_per_call >= n_rows:
        per_call = max(1, min(n_points, rows_per_call // max(1, n_rows)))
        if jobs > 1:  # give every thread work
            per_call = max(1, min(per_call, -(-n_points // jobs)))
        return Tasks(n_rows, n_points, per_call, max(1, n_rows))
    return Tasks(n_rows, n_points, 1, rows_per_call)


@dataclass(frozen=True)
class BruteOptions(MethodOptions):
    """``brute``'s ``method_options``: ``stack=False`` calls the model once per grid point with all the rows."""

    stack: bool = option(True, choices=(True, False), describe=(
        "True (several grid points per predict call, the default) or False (one call per grid point with all "
        "the rows)"))


class Brute(Method):
    """``brute``: predict on stacked copies of the rows, one per grid point, and average."""
    name = "brute"
    equals_brute = True
    cost_rank = 1000
    options = BruteOptions

    def compute(self, adapter, req: Request) -> MethodResult:
        X, n = req.X, len(req.X)
        points = grid_points(req)
        P = req.n_grid
        outputs = np.asarray(req.outputs)
        K = outputs.size
        w = req.sample_weight
        bytes_per_row = max(8.0, X.memory_usage(index=False, deep=False).sum() / max(n, 1)) + 8 * (K + 8)
        jobs = model_threads(req.n_jobs) if getattr(adapter, "thread_safe", True) else 1
        # one dtype per target column for every chunk: the column's own unless a grid value does not fit
        dtypes = [column_dtype(X.dtypes.iloc[pos], g) for pos, g in zip(req.features, req.grid_values)]
        stack, notes = stack_option(req.options), []
        if stack and "stack" not in req.options:  # the user's code on the way: may it be stacked? (asked once)
            why = stacking.verdict(adapter, req, lambda rows, values: stacked_frame(rows, req.features, values,
                                                                                    dtypes))
            if why is not None:
                stack = False
                notes.append(why)
        tasks = plan_chunks(n, P, bytes_per_row, min(req.memory_budget, CHUNK_BYTES * jobs), jobs, stack)

        sums = np.zeros((P, K))
        ice = np.empty((K, n, P)) if req.needs_individual else None
        # each row's share of the average: the sums are weighted means, within the range of the predictions
        # (predictions of 1e307 average to 1e307, not to infinity)
        share = np.full(n, 1.0 / n) if w is None else np.asarray(w, dtype=np.float64) / float(np.sum(w))

        def run(task):
            p0, p1, r0, r1 = task
            base = X.iloc[r0:r1]
            frame = stacked_frame(base, req.features, [v[p0:p1] for v in points], dtypes)
            try:
                pred = checked_predict(adapter, frame, req.response)[:, outputs]  # (B * nr, K)
            except Exception as exc:
                if not reraisable(exc):
                    raise
                return task, exc  # raised on the caller's thread, where a thread pool leaves its cause as it is
            return task, pred.reshape(p1 - p0, r1 - r0, K)

        with progress_bar(len(tasks), progress=req.progress, desc="pdpx brute") as bar:
            for (p0, p1, r0, r1), pred in in_order(run, tasks, jobs):
                bar.update(1)
                if isinstance(pred, Exception):
                    failed(adapter, req, points, dtypes, (p0, p1, r0, r1), pred)
                sums[p0:p1] += np.einsum("r,prk->pk", share[r0:r1], pred)
                if ice is not None:
                    ice[:, r0:r1, p0:p1] = pred.transpose(2, 1, 0)
        average = sums.T.reshape((K,) + req.grid_shape)
        individual = ice.reshape((K, n) + req.grid_shape) if ice is not None else None
        return MethodResult(average=average, individual=individual, notes=notes)


def failed(adapter, req: Request, points: list[np.ndarray], dtypes, task, exc: Exception):
    """Raise the model's failure on ``task``'s stacked call again, with the feature, grid value and rows it was
    predicting (:func:`pdpx.core.errors.model_failure`). A call of several grid points is tried again one grid point
    at a time (the rows of the failed call, the cost of that call) to name the first grid value the model fails on;
    when each succeeds alone, the message names the range of grid points stacked into the call."""
    p0, p1, r0, r1 = task
    X = req.X
    names = [str(X.columns[j]) for j in req.features]
    cause, at = exc, None
    if p1 - p0 > 1:
        base = X.iloc[r0:r1]
        for p in range(p0, p1):
            try:
                checked_predict(adapter, stacked_frame(base, req.features, [v[p:p + 1] for v in points], dtypes),
                                req.response)
            except Exception as single:  # noqa: BLE001 - the model's own failure on this grid point
                if reraisable(single):
                    cause, at = single, p
                    break
    else:
        at = p0
    if at is not None:
        where = ", ".join(f"{n!r} = {message_value(v[at])}" for n, v in zip(names, points))
    else:
        where = (f"grid points {p0 + 1} to {p1} of {req.n_grid} stacked into one call (each alone succeeded; "
                 + ", ".join(f"{n!r} from {message_value(v[p0])} to {message_value(v[p1 - 1])}"
                             for n, v in zip(names, points)) + ")")
    rows = (f"all {len(X):,} rows" if (r0, r1) == (0, len(X)) else
            f"rows {r0:,} to {r1 - 1:,} (positions) of the {len(X):,} rows averaged over")
    shown = " x ".join(repr(n) for n in names)
    context = (f"computing the partial dependence on {shown}, the model's {req.response} failed at {where}, "
               f"predicting on {rows}")
    advice = ("To reproduce it, set " + " and ".join(f"{n!r}" for n in names) + " to that value in every row of X "
              f"and call the model's {req.response}" if at is not None else
              "pass method_options={'stack': False} to call the model once per grid point")
    raise model_failure(cause, context, advice) from cause


@hookimpl
def pdpx_register_methods(register):
    """Register ``brute``."""
    register(Brute())
