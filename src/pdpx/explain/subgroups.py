"""Regions found automatically: splits of the rows by other features that make a feature's ICE curves agree.

For the ``feature``, every row's ICE curve is centered on its own mean
(:mod:`pdpx.explain.ice_spread`), flattened over outputs and grid points into ``c_i``. The
loss of a set ``S`` of rows is its weighted sum of squared deviations from its mean curve,
averaged over the grid points (equal weights) and summed over outputs::

    loss(S) = sum_{i in S} w_i q_i - |sum_{i in S} w_i c_i|^2 / (G W_S),   q_i = |c_i|^2 / G

so ``loss(S) / W_S`` is the set's heterogeneity (summed over outputs). A split of a node's
rows into two children is worth ``gain = (loss(node) - loss(left) - loss(right)) / loss(root)``, the share of
the feature's whole heterogeneity it removes (the gains of the splits made add up to :attr:`RegionsResult.removed`).
From the root (every row), each node takes its best split, over every other feature:

* a numeric feature: a threshold (left: ``x <= t``, or ``x < t`` for a model that compares
  so), the rows missing the value sent to whichever side gains more, or the missing rows
  alone against the others; candidate thresholds on a tree model are the model's own
  thresholds on that feature (a feature no tree splits on is not a candidate), otherwise
  ``n_thresholds`` quantiles of the column;
* a categorical feature: a set of levels against the others (a missing value is a level),
  every set for at most :data:`ALL_SETS` levels, else the prefixes of the levels ordered by
  their mean curves' first principal direction.

A node stops, with the reason recorded, at ``max_depth``, when no split leaves ``min_rows``
rows on each side, when the best split gains less than ``min_gain``, or when its curves
already agree (loss at most :data:`AGREE` times the sum of every row's ``w q``). The statistics per candidate
(weights, sums of ``w q`` and of ``w c`` between consecutive thresholds) are summed once per
node, for every candidate in one compiled pass over its rows (:mod:`.split_sums`), and
accumulated along the thresholds, so a node costs one pass over its rows, whatever the number
of candidates and thresholds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.drawing import Drawable
from ..core.errors import PdpxError
from ..core.result import message_value
from ..core.session import Session
from ..core.splits import Unmapped, as_read, comparison, members, split_nodes, thresholds
from .ice_spread import curve_columns, ice_moments, measure_options
from .split_sums import code_sums

#: Categorical features with at most this many levels have every set of levels tried.
ALL_SETS = 10
#: Arrays of the size of the ICE matrix the search holds at once (the curves, centered, one node's weighted copy).
COPIES = 3
#: A node whose loss is at most this share of the rows' sum of squared centered curves has curves that agree.
AGREE = 1e-12


@dataclass(frozen=True)
class Split:
    """One split of a node's rows: ``feature`` by a ``threshold`` (with ``op``, ``"<="`` or ``"<"``), by a set of
    ``levels`` (left: the rows at those levels), or by ``missing`` alone (left: the rows missing it).
    ``missing_left``: whether rows missing the value go left (threshold splits)."""

    feature: str
    kind: str
    threshold: float | None = None
    op: str = "<="
    levels: tuple | None = None
    others: tuple | None = None
    missing_left: bool | None = None
    gain: float = 0.0
    depth: int = 0

    def condition(self, side: str) -> str:
        """The condition the rows on ``side`` (``"left"`` / ``"right"``) satisfy, as text."""
        f, left = self.feature, side == "left"
        if self.kind == "missing":
            return f"{f} is missing" if left else f"{f} is not missing"
        if self.kind == "levels":
            shown = ", ".join(message_value(v) for v in (self.levels if left else self.others))
            return f"{f} in {{{shown}}}"
        op = self.op if left else {"<=": ">", "<": ">="}[self.op]
        text = f"{f} {op} {self.threshold:.4g}"
        if self.missing_left is not None and self.missing_left == left:
            text = f"({text} or {f} is missing)"
        return text


@dataclass
class Region:
    """A leaf of the search: its ``conditions`` (``(Split, side)`` from the root), rows, PD and heterogeneity."""

    region: int
    conditions: list
    rows: np.ndarray = field(repr=False)
    weight: float
    heterogeneity: np.ndarray
    average: np.ndarray = field(repr=False)
    stopped: str

    @property
    def rule(self) -> str:
        """The conditions joined by ``and`` (``"all rows"`` for the root)."""
        return " and ".join(s.condition(side) for s, side in self.conditions) or "all rows"

    @property
    def n_rows(self) -> int:
        return int(len(self.rows))


@dataclass
class RegionsResult(Drawable):
    """What :func:`regions` returns.

    Attributes
    ----------
    feature : str
    grid_values : ndarray
        The feature's grid.
    categorical : bool
    outputs : list of str
    regions : list of Region
        The leaves, each with ``rule``, ``conditions``, ``rows``, ``n_rows``, ``weight``,
        ``heterogeneity`` (per output), ``average`` (its PD, (n_outputs, n_grid)) and
        ``stopped`` (why it was not split further).
    splits : list of Split
        Every split made, in the order found (depth first).
    heterogeneity : ndarray (n_outputs,)
        The feature's heterogeneity over every row (the root's).
    average : ndarray (n_outputs, n_grid)
        The PD over every row.
    individual : ndarray (n_outputs, n_rows, n_grid) or None
        The ICE curves (``ice=True``).
    method, n_rows, notes, elapsed
    """

    small = True  # a notebook shows its table and figure in full

    figure = "regions"

    feature: str
    grid_values: np.ndarray
    categorical: bool
    outputs: list
    regions: list
    splits: list
    heterogeneity: np.ndarray
    average: np.ndarray
    individual: np.ndarray | None
    method: str
    n_rows: int
    notes: list = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def removed(self) -> float:
        """The share of the feature's heterogeneity (summed over outputs) the regions remove."""
        total = float(self.heterogeneity.sum()) * sum(r.weight for r in self.regions)
        left = sum(float(r.heterogeneity.sum()) * r.weight for r in self.regions)
        return 0.0 if total <= 0 else 1.0 - left / total

    @property
    def rules(self) -> list:
        """Each region's rule, in region order."""
        return [r.rule for r in self.regions]

    def splits_frame(self) -> pd.DataFrame:
        """The splits as data: ``depth, feature, kind, op, threshold, levels, others, missing_left, gain, left,
        right`` (``left`` / ``right``: the condition each side's rows satisfy, as text)."""
        cols = ["depth", "feature", "kind", "op", "threshold", "levels", "others", "missing_left", "gain"]
        rows = [[getattr(s, c) for c in cols] + [s.condition("left"), s.condition("right")] for s in self.splits]
        return pd.DataFrame(rows, columns=cols + ["left", "right"])

    def to_frame(self, *, kind: str | None = None) -> pd.DataFrame:
        """One row per region, output and grid point of its PD (``kind="average"``), and of each of its rows' ICE
        curves when held (``"individual"``; default: what the result holds).

        Columns ``region, rule, n_rows, region_heterogeneity, kind, row`` then ``feature, output, feature_type,
        x, label`` (as :meth:`pdpx.HeterogeneityResult.to_frame`) and ``yhat``.
        """
        if kind not in (None, "average", "individual"):
            raise PdpxError(f"to_frame(): kind must be None, 'average' or 'individual', got {kind!r}")
        if kind == "individual" and self.individual is None:
            raise PdpxError("to_frame(kind='individual'): the ICE curves were not kept; call regions(..., ice=True)")
        parts = []
        for r in self.regions:
            G = len(self.grid_values)
            if kind in (None, "average"):
                parts.append(self._part(r, "average", None, curve_columns(
                    self.feature, self.grid_values, self.categorical, self.outputs, yhat=r.average)))
            if kind in (None, "individual") and self.individual is not None:
                base = curve_columns(self.feature, self.grid_values, self.categorical, self.outputs,
                                     yhat=np.zeros((len(self.outputs), G)))
                ice = self.individual[:, r.rows, :]  # (K, rows, G)
                rep = base.iloc[np.tile(np.arange(len(base)).reshape(len(self.outputs), 1, G),
                                        (1, len(r.rows), 1)).reshape(-1)].reset_index(drop=True)
                rep["yhat"] = ice.reshape(-1)
                parts.append(self._part(r, "individual", np.tile(np.repeat(r.rows, G), len(self.outputs)), rep))
        return pd.concat(parts, ignore_index=True)

    def _part(self, r: Region, kind: str, rows, frame: pd.DataFrame) -> pd.DataFrame:
        K = len(self.outputs)
        head = pd.DataFrame({
            "region": r.region, "rule": r.rule, "n_rows": r.n_rows,
            "region_heterogeneity": np.repeat(r.heterogeneity, len(frame) // K), "kind": kind,
            "row": pd.array([pd.NA] * len(frame) if rows is None else rows, dtype="Int64")})
        return pd.concat([head, frame], axis=1)

    def plot(self, **kwargs):
        """The regions' PD curves side by side on a shared axis
        (:func:`pdpx.outputs.plot_heterogeneity.plot_regions`; keyword arguments go there)."""
        return super().plot(**kwargs)

    def __repr__(self) -> str:
        lines = [f"RegionsResult({self.feature!r}: {len(self.regions)} region(s), {self.removed:.1%} of its "
                 f"heterogeneity removed, method={self.method!r})"]
        for r in self.regions:
            lines.append(f"  {r.region}: {r.rule} (n={r.n_rows}, heterogeneity {float(r.heterogeneity.sum()):.3g}; "
                         f"stopped: {r.stopped})")
        return "\n".join(lines)


def regions(model, X, feature, max_depth: int = 2, *, split_features=None, min_gain: float = 0.1,
            min_rows: int | None = None, n_thresholds: int = 32, ice: bool = False, **pd_options) -> RegionsResult:
    """Split the rows by other features where ``feature``'s ICE curves disagree (definitions in
    :mod:`pdpx.explain.subgroups`).

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence`.
    feature : str or int
        The feature whose curves are split.
    max_depth : int, default 2
        Splits from the root to a region (0: one region, every row).
    split_features : list of str / int, optional
        The features the rows may be split by (default: every other column; date columns are left out).
    min_gain : float, default 0.1
        A node is split only when its best split removes at least this share of the feature's heterogeneity
        (over every row).
    min_rows : int, optional
        Rows each side of a split keeps at least (default: 2% of the rows, at least 10).
    n_thresholds : int, default 32
        Candidate thresholds of a numeric feature (its quantiles) when the model has no readable trees.
    ice : bool, default False
        Keep every row's ICE curve (``res.individual``, rows of ``res.to_frame()`` with ``kind="individual"``).
    **pd_options
        As for :func:`pdpx.heterogeneity` (``grid_resolution`` 20 by default, ``sample_weight``, ``target``, ...).

    Returns
    -------
    RegionsResult
    """
    _check_arguments(max_depth, min_gain, min_rows, n_thresholds, ice)
    options = measure_options("regions", pd_options)
    t0 = time.perf_counter()
    session = Session(model, X, options.but(kind="individual", centered=False, progress=False))
    if isinstance(feature, (list, tuple)):
        raise PdpxError(f"regions(): feature is one column (its name or position), got {feature!r}")
    j = session.resolve_features([feature])[0]
    n = session.n_rows
    min_rows = max(10, int(np.ceil(0.02 * n))) if min_rows is None else int(min_rows)
    ice_all, root, method, notes = _curves(session, j, options)
    w = np.ones(n) if session.sample_weight is None else session.sample_weight
    K, _, G = ice_all.shape
    C = (ice_all - ice_all.mean(axis=2, keepdims=True)).transpose(1, 0, 2).reshape(n, K * G)  # a copy: (n, K * G)
    cands = _candidates(session, j, split_features, n_thresholds, notes)
    stats = _Stats(w, C, G, min_rows)
    leaves, made = _grow(stats, cands, max_depth, min_gain, n)
    found = []
    for r, (rows, conditions, stopped) in enumerate(leaves, start=1):
        wr = w[rows]
        wsum = float(wr.sum())
        avg = np.einsum("knG,n->kG", ice_all[:, rows, :], wr / wsum) if wsum > 0 else ice_all[:, rows, :].mean(1)
        het = root.of_rows(C[rows].reshape(len(rows), K, G).transpose(1, 0, 2), wr)
        found.append(Region(region=r, conditions=conditions, rows=rows, weight=wsum, heterogeneity=het,
                            average=avg, stopped=stopped))
    return RegionsResult(
        feature=session.names[j], grid_values=session.grid_for(j), categorical=session.categorical[j],
        outputs=root.outputs, regions=found, splits=made, heterogeneity=root.heterogeneity, average=root.average,
        individual=ice_all if ice else None, method=method, n_rows=n, notes=notes, elapsed=time.perf_counter() - t0)


def _check_arguments(max_depth, min_gain, min_rows, n_thresholds, ice) -> None:
    def whole(v):
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))

    if not whole(max_depth) or max_depth < 0:
        raise PdpxError(f"regions(): max_depth must be a whole number >= 0 (0: one region), got {max_depth!r}")
    if isinstance(min_gain, bool) or not isinstance(min_gain, (int, float)) or not 0 <= min_gain < 1:
        raise PdpxError(f"regions(): min_gain must be a share from 0 to below 1 (e.g. 0.1), got {min_gain!r}")
    if min_rows is not None and (not whole(min_rows) or min_rows < 1):
        raise PdpxError(f"regions(): min_rows must be a whole number >= 1, or None (2% of the rows); got {min_rows!r}")
    if not whole(n_thresholds) or n_thresholds < 1:
        raise PdpxError(f"regions(): n_thresholds must be a whole number >= 1, got {n_thresholds!r}")
    if not isinstance(ice, (bool, np.bool_)):
        raise PdpxError(f"regions(): ice must be True or False, got {ice!r}")


@dataclass
class _Root:
    """The feature's curves over every row: outputs, PD, heterogeneity per output."""

    outputs: list
    average: np.ndarray
    heterogeneity: np.ndarray

    @staticmethod
    def of_rows(centered: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Heterogeneity per output of centered curves (K, rows, G) with weights ``w``."""
        wsum = float(w.sum())
        if wsum <= 0:
            return np.zeros(centered.shape[0])
        mean = np.einsum("knG,n->kG", centered, w / wsum)
        return np.einsum("knG,n->k", (centered - mean[:, None, :]) ** 2, w / wsum) / centered.shape[2]


def _curves(session: Session, j: int, options):
    """(ICE (K, n, G) of feature ``j`` on every row, its _Root, method, notes), computed a chunk of rows at a time."""
    K, n, G = len(session.outputs), session.n_rows, len(session.grid_for(j))
    need = COPIES * 8 * K * n * G
    if need > session.memory_budget:
        raise PdpxError(
            f"regions(): the ICE curves of {session.names[j]!r} for {n:,} rows, {G} grid points and {K} output(s) "
            f"and the search's copies take {need / 2**20:.0f} MiB, over the memory budget of "
            f"{session.memory_budget / 2**20:.0f} MiB; "
            "lower grid_resolution, pass a sample of the rows, or raise memory_budget (e.g. memory_budget='4GB')")
    ice_all = np.empty((K, n, G))

    def keep(_j, rows, ice):
        ice_all[:, rows, :] = ice

    out = ice_moments(session, [j], options, keep=keep)
    centered, plain = out.moments[0]
    root = _Root(outputs=out.outputs, average=plain.mean, heterogeneity=centered.variance.mean(axis=1))
    return ice_all, root, out.method, out.notes


@dataclass
class _Candidate:
    """A feature the rows may be split by: each row's code (numeric: its bin between the thresholds ``cuts``, the
    missing rows last; categorical: its level among ``labels``)."""

    name: str
    codes: np.ndarray
    n_codes: int
    numeric: bool
    cuts: np.ndarray | None = None
    op: str = "<="
    labels: list | None = None


def _candidates(session: Session, j: int, split_features, n_thresholds: int, notes: list) -> list:
    """The features the rows may be split by, coded once."""
    if split_features is None:
        idx = [c for c in range(len(session.names)) if c != j]
    else:
        idx = session.resolve_features(split_features)
        if j in idx:
            raise PdpxError(f"regions(): split_features lists {session.names[j]!r}, the feature whose curves are "
                            "split; leave it out")
    tm = None
    try:
        tm = session.adapter.tree_model(session.response)
    except PdpxError:
        pass
    out, unused, dated = [], [], []
    for c in idx:
        col = session.X.iloc[:, c]
        name = session.names[c]
        if pd.api.types.is_datetime64_any_dtype(col.dtype) or isinstance(col.dtype, pd.PeriodDtype):
            dated.append(name)
            continue
        numeric = (not session.categorical[c] and pd.api.types.is_numeric_dtype(col.dtype)
                   and not pd.api.types.is_bool_dtype(col.dtype))
        if not numeric:
            codes, labels = pd.factorize(col, use_na_sentinel=False, sort=True)
            out.append(_Candidate(name, np.asarray(codes, dtype=np.int64), len(labels), False,
                                  labels=[None if pd.isna(v) else v for v in labels]))
            continue
        x = col.to_numpy(dtype=np.float64, na_value=np.nan)
        cuts, op = _thresholds(tm, c, x, n_thresholds)
        if cuts is None:
            unused.append(name)
            continue
        if tm is not None:
            x = _as_read(tm, c, x)
        codes = np.searchsorted(cuts, x, side="left" if op == "<=" else "right")
        codes[np.isnan(x)] = len(cuts) + 1
        out.append(_Candidate(name, codes.astype(np.int64), len(cuts) + 2, True, cuts=cuts, op=op))
    if unused:
        notes.append(f"not split by: {', '.join(unused)} (no tree of the model splits on them)")
    if dated:
        notes.append(f"not split by: {', '.join(dated)} (date columns)")
    return out


def _thresholds(tm, c: int, x: np.ndarray, n_thresholds: int):
    """(increasing thresholds, comparison) of column ``c``: the trees' own, else quantiles; (None, ...) if none."""
    if tm is not None:
        try:
            found = [thresholds(ens, split_nodes(ens, k)) for ens, k in members(tm, c)]
        except Unmapped:
            found = None
        if found is not None:
            cuts = np.unique(np.concatenate(found)) if found else np.empty(0)
            return (cuts, comparison(tm)) if cuts.size else (None, "<=")
    finite = x[np.isfinite(x)]
    if finite.size == 0:
        return None, "<="
    cuts = np.unique(np.quantile(finite, np.arange(1, n_thresholds + 1) / (n_thresholds + 1)))
    return cuts, "<="


def _as_read(tm, c: int, x: np.ndarray) -> np.ndarray:
    """``x`` as the trees compare it (float32 when they round their inputs)."""
    try:
        for ens, _ in members(tm, c):
            return as_read(ens, x)
    except Unmapped:
        pass
    return x


class _Stats:
    """Per-row statistics of the split search: weights ``w``, ``wq`` (w times the squared centered curve averaged
    over the grid) and the centered curves ``C`` (n, K * G), and the loss of a set of rows from their sums."""

    def __init__(self, w: np.ndarray, C: np.ndarray, G: int, min_rows: int):
        self.w, self.G, self.min_rows = w, G, min_rows
        self.wq = w * (C ** 2).sum(axis=1) / G
        self.C = C
        self._codes = self._sizes = None

    def by_candidate(self, cands: list, rows: np.ndarray) -> list:
        """Per candidate, (n_codes, 3 + KG): [rows, weight, sum wq, sums of wc] per code over ``rows``, from one
        compiled pass over the rows for every candidate (:mod:`.split_sums`)."""
        if self._codes is None:
            self._codes = np.ascontiguousarray(np.stack([c.codes for c in cands], axis=1).astype(np.int32))
            self._sizes = np.array([c.n_codes for c in cands], dtype=np.int64)
        return code_sums(self._codes, self._sizes, rows, self.w, self.wq, self.C)

    def total(self, rows: np.ndarray) -> np.ndarray:
        """(3 + KG,): [rows, weight, sum wq, sums of wc] over ``rows``: the node's sums as one code."""
        w = self.w[rows]
        return np.concatenate([[len(rows), w.sum(), self.wq[rows].sum()], w @ self.C[rows]])

    def loss(self, s: np.ndarray) -> np.ndarray:
        """Loss of the sets whose sums are the rows of ``s`` (see the module docstring)."""
        W = s[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            between = np.where(W > 0, (s[..., 3:] ** 2).sum(axis=-1) / (self.G * W), 0.0)
        return s[..., 2] - between

    def best(self, total: np.ndarray, left: np.ndarray):
        """(index, loss of both sides) of the best of the candidate left sides ``left`` (sums), or None."""
        right = total - left
        ok = (left[:, 0] >= self.min_rows) & (right[:, 0] >= self.min_rows)
        if not ok.any():
            return None
        loss = np.where(ok, self.loss(left) + self.loss(right), np.inf)
        i = int(np.argmin(loss))
        return i, float(loss[i])


def _numeric_split(stats: _Stats, cand: _Candidate, rows: np.ndarray, depth: int, sums: np.ndarray):
    """(loss, Split, left mask over ``rows``) of the best threshold (or missing) split by ``cand`` (``sums``: its
    :meth:`_Stats.by_candidate` over ``rows``), or None."""
    B = len(cand.cuts) + 1
    miss = sums[B]
    cum = np.cumsum(sums[:B], axis=0)[:-1]  # left of threshold k: bins 0..k
    total = sums.sum(axis=0)
    options = [(cum, False)]
    if miss[0] > 0:
        options += [(cum + miss, True), (miss[None, :], None)]
    lefts = np.concatenate([o for o, _ in options])
    got = stats.best(total, lefts)
    if got is None:
        return None
    i, loss = got
    codes = cand.codes[rows]
    if miss[0] > 0 and i == lefts.shape[0] - 1:
        return loss, Split(cand.name, "missing", depth=depth), codes == B
    k, which = i % len(cand.cuts), options[i // len(cand.cuts)][1]
    left = codes <= k
    if which:
        left |= codes == B
    return loss, Split(cand.name, "threshold", threshold=float(cand.cuts[k]), op=cand.op,
                       missing_left=which if miss[0] > 0 else None, depth=depth), left


def _level_split(stats: _Stats, cand: _Candidate, rows: np.ndarray, depth: int, sums: np.ndarray):
    """(loss, Split, left mask over ``rows``) of the best set of levels of ``cand`` against the others (``sums``:
    its :meth:`_Stats.by_candidate` over ``rows``), or None."""
    present = np.flatnonzero(sums[:, 0] > 0)
    L = len(present)
    if L < 2:
        return None
    P = sums[present]
    if L <= ALL_SETS:  # every set holding the last level on the right
        masks = ((np.arange(1, 2 ** (L - 1))[:, None] >> np.arange(L)) & 1).astype(np.float64)
    else:  # the prefixes of the levels ordered along their mean curves' first principal direction
        W = np.maximum(P[:, 1:2], 1e-300)
        means = P[:, 3:] / W
        centre = (P[:, 3:].sum(axis=0) / W.sum())
        _, _, vt = np.linalg.svd(np.sqrt(W) * (means - centre), full_matrices=False)
        order = np.argsort(means @ vt[0], kind="stable")
        masks = np.zeros((L - 1, L))
        for i in range(L - 1):
            masks[i, order[:i + 1]] = 1.0
    got = stats.best(P.sum(axis=0), masks @ P)
    if got is None:
        return None
    i, loss = got
    on = masks[i] > 0
    labels = cand.labels
    split = Split(cand.name, "levels", levels=tuple(labels[c] for c in present[on]),
                  others=tuple(labels[c] for c in present[~on]), depth=depth)
    return loss, split, np.isin(cand.codes[rows], present[on])


def _grow(stats: _Stats, cands: list, max_depth: int, min_gain: float, n: int):
    """(leaves as (rows, conditions, why it stopped), the splits made), depth first, left before right."""
    everything = stats.total(np.arange(n))
    root_loss = float(stats.loss(everything))
    scale = float(everything[2])  # the weighted sum of the squared centered curves: the size of rounding
    leaves, made = [], []

    def visit(rows, conditions, depth):
        per = stats.by_candidate(cands, rows) if cands and depth < max_depth else None
        total = per[0].sum(axis=0) if per else stats.total(rows)
        node = float(stats.loss(total))
        if node <= AGREE * scale:
            leaves.append((rows, conditions, "its curves agree (no heterogeneity left)"))
            return
        if depth >= max_depth:
            leaves.append((rows, conditions, f"max_depth={max_depth} reached"))
            return
        best = None
        for cand, sums in zip(cands, per or ()):
            got = (_numeric_split if cand.numeric else _level_split)(stats, cand, rows, depth, sums)
            if got is not None and (best is None or got[0] < best[0]):
                best = got
        if best is None:
            why = (f"no split leaves min_rows={stats.min_rows} rows on each side" if cands else
                   "no feature to split by (see the notes)")
            leaves.append((rows, conditions, why))
            return
        loss, split, left = best
        gain = (node - loss) / root_loss
        if gain < min_gain:
            leaves.append((rows, conditions, f"the best split ({split.condition('left')}) removes {gain:.1%} of "
                                             f"the feature's heterogeneity, below min_gain={min_gain:g}"))
            return
        split = Split(**{**split.__dict__, "gain": gain})
        made.append(split)
        visit(rows[left], conditions + [(split, "left")], depth + 1)
        visit(rows[~left], conditions + [(split, "right")], depth + 1)

    visit(np.arange(n), [], 0)
    return leaves, made
