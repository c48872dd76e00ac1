"""One call's validated inputs and the loop that turns each feature set into a result.

:class:`Session` checks everything that does not depend on the feature set once
(model, rows, response, target, weights, options), then for each feature set
builds the :class:`~pdpx.core.method.Request`, picks the method and wraps what
it returns in a :class:`~pdpx.core.result.PartialDependenceResult`.
"""

from __future__ import annotations

import difflib
import numbers
import time
from dataclasses import replace
from typing import Any

import numpy as np

from . import cluster, extrapolation, missing, steps, support, trust
from . import config as _config
from .adapter import Adapter, trees_read_once
from .bootstrap import bootstrap_interval
from .data import LocalData, has_missing, short_list
from .dates import is_date_type
from .errors import ExtrapolationWarning, NonFiniteWarning, PdpxError, PdpxTypeError, TreeMismatchWarning, warn
from .grid import feature_grid, is_categorical_type
from .method import Request
from .options import PDOptions
from .plugins import adapt, get_methods, plugin_manager
from .result import PartialDependenceResult, message_value
from .threads import in_background, thread_count
from .validation import shown

#: Rows from which a call's extrapolation check runs on another thread while the method runs (below, the
#: method is over too soon for a second thread to pay for handing the check over)
BACKGROUND_ROWS = 4096


def data_source(X, adapter: Adapter):
    """The data object for ``X``: :class:`~pdpx.core.data.LocalData`, or
    :class:`~pdpx.core.cluster.DaskData` for Dask input."""
    if cluster.is_dask_collection(X):
        return cluster.DaskData(X, adapter)
    return LocalData(X, adapter)


class Session:
    """Validated inputs shared by the feature sets of one call.

    ``options`` is a :class:`~pdpx.core.options.PDOptions` (checked when it was built),
    or None: then the keyword options ``given`` are checked here, with messages naming
    ``function``. A session trusts no caller to have checked the model or the data.
    """

    def __init__(self, model, X, options: PDOptions | None = None, *, function: str = "partial_dependence",
                 **given):
        if options is None:
            options = PDOptions.checked(function, given)
        elif given:
            options = options.but(**given)
        if options.by is not None:
            raise PdpxError("by= is an option of pdpx.partial_dependence (one feature set per call); "
                            "call it once per feature set")
        self.options = options
        self.kind = options.kind
        self.grid_resolution = options.grid_resolution
        self.percentiles = options.percentiles
        self.centered = options.centered
        self.n_jobs = options.n_jobs
        self.progress = options.progress
        self.method_options = dict(options.method_options or {})
        self.memory_budget = (
            options.memory_budget if options.memory_budget is not None else _config.get_config()["memory_budget"]
        )

        self.pm = plugin_manager()
        self.model = model
        self.adapter: Adapter = adapt(model, self.pm)
        self.adapter.check_fitted()
        with _config.config_context(memory_budget=self.memory_budget):  # the adapter's checks of X read within it
            self.data = data_source(X, self.adapter)
        self.X = self.data.head
        self.n_rows = self.data.n_rows
        sample_weight = self.data.weights(options.sample_weight)
        self.names = self.data.names
        self.dtypes = self.data.dtypes
        self.response = self._resolve_response(options.response)
        self.outputs = self._resolve_target(options.target)
        self.sample_weight = check_weights(sample_weight, self.n_rows)
        self.ice_rows = self._resolve_ice_sample(options.ice_sample, options.random_state)
        self.categorical = self._resolve_categorical(options.categorical_features)
        self.custom_values = self._resolve_custom(options.custom_values)
        self.methods = get_methods(self.pm)
        self.method = options.method
        if self.method != "auto" and self.method not in self.methods:
            raise PdpxError(f"unknown method {self.method!r}; available: {['auto'] + sorted(self.methods)}")
        self._grids: dict[int, np.ndarray] = {}
        self._steps: dict[int, str] = {}  # grid="thresholds": feature -> its trees' comparison ("<=" or "<")
        self._grid_notes: dict[int, list[str]] = {}
        self.include_missing = options.include_missing
        self.interval = options.interval
        self.n_boot = options.n_boot
        self.random_state = options.random_state
        self._accepts_missing: dict[int, str | None] = {}
        self._extrapolation_warned = False
        self._support_cache: dict = {}  # the check's row sample and coarse bins, shared by the feature sets
        self._partners: list[bool] | None = None
        self._plan: tuple = ()
        self._batches: dict = {}  # method name -> its plan for this session's feature sets (Method.plan)

    # ---------------------------------------------------------- validation
    def _resolve_response(self, response: str) -> str:
        available = self.adapter.responses()
        if response == "auto":
            if not available:
                raise PdpxError(f"{type(self.adapter.model).__name__} has no response pdpx can average")
            chosen = available[0]
        elif response not in available:
            extra = ""
            if response == "predict" and self.adapter.is_classifier():
                extra = " (a classifier's predicted labels are not numbers to average)"
            raise PdpxError(
                f"{type(self.adapter.model).__name__} has no response {response!r}{extra}; "
                f"use one of {available}"
            )
        else:
            chosen = response
        probe = getattr(self.adapter, "probe", None)
        if probe is not None and len(self.X):
            probe(self.X, chosen)
        return chosen

    def _resolve_target(self, target) -> list[int]:
        names = self.adapter.output_names(self.response)
        if target is None:
            return self.adapter.default_outputs(self.response)
        wanted = list(target) if isinstance(target, (list, tuple, np.ndarray)) else [target]
        if not wanted:
            raise PdpxError("target is empty; leave it out to get every output")
        classes = self.adapter.classes() if self.adapter.is_classifier() else None
        if classes is not None:  # plain Python values, so messages read 1, not np.int64(1)
            classes = [c.item() if isinstance(c, np.generic) else c for c in classes]
        out = []
        for t in wanted:
            idx = None
            if classes is not None:
                single = self.response in ("decision_function", "raw") and len(classes) == 2 and len(names) == 1
                if single:
                    lookup = {str(classes[1]): 0}
                else:
                    lookup = {str(c): i for i, c in enumerate(classes)}
                idx = lookup.get(str(t))
                if idx is None:
                    hint = ""
                    if single:
                        hint = f" (a binary {self.response} has one output, for class {classes[1]!r})"
                    raise PdpxError(
                        f"target {t!r} is not a class of this model{hint}; its classes are {list(classes)!r}"
                    )
            else:
                if isinstance(t, numbers.Integral) and not isinstance(t, bool) and 0 <= t < len(names):
                    idx = int(t)
                elif str(t) in names:
                    idx = names.index(str(t))
                else:
                    raise PdpxError(
                        f"target {t!r} is not an output of this model; its outputs are {names!r} "
                        f"(or their positions 0..{len(names) - 1})"
                    )
            if idx in out:
                raise PdpxError(f"target {t!r} is given twice")
            out.append(idx)
        return out

    def _resolve_ice_sample(self, ice_sample, random_state) -> np.ndarray | None:
        if ice_sample is None:
            return None
        if self.kind == "average":
            raise PdpxError("ice_sample chooses rows for ICE curves; use it with kind='individual' or 'both'")
        if not self.data.supports_ice_sample:
            raise PdpxError("ice_sample is not supported for Dask input; pass X.sample(frac=...).compute() "
                            "for ICE curves and the full Dask X for the average")
        if ice_sample >= self.n_rows:
            return None
        rng = np.random.default_rng(random_state)
        return np.sort(rng.choice(self.n_rows, size=int(ice_sample), replace=False))

    def _column_index(self, f, what: str = "feature") -> int:
        """Position in the model-ordered ``self.X`` of a column named, or at position ``f`` of X as given."""
        if isinstance(f, (numbers.Integral, np.integer)) and not isinstance(f, (bool, np.bool_)):
            given = self.data.input_columns
            if not 0 <= f < len(given):
                raise PdpxError(
                    f"{what} index {f} is out of range: X has {len(given)} columns, "
                    f"indices 0 to {len(given) - 1}"
                )
            return self.names.index(given[int(f)])
        if isinstance(f, str):
            if f in self.names:
                return self.names.index(f)
            close = difflib.get_close_matches(f, self.names, n=3)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise PdpxError(f"unknown {what} {f!r}: X has no such column.{hint} Columns: {short_list(self.names)}")
        raise PdpxTypeError(f"a {what} must be a column name or an integer position, got {shown(f)}")

    def resolve_features(self, features) -> list[int]:
        if isinstance(features, (str, numbers.Integral, np.integer)):
            features = [features]
        try:
            feats = list(features)
        except TypeError:
            raise PdpxError(f"features must be a name, a position, or a list of them; got {features!r}") from None
        if not feats:
            raise PdpxError("features is empty; name at least one column of X")
        idx = [self._column_index(f) for f in feats]
        dupes = sorted({self.names[i] for i in idx if idx.count(i) > 1})
        if dupes:
            raise PdpxError(f"features lists {dupes} more than once; name each feature once")
        return idx

    def _resolve_categorical(self, categorical_features) -> list[bool]:
        flags = [is_categorical_type(dtype) for dtype in self.dtypes]
        if categorical_features is None:
            return flags
        if isinstance(categorical_features, str):  # one name, not its letters
            categorical_features = [categorical_features]
        cats = list(categorical_features)
        if cats and all(isinstance(c, (bool, np.bool_)) for c in cats):
            given = self.data.input_columns
            if len(cats) != len(given):
                raise PdpxError(
                    f"categorical_features as a boolean mask needs one entry per column of X "
                    f"({len(given)}), got {len(cats)}"
                )
            for name, flag in zip(given, cats):  # the mask follows X's columns as given
                if flag:
                    flags[self.names.index(name)] = True
            return flags
        for c in cats:
            flags[self._column_index(c, "categorical feature")] = True
        return flags

    def _resolve_custom(self, custom_values) -> dict[int, Any]:
        if custom_values is None:
            return {}
        return {self._column_index(k, "custom_values key"): v for k, v in custom_values.items()}

    def grid_for(self, j: int) -> np.ndarray:
        if j not in self._grids:
            column = self.data.column(j)
            if self.options.grid == "thresholds" and not self.categorical[j] and j not in self.custom_values:
                grid, self._steps[j], self._grid_notes[j] = steps.feature_steps(
                    self.adapter, self.response, j, self.names[j], column)
            else:
                grid = feature_grid(  # a narrow float column's grid: the values it holds (notes: custom rounded)
                    column, categorical=self.categorical[j], grid_resolution=self.grid_resolution,
                    percentiles=self.percentiles, custom=self.custom_values.get(j),
                    notes=self._grid_notes.setdefault(j, []),
                )
            self.adapter.check_grid(self.names[j], grid)
            if self.missing_point(j):
                grid = missing.with_missing(grid)
            self._grids[j] = grid
        return self._grids[j]

    def missing_point(self, j: int) -> bool:
        """Whether feature ``j``'s grid ends with the missing-value point (``include_missing``)."""
        if self.include_missing is False or self.categorical[j]:
            if self.include_missing is True and self.categorical[j]:
                raise PdpxError(
                    f"include_missing=True: feature {self.names[j]!r} is categorical; the missing-value grid "
                    "point is for numeric features (a categorical feature's missing values are a level of their own "
                    "only if you make them one, e.g. X[col].cat.add_categories('missing').fillna('missing'))"
                )
            return False
        if self.include_missing == "auto" and not has_missing(self.data.column(j)):
            return False
        if j not in self._accepts_missing:
            self._accepts_missing[j] = missing.refusal(self.adapter, self.X, j, self.response)
        reason = self._accepts_missing[j]
        if reason is not None and self.include_missing is True:
            raise PdpxError(f"include_missing=True: the model does not accept a missing value of feature "
                            f"{self.names[j]!r}: {reason}. Use include_missing='auto' or False")
        return reason is None

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
            self._batches[method.name] = method.plan(self.adapter, self._plan)
        return self._batches[method.name]

    def request(self, features: list[int]) -> Request:
        grids = [self.grid_for(j) for j in features]
        req = Request(
            X=self.X, features=features, grid_values=grids, categorical=[self.categorical[j] for j in features],
            response=self.response, outputs=self.outputs, sample_weight=self.sample_weight,
            kind="both" if self.interval is not None else self.kind,
            memory_budget=self.memory_budget, n_jobs=self.n_jobs, progress=self.progress,
            options=self.method_options,
        )
        self._check_result_size(req, n_ice=self.n_rows if self.interval is not None else None)
        return req

    def _check_result_size(self, req: Request, n_ice: int | None = None) -> None:
        """Refuse results over the budget; leave methods the budget minus the result's size."""
        n = n_ice or (self.n_rows if self.ice_rows is None else len(self.ice_rows))
        K, G = len(req.outputs), req.n_grid
        need = K * G * 8 * (n if req.needs_individual else 1)
        req.memory_budget = max(req.memory_budget - need, req.memory_budget // 8)
        if need > self.memory_budget:
            what = "ICE curves" if req.needs_individual else "the partial dependence grid"
            shape = " x ".join(str(s) for s in req.grid_shape)
            advice = (
                "use kind='average', ICE for a sample of rows (ice_sample=1000: the average still uses "
                "every row), " if req.needs_individual else ""
            )
            fewer = ("use grid='uniform' with grid_resolution, or custom_values, for a feature with many steps"
                     if any(j in self._steps for j in req.features) else "lower grid_resolution")
            raise PdpxError(
                f"{what} for {n:,} rows, a {shape} grid and {K} output(s) would take "
                f"{_config.format_bytes(need)}, over the memory budget of {_config.format_bytes(self.memory_budget)}. "
                f"To fit: {advice}{fewer}, or raise memory_budget (e.g. memory_budget='4GB')."
            )

    def choose_method(self, req: Request):
        """The method to run and notes on faster methods ``auto`` could not use (each asked once)."""
        if self.method != "auto":
            m = self.methods[self.method]
            reason = m.unavailable(self.adapter, req)
            if reason:
                raise PdpxError(f"method {self.method!r} cannot run here: {reason}")
            return self._check_options(m), []
        notes = []
        candidates = sorted((m for m in self.methods.values() if m.equals_brute), key=lambda m: m.cost_rank)
        for m in candidates:
            reason = m.unavailable(self.adapter, req)
            if reason is None and len(req.X) == self.n_rows:  # rows held here (not Dask's): may defer
                reason = self.batch(m).deferred(req)
            if reason is None:
                return self._check_options(m, notes), notes
            notes.append(f"{m.name} not used: {reason}")
        raise PdpxError("no method can compute this request")  # pragma: no cover - brute always can

    def checked(self, method, req: Request, notes: list[str]):
        """``method``, or ``brute`` where ``method``'s values disagree with the model's own predict on a sample of
        each feature's grid (:func:`pdpx.core.trust.verdict`, asked once per model, response, dtypes and
        feature); the disagreement goes into ``notes`` and a :class:`TreeMismatchWarning`."""
        brute = self.methods.get("brute")
        if method is brute or not method.equals_brute or brute is None or not _config.setting("check_trees"):
            return method
        n_out = len(self.adapter.output_names(self.response))
        for j in req.features:
            why = trust.verdict(self.adapter, method, brute, req, j, n_out, self.dtypes)
            if why is not None:
                notes.append(f"{method.name} not used: its values disagreed with the model's own {self.response} "
                             f"on a sample of grid points ({why}); brute answered")
                warn(TreeMismatchWarning(
                    f"pdpx's reading of this {type(self.model).__name__} disagreed with its own {self.response} "
                    f"({why}), so pdpx called the model instead (method='brute'); the result is right, only "
                    "slower. Please report this to pdpx with the model's type and settings."))
                return brute
        return method

    def _check_options(self, m, skipped=()):
        unknown = sorted(set(self.method_options) - set(m.options))
        if unknown:
            chosen = " (chosen by method='auto')" if self.method == "auto" else ""
            why = "".join(f"; {s}" for s in skipped)
            raise PdpxError(
                f"method_options {unknown} are not options of method {m.name!r}{chosen}; "
                f"its options: {list(m.options) or 'none'}{why}"
            )
        return m

    def compute(self, features: list[int]) -> PartialDependenceResult:
        """The result of one feature set (positions in the model-ordered columns)."""
        req = self.request(features)
        columns = [self.data.column(j) for j in features]
        with trees_read_once(self.adapter):  # asked by choose_method, then by the method
            method, skipped = self.choose_method(req)
            method = self.checked(method, req, skipped)
            batch = self.batch(method)
            # the extrapolation check needs only the rows and the grids: beside a method that leaves the GIL
            # free for long enough, it runs on another core meanwhile
            beside = (self.data.supports_ice_sample and self.n_rows >= BACKGROUND_ROWS and thread_count(req.n_jobs) > 1
                      and batch.beside(req))
            checking = in_background(self._support_values, features, req.grid_values, columns, beside=beside)
            try:
                out, elapsed = self._run(batch, req)
            except BaseException:
                checking.exception()  # the check is done before the error leaves (it reads this session)
                raise
        average, individual = out.average, out.individual
        lower = upper = None
        if self.interval is not None:
            ice = center_curves(individual.copy(), lead=2) if self.centered else individual
            lower, upper = bootstrap_interval(ice, self.sample_weight, self.interval, self.n_boot, self.random_state)
            del ice
            req = replace(req, kind=self.kind)
            if self.kind == "average":
                individual = None
            elif self.ice_rows is not None:
                individual = individual[:, self.ice_rows]
        if not req.needs_individual:
            individual = None
        names = self.adapter.output_names(self.response)
        warn_non_finite(average, individual, [names[k] for k in self.outputs],
                        [self.names[j] for j in features], req.grid_values, self.ice_rows)
        if self.centered:  # in place: no second copy of a large ICE array
            average = center_curves(average, lead=1)
            if individual is not None:
                individual = center_curves(individual, lead=2)
        notes = list(out.notes) + skipped + [n for j in features for n in self._grid_notes.get(j, [])]
        check, hull = self.extrapolation(features, checking.result(), notes)
        return PartialDependenceResult(
            features=[self.names[j] for j in features],
            grid_values=req.grid_values,
            categorical=req.categorical,
            average=average,
            individual=individual,
            outputs=[names[k] for k in self.outputs],
            response=self.response,
            response_label=self.adapter.response_label(self.response),
            method=method.name,
            kind=self.kind,
            centered=self.centered,
            n_rows=self.n_rows,
            ice_rows=self.ice_rows if individual is not None else None,
            elapsed=elapsed,
            notes=notes,
            feature_data={self.names[j]: c.array if is_date_type(c.dtype) else c.to_numpy()  # dates: no object array
                          for j, c in zip(features, columns)},
            model_name=type(self.adapter.model).__name__,
            lower=lower, upper=upper, interval=self.interval,
            background=self.X if self.data.supports_ice_sample else None,
            extrapolation=check,
            steps={self.names[j]: self._steps[j] for j in features if j in self._steps},
            diagnostics=support.SupportInputs(columns, list(req.grid_values), list(req.categorical),
                                              self.sample_weight, outside=hull,
                                              steps=[self._steps.get(j) for j in features]),
        )

    def curve_means(self, features: list[int], shares: list) -> tuple[list[np.ndarray], np.ndarray, str] | None:
        """For each feature ``j`` of ``features`` (1-way), every row's ICE curve over ``j``'s grid averaged with
        ``shares[k]`` (one weight per grid point, summing to 1), from a method that computes it without forming the
        curves (:meth:`~pdpx.core.method.Method.curve_means`): ``([means (K, n)], f (K, n), method name)``, ``f``
        the response at each row. None when the method chosen for these requests has no such way, or the rows are
        not held here: then compute the curves."""
        if not self.data.supports_ice_sample or not features:
            return None
        reqs = [replace(self.request([j]), kind="average") for j in features]
        shares = [np.asarray(s, dtype=np.float64).reshape(-1) for s in shares]
        for req, s in zip(reqs, shares):
            if len(s) != req.n_grid:
                raise PdpxError(f"curve_means: {len(s)} shares for the {req.n_grid} grid points of feature "
                                f"{self.names[req.features[0]]!r}; pass one share per grid point")
        with trees_read_once(self.adapter):
            method, notes = self.choose_method(reqs[0])
            if any(self.checked(method, req, notes) is not method for req in reqs):
                return None  # the curves then take brute, feature by feature
            got = method.curve_means(self.adapter, reqs, shares)
        if got is None:
            return None
        means, f = got
        return means, f, method.name

    def _run(self, batch, req: Request):
        """(the result of ``batch``, a method's plan, for ``req``; seconds it ran)."""
        ice_rows = self.ice_rows
        if self.interval is not None:  # the bootstrap resamples every row's ICE curve
            if not self.data.supports_ice_sample:
                raise PdpxError("interval is not supported for Dask input (it resamples every row's ICE "
                                "curve); pass a pandas X, or a sample of it")
            ice_rows = None
        t0 = time.perf_counter()
        out = self.data.run(batch, self.adapter, req, model=self.model, ice_rows=ice_rows)
        return out, time.perf_counter() - t0

    def _support_values(self, features: list[int], grids: list, columns: list):
        """(extrapolation check or None, outside-hull mask or None, a note or None) of one feature set: the
        computation of :meth:`extrapolation`, which may run on another thread while the method runs (it reads
        the rows, the grids and this session's support cache, nothing the method writes). Never raises."""
        cats = [self.categorical[j] for j in features]
        hull = check = None
        try:
            if len(features) == 2 and not any(cats):
                hull = support.outside_hull(columns[0], columns[1], grids[0], grids[1])
            if self._partners is None:  # the columns a 1-way check may pair with: numeric, not marked categorical
                self._partners = [not c and not is_categorical_type(d) for c, d in zip(self.categorical, self.dtypes)]
            check = extrapolation.extrapolation_check(self.X, features, grids, cats, self.sample_weight,
                                                      numeric=self._partners, hull=hull, cache=self._support_cache,
                                                      dtypes=self.dtypes)
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
        if not self.data.supports_ice_sample and check is not None:
            notes.append(f"the extrapolation check looked at the first {check.rows:,} rows of the Dask input")
        if check is not None and check.warns and not self._extrapolation_warned:
            self._extrapolation_warned = True
            names = [self.names[j] for j in features]
            warn(ExtrapolationWarning(extrapolation.warning_message(names, check), features=names,
                                      share=check.share, partner=check.partner))
        return check, hull


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


def check_weights(sample_weight, n: int) -> np.ndarray | None:
    """``sample_weight`` as a float64 array of ``n`` finite, non-negative weights, not all zero."""
    if sample_weight is None:
        return None
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise PdpxError("sample_weight must be numbers, one per row of X") from None
    if w.ndim != 1 or w.shape[0] != n:
        raise PdpxError(f"sample_weight must have one weight per row of X ({n}), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise PdpxError("sample_weight contains NaN or infinite values; give every row a finite weight")
    if (w < 0).any():
        raise PdpxError(
            f"sample_weight has {(w < 0).sum()} negative value(s); weights must be >= 0 (0 leaves a row out)"
        )
    if w.sum() <= 0:
        raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
    return np.ascontiguousarray(w)
