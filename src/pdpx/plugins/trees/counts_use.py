"""When ``exact`` answers from pattern counts instead of walking the rows, and the counts kept with the model.

A gather (:func:`.counts.gather`) costs a few of ``exact``'s row walks; after it,
every 1-way (order 1) or 1- and 2-way (order 2) average on the same rows costs
O(leaves + grid). So the counts pay off when a session computes many such
feature sets (``PlannedRequest.planned``, :mod:`.plan`: the sets a session told
``exact``'s batch, :class:`~pdpx.plugins.exact.ExactBatch`), or when they are already kept.

``method_options={"engine": ...}`` of ``exact``:

* ``"auto"`` (default): counts already kept for this model, rows and weights ->
  use them; otherwise gather when the estimated gather costs less than walking
  the rows once per planned set (:data:`GATHER_SETS`; when every tree takes the
  ``leafsets`` kernel, an order-2 gather counts only the planned pairs and costs
  :data:`PAIR_SETS` per pair over order 1), the counts fit half the memory budget and
  their kernels are compiled or compiling them costs less than the row walks (the
  compile state: :func:`compile_seconds`); else the row kernels;
* ``"counts"``: always from counts (gathered now if not kept); an error says why
  when they cannot answer (ICE, a non-linear link, more than two features);
* ``"rows"``: never (the row kernels, as before counts existed).

The planner (:func:`.plan.plan`) decides all of it; :func:`decide` hands it the counts kept
(:class:`Kept`) and the compile state, and :func:`run` executes a plan answering from counts.
The numbers are the same either way (both equal brute's); ``res.notes`` says
which engine ran.

Counts are kept (:data:`counts_cache`) with the fitted model while it lives (its
entry in :data:`pdpx.core.ir.model_cache`), under a digest of everything they
depend on: the trees' routing (:func:`structure_digest`: splits, thresholds,
missing-value and category rules; a refit model splits elsewhere), how the model
encodes the rows (:func:`encoding_digest`), the rows' values, column names and
order, and the weights (:func:`digest`). Counts gathered at order 2 answer 1-way
requests too, and the pairs they counted (every pair, or the planned ones). All
counts kept take at most the memory budget; the least recently used go first.
Within one session the plan is weighed once, at its first request.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .plan import (  # noqa: F401 - the planner's rules, named here for their users too
    ENGINES,
    GATHER_SETS,
    PAIR_SETS,
    ROW_TREE_SECONDS,
    Plan,
    counts_bytes,
    counts_fit,
    counts_order,
    exact_options,
    from_counts,
    gather_order,
    plan,
    plan_partitioned,
    planned_pairs,
    settle,
    settle_partitioned,
)
from .plan import planned_sets as _sets

_MEMO = "pdpx.plugins.trees.counts_use"
#: Rows whose encoding is part of the key of kept counts (see :func:`encoding_digest`).
ENCODED_ROWS = 256


def compile_seconds(kernels) -> float:
    """The compile state the planner reads (:func:`.plan.plan`'s ``compile_seconds``): seconds to compile those
    of ``kernels`` neither compiled here nor in numba's cache (:func:`.jit.compile_seconds`); when that cannot be
    told, too long to wait for (the rows are walked)."""
    from . import jit

    try:
        return jit.compile_seconds(kernels)
    except Exception:  # noqa: BLE001 - cannot tell which: treat as not compiled (auto walks the rows)
        return float("inf")


class _Token:
    """Stands for one live model object in :data:`counts_cache` (kept by ``model_cache`` with the model).

    The object, not its contents: the counts' own key has the digest of the trees they were gathered on
    (:func:`structure_digest`, read from the trees pdpx has just read, which follow the model's fingerprint),
    so counts of a model changed in place are never used for it; :meth:`CountsCache.put` drops them."""


class CountsCache:
    """Pattern counts kept per fitted model (while it lives) and per digest of trees, rows and weights.

    The model's token comes from :data:`pdpx.core.ir.model_cache`, so the counts live
    as long as the model; the key adds a digest of the tree structure the counts
    were gathered on (:func:`structure_digest`: a refit model splits differently)
    and of the rows and weights (:func:`digest`). All counts kept take at most the
    budget given to :meth:`put`; the least recently used go first.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: OrderedDict = OrderedDict()  # (id(token), trees, rows) -> counts, oldest first
        self._tokens: set[int] = set()

    @property
    def nbytes(self) -> int:
        """Bytes of every counts kept."""
        with self._lock:
            return int(sum(c.nbytes for c in self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def token(model) -> _Token:
        """The token of ``model`` (the same object while the model lives)."""
        from ...core.ir import model_cache

        return model_cache.get(model, "pdpx.plugins.trees.counts_use", (), _Token)

    def holds(self, model) -> bool:
        """Whether anything is kept for ``model`` (then a lookup is worth the rows' digest)."""
        if not self._entries:  # nothing kept at all: no token asked for
            return False
        key = id(self.token(model))
        with self._lock:
            return any(k[0] == key for k in self._entries)

    def get(self, model, trees: str, rows: str, order: int, features=None):
        """The counts kept for ``model``'s trees ``trees`` and rows ``rows``, answering ``order`` features (and
        ``features``, when given: counts gathered for some pairs answer only those), or None."""
        key = (id(self.token(model)), trees, rows)
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or hit.order < order or (features is not None and not hit.answers(features)):
                return None
            self._entries.move_to_end(key)
            return hit

    def put(self, model, trees: str, rows: str, counts, budget: int) -> None:
        """Keep ``counts`` (dropping the oldest counts while all would exceed ``budget`` bytes).

        Counts of this model gathered on other trees (another :func:`structure_digest`: the model was changed in
        place or refitted) are dropped: they answer only a model that is gone."""
        token = self.token(model)
        key = (id(token), trees, rows)
        structure = trees.rsplit(":", 1)[0]
        with self._lock:
            if id(token) not in self._tokens:
                weakref.finalize(token, self._forget, id(token))
                self._tokens.add(id(token))
            for k in [k for k in self._entries if k[0] == id(token) and k[1].rsplit(":", 1)[0] != structure]:
                del self._entries[k]
            self._entries.pop(key, None)
            total = sum(c.nbytes for c in self._entries.values())
            while self._entries and total + counts.nbytes > budget:
                _, old = self._entries.popitem(last=False)
                total -= old.nbytes
            if counts.nbytes <= budget:
                self._entries[key] = counts

    def _forget(self, token_id: int) -> None:
        with self._lock:
            self._tokens.discard(token_id)
            for k in [k for k in self._entries if k[0] == token_id]:
                del self._entries[k]

    def clear(self) -> None:
        """Forget every counts kept."""
        with self._lock:
            self._entries.clear()


#: The process-wide counts cache of ``exact``.
counts_cache = CountsCache()


def structure_digest(tm) -> str:
    """A digest of everything in ``tm``'s trees a row's route depends on (not the leaf values)."""
    from ...core.treesum import TreeSum

    if isinstance(tm, TreeSum):
        return "sum:" + ",".join(f"{structure_digest(t.model)}@{t.columns}" for t in tm.terms)
    ens = tm.ensemble

    def build():
        h = hashlib.blake2b(digest_size=20)
        for arr in (ens.left, ens.right, ens.feature, ens.threshold, ens.missing_left, ens.tree_start, ens.nan_mode,
                    ens.cat_offset, ens.cat_nwords, ens.cat_words):
            h.update(b"-" if arr is None else np.ascontiguousarray(arr).tobytes())
        h.update(repr((ens.comparison, ens.float32_input, ens.categories_go_left, ens.n_features)).encode())
        return h.hexdigest()

    return ens.derived("pdpx.plugins.trees.counts_use.structure", build)


def digest(X: pd.DataFrame, sample_weight, shared=None) -> str:
    """A digest of the rows' values, column names and order, and the weights (what the counts depend on).

    ``shared``: the validated rows ``X`` is the frame of (``Request.rows``, a :class:`~pdpx.rows.local.LocalData`
    the sessions of one call may share): the rows' part is computed once for all of them (a report hashes its
    frame once, not once per session)."""
    rows = _rows_digest(X) if shared is None else shared.once(X, _MEMO + ".rows", lambda: _rows_digest(X))
    h = hashlib.blake2b(digest_size=20)
    h.update(rows.encode())
    if sample_weight is None:
        h.update(b"unweighted")
    else:
        h.update(np.ascontiguousarray(sample_weight, dtype=np.float64).tobytes())
    return h.hexdigest()


def _rows_digest(X: pd.DataFrame) -> str:
    h = hashlib.blake2b(digest_size=20)
    h.update(repr((len(X), [str(c) for c in X.columns])).encode())
    for name in X.columns:
        col = X[name]
        h.update(str(col.dtype).encode())
        if isinstance(col.dtype, pd.CategoricalDtype):
            h.update(repr(list(col.cat.categories)).encode())
            h.update(np.ascontiguousarray(col.cat.codes.to_numpy()).tobytes())
        elif isinstance(col.dtype, np.dtype) and col.dtype.kind in "biufcmM":
            h.update(np.ascontiguousarray(col.to_numpy()).tobytes())
        else:
            h.update(pd.util.hash_pandas_object(col, index=False).to_numpy().tobytes())
    return h.hexdigest()


def encoding_digest(tm, X: pd.DataFrame) -> str:
    """A digest of how ``tm`` encodes the first rows of ``X`` (its category codes: part of the fitted state)."""
    from ...core.treesum import TreeSum

    head = X.iloc[:ENCODED_ROWS]
    h = hashlib.blake2b(digest_size=20)
    terms = tm.terms if isinstance(tm, TreeSum) else None
    for model, cols in ([(t.model, t.columns) for t in terms] if terms is not None else [(tm, None)]):
        part = head if cols is None else head.iloc[:, cols]
        h.update(np.ascontiguousarray(model.encode(part), dtype=np.float64).tobytes())
    return h.hexdigest()


def _trees_digest(tm, req) -> str:
    """:func:`structure_digest` and :func:`encoding_digest` of ``tm`` on the request's rows, once per session."""
    memo = req.memo.get(_MEMO + ".trees")
    if memo is not None and memo[0] is tm and memo[1] is req.X:
        return memo[2]
    d = structure_digest(tm) + ":" + encoding_digest(tm, req.X)
    req.memo[_MEMO + ".trees"] = (tm, req.X, d)
    return d


def _session_digest(req) -> str:
    """:func:`digest` of the request's rows and weights, computed once per session (``req.memo``)."""
    memo = req.memo.get(_MEMO + ".digest")
    if memo is not None and memo[0] is req.X and memo[1] is req.sample_weight:
        return memo[2]
    d = digest(req.X, req.sample_weight, req.rows)
    req.memo[_MEMO + ".digest"] = (req.X, req.sample_weight, d)
    return d


class Kept:
    """The counts cache (:data:`counts_cache`) as the planner sees it for one request: ``holds`` (anything kept
    for the model), ``get(order, features)`` (the counts kept for these trees, rows and weights) and ``put``; the
    digests are computed on first need, once per session."""

    def __init__(self, model, tm, req, cache: CountsCache | None = None):
        self.model, self.tm, self.req = model, tm, req
        self.cache = counts_cache if cache is None else cache

    @property
    def holds(self) -> bool:
        return self.cache.holds(self.model)

    def get(self, order: int, features=None):
        return self.cache.get(self.model, _trees_digest(self.tm, self.req), _session_digest(self.req), order,
                              features)

    def put(self, counts, budget: int) -> None:
        self.cache.put(self.model, _trees_digest(self.tm, self.req), _session_digest(self.req), counts, budget)


def decide(model, tm, req, prep=None) -> Plan:
    """:func:`.plan.plan` for ``req`` on ``tm`` (the trees of ``model``), with the counts kept for the model
    (:class:`Kept`) and the compile state (:func:`compile_seconds`)."""
    return plan(tm, req, Kept(model, tm, req), compile_seconds, prep)


def run(model, tm, req, planned: Plan):
    """The result of a plan answering from pattern counts (``source`` ``"kept"`` or ``"gather"``): the counts'
    partial dependence, and the note saying where they came from. A gather runs the plan's kernel
    (:func:`.counts.gather`), keeps the counts with the model and settles them for the session."""
    from .counts import gather
    from .counts_pd import partial_dependence

    counts, note = planned.counts, planned.note
    if planned.source == "gather":
        order = planned.order
        pairs = planned_pairs(req) if order == 2 else None  # the leafsets kernel counts only these
        counts = gather(tm, req.X, req.sample_weight, order=order, memory_budget=req.memory_budget,
                        n_jobs=req.n_jobs, pairs=pairs, plan=planned)
        Kept(model, tm, req).put(counts, req.memory_budget)
        ones, twos = _sets(req)
        only = "" if counts.pairs is None else f", counting only its {len(counts.pairs)} pair(s)"
        note = (f"exact, from pattern counts gathered in one pass over the {len(req.X):,} rows (order "
                f"{order}{only}) for the {ones + twos} feature set(s) of this call")
        settle(req, tm, replace(from_counts(tm, counts), note=note))
    res = partial_dependence(tm, counts, req)
    res.notes.append(note)
    return res


@dataclass
class Choice:
    """The counts to answer a request from, and the note saying where they came from (Dask's partitions)."""

    counts: object
    note: str


def choose_partitioned(model, tm, req, data, budget: int | None = None) -> Choice | None:
    """The counts ``exact`` answers ``req`` from when the rows are partitioned elsewhere (``data``: a
    ``DaskData``) as the planner plans it (:func:`.plan.plan_partitioned`): gathered partition by partition
    (:meth:`~pdpx.rows.dask.DaskData.gather_counts`: only the counts travel) and settled for the session, or
    None: every partition walks its rows for this feature set. ``budget``: the request's memory budget (the
    plan's)."""
    from .counts import gather_task

    planned = plan_partitioned(tm, req, data)
    if planned.source == "rows":
        return None
    if planned.source == "kept":
        return Choice(planned.counts, planned.note)
    order = planned.order
    counts = data.gather_counts(model, req.response, order, req.memory_budget, task=gather_task,
                                sample_weight=req.sample_weight, progress=req.progress)
    ones, twos = _sets(req)
    note = (f"exact, from pattern counts gathered partition by partition over the {data.n_rows:,} rows (order "
            f"{order}; only the counts travelled) for the {ones + twos} feature set(s) of this call")
    settle_partitioned(req, data, tm, replace(from_counts(tm, counts), note=note))
    return Choice(counts, note)
