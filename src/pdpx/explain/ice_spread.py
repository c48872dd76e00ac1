"""Heterogeneity: how far the rows' ICE curves of a feature disagree with their average.

For feature ``j`` with grid ``z_1 .. z_G`` and ICE curves ``ice_i(z_g) = f(z_g, x_i,-j)``:

* each row's curve is **centered on its own mean over the grid**:
  ``c_ig = ice_i(z_g) - (1/G) sum_h ice_i(z_h)``. A feature whose effect only shifts
  some rows up or down (additive in the other features) then has identical centered
  curves and heterogeneity 0; only a change of shape across rows (an interaction) counts;
* the **curve**: at each grid point, the weighted variance of ``c_ig`` across the rows,
  ``V_g = sum_i w_i (c_ig - cbar_g)^2 / sum_i w_i`` (``w``: ``sample_weight``, all 1 by default;
  the population variance, no degrees-of-freedom correction);
* the **scalar** ``heterogeneity``: the mean of ``V_g`` over the grid points with equal
  weights ``1/G`` (the same weights as the centering), i.e. the weighted mean over rows of
  the squared distance between a row's centered curve and the centered PD curve.

Categorical features: the grid is the levels, each a grid point. The missing-value point
(``include_missing=True``) is a grid point like any other. Several outputs: one curve and
one scalar per output.

The ICE curves come from :class:`~pdpx.core.session.Session` (``exact`` on tree models, the
model's own predictions otherwise), a chunk of rows at a time: each chunk's weight, mean and
sum of squared deviations per grid point are merged into the running ones (Chan et al.'s
pairwise update), so the rows x grid matrix of all the rows is never held at once.
"""

from __future__ import annotations

import contextlib
import numbers
import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..core.config import get_config
from ..core.dates import is_date_type
from ..core.drawing import Drawable
from ..core.errors import PdpxError
from ..core.options import PDOptions
from ..core.result import grid_column, grid_labels, grid_type
from ..core.rows import require
from ..core.session import Session

#: The ICE curves of one chunk of rows take at most 1 / ICE_SHARE of the memory budget.
ICE_SHARE = 4
#: Grid points of the measures of this module when ``grid_resolution`` is not given.
GRID_RESOLUTION = 20
#: Options of partial_dependence that do not apply (the measures set the curves' kind themselves).
REFUSED = ("kind", "centered", "ice_sample", "by", "by_bins", "interval", "n_boot")


@dataclass
class Moments:
    """Running weighted moments of curves over rows, per output and grid point: weight ``w``, ``mean`` (K, G) and
    ``m2`` (K, G), the weighted sum of squared deviations from the mean."""

    w: float
    mean: np.ndarray
    m2: np.ndarray

    @classmethod
    def of(cls, curves: np.ndarray, weights: np.ndarray) -> Moments:
        """The moments of ``curves`` (K, n, G) with row weights ``weights`` (n,)."""
        w = float(weights.sum())
        if w <= 0:
            shape = (curves.shape[0], curves.shape[2])
            return cls(0.0, np.zeros(shape), np.zeros(shape))
        mean = np.einsum("kng,n->kg", curves, weights / w)
        m2 = np.einsum("kng,n->kg", (curves - mean[:, None, :]) ** 2, weights)
        return cls(w, mean, m2)

    def merged(self, other: Moments) -> Moments:
        """The moments of the union of the two sets of rows."""
        if other.w <= 0:
            return self
        if self.w <= 0:
            return other
        w = self.w + other.w
        delta = other.mean - self.mean
        return Moments(w, self.mean + delta * (other.w / w), self.m2 + other.m2 + delta ** 2 * (self.w * other.w / w))

    @property
    def variance(self) -> np.ndarray:
        """The weighted (population) variance per output and grid point."""
        return self.m2 / self.w


def centered_rows(ice: np.ndarray) -> np.ndarray:
    """ICE curves (K, n, G) centered on each row's own mean over the grid points."""
    return ice - ice.mean(axis=2, keepdims=True)


@dataclass
class HeterogeneityResult(Drawable):
    """What :func:`heterogeneity` returns: per feature, the variance of the centered ICE curves.

    Attributes
    ----------
    features : list of str
    grid_values : list of ndarray
        Each feature's grid.
    categorical : list of bool
    variance : list of ndarray (n_outputs, n_grid)
        Each feature's curve: the weighted variance across rows of the centered ICE curves at each grid point.
    average : list of ndarray (n_outputs, n_grid)
        Each feature's PD curve (the weighted mean of the uncentered ICE curves).
    outputs : list of str
    method : str
        The method that computed the ICE curves (``exact`` or ``brute``).
    n_rows : int
    notes : list of str
    elapsed : float
        Seconds.
    """

    small = True  # a notebook shows its table and figure in full

    figure = "heterogeneity"

    features: list
    grid_values: list
    categorical: list
    variance: list
    average: list
    outputs: list
    method: str
    n_rows: int
    notes: list = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def heterogeneity(self) -> np.ndarray:
        """(n_features, n_outputs): each curve's mean over its grid points (equal weights)."""
        return np.array([v.mean(axis=1) for v in self.variance]).reshape(len(self.features), len(self.outputs))

    @property
    def table(self) -> pd.DataFrame:
        """``feature, output, heterogeneity, sd, feature_type, n_grid``, one row per feature and output, largest
        first (``sd``: the square root of ``heterogeneity``, in the units of the model's output)."""
        h = self.heterogeneity
        rows = [(f, out, float(h[i, o]), float(np.sqrt(max(h[i, o], 0.0))),
                 grid_type(self.categorical[i], self.grid_values[i]), len(self.grid_values[i]))
                for i, f in enumerate(self.features) for o, out in enumerate(self.outputs)]
        frame = pd.DataFrame(rows, columns=["feature", "output", "heterogeneity", "sd", "feature_type", "n_grid"])
        return frame.sort_values("heterogeneity", ascending=False, kind="stable").reset_index(drop=True)

    def to_frame(self) -> pd.DataFrame:
        """The curves in long form, one row per feature, output and grid point.

        Columns ``feature, output, feature_type, x, label`` (``x`` and ``label`` as ``x_1`` and
        ``label_1`` of :meth:`pdpx.PartialDependenceResult.to_frame`: the grid value, or the
        level's position for a categorical feature, and the value as text), ``variance`` (the
        curve), ``average`` (the PD curve) and ``heterogeneity`` (the feature's scalar).
        """
        parts = []
        h = self.heterogeneity
        for i, f in enumerate(self.features):
            parts.append(curve_columns(f, self.grid_values[i], self.categorical[i], self.outputs,
                                       variance=self.variance[i], average=self.average[i],
                                       heterogeneity=np.repeat(h[i][:, None], len(self.grid_values[i]), axis=1)))
        return pd.concat(parts, ignore_index=True)

    def plot(self, which: str = "bars", **kwargs):
        """A plotnine figure: ``"bars"`` (the scalar by feature) or ``"curves"`` (each feature's variance curve).

        Keyword arguments go to :func:`pdpx.outputs.plot_heterogeneity.plot_heterogeneity`.
        """
        return super().plot(which=which, **kwargs)

    def __repr__(self) -> str:
        top = self.table.head(3)
        shown = ", ".join(f"{f}: {h:.3g}" for f, h in zip(top.feature, top.heterogeneity))
        return (f"HeterogeneityResult({len(self.features)} features, {len(self.outputs)} output(s), "
                f"method={self.method!r}, n_rows={self.n_rows}; largest: {shown or 'none'})")


def curve_columns(feature: str, grid, categorical: bool, outputs: list, **values) -> pd.DataFrame:
    """Long-form rows of curves over one feature's grid: ``feature, output, feature_type, x, label`` and one column
    per array of ``values`` (each (n_outputs, n_grid))."""
    G, K = len(grid), len(outputs)
    along = np.tile(np.arange(G), K)
    x = along.astype(np.float64) if categorical else grid_column(grid, along)
    cols = {"feature": [feature] * (G * K), "output": np.repeat(np.asarray(outputs, dtype=object), G),
            "feature_type": grid_type(categorical, grid), "x": x,
            "label": np.asarray(grid_labels(grid), dtype=object)[along]}
    for name, arr in values.items():
        cols[name] = np.asarray(arr, dtype=np.float64).reshape(-1)
    return pd.DataFrame(cols)


def heterogeneity(model, X, features=None, **pd_options) -> HeterogeneityResult:
    """The heterogeneity of each feature's ICE curves (definition in :mod:`pdpx.explain.ice_spread`).

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence`.
    features : str / int or list of them, optional
        Default: every column that has a grid (constant and all-missing columns are left out).
    **pd_options
        Options of :func:`pdpx.partial_dependence`: ``grid_resolution`` (default 20 here), ``percentiles``,
        ``grid``, ``custom_values``, ``categorical_features``, ``response``, ``target``, ``sample_weight``
        (weights the variance across rows), ``method``, ``memory_budget`` (the size of a chunk of rows),
        ``include_missing`` (default False here), ``n_jobs``, ``method_options``.

    Returns
    -------
    HeterogeneityResult
    """
    options = measure_options("heterogeneity", pd_options)
    t0 = time.perf_counter()
    session = Session(model, X, options.but(kind="individual", centered=False, progress=False))
    feats = resolve_features(session, features, "heterogeneity")
    out = ice_moments(session, feats, options)
    return HeterogeneityResult(
        features=[session.names[j] for j in feats], grid_values=[session.grid_for(j) for j in feats],
        categorical=[session.categorical[j] for j in feats],
        variance=[m.variance for m, _ in out.moments], average=[u.mean for _, u in out.moments],
        outputs=out.outputs, method=out.method, n_rows=session.n_rows, notes=out.notes,
        elapsed=time.perf_counter() - t0)


def measure_options(function: str, pd_options: dict) -> PDOptions:
    """The checked options of a measure of this module, with its defaults (``grid_resolution`` 20, no missing point
    unless asked)."""
    options = PDOptions.checked(function, pd_options)
    refused = sorted(options.given & set(REFUSED))
    if refused:
        raise PdpxError(f"{function}(): option(s) {refused} do not apply ({function} computes every row's ICE "
                        "curve and centers it on its own mean); leave them out")
    if "grid_resolution" not in options.given:
        options = options.but(grid_resolution=GRID_RESOLUTION)
    if "include_missing" not in options.given:
        options = options.but(include_missing=False)
    return options


def resolve_features(session: Session, features, function: str) -> list:
    """Positions of ``features`` (None: every column with a grid)."""
    if features is not None:
        if isinstance(features, (str, numbers.Integral)):
            features = [features]
        return session.resolve_features(features)
    session.grids.prefetch(range(len(session.names)))
    feats = [j for j in range(len(session.names)) if has_grid(session, j)]
    if not feats:
        raise PdpxError(f"{function}(): no column of X has a grid (all are constant or missing)")
    return feats


def has_grid(session: Session, j: int) -> bool:
    """Whether column ``j`` has a grid (a constant or all-missing column has none)."""
    try:
        session.grid_for(j)
    except PdpxError:
        return False
    return True


@dataclass
class IceMoments:
    """What :func:`ice_moments` returns: per feature (moments of the centered curves, moments of the curves)."""

    moments: list
    outputs: list
    method: str
    notes: list


def ice_moments(session: Session, feats: list, options: PDOptions, keep=None, held: int = 0) -> IceMoments:
    """Moments over rows of each feature's centered and uncentered ICE curves, computed a chunk of rows at a time.

    ``keep``: called with ``(feature, rows, ice)`` for each chunk (ICE (K, rows, G), uncentered), for a caller that
    needs the curves themselves; ``held``: the bytes that caller holds meanwhile (the chunks share the rest of the
    budget).
    """
    if not session.data.here:
        require(session.data, "heterogeneity" if keep is None else "regions", "heterogeneity" if keep is None
                else "regions")
        return _by_partition(session, feats, options)
    if keep is None:
        fast = _one_pass(session, feats)
        if fast is not None:
            return fast
    n = session.n_rows
    weights = np.ones(n) if session.sample_weight is None else session.sample_weight
    K = len(session.outputs)
    G = max(len(session.grid_for(j)) for j in feats)
    budget = session.memory_budget if session.memory_budget is not None else get_config()["memory_budget"]
    if held:  # the caller's arrays take part of the budget: the sessions computing the chunks get the rest
        budget = max(budget - held, budget // 8)
        session = Session.of(replace(session.inputs, memory_budget=budget), session.grids)
        options = options.but(memory_budget=budget)
    chunk = int(max(1, min(n, budget // (ICE_SHARE * 8 * K * G))))
    moments: dict = {}
    method, notes, outputs = "", [], []
    with first_warning_only():
        for s in range(0, n, chunk):
            rows = np.arange(s, min(n, s + chunk))
            for part, group in _sessions(session, rows, feats, options):
                part.plan([[j] for j in group])
                for j in group:
                    res = part.compute([j])
                    ice = np.asarray(res.individual, dtype=np.float64)
                    method, outputs = res.method, list(res.outputs)
                    notes += [x for x in res.notes if x not in notes]
                    w = weights[rows]
                    both = (Moments.of(centered_rows(ice), w), Moments.of(ice, w))
                    old = moments.get(j)
                    moments[j] = both if old is None else (old[0].merged(both[0]), old[1].merged(both[1]))
                    if keep is not None:
                        keep(j, rows, ice)
    if chunk < n:
        notes.append(f"ICE curves computed {chunk:,} rows at a time (the memory budget)")
    return IceMoments([moments[j] for j in feats], outputs, method, notes)


def _one_pass(session: Session, feats: list) -> IceMoments | None:
    """The moments from one walk over the rows that never holds the curves
    (:meth:`~pdpx.core.session.Session.curve_moments`: ``exact`` on trees of at most 64 leaves), or None."""
    got = session.curve_moments(feats)
    if got is None:
        return None
    per, method = got
    moments = [(Moments(W, mean_c, m2_c), Moments(W, mean_f, np.full_like(mean_f, np.nan)))
               for W, mean_f, mean_c, m2_c in per]
    names = session.adapter.output_names(session.response)
    return IceMoments(moments, [names[k] for k in session.outputs], method,
                      ["every row's ICE curves computed in one pass over the rows, none held"])


def _sessions(session: Session, rows: np.ndarray, feats: list, options: PDOptions) -> list:
    """``[(session, features)]`` computing ``feats`` on ``rows`` of the session's X: the session itself for every
    row, else sessions on the chunk with the whole X's grids (their values as custom values), the features whose
    grid ends with the missing-value point apart (their chunk may hold no missing value)."""
    if len(rows) == session.n_rows:
        return [(session, feats)]
    part = session.X.iloc[rows]
    return [(Session(session.model, part, opts), group) for opts, group in _chunk_options(session, feats, options)]


def _chunk_options(session: Session, feats: list, options: PDOptions) -> list:
    """``[(options, features)]`` of sessions on a part of the session's rows computing ``feats`` on the whole
    X's grids (their values as custom values), the features whose grid ends with the missing-value point apart
    (their part may hold no missing value)."""
    custom = {}
    for j in feats:
        grid = session.grid_for(j)
        if session.missing_point(j):  # the chunk's session appends the missing point itself
            grid = grid[:-1]
        custom[session.names[j]] = list(grid) if session.categorical[j] or is_date_type(grid.dtype) else grid
    cats = [session.names[j] for j in range(len(session.names)) if session.categorical[j]]
    opts = options.but(kind="individual", centered=False, progress=False, sample_weight=None, custom_values=custom,
                       categorical_features=cats or None, grid="uniform")
    out = []
    for flag in (False, True):
        group = [j for j in feats if session.missing_point(j) == flag]
        if group:
            out.append((opts.but(include_missing=flag), group))
    return out


class MomentSums(dict):
    """Per feature, (moments of the centered curves, moments of the curves) of some rows; ``+`` merges two sets of
    rows (what a partition returns, :meth:`pdpx.core.rows.Rows.map_reduce`)."""

    method = ""  # the method that computed the curves

    def __add__(self, other):
        out = MomentSums({j: (c.merged(other[j][0]), f.merged(other[j][1])) for j, (c, f) in self.items()})
        out.method = self.method or other.method
        return out


def _by_partition(session: Session, feats: list, options: PDOptions) -> IceMoments:
    """The moments over rows held in partitions (Dask, Spark): each partition's computed where it is (on the whole
    X's grids: the driver's), only the moments crossing, merged here."""
    parts = session.data.map_reduce(_partition_moments, (feats, _chunk_options(session, feats, options)),
                                    session.sample_weight, model=session.model)
    if not parts:
        raise PdpxError("X has no rows to compute the ICE curves of")
    total = parts[0]
    for more in parts[1:]:
        total = total + more
    if total[feats[0]][0].w <= 0:
        raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
    names = session.adapter.output_names(session.response)
    return IceMoments([total[j] for j in feats], [names[k] for k in session.outputs], total.method,
                      [f"ICE curves computed in each of {len(parts)} {session.data.label} partitions, only their "
                       "moments gathered"])


def _partition_moments(model, part, weights, feats, groups):
    """One partition's (a Spark batch's) :class:`MomentSums` (the task of :func:`_by_partition`)."""
    out = MomentSums()
    w = np.ones(len(part)) if weights is None else np.asarray(weights, dtype=np.float64)
    for opts, group in groups:
        sub = Session(model, part, opts.but(sample_weight=w))
        got = ice_moments(sub, group, opts)
        out.update(zip(group, got.moments))
        out.method = got.method
    return out


@contextlib.contextmanager
def first_warning_only():
    """Re-raise each category of warning raised in the block once (the chunks' sessions warn alike)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    seen = set()
    for w in caught:
        if w.category not in seen:
            seen.add(w.category)
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
