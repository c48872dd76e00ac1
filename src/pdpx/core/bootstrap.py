"""Bootstrap intervals of a partial dependence curve, from its ICE curves (no extra model evaluations).

The PD at a grid point is the (weighted) mean of the ICE curves there. A bootstrap
replicate draws ``n`` row positions uniformly with replacement and recomputes that
mean over the drawn rows (a row drawn twice counts twice; with ``sample_weight``,
each drawn row keeps its weight)::

    rng = numpy.random.default_rng(random_state)
    for b in range(n_boot):
        idx = rng.integers(0, n, size=n)
        pd_b = sum(w[idx] * ice[idx]) / sum(w[idx])

The interval at each grid point is the percentile interval of the replicates:
their ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles.

What it covers: the sampling variation of the background rows, i.e. how much the
PD estimate would move with another sample of rows from the same population, the
model held fixed. What it does not cover: the model's own uncertainty (another
training sample would give another model), and any model error.
"""

from __future__ import annotations

import numpy as np

from .errors import PdpxError

#: Replicates drawn together (one matrix product per batch).
_BATCH = 32


def bootstrap_interval(ice: np.ndarray, weights: np.ndarray | None, level: float, n_boot: int,
                       random_state) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the PD from ``ice`` (n_outputs, n_rows, *grid_shape).

    Returns ``(lower, upper)``, each of shape (n_outputs, *grid_shape). See the
    module docstring for the resampling scheme (reproducible with the same seed).
    """
    replicates = bootstrap_replicates(ice, weights, n_boot, random_state)
    alpha = (1.0 - level) / 2.0
    lower, upper = np.quantile(replicates, [alpha, 1.0 - alpha], axis=0)
    shape = (ice.shape[0],) + ice.shape[2:]
    return lower.reshape(shape), upper.reshape(shape)


def bootstrap_replicates(ice: np.ndarray, weights: np.ndarray | None, n_boot: int, random_state) -> np.ndarray:
    """The ``n_boot`` replicate PD curves, shape (n_boot, n_outputs * n_cells)."""
    ice = np.asarray(ice, dtype=np.float64)
    K, n = ice.shape[0], ice.shape[1]
    flat = ice.reshape(K, n, -1)
    G = flat.shape[2]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    rng = np.random.default_rng(random_state)
    out = np.empty((n_boot, K * G))
    for b0 in range(0, n_boot, _BATCH):
        b1 = min(n_boot, b0 + _BATCH)
        counts = np.stack([np.bincount(rng.integers(0, n, size=n), minlength=n) for _ in range(b0, b1)])
        cw = counts * w[None, :]  # (B, n): weight each draw carries
        total = cw.sum(axis=1)
        if np.any(total <= 0):  # every drawn row has weight 0: redraw is not reproducible, so refuse
            raise PdpxError(
                "interval: a bootstrap sample drew only rows of weight 0; give more rows a positive sample_weight"
            )
        cw /= total[:, None]  # each draw's share: the replicates are weighted means, within the curves' range
        for k in range(K):
            out[b0:b1, k * G:(k + 1) * G] = cw @ flat[k]
    return out
