"""``exact``: brute's answer computed from the tree structure, at tree speed.

For each background row and tree, one walk that follows the row at splits on
other features and both ways at splits on the target features; each reached leaf
adds its value to the grid cells that reach it (difference arrays, see
:mod:`pdpx.plugins._treekernels`). Cost grows with rows x nodes visited, not
rows x grid points.

* A response linear in the trees (regression, forest probabilities, margins):
  weighted leaf contributions are summed over rows directly.
* A non-linear link (probabilities of boosted classifiers, exp of Poisson
  models) or ICE: per-row difference arrays (the ICE matrix on the margin scale),
  then the link per cell, then the weighted average; rows are processed in chunks
  that fit the memory budget.
"""

from __future__ import annotations

import numpy as np

from ..core.hookspecs import hookimpl
from ..core.ir import apply_link
from ..core.method import Method, MethodResult, Request
from ..core.progress import progress_bar
from ._treeprep import integrate, prepare, set_threads, tree_unavailable


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

    def unavailable(self, adapter, request):
        return tree_unavailable(adapter, request)

    def compute(self, adapter, req: Request) -> MethodResult:
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
                Xc = np.ascontiguousarray(tm.encode(req.X.iloc[r0:r1]), dtype=np.float64)
                if ens.float32_input:  # round once here instead of at every node
                    Xc = Xc.astype(np.float32).astype(np.float64)
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


@hookimpl
def pdpx_register_methods(register):
    register(Exact())
