"""``recursion``: Friedman's weighted tree traversal.

At a split on a non-target feature both children are followed, weighted by the
share of the parent's *training* node weight that went each way; no data is
passed. This is a conditional expectation under the training distribution of
the node weights, not the average over the rows you pass: on correlated data it
differs from ``brute``/``exact``. ``auto`` never picks it.

Only a response linear in the trees can be computed this way exactly (margins,
regression values, forest probabilities). For probabilities of a boosted
classifier use ``method="exact"``.
"""

from __future__ import annotations

import numpy as np

from ..core.hookspecs import hookimpl
from ..core.method import Method, MethodResult, Request
from ._treeprep import integrate, prepare, tree_unavailable


class Recursion(Method):
    name = "recursion"
    equals_brute = False
    cost_rank = 5

    def unavailable(self, adapter, request):
        if request.needs_individual:
            return "recursion computes no ICE curves (no data pass); use kind='average', or method='exact' for ICE"
        reason = tree_unavailable(adapter, request)
        if reason:
            return reason
        tm = adapter.tree_model(request.response)
        ens = tm.ensemble
        if not ens.is_linear:
            return (
                f"the {request.response} response applies a non-linear link ({ens.link}) to the trees' sum, "
                "so a weighted traversal cannot give it exactly. Use method='exact' (brute's answer at tree "
                "speed), or response='decision_function' / 'raw' for recursion on the margin scale"
            )
        if not ens.has_node_weights:
            return (
                f"this model stores no node weights (training counts) for recursion: {tm.recursion_weights}. "
                "Or use method='exact', which needs none"
            )
        return None

    def compute(self, adapter, req: Request) -> MethodResult:
        from ._treekernels import recursion_weights, scatter_boxes

        tm = adapter.tree_model(req.response)
        ens = tm.ensemble
        prep = prepare(tm, req)
        # each leaf's share of its tree's node weight, added to its box like a count of rows
        share = recursion_weights(ens.tree_start, ens.left, ens.right, ens.node_weight, prep.tgt, prep.reach,
                                  int(prep.max_tree_nodes))
        M = int(ens.n_margins)
        D = scatter_boxes(share, *prep.box_args()).reshape(M, prep.n_cells)
        avg = integrate(D, prep.grid_shape) + ens.base_score.reshape((M,) + (1,) * len(prep.grid_shape))
        notes = list(tm.notes) + [f"recursion weights: {tm.recursion_weights}"]
        return MethodResult(average=avg[np.asarray(req.outputs)], notes=notes)


@hookimpl
def pdpx_register_methods(register):
    register(Recursion())
