"""The run of one call: each feature set turned into a result.

A :class:`Session` stands on two parts: the call's validated inputs
(:class:`~pdpx.core.inputs.Inputs`, checked once when the session is built, method options
included) and the features' grids (:class:`~pdpx.core.grids.Grids`, which the sessions of
``by=`` groups share). For each feature set it builds the
:class:`~pdpx.core.method.Request`, picks the method and wraps what it returns in a
:class:`~pdpx.core.result.PartialDependenceResult`.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from . import budget, extrapolation, support, trust
from . import config as _config
from .adapter import trees_read_once
from .bootstrap import bootstrap_interval
from .dates import is_date_type
from .errors import ExtrapolationWarning, NonFiniteWarning, PdpxError, TreeMismatchWarning, UnreadValueError, warn
from .grid import is_categorical_type
from .grids import Grids
from .inputs import Inputs, auto_candidates, check_weights, data_source, validated  # noqa: F401 - data_source: there
from .method import Request
from .options import PDOptions
from .result import PartialDependenceResult, message_value
from .rows import require
from .threads import in_background, thread_count

#: Rows from which a call's extrapolation check runs on another thread while the method runs (below, the
#: method is over too soon for a second thread to pay for handing the check over)
BACKGROUND_ROWS = 4096

#: What a session reads of its inputs, named on the session too (its users read ``session.names``, ...)
_READ = ("options", "model", "adapter", "data", "X", "n_rows", "names", "dtypes", "response", "outputs",
         "sample_weight", "ice_rows", "categorical", "custom_values", "kind", "memory_budget", "method",
         "methods", "progress")


class Session:
    """One call's run over its feature sets, on validated inputs and shared grids.

    ``options`` is a :class:`~pdpx.core.options.PDOptions` (checked when it was built),
    or None: then the keyword options ``given`` are checked here, with messages naming
    ``function``. A session trusts no caller to have checked the model or the data
    (:func:`~pdpx.core.inputs.validated`). :meth:`of` builds one on inputs validated already
    (a ``by=`` group's) and, optionally, another session's grids.
    """

    def __init__(self, model, X, options: PDOptions | None = None, *, function: str = "partial_dependence",
                 **given):
        if options is None:
            options = PDOptions.checked(function, given)
        elif given:
            options = options.but(**given)
        self._start(validated(model, X, options), None)

    @classmethod
    def of(cls, inputs: Inputs, grids: Grids | None = None) -> Session:
        """A session on ``inputs``, computing on ``grids`` (default: its own, built from its rows)."""
        session = cls.__new__(cls)
        session._start(inputs, grids)
        return session

    def _start(self, inputs: Inputs, grids: Grids | None) -> None:
        self.inputs = inputs
        self.grids = Grids(inputs) if grids is None else grids
        self._extrapolation_warned = False
        self._support_cache: dict = {}  # the check's row sample and coarse bins, shared by the feature sets
        self._partners: list[bool] | None = None
        self._plan: tuple = ()
        self._batches: dict = {}  # method name -> its plan for this session's feature sets (Method.plan)

    def resolve_features(self, features) -> list[int]:
        """Positions (in the model-ordered columns) of ``features`` (:meth:`Inputs.resolve_features`)."""
        return self.inputs.resolve_features(features)

    def grid_for(self, j: int) -> np.ndarray:
        """Feature ``j``'s grid (:meth:`Grids.grid_for`)."""
        return self.grids.grid_for(j)

    def missing_point(self, j: int) -> bool:
        """Whether feature ``j``'s grid ends with the missing-value point (:meth:`Grids.missing_point`)."""
        return self.grids.missing_point(j)

    # -------------------------------------------------------------- compute
    def plan(self, feature_sets) -> None:
        """Tell the methods which feature sets (lists of positions) this session is about to compute.

        Each method is told them once (:meth:`~pdpx.core.method.Method.plan`), so it can do
        once what every set shares (``exact`` gathers pattern counts for many 1-way and
        2-way averages; with Dask, partition by partition, only the counts travel).
        """
        self._plan = tuple(tuple(int(j) for j in s) for s in feature_sets)
        self._batches = {}

    def batch(self, method):
        """``method``'s plan for this session's feature sets (:meth:`~pdpx.core.method.Method.plan`, asked once)."""
        if method.name not in self._batches:
            self._batches[method.name] = method.plan(self.inputs.adapter, self._plan)
        return self._batches[method.name]

    def request(self, features: list[int], kind: str | None = None, method=None) -> Request:
        """The :class:`~pdpx.core.method.Request` of one feature set: the inputs' request kind (or ``kind``) and
        the options of ``method`` (default: the method asked for, or the first ``auto`` may choose whose options
        accept those given); refused when its result would not fit the memory budget."""
        inp = self.inputs
        if method is None:
            method = (inp.methods[inp.method] if inp.method != "auto"
                      else next(m for m in auto_candidates(inp.methods) if m.name in inp.method_options))
        if any(j not in self.grids.values for j in features):  # the estimate, before the grids are built
            budget.check_sets(self, [features], kind=kind)
        req = Request(
            X=inp.X, features=features, grid_values=[self.grid_for(j) for j in features],
            categorical=[inp.categorical[j] for j in features], response=inp.response, outputs=inp.outputs,
            sample_weight=inp.sample_weight, kind=inp.request_kind if kind is None else kind,
            memory_budget=inp.memory_budget, n_jobs=inp.options.n_jobs, progress=inp.options.progress,
            options=inp.options_for(method), rows=inp.data if inp.data.here else None,
        )
        bootstrap = inp.options.interval is not None and inp.data.here  # every row's curve here
        self._check_result_size(req, n_ice=inp.n_rows if bootstrap else None)
        return req

    def _for(self, method, req: Request) -> Request:
        """``req`` with ``method``'s options."""
        options = self.inputs.options_for(method)
        return req if req.options is options else replace(req, options=options)

    def _check_result_size(self, req: Request, n_ice: int | None = None) -> None:
        """Refuse results over the budget; leave methods the budget minus the result's size."""
        inp = self.inputs
        n = n_ice or (inp.n_rows if inp.ice_rows is None else len(inp.ice_rows))
        K, G = len(req.outputs), req.n_grid
        need = K * G * 8 * (n if req.needs_individual else 1)
        req.memory_budget = max(req.memory_budget - need, req.memory_budget // 8)
        if need > inp.memory_budget:
            what = "ICE curves" if req.needs_individual else "the partial dependence grid"
            shape = " x ".join(str(s) for s in req.grid_shape)
            advice = (
                "use kind='average', ICE for a sample of rows (ice_sample=1000: the average still uses "
                "every row), " if req.needs_individual else ""
            )
            fewer = ("use grid='uniform' with grid_resolution, or custom_values, for a feature with many steps"
                     if any(j in self.grids.steps for j in req.features) else "lower grid_resolution")
            raise PdpxError(
                f"{what} for {n:,} rows, a {shape} grid and {K} output(s) would take "
                f"{_config.format_bytes(need)}, over the memory budget of {_config.format_bytes(inp.memory_budget)}. "
                f"To fit: {advice}{fewer}, or raise memory_budget (e.g. memory_budget='4GB')."
            )

    def choose_method(self, req: Request):
        """The method to run and notes on faster methods ``auto`` could not use (each asked once, with its own
        options)."""
        inp = self.inputs
        if inp.method != "auto":
            m = inp.methods[inp.method]
            reason = m.unavailable(inp.adapter, self._for(m, req))
            if reason:
                raise PdpxError(f"method {inp.method!r} cannot run here: {reason}")
            return m, []
        notes = []
        for m in auto_candidates(inp.methods):
            mine = self._for(m, req)
            reason = m.unavailable(inp.adapter, mine)
            if reason is None and inp.data.here:  # rows held here (not in partitions): may defer
                reason = self.batch(m).deferred(mine)
            if reason is None:
                refused = inp.refusal(m, notes)  # auto chose a method the options given are not for
                if refused is not None:
                    raise refused
                return m, notes
            notes.append(f"{m.name} not used: {reason}")
        raise PdpxError("no method can compute this request")  # pragma: no cover - brute always can

    def checked(self, method, req: Request, notes: list[str]):
        """``method``, or ``brute`` where ``method``'s values disagree with the model's own predict on a sample of
        each feature's grid (:func:`pdpx.core.trust.verdict`, asked once per model, response, dtypes and
        feature); the disagreement goes into ``notes`` and a :class:`TreeMismatchWarning`."""
        inp = self.inputs
        brute = inp.methods.get("brute")
        if method is brute or not method.equals_brute or brute is None or not _config.setting("check_trees"):
            return method
        n_out = len(inp.adapter.output_names(inp.response))
        req = self._for(method, req)
        for j in req.features:
            why = trust.verdict(inp.adapter, method, brute, req, j, n_out, inp.dtypes)
            if why is not None:
                notes.append(f"{method.name} not used: its values disagreed with the model's own {inp.response} "
                             f"on a sample of grid points ({why}); brute answered")
                warn(TreeMismatchWarning(
                    f"pdpx's reading of this {type(inp.model).__name__} disagreed with its own {inp.response} "
                    f"({why}), so pdpx called the model instead (method='brute'); the result is right, only "
                    "slower. Please report this to pdpx with the model's type and settings."))
                return brute
        return method

    def compute(self, features: list[int]) -> PartialDependenceResult:
        """The result of one feature set (positions in the model-ordered columns)."""
        inp, options = self.inputs, self.inputs.options
        req = self.request(features)
        columns = [inp.data.column(j) for j in features]
        with trees_read_once(inp.adapter):  # asked by choose_method, then by the method
            method, skipped = self.choose_method(req)
            method = self.checked(method, req, skipped)
            req = self._for(method, req)
            batch = self.batch(method)
            # the extrapolation check needs only the rows and the grids: beside a method that leaves the GIL
            # free for long enough, it runs on another core meanwhile
            beside = (inp.data.here and inp.n_rows >= BACKGROUND_ROWS
                      and thread_count(req.n_jobs) > 1 and batch.beside(req))
            checking = in_background(self._support_values, features, req.grid_values, columns, beside=beside)
            try:
                try:
                    out, elapsed = self._run(batch, req)
                except UnreadValueError as exc:  # a value met while running that the reading does not cover
                    method, req, batch = self._brute_instead(method, req, exc, skipped)
                    out, elapsed = self._run(batch, req)
            except BaseException:
                checking.exception()  # the check is done before the error leaves (it reads this session)
                raise
        average, individual = out.average, out.individual
        lower = upper = None
        if options.interval is not None and not inp.data.here:  # the bootstrap's band, computed where the rows are
            lower, upper = out.band
        elif options.interval is not None:  # the run computed every row's curve (request kind "both")
            ice = center_curves(individual.copy(), lead=2) if options.centered else individual
            lower, upper = bootstrap_interval(ice, inp.sample_weight, options.interval, options.n_boot,
                                              options.random_state)
            del ice
            if inp.kind != "average" and inp.ice_rows is not None:
                individual = individual[:, inp.ice_rows]
        if inp.kind == "average":
            individual = None
        names = inp.adapter.output_names(inp.response)
        ice_rows = self._shown_rows() if individual is not None else None
        warn_non_finite(average, individual, [names[k] for k in inp.outputs],
                        [inp.names[j] for j in features], req.grid_values, ice_rows)
        if options.centered:  # in place: no second copy of a large ICE array
            average = center_curves(average, lead=1)
            if individual is not None:
                individual = center_curves(individual, lead=2)
        notes = list(inp.time_notes) + list(out.notes) + skipped + self.grids.notes_of(features)
        check, hull = self.extrapolation(features, checking.result(), notes)
        return PartialDependenceResult(
            features=[inp.names[j] for j in features], grid_values=req.grid_values, categorical=req.categorical,
            average=average, individual=individual, outputs=[names[k] for k in inp.outputs],
            response=inp.response, response_label=inp.adapter.response_label(inp.response), method=method.name,
            kind=inp.kind, centered=options.centered, n_rows=inp.n_rows, ice_rows=ice_rows, elapsed=elapsed,
            notes=notes,
            feature_data={inp.names[j]: c.array if is_date_type(c.dtype) else c.to_numpy()  # dates: no object array
                          for j, c in zip(features, columns)},
            model_name=type(inp.adapter.model).__name__,
            lower=lower, upper=upper, interval=options.interval,
            times=None if inp.times is None else inp.times[inp.outputs],
            background=self._background(), extrapolation=check, steps=self.grids.steps_of(features),
            diagnostics=support.SupportInputs(columns, list(req.grid_values), list(req.categorical),
                                              inp.sample_weight, outside=hull,
                                              steps=[self.grids.steps.get(j) for j in features]),
        )

    def _brute_instead(self, method, req: Request, exc: UnreadValueError, notes: list[str]):
        """(brute, its request, its batch) after ``method`` met a value its reading does not cover, with a note; the
        error itself when the user asked for ``method`` by name (or brute has nothing to add)."""
        brute = self.inputs.methods.get("brute")
        if self.inputs.method != "auto" or brute is None or method is brute:
            raise exc
        notes.append(f"{method.name} not used: {exc}; brute answered")
        req = self._for(brute, req)
        return brute, req, self.batch(brute)

    def _shown_rows(self) -> np.ndarray | None:
        """The rows of a result's ICE curves as it names them: positions in X (in the full X for a ``by=`` group),
        None for every row of X."""
        inp = self.inputs
        if inp.positions is None:
            return inp.ice_rows
        return inp.positions if inp.ice_rows is None else inp.positions[np.asarray(inp.ice_rows)]

    def _background(self):
        """The rows a result's figures draw behind it: X (the full X for a ``by=`` group), None for Dask input."""
        inp = self.inputs
        if not inp.data.here:
            return None
        return inp.X if inp.background is None else inp.background

    def fused(self, features: list[int], reducer) -> str | None:
        """Fill ``reducer`` (a started :class:`~pdpx.core.curves.CurveReducer`) from the fused walk of the method
        chosen for the 1-way requests of ``features`` (:meth:`~pdpx.core.method.Method.reduce_curves`): the method's
        name, or None when the rows are not held here, the method differs among the requests (``auto`` passes a
        method by for some) or offers no walk for the reducer. :func:`pdpx.core.curves.reduce_curves` asks first."""
        inp = self.inputs
        if not inp.data.here or not features:
            return None
        reqs = [self.request([j], kind="average") for j in features]
        with trees_read_once(inp.adapter):
            method, notes = self.choose_method(reqs[0])
            if any(self.checked(method, req, notes) is not method for req in reqs):
                return None
            done = method.reduce_curves(inp.adapter, [self._for(method, r) for r in reqs], reducer)
        return None if done is None else method.name

    def _run(self, batch, req: Request):
        """(the result of ``batch``, a method's plan, for ``req``; seconds it ran)."""
        inp = self.inputs
        ice_rows = inp.ice_rows
        t0 = time.perf_counter()
        if inp.options.interval is not None:
            require(inp.data, "interval", "partial_dependence")
            # a Spark X: the sums of each partition's draws; None: the bootstrap resamples every row's ICE curve here
            out = inp.data.bootstrap(batch, inp.adapter, req, model=inp.model, ice_rows=ice_rows, options=inp.options)
            if out is not None:
                return out, time.perf_counter() - t0
            ice_rows = None
        out = inp.data.run(batch, inp.adapter, req, model=inp.model, ice_rows=ice_rows)
        return out, time.perf_counter() - t0

    def _support_values(self, features: list[int], grids: list, columns: list):
        """(extrapolation check or None, outside-hull mask or None, a note or None) of one feature set: the
        computation of :meth:`extrapolation`, which may run on another thread while the method runs (it reads
        the rows, the grids and this session's support cache, nothing the method writes). Never raises."""
        inp = self.inputs
        cats = [inp.categorical[j] for j in features]
        hull = check = None
        try:
            if len(features) == 2 and not any(cats):
                hull = support.outside_hull(columns[0], columns[1], grids[0], grids[1])
            if self._partners is None:  # the columns a 1-way check may pair with: numeric, not marked categorical
                self._partners = [not c and not is_categorical_type(d) for c, d in zip(inp.categorical, inp.dtypes)]
            check = extrapolation.extrapolation_check(inp.X, features, grids, cats, inp.sample_weight,
                                                      numeric=self._partners, hull=hull, cache=self._support_cache,
                                                      dtypes=inp.dtypes)
        except Exception as exc:  # noqa: BLE001 - a diagnostic never refuses the call
            return check, hull, f"support not computed: {type(exc).__name__}: {exc}"
        return check, hull, None

    def extrapolation(self, features: list[int], values: tuple, notes: list[str]):
        """(extrapolation check or None, outside-hull mask or None) of one feature set, from
        :meth:`_support_values`.

        The check runs on every call (its warning fires on the call); the support counts wait
        until a result's ``support`` is read (:class:`~pdpx.core.support.SupportInputs`). Two
        numeric features: the check needs the convex hull, which the result keeps.
        Warns (:class:`~pdpx.core.errors.ExtrapolationWarning`) at most once per session.
        Never raises: what cannot be computed is None, with a note saying why.
        """
        check, hull, note = values
        if note is not None:
            notes.append(note)
        if not self.inputs.data.here and check is not None:
            notes.append(f"the extrapolation check looked at the first {check.rows:,} rows of the cluster's input "
                         f"({self.inputs.data.label})")
        if check is not None and check.warns and not self._extrapolation_warned:
            self._extrapolation_warned = True
            names = [self.inputs.names[j] for j in features]
            warn(ExtrapolationWarning(extrapolation.warning_message(names, check), features=names,
                                      share=check.share, partner=check.partner))
        return check, hull


for _name in _READ:  # read-only views of the inputs
    setattr(Session, _name, property(lambda self, _n=_name: getattr(self.inputs, _n), doc=f"The inputs' ``{_name}``."))


def center_curves(values: np.ndarray, lead: int) -> np.ndarray:
    """Subtract each curve's value at the first grid cell, in place (the ``lead`` axes index curves)."""
    values = np.asarray(values, dtype=np.float64)
    if not values.flags.writeable:
        values = values.copy()
    flat = values.reshape(values.shape[:lead] + (-1,))
    flat -= flat[..., :1].copy()
    return values


def warn_non_finite(average, individual, outputs, features, grids, ice_rows=None) -> None:
    """Warn (:class:`~pdpx.core.errors.NonFiniteWarning`) when the result holds NaN or infinite values.

    They can only come from the model's own predictions; the warning says how
    many, for which output, at which grid point first and (ICE) in which rows.
    """
    parts = []
    avg = np.asarray(average).reshape(len(outputs), -1)
    bad = ~np.isfinite(avg)
    shape = tuple(len(g) for g in grids)
    for k, out in enumerate(outputs):
        if bad[k].any():
            first = np.unravel_index(int(np.flatnonzero(bad[k])[0]), shape)
            at = ", ".join(f"{f} = {message_value(grids[d][first[d]])}" for d, f in enumerate(features))
            kinds = sorted({"NaN" if np.isnan(v) else "inf" for v in avg[k][bad[k]]})
            parts.append(f"{int(bad[k].sum())} of {avg.shape[1]} grid points of the average for output {out!r} "
                         f"are {' and '.join(kinds)} (first at {at})")
    if individual is not None:
        ind = np.asarray(individual).reshape(len(outputs), np.asarray(individual).shape[1], -1)
        bad_rows = ~np.isfinite(ind).all(axis=(0, 2))
        if bad_rows.any():
            rows = np.flatnonzero(bad_rows)
            if ice_rows is not None:
                rows = np.asarray(ice_rows)[rows]
            shown_rows = ", ".join(str(int(r)) for r in rows[:8]) + (", ..." if len(rows) > 8 else "")
            parts.append(f"the ICE curves of {len(rows)} row(s) hold NaN or inf (rows {shown_rows})")
    if parts:
        warn(
            "the model's predictions are not all finite, so neither is the partial dependence: "
            + "; ".join(parts) + ". Check the model's predict on these inputs (pdpx reports them as they are).",
            NonFiniteWarning,
        )
