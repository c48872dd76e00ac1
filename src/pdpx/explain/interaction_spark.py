"""Friedman's H of rows held elsewhere (a Spark DataFrame, a Dask collection): the sums over rows that need the model
at each row, partition by partition.

:mod:`pdpx.explain.interaction` computes every PD function on the trees' cells from all
rows (each a pass of :mod:`pdpx.rows.spark`, only counts crossing the cluster) and reads
the pairwise statistics off each row's cells here, as on a pandas frame. The overall
statistic also needs ``f(x_i)`` and ``PD_-j(x_i,-j)`` (row ``i``'s ICE curve over the
cells of ``j``, averaged with the cells' weights over all rows) at every row: each Spark
task computes them for its rows (the curve reducer :class:`OverallSums`, a :class:`~pdpx.core.curves.CurveMeans`
run by :func:`pdpx.core.curves.reduce_partitions`: the method's walk or chunks of ICE curves) and returns, per
feature and output, the weight, the weighted mean and the centered sum of squares of
``u = f - PD_j - PD_-j`` and of ``f``; the driver adds the partitions' moments
(Chan, Golub and LeVeque's pairwise update, which keeps the digits of a sum of squares
about the mean). The centered sums are then those of the pandas path, whose terms are
each centered over all rows: ``sum_i w_i (u_i - u_bar)^2``.
"""

from __future__ import annotations

import numpy as np

from ..core.curves import CurveMeans, CurveReducer, fresh, groups_of, reduce_partitions
from ..core.errors import PdpxError


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


def overall_sums(data, names: list, categorical: list, grids: dict, cells: dict, lookups: dict, ice_for: list,
                 average: dict, shares: dict, K: int, options, method: str,
                 weights=None) -> tuple[dict, np.ndarray, np.ndarray]:
    """``({j: sum_i w_i (u_i - u_bar)^2 (K,)}, sum_i w_i (f_i - f_bar)^2 (K,), sum_i w_i f_i^2 (K,))`` over every
    row of ``data`` (a :class:`~pdpx.core.rows.Rows` elsewhere: Spark, Dask), ``u = f - PD_j - PD_-j``, from one
    pass: the curve reducer :class:`OverallSums` per partition (:func:`~pdpx.core.curves.reduce_partitions`).

    ``method`` is the method the PD functions took here, after its check against the model's own predict: the
    tasks take it and do not check again (a model that lives in the driver, Spark ML's, cannot predict there)."""
    local = options.but(rows=None, sample_weight=None, progress=False, method=method,
                        n_jobs=1 if options.n_jobs is None else options.n_jobs)
    missing = {j: bool(cells[j].missing.any()) and not grids[j].missing_value for j in ice_for}
    groups = groups_of(local, list(ice_for), {j: grids[j].values for j in ice_for}, missing, names, categorical)
    reducer = OverallSums({j: shares[j] for j in ice_for}, names, {j: grids[j].position for j in ice_for},
                          {j: lookups[j] for j in ice_for}, {j: average[j] for j in ice_for})
    sizes = {j: len(shares[j]) for j in ice_for}
    total = reduce_partitions(data, None, list(ice_for), groups, reducer, weights, sizes, list(range(K)),
                              trusted=True).value
    if total.W <= 0:
        raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
    over = {j: total.m2[i] for i, j in enumerate(ice_for)}
    f_mean, f_m2 = total.mean[-1], total.m2[-1]
    return over, f_m2, f_m2 + total.W * f_mean ** 2


class OverallSums(CurveMeans):
    """The curve reducer of H's overall sums on rows held elsewhere: a partition's :class:`CurveMeans` (each row's
    ``PD_-j`` and ``f``, the rows' cells read from their values by ``lookups``), reduced where the rows are to the
    :class:`Moments` of ``u_j = f - PD_j - PD_-j`` for each feature and of ``f`` (:meth:`sealed`), which merge."""

    def __init__(self, shares: dict, names: list, positions: dict, lookups: dict, average: dict):
        super().__init__(shares, np.zeros(0, dtype=np.int64))
        self.names, self.positions, self.lookups, self.average = names, positions, lookups, average

    def start(self, part):
        at = {j: self.positions[j][self.lookups[j].codes(part.frame[self.names[j]])] for j in self.shares}
        base = fresh(self, part)
        base.at, base.rows_at = at[next(iter(self.shares))], at
        out = CurveMeans.start(base, part)
        return out

    def sealed(self) -> "Summed":
        """The partition's :class:`Moments` of ``u_j`` and ``f`` (its rows' values stay where they are)."""
        if self.part.weights.sum() <= 0:  # no curves were computed (rows of no weight add nothing)
            return Summed(Moments(0.0, np.zeros(0), np.zeros(0)))
        u = [self.f - self.average[j][:, self.rows_at[j]] - self.means[j] for j in self.shares]
        return Summed(Moments.of(np.stack(u + [self.f]), self.part.weights))


class Summed(CurveReducer):
    """What a partition's :class:`OverallSums` sends back: its :class:`Moments`, which merge."""

    def __init__(self, sums: Moments):
        self.sums = sums

    def merge(self, other):
        return Summed(self.sums + other.sums)

    def finish(self) -> Moments:
        return self.sums
