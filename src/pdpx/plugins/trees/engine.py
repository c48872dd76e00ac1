"""The two tree computations, given a tree model and a request: brute's exact answer, and recursion.

The registered methods (:mod:`pdpx.plugins.exact`, :mod:`pdpx.plugins.recursion`)
decide *whether* they can run and call :func:`exact` and :func:`recursion`; the warm-up
(:mod:`.warmup`) calls them on tiny models to compile their kernels. The measures
(importance, H, heterogeneity, regions) reach them only through the methods, as every
other caller does. :func:`kernel_for` builds the row kernel a plan (:mod:`.plan`)
names; :func:`encoded_chunk` encodes rows for every kernel of this package.
"""

from __future__ import annotations

import numpy as np

from ...core.ir import TreeModel
from ...core.method import MethodResult, Request
from ...core.progress import progress_bar
from ...core.threads import thread_count
from ...core.treesum import TreeSum
from .plan import KERNELS, NOT_OBLIVIOUS, Plan, plan_rows  # noqa: F401 - KERNELS, NOT_OBLIVIOUS named here too
from .prep import integrate, prepare
from .registry import ran
from .rows import Finish, link_factor


def encoded_chunk(tm: TreeModel, X) -> np.ndarray:
    """Encoded rows as float64 (float32-rounded once here when the model compares in float32)."""
    if tm.ensemble.float32_input:  # round once here instead of at every node, in row order in the same pass
        with np.errstate(over="ignore"):  # beyond float32's range is inf, as for the model itself
            return np.asarray(tm.encode(X), dtype=np.float32, order="C").astype(np.float64)
    return np.ascontiguousarray(tm.encode(X), dtype=np.float64)


def kernel_for(plan: Plan, prep):
    """The row kernel object of ``plan`` (:func:`.plan.plan_rows`) for a prepared request: the plan's kernel,
    built; the planner has checked that it fits (oblivious splits, leaves the grid reaches), so nothing is
    chosen here."""
    from . import leafsets, oblivious, partition

    if plan.kernel == "oblivious":
        return oblivious.plan(prep, products=plan.link == "products")
    if plan.kernel == "leafsets":
        return leafsets.plan(prep, required=True)
    return partition.plan(prep)


#: bytes of encoded rows per chunk at most (larger chunks are no faster)
MAX_CHUNK_BYTES = 64 * 2**20


def exact(tm: TreeModel, req: Request, plan: Plan | None = None) -> MethodResult:
    """What ``brute`` returns for ``req``, computed from the trees (see :mod:`pdpx.plugins.exact`), as ``plan``
    (a row plan of :func:`.plan.plan` or :func:`.plan.plan_rows`; None: planned here) says."""
    if plan is None:
        plan = plan_rows(tm, req)
    if isinstance(tm, TreeSum):  # an ensemble linear in its members: each member, then the weighted sum
        from .combine import exact_sum

        return exact_sum(tm, req, exact, plan)

    ens = tm.ensemble
    n = len(req.X)
    prep = prepare(tm, req)
    kernel = kernel_for(plan, prep)
    ran(kernel.name)
    outputs = np.asarray(req.outputs, dtype=np.int64)
    K = outputs.size
    M = int(ens.n_margins)
    G = prep.n_cells
    w = req.sample_weight
    # weights divided by their total: every sum is a weighted mean, within the range of what it averages
    row_w = np.full(n, 1.0 / n) if w is None else np.ascontiguousarray(w, dtype=np.float64) / float(w.sum())
    unit = 1.0 / n if w is None else 0.0
    linear = plan.link == "linear"
    base = ens.base_score.reshape((M,) + (1,) * len(prep.grid_shape))
    threads = thread_count(req.n_jobs)

    # the budget left once the result is counted (Request.memory_budget) is shared: rows are encoded (and
    # transposed by the partition kernel) in chunks within one half, the finish's slices take the other
    budget = min(req.memory_budget // 2, MAX_CHUNK_BYTES)
    chunk = int(max(1, min(n, budget // (8 * req.X.shape[1] * 3))))
    starts = list(range(0, n, chunk))
    D = np.zeros(M * G)
    sums = np.zeros((K, G))
    factor = link_factor(ens.link, float(ens.link_scale))
    fin = Finish(factor=factor, start=factor * ens.base_score, grid_shape=prep.grid_shape, link=ens.link,
                 outputs=outputs, ice=np.empty((K, n, G)) if req.needs_individual else None,
                 budget=req.memory_budget // 2)
    with progress_bar(len(starts), progress=req.progress, desc="pdpx exact") as bar:
        for r0 in starts:
            r1 = min(n, r0 + chunk)
            Xc = encoded_chunk(tm, req.X.iloc[r0:r1])
            if linear:
                D += kernel.average_sum(Xc, row_w[r0:r1], unit, threads)
            else:
                sums += kernel.rows(Xc, row_w[r0:r1], threads, fin, r0)
            bar.update(1)
    if linear:
        avg = integrate(D.reshape(M, G), prep.grid_shape) + base
        return MethodResult(average=avg[outputs], notes=list(tm.notes))
    individual = fin.ice.reshape((K, n) + prep.grid_shape) if req.needs_individual else None
    return MethodResult(average=sums.reshape((K,) + prep.grid_shape), individual=individual, notes=list(tm.notes))


def recursion(tm: TreeModel, req: Request) -> MethodResult:
    """Friedman's weighted traversal for ``req`` (see :mod:`pdpx.plugins.recursion`)."""
    from .kernels import recursion_weights, scatter_boxes

    ens = tm.ensemble
    prep = prepare(tm, req)
    ran("recursion")
    # each leaf's share of its tree's node weight, added to its box like a count of rows
    share = recursion_weights(ens.tree_start, ens.left, ens.right, ens.node_weight, prep.tgt, prep.reach,
                              int(prep.max_tree_nodes))
    M = int(ens.n_margins)
    D = scatter_boxes(share, *prep.box_args()).reshape(M, prep.n_cells)
    avg = integrate(D, prep.grid_shape) + ens.base_score.reshape((M,) + (1,) * len(prep.grid_shape))
    notes = list(tm.notes) + [f"recursion weights: {tm.recursion_weights}"]
    return MethodResult(average=avg[np.asarray(req.outputs)], notes=notes)
