"""``exact``: brute's answer computed from the tree structure, at tree speed.

For each background row and tree, the leaves the row reaches when its target
features take every grid value: the row follows its own values at splits on
other features and goes both ways at splits on the target features. Each reached
leaf adds its value to the grid cells that reach it (difference arrays). Cost
grows with rows x tree size, not rows x grid points.

* Shallow trees (at most 64 reached leaves each, as in boosted models): the
  reached leaves come from bit masks, a vectorised test per node over blocks of
  rows (:mod:`pdpx.plugins._leafsets`).
* Deeper trees: one walk per (row, tree) that branches at target splits
  (:mod:`pdpx.plugins._treekernels`).

* A response linear in the trees (regression, forest probabilities, margins):
  weighted leaf contributions are summed over rows directly.
* A non-linear link (probabilities of boosted classifiers, exp of Poisson
  models) or ICE: per-row difference arrays (the ICE matrix on the margin scale),
  then the link per cell, then the weighted average; rows are processed in chunks
  that fit the memory budget.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import PdpxError
from ..core.hookspecs import hookimpl
from ..core.ir import apply_link
from ..core.method import Method, MethodResult, Request
from ..core.progress import progress_bar
from ._treeprep import integrate, prepare, set_threads, tree_unavailable


KERNELS = ("auto", "leafsets", "walk")


def _kernel_option(options: dict) -> str:
    kernel = options.get("kernel", "auto")
    if kernel not in KERNELS:
        raise PdpxError(f"method_options={{'kernel': {kernel!r}}}: expected one of {list(KERNELS)}")
    return kernel


def _rounded_chunk(tm, X):
    """Encoded rows as float64 (float32-rounded once here when the model compares in float32)."""
    Xc = np.ascontiguousarray(tm.encode(X), dtype=np.float64)
    if tm.ensemble.float32_input:  # round once here instead of at every node
        Xc = Xc.astype(np.float32).astype(np.float64)
    return Xc


def kernel_args(prep):
    from ._treeprep import pack_nodes

    ens = prep.ens
    return (
        ens.tree_start, ens.tree_group, ens.effective_tree_weight(), pack_nodes(ens, prep.tgt, prep.reach),
        ens.threshold, ens.cat_offset, ens.cat_nwords, ens.cat_words,
        ens.value, bool(ens.comparison == "<="), False, bool(ens.categories_go_left),  # inputs pre-rounded
        prep.leaf_mask, prep.box_ptr, prep.box_lo, prep.box_hi, prep.strides,
        int(ens.n_margins), int(prep.n_cells), int(prep.max_tree_nodes),
    )


class Exact(Method):
    name = "exact"
    equals_brute = True
    cost_rank = 10
    options = ("kernel",)

    def unavailable(self, adapter, request):
        return tree_unavailable(adapter, request)

    def compute(self, adapter, req: Request) -> MethodResult:
        from . import _leafsets
        from ._treekernels import accumulate_rows

        tm = adapter.tree_model(req.response)
        ens = tm.ensemble
        threads = set_threads(req.n_jobs)
        n = len(req.X)
        prep = prepare(tm, req)
        outputs = np.asarray(req.outputs)
        K = outputs.size
        M = ens.n_margins
        w = req.sample_weight
        total_w = float(n) if w is None else float(w.sum())
        row_w = np.ones(n) if w is None else w
        args = kernel_args(prep)
        linear = ens.is_linear and not req.needs_individual
        d = len(prep.grid_shape)
        kernel = _kernel_option(req.options)
        leafsets = None if kernel == "walk" else _leafsets.build(prep, args[3])
        if leafsets is not None:
            return self._compute_leafsets(tm, req, leafsets, linear, threads, row_w, total_w)
        if kernel == "leafsets":
            raise PdpxError(
                "method_options={'kernel': 'leafsets'}: a tree of this model has more than "
                f"{_leafsets.MAX_LEAVES} leaves that the grid reaches; use kernel 'auto' or 'walk'"
            )

        # rows are encoded and walked in chunks, so memory stays within the budget
        enc_bytes = 8 * req.X.shape[1] * 3
        per_row = enc_bytes + (0 if linear else 8 * prep.n_cells * (M + ens.n_outputs + K) * 2)
        chunk = int(max(1, min(n, req.memory_budget // per_row)))
        starts = list(range(0, n, chunk))

        D_sum = np.zeros((M, prep.n_cells)) if linear else None
        sums = np.zeros((K,) + prep.grid_shape)
        ice = np.empty((K, n) + prep.grid_shape) if req.needs_individual else None
        base = ens.base_score.reshape((1, M) + (1,) * d)
        with progress_bar(len(starts), progress=req.progress, desc="pdpx exact") as bar:
            for r0 in starts:
                r1 = min(n, r0 + chunk)
                Xc = _rounded_chunk(tm, req.X.iloc[r0:r1])
                if linear:
                    D_sum += accumulate_rows(Xc, row_w[r0:r1], False, threads, *args).sum(axis=0)
                    bar.update(1)
                    continue
                D = accumulate_rows(Xc, row_w[r0:r1], True, threads, *args)  # (nr, M, cells)
                margins = integrate(D, prep) + base
                del D
                resp = apply_link(ens.link, margins, ens.link_scale, axis=1)[:, outputs]  # (nr, K, *grid)
                if w is None:
                    sums += resp.sum(axis=0)
                else:
                    sums += np.tensordot(w[r0:r1], resp, axes=(0, 0))
                if ice is not None:
                    ice[:, r0:r1] = np.moveaxis(resp, 0, 1)
                bar.update(1)
        if linear:
            avg = integrate(D_sum, prep) / total_w + ens.base_score.reshape((M,) + (1,) * d)
            return MethodResult(average=avg[outputs], notes=list(tm.notes))
        return MethodResult(average=sums / total_w, individual=ice, notes=list(tm.notes))

    def _compute_leafsets(self, tm, req, ls, linear, threads, row_w, total_w):
        from . import _leafsets as L

        ens = tm.ensemble
        n = len(req.X)
        outputs = np.asarray(req.outputs, dtype=np.int64)
        K = outputs.size
        M = int(ens.n_margins)
        grid_shape = tuple(int(g) for g in ls.grid_shape)
        parts = threads
        chunk = int(max(L.BLOCK, min(n, req.memory_budget // (8 * req.X.shape[1] * 3))))
        starts = list(range(0, n, chunk))
        reach = ls.reach_args()
        counts = None
        sums = np.zeros((K, ls.n_cells))
        ice = np.empty((K, n, ls.n_cells)) if req.needs_individual else np.empty((K, 0, ls.n_cells))
        with progress_bar(len(starts), progress=req.progress, desc="pdpx exact") as bar:
            for r0 in starts:
                r1 = min(n, r0 + chunk)
                Xc = _rounded_chunk(tm, req.X.iloc[r0:r1])
                if linear:
                    c = L.leafset_counts(Xc, row_w[r0:r1], parts, *reach).sum(axis=0)
                    counts = c if counts is None else counts + c
                else:
                    sums += L.leafset_rows(
                        Xc, row_w[r0:r1], parts, *reach, ls.cptr, ls.cpos, ls.cval, M, ls.grid_shape,
                        ens.base_score, L.LINK_CODES[ens.link], float(ens.link_scale), outputs,
                        bool(req.needs_individual), ice, r0,
                    ).sum(axis=0)
                bar.update(1)
        if linear:
            D = L.scatter_counts(counts, ls.cptr, ls.cpos, ls.cval, M * ls.n_cells).reshape((M,) + grid_shape)
            for axis in range(1, D.ndim):
                D = np.cumsum(D, axis=axis)
            avg = D / total_w + ens.base_score.reshape((M,) + (1,) * len(grid_shape))
            return MethodResult(average=avg[outputs], notes=list(tm.notes))
        individual = ice.reshape((K, n) + grid_shape) if req.needs_individual else None
        return MethodResult(average=sums.reshape((K,) + grid_shape) / total_w, individual=individual,
                            notes=list(tm.notes))


@hookimpl
def pdpx_register_methods(register):
    register(Exact())
