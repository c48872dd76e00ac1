"""The fused walks ``exact`` offers the curve reducers (:meth:`pdpx.core.method.Method.reduce_curves`).

A fused walk fills a reducer (:class:`pdpx.core.curves.CurveReducer`) from one pass over the rows
that never forms the curves. :data:`WALKS` maps the name a reducer asks for (its ``walk``) to the
walk's planner (:mod:`.plan`: whether it fits the trees and the request, its kernels, its deferral
while they compile) and its run (the kernel, whose output goes to the reducer's ``walked``):

* ``"means"``: every row's curve averaged with the reducer's ``shares`` (:mod:`.curve_means`);
* ``"moments"``: the curves' moments over the rows (:mod:`.curve_moments`);
* ``"centered"``: the same walk, writing every row's centered curve into the reducer's ``buffers``.

A new measure's walk is one entry (:func:`register_walk`): a planner returning a :class:`.plan.Plan` or
None, and a run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .plan import plan_means, plan_moments


@dataclass(frozen=True)
class Walk:
    """A fused walk: ``plan(tm, request, compile_seconds) -> Plan | None`` and ``run(tm, requests, reducer)``, the
    walk's output as the reducer's ``walked`` takes it."""

    plan: Callable
    run: Callable


def _means(tm, requests, reducer):
    from . import curve_means  # read at run time: tests spy on the kernel

    first = requests[0]
    shares = [reducer.shares[r.features[0]] for r in requests]
    return curve_means.curve_means(tm, requests, shares, first.n_jobs, first.memory_budget)


def _moments(tm, requests, reducer, keep=None):
    from . import curve_moments

    first = requests[0]
    return curve_moments.curve_moments(tm, requests, first.n_jobs, first.memory_budget, keep=keep)


def _centered(tm, requests, reducer):
    return _moments(tm, requests, reducer, keep=reducer.buffers([r.features[0] for r in requests]))


#: The walks ``exact`` offers, by the name a reducer asks for
WALKS: dict[str, Walk] = {
    "means": Walk(plan_means, _means),
    "moments": Walk(plan_moments, _moments),
    "centered": Walk(plan_moments, _centered),
}


def register_walk(name: str, plan: Callable, run: Callable) -> None:
    """Offer the walk ``name`` (a reducer's ``walk``) to ``exact``: its planner and its run (see :class:`Walk`)."""
    WALKS[name] = Walk(plan, run)
