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

* row kernel (:func:`row_kernel`): ``oblivious`` when every tree is oblivious (all its leaves
  at one depth, each level's nodes splitting alike: :func:`.oblivious.is_oblivious`, numpy
  only), else ``leafsets`` when every tree has at most 64 leaves, else ``partition``;
  ``method_options={"kernel": ...}`` forces one (``leafsets`` on larger trees: when the grid
  reaches at most 64 leaves of each, checked here); :func:`.engine.kernel_for` builds the
  plan's kernel and chooses none;
* link (:attr:`Plan.link`): ``"linear"`` for an average of a response linear in the
  trees (each leaf's box added once, scaled by its rows), ``"products"`` for an
  oblivious average of one margin's logistic or exp response (when its byte tests fit,
  else the rows' margins), ``"rows"`` otherwise (each row's margins, then the link);
* counts (:func:`counts_order`: :func:`gather_order`, with :func:`pairs_only`): gather when
  the call's planned sets would cost more row walks than the gather (:data:`GATHER_SETS`,
  :data:`PAIR_SETS`) and the counts take at most half the budget (:func:`counts_fit`);
  ``engine="counts"`` gathers at the least order that answers the sets; the gather kernel
  (:func:`counts_kernel`): at order 2 ``patterns`` then ``leafsets``, at order 1
  ``leafsets`` then ``patterns``, each where it fits within what the counts leave of the
  budget (:func:`counts_bytes`, numpy only), else ``partition``;
* the one decision (:func:`plan`): from the trees, the request (typed :class:`ExactOptions`,
  the batch's sets, what the session settled), the counts kept with the model and the
  compile state (both handed in by :func:`.counts_use.decide`), the :class:`Plan` that runs:
  its ``source`` (rows, counts kept, a gather), kernels, order and ``deferral``. The
  executors run it and choose nothing (each reports what it runs, :func:`.registry.ran`);
* means (:func:`plan_means`): responses that are sums of leaf values, trees of at most
  64 leaves.
* beside (:func:`walks_rows_alone`): a request ``exact`` spends walking its rows, which other
  work (the session's extrapolation check) may run beside.

Each kernel's facts (when it fits, its compiled functions, what it runs besides) are
its module's records (:mod:`.records`, :mod:`.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from ...core.errors import PdpxError
from ...core.method import MethodOptions, Request, option
from . import registry
from .counts_rule import (  # noqa: F401 - the counts' rule, named here for the planner's users
    GATHER_SETS,
    PAIR_SETS,
    counts_fit,
    counts_order,
    counts_unavailable,
    gather_order,
    planned_pairs,
    planned_sets,
)

#: Values of ``method_options={"kernel": ...}`` for ``exact``.
KERNELS = ("auto", "oblivious", "leafsets", "partition")
#: Values of ``method_options["engine"]``.
ENGINES = ("auto", "counts", "rows")
#: Values of the ``kernel`` argument of :func:`.counts.gather`.
COUNTS_KERNELS = ("auto", "patterns", "leafsets", "partition")
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
    records : tuple of str
        The kernel records (:mod:`.registry`) it runs, whose compiled functions are :attr:`kernels`: what the
        executors report running (:func:`.registry.ran`).
    source : str
        Where :func:`plan`'s answer comes from: ``"rows"``, ``"gather"`` or ``"kept"`` (``""`` elsewhere).
    deferral : str
        Why work that would pay is not done now (its kernels compile in the background), or ``""``.
    note : str
        What ``res.notes`` says of the plan (counts kept), or ``""``.
    counts : PatternCounts or SumCounts or None
        The counts a ``"kept"`` plan answers from.
    """

    engine: str
    kernel: str = ""
    link: str = "linear"
    response_link: str = "identity"
    intervals: bool = False
    order: int = 0
    kernels: frozenset = frozenset()
    members: tuple = ()
    records: tuple = ()
    source: str = ""
    deferral: str = ""
    note: str = ""
    counts: object = field(default=None, compare=False, repr=False)

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
        return _sum(members, source="rows")
    from .prep import uses_intervals

    ens = tm.ensemble
    option = exact_options(req.options).kernel
    kernel = row_kernel(ens, option)
    if option == "leafsets":  # asked for: on trees of more than 64 leaves, the grid must reach at most 64 of each
        prep = _leafsets_fit(tm, req, prep)
    intervals = prep.intervals if prep is not None else uses_intervals(tm, req)
    if ens.is_linear and not req.needs_individual:
        link = "linear"
    elif (kernel == "oblivious" and int(ens.n_margins) == 1 and not req.needs_individual
          and ens.link in EXP_LINKS):
        link = "products"
    else:
        link = "rows"
    plan = Plan("oblivious" if kernel == "oblivious" else "rows", kernel, link, ens.link, bool(intervals),
                source="rows")
    return _with_kernels(plan, [kernel])


def _leafsets_fit(tm, req, prep):
    """``prep`` (prepared here when None and needed) once ``kernel="leafsets"`` is found to fit the grid."""
    from .leafsets import MAX_LEAVES, reaches_few
    from .prep import prepare, static_layout

    if int(static_layout(tm.ensemble).leaves_per_tree.max()) <= MAX_LEAVES:
        return prep
    prep = prepare(tm, req) if prep is None else prep
    if not reaches_few(prep):
        raise PdpxError(f"method_options={{'kernel': 'leafsets'}}: a tree of this model has more than {MAX_LEAVES} "
                        "leaves that the grid reaches; use kernel 'auto' or 'partition'")
    return prep


def plan_recursion(tm, req, prep=None) -> Plan:
    """The plan of ``recursion`` for ``req`` on ``tm`` (one TreeModel)."""
    from .prep import uses_intervals

    intervals = prep.intervals if prep is not None else uses_intervals(tm, req)
    return _with_kernels(Plan("recursion", "", "linear", tm.ensemble.link, bool(intervals)), ["recursion"])


def _with_kernels(plan: Plan, names) -> Plan:
    return replace(plan, kernels=registry.runs(names, plan), records=tuple(names))


def _sum(members, **given) -> Plan:
    """The plan of an ensemble linear in ``members`` (their plans)."""
    return Plan("sum", members=tuple(members), kernels=frozenset().union(*(m.kernels for m in members)),
                records=tuple(dict.fromkeys(r for m in members for r in m.records)), **given)


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


def counts_bytes(tm, order: int = 2) -> int:
    """Bytes of the pattern counts of ``tm`` (TreeModel or TreeSum) at ``order``, whatever the rows: read with
    numpy only (:func:`.counts_kernels.n_slots`), so the plan knows them before anything is compiled."""
    from ...core.treesum import TreeSum
    from .counts_kernels import n_slots

    if isinstance(tm, TreeSum):
        return int(sum(counts_bytes(t.model, order) for t in tm.terms))
    return 8 * n_slots(tm.ensemble, order)


def plan_counts(tm, order: int = 2, kernel: str = "auto", memory_budget: int = 256 << 20) -> Plan:
    """The plan of a gather of pattern counts at ``order`` on ``tm`` (TreeModel or TreeSum) and of the partial
    dependence from them (:func:`.counts_pd.partial_dependence`).

    Each tree model's gather kernel is chosen (:func:`counts_kernel`) within what its counts leave of
    ``memory_budget``: the budget the gather (:func:`.counts.gather`, which runs ``plan.kernel`` and chooses
    nothing) has for its histograms and rows."""
    from ...core.treesum import TreeSum

    if isinstance(tm, TreeSum):
        return _sum([plan_counts(t.model, order, kernel, memory_budget) for t in tm.terms], order=order,
                    source="gather")
    name = counts_kernel(tm.ensemble, kernel, memory_budget - counts_bytes(tm, order), order)
    return _with_kernels(Plan("counts", name, "linear", tm.ensemble.link, order=order, source="gather"),
                         ["counts", f"counts.{name}"])


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


def plan_means(tm, req=None, compile_seconds=None) -> Plan | None:
    """The plan of :func:`.curve_means.curve_means` on ``tm`` for the requests ``req`` is the first of, or None
    where it cannot compute or ``engine="rows"`` is asked (the curves are walked then); ``compile_seconds``:
    the compile state (:func:`plan`), which sets ``deferral`` while its kernels are not compiled."""
    if not means_available(tm):
        return None
    return _one_pass(_with_kernels(Plan("means", "leafsets"), ["means"]), req, compile_seconds)


def plan_moments(tm, req=None, compile_seconds=None) -> Plan | None:
    """The plan of :func:`.curve_moments.curve_moments` on ``tm``, or None (as :func:`plan_means`; numpy only)."""
    from ...core.ir import TreeModel

    if not isinstance(tm, TreeModel) or not registry.record("moments").fits(tm.ensemble, 0, 0):
        return None
    return _one_pass(_with_kernels(Plan("moments", "leafsets"), ["moments"]), req, compile_seconds)


def _one_pass(planned: Plan, req, compile_seconds) -> Plan | None:
    if req is not None and exact_options(req.options).engine == "rows":
        return None
    if compile_seconds is not None and compile_seconds(planned.kernels) > 0:
        return replace(planned, deferral="the one-pass kernels are not compiled yet")
    return planned


# --------------------------------------------------------------- the one decision: what runs for a request
#: Where ``req.memo`` keeps what the session's plan settled (weighed once, at its first request).
SESSION = "pdpx.plugins.trees.plan.session"
#: Seconds of one row through one tree in ``exact``'s row walk for one feature set (XGBoost, depth 6: about
#: 1.3e-8 s measured, rounded up): what a gather's compilation is weighed against.
ROW_TREE_SECONDS = 1.5e-8


def plan(tm, req, kept=None, compile_seconds=None, prep=None) -> Plan:
    """``exact``'s plan for ``req``, one request of a call computing the feature sets ``req.planned``: the one
    place that decides what runs (the executors, :func:`.engine.exact`, :func:`.counts.gather` and
    :mod:`.counts_pd`, run the plan and choose nothing).

    Parameters
    ----------
    tm : TreeModel or TreeSum
        The trees.
    req : PlannedRequest or Request
        The request; its ``planned`` sets (the batch's), ``memo`` (what the session's plan settled at its first
        request) and typed options (:class:`ExactOptions`). A request without planned sets (one Dask
        partition's rows) walks its rows.
    kept : object, optional
        The counts cache as seen for this request (:class:`.counts_use.Kept`: ``holds``, ``get(order,
        features)``); None: nothing kept.
    compile_seconds : callable, optional
        The compile state: ``compile_seconds(kernels)``, the seconds compiling those of ``kernels`` not
        compiled yet would take (:func:`.jit.compile_seconds`); None: everything is compiled.
    prep : Prepared, optional
        The request prepared already (:func:`.prep.prepare`), for the row plan's regions and kernel checks.

    Returns
    -------
    Plan
        ``source`` says where the answer comes from: ``"rows"`` (:func:`plan_rows`), ``"kept"`` (counts kept
        with the model or gathered earlier in this session: ``plan.counts``), ``"gather"`` (pattern counts
        gathered now at ``plan.order`` by ``plan.kernel``, :func:`plan_counts`). ``deferral``: why counts that
        would pay are not gathered now (their kernels compile in the background; the rows are walked).

    The rules: ``engine="rows"`` walks the rows; counts kept (for the session, or with the model for these
    rows and weights) answer at once; ``auto`` gathers when the call's sets would cost more row walks than
    the gather (:func:`counts_order`, :func:`pairs_only`), the counts take at most half the budget
    (:func:`counts_fit`) and their kernels are compiled or compile in less time than the row walks take;
    ``engine="counts"`` gathers whatever the cost, and says why when counts cannot answer.
    """
    engine = exact_options(req.options).engine
    if engine == "rows" or not req.planned:  # no planned sets: rows not held here (a Dask partition)
        if engine == "counts":
            raise PdpxError("method_options={'engine': 'counts'}: pattern counts are gathered on rows held in "
                            "this process; with Dask input use engine='auto' or 'rows'")
        return plan_rows(tm, req, prep)
    own = _settled(req, tm)
    holds = kept is not None and kept.holds
    if engine == "auto" and own is None and gather_order(req, True)[0] is None and not holds:
        return plan_rows(tm, req, prep)  # a few sets and nothing kept: the rows, without a digest
    why = counts_unavailable(tm, req)
    if why:
        if engine == "counts":
            raise PdpxError(f"method_options={{'engine': 'counts'}} cannot compute this: {why}; "
                            "use engine='auto' or 'rows'")
        return plan_rows(tm, req, prep)
    if own is not None:
        if own.counts is not None and own.counts.answers(req.features):
            return own
        if engine == "auto":  # the plan was weighed once: the sets the counts do not answer walk the rows
            return plan_rows(tm, req, prep)
    if kept is not None and (engine == "counts" or holds):
        hit = kept.get(len(req.features), req.features)
        if hit is not None:
            out = replace(from_counts(tm, hit), note=(
                f"exact, from pattern counts of these rows kept with the model (order {hit.order}): the rows "
                "were not read again"))
            settle(req, tm, out)
            return out
    budget = req.memory_budget
    order = counts_order(req, engine, engine == "auto" and pairs_only(tm, budget))
    if engine == "auto" and (order is None or not counts_fit(counts_bytes(tm, order), budget)):
        settle(req, tm, None)
        return plan_rows(tm, req, prep)
    gather = replace(plan_counts(tm, order, memory_budget=budget), source="gather")
    if engine == "auto" and compile_seconds is not None:
        compile_s = compile_seconds(gather.kernels)
        if compile_s > _walk_seconds(tm, req):
            settle(req, tm, None)
            return replace(plan_rows(tm, req, prep), deferral=(
                f"the pattern counts' compiled kernels are not ready yet (about {compile_s:.0f} s to compile), so "
                "each feature set was computed on its own; they are being compiled in the background"))
    return gather


#: Where ``req.memo`` keeps what the session's plan settled for rows partitioned elsewhere (:func:`plan_partitioned`).
PARTITIONED = "pdpx.plugins.trees.plan.partitioned"


def plan_partitioned(tm, req, rows) -> Plan:
    """``exact``'s plan for ``req`` when the rows are partitioned elsewhere (``rows``: a ``DaskData``): ``source``
    ``"partitioned"`` (pattern counts gathered partition by partition at ``order``: only the counts travel),
    ``"kept"`` (gathered earlier in this session: ``plan.counts``) or ``"rows"`` (every partition walks its
    rows for this feature set).

    The rule of :func:`plan`, a walk being a pass over every partition: gathered when the planned sets would
    cost more row walks than the gather (:func:`counts_order`) and the counts fit half the budget, or always
    with ``engine="counts"``; weighed once per session.
    """
    engine = exact_options(req.options).engine
    if engine == "rows":
        return _ROWS
    why = counts_unavailable(tm, req)
    if why:
        if engine == "counts":
            raise PdpxError(f"method_options={{'engine': 'counts'}} cannot compute this: {why}; "
                            "use engine='auto' or 'rows'")
        return _ROWS
    own = req.memo.get(PARTITIONED)
    if own is not None and own[0] is rows and own[1] is req.sample_weight and own[2] is tm:
        if own[3] is not None and own[3].counts.order >= len(req.features):
            return own[3]
        if engine == "auto":
            return _ROWS
    order = counts_order(req, engine)
    if engine == "auto" and (order is None or not counts_fit(counts_bytes(tm, order), req.memory_budget)):
        settle_partitioned(req, rows, tm, None)
        return _ROWS
    return replace(plan_counts(tm, order, memory_budget=req.memory_budget), source="partitioned")


def settle_partitioned(req, rows, tm, plan: Plan | None) -> None:
    """:func:`settle` for rows partitioned elsewhere (``rows``: a ``DaskData``)."""
    req.memo[PARTITIONED] = (rows, req.sample_weight, tm, plan)


def from_counts(tm, counts) -> Plan:
    """The plan of the partial dependence from ``counts`` already gathered (:mod:`.counts_pd`)."""
    return _with_kernels(Plan("counts", "", "linear", _link(tm), order=int(counts.order), source="kept",
                              counts=counts), ["counts"])


def _link(tm) -> str:
    from ...core.treesum import TreeSum

    return "identity" if isinstance(tm, TreeSum) else tm.ensemble.link


def _walk_seconds(tm, req) -> float:
    """The row walks of ``req``'s planned sets, estimated from :data:`ROW_TREE_SECONDS`."""
    from ...core.treesum import TreeSum

    models = [t.model for t in tm.terms] if isinstance(tm, TreeSum) else [tm]
    ones, twos = planned_sets(req)
    return len(req.X) * sum(m.ensemble.n_trees for m in models) * ROW_TREE_SECONDS * (ones + twos)


def _settled(req, tm):
    """What the session's plan settled for these rows, weights and trees (:func:`settle`): a plan answering from
    counts, or None (nothing settled, or the rows)."""
    own = req.memo.get(SESSION)
    if own is not None and own[0] is req.X and own[1] is req.sample_weight and own[2] is tm:
        return own[3] if own[3] is not None else _ROWS
    return None


#: What :func:`_settled` returns when the session's plan settled on the rows.
_ROWS = Plan("rows", source="rows")


def settle(req, tm, plan: Plan | None) -> None:
    """Keep in ``req.memo`` what the session's plan settled at its first request: ``plan`` (answering from the
    counts it carries), or None (walk the rows for what kept counts do not answer)."""
    req.memo[SESSION] = (req.X, req.sample_weight, tm, plan)


def pairs_only(tm, budget: int) -> bool:
    """Whether an order-2 gather on ``tm`` within ``budget`` counts only the pairs asked for (every tree model
    takes the ``leafsets`` kernel, which can: :func:`plan_counts`), so that it costs :data:`PAIR_SETS` per pair
    over an order-1 gather."""
    planned = plan_counts(tm, 2, memory_budget=budget)
    return all(m.kernel == "leafsets" for m in (planned.members or (planned,)))


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
