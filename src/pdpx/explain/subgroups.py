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
of candidates and thresholds (the search: :mod:`.split_search`).

Several features at once (``feature`` a list, or None): the columns are coded once for all of
them, and on trees of at most 64 leaves every feature's curves come from one walk over the
rows (the curve reducer :class:`~pdpx.core.curves.CenteredCurves`), as many features per
walk as the memory budget holds; :class:`RegionsSet` holds the results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.curves import CenteredCurves, reduce_curves
from ..core.drawing import Drawable
from ..core.errors import PdpxError
from ..core.rows import require
from ..core.session import Session
from .ice_spread import curve_columns, measure_options, resolve_features
from .split_search import Coded, Split, Stats, code_candidates, grow, rule_text
from .split_sums import region_sums

__all__ = ["Region", "RegionsResult", "RegionsSet", "Split", "regions"]

#: Arrays of the size of the ICE matrix the search holds at once (the curves, centered, one node's weighted copy).
COPIES = 3


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
        """The conditions joined by ``and`` (``"all rows"`` for the root), one feature's thresholds folded into one
        condition (:func:`.split_search.rule_text`)."""
        return rule_text(self.conditions)

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
        return 0.0 if total <= 0 else max(0.0, 1.0 - left / total)  # splits never add spread: below 0 is rounding

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


class RegionsSet(dict):
    """What :func:`regions` returns for several features: each feature's :class:`RegionsResult`, by name, in the
    order asked. ``elapsed``: the whole call's seconds (one walk over the rows may serve every feature)."""

    elapsed: float = 0.0

    def summary(self) -> pd.DataFrame:
        """One row per feature: ``feature, heterogeneity`` (summed over outputs), ``n_regions``, ``removed`` (the
        share of its heterogeneity the regions remove), ``rules`` (joined by `` | ``), ``method``."""
        return pd.DataFrame([{"feature": f, "heterogeneity": float(r.heterogeneity.sum()), "n_regions": len(r.regions),
                              "removed": r.removed, "rules": " | ".join(r.rules), "method": r.method}
                             for f, r in self.items()])

    def to_frame(self, *, kind: str | None = None) -> pd.DataFrame:
        """Every feature's :meth:`RegionsResult.to_frame`, one below the other (its ``feature`` column tells them
        apart)."""
        return pd.concat([r.to_frame(kind=kind) for r in self.values()], ignore_index=True)

    def splits_frame(self) -> pd.DataFrame:
        """Every feature's :meth:`RegionsResult.splits_frame`, with a first column ``regions_of``: the feature whose
        curves the split divides (``feature``: the one it splits by)."""
        parts = [r.splits_frame().assign(regions_of=f) for f, r in self.items()]
        frame = pd.concat(parts, ignore_index=True)
        return frame[["regions_of"] + [c for c in frame.columns if c != "regions_of"]]

    def plot(self, feature, **kwargs):
        """The regions of ``feature`` (a name of this set) drawn side by side (:meth:`RegionsResult.plot`)."""
        if feature not in self:
            raise PdpxError(f"plot(): {feature!r} is not among this set's features {list(self)}")
        return self[feature].plot(**kwargs)

    def __repr__(self) -> str:
        lines = [f"RegionsSet({len(self)} feature(s))"]
        for f, r in self.items():
            lines.append(f"  {f}: {len(r.regions)} region(s), {r.removed:.1%} of its heterogeneity removed"
                         + (f" ({' | '.join(r.rules)})" if r.splits else ""))
        return "\n".join(lines)


def regions(model, X, feature, max_depth: int = 2, *, split_features=None, min_gain: float = 0.1,
            min_rows: int | None = None, n_thresholds: int = 32, ice: bool = False,
            **pd_options) -> RegionsResult | RegionsSet:
    """Split the rows by other features where ``feature``'s ICE curves disagree (definitions in
    :mod:`pdpx.explain.subgroups`).

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence`.
    feature : str or int, or a list of them, or None
        The feature whose curves are split. A list, or None (every column with a grid), returns a
        :class:`RegionsSet`: the columns are coded once for all of them, and on trees their curves come from one
        walk over the rows.
    max_depth : int, default 2
        Splits from the root to a region (0: one region, every row).
    split_features : list of str / int, optional
        The features the rows may be split by (default: every other column; date columns are split at dates). A feature
        whose curves are split is never split by itself.
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
    RegionsResult, or RegionsSet for a list of features (or None)
    """
    _check_arguments(max_depth, min_gain, min_rows, n_thresholds, ice)
    options = measure_options("regions", pd_options)
    t0 = time.perf_counter()
    session = Session(model, X, options.but(kind="individual", centered=False, progress=False))
    require(session.data, "regions", "regions")
    many = feature is None or isinstance(feature, (list, tuple))
    if many and feature is not None and len(feature) == 0:
        raise PdpxError("regions(): feature is an empty list; name at least one column, or pass None for every column")
    feats = resolve_features(session, feature, "regions") if many else session.resolve_features([feature])
    n = session.n_rows
    min_rows = max(10, int(np.ceil(0.02 * n))) if min_rows is None else int(min_rows)
    if split_features is None:
        idx = list(range(len(session.names)))
    else:
        idx = session.resolve_features(split_features)
        if not many and feats[0] in idx:
            raise PdpxError(f"regions(): split_features lists {session.names[feats[0]]!r}, the feature whose curves "
                            "are split; leave it out")
    coded = code_candidates(session, idx, n_thresholds)
    # float64 and writable (a read-only array of the caller's would make the compiled sums compile again)
    w = np.ones(n) if session.sample_weight is None else np.array(session.sample_weight, dtype=np.float64)
    search = _Search(session, coded, w, max_depth, min_gain, min_rows, ice, np.arange(n))
    found = RegionsSet()
    for j, curves in _feature_curves(session, feats):
        found[session.names[j]] = search.of(j, curves)
        del curves  # freed before the next feature's (or group's) curves are computed: the budget holds one group
    found.elapsed = time.perf_counter() - t0
    for res in found.values():
        res.elapsed = found.elapsed
    return found if many else found[session.names[feats[0]]]


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
class _Curves:
    """One feature's curves over every row: centered ``C`` (n, K * G), each row's mean ``rowmean`` (K, n), and over
    every row its ``outputs``, PD ``average`` (K, G), ``heterogeneity`` per output, the method and notes."""

    C: np.ndarray
    rowmean: np.ndarray
    outputs: list
    average: np.ndarray
    heterogeneity: np.ndarray
    method: str
    notes: list
    squares: np.ndarray | None = None  # each row's sum of C's squares, when the walk gave it


def _feature_curves(session: Session, feats: list):
    """``(feature, _Curves)`` for each of ``feats`` in turn: the features' curves from one walk over the rows
    where the method has one (as many per walk as the memory budget holds), else feature by feature."""
    K, n = len(session.outputs), session.n_rows
    sizes = {j: len(session.grid_for(j)) for j in feats}
    for j in feats:
        need = COPIES * 8 * K * n * sizes[j]
        if need > session.memory_budget:
            raise PdpxError(
                f"regions(): the ICE curves of {session.names[j]!r} for {n:,} rows, {sizes[j]} grid points and {K} "
                f"output(s) and the search's copies take {need / 2**20:.0f} MiB, over the memory budget of "
                f"{session.memory_budget / 2**20:.0f} MiB; lower grid_resolution, pass a sample of the rows, or raise "
                "memory_budget (e.g. memory_budget='4GB')")
    rest = list(feats)
    while rest:  # one feature too: the walk for one feature beats its exact curves (2.6 s against 2.9-3.2 s, 1M rows)
        group = _group(rest, sizes, K, n, session.memory_budget)
        got = _walked(session, group, sizes)
        if got is None:
            break
        while got:  # handed over one by one, none kept here: a group's arrays go before the next group's come
            yield got.pop(0)
        rest = rest[len(group):]
    for j in rest:  # a feature's curves a chunk of rows at a time
        got = reduce_curves(session, [j], CenteredCurves(), ways=("chunks",))
        yield j, _curves(got.value[j], got.outputs, got.method, got.notes)


def _group(feats: list, sizes: dict, K: int, n: int, budget: int) -> list:
    """The first features of ``feats`` whose curves one walk may hold (at least one): the walk's arrays, plus a
    feature's copies during its search."""
    group = [feats[0]]
    for j in feats[1:]:
        G = max(sizes[i] for i in group + [j])
        if 8 * K * n * ((len(group) + 1) * (G + 1) + (COPIES - 1) * G) > budget:
            break
        group.append(j)
    return group


def _walked(session: Session, group: list, sizes: dict):
    """``[(feature, _Curves)]`` of ``group`` (grid sizes ``sizes``) from one walk over the rows that writes every
    row's centered curve (:class:`~pdpx.core.curves.CenteredCurves`), or None where the method has none."""
    got = reduce_curves(session, group, CenteredCurves(), ways=("walk",))
    if got is None:
        return None
    note = "every row's ICE curves of these features computed in one pass over the rows"
    return [(j, _curves(got.value[j], got.outputs, got.method, [note])) for j in group]


def _curves(c, outputs: list, method: str, notes: list) -> _Curves:
    """The :class:`_Curves` of one feature's :class:`~pdpx.core.curves.Centered`."""
    return _Curves(c.C, c.rowmean, outputs, c.average, c.heterogeneity, method, notes, c.squares)


@dataclass
class _Search:
    """The split search of one call, feature by feature: the session, candidates coded once, weights and options."""

    session: Session
    coded: Coded
    w: np.ndarray
    max_depth: int
    min_gain: float
    min_rows: int
    ice: bool
    everything: np.ndarray  # np.arange(n_rows): the root's rows

    def of(self, j: int, curves: _Curves) -> RegionsResult:
        """Feature ``j``'s :class:`RegionsResult` from its curves."""
        session, n = self.session, self.session.n_rows
        K, G = len(curves.outputs), len(session.grid_for(j))
        cands, cols = self.coded.without(j)
        stats = Stats(self.w, curves.C, G, self.min_rows, self.coded, cols, curves.squares)
        leaves, made = grow(stats, cands, self.max_depth, self.min_gain, self.everything)
        if len(leaves) == 1:  # every row: the feature's own PD and heterogeneity
            rows, conditions, stopped = leaves[0]
            found = [Region(region=1, conditions=conditions, rows=rows, weight=float(self.w.sum()),
                            heterogeneity=curves.heterogeneity, average=curves.average, stopped=stopped)]
        else:
            found = self._regions(leaves, curves, K, G)
        individual = None
        if self.ice:
            individual = curves.C.reshape(n, K, G).transpose(1, 0, 2) + curves.rowmean[:, :, None]
        name = session.names[j]
        notes = list(curves.notes) + self.coded.notes_for(name)
        return RegionsResult(
            feature=name, grid_values=session.grid_for(j), categorical=session.categorical[j], outputs=curves.outputs,
            regions=found, splits=made, heterogeneity=curves.heterogeneity, average=curves.average,
            individual=individual, method=curves.method, n_rows=n, notes=notes)

    def _regions(self, leaves: list, curves: _Curves, K: int, G: int) -> list:
        """The :class:`Region` of each of several leaves: PD and heterogeneity from one compiled two-pass over the
        rows (:func:`.split_sums.region_sums`)."""
        rid = np.zeros(len(self.w), dtype=np.int64)
        for r, (rows, _, _) in enumerate(leaves):
            rid[rows] = r
        W, S1, SM, SS = region_sums(rid, len(leaves), self.w, curves.C, curves.rowmean)
        found = []
        for r, (rows, conditions, stopped) in enumerate(leaves):
            if W[r] > 0:
                avg, het = (S1[r].reshape(K, G) + SM[r][:, None]) / W[r], SS[r] / (W[r] * G)
            else:  # rows of no weight: their plain mean curve, no spread
                avg = (curves.C[rows].reshape(len(rows), K, G).mean(axis=0)
                       + curves.rowmean[:, rows].mean(axis=1)[:, None])
                het = np.zeros(K)
            found.append(Region(region=r + 1, conditions=conditions, rows=rows, weight=float(W[r]),
                                heterogeneity=het, average=avg, stopped=stopped))
        return found
