"""Friedman's H of rows held elsewhere (a Spark DataFrame, a Dask collection): the sums over rows that need the model
at each row, partition by partition.

:mod:`pdpx.explain.interaction` computes every PD function on the trees' cells from all
rows (each a pass of :mod:`pdpx.rows.spark`, only counts crossing the cluster) and reads
the pairwise statistics off each row's cells here, as on a pandas frame. The overall
statistic also needs ``f(x_i)`` and ``PD_-j(x_i,-j)`` (row ``i``'s ICE curve over the
cells of ``j``, averaged with the cells' weights over all rows) at every row: each Spark
task computes them for its rows (:func:`pdpx.explain.evaluate.at_rows`) and returns, per
feature and output, the weight, the weighted mean and the centered sum of squares of
``u = f - PD_j - PD_-j`` and of ``f``; the driver adds the partitions' moments
(Chan, Golub and LeVeque's pairwise update, which keeps the digits of a sum of squares
about the mean). The centered sums are then those of the pandas path, whose terms are
each centered over all rows: ``sum_i w_i (u_i - u_bar)^2``.
"""

from __future__ import annotations

import numpy as np

from ..core.config import config_context
from ..core.errors import PdpxError
from . import evaluate


class Moments:
    """Weight ``W``, weighted means and centered sums of squares (arrays of one shape) of some rows; ``a + b``
    is the moments of both sets of rows."""

    def __init__(self, W: float, mean: np.ndarray, m2: np.ndarray):
        self.W, self.mean, self.m2 = float(W), mean, m2

    @classmethod
    def of(cls, values: np.ndarray, w: np.ndarray) -> "Moments":
        """The moments of ``values`` (..., rows) weighted by ``w`` (rows,)."""
        W = float(w.sum())
        if W == 0:
            zero = np.zeros(values.shape[:-1])
            return cls(0.0, zero, zero.copy())
        mean = (values @ w) / W
        return cls(W, mean, ((values - mean[..., None]) ** 2) @ w)

    def __add__(self, other: "Moments") -> "Moments":
        if other.W == 0:
            return self
        if self.W == 0:
            return other
        W = self.W + other.W
        delta = other.mean - self.mean
        return Moments(W, self.mean + delta * (other.W / W), self.m2 + other.m2 + delta ** 2 * (self.W * other.W / W))


def overall_sums(data, names: list, grids: dict, cells: dict, lookups: dict, ice_for: list, average: dict,
                 shares: dict, K: int, options, method: str, weights=None) -> tuple[dict, np.ndarray, np.ndarray]:
    """``({j: sum_i w_i (u_i - u_bar)^2 (K,)}, sum_i w_i (f_i - f_bar)^2 (K,), sum_i w_i f_i^2 (K,))`` over every
    row of ``data`` (a :class:`~pdpx.core.rows.Rows` elsewhere: Spark, Dask), ``u = f - PD_j - PD_-j``, from one
    pass.

    ``method`` is the method the PD functions took here, after its check against the model's own predict: the
    tasks take it and do not check again (a model that lives in the driver, Spark ML's, cannot predict there)."""
    meta = {j: (cells[j].reps, cells[j].missing) for j in ice_for}
    local = options.but(rows=None, sample_weight=None, progress=False, method=method,
                        n_jobs=1 if options.n_jobs is None else options.n_jobs)
    got = data.map_reduce(_overall_task, (
        names, {j: grids[j] for j in ice_for}, {j: lookups[j] for j in ice_for}, meta, list(ice_for),
        {j: average[j] for j in ice_for}, shares, K, local), weights)
    if not got:
        raise PdpxError("X has no rows; H averages over rows, so pass at least one")
    total = got[0]
    for m in got[1:]:
        total = total + m
    if total.W <= 0:
        raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
    over = {j: total.m2[i] for i, j in enumerate(ice_for)}
    f_mean, f_m2 = total.mean[-1], total.m2[-1]
    return over, f_m2, f_m2 + total.W * f_mean ** 2


def _overall_task(model, part, weights, names, grids, lookups, meta, ice_for, average, shares, K, options):
    """One batch of a partition: the :class:`Moments` of ``u_j`` for each feature of ``ice_for`` and of ``f``."""
    w = np.ones(len(part)) if weights is None else weights
    cells = {j: evaluate.Cells(codes=lookups[j].codes(part[names[j]]), reps=meta[j][0], missing=meta[j][1])
             for j in ice_for}
    with config_context(check_trees=False):  # the driver checked the method (see overall_sums)
        rest, f = evaluate.at_rows(model, part.reset_index(drop=True), names, grids, cells, ice_for, shares, K,
                                   options)
    u = [f - average[j][:, grids[j].position[cells[j].codes]] - rest[j] for j in ice_for]
    return Moments.of(np.stack(u + [f]), w)
