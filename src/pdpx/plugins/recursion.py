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

from ..core.hookspecs import hookimpl
from ..core.method import Method, MethodResult, Request
from .trees import engine, jit
from .trees.prep import tree_unavailable


class Recursion(Method):
    """``recursion``: Friedman's weighted traversal of the training node weights."""
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
        if not hasattr(tm, "ensemble"):
            return "recursion reads one tree model; this model sums several (use method='exact')"
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
        return jit.noted(engine.recursion(adapter.tree_model(req.response), req))


@hookimpl
def pdpx_register_methods(register):
    """Register ``recursion``."""
    register(Recursion())
