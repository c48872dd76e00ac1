"""The planner: which computation the tree engine runs for a call, and which compiled kernels that takes.

One module says what runs and why. Given the tree model, the request (its feature
sets, kind, weights, options: ``kernel``, ``engine``) and the memory budget, it returns
a frozen :class:`Plan`: the engine, the kernel, the counts' order, how margins become
the answer (``link``), and :attr:`Plan.kernels`, the compiled functions it will run.
Everything here reads the tree arrays with numpy only: nothing is compiled to plan, so
the first-call logic (:mod:`.jit`: compile now, or run brute and compile in the
background) reads ``plan.kernels`` before any kernel exists.

The engines:

* ``"oblivious"``: every tree oblivious (:mod:`.oblivious`; averages of a logistic or
  exp response of one margin multiply ``exp(leaf)`` factors, :mod:`.products`);
* ``"rows"``: the row kernels ``leafsets`` (trees of at most 64 leaves) or
  ``partition`` (any tree);
* ``"counts"``: pattern counts gathered in one pass (:mod:`.counts`) at ``order`` 1 or
  2, by the ``patterns``, ``leafsets`` or ``partition`` gather;
* ``"means"``: every row's ICE curve averaged in one pass (:mod:`.curve_means`);
* ``"moments"``: the ICE curves' moments over the rows in one pass (:mod:`.curve_moments`);
* ``"recursion"``: Friedman's weighted traversal (no rows);
* ``"sum"``: an ensemble linear in its members, each member planned on its own
  (:attr:`Plan.members`).

The rules (``auto``) and where they are read:

* row kernel (:func:`row_kernel`): ``oblivious`` when every tree has all its leaves at
  one depth (the kernel then compares each level's splits and, should they differ,
  :func:`.engine.kernel_for` takes the next that fits), else ``leafsets`` when every tree
  has at most 64 leaves, else ``partition``; ``method_options={"kernel": ...}`` forces one;
* link (:attr:`Plan.link`): ``"linear"`` for an average of a response linear in the
  trees (each leaf's box added once, scaled by its rows), ``"products"`` for an
  oblivious average of one margin's logistic or exp response (when its byte tests fit,
  else the rows' margins), ``"rows"`` otherwise (each row's margins, then the link);
* counts (:func:`counts_order`: :func:`gather_order`, with :func:`pairs_only`): gather when
  the call's planned sets would cost more row walks than the gather (:data:`GATHER_SETS`,
  :data:`PAIR_SETS`) and the counts take at most half the budget (:func:`counts_fit`);
  ``engine="counts"`` gathers at the least order that answers the sets; the gather kernel
  (:func:`counts_kernel`): at order 2 ``patterns`` then ``leafsets``, at order 1
  ``leafsets`` then ``patterns``, each where it fits, else ``partition``.
  :mod:`.counts_use` adds what is not a plan: the counts kept with the model, and
  whether their kernels are compiled;
* means (:func:`plan_means`): responses that are sums of leaf values, trees of at most
  64 leaves.
* beside (:func:`walks_rows_alone`): a request ``exact`` spends walking its rows, which other
  work (the session's extrapolation check) may run beside.

Each kernel's facts (when it fits, its compiled functions, what it runs besides) are
its module's records (:mod:`.records`, :mod:`.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from ...core.errors import PdpxError
from ...core.method import MethodOptions, Request, option
from . import registry

#: Values of ``method_options={"kernel": ...}`` for ``exact``.
KERNELS = ("auto", "oblivious", "leafsets", "partition")
#: Values of ``method_options["engine"]``.
ENGINES = ("auto", "counts", "rows")
#: Values of the ``kernel`` argument of :func:`.counts.gather`.
COUNTS_KERNELS = ("auto", "patterns", "leafsets", "partition")
#: A gather's cost at each order, in row walks of ``exact`` for one feature set (measured with
#: XGBoost 200 trees of depth 6 on 100,000 rows: about 2.7 at order 1, 5.4 at order 2; rounded up).
GATHER_SETS = {1: 3.0, 2: 6.0}
#: What each pair adds to an order-1 gather when the ``leafsets`` kernel counts only the planned pairs
#: (``gather(..., pairs=...)``), in the same row walks (measured with HistGradientBoosting, 100 trees of at
#: most 31 leaves, on 100,000 rows: the two pairs of the display benchmark added about one walk each).
PAIR_SETS = 1.0
#: Why an explicit ``kernel="oblivious"`` is refused.
NOT_OBLIVIOUS = ("method_options={'kernel': 'oblivious'}: a tree of this model is not oblivious (the nodes of each "
                 "level splitting alike, all leaves at one depth); use kernel 'auto', 'leafsets' or 'partition'")
#: Links whose averages over one margin the oblivious products compute (and whose kernels they compile).
EXP_LINKS = ("logistic", "binary_logistic", "exp")


@dataclass(frozen=True)
class ExactOptions(MethodOptions):
    """``exact``'s ``method_options``: which kernel finds the reached leaves, and whether averages come from pattern
    counts (``"counts"``), the rows walked per feature set (``"rows"``) or as the planner sees fit (``"auto"``)."""

    kernel: str = option("auto", choices=KERNELS)
    engine: str = option("auto", choices=ENGINES, describe=(
        f"one of {list(ENGINES)} ('counts' computes averages from pattern counts, 'rows' walks the rows per "
        "feature set)"))


def exact_options(options) -> ExactOptions:
    """``options`` as ``exact``'s typed options, read as they are: a session's request carries them checked
    already (:func:`~pdpx.core.method.checked_options`); a plain mapping (a direct call of the engine, the
    warm-up, a test) is checked once here."""
    if isinstance(options, ExactOptions):
        return options
    return ExactOptions.checked(dict(options or {}), "exact")


@dataclass(frozen=True)
class Plan:
    """What the tree engine runs for one request (see the module docstring).

    Attributes
    ----------
    engine : str
        ``"oblivious"``, ``"rows"``, ``"counts"``, ``"means"``, ``"moments"``, ``"recursion"`` or ``"sum"``.
    kernel : str
        The row kernel (``"oblivious"``, ``"leafsets"``, ``"partition"``) or the gather kernel
        (``"patterns"``, ``"leafsets"``, ``"partition"``); ``""`` where there is no choice.
    link : str
        ``"linear"``, ``"products"`` or ``"rows"`` (see the module docstring).
    response_link : str
        The ensemble's link (``"identity"``, ``"logistic"``, ...).
    intervals : bool
        Leaf regions carried as intervals (sorted numeric grids, plain splits) rather than grid masks.
    order : int
        The counts' order (0 for the other engines).
    kernels : frozenset of str
        The compiled functions (``module.function``) it runs.
    members : tuple of Plan
        An ensemble linear in its members: the plans of the members reading a target feature.
    """

    engine: str
    kernel: str = ""
    link: str = "linear"
    response_link: str = "identity"
    intervals: bool = False
    order: int = 0
    kernels: frozenset = frozenset()
    members: tuple = ()

    @property
    def per_row(self) -> bool:
        """Whether each row's margins are formed (ICE, or a non-linear link)."""
        return self.link != "linear"

    @property
    def regions(self) -> str:
        """The record computing the leaves' grid regions: ``"intervals"`` or ``"masks"``."""
        return "intervals" if self.intervals else "masks"

    @property
    def finish(self) -> tuple:
        """The records finishing the rows' margins: corners and the integral, and the link's exp unless the
        link is the identity or a softmax (done in numpy)."""
        return ("corners",) + (() if self.response_link in ("identity", "softmax") else ("link",))


def _rows_records(engine: str) -> list:
    return [r for r in registry.row_records() if r.engine == engine]


def row_kernel(ens, option: str = "auto") -> str:
    """The row kernel for ``ens`` under ``method_options={"kernel": option}`` (numpy only).

    ``auto``: the first kernel of :mod:`.registry`'s order (oblivious, leafsets, partition) whose record fits;
    an explicit ``oblivious`` for trees that are not is refused here, before anything is compiled.
    """
    rows = _rows_records("rows")
    if option != "auto":
        rec = next((r for r in rows if r.name == option), None)
        if rec is None:
            raise PdpxError(f"kernel {option!r}: expected one of {list(KERNELS)}")
        if option == "oblivious" and not rec.fits(ens, 0, 0):
            raise PdpxError(NOT_OBLIVIOUS)
        return option  # leafsets: refused by the kernel when the grid reaches more than 64 leaves of a tree
    return next(r.name for r in rows if r.fits is None or r.fits(ens, 0, 0))


def plan_rows(tm, req, prep=None) -> Plan:
    """The plan of ``exact`` walking ``req``'s rows on ``tm`` (a TreeModel or TreeSum); ``prep``: the request
    prepared already (:func:`.prep.prepare`), whose regions it reads instead of the grids."""
    from ...core.treesum import TreeSum

    if isinstance(tm, TreeSum):
        from .combine import member_request

        members = []
        for term in tm.terms:
            sub, _ = member_request(term, req)
            if sub is not None:  # a member that reads no target feature is averaged without a kernel
                members.append(plan_rows(term.model, sub))
        return Plan("sum", members=tuple(members), kernels=frozenset().union(*(m.kernels for m in members)))
    from .prep import uses_intervals

    ens = tm.ensemble
    kernel = row_kernel(ens, exact_options(req.options).kernel)
    intervals = prep.intervals if prep is not None else uses_intervals(tm, req)
    if ens.is_linear and not req.needs_individual:
        link = "linear"
    elif (kernel == "oblivious" and int(ens.n_margins) == 1 and not req.needs_individual
          and ens.link in EXP_LINKS):
        link = "products"
    else:
        link = "rows"
    plan = Plan("oblivious" if kernel == "oblivious" else "rows", kernel, link, ens.link, bool(intervals))
    return _with_kernels(plan, [kernel])


def plan_recursion(tm, req, prep=None) -> Plan:
    """The plan of ``recursion`` for ``req`` on ``tm`` (one TreeModel)."""
    from .prep import uses_intervals

    intervals = prep.intervals if prep is not None else uses_intervals(tm, req)
    return _with_kernels(Plan("recursion", "", "linear", tm.ensemble.link, bool(intervals)), ["recursion"])


def _with_kernels(plan: Plan, names) -> Plan:
    from dataclasses import replace

    return replace(plan, kernels=registry.runs(names, plan))


def counts_kernel(ens, kernel: str, budget: int, order: int = 2) -> str:
    """The gather kernel for ``ens`` (``kernel="auto"``), or the one asked for, checked (numpy only).

    ``auto``: at order 2, ``patterns`` for shallow trees whose histograms fit the
    budget (its cost does not grow with the order); at order 1, ``leafsets`` when
    every tree has at most 64 leaves (cheaper than histograms of every leaf then);
    then whichever of the two fits; ``partition`` for anything else.
    """
    from .counts_patterns import MAX_BINS

    fits = {name: registry.record(f"counts.{name}").fits(ens, budget, order) for name in ("patterns", "leafsets")}
    if kernel == "patterns" and not fits["patterns"]:
        raise PdpxError(f"kernel='patterns': a tree of this model is too deep (more than {MAX_BINS} histogram "
                        "bins) or the histograms exceed the memory budget; use 'auto', 'leafsets' or 'partition'")
    if kernel == "leafsets" and not fits["leafsets"]:
        raise PdpxError("kernel='leafsets': a tree of this model has more than 64 leaves; use 'auto' or 'partition'")
    if kernel != "auto":
        return kernel
    preferred = ("patterns", "leafsets") if order >= 2 else ("leafsets", "patterns")
    return next((name for name in preferred if fits[name]), "partition")


def plan_counts(tm, order: int = 2, kernel: str = "auto", memory_budget: int = 256 << 20) -> Plan:
    """The plan of a gather of pattern counts at ``order`` on ``tm`` (TreeModel or TreeSum) and of the partial
    dependence from them (:func:`.counts_pd.partial_dependence`)."""
    from ...core.treesum import TreeSum

    if isinstance(tm, TreeSum):
        members = tuple(plan_counts(t.model, order, kernel, memory_budget) for t in tm.terms)
        return Plan("sum", order=order, members=members, kernels=frozenset().union(*(m.kernels for m in members)))
    name = counts_kernel(tm.ensemble, kernel, memory_budget, order)
    return _with_kernels(Plan("counts", name, "linear", tm.ensemble.link, order=order), ["counts", f"counts.{name}"])


def means_available(tm) -> bool:
    """Whether every row's averaged ICE curve can be computed in one pass on ``tm``: a sum of leaf values of
    trees whose every tree fits the ``means`` record (numpy only)."""
    from ...core.ir import TreeModel
    from ...core.treesum import TreeSum

    if isinstance(tm, TreeSum):
        return all(means_available(term.model) for term in tm.terms)
    if not isinstance(tm, TreeModel) or not tm.ensemble.is_linear:
        return False
    return bool(registry.record("means").fits(tm.ensemble, 0, 0))


def plan_means(tm) -> Plan | None:
    """The plan of :func:`.curve_means.curve_means` on ``tm``, or None when it cannot compute there."""
    if not means_available(tm):
        return None
    return _with_kernels(Plan("means", "leafsets"), ["means"])


def plan_moments(tm) -> Plan | None:
    """The plan of :func:`.curve_moments.curve_moments` on ``tm``, or None when it cannot compute there (numpy
    only)."""
    from ...core.ir import TreeModel

    if not isinstance(tm, TreeModel) or not registry.record("moments").fits(tm.ensemble, 0, 0):
        return None
    return _with_kernels(Plan("moments", "leafsets"), ["moments"])


# --------------------------------------------------------------- when pattern counts answer a call
def plan(tm, req, pairs_budget: int | None = None) -> Plan:
    """``exact``'s plan for ``req``, one request of a call computing the feature sets ``req.planned``.

    From pattern counts (:func:`plan_counts` at :func:`counts_order`'s order) when they can answer
    (:func:`counts_unavailable`) and ``engine="counts"``, or ``"auto"`` and the call's sets are worth a
    gather; else walking the rows (:func:`plan_rows`). ``pairs_budget``: the budget less the order-2
    counts' bytes, where known (an order-2 gather may then count only the planned pairs,
    :func:`pairs_only`). What is not a plan, :mod:`.counts_use` adds: counts kept with the model answer
    at once; counts over half the budget (:func:`counts_fit`), or whose kernels would compile for longer
    than the row walks take, are not gathered.
    """
    engine = exact_options(req.options).engine
    if engine != "rows" and req.planned and counts_unavailable(tm, req) is None:
        pairs = engine == "auto" and pairs_budget is not None and pairs_only(tm, pairs_budget)
        order = counts_order(req, engine, pairs)
        if order is not None:
            return plan_counts(tm, order, memory_budget=req.memory_budget)
    return plan_rows(tm, req)


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


def pairs_only(tm, budget_left: int) -> bool:
    """Whether an order-2 gather on ``tm`` counts only the pairs asked for (every tree takes the ``leafsets``
    kernel, which can), so that it costs :data:`PAIR_SETS` per pair over an order-1 gather; ``budget_left``:
    the budget less the order-2 counts' bytes."""
    from ...core.treesum import TreeSum

    models = [t.model for t in tm.terms] if isinstance(tm, TreeSum) else [tm]
    return all(counts_kernel(m.ensemble, "auto", budget_left, 2) == "leafsets" for m in models)


def gather_order(req, pairs_only: bool = False) -> tuple[int | None, str]:
    """The order to gather at for ``req``'s plan, or None when walking the rows is cheaper; and why.

    ``pairs_only``: an order-2 gather would count only the planned pairs (:func:`pairs_only`).
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


def walks_rows_alone(req) -> bool:
    """Whether ``exact`` will spend the request walking its rows in compiled kernels (so other work can run
    beside it): one feature set planned, and counts not forced. A session planning several may answer them
    from pattern counts in moments."""
    return len(req.planned) <= 1 and exact_options(req.options).engine != "counts"


@dataclass
class PlannedRequest(Request):
    """A request as ``exact`` plans it: with the session's feature sets and what its requests share.

    Attributes
    ----------
    planned : tuple of tuple of int
        Every feature set the session computes with these rows, weights, response and options, this one
        included; empty for rows not held here (one Dask partition). ``exact`` may do once, for all of them,
        work that does not depend on the set (its pattern counts).
    memo : dict
        Shared by the session's requests: what ``exact`` computed for one and may reuse for the next (keyed by
        the modules' own names; see :mod:`.counts_use`).
    """

    planned: tuple = ()
    memo: dict = field(default_factory=dict, repr=False, compare=False)


def with_plan(req, planned, memo: dict | None = None) -> PlannedRequest:
    """``req`` (a :class:`~pdpx.core.method.Request`) as one request of a call computing the sets ``planned``,
    sharing ``memo`` (a fresh one when None)."""
    given = {f.name: getattr(req, f.name) for f in fields(Request)}
    return PlannedRequest(**given, planned=tuple(tuple(int(j) for j in s) for s in planned),
                          memo={} if memo is None else memo)
