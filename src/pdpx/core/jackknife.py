"""``interval="jackknife"``: how much a bagged forest's PD would move with another training sample, from one fit.

The infinitesimal jackknife (Wager, Hastie & Efron, JMLR 2014) estimates the variance of a bagged
estimate over training samples from the fitted members alone: how each member's output moves with
the number of times it drew each training row. pdpx applies it to the PD at each grid point, with
the members' PDs ``PD_b`` (``B`` members, computed exactly, as ``interval="members"`` computes them:
one ``exact`` pass over the trees) and the in-bag counts ``N[i, b]`` (how many times member ``b``
drew training row ``i``, ``n`` training rows), which the model's adapter rebuilds by its library's
own sampling rule (its ``inbag_counts()``)::

    PDc[b] = PD_b - mean_b PD_b                       # each member's PD, centered over the members
    Nc[i, b] = N[i, b] - mean_b N[i, b]
    V_IJ = sum_i (sum_b Nc[i, b] * PDc[b] / B) ** 2   # sum over training rows of Cov_b(N_i, PD)^2
    v = 1 for the bootstrap (every member drew n rows out of n), else mean_i (sum_b Nc[i, b] ** 2 / B)
    V = V_IJ - n * v / B**2 * sum_b PDc[b] ** 2       # minus the Monte Carlo bias of V_IJ

``V`` is the bias-corrected estimate: for the bootstrap, Wager et al.'s correction ``n / B**2 * sum_b
PDc[b]**2``; for members that drew another number of rows (``max_samples``), forestci's, with the in-bag
counts' own variance over the members in place of 1 (the bootstrap's is ``1 - 1/n``); no calibration.
``res.se`` is ``sqrt(max(V, 0))`` and the band ``PD +- z * se``, ``z`` the normal quantile of
``(1 + level) / 2`` (``level=``, default 0.95); ``res.variance`` keeps ``V`` itself, negative where the
Monte Carlo correction outweighs the signal (few members).

What it covers: the learner's variance, how the fitted forest's PD would vary over training
samples of the same size from the same population (the rows of X held fixed), estimated from one
fit. What it does not cover: the rows' sampling (``interval="bootstrap"``), the model's bias, and
the estimate's own error, which is large with few members: Wager et al. recommend ``B`` in the
order of ``n`` members. It is not a calibrated confidence interval: ``docs/uncertainty.md``.

The PD may be over any rows X (the training rows, or others): ``n`` is the training size the
counts come from, not ``len(X)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from .errors import PdpxError
from .members import DEFAULT_LEVEL, MemberResult, member_curves, model_name, with_band
from .options import PDOptions

#: Training rows whose in-bag counts are read as floats at once.
BLOCK_ROWS = 65_536


@dataclass
class JackknifeResult(MemberResult):
    """A PD with the infinitesimal jackknife's band (:mod:`pdpx.core.jackknife`): a
    :class:`~pdpx.core.members.MemberResult` (``members``: each member's PD) plus

    Attributes
    ----------
    se : ndarray of shape (n_outputs, *grid_shape)
        The standard error of the PD at each grid point, ``sqrt(max(variance, 0))``.
    variance : ndarray of shape (n_outputs, *grid_shape)
        The bias-corrected infinitesimal jackknife variance ``V`` (negative where the correction outweighs it).
    n_train : int
        The training rows the in-bag counts are of (``n`` in the formula).
    """

    se: np.ndarray | None = field(default=None, repr=False)
    variance: np.ndarray | None = field(default=None, repr=False)
    n_train: int = 0

    def to_frame(self, *, kind: str | None = None, n_features: int | None = None, memory_budget=None):
        """The tidy frame with a column ``se`` (the standard error on the average's rows, NaN on ICE rows)."""
        df = super().to_frame(kind=kind, n_features=n_features, memory_budget=memory_budget)
        se = np.full(len(df), np.nan)
        average = (df["kind"] == "average").to_numpy()
        if average.any():
            se[average] = np.asarray(self.se, dtype=np.float64).reshape(-1)
        df["se"] = se
        return df


def jackknife_interval(model, X, features, options: PDOptions) -> JackknifeResult:
    """``partial_dependence`` with ``interval="jackknife"`` (see the module docstring)."""
    if isinstance(model, dict):
        raise PdpxError("interval='jackknife' reads one bagged forest's members and in-bag counts; for a dict of "
                        "refit models use interval='members'")
    if options.by is not None:
        raise PdpxError("interval='jackknife' and by= cannot be combined; compute each group's rows in a call of "
                        "its own")
    counts = {}

    def read_counts(session):
        counts["N"] = inbag_of(session.inputs, "interval='jackknife'")

    res, curves, weights, what, how = members_of(model, X, features, options, "interval='jackknife'",
                                                 prepare=read_counts)
    N = counts["N"]
    if N.shape[1] != len(weights) or not np.allclose(weights, 1.0 / len(weights), rtol=1e-9, atol=0):
        raise PdpxError(f"interval='jackknife': this {type(model).__name__} is not the plain mean of its "
                        f"{N.shape[1]} bagged members (pdpx read {len(weights)} {what} of unequal weights), so the "
                        "jackknife's formula does not hold for it")
    variance = ij_variance(N, curves)
    se = np.sqrt(np.maximum(variance, 0.0))
    level = DEFAULT_LEVEL if options.level is None else options.level
    z = NormalDist().inv_cdf((1.0 + level) / 2.0)
    average = np.asarray(res.average, dtype=np.float64)
    B, n = N.shape[1], N.shape[0]
    label = (f"infinitesimal jackknife: {100 * level:g}% band, learner variance from one fit "
             f"({B} {what}, {n:,} training rows)")
    res.notes.append(f"band: PD +- {z:.3f} x the infinitesimal jackknife's standard error (bias-corrected, "
                     f"Wager et al. 2014), from the {B} {what}' own PDs ({how}) and their in-bag counts of the "
                     f"{n:,} training rows; the learner's variance, not the rows' (interval='bootstrap')")
    negative = int(np.sum(variance < 0))
    if negative:
        res.notes.append(f"jackknife: the variance estimate is negative at {negative} grid point(s) (the Monte "
                         f"Carlo correction outweighs it: {B} {what} are few), shown as se 0; more members help")
    base = with_band(res, average, curves, weights, average - z * se, average + z * se, level, label, range(B))
    values = {f: getattr(base, f) for f in base.__dataclass_fields__ if base.__dataclass_fields__[f].init}
    return JackknifeResult(**values, se=se, variance=variance, n_train=n)


def ij_variance(N: np.ndarray, curves: np.ndarray) -> np.ndarray:
    """The bias-corrected infinitesimal jackknife variance (module docstring) of each point of ``curves``
    (n_members, ...), from the in-bag counts ``N`` (n_training_rows, n_members); shape ``curves.shape[1:]``."""
    n, B = np.shape(N)
    flat = np.asarray(curves, dtype=np.float64).reshape(B, -1)
    centered = flat - flat.mean(axis=0)
    v_ij = np.zeros(flat.shape[1])
    var_sum = 0.0
    draws = np.zeros(B)
    for s in range(0, n, BLOCK_ROWS):  # the counts as floats a block of training rows at a time
        block = np.asarray(N[s:s + BLOCK_ROWS], dtype=np.float64)
        # Cov_b(N_i, PD) for each training row i of the block; the centered PDs sum to 0 over the members, so the
        # counts need no centering here
        cov = block @ centered / B
        v_ij += np.einsum("ip,ip->p", cov, cov)
        mean = block.mean(axis=1)
        var_sum += float(np.sum(np.einsum("ib,ib->i", block, block) / B - mean * mean))
        draws += block.sum(axis=0)
    # every member drew n rows out of n (the bootstrap): Wager et al.'s n / B^2 (the counts' variance is 1 - 1/n,
    # taken as 1); members that drew another number of rows: the counts' own variance, as forestci does
    v_counts = 1.0 if np.all(draws == n) else var_sum / n
    correction = n * v_counts / B ** 2 * np.einsum("bp,bp->p", centered, centered)
    return (v_ij - correction).reshape(np.shape(curves)[1:])


def members_of(model, X, features, options: PDOptions, asked: str, **kw):
    """:func:`~pdpx.core.members.member_curves`, its refusals (worded for ``interval='members'``) said for
    ``asked``."""
    try:
        return member_curves(model, X, features, options, **kw)
    except PdpxError as exc:
        if not str(exc).startswith("interval='members'"):
            raise
        raise PdpxError(f"{asked} reads the forest's members as interval='members' does, which refused: "
                        f"{exc}") from None


def inbag_of(inp, what: str) -> np.ndarray:
    """The in-bag counts (n_training_rows, n_members) of the session's model, from its adapter's ``inbag_counts()``;
    refused, saying why, when it has none."""
    read = getattr(inp.adapter, "inbag_counts", None)
    if read is None:
        raise PdpxError(f"{what} needs the in-bag counts of a bagged forest (how many times each member drew each "
                        f"training row), and pdpx cannot read them from a {model_name(inp)} "
                        f"({getattr(inp.adapter, 'library', 'unknown library')}); docs/uncertainty.md lists the "
                        "forests whose counts it reads")
    try:
        N = np.asarray(read())
    except PdpxError as exc:
        raise PdpxError(f"{what}: {exc}") from None
    if N.ndim != 2 or N.shape[1] < 2 or N.shape[0] < 2:
        raise PdpxError(f"{what} needs at least two members and two training rows; this {model_name(inp)} has "
                        f"in-bag counts of shape {N.shape}")
    if N.max() <= 1:
        raise PdpxError(f"{what}: the members of this {model_name(inp)} drew their rows without replacement (no row "
                        "was drawn twice), so they are no bootstrap samples; refit with rows drawn with replacement")
    return N
