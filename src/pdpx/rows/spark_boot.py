"""``interval=`` (the bootstrap) on a Spark DataFrame: the pandas replicates, with only sums crossing the cluster.

The bootstrap of :mod:`pdpx.core.bootstrap` draws, for each replicate, ``n`` row positions with
``numpy.random.default_rng(random_state).integers(0, n, size=n)`` (replicate after replicate, one
stream). A replicate's PD is ``sum(c_i * w_i * ice_i) / sum(c_i * w_i)``, ``c_i`` the times row
``i`` was drawn: a sum over rows. Each Spark task computes the ICE curves of its partition's rows,
draws the same stream (same seed, same order) and keeps, replicate by replicate, the draws that land
on its rows (their positions: :mod:`pdpx.rows.spark_rows`); it returns the two sums of every
replicate, and the driver adds them. The replicates, and so the interval, are those of the same call
on ``X.toPandas()``. The price: every task draws the whole stream (``n_boot * n`` numbers, one
replicate's ``n`` at a time), so the work grows with the partitions times the rows.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, replace

import numpy as np

from ..core.errors import PdpxError
from ..core.method import MethodResult, Request


@dataclass
class BandResult(MethodResult):
    """A method's result with its bootstrap interval computed where the rows are: ``band`` = (lower, upper)."""

    band: tuple | None = None


def replicate_sums(ice: np.ndarray, w: np.ndarray, start: int, n: int, n_boot: int, seed) -> tuple:
    """(sum of ``c * w * ice`` (n_boot, K * cells), sum of ``c * w`` (n_boot,)) for the rows at positions
    ``start`` to ``start + m`` whose curves are ``ice`` (K, m, cells), ``c`` each replicate's draws of them."""
    K, m = ice.shape[0], ice.shape[1]
    flat = ice.reshape(K, m, -1)
    G = flat.shape[2]
    rng = np.random.default_rng(seed)
    S, T = np.zeros((n_boot, K * G)), np.zeros(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, n, size=n)
        mine = idx[(idx >= start) & (idx < start + m)] - start
        cw = np.bincount(mine, minlength=m) * w
        T[b] = cw.sum()
        for k in range(K):
            S[b, k * G:(k + 1) * G] = cw @ flat[k]
    return S, T


def partition_replicates(batches, payload: bytes, request: Request, method_name: str, columns: list, prepare, wcol,
                         starts, n: int, n_boot: int, seed, part_column: str):
    """What one Spark task runs: the ICE curves of its partition's rows (each batch of ``columns`` as
    ``prepare(batch)`` gives the model's), then :func:`replicate_sums`; one output row, ``(partition, the
    rows' tally (pdpx.rows.spark_checks), the pickled sums)``, none for an empty partition."""
    import pandas as pd

    from ..core.plugins import adapt
    from .spark_checks import Tally, tally
    from .tasks import partition_sums

    adapter = adapt(pickle.loads(payload))
    curves, weights, part, read = [], [], None, Tally()
    for batch in batches:
        if len(batch) == 0:
            continue
        part = int(batch[part_column].iat[0])
        w = np.ones(len(batch)) if wcol is None else batch[wcol].to_numpy(dtype=np.float64, na_value=np.nan)
        local = prepare(batch)
        read = read + tally(batch, columns, read.n, local)
        ice = partition_sums(adapter, local, None, replace(request, kind="individual"), method_name)[2]
        curves.append(np.asarray(ice, dtype=np.float64))
        weights.append(w)
    if part is None:
        return
    if part + 1 >= len(starts):  # a partition the rows were not counted in: the driver's check says so
        yield pd.DataFrame({"sums": [pickle.dumps((part, read, None), protocol=pickle.HIGHEST_PROTOCOL)]})
        return
    S, T = replicate_sums(np.concatenate(curves, axis=1), np.concatenate(weights), int(starts[part]), n, n_boot,
                          seed)
    yield pd.DataFrame({"sums": [pickle.dumps((part, read, (S, T)), protocol=pickle.HIGHEST_PROTOCOL)]})


def interval_of(S: np.ndarray, T: np.ndarray, shape: tuple, level: float, centered: bool) -> tuple:
    """(lower, upper) of shape ``shape`` (K, *grid) from the replicates' summed sums, as
    :func:`pdpx.core.bootstrap.bootstrap_interval` computes them from the ICE curves."""
    if np.any(T <= 0):
        raise PdpxError(
            "interval: a bootstrap sample drew only rows of weight 0; give more rows a positive sample_weight")
    replicates = S / T[:, None]
    if centered:  # the replicates of centred curves: each replicate's curve less its value at the first cell
        r = replicates.reshape(len(T), shape[0], -1)
        r -= r[..., :1].copy()
    alpha = (1.0 - level) / 2.0
    lower, upper = np.quantile(replicates, [alpha, 1.0 - alpha], axis=0)
    return lower.reshape(shape), upper.reshape(shape)
