"""The counts' rule in numbers: what a gather of pattern counts costs against walking the rows, and whether
counts can answer a request (numpy only). :func:`.plan.plan` reads it; :mod:`.plan` names every function here
too.
"""

from __future__ import annotations

#: A gather's cost at each order, in row walks of ``exact`` for one feature set (measured with
#: XGBoost 200 trees of depth 6 on 100,000 rows: about 2.7 at order 1, 5.4 at order 2; rounded up).
GATHER_SETS = {1: 3.0, 2: 6.0}
#: What each pair adds to an order-1 gather when the ``leafsets`` kernel counts only the planned pairs
#: (``gather(..., pairs=...)``), in the same row walks (measured with HistGradientBoosting, 100 trees of at
#: most 31 leaves, on 100,000 rows: the two pairs of the display benchmark added about one walk each).
PAIR_SETS = 1.0


def counts_unavailable(tm, req, counts=None) -> str | None:
    """Why the counts cannot give ``req``'s answer on ``tm`` (and ``counts``, when given), or None.

    The reasons: ICE wanted (counts keep sums over rows, not rows), more than two
    features, counts of a lower order, a response that is not a sum of leaf values
    (a non-linear link: the average of a probability is not the probability of
    the average margin), or no readable trees.
    """
    if req.needs_individual:
        return "ICE curves need each row's prediction; pattern counts keep only sums over the rows"
    d = len(req.features)
    if d == 0 or d > 2:
        return f"pattern counts answer feature sets of one or two features, not {d}"
    if counts is not None and counts.order < d:
        return f"these pattern counts were gathered at order {counts.order}; a {d}-way request needs order {d}"
    if counts is not None and not counts.answers(req.features):
        return ("these pattern counts were gathered for other pairs of features; gather them with this pair in "
                "pairs=, or pairs=None for every pair")
    return _counts_model_unavailable(tm)


def _counts_model_unavailable(tm) -> str | None:
    from ...core.ir import TreeModel
    from ...core.treesum import TreeSum

    if isinstance(tm, TreeSum):
        for term in tm.terms:
            why = _counts_model_unavailable(term.model)
            if why:
                return why
        return None
    if not isinstance(tm, TreeModel):
        return "the model's trees cannot be read"
    if not tm.ensemble.is_linear:
        return (f"the response is the {tm.ensemble.link} link of a sum of leaf values, so its average is not a sum "
                "of leaf values times counts; use response='raw' for the margins, or method='exact'")
    return None


def planned_sets(req) -> tuple[int, int]:
    """(1-way sets, 2-way sets) among the planned averages (the request's own set at least)."""
    sets = {tuple(s) for s in req.planned} | {tuple(int(f) for f in req.features)}
    return sum(len(s) == 1 for s in sets), sum(len(s) == 2 for s in sets)


def planned_pairs(req) -> frozenset:
    """The pairs of columns among the planned sets (the request's own set included), as ``gather``'s ``pairs``."""
    sets = {tuple(int(f) for f in s) for s in req.planned} | {tuple(int(f) for f in req.features)}
    return frozenset(_pair(s) for s in sets if len(s) == 2)


def _pair(features) -> tuple[int, int]:
    a, b = int(features[0]), int(features[1])
    return (a, b) if a < b else (b, a)


def gather_order(req, pairs_only: bool = False) -> tuple[int | None, str]:
    """The order to gather at for ``req``'s plan, or None when walking the rows is cheaper; and why.

    ``pairs_only``: an order-2 gather would count only the planned pairs (:func:`.plan.pairs_only`).
    """
    ones, twos = planned_sets(req)
    rows = ones + twos
    # order 1 answers the 1-way sets (pairs walk the rows); order 2 answers them all
    order2 = GATHER_SETS[2]
    if pairs_only and twos:  # no pairs: order 1
        order2 = min(order2, GATHER_SETS[1] + PAIR_SETS * twos)
    cost = {1: GATHER_SETS[1] + twos, 2: order2}
    if len(req.features) == 2:
        cost.pop(1)
    order = 2 if cost[2] <= cost.get(1, float("inf")) else 1  # on a tie, order 2: it answers later pairs too
    if cost[order] > rows:  # a tie gathers: the counts are kept for the next call
        return None, (f"walking the rows for {rows} feature set(s) costs less than gathering pattern counts "
                      f"(about {cost[order]:.0f} row walks)")
    return order, ""


def counts_order(req, engine: str, pairs_only: bool = False) -> int | None:
    """The order pattern counts are gathered at for ``req``'s planned sets: with ``engine="counts"`` the least
    that answers them all; with ``"auto"`` :func:`gather_order`'s (None: walking the rows is cheaper)."""
    if engine == "counts":
        return 2 if planned_sets(req)[1] else 1
    return gather_order(req, pairs_only)[0]


def counts_fit(nbytes: int, budget: int) -> bool:
    """Whether ``auto`` gathers counts of ``nbytes``: they take at most half the memory budget (the rest is
    for the rows' chunks)."""
    return nbytes <= budget // 2
