"""How much of the model the curves explain: the additive R^2 of the 1-way PD curves, then with pairs and regions;
and Friedman's H for triples of features.

Every partial dependence function is evaluated at the rows' own values and centered to
weighted mean 0 over the rows (as for Friedman's H, :mod:`pdpx.explain.interaction`). With
``fc`` the model's response minus its weighted mean, and ``A`` an approximation built from
the curves::

    R2(A) = 1 - sum_i w_i (fc_i - A_i)^2 / sum_i w_i fc_i^2          (per output)

The ledger (:attr:`ExplainedVariance.ledger`) holds, step by step:

1. ``1-way``: ``A = sum_j PD_j(x_ij)``, the additive (GAM-like) model the 1-way curves draw;
2. ``pairs`` pairs, one at a time, each adding its pure interaction
   ``PD_jk(x_ij, x_ik) - PD_j(x_ij) - PD_k(x_ik)`` to the previous step: among the
   ``CANDIDATES * pairs`` pairs with the largest pairwise H, the one that raises R^2 most at that
   step (H is a share of the pair's own PD's variance, so a pair of weak features can rank high
   and add little to the model);
3. ``regions of x``: from step 1, each feature of ``region_features`` (those with the largest
   overall H) in turn has its global curve replaced by the curve of the row's region
   (:func:`pdpx.regions` on the same rows), centered within the region; the regions' rules
   are in ``added``. A feature's regions are kept (a step of the ledger) only where they raise
   R^2 over the steps before them: the regions of two features may tell the same interaction
   twice (``x1``'s curve split by ``x2``, and ``x2``'s by ``x1``); the notes say which were left out.

``gain`` is a step's R^2 minus that of the step it builds on (``builds_on``).

Three-way H (Friedman and Popescu 2008, as the R package hstats computes it, for every
triple of the ``threeway`` features with the largest overall H), all functions centered::

    H2_jkl = sum_i w_i [PD_jkl - PD_jk - PD_jl - PD_kl + PD_j + PD_k + PD_l]^2 / sum_i w_i PD_jkl^2

On tree models every function is computed exactly on the cells of equivalent values
(:mod:`pdpx.explain.evaluate`) with every row; other models run brute force on ``sample``
rows (at most :data:`pdpx.explain.interaction.GENERIC_SAMPLE` by default).
"""

from __future__ import annotations

import itertools
import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core import stacking
from ..core.adapter import checked_predict
from ..core.compute import compute, compute_many
from ..core.drawing import Drawable
from ..core.errors import PdpxError
from ..core.options import PDOptions
from ..core.rows import require
from ..core.session import Session
from . import evaluate
from .interaction import ZERO, HStatistic, h_statistic_of
from .subgroups import RegionsResult, regions

#: Options of partial_dependence that do not apply (the functions are evaluated at the rows, on their own grids).
REFUSED = ("kind", "grid_resolution", "percentiles", "grid", "custom_values", "centered", "ice_sample",
           "include_missing", "by", "by_bins", "interval", "n_boot")
#: Pairs tried per pair added: the ``CANDIDATES * pairs`` pairs with the largest pairwise H.
CANDIDATES = 3
#: H^2 at most this is rounding, not interaction: such pairs and features are not added.
TINY = 1e-12
#: Columns of the ledger.
LEDGER = ["step", "what", "added", "builds_on", "output", "r2", "gain"]


@dataclass
class ExplainedVariance(Drawable):
    """What :func:`explained_variance` returns.

    Attributes
    ----------
    ledger : DataFrame
        ``step, what, added, builds_on, output, r2, gain`` (see :mod:`pdpx.explain.explained`): ``what`` is
        ``"1-way"``, ``"pair a x b"`` or ``"regions of x"``, ``added`` what it added (features, the pair, the rules).
    h : HStatistic
        Friedman's H on the same rows (what ranked the pairs and the features).
    threeway : DataFrame
        ``feature_1, feature_2, feature_3, output, h2, h``, strongest first.
    regions : dict
        ``{feature: RegionsResult}`` of the features whose curves were split into regions.
    method : str
    n_rows : int
        The rows every function is evaluated at (the sample when ``sample`` was given).
    outputs : list of str
    notes : list of str
    elapsed : float
    """

    small = True  # a notebook shows its table and figure in full

    figure = "explained_variance"

    ledger: pd.DataFrame
    h: HStatistic
    threeway: pd.DataFrame
    regions: dict
    outputs: list
    method: str
    n_rows: int
    elapsed: float = 0.0
    notes: list = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """The ledger (a copy): ``step, what, added, builds_on, output, r2, gain``."""
        return self.ledger.copy()

    def plot(self, **kwargs):
        """The ledger as bars of R^2 by step (:func:`pdpx.outputs.plot_heterogeneity.plot_explained`)."""
        return super().plot(**kwargs)

    def __repr__(self) -> str:
        lines = [f"ExplainedVariance(method={self.method!r}, n_rows={self.n_rows})"]
        for row in self.ledger.itertuples():
            lines.append(f"  {row.step}. {row.what} [{row.output}]: R2 {row.r2:.3f} (gain {row.gain:+.3f})")
        return "\n".join(lines)


def explained_variance(model, X, features=None, *, pairs: int = 3, region_features: int = 2, threeway: int = 3,
                       sample=None, random_state=0, region_options: dict | None = None,
                       **pd_options) -> ExplainedVariance:
    """The share of the variance of the model's predictions the PD curves keep, step by step, and 3-way H
    (definitions in :mod:`pdpx.explain.explained`).

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence`.
    features : list of str / int, optional
        The features of the additive model (default: every column with a grid).
    pairs : int, default 3
        How many pairs are added, one at a time: of the :data:`CANDIDATES` x ``pairs`` pairs with the largest
        pairwise H (mean over the outputs), the one that raises R^2 most.
    region_features : int, default 2
        How many features, those with the largest overall H, get regional curves (:func:`pdpx.regions`).
    threeway : int, default 3
        3-way H for every triple of this many features with the largest overall H (below 3: none).
    sample, random_state
        As in :func:`pdpx.h_statistic`: every function is evaluated at these rows.
    region_options : dict, optional
        Keyword arguments of :func:`pdpx.regions` (``max_depth``, ``min_gain``, ``min_rows``, ...).
    **pd_options
        ``response``, ``target``, ``sample_weight``, ``categorical_features``, ``method``, ``n_jobs``,
        ``progress``, ``memory_budget``, ``method_options`` of :func:`pdpx.partial_dependence`.

    Returns
    -------
    ExplainedVariance
    """
    t0 = time.perf_counter()
    options = PDOptions.checked("explained_variance", pd_options)
    refused = sorted(options.given & set(REFUSED))
    if refused:
        raise PdpxError(f"explained_variance(): option(s) {refused} do not apply (the curves are evaluated at the "
                        "rows of X, on their own grids); leave them out")
    for name, value in (("pairs", pairs), ("region_features", region_features), ("threeway", threeway)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise PdpxError(f"explained_variance(): {name} must be a whole number >= 0, got {value!r}")
    session = Session(model, X, options.but(progress=False))
    require(session.data, "explained_variance", "explained_variance")  # every row's curves and regions, here
    try:
        h = h_statistic_of(model, X, features, None, sample, random_state, options.but(progress=False))
    except PdpxError as exc:  # in the words of the function called
        raise PdpxError(str(exc).replace("h_statistic()", "explained_variance()")) from None
    frame, w = _rows(session, random_state, h.n_rows)
    notes = list(h.notes)
    feats = session.resolve_features(h.overall["feature"].drop_duplicates().tolist())
    fun = _Functions(session, model, frame, feats, w, options.but(progress=None, sample_weight=w))
    notes += fun.notes
    f = checked_predict(session.adapter, frame, session.response)[:, session.outputs].T  # (K, n)
    fc = fun.center(f)
    additive = sum(fun.one[j] for j in feats)
    steps = [("1-way", ", ".join(session.names[j] for j in feats), 0, additive)]
    current = additive
    terms = {}
    for a, b in _ranked_pairs(h.pairwise)[:CANDIDATES * pairs]:
        j, k = session.resolve_features([a, b])
        terms[(a, b)] = fun.center(fun.pair(j, k)) - fun.one[j] - fun.one[k]
    while terms and len(steps) <= pairs:  # the candidate that raises R2 most, one at a time
        best = max(terms, key=lambda p: np.nanmean(_r2(fc, current + terms[p], w)))
        current = current + terms.pop(best)
        steps.append((f"pair {best[0]} x {best[1]}", f"{best[0]} x {best[1]}", len(steps), current))
    found = {}
    top = h.overall.groupby("feature", sort=False)["h2"].mean().sort_values(ascending=False, kind="stable")
    chosen = [name for name, value in top.items() if value > TINY][:region_features]
    regional, base = additive, 1
    for name in chosen:  # kept only where it raises R2: two features' regions may tell the same interaction twice
        j = session.names.index(name)
        found[name] = regions(model, frame, name, **{**(region_options or {}), **_region_pd(options, w)})
        trial = regional - fun.one[j] + fun.regional(j, found[name])
        if np.nanmean(_r2(fc, trial, w)) > np.nanmean(_r2(fc, regional, w)):
            steps.append((f"regions of {name}", " | ".join(found[name].rules), base, trial))
            base, regional = len(steps), trial
        else:
            notes.append(f"the regions of {name} ({' | '.join(found[name].rules)}) are not in the ledger: they did "
                         "not raise R2 over the steps before them")
    ledger = _ledger(steps, fc, w, h.outputs)
    three = _threeway(fun, h, threeway)
    return ExplainedVariance(ledger=ledger, h=h, threeway=three, regions=found, method=h.method, n_rows=len(frame),
                             outputs=list(h.outputs), notes=notes, elapsed=time.perf_counter() - t0)


def _rows(session: Session, random_state, n_rows: int):
    """(frame, weights): the rows :func:`pdpx.h_statistic` evaluated its functions at (a sample: the same seed)."""
    frame, w = session.X, session.sample_weight
    if n_rows < session.n_rows:
        take = np.sort(np.random.default_rng(random_state).choice(session.n_rows, n_rows, replace=False))
        frame = frame.iloc[take]
        w = None if w is None else w[take]
    return frame, (np.ones(len(frame)) if w is None else np.asarray(w, dtype=np.float64))


def _region_pd(options: PDOptions, w: np.ndarray) -> dict:
    """The options of :func:`pdpx.regions` that follow the call's (weights, output, method)."""
    keep = options.pick(("response", "target", "categorical_features", "method", "n_jobs", "memory_budget",
                         "method_options"))
    return {**keep, "sample_weight": w}


def _ranked_pairs(pairwise: pd.DataFrame) -> list:
    """Pairs ``(a, b)`` by their mean h2 over the outputs, largest first (those with h2 > 0)."""
    if pairwise.empty:
        return []
    mean = pairwise.groupby(["feature_1", "feature_2"], sort=False)["h2"].mean()
    mean = mean[mean > TINY].sort_values(ascending=False, kind="stable")
    return list(mean.index)


def _r2(fc: np.ndarray, approx: np.ndarray, w: np.ndarray) -> np.ndarray:
    """R2 of ``approx`` per output (NaN where the predictions do not vary)."""
    total = (fc ** 2) @ w
    resid = ((fc - approx) ** 2) @ w
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, 1.0 - resid / total, np.nan)


def _ledger(steps: list, fc: np.ndarray, w: np.ndarray, outputs: list) -> pd.DataFrame:
    """The ledger's rows: each step's R2 per output, and its gain over the step it builds on."""
    r2 = [_r2(fc, approx, w) for _, _, _, approx in steps]
    rows = []
    for s, (what, added, base, _) in enumerate(steps, start=1):
        for o, out in enumerate(outputs):
            before = 0.0 if base == 0 else r2[base - 1][o]
            rows.append((s, what, added, base, out, float(r2[s - 1][o]), float(r2[s - 1][o] - before)))
    return pd.DataFrame(rows, columns=LEDGER)


class _Functions:
    """Partial dependence functions of one model evaluated at the rows of ``frame``: 1-way (centered), pairs,
    triples (uncentered) and regional curves (centered within each region), on the cells of
    :mod:`pdpx.explain.evaluate` (exact on trees, one cell per distinct value otherwise)."""

    def __init__(self, session: Session, model, frame: pd.DataFrame, feats: list, w: np.ndarray, opts: PDOptions):
        self.session, self.model, self.frame, self.w, self.opts = session, model, frame, w, opts
        self.names, self.categorical = session.names, session.categorical
        self.cells, self.from_trees, self.notes = evaluate.find_cells(session.adapter, session.response, frame, feats)
        self.grids = {j: evaluate.cell_grid(frame, j, self.cells[j], self.categorical[j]) for j in feats}
        coll = compute_many(model, frame, [[self.names[j]] for j in feats], self._on_cells(feats))
        self.one = {j: self.center(np.asarray(res.average)[:, self.at(j)]) for j, res in zip(feats, coll)}
        self._pairs: dict = {}

    def _on_cells(self, feats) -> PDOptions:
        return self.opts.but(kind="average", include_missing="auto",
                             custom_values={self.names[j]: self.grids[j].values for j in feats})

    def at(self, j: int, rows=None) -> np.ndarray:
        """The grid position of each row's cell of feature ``j`` (of ``rows``: all by default)."""
        codes = self.cells[j].codes if rows is None else self.cells[j].codes[rows]
        return self.grids[j].position[codes]

    def center(self, values: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """``values`` (K, n) minus their weighted mean over the rows."""
        w = self.w if w is None else w
        return values - ((values @ w) / w.sum())[:, None]

    def pair(self, j: int, k: int) -> np.ndarray:
        """PD_jk at each row (K, n), uncentered."""
        if (j, k) in self._pairs:
            return self._pairs[(j, k)]
        g, names = self.grids, self.names
        if not self.from_trees:
            bar = evaluate.bar_for(evaluate.pair_count(self.cells, j, k), False)
            got = evaluate.pair_at_rows(self.session.adapter, self.session.response, self.session.outputs,
                                        self.frame, j, k, self.cells, self.w, bar, self.notes)
        elif (len(g[j].values) + 1) * (len(g[k].values) + 1) <= evaluate.MAX_CELLS:
            got = evaluate.two_way_grid(self.model, self.frame, names, [(j, k)], g, self.opts)[(j, k)]
            got = got[:, self.at(j), self.at(k)]
        else:
            got = evaluate.two_way_blocks(self.model, self.frame, names, j, k, self.cells, self.categorical, self.opts)
        self._pairs[(j, k)] = got
        return got

    def regional(self, j: int, found: RegionsResult) -> np.ndarray:
        """Each row's regional PD of feature ``j`` at its own value (K, n), centered within its region."""
        out = np.zeros_like(self.one[j])
        name = self.names[j]
        for r in found.regions:
            wr = self.w[r.rows]
            if wr.sum() <= 0:
                continue
            res = compute(self.model, self.frame.iloc[r.rows], [name],
                          self._on_cells([j]).but(sample_weight=wr))
            out[:, r.rows] = self.center(np.asarray(res.average)[:, self.at(j, r.rows)], wr)
        return out

    def triple(self, j: int, k: int, m: int) -> np.ndarray:
        """PD_jkm at each row (K, n), uncentered: on trees, the cell grid in blocks of ``j``'s cells; otherwise by
        brute force at the observed triples of values."""
        if not self.from_trees:
            return self._triple_by_brute((j, k, m))
        cj = self.cells[j]
        size = len(self.grids[k].values) + 1
        size *= len(self.grids[m].values) + 1
        plain = np.flatnonzero(~cj.missing)
        step = max(1, evaluate.MAX_CELLS // size)
        out = None
        for s in range(0, max(len(plain), 1), step):
            block = np.concatenate([plain[s: s + step], np.flatnonzero(cj.missing)])
            gj = evaluate.cell_grid(self.frame, j, cj, self.categorical[j], subset=block)
            custom = {self.names[j]: gj.values, self.names[k]: self.grids[k].values,
                      self.names[m]: self.grids[m].values}
            res = compute(self.model, self.frame, [self.names[j], self.names[k], self.names[m]],
                          self.opts.but(kind="average", include_missing="auto", custom_values=custom))
            avg = np.asarray(res.average)
            out = np.empty((avg.shape[0], len(self.frame))) if out is None else out
            rows = np.flatnonzero(gj.position[cj.codes] >= 0)
            out[:, rows] = avg[:, gj.position[cj.codes[rows]], self.at(k, rows), self.at(m, rows)]
        return out

    def _triple_by_brute(self, cols: tuple) -> np.ndarray:
        """PD at each row's own values of ``cols`` by brute force: one prediction per (observed combination, row)."""
        frame, n = self.frame, len(self.frame)
        key = np.zeros(n, dtype=np.int64)
        for c in cols:
            key = key * self.cells[c].m + self.cells[c].codes
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        values = np.empty((len(self.session.outputs), len(uniq)))
        batch = max(1, (1 << 17) // n)
        few = first[:3]
        if len(few) >= 2 and stacking.apart(self.session.adapter, self.session.response, frame, list(cols),
                                            [frame.iloc[few, c].array for c in cols]) is not None:
            batch = 1  # predictions that depend on the other rows of the call: one combination per call
        for s in range(0, len(uniq), batch):
            reps = first[s: s + batch]
            big = frame.iloc[np.tile(np.arange(n), len(reps))].reset_index(drop=True)
            for c in cols:
                big.isetitem(c, frame.iloc[np.repeat(reps, n), c].reset_index(drop=True).array)
            pred = checked_predict(self.session.adapter, big, self.session.response)[:, self.session.outputs]
            values[:, s: s + len(reps)] = np.einsum("bno,n->ob", pred.reshape(len(reps), n, -1), self.w / self.w.sum())
        return values[:, inv.reshape(-1)]


def _threeway(fun: _Functions, h: HStatistic, top: int) -> pd.DataFrame:
    """3-way H for every triple of the ``top`` features with the largest overall H (mean over outputs)."""
    cols = ["feature_1", "feature_2", "feature_3", "output", "h2", "h"]
    ranked = h.overall.groupby("feature", sort=False)["h2"].mean().sort_values(ascending=False, kind="stable")
    names = list(ranked.index[:top])
    rows = []
    for a, b, c in itertools.combinations(names, 3):
        j, k, m = (fun.names.index(x) for x in (a, b, c))
        both = fun.center(fun.pair(j, k)) + fun.center(fun.pair(j, m)) + fun.center(fun.pair(k, m))
        three = fun.center(fun.triple(j, k, m))
        num = ((three - both + fun.one[j] + fun.one[k] + fun.one[m]) ** 2) @ fun.w
        den = (three ** 2) @ fun.w
        scale = den.max(initial=0.0)
        for o, out in enumerate(h.outputs):
            h2 = 0.0 if den[o] <= ZERO * scale or den[o] <= 0 else float(num[o] / den[o])
            rows.append((a, b, c, out, h2, float(np.sqrt(max(h2, 0.0)))))
    frame = pd.DataFrame(rows, columns=cols)
    return frame.sort_values("h2", ascending=False, kind="stable").reset_index(drop=True)
