"""One call's validated inputs: everything that does not depend on the feature set, checked once.

:func:`validated` builds an :class:`Inputs` from the model, X and the
:class:`~pdpx.core.options.PDOptions`: the adapter, the rows (:func:`data_source`), their
names and dtypes, the response, outputs, weights, ICE rows, categorical flags, custom
grids, the user's ``kind`` and the kind requests carry (derived here, once), and the
``method_options`` checked for the method (or for each method ``auto`` may choose), as
frozen :class:`~pdpx.core.method.MethodOptions`. It is the one place where a session's
values are computed from the options; :class:`~pdpx.core.session.Session` runs on it.
"""

from __future__ import annotations

import difflib
import numbers
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from . import config as _config
from .adapter import TIME_RESPONSES, Adapter
from .data import short_list
from .errors import PdpxError, PdpxTypeError
from .grid import is_categorical_type
from .method import Method, MethodOptions, checked_options, options_class
from .options import PDOptions
from .plugins import adapt, get_methods, plugin_manager
from .rows import Rows, require, rows_for
from .times import resolve as resolve_times
from .validation import shown


def data_source(X, adapter: Adapter) -> Rows:
    """The rows of ``X`` (:func:`pdpx.core.rows.rows_for`: a pandas frame here, a Dask collection, a Spark
    DataFrame)."""
    return rows_for(X, adapter)


@dataclass(frozen=True, eq=False)
class Inputs:
    """What :func:`validated` checked (see the module docstring); read-only.

    Attributes
    ----------
    kind : str
        What the user asked for (``average``, ``individual``, ``both``).
    request_kind : str
        What each method run computes: ``both`` when an interval resamples the ICE curves, else ``kind``.
    method_options : dict
        Method name -> its checked :class:`~pdpx.core.method.MethodOptions` (the methods ``auto`` may
        choose whose options accept what was given, or the one method asked for).
    refused : dict
        Method name -> why it refuses the given ``method_options`` (``auto`` only: raised if chosen).
    positions : ndarray or None
        For the rows of one ``by=`` group: their positions in the full X (``background``).
    """

    options: PDOptions
    model: Any
    adapter: Adapter
    pm: Any
    data: Any
    names: list
    dtypes: list
    response: str
    outputs: list
    sample_weight: np.ndarray | None
    ice_rows: np.ndarray | None
    categorical: tuple
    custom_values: dict
    kind: str
    request_kind: str
    memory_budget: int
    method: str
    methods: dict
    method_options: dict
    refused: dict = field(default_factory=dict)
    positions: np.ndarray | None = None
    background: pd.DataFrame | None = None
    #: a survival model's times (``times=``, :mod:`pdpx.core.times`): one per output of the response; None else
    times: np.ndarray | None = None
    #: what the result says of the times (the default times, named)
    time_notes: tuple = ()

    @property
    def X(self) -> pd.DataFrame:
        """The rows validation and encoders look at (all of them; a sample of Dask input)."""
        return self.data.head

    @property
    def progress(self):
        """The ``progress`` option (a bar: True, False, or None for long runs in a terminal)."""
        return self.options.progress

    @property
    def n_rows(self) -> int:
        """Rows of X."""
        return self.data.n_rows

    def options_for(self, method: Method) -> MethodOptions:
        """``method``'s checked options (its defaults when the options given were meant for another method)."""
        got = self.method_options.get(method.name)
        return got if got is not None else options_class(method)()

    def refusal(self, method: Method, skipped=()) -> PdpxError | None:
        """The error to raise when ``auto`` chose ``method`` but its options refuse what was given, else None."""
        if method.name not in self.refused:
            return None
        try:
            options_class(method).checked(dict(self.options.method_options or {}), method.name,
                                          label=f"{method.name!r} (chosen by method='auto')")
        except PdpxError as exc:
            return PdpxError(str(exc) + "".join(f"; {s}" for s in skipped))
        return None  # pragma: no cover - refused at the boundary, so refused again

    def group(self, rows: np.ndarray, sample_weight) -> Inputs:
        """These inputs for the rows ``rows`` (positions) of X: one ``by=`` group, validated already. Its ICE rows
        are sampled among its own; results name rows by their positions in the full X."""
        part = self.data.subset(rows)
        return replace(self, data=part, sample_weight=sample_weight, positions=np.asarray(rows),
                       ice_rows=_ice_rows(self.options, self.kind, part),
                       background=self.X if self.background is None else self.background)

    # ------------------------------------------------------------ features
    def column_index(self, f, what: str = "feature") -> int:
        """Position in the model-ordered ``X`` of a column named, or at position ``f`` of X as given."""
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
        """Positions (in the model-ordered columns) of ``features``: names or positions in X as given."""
        if isinstance(features, (str, numbers.Integral, np.integer)):
            features = [features]
        try:
            feats = list(features)
        except TypeError:
            raise PdpxError(f"features must be a name, a position, or a list of them; got {features!r}") from None
        if not feats:
            raise PdpxError("features is empty; name at least one column of X")
        idx = [self.column_index(f) for f in feats]
        dupes = sorted({self.names[i] for i in idx if idx.count(i) > 1})
        if dupes:
            raise PdpxError(f"features lists {dupes} more than once; name each feature once")
        return idx


def validated(model, X, options: PDOptions) -> Inputs:
    """The :class:`Inputs` of ``model`` on ``X`` with ``options`` (a session trusts no caller to have checked the
    model or the data). The method and its options are checked before the rows are read or the model called.
    ``options.rows``: validated rows another session of the call built on the same X and model, shared with the
    adapter that validated them."""
    if options.by is not None:
        raise PdpxError("by= is an option of pdpx.partial_dependence (one feature set per call); "
                        "call it once per feature set")
    if isinstance(options.interval, str):  # a band from the model: pdpx.core.members, one feature set per call
        raise PdpxError(f"interval={options.interval!r} is an option of pdpx.partial_dependence (one feature set "
                        "per call); call it once per feature set")
    if options.oob:  # out-of-bag PD: pdpx.core.oob, one feature set per call
        raise PdpxError("oob=True is an option of pdpx.partial_dependence (one feature set per call); call it once "
                        "per feature set")
    pm = plugin_manager()
    shared = options.rows if options.rows is not None and options.rows.shared_by(X, model) else None
    if shared is not None:  # rows another session of the call validated, with the adapter that validated them
        adapter: Adapter = shared.adapter
    else:
        adapter = adapt(model, pm)
        adapter.check_fitted()
    methods = get_methods(pm)
    method_options, refused = _method_options(methods, options.method, options.method_options)
    budget = options.memory_budget if options.memory_budget is not None else _config.get_config()["memory_budget"]
    if shared is not None:
        data = shared
    else:
        with _config.config_context(memory_budget=budget):  # the adapter's checks of X read within it
            data = data_source(X, adapter)
    sample_weight = data.weights(options.sample_weight)
    names, dtypes = data.names, data.dtypes
    response = _response(adapter, data.head, options.response, options.times)
    time_notes = tuple(resolve_times(adapter, response, options.times))
    outputs = _target(adapter, response, options.target)
    sample_weight = check_weights(sample_weight, data.n_rows)
    base = Inputs(
        options=options, model=model, adapter=adapter, pm=pm, data=data, names=names, dtypes=dtypes,
        response=response, outputs=outputs, sample_weight=sample_weight,
        ice_rows=_ice_rows(options, options.kind, data), categorical=(), custom_values={},
        kind=options.kind, request_kind="both" if options.interval is not None else options.kind,
        memory_budget=budget, method=options.method, methods=methods, method_options=method_options,
        refused=refused, times=adapter.times if response in TIME_RESPONSES else None, time_notes=time_notes,
    )
    categorical = _categorical(base, options.categorical_features)
    custom = {} if options.custom_values is None else {
        base.column_index(k, "custom_values key"): v for k, v in options.custom_values.items()}
    return replace(base, categorical=tuple(categorical), custom_values=custom)


def auto_candidates(methods: dict) -> list[Method]:
    """The methods ``method="auto"`` may choose (those that equal ``brute``), cheapest first."""
    return sorted((m for m in methods.values() if m.equals_brute), key=lambda m: m.cost_rank)


def _method_options(methods: dict, method: str, given) -> tuple[dict, dict]:
    """(method name -> its checked options, method name -> why it refuses them) for ``method`` (or each method
    ``auto`` may choose); raises when the method is unknown, or when no method that may run accepts them."""
    if method != "auto":
        if method not in methods:
            raise PdpxError(f"unknown method {method!r}; available: {['auto'] + sorted(methods)}")
        return {method: checked_options(methods[method], given)}, {}
    parsed, refused = {}, {}
    for m in auto_candidates(methods):
        try:
            parsed[m.name] = options_class(m).checked(dict(given or {}), m.name,
                                                      label=f"{m.name!r} (which method='auto' may choose)")
        except PdpxError as exc:
            refused[m.name] = str(exc)
    if not parsed:
        raise PdpxError("; ".join(refused.values()) + ". Pass method= with the options of that method")
    return parsed, refused


def _response(adapter: Adapter, X: pd.DataFrame, response: str, times=None) -> str:
    available = adapter.responses()
    if response == "auto":
        if not available:
            raise PdpxError(f"{type(adapter.model).__name__} has no response pdpx can average")
        chosen = "survival" if times is not None and "survival" in available else available[0]
    elif response not in available:
        extra = ""
        if response == "predict" and adapter.is_classifier():
            extra = " (a classifier's predicted labels are not numbers to average)"
        refused = adapter.response_refused(response)
        if refused:
            extra = f": {refused}"
        elif response in TIME_RESPONSES + ("risk",) and not set(available) & set(TIME_RESPONSES):
            labels = ", ".join(map(adapter.response_label, available))
            extra = (f": it is not a survival model (what it predicts: {labels}); a survival response needs a model "
                     "with survival functions (predict_survival_function)")
        raise PdpxError(
            f"{type(adapter.model).__name__} has no response {response!r}{extra}; "
            f"use one of {available}"
        )
    else:
        chosen = response
    probe = getattr(adapter, "probe", None)
    if probe is not None and len(X):
        probe(X, chosen)
    return chosen


def _target(adapter: Adapter, response: str, target) -> list[int]:
    names = adapter.output_names(response)
    if target is None:
        return adapter.default_outputs(response)
    wanted = list(target) if isinstance(target, (list, tuple, np.ndarray)) else [target]
    if not wanted:
        raise PdpxError("target is empty; leave it out to get every output")
    classes = adapter.classes() if adapter.is_classifier() else None
    if classes is not None:  # plain Python values, so messages read 1, not np.int64(1)
        classes = [c.item() if isinstance(c, np.generic) else c for c in classes]
    out = []
    for t in wanted:
        idx = None
        if classes is not None:
            single = response in ("decision_function", "raw") and len(classes) == 2 and len(names) == 1
            lookup = {str(classes[1]): 0} if single else {str(c): i for i, c in enumerate(classes)}
            idx = lookup.get(str(t))
            if idx is None:
                hint = f" (a binary {response} has one output, for class {classes[1]!r})" if single else ""
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


def _ice_rows(options: PDOptions, kind: str, data: Rows) -> np.ndarray | None:
    """The rows whose ICE curves a result keeps (``ice_sample`` of them, drawn with ``random_state``), or None:
    every row."""
    if options.ice_sample is None:
        return None
    if kind == "average":
        raise PdpxError("ice_sample chooses rows for ICE curves; use it with kind='individual' or 'both'")
    require(data, "ice_sample", "partial_dependence")  # rows elsewhere come here by position (Rows.take)
    if options.ice_sample >= data.n_rows:
        return None
    rng = np.random.default_rng(options.random_state)
    return np.sort(rng.choice(data.n_rows, size=int(options.ice_sample), replace=False))


def _categorical(inputs: Inputs, categorical_features) -> list[bool]:
    flags = [is_categorical_type(dtype) for dtype in inputs.dtypes]
    if categorical_features is None:
        return flags
    if isinstance(categorical_features, str):  # one name, not its letters
        categorical_features = [categorical_features]
    cats = list(categorical_features)
    if cats and all(isinstance(c, (bool, np.bool_)) for c in cats):
        given = inputs.data.input_columns
        if len(cats) != len(given):
            raise PdpxError(
                f"categorical_features as a boolean mask needs one entry per column of X "
                f"({len(given)}), got {len(cats)}"
            )
        for name, flag in zip(given, cats):  # the mask follows X's columns as given
            if flag:
                flags[inputs.names.index(name)] = True
        return flags
    for c in cats:
        flags[inputs.column_index(c, "categorical feature")] = True
    return flags


def check_weights(sample_weight, n: int) -> np.ndarray | None:
    """``sample_weight`` as a float64 array of ``n`` finite, non-negative weights, not all zero."""
    if sample_weight is None:
        return None
    if isinstance(sample_weight, str):  # a Spark DataFrame's data object reads its column; no other X has one
        raise PdpxTypeError(f"sample_weight must be an array of one weight per row of X; got {sample_weight!r} (a "
                            "str): a column's name is taken for a Spark DataFrame X only")
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
