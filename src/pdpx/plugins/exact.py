"""``exact``: brute's answer computed from the tree structure, at tree speed.

For each background row and tree, the leaves the row reaches when its target
features take every grid value: the row follows its own values at splits on
other features and goes both ways at splits on the target features. Each reached
leaf adds its value to the grid cells that reach it (difference arrays, see
:mod:`pdpx.plugins.trees.kernels`). Cost grows with rows x tree size, not rows x
grid points.

Three kernels find the reached leaves (``method_options={"kernel": ...}``; ``auto``
picks):

* ``oblivious``, when every tree is oblivious (each level's nodes test one split, as
  CatBoost's symmetric trees): a row's leaf is one bit per level, one test per level
  (:mod:`pdpx.plugins.trees.oblivious`);
* ``leafsets``, for shallow trees (``auto``: at most 64 leaves each, as in boosted
  models; asked for: at most 64 leaves that the grid reaches): bit masks of
  leaves, a vectorised test per node over blocks of rows
  (:mod:`pdpx.plugins.trees.leafsets`);
* ``partition``, for any tree: rows go down each tree together, each node
  partitioning its segment of row indices (:mod:`pdpx.plugins.trees.partition`).

Then:

* a response linear in the trees (regression, forest probabilities, margins),
  average only: per leaf, the weighted number of rows reaching it; each leaf's box
  is added once, scaled by that number;
* ICE, or a non-linear link (probabilities of boosted classifiers, exp of
  Poisson models): per row, its margins on the grid, the link and the requested
  outputs, summed (and stored as ICE) inside the kernel.

Rows are encoded and passed in chunks that fit the memory budget.

When a session computes many averages of one or two features on the same rows
(``partial_dependence_many``, the report, importance, Friedman's H, scikit-learn's
display), ``exact`` can instead gather *pattern counts* in one pass over the rows
and answer every such set from them without reading the rows again
(the planner, :func:`pdpx.plugins.trees.plan.plan`, decides, ``method_options={"engine": ...}``
forces or forbids it; :mod:`pdpx.plugins.trees.counts_pd` computes). The numbers
are the same; ``res.notes`` says which engine ran.

The kernels are compiled by numba on first use and kept in its on-disk cache. Until
they are, ``method="auto"`` runs ``brute`` instead whenever that is quicker than
compiling, and compiles them in the background (:mod:`pdpx.plugins.trees.jit`).
"""

from __future__ import annotations

import time
from dataclasses import replace

from ..core.hookspecs import hookimpl
from ..core.method import Batch, Method, MethodResult, Request
from ..core.trust import CHECK_ROWS
from .trees import counts_use, engine, fused, jit
from .trees.plan import ExactOptions, PlannedRequest, exact_options, with_plan
from .trees.prep import tree_unavailable


class Exact(Method):
    """``exact``: brute's answer computed from the trees (see the module docstring)."""
    name = "exact"
    equals_brute = True
    cost_rank = 10
    options = ExactOptions

    def unavailable(self, adapter, request):
        why = tree_unavailable(adapter, request)
        if why is None and exact_options(request.options).engine == "counts":
            from .trees.counts_pd import unavailable

            why = unavailable(adapter.tree_model(request.response), request)
            if why:
                why = f"method_options={{'engine': 'counts'}}: {why}; use engine='auto' or 'rows'"
        return why

    def plan(self, adapter, feature_sets):
        """:class:`ExactBatch`: the session's sets may share pattern counts, ``auto`` may wait for compilation."""
        return ExactBatch(self, adapter, feature_sets)

    def reduce_curves(self, adapter, requests, reducer):
        """The fused walk of ``reducer.walk`` (:data:`.trees.fused.WALKS`: ``means``, ``moments``, ``centered``) as
        its planner plans it, or None where it has none (``engine='rows'``, trees it does not fit) or defers while
        its kernels compile in a background process (where none can start, they compile now)."""
        walk = fused.WALKS.get(reducer.walk)
        if walk is None:
            return None
        tm = adapter.tree_model(requests[0].response)
        planned = walk.plan(tm, requests[0], counts_use.compile_seconds)
        if planned is None or (planned.deferral and jit.compile_in_background()):
            return None
        reducer.walked([r.features[0] for r in requests], walk.run(tm, requests, reducer))
        return reducer

    def compute(self, adapter, req: Request) -> MethodResult:
        """``req`` as the planner plans it (:func:`.trees.counts_use.decide`: the session's sets, the counts kept,
        the compile state), then executed; a request that came through no batch (one Dask partition's rows, a
        direct call) has no planned sets: its rows are walked, or counts already kept answer it."""
        if not isinstance(req, PlannedRequest):
            req = with_plan(req, ())
        tm = adapter.tree_model(req.response)
        compiling = jit.compiling(tm, req)
        t0 = time.perf_counter()
        planned = counts_use.decide(adapter.model, tm, req)
        if planned.deferral:  # counts that would pay: their kernels compile in the background meanwhile
            jit.compile_in_background()
        if planned.source == "rows":
            res = engine.exact(tm, req, planned)
        else:
            res = counts_use.run(adapter.model, tm, req, planned)
        if compiling:
            jit.compiled_now(compiling, time.perf_counter() - t0)
        # the check on a sample (its few rows) may have compiled them: the call's own result says so
        note = jit.compiled_said(deliver=len(req.X) > CHECK_ROWS)
        if note is not None and note not in res.notes:
            res.notes.append(note)
        return jit.noted(res)


class ExactBatch(Batch):
    """``exact``'s plan for one session's feature sets (:meth:`Exact.plan`).

    Every request it runs carries the sets and the memo the session's requests share
    (:class:`~.trees.plan.PlannedRequest`): pattern counts are weighed once for all the sets
    (:func:`.trees.plan.plan`); with Dask, gathered partition by partition
    (:func:`.trees.counts_use.choose_partitioned`). ``auto`` passes ``exact`` by while its
    kernels would compile for longer than brute takes (:func:`.trees.jit.defer_reason`, reading
    the planner's kernels), and a request whose rows are walked alone leaves the GIL free
    (:func:`.trees.plan.walks_rows_alone`).
    """

    def __init__(self, method, adapter, feature_sets=()):
        super().__init__(method, adapter, feature_sets)
        self.memo: dict = {}

    def planned(self, req) -> PlannedRequest:
        """``req`` with this session's sets (its own alone when the session planned none) and memo."""
        if isinstance(req, PlannedRequest) and req.memo is self.memo:
            return req
        return with_plan(req, self.feature_sets or (tuple(req.features),), self.memo)

    def compute(self, adapter, req):
        """``exact``'s result for ``req``, planned with this session's sets; rows in Dask or Spark partitions
        (``req.rows`` elsewhere): the averages from pattern counts each partition gathers, when worth it, else
        None (every partition walks its rows)."""
        if req.rows is not None and not req.rows.here:
            return self._whole(adapter, replace(req, rows=None), req.rows)
        return self.method.compute(adapter, self.planned(req))

    def deferred(self, req):
        """When the kernels would first compile for longer than brute takes (see :mod:`.trees.jit`)."""
        return jit.defer_reason(self.adapter, req)

    def beside(self, req):
        """One feature set: its rows are walked in compiled kernels without the GIL. (A session planning several
        may answer them from pattern counts in moments, where a check beside them would only take turns.)"""
        from .trees.plan import walks_rows_alone

        return walks_rows_alone(self.planned(req))

    def _whole(self, adapter, req, data):
        """Rows in partitions (``data``): the averages from pattern counts each partition gathers, or None."""
        req = self.planned(req)
        tm = adapter.tree_model(req.response)
        choice = counts_use.choose_partitioned(adapter.model, tm, req, data, req.memory_budget)
        if choice is None:
            return None
        from .trees.counts_pd import partial_dependence

        res = partial_dependence(tm, choice.counts, req)
        res.notes.append(choice.note)
        return res


@hookimpl
def pdpx_register_methods(register):
    """Register ``exact``."""
    register(Exact())
