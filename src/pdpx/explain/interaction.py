"""Friedman and Popescu's H statistic: how much of a model's variation is interaction.

With every partial dependence function centered to (weighted) mean 0 over the
rows of X and evaluated at those rows (Friedman and Popescu 2008, eq. 44 and 45)::

    H2_jk = sum_i w_i [PD_jk(x_ij, x_ik) - PD_j(x_ij) - PD_k(x_ik)]^2 / sum_i w_i PD_jk(x_ij, x_ik)^2
    H2_j  = sum_i w_i [f(x_i) - PD_j(x_ij) - PD_-j(x_i,-j)]^2 / sum_i w_i f(x_i)^2

where ``PD_S(z) = sum_r w_r f(z, x_r,C) / sum_r w_r`` and ``w`` is ``sample_weight``
(all 1 by default). ``h = sqrt(h2)``. A denominator that is zero up to rounding
(at most ``1e-20 * sum_i w_i f(x_i)^2``: the function has no variation to share)
gives ``h2 = 0``.

On tree models every function is computed exactly on cells of equivalent values
(:mod:`pdpx.explain.evaluate`), with all rows; other models run brute force on
``sample`` rows. A Spark DataFrame's or Dask collection's rows stay where they are on tree models (the
functions from passes over its partitions, :mod:`pdpx.explain.interaction_spark`);
a sample, or brute force's rows, are the rows a pandas frame of the same rows would
use, brought here by position.
"""

from __future__ import annotations

import contextlib
import itertools
import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.budget import check_h
from ..core.drawing import Drawable
from ..core.errors import ExtrapolationWarning, PdpxError
from ..core.options import PDOptions
from ..core.rows import require
from ..core.session import Session
from . import evaluate, interaction_spark

#: Rows the model-agnostic path uses when ``sample`` is not given and X has more.
GENERIC_SAMPLE = 300
#: Options of partial_dependence that do not apply to the H statistic (it sets its own grids).
_REFUSED = ("kind", "grid_resolution", "percentiles", "grid", "custom_values", "centered", "ice_sample",
            "include_missing", "by", "by_bins", "interval", "n_boot")
#: Relative size below which a denominator counts as zero.
ZERO = 1e-20


@dataclass
class HStatistic(Drawable):
    """Friedman's H statistics of one model on one X.

    Attributes
    ----------
    pairwise : DataFrame
        ``feature_1, feature_2, output, h2, h``, one row per pair and output, strongest first.
    overall : DataFrame
        ``feature, output, h2, h``: how much of ``f`` is interaction of the feature with any other.
    method : str
        ``exact`` (trees, cells of equivalent values) or ``brute`` (every distinct value).
    n_rows : int
        Rows the statistics are computed on (the sample when ``sample`` was given).
    outputs : list of str
        The model's outputs, in the order of its prediction columns.
    notes : list of str
    elapsed : float
        Seconds.
    """

    figure = "h_statistic"

    pairwise: pd.DataFrame
    overall: pd.DataFrame
    method: str
    n_rows: int
    outputs: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    elapsed: float = 0.0

    def to_frame(self) -> pd.DataFrame:
        """One tidy frame of both statistics.

        Columns ``statistic`` ("pairwise" / "overall"), ``feature_1``, ``feature_2``
        (None on overall rows), ``output``, ``h2``, ``h``.
        """
        over = self.overall.rename(columns={"feature": "feature_1"}).assign(feature_2=None)
        parts = [self.pairwise.assign(statistic="pairwise"), over.assign(statistic="overall")]
        cols = ["statistic", "feature_1", "feature_2", "output", "h2", "h"]
        return pd.concat([p[cols] for p in parts if len(p)], ignore_index=True)

    def plot(self, which: str = "auto", **kwargs):
        """A plotnine figure: ``"pairwise"`` (heat map of h), ``"overall"`` (bars), ``"auto"`` (pairwise if any pair).

        Keyword arguments go to :func:`pdpx.outputs.plot_explain.plot_h_statistic`.
        """
        return super().plot(which=which, **kwargs)

    def __repr__(self) -> str:
        top = self.pairwise.head(3)
        pairs = ", ".join(f"{a} x {b}: {h:.3f}" for a, b, h in zip(top.feature_1, top.feature_2, top.h))
        return (f"HStatistic({len(self.pairwise)} pair rows, {len(self.overall)} feature rows, "
                f"method={self.method!r}, n_rows={self.n_rows}; strongest pairs: {pairs or 'none'})")


def h_statistic(model, X, features=None, *, pairs=None, sample=None, random_state=0, **pd_options) -> HStatistic:
    """Friedman and Popescu's H statistic, pairwise and overall (see the module docstring for the formulas).

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence`.
    features : list of str / int, optional
        Features whose overall H is computed and which are paired. Default: every
        column with a grid (the features named in ``pairs`` when pairs are given).
    pairs : list of pairs of features, optional
        The pairs to compute (default: every pair of ``features``; ``[]``: none).
    sample : int, optional
        Compute on this many randomly chosen rows of X (they are then both the
        background and the rows the functions are evaluated at). Default: every row
        for tree models; for other models (brute force, ``n^2`` predictions per
        function) at most :data:`GENERIC_SAMPLE` rows.
    random_state : int, optional
        Seed of the sample.
    **pd_options
        ``response``, ``target``, ``sample_weight``, ``categorical_features``,
        ``method``, ``n_jobs``, ``progress``, ``memory_budget``, ``method_options``
        of :func:`pdpx.partial_dependence`. ``sample_weight`` weights every mean and
        every sum of the definition.

    Returns
    -------
    HStatistic
    """
    return h_statistic_of(model, X, features, pairs, sample, random_state,
                          PDOptions.checked("h_statistic", pd_options))


def h_statistic_of(model, X, features, pairs, sample, random_state, options: PDOptions) -> HStatistic:
    """:func:`h_statistic` with checked options (``options.given``: the options the caller passed)."""
    t0 = time.perf_counter()
    refused = sorted(options.given & set(_REFUSED))
    if refused:
        raise PdpxError(f"h_statistic(): option(s) {refused} do not apply (H evaluates the PD functions at the "
                        "rows of X, on its own grids); leave them out")
    progress = options.progress
    session = Session(model, X, options.but(progress=False))
    require(session.data, "h_statistic", "h_statistic")
    elsewhere = not session.data.here  # Dask, Spark: the rows stay where they are, or a sample comes here
    n = session.n_rows
    notes: list = []
    weights = session.sample_weight
    sample = _check_sample(sample, n)
    tm_ok = _has_trees(session)
    if sample is None and not tm_ok and n > GENERIC_SAMPLE:
        sample = GENERIC_SAMPLE
        notes.append(f"no readable trees: brute force on a random sample of {GENERIC_SAMPLE} of the {n} rows "
                     "(pass sample= to choose)")
    frame, take = session.X, None
    if sample is not None and sample < n:
        take = np.sort(np.random.default_rng(random_state).choice(n, int(sample), replace=False))
    elif elsewhere and not tm_ok:  # brute force reads its rows here: all (no more than sample= or GENERIC_SAMPLE)
        take = np.arange(n)
    if take is not None and elsewhere:  # the same rows, brought here (a pandas frame): then as on pandas
        label = session.data.label
        frame, weights = session.data.take(take)
        session = Session(model, frame, options.but(progress=False, sample_weight=weights, rows=None))
        notes.append(f"on {len(take):,} of the {n:,} rows of the {label} DataFrame, brought here")
    elif take is not None:
        frame = frame.iloc[take]
        weights = None if weights is None else weights[take]
    if take is not None and weights is not None and weights.sum() <= 0:
        raise PdpxError("h_statistic(): the sampled rows all have weight 0; use a larger sample")
    feats, pair_idx = _resolve(session, features, pairs)
    used = sorted(set(feats) | {j for p in pair_idx for j in p})
    if not used:
        raise PdpxError("h_statistic(): nothing to compute (no features and no pairs)")
    check_h(session.inputs, n if take is None else len(take), feats, pair_idx)  # before any function is computed
    if elsewhere and take is None:  # every row, where it lives
        return _h_where_rows_are(session, model, X, feats, pair_idx, used, options.but(rows=session.data), notes,
                                 progress, t0)
    if elsewhere:
        rows = session.data
    else:  # the sessions below all read these rows: they share one validated copy (its digest is computed once)
        rows = session.data if take is None else session.data.subset(take)
    return _h_statistic(session, model, rows.frame, feats, pair_idx, used, weights,
                        options.but(rows=rows, sample_weight=weights), notes, progress, t0)


def _h_statistic(session, model, frame, feats, pair_idx, used, weights, options, notes, progress, t0):
    """H of a pandas ``frame``: every function at every row, here."""
    names = session.names
    opts = options.but(progress=None, sample_weight=weights)
    n = len(frame)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    cells, from_trees, more = evaluate.find_cells(session.adapter, session.response, frame, used)
    notes += more
    categorical = session.categorical
    grids = {j: evaluate.cell_grid(frame, j, cells[j], categorical[j]) for j in used}
    with _extrapolation_as_note(notes, one_way=True):
        one = evaluate.one_way(model, frame, names, grids, cells, feats or used[:1], w, opts)
    f = one.f  # (K, n): the model's response at each row
    scale = (f ** 2) @ w
    fc = _center(f, w)
    pd1 = {j: _center(one.average[j][:, grids[j].position[cells[j].codes]], w) for j in used}
    over = {j: ((fc - pd1[j] - _center(one.rest[j], w)) ** 2) @ w for j in feats}  # rest: PD_-j at each row
    pd2 = {}
    if pair_idx:
        with _extrapolation_as_note(notes, one_way=False):
            pd2 = _pairs(session, model, frame, names, pair_idx, cells, grids, categorical, opts, w, from_trees,
                         progress, notes)
    return _result(names, one, over, (fc ** 2) @ w, scale, pd1, pd2, w, from_trees, cells, used, n, notes, t0)


def _h_where_rows_are(session, model, X, feats, pair_idx, used, options, notes, progress, t0):
    """H of a Spark DataFrame or Dask collection on all its rows (trees): the PD functions on the cells from passes
    over the rows
    (only counts travel), the pairs read off the rows' cells here, the overall sums from one more pass
    (:mod:`pdpx.explain.interaction_spark`)."""
    data, names, categorical = session.data, session.names, session.categorical
    columns = {j: data.column(j) for j in used}  # all rows of the used columns (the grids read them too)
    n = len(columns[used[0]])
    w = np.ones(n) if session.sample_weight is None else np.asarray(session.sample_weight, dtype=np.float64)
    cells, lookups, from_trees, more = evaluate.cells_by_value(session.adapter, session.response, data.head, columns)
    notes += more
    grids = {j: evaluate.column_grid(columns[j], cells[j], categorical[j]) for j in used}
    opts = options.but(progress=None)
    small = _small_pairs(pair_idx, grids)
    with _extrapolation_as_note(notes, one_way=True):  # 1-way and pair grids from one pass (exact's counts)
        average, method, outputs, full = evaluate.averages(model, X, names, grids, opts, small)
    ice_for = feats or used[:1]
    shares = {j: np.bincount(grids[j].position[cells[j].codes], weights=w, minlength=average[j].shape[1]) / w.sum()
              for j in ice_for}
    over, den, scale = interaction_spark.overall_sums(data, names, categorical, grids, cells, lookups, ice_for,
                                                      average, shares, len(outputs), opts, method,
                                                      session.sample_weight)
    pd1 = {j: _center(average[j][:, grids[j].position[cells[j].codes]], w) for j in used}
    pd2 = {}
    if pair_idx:
        with _extrapolation_as_note(notes, one_way=False):
            pd2 = _pairs(session, model, X, names, pair_idx, cells, grids, categorical, opts, w, from_trees,
                         progress, notes, columns=columns, full=full)
    notes.append(f"on all {n:,} rows of the {data.label} DataFrame ({len(outputs)} output(s)): the functions from "
                 "passes over the partitions, only sums brought here")
    one = evaluate.OneWay(average=average, rest={}, f=np.empty((len(outputs), 0)), method=method, outputs=outputs)
    return _result(names, one, {j: over[j] for j in feats}, den, scale, pd1, pd2, w, from_trees, cells, used, n,
                   notes, t0)


def _result(names, one, over, den, scale, pd1, pd2, w, from_trees, cells, used, n, notes, t0) -> HStatistic:
    """The :class:`HStatistic` of the overall sums ``over`` (``{j: numerator (K,)}``, ``den``) and the pairs' PD
    at each row ``pd2`` (uncentered)."""
    outputs = one.outputs
    rows_over = [(names[j], name, _ratio(num[o], den[o], scale[o]))
                 for j, num in over.items() for o, name in enumerate(outputs)]
    rows_pair = []
    for (j, k), values in pd2.items():
        both = _center(values, w)
        num = ((both - pd1[j] - pd1[k]) ** 2) @ w
        den2 = (both ** 2) @ w
        for o, name in enumerate(outputs):
            rows_pair.append((names[j], names[k], name, _ratio(num[o], den2[o], scale[o])))
    pairwise = pd.DataFrame(rows_pair, columns=["feature_1", "feature_2", "output", "h2"])
    overall = pd.DataFrame(rows_over, columns=["feature", "output", "h2"])
    for df in (pairwise, overall):
        df["h"] = np.sqrt(np.maximum(df["h2"].to_numpy(dtype=float), 0.0))
    pairwise = pairwise.sort_values("h2", ascending=False, kind="stable").reset_index(drop=True)
    overall = overall.sort_values("h2", ascending=False, kind="stable").reset_index(drop=True)
    if from_trees:
        sizes = ", ".join(f"{names[j]}: {cells[j].m}" for j in used[:8]) + (", ..." if len(used) > 8 else "")
        notes.append(f"exact on cells of equivalent values from the trees ({sizes})")
    return HStatistic(pairwise=pairwise, overall=overall, method=one.method if from_trees else "brute", n_rows=n,
                      outputs=list(outputs), notes=notes, elapsed=time.perf_counter() - t0)


def _small_pairs(pair_idx, grids) -> list:
    """The pairs whose cell grid fits :data:`~pdpx.explain.evaluate.MAX_CELLS` (the others: in blocks)."""
    return [(j, k) for j, k in pair_idx
            if (len(grids[j].values) + 1) * (len(grids[k].values) + 1) <= evaluate.MAX_CELLS]


def _pairs(session, model, frame, names, pair_idx, cells, grids, categorical, opts, w, from_trees, progress,
           notes, columns=None, full=None) -> dict:
    """PD_jk at each row for every pair (uncentered), (K, n) each; ``frame`` a Spark DataFrame on trees, its
    ``columns`` (``{position: all rows}``) read for the grids and ``full`` the small pairs' grids computed with
    the 1-way ones."""
    out = {}
    if from_trees:
        small = _small_pairs(pair_idx, grids)
        big = [p for p in pair_idx if p not in small]
        full = evaluate.two_way_grid(model, frame, names, small, grids, opts) if full is None else full
        for (j, k), avg in full.items():
            out[(j, k)] = avg[:, grids[j].position[cells[j].codes], grids[k].position[cells[k].codes]]
        for j, k in big:
            out[(j, k)] = evaluate.two_way_blocks(model, frame, names, j, k, cells, categorical, opts, columns)
        if big:
            notes.append(f"{len(big)} pair grid(s) over {evaluate.MAX_CELLS} cells computed in blocks")
        return {p: out[p] for p in pair_idx}
    total = sum(evaluate.pair_count(cells, j, k) for j, k in pair_idx)
    bar = evaluate.bar_for(total, progress)
    try:
        for j, k in pair_idx:
            out[(j, k)] = evaluate.pair_at_rows(session.adapter, session.response, session.outputs, frame, j, k,
                                                cells, w, bar, notes)
    finally:
        bar.close()
    return out


@contextlib.contextmanager
def _extrapolation_as_note(notes: list, one_way: bool):
    """Turn the ExtrapolationWarning of the internal PD calls into one note (other warnings pass through).

    The pair grids are products of the cells of two features, read only at the pairs
    the rows hold, so their empty cells are never used: their warning is dropped. A
    1-way warning is real (PD_j averages over combinations absent from the data) and
    becomes a note. Which of the two a warning is comes from the feature set it names
    (``one_way`` says it for a warning that names none): on a Spark X the 1-way and pair
    grids are computed in one call.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        if issubclass(w.category, ExtrapolationWarning):
            text = ("some partial dependence functions average over combinations of values absent from the data "
                    "(dependent features): there H measures the model's extrapolation too (docs/importance.md)")
            named = getattr(w.message, "features", ())
            if (len(named) == 1 if named else one_way) and text not in notes:  # a 1-way PD's (a pair's: dropped)
                notes.append(text)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _center(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Subtract each output's weighted mean over the rows (last axis)."""
    return values - ((values @ w) / w.sum())[:, None]


def _ratio(num: float, den: float, scale: float) -> float:
    """``num / den``, 0 when the denominator is zero up to rounding."""
    if den <= ZERO * scale or den <= 0:
        return 0.0
    return float(num / den)


def _has_trees(session) -> bool:
    try:
        return session.adapter.tree_model(session.response) is not None
    except PdpxError:
        return False


def _check_sample(sample, n: int):
    if sample is None:
        return None
    if isinstance(sample, bool) or not isinstance(sample, numbers.Integral):
        raise PdpxError(f"h_statistic(): sample must be a number of rows (an integer from 2 to {n}), got {sample!r}")
    if not 2 <= sample <= n:
        raise PdpxError(f"h_statistic(): sample={sample} rows, but X has {n}; pass an integer from 2 to {n} "
                        "(or None for every row)")
    return int(sample)


def _resolve(session, features, pairs) -> tuple[list, list]:
    """Positions of the features (overall H) and the pairs (pairwise H)."""
    pair_idx = None
    if pairs is not None:
        if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
            raise PdpxError(f"h_statistic(): pairs must be a list of pairs of features, e.g. [('a', 'b')]; "
                            f"got {pairs!r}")
        pair_idx = []
        for p in pairs:
            if isinstance(p, (str, bytes)) or not hasattr(p, "__len__") or len(p) != 2:
                raise PdpxError(f"h_statistic(): each pair must name two features, e.g. ('a', 'b'); got {p!r}")
            j, k = session.resolve_features(list(p))
            pair_idx.append((j, k))
    if features is None:
        if pair_idx is not None:
            feats = sorted({j for p in pair_idx for j in p})
        else:
            feats = []
            for j in range(len(session.names)):
                try:
                    session.grid_for(j)
                except PdpxError:
                    continue
                feats.append(j)
    else:
        if isinstance(features, (str, numbers.Integral)):
            features = [features]
        feats = session.resolve_features(features)
    if pair_idx is None:
        pair_idx = list(itertools.combinations(feats, 2))
    return feats, pair_idx
