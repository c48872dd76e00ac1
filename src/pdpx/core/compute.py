"""The public compute functions, :func:`partial_dependence` and :func:`partial_dependence_many`.

Both build a :class:`~pdpx.core.session.Session` (validation first), then compute
one result per feature set.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable

import numpy as np
import pandas as pd

from .adapter import RESPONSES
from .config import parse_bytes
from .errors import PdpxError, PdpxTypeError
from .result import PartialDependenceCollection, PartialDependenceResult
from .session import KINDS, Session
from .validation import (
    N_JOBS,
    PERCENTILES,
    PROGRESS,
    SEED,
    Boolean,
    Constraint,
    InstanceOf,
    Integral,
    Options,
    Real,
    String,
    check_param,
    validate_params,
)


class _Bytes(Constraint):
    """A memory budget: what :func:`pdpx.core.config.parse_bytes` reads."""

    def accepts_type(self, value):
        return isinstance(value, (numbers.Real, str)) and not isinstance(value, (bool, np.bool_))

    def accepts(self, value):
        try:
            parse_bytes(value)
        except PdpxError:
            return False
        return True

    def describe(self):
        return "a number of bytes from 1 MiB to 1 PiB, or a string like '512MB'"

    def hint(self, value):
        try:
            parse_bytes(value)
        except PdpxError as exc:
            return str(exc)
        return None


_ARRAY = (list, tuple, np.ndarray, pd.Series, pd.Index)


class _ArrayLike(Constraint):
    """Anything array-like with a length (or a Dask collection); not text, not a mapping, not a scalar."""

    def __init__(self, what: str):
        self.what = what

    def accepts_type(self, value):
        return (not isinstance(value, (str, bytes, dict, numbers.Number))
                and (hasattr(value, "__len__") or hasattr(value, "compute")))

    def describe(self):
        return self.what


class _Features(Constraint):
    """A column name, an integer position (never a bool), or a list of them."""

    def accepts_type(self, value):
        if isinstance(value, (bool, np.bool_)):
            return False
        return isinstance(value, (str, numbers.Integral, *_ARRAY))

    def describe(self):
        return "a column name, an integer position, or a list of them"

#: What each option of :func:`partial_dependence` accepts (checked before any work;
#: also by :func:`partial_dependence_many`, :func:`pdpx.report` and the R bridge).
PD_OPTIONS = {
    "kind": [Options(*KINDS)],
    "method": [String("a method name ('auto', 'brute', 'exact', 'recursion' or a plugin's)")],
    "response": [Options("auto", *RESPONSES)],
    "grid_resolution": [Integral(low=2)],
    "percentiles": PERCENTILES,
    "custom_values": [InstanceOf(dict, what="a dict {feature: values}"), None],
    "categorical_features": [String("a column name"),
                             InstanceOf(*_ARRAY, what="a list of column names / positions, or a boolean mask"), None],
    "sample_weight": [_ArrayLike("an array of one weight per row of X"), None],
    "centered": [Boolean()],
    "n_jobs": N_JOBS,
    "progress": PROGRESS,
    "memory_budget": [_Bytes(), None],
    "ice_sample": [Integral(low=1), None],
    "random_state": SEED,
    "method_options": [InstanceOf(dict, what="a dict of the method's options"), None],
    "include_missing": [Options("auto"), Boolean()],
    "by": [String("a column name"), Integral(low=0, what="a column position"), None],
    "by_bins": [Integral(low=2)],
    "interval": [Real(0, 1, low_open=True, high_open=True), None],
    "n_boot": [Integral(low=2)],
}
_FEATURES = [_Features()]


def check_options(function: str, options: dict) -> None:
    """Check keyword options meant for :func:`partial_dependence` (unknown names included)."""
    unknown = sorted(set(options) - set(PD_OPTIONS) - {"target"})
    if unknown:
        raise PdpxTypeError(
            f"{function}(): unknown option(s) {unknown}; the options of partial_dependence are "
            f"{sorted(set(PD_OPTIONS) | {'target'})}"
        )
    for name, value in options.items():
        if name in PD_OPTIONS:
            check_param(function, name, value, PD_OPTIONS[name])


@validate_params({"features": _FEATURES, **PD_OPTIONS, "kind": [Options(*KINDS, "derivative")]})
def partial_dependence(
    model: Any,
    X,
    features,
    *,
    kind: str = "average",
    method: str = "auto",
    response: str = "auto",
    target=None,
    grid_resolution: int = 100,
    percentiles: tuple[float, float] = (0.05, 0.95),
    custom_values: dict | None = None,
    categorical_features=None,
    sample_weight=None,
    centered: bool = False,
    n_jobs: int | None = None,
    progress: bool | None = None,
    memory_budget: int | str | None = None,
    ice_sample: int | None = None,
    random_state: int | None = 0,
    method_options: dict | None = None,
    include_missing: bool | str = "auto",
    by=None,
    by_bins: int = 4,
    interval: float | None = None,
    n_boot: int = 200,
) -> PartialDependenceResult:
    """Partial dependence of ``model`` on one set of features (one joint grid).

    Parameters
    ----------
    model : fitted model, or dict of them
        Any model an installed adapter recognises (``docs/api.md`` lists the
        built-in ones), anything with a ``predict`` method, or a function
        ``f(X) -> predictions``. A dict ``{"name": model, ...}`` computes every
        model on the same X and grid (each by its own fastest exact method) and
        returns one :class:`~pdpx.core.stacked.StackedResult` with a ``model`` column.
    X : DataFrame or ndarray of shape (n_rows, n_features)
        Background rows to average over, with the columns the model was fitted on.
    features : str, int, or list of str / int
        The target features. Several features form one joint grid (a 2-way PD
        for two features). Names refer to X's columns, integers to positions.
    kind : {"average", "individual", "both", "derivative"}
        The PD curve, the ICE curves (one per row), or both. ``"derivative"``: the ICE
        curves' finite-difference derivatives and their standard deviation across rows
        (one numeric feature; :func:`pdpx.derivative_ice`).
    method : {"auto", "brute", "exact", "recursion", ...}
        ``auto`` runs the fastest method that returns exactly what ``brute``
        returns (``exact`` for tree models, else ``brute``); ``res.method`` says
        which ran.
    response : {"auto", "predict", "predict_proba", "decision_function", "raw"}
        What to average. ``auto``: ``predict`` for regressors, ``predict_proba``
        (else ``decision_function``) for classifiers. ``raw`` is the margin
        (log-odds...) of boosted models.
    target : label, int, or list, optional
        Which classes / outputs to report. Default: all, except only the positive
        class of a binary classifier's probabilities.
    grid_resolution : int, default 100
        Grid points per numeric feature (fewer if it has fewer unique values).
    percentiles : (float, float), default (0.05, 0.95)
        The grid of a numeric feature spans these percentiles of its values.
    custom_values : dict, optional
        ``{feature: values}``: use these values as that feature's grid.
    categorical_features : list of str / int, or boolean mask, optional
        Features to treat as categorical, in addition to pandas ``category``,
        ``bool``, object and string columns (always categorical).
    sample_weight : array of shape (n_rows,), optional
        Weights of the rows in the average. ICE curves are not weighted.
    centered : bool, default False
        Subtract each curve's value at the first grid point (centered ICE / PD).
    n_jobs : int, optional
        Threads for the computation (``-1``: all cores).
    progress : bool, optional
        Show a progress bar. Default: only for runs longer than a few seconds in
        an interactive terminal.
    memory_budget : int or str, optional
        Bytes intermediate arrays and the result may use (default from :func:`pdpx.set_config`: half the
        memory available).
    ice_sample : int, optional
        Compute ICE curves for this many randomly chosen rows only (seeded by
        ``random_state``); the PD curve still averages over every row.
        ``res.ice_rows`` holds the chosen row positions.
    random_state : int, optional
        Seed for ``ice_sample``.
    method_options : dict, optional
        Options for the chosen method.
    include_missing : {"auto", True, False}, default "auto"
        End the grid of each numeric feature with a missing-value point (NaN in
        ``grid_values``, ``"missing"`` in frames and plots): the model's output with
        the feature set to missing for every row. ``"auto"``: when the feature has
        missing values in X and the model accepts them; ``True``: whenever the model
        accepts them (an error otherwise).
    by : str or int, optional
        A column of X: compute the curves separately on the rows of each of its
        levels, on one grid built from all rows. Numeric columns with more than
        ``by_bins`` values are cut into ``by_bins`` quantile bins. Returns a
        :class:`~pdpx.core.stacked.StackedResult` with a column named after ``by``.
    by_bins : int, default 4
        Quantile bins of a numeric ``by`` column.
    interval : float, optional
        Confidence level (e.g. 0.95) of a bootstrap interval of the PD over the rows
        (``res.lower`` / ``res.upper``; see :mod:`pdpx.core.bootstrap` for what it
        does and does not cover). Resamples the ICE matrix: no extra model calls.
    n_boot : int, default 200
        Bootstrap replicates for ``interval`` (seeded by ``random_state``).

    Returns
    -------
    PartialDependenceResult
        ``grid_values``, ``average`` (n_outputs, *grid_shape), ``individual``
        (n_outputs, n_rows, *grid_shape) or None, ``method``, ``to_frame()``.
    """
    if kind == "derivative":  # not a Session kind: derivatives of the ICE curves
        from ..explain.derivative import derivative_ice

        return derivative_ice(model, X, features, method=method, response=response, target=target,
                              grid_resolution=grid_resolution, percentiles=percentiles, custom_values=custom_values,
                              categorical_features=categorical_features, sample_weight=sample_weight,
                              centered=centered, n_jobs=n_jobs, progress=progress, memory_budget=memory_budget,
                              ice_sample=ice_sample, random_state=random_state, method_options=method_options,
                              include_missing=include_missing, by=by, interval=interval)
    if isinstance(model, dict) or by is not None:
        from .stacked import stacked_partial_dependence

        return stacked_partial_dependence(model, X, features, dict(
            kind=kind, method=method, response=response, target=target, grid_resolution=grid_resolution,
            percentiles=percentiles, custom_values=custom_values, categorical_features=categorical_features,
            sample_weight=sample_weight, centered=centered, n_jobs=n_jobs, progress=progress,
            memory_budget=memory_budget, ice_sample=ice_sample, random_state=random_state,
            method_options=method_options, include_missing=include_missing, interval=interval, n_boot=n_boot,
        ), by=by, by_bins=by_bins)
    session = Session(
        model, X, kind=kind, method=method, response=response, target=target,
        grid_resolution=grid_resolution, percentiles=percentiles, custom_values=custom_values,
        categorical_features=categorical_features, sample_weight=sample_weight, centered=centered,
        n_jobs=n_jobs, progress=progress, memory_budget=memory_budget, ice_sample=ice_sample,
        random_state=random_state, method_options=method_options, include_missing=include_missing,
        interval=interval, n_boot=n_boot,
    )
    return session.compute(session.resolve_features(features))


@validate_params({"feature_sets": [InstanceOf(*_ARRAY, what="a list of feature sets"), None]})
def partial_dependence_many(
    model: Any,
    X,
    feature_sets: Iterable | None = None,
    **options,
) -> PartialDependenceCollection:
    """Partial dependence for several feature sets in one call.

    Parameters
    ----------
    model, X
        As in :func:`partial_dependence`.
    feature_sets : iterable, optional
        Each item is what :func:`partial_dependence` takes as ``features``: a
        name (1-way) or a list of names (a joint grid), e.g.
        ``["age", "fare", ("age", "fare")]``. Default: every column, 1-way;
        constant and all-missing columns are then left out and listed in
        ``collection.skipped``.
    **options
        Every keyword option of :func:`partial_dependence`.

    Returns
    -------
    PartialDependenceCollection
        A sequence of results, indexable by feature names, with ``to_frame()``.
    """
    check_options("partial_dependence_many", options)
    session = Session(model, X, **options)
    skipped = {}
    if feature_sets is None:
        sets = []
        for j, name in enumerate(session.names):
            try:
                session.grid_for(j)
            except PdpxError as exc:
                skipped[(name,)] = str(exc)
                continue
            sets.append([j])
        if not sets:
            raise PdpxError("no column of X has a grid (all are constant or missing): " + "; ".join(skipped.values()))
    else:
        if isinstance(feature_sets, (str, numbers.Integral)):
            raise PdpxError(
                "feature_sets must be a list of feature sets, e.g. ['age', ('age', 'fare')]; "
                "for a single feature set use pdpx.partial_dependence"
            )
        sets = [session.resolve_features(f) for f in feature_sets]
        if not sets:
            raise PdpxError("feature_sets is empty; pass at least one feature, or None for every column")
    return PartialDependenceCollection([session.compute(s) for s in sets], skipped=skipped)
