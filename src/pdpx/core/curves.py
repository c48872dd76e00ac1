"""Every row's ICE curves reduced as they come: the protocol :class:`CurveReducer`, the driver :func:`reduce_curves`.

The fast measures need something of every row's ICE curve of several 1-way features, never the
rows x grid matrix of every feature at once: Friedman's overall H each row's curve averaged with
the cells' shares (:class:`CurveMeans`), heterogeneity the curves' moments over the rows
(:class:`CurveMoments`), regions every row's centered curve (:class:`CenteredCurves`). A reducer
says what it keeps; the driver brings the curves, the first of:

1. **the method's fused walk**: :meth:`pdpx.core.method.Method.reduce_curves` fills the reducer
   from one pass over the rows, never forming the curves (``exact`` offers a walk per
   :attr:`CurveReducer.walk` name: ``"means"``, ``"moments"``, ``"centered"``);
2. **ICE chunks from the session**: the curves of a chunk of rows at a time (the chunk sized so its
   curves take a quarter of the memory budget), on the session's grids, each handed to
   :meth:`CurveReducer.add`;
3. **per partition** (rows held in Dask or Spark partitions): 1 or 2 where each partition's rows are
   (:meth:`pdpx.core.rows.Rows.map_reduce`), only the partitions' states crossing, merged here
   (:meth:`CurveReducer.merge`).

So a new fast measure is one reducer (``start``, ``add``, ``merge``, ``finish``) and its
presentation; a method may add a fused walk for it (``docs/plugins.md``). Bands of the curves or
survival curves are further reducers of the same kind.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .config import config_context
from .dates import is_date_type
from .errors import PdpxError
from .scratch import scratch
from .session import Session

#: The ICE curves of one chunk of rows take at most 1 / ICE_SHARE of the memory budget (the chunk's copies: the
#: method's arrays, the result's curves and the reducer's centered or weighted copy, with the state's own arrays).
ICE_SHARE = 6
#: The ways the driver may bring the curves, in the order it tries them (rows held here).
WAYS = ("walk", "chunks")
#: Options of partial_dependence :func:`reduce_ice` refuses (it computes every row's uncentered curves itself).
REFUSED = ("kind", "centered", "ice_sample", "by", "by_bins", "interval", "n_boot")


@dataclass
class CurvePart:
    """The rows one reducer state covers: ``frame`` (a pandas frame of the model's columns), their ``weights``
    (float64, ones without ``sample_weight``), each feature's grid size ``sizes`` and ``n_outputs``."""

    frame: pd.DataFrame
    weights: np.ndarray
    sizes: dict
    n_outputs: int

    @property
    def n_rows(self) -> int:
        return len(self.frame)


class CurveReducer:
    """What a measure keeps of every row's ICE curves (the protocol of :func:`reduce_curves`).

    A reducer object holds its settings (the shares of :class:`CurveMeans`, ...); :meth:`start` returns a
    fresh state for some rows, :meth:`add` takes a chunk of their curves, :meth:`merge` adds the state of other
    rows (another partition's) and :meth:`finish` gives the measure's value. A reducer whose :attr:`walk` names a
    fused walk also takes that walk's output (:meth:`walked`): a method's
    :meth:`~pdpx.core.method.Method.reduce_curves` calls it.
    """

    #: The fused walk a method may offer for this reducer (None: the curves only)
    walk: ClassVar[str | None] = None
    #: Bytes the started state holds while the curves are computed (the chunks share the rest of the budget)
    held: int = 0

    def start(self, part: CurvePart) -> CurveReducer:
        """A fresh, empty state for the rows of ``part`` (the settings kept)."""
        raise NotImplementedError

    def add(self, rows: np.ndarray, ice: dict) -> None:
        """Take the curves of the rows at positions ``rows`` of the part: ``ice[j]`` (n_outputs, len(rows), G_j),
        uncentered, for some of the features (each feature's curves of a chunk come once)."""
        raise NotImplementedError

    def merge(self, other: CurveReducer) -> CurveReducer:
        """The state of both sets of rows."""
        raise NotImplementedError

    def finish(self) -> Any:
        """The measure's value of the rows taken."""
        raise NotImplementedError

    def sealed(self) -> CurveReducer:
        """The state as it leaves its partition, to be merged (default: itself without its rows, which stay where
        they are); a reducer keeping a value per row reduces it there to the sums it merges (only those travel)."""
        out = copy.copy(self)
        out.part = None
        return out

    def walked(self, features: list, out) -> None:
        """Take the output of the fused walk :attr:`walk` over every row of the part for ``features`` (as
        ``docs/plugins.md`` describes each walk's output)."""
        raise NotImplementedError

    def __add__(self, other: CurveReducer) -> CurveReducer:  # Spark adds a partition's batches' results
        return self.merge(other)


def fresh(reducer: CurveReducer, part: CurvePart) -> CurveReducer:
    """A shallow copy of ``reducer`` (its settings) to hold a new state of ``part``."""
    out = copy.copy(reducer)
    out.part = part
    return out


# ------------------------------------------------------------------ the reducers the measures use
class Moments:
    """Running weighted moments of curves over rows, per output and grid point: weight ``w``, ``mean`` (K, G) and
    ``m2`` (K, G), the weighted sum of squared deviations from the mean."""

    def __init__(self, w: float, mean: np.ndarray, m2: np.ndarray):
        self.w, self.mean, self.m2 = float(w), mean, m2

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
        """The moments of the union of the two sets of rows (Chan et al.'s pairwise update)."""
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


class CurveMoments(CurveReducer):
    """Heterogeneity's reducer: per feature, the weighted moments over the rows of the curves centered on their own
    means (``finish()[j][0]``) and of the curves (``[1]``; after the walk its ``m2`` is NaN: not computed)."""

    walk = "moments"

    def start(self, part: CurvePart) -> CurveMoments:
        out = fresh(self, part)
        out.moments = {}
        return out

    def add(self, rows, ice):
        w = self.part.weights[rows]
        for j, curves in ice.items():
            both = (Moments.of(centered_rows(curves), w), Moments.of(curves, w))
            old = self.moments.get(j)
            self.moments[j] = both if old is None else (old[0].merged(both[0]), old[1].merged(both[1]))

    def merge(self, other):
        out = fresh(self, self.part)
        out.moments = {j: (c.merged(other.moments[j][0]), f.merged(other.moments[j][1])) if j in other.moments
                       else (c, f) for j, (c, f) in self.moments.items()}
        out.moments.update({j: m for j, m in other.moments.items() if j not in self.moments})
        return out

    def walked(self, features, out):
        """``out``: per feature ``(W, mean_f, mean_c, m2_c)`` (the rows' weight; (K, G) arrays)."""
        for j, (W, mean_f, mean_c, m2_c) in zip(features, out):
            self.moments[j] = (Moments(W, mean_c, m2_c), Moments(W, mean_f, np.full_like(mean_f, np.nan)))

    def finish(self) -> dict:
        return self.moments


class CurveMeans(CurveReducer):
    """Friedman's overall H's reducer: every row's curve of feature ``j`` averaged with ``shares[j]`` (one weight per
    grid point, summing to 1), and ``f`` the response at each row, read off the curve of the first feature at the
    row's own grid position ``at`` (one per row of the part). ``finish()``: ``({j: (K, n)}, f (K, n))``."""

    walk = "means"

    def __init__(self, shares: dict, at: np.ndarray):
        self.shares = {j: np.asarray(s, dtype=np.float64).reshape(-1) for j, s in shares.items()}
        self.at = np.asarray(at)

    def start(self, part: CurvePart) -> CurveMeans:
        for j, s in self.shares.items():
            if len(s) != part.sizes[j]:
                raise PdpxError(f"CurveMeans: {len(s)} shares for the {part.sizes[j]} grid points of feature "
                                f"{part.frame.columns[j]!r}; pass one share per grid point")
        out = fresh(self, part)
        K, n = part.n_outputs, part.n_rows
        out.means = {j: np.empty((K, n)) for j in self.shares}
        out.f = np.empty((K, n))
        return out

    def add(self, rows, ice):
        first = next(iter(self.shares))
        for j, curves in ice.items():
            self.means[j][:, rows] = curves @ self.shares[j]  # shares first: a mean never overflows
            if j == first:
                self.f[:, rows] = curves[:, np.arange(len(rows)), self.at[rows]]

    def merge(self, other):
        raise PdpxError("CurveMeans keeps a value per row: reduce it where the rows are (a reducer of sums merges)")

    def walked(self, features, out):
        """``out``: ``([means (K, n) per feature], f (K, n))``."""
        means, f = out
        for j, m in zip(features, means):
            self.means[j] = m
        self.f = f

    def finish(self) -> tuple[dict, np.ndarray]:
        return self.means, self.f


@dataclass
class Centered:
    """One feature's curves over every row (:class:`CenteredCurves`): centered ``C`` (n, K * G), each row's mean
    ``rowmean`` (K, n), the PD ``average`` (K, G), ``heterogeneity`` per output, each row's sum of ``C``'s squares
    when the walk gave it (else None)."""

    C: np.ndarray
    rowmean: np.ndarray
    average: np.ndarray
    heterogeneity: np.ndarray
    squares: np.ndarray | None = None


class CenteredCurves(CurveReducer):
    """Regions' reducer: every row's curve centered on its own mean, kept (``finish()``: ``{j: Centered}``).

    The walk writes every feature's curves into arrays of (features, rows, K * G_max) (a memory map of its own,
    :func:`pdpx.core.scratch.scratch`); the chunks, one feature's (rows, K, G) array."""

    walk = "centered"

    def start(self, part: CurvePart) -> CenteredCurves:
        out = fresh(self, part)
        out.moments, out.ice, out.keep = {}, {}, None
        out.held = 8 * part.n_rows * part.n_outputs * sum(part.sizes.values())
        return out

    def buffers(self, features: list) -> tuple:
        """The arrays the walk writes (see ``docs/plugins.md``): ``(curves, row_stats)``."""
        K, n, G = self.part.n_outputs, self.part.n_rows, max(self.part.sizes[j] for j in features)
        self.keep = (scratch((len(features), n, K * G)), scratch((len(features), K + 1, n)))  # written once
        return self.keep

    def add(self, rows, ice):
        w = self.part.weights[rows]
        for j, curves in ice.items():
            if j not in self.ice:  # rows first: centered in place, it is C (no copy)
                self.ice[j] = np.empty((self.part.n_rows,) + curves.shape[::2])
            self.ice[j][rows] = curves.transpose(1, 0, 2)
            both = (Moments.of(centered_rows(curves), w), Moments.of(curves, w))
            old = self.moments.get(j)
            self.moments[j] = both if old is None else (old[0].merged(both[0]), old[1].merged(both[1]))

    def merge(self, other):
        raise PdpxError("CenteredCurves keeps every row's curve: it runs where the rows are")

    def walked(self, features, out):
        """``out``: per feature ``(W, mean_f, mean_c, m2_c)``; the curves are in :meth:`buffers`."""
        K, sizes = self.part.n_outputs, self.part.sizes
        G = max(sizes[j] for j in features)
        curves, stats = self.keep
        for k, (j, (W, mean_f, mean_c, m2_c)) in enumerate(zip(features, out)):
            C = curves[k] if sizes[j] == G else np.ascontiguousarray(curves[k][:, :K * sizes[j]])
            self.ice[j] = Centered(C, stats[k, :K], mean_f, Moments(W, mean_c, m2_c).variance.mean(axis=1),
                                   stats[k, K])

    def finish(self) -> dict:
        out = {}
        for j, got in self.ice.items():
            if isinstance(got, Centered):
                out[j] = got
                continue
            n, K, G = got.shape
            rowmean = got.mean(axis=2)  # (n, K)
            got -= rowmean[:, :, None]
            centered, plain = self.moments[j]
            out[j] = Centered(got.reshape(n, K * G), np.ascontiguousarray(rowmean.T), plain.mean,
                              centered.variance.mean(axis=1))
        self.ice = {}
        return out


# ------------------------------------------------------------------ the driver
@dataclass
class Reduced:
    """What :func:`reduce_curves` returns: the reducer's ``value`` (its :meth:`~CurveReducer.finish`), the
    ``method`` that computed the curves, the ``outputs`` (names), ``notes`` of the curves' runs, ``how`` they came
    (``"walk"``, ``"chunks"``, ``"partitions"``), ``parts``: the partitions merged, and (:func:`reduce_ice`) the
    ``features``' positions."""

    value: Any
    method: str
    outputs: list
    notes: list = field(default_factory=list)
    how: str = "walk"
    parts: int = 1
    features: list = field(default_factory=list)


def reduce_curves(session: Session, features: list, reducer: CurveReducer, *, ways: tuple = WAYS,
                  share: int | None = None) -> Reduced | None:
    """``reducer`` over every row of the session's X, the curves of the 1-way ``features`` on the session's grids:
    from the method's fused walk, else chunks of ICE curves taking ``1 / share`` (default :data:`ICE_SHARE`) of
    the memory budget (``ways`` may allow only one: None when it does not apply), else, rows held elsewhere, per
    partition (:func:`reduce_partitions`)."""
    if not session.data.here:
        return reduce_partitions(session.data, session.model, features, curve_groups(session, features), reducer,
                                 session.sample_weight, _sizes(session, features), output_names(session))
    state = reducer.start(part_of(session, features))
    method = session.fused(features, state) if "walk" in ways else None
    if method is not None:
        return Reduced(state.finish(), method, output_names(session))
    if "chunks" not in ways:
        return None
    method, notes = _chunks(session, features, state, share)
    return Reduced(state.finish(), method, output_names(session), notes, "chunks")


def reduce_ice(model, X, features, reducer: CurveReducer, **pd_options) -> Reduced:
    """``reducer`` over every row's ICE curves of each of ``features`` (names or positions, each 1-way) of ``model``
    on ``X``: :func:`reduce_curves` on a session of the options of :func:`pdpx.partial_dependence` given
    (``grid_resolution``, ``custom_values``, ``sample_weight``, ``method``, ``memory_budget``, ...). What a new
    measure calls with its reducer; ``value`` is the reducer's :meth:`~CurveReducer.finish`, by position of
    each feature in the model's columns (``Reduced.features``: those positions, in the order given)."""
    refused = sorted(set(pd_options) & set(REFUSED))
    if refused:
        raise PdpxError(f"reduce_ice(): option(s) {refused} do not apply (a reducer takes every row's uncentered ICE "
                        "curves); leave them out")
    session = Session(model, X, function="reduce_ice", **{**pd_options, "kind": "individual", "centered": False})
    positions = [session.resolve_features([f])[0] for f in ([features] if isinstance(features, str) else features)]
    got = reduce_curves(session, positions, reducer)
    got.features = positions
    return got


def output_names(session: Session) -> list:
    """The names of the session's outputs."""
    names = session.adapter.output_names(session.response)
    return [names[k] for k in session.outputs]


def _sizes(session: Session, features: list) -> dict:
    return {j: len(session.grid_for(j)) for j in features}


def part_of(session: Session, features: list) -> CurvePart:
    """The :class:`CurvePart` of every row of the session (held here)."""
    w = np.ones(session.n_rows) if session.sample_weight is None else np.asarray(session.sample_weight, np.float64)
    return CurvePart(session.X, w, _sizes(session, features), len(session.outputs))


def _chunks(session: Session, features: list, state: CurveReducer, share: int | None = None) -> tuple[str, list]:
    """Hand ``state`` every row's curves a chunk of rows at a time: (the method, the runs' notes)."""
    n, K = session.n_rows, len(session.outputs)
    G = max(len(session.grid_for(j)) for j in features)
    budget = session.memory_budget
    options = session.options.but(rows=None)
    if state.held:  # the state's arrays take part of the budget: the sessions computing the chunks get the rest
        budget = max(budget - state.held, budget // 8)
        session = Session.of(replace(session.inputs, memory_budget=budget), session.grids)
        options = options.but(memory_budget=budget)
    chunk = int(max(1, min(n, budget // ((share or ICE_SHARE) * 8 * K * G))))
    method, notes = "", []
    with first_warning_only():
        for s in range(0, n, chunk):
            rows = np.arange(s, min(n, s + chunk))
            for part, group in _sessions(session, rows, features, options):
                part.plan([[j] for j in group])
                for j in group:
                    res = part.compute([j])
                    method = res.method
                    notes += [x for x in res.notes if x not in notes]
                    state.add(rows, {j: np.asarray(res.individual, dtype=np.float64)})
    if chunk < n:
        notes.append(f"ICE curves computed {chunk:,} rows at a time (the memory budget)")
    return method, notes


def _sessions(session: Session, rows: np.ndarray, features: list, options) -> list:
    """``[(session, features)]`` computing ``features`` on ``rows`` of the session's X: the session itself for every
    row when it computes ICE curves, else sessions on the rows with the session's grids (:func:`curve_groups`)."""
    if len(rows) == session.n_rows and session.inputs.request_kind in ("individual", "both"):
        return [(session, features)]
    part = session.X if len(rows) == session.n_rows else session.X.iloc[rows]
    return [(Session(session.model, part, opts), group) for opts, group in groups_of(options, features, *_grids(
        session, features))]


def _grids(session: Session, features: list) -> tuple[dict, dict, list, list]:
    """(each feature's grid without the missing-value point, whether it has one, the columns' names, which are
    categorical)."""
    values, missing = {}, {}
    for j in features:
        grid = session.grid_for(j)
        missing[j] = bool(session.missing_point(j))
        if missing[j]:  # a part's session appends the missing point itself
            grid = grid[:-1]
        values[j] = list(grid) if session.categorical[j] or is_date_type(grid.dtype) else grid
    return values, missing, list(session.names), list(session.categorical)


def curve_groups(session: Session, features: list) -> list:
    """``[(options, features)]`` of sessions on some of the session's rows that compute ``features`` on its grids
    (:func:`groups_of`)."""
    return groups_of(session.options.but(rows=None), features, *_grids(session, features))


def groups_of(options, features: list, values: dict, missing: dict, names: list, categorical: list) -> list:
    """``[(options, features)]`` of sessions on a part of the rows computing ``features`` on the grids ``values``
    (custom values), those whose grid ends with the missing-value point (``missing``) apart: their part may hold
    no missing value."""
    cats = [names[j] for j in range(len(names)) if categorical[j]]
    opts = options.but(kind="individual", centered=False, progress=False, sample_weight=None,
                       custom_values={names[j]: values[j] for j in features}, categorical_features=cats or None,
                       grid="uniform")
    out = []
    for flag in (False, True):
        group = [j for j in features if missing[j] == flag]
        if group:
            out.append((opts.but(include_missing=flag), group))
    return out


class _PartState(tuple):
    """(a partition's reducer state, the method, the notes): ``+`` merges two (Spark adds a partition's batches)."""

    def __add__(self, other):
        return _PartState((self[0].merge(other[0]), self[1] or other[1], self[2]))


def reduce_partitions(rows, model, features: list, groups: list, reducer: CurveReducer, weights, sizes: dict,
                      outputs: list, *, trusted: bool = False) -> Reduced:
    """``reducer`` over rows held in partitions (a :class:`~pdpx.core.rows.Rows` elsewhere: Dask, Spark): each
    partition's state computed where it is (sessions of ``groups``, :func:`groups_of`: the driver's grids), only
    the states crossing, merged here. ``trusted``: the driver checked the method already (the tasks do not ask the
    model's own predict, which a model living in the driver cannot answer there)."""
    got = rows.map_reduce(_partition_task, (features, groups, reducer, sizes, len(outputs), trusted), weights,
                          model=model)
    if not got:
        raise PdpxError("X has no rows to compute the ICE curves of; pass at least one")
    total = got[0]
    for more in got[1:]:
        total = total + more
    return Reduced(total[0].finish(), total[1], outputs, list(total[2]), "partitions", len(got))


def _partition_task(model, part, weights, features, groups, reducer, sizes, K, trusted):
    """One partition's (a Spark batch's) reducer state (the task of :func:`reduce_partitions`)."""
    part = part.reset_index(drop=True)
    w = np.ones(len(part)) if weights is None else np.asarray(weights, dtype=np.float64)
    state = reducer.start(CurvePart(part, w, sizes, K))
    method, notes = "", []
    if w.sum() <= 0:  # rows of no weight add nothing (and a session refuses them)
        return _PartState((state.sealed(), method, notes))
    with config_context(check_trees=False) if trusted else contextlib.nullcontext():
        for opts, group in groups:
            sub = Session(model, part, opts.but(sample_weight=w))
            method = sub.fused(group, state)
            if method is None:
                method, more = _chunks(sub, group, state)
                notes += more
    return _PartState((state.sealed(), method, notes))


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
