"""The public compute functions: :func:`partial_dependence` and :func:`partial_dependence_many`.

The top floor (``docs/architecture.md``): they check the arguments once
(:class:`~pdpx.core.options.PDOptions`) and dispatch: one model to
:func:`pdpx.core.compute.compute`, ``by=`` and a dict of models to
:mod:`pdpx.core.stacked`, ``kind="derivative"`` (deprecated: :func:`pdpx.derivative_ice`, with a
:class:`DeprecationWarning`) to :mod:`pdpx.explain.derivative`.
"""

from __future__ import annotations

from typing import Any, Iterable

from .core.compute import compute, compute_many
from .core.deprecation import deprecated
from .core.options import ARRAYS, DEFAULTS, FEATURES, KINDS, PDOptions
from .core.result import CurveResult, PartialDependenceCollection
from .core.stacked import stacked_partial_dependence
from .core.validation import InstanceOf, check_param

__all__ = ["partial_dependence", "partial_dependence_many"]

#: What ``kind`` of :func:`partial_dependence` accepts: a session's kinds, and derivative ICE (deprecated: it is
#: :func:`pdpx.derivative_ice`, which takes the same options).
PD_KINDS = KINDS + ("derivative",)


def partial_dependence(
    model: Any, X, features, *,
    kind: str = "average", method: str = "auto", response: str = "auto", target=None, times=None,
    grid_resolution: int = 100, percentiles: tuple[float, float] = (0.05, 0.95), grid: str = "uniform",
    custom_values: dict | None = None, categorical_features=None, sample_weight=None, centered: bool = False,
    n_jobs: int | None = None, progress: bool | None = None, memory_budget: int | str | None = None,
    ice_sample: int | None = None, random_state: int | None = 0, method_options: dict | None = None,
    include_missing: bool | str = "auto", by=None, by_bins: int = 4, interval: float | str | None = None,
    n_boot: int = 200, level: float | None = None, oob: bool = False,
) -> CurveResult:
    """Partial dependence of ``model`` on one set of features (one joint grid).

    Parameters
    ----------
    model : fitted model, or dict of them
        Any model an installed adapter recognises (``docs/api.md`` lists the built-in ones), anything with a
        ``predict`` method, or a function ``f(X) -> predictions``. A dict ``{"name": model, ...}`` computes every
        model on the same X and grid (each by its own fastest exact method) and returns one
        :class:`~pdpx.core.stacked.StackedResult` with a ``model`` column.
    X : DataFrame or ndarray of shape (n_rows, n_features)
        Background rows to average over, with the columns the model was fitted on.
    features : str, int, or list of str / int
        The target features. Several features form one joint grid (a 2-way PD for two features). Names refer to
        X's columns, integers to positions.
    kind : {"average", "individual", "both"}
        The PD curve, the ICE curves (one per row), or both. ``"derivative"`` is deprecated (it works, with a
        :class:`DeprecationWarning`, until pdpx 0.2.0): call :func:`pdpx.derivative_ice` with the same arguments.
    method : {"auto", "brute", "exact", "recursion", ...}
        ``auto`` runs the fastest method that returns exactly what ``brute`` returns (``exact`` for tree models,
        else ``brute``); ``res.method`` says which ran.
    response : {"auto", "predict", "predict_proba", "decision_function", "raw", "survival", ...}
        What to average. ``auto``: ``predict`` for regressors, ``predict_proba`` (else ``decision_function``) for
        classifiers, ``survival`` for a survival model given ``times=``. ``raw`` is the margin (log-odds...) of
        boosted models; a survival model's ``risk`` is its ``predict`` (``docs/survival.md``).
    target : label, int, or list, optional
        Which classes / outputs to report. Default: all, except only the positive class of a binary classifier's
        probabilities.
    times : list of float, optional
        A survival model's times (``response="survival"`` or ``"cumulative_hazard"``, one output each, ``res.times``):
        increasing, >= 0, up to its last training time. Default: 5 quantiles of its training times (``res.notes``).
    grid_resolution : int, default 100
        Grid points per numeric feature (fewer if it has fewer unique values).
    percentiles : (float, float), default (0.05, 0.95)
        The grid of a numeric feature spans these percentiles of its values.
    grid : {"uniform", "thresholds"}, default "uniform"
        ``"uniform"``: the grid of ``grid_resolution`` and ``percentiles``. ``"thresholds"`` (tree models): one
        point per step of the model's PD on each numeric feature, read from its split thresholds, so the result is
        the exact curve (``res.steps``; ``docs/getting-started.md``, "The whole curve"). ``custom_values`` still
        wins; categorical features keep their categories.
    custom_values : dict, optional
        ``{feature: values}``: use these values as that feature's grid.
    categorical_features : list of str / int, or boolean mask, optional
        Features to treat as categorical, in addition to pandas ``category``, ``bool``, object and string columns
        (always categorical).
    sample_weight : array of shape (n_rows,), optional
        Weights of the rows in the average. ICE curves are not weighted.
    centered : bool, default False
        Subtract each curve's value at the first grid point (centered ICE / PD).
    n_jobs : int, optional
        Threads for the computation (``-1``: all cores).
    progress : bool, optional
        Show a progress bar (default: for runs over a few seconds in a terminal or notebook, never under CI).
    memory_budget : int or str, optional
        Bytes the call may use (default: :func:`pdpx.set_config`'s, half the memory available).
    ice_sample : int, optional
        Compute ICE curves for this many randomly chosen rows only (seeded by ``random_state``); the PD curve still
        averages over every row. ``res.ice_rows`` holds the chosen row positions.
    random_state : int, optional
        Seed for ``ice_sample`` and for the bootstrap of ``interval``.
    method_options : dict, optional
        Options for the chosen method.
    include_missing : {"auto", True, False}, default "auto"
        End the grid of each numeric feature with a missing-value point (NaN in ``grid_values``, ``"missing"`` in
        frames and plots): the model's output with the feature set to missing for every row. ``"auto"``: when the
        feature has missing values in X and the model accepts them; ``True``: whenever the model accepts them (an
        error otherwise).
    by : str or int, optional
        A column of X: compute the curves separately on the rows of each of its levels, on one grid built from all
        rows. Numeric columns with more than ``by_bins`` values are cut into ``by_bins`` quantile bins. Returns a
        :class:`~pdpx.core.stacked.StackedResult` with a column named after ``by``.
    by_bins : int, default 4
        Quantile bins of a numeric ``by`` column.
    interval : float or {"bootstrap", "members", "quantiles", "jackknife", "learner"}, optional
        A band around the PD (``res.lower`` / ``res.upper``). A level (e.g. 0.95) or ``"bootstrap"``: a bootstrap
        interval over the rows (:mod:`pdpx.core.bootstrap`: what it covers; resamples the ICE matrix, no extra model
        calls). ``"members"``: the spread of the model's own members (forests, bagged ensembles: one pass over the
        trees) or of a dict of refit or fold models (the curve is their mean). ``"quantiles"``: a dict ``{0.1: m,
        0.5: m, 0.9: m}`` of quantile models (:mod:`pdpx.core.members`). ``"jackknife"``: a bagged forest's
        ``PD +- z * res.se``, the learner's variance from one fit (:mod:`pdpx.core.jackknife`). ``"learner"``: a
        :class:`~pdpx.explain.learner.Refits` of models refitted on resamples or folds (their mean PD, a t-band
        with the Nadeau-Bengio correction). ``docs/uncertainty.md`` says what each band covers.
    n_boot : int, default 200
        Bootstrap replicates for ``interval`` (seeded by ``random_state``).
    level : float, optional
        The share the band covers with a named ``interval`` (default 0.95).
    oob : bool, default False
        Out-of-bag PD of a bagged forest: each row's ICE averages the members that did not draw it. X must be the
        training rows, in order (checked by number): :mod:`pdpx.core.oob`.

    Returns
    -------
    CurveResult
        A :class:`~pdpx.core.result.PartialDependenceResult` for one model: ``grid_values``, ``average``
        (n_outputs, *grid_shape), ``individual`` (n_outputs, n_rows, *grid_shape) or None, ``method``,
        ``to_frame()``; a ``DerivativeResult`` (one of them) for the deprecated ``kind="derivative"``; a
        :class:`~pdpx.core.stacked.StackedResult` for ``by=`` or a dict of models. Every one has ``to_frame()``,
        ``plot()`` and ``save()``.
    """
    passed = {
        "kind": kind, "method": method, "response": response, "target": target, "times": times,
        "grid_resolution": grid_resolution, "percentiles": percentiles, "grid": grid, "custom_values": custom_values,
        "categorical_features": categorical_features, "sample_weight": sample_weight, "centered": centered,
        "n_jobs": n_jobs, "progress": progress, "memory_budget": memory_budget, "ice_sample": ice_sample,
        "random_state": random_state, "method_options": method_options, "include_missing": include_missing,
        "by": by, "by_bins": by_bins, "interval": interval, "n_boot": n_boot, "level": level, "oob": oob,
    }
    given = {k: v for k, v in passed.items()  # the options the caller set (a default tuple equals, not is, its own)
             if v is not DEFAULTS[k] and not (type(v) is tuple and v == DEFAULTS[k])}
    check_param("partial_dependence", "features", features, FEATURES)
    return _dispatch(model, X, features, PDOptions.checked("partial_dependence", given, kinds=PD_KINDS))


def _dispatch(model, X, features, options: PDOptions) -> CurveResult:
    """:func:`partial_dependence` with its checked options: derivative ICE (deprecated), a band from the model, a
    dict of models or ``by=``, or one model."""
    if options.kind == "derivative":  # not a session kind: derivatives of the ICE curves
        from .explain.derivative import derivatives

        deprecated("partial_dependence(..., kind='derivative')", "pdpx.derivative_ice(model, X, feature, ...)")

        return derivatives(model, X, features, options)
    if options.interval == "learner":  # refitted models: the learner-PD and its corrected band
        from .explain.learner import learner_interval

        return learner_interval(model, X, features, options)
    if options.interval in ("members", "quantiles"):  # a band from the model: its members, or quantile models
        from .core.members import model_interval

        return model_interval(model, X, features, options)
    if options.interval == "jackknife" or options.oob:  # a bagged forest: its learner variance, or out-of-bag PD
        return _forest_uncertainty(model, X, features, options)
    if isinstance(model, dict) or options.by is not None:
        return stacked_partial_dependence(model, X, features, options)
    return compute(model, X, features, options)


def _forest_uncertainty(model, X, features, options: PDOptions) -> CurveResult:
    """``oob=True`` (each row through the members that did not draw it) or ``interval="jackknife"``."""
    if options.oob:
        from .core.oob import oob_partial_dependence

        return oob_partial_dependence(model, X, features, options)
    from .core.jackknife import jackknife_interval

    return jackknife_interval(model, X, features, options)


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
    check_param("partial_dependence_many", "feature_sets", feature_sets,
                [InstanceOf(*ARRAYS, what="a list of feature sets"), None])
    return compute_many(model, X, feature_sets, PDOptions.checked("partial_dependence_many", options))
