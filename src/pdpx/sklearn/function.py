"""A drop-in for :func:`sklearn.inspection.partial_dependence`: change one import.

>>> from pdpx.sklearn import partial_dependence      # was: from sklearn.inspection import ...
>>> pd_ = partial_dependence(model, X, [0], kind="both")   # doctest: +SKIP
>>> pd_["grid_values"], pd_["average"], pd_["individual"]  # doctest: +SKIP

Same arguments, defaults, return value (a :class:`sklearn.utils.Bunch`) and, for the
same mistakes, the same error types and messages as scikit-learn's function, which is
the reference the tests compare with. What differs (``docs/sklearn.md``):

* ``method="auto"`` always returns scikit-learn's ``brute`` numbers, computed by
  pdpx's ``exact`` for tree models (``brute`` otherwise). scikit-learn's own ``auto``
  switches to ``recursion`` for gradient boosting, decision-tree and random-forest
  regressors, a different quantity on correlated data (and, for gradient boosting,
  offset by the initial prediction).
* ``method="recursion"`` returns scikit-learn's recursion numbers, initial prediction
  left out as scikit-learn leaves it out.
* Models scikit-learn does not take are accepted when a pdpx adapter reads them:
  ``xgboost.Booster``, ``lightgbm.Booster``, R models through rpy2, and any plugin's.
* Models pdpx reads no trees of are called once per grid point with all the rows, as
  scikit-learn does (pdpx's own brute stacks grid points; the drop-in must also match a
  model whose output depends on the other rows of the call).
* Parameter-type errors are ``pdpx.sklearn.InvalidParameterError`` (a ``ValueError``
  and a ``TypeError``, like scikit-learn's, which is not public).
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..api import partial_dependence_many
from ..core import trust
from ..core.dates import is_date_type
from ..core.errors import ExtrapolationWarning, warn
from ..core.plugins import adapt
from .checks import (
    InvalidParameterError,
    as_table,
    categorical_flags,
    check_params,
    column_indices,
    feature_names_of,
    frame_of,
    grids,
    hashable,
    is_sklearn_estimator,
    is_sparse,
    weights,
)

__all__ = ["partial_dependence", "InvalidParameterError", "Plan", "plan", "run"]

_RECURSION_CLASSES = (
    "GradientBoostingClassifier", "GradientBoostingRegressor", "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor", "HistGradientBoostingRegressor", "DecisionTreeRegressor",
    "RandomForestRegressor",
)


# ------------------------------------------------------------------ the model
def read_by_adapter(model) -> bool:
    """Whether a pdpx adapter other than the generic one takes the model (Boosters, R models, plugins)."""
    try:
        return adapt(model).library not in ("generic", "scikit-learn")
    except Exception:  # noqa: BLE001 - not a model pdpx knows: scikit-learn's check decides
        return False


def kind_of_model(estimator) -> tuple[bool, bool]:
    """(is classifier, is regressor), checked the way scikit-learn checks, or by the adapter."""
    if is_sklearn_estimator(estimator):
        from sklearn.base import is_classifier, is_regressor
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(estimator)
        clf, reg = is_classifier(estimator), is_regressor(estimator)
        if clf or reg or not read_by_adapter(estimator):
            if not (clf or reg):
                raise ValueError("'estimator' must be a fitted regressor or classifier.")
            if clf and isinstance(estimator.classes_[0], np.ndarray):
                raise ValueError("Multiclass-multioutput estimators are not supported")
            return clf, reg
    adapter = adapt(estimator)
    adapter.check_fitted()
    clf = bool(adapter.is_classifier())
    return clf, not clf


def _sklearn_class(estimator, *names) -> bool:
    """Whether ``estimator`` is an instance of one of scikit-learn's classes ``names``."""
    if not type(estimator).__module__.startswith("sklearn."):
        return False
    import sklearn.ensemble
    import sklearn.tree

    classes = [getattr(sklearn.ensemble, n, None) or getattr(sklearn.tree, n) for n in names]
    return isinstance(estimator, tuple(classes))


def _boosting(estimator) -> bool:
    return _sklearn_class(estimator, "GradientBoostingClassifier", "GradientBoostingRegressor",
                          "HistGradientBoostingClassifier", "HistGradientBoostingRegressor")


def _recursion_supported(estimator) -> bool:
    if type(estimator).__module__.startswith("sklearn."):
        return _boosting(estimator) or _sklearn_class(estimator, "DecisionTreeRegressor", "RandomForestRegressor")
    return read_by_adapter(estimator)  # XGBoost, LightGBM, plugins: pdpx reads their trees


def partial_dependence(
    estimator,
    X,
    features,
    *,
    sample_weight=None,
    categorical_features=None,
    feature_names=None,
    response_method="auto",
    percentiles=(0.05, 0.95),
    grid_resolution=100,
    custom_values=None,
    method="auto",
    kind="average",
):
    """Partial dependence of ``features``, as :func:`sklearn.inspection.partial_dependence` computes it.

    Parameters
    ----------
    estimator : fitted estimator
        A scikit-learn regressor or classifier (XGBoost's and LightGBM's scikit-learn
        models included), or any model a pdpx adapter reads: ``xgboost.Booster``,
        ``lightgbm.Booster``, an R model through rpy2, a plugin's model.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The rows to average over (pandas or polars DataFrame, array, or list of rows).
    features : int, str, or array-like of them, or boolean mask
        The target feature(s); several make one joint grid.
    sample_weight : array-like of shape (n_samples,), default None
        Weights of the rows in the average (ICE curves are not weighted).
    categorical_features : array-like of int, str or bool, default None
        Which features are categorical: positions, names, or a mask over all features.
    feature_names : array-like of str, default None
        Names of X's columns, for ``categorical_features`` given by name with an array X.
    response_method : {"auto", "predict_proba", "decision_function"}, default "auto"
        For classifiers; ``auto`` tries ``predict_proba``, then ``decision_function``.
        Regressors always use ``predict`` and accept only ``auto``.
    percentiles : tuple of float, default (0.05, 0.95)
        The numeric grid spans these percentiles of the feature.
    grid_resolution : int, default 100
        Grid points per numeric feature (its unique values when fewer).
    custom_values : dict, default None
        ``{feature: values}``, keyed as in ``features``: that feature's grid.
    method : {"auto", "recursion", "brute"}, default "auto"
        ``auto`` and ``brute`` return scikit-learn's brute numbers (pdpx computes them
        with ``exact`` for tree models); ``recursion`` returns scikit-learn's recursion
        numbers. Unlike scikit-learn, ``auto`` never switches to ``recursion``.
    kind : {"average", "individual", "both"}, default "average"
        PD, ICE, or both.

    Returns
    -------
    sklearn.utils.Bunch
        ``grid_values`` (list of 1-D arrays), ``average`` of shape
        (n_outputs, *grid_shape) and/or ``individual`` of shape
        (n_outputs, n_samples, *grid_shape), as scikit-learn returns them.
    """
    return run([plan(estimator, X, features, sample_weight=sample_weight, categorical_features=categorical_features,
                     feature_names=feature_names, response_method=response_method, percentiles=percentiles,
                     grid_resolution=grid_resolution, custom_values=custom_values, method=method, kind=kind)])[0]


@dataclass
class Plan:
    """One feature set of a call, checked as scikit-learn checks it and ready to compute.

    :func:`plan` makes it; :func:`run` computes several plans of one model and one X
    in one pdpx session per kind of computation.
    """

    estimator: Any
    X: Any                       # the rows as scikit-learn sees them (DataFrame or array; polars and lists converted)
    columns: list[int]           # the target features' positions in X
    grid_values: list[np.ndarray]
    categorical: list[bool]
    kind: str                    # "average", "individual" or "both"
    recursion: bool              # scikit-learn's recursion numbers rather than brute's
    classifier: bool
    response: str                # what brute averages: "predict", "predict_proba" or "decision_function"
    sample_weight: np.ndarray | None


def plan(estimator, X, features, *, sample_weight=None, categorical_features=None, feature_names=None,
         response_method="auto", percentiles=(0.05, 0.95), grid_resolution=100, custom_values=None,
         method="auto", kind="average", memo: dict | None = None) -> Plan:
    """Check one call of :func:`partial_dependence` (scikit-learn's errors, in its order) and plan it.

    ``memo``: shared by the plans of one X and one set of arguments (a display's feature sets), which then
    share each column's grid and sort (:func:`.checks.grids`).
    """
    foreign = not is_sklearn_estimator(estimator) and read_by_adapter(estimator)
    check_params(dict(estimator=estimator, X=X, features=features, sample_weight=sample_weight,
                      categorical_features=categorical_features, feature_names=feature_names,
                      response_method=response_method, percentiles=percentiles, grid_resolution=grid_resolution,
                      custom_values=custom_values, method=method, kind=kind), foreign)
    classifier, regressor = kind_of_model(estimator)
    X = as_table(X)
    if regressor and response_method != "auto":
        raise ValueError("The response_method parameter is ignored for regressors and must be 'auto'.")
    if kind != "average":
        if method == "recursion":
            raise ValueError("The 'recursion' method only applies when 'kind' is set to 'average'")
        method = "brute"
    if method == "recursion":
        if sample_weight is not None:
            raise ValueError("The 'recursion' method can only be applied when sample_weight is None.")
        if not _recursion_supported(estimator):
            raise ValueError("Only the following estimators support the 'recursion' method: "
                             f"{', '.join(_RECURSION_CLASSES)}. Try using method='brute'.")
        if response_method == "auto":
            response_method = "decision_function"
        if response_method != "decision_function":
            raise ValueError("With the 'recursion' method, the response_method must be 'decision_function'. "
                             f"Got {response_method}.")
    if is_sparse(X):
        X = X.toarray()
    n_rows, n_features = X.shape
    w = weights(sample_weight, n_rows)
    raw_columns = list(X.columns) if isinstance(X, pd.DataFrame) else None
    indices = column_indices(X, features, raw_columns)
    names = feature_names_of(raw_columns, n_features, feature_names)
    categorical = categorical_flags(categorical_features, indices, n_features, names)
    given = [features] if isinstance(features, (str, int)) else list(np.atleast_1d(features)) if not isinstance(
        features, (list, tuple)) else list(features)
    take = (lambda j: X.iloc[:, j]) if isinstance(X, pd.DataFrame) else (lambda j: np.asarray(X)[:, j])
    for j, feature, cat in zip(indices, given, categorical):
        if not cat and is_date_type(take(j).dtype):  # scikit-learn's grid arithmetic fails on dates
            raise ValueError(
                f"The column {feature!r} holds dates ({take(j).dtype}); scikit-learn's partial dependence computes "
                "its grid with arithmetic that dates do not support. Use pdpx.partial_dependence(estimator, X, "
                f"[{feature!r}]), whose grid is dates, or mark the column categorical.")
        if not cat and np.dtype(getattr(take(j).dtype, "numpy_dtype", take(j).dtype)).kind in "iu":
            raise ValueError(
                f"The column {feature!r} contains integer data. Partial dependence plots are not supported for "
                "integer data: this can lead to implicit rounding with NumPy arrays or even errors with newer "
                "pandas versions. Please convert numerical features to floating point dtypes ahead of time to "
                "avoid problems.")
    custom = {i: custom_values[f] for i, f in enumerate(given) if custom_values and hashable(f) and f in custom_values}
    values = grids([take(j) for j in indices], categorical, percentiles, grid_resolution, custom, indices, memo)
    response = "predict"
    if method == "recursion":
        response = "decision_function" if classifier else "predict"
    elif classifier:
        have = adapt(estimator).responses()
        order = ["predict_proba", "decision_function"] if response_method == "auto" else [response_method]
        response = next((r for r in order if r in have), None)
        if response is None:
            raise AttributeError(f"{type(estimator).__name__} has none of the following attributes: "
                                 f"{', '.join(order)}.")
    return Plan(estimator=estimator, X=X, columns=indices, grid_values=values, categorical=categorical, kind=kind,
                recursion=method == "recursion", classifier=classifier, response=response, sample_weight=w)


def run(plans: list[Plan], *, n_jobs=None, progress=False, caller: str = "partial_dependence") -> list:
    """Compute ``plans`` (one model, one X) and return one :class:`sklearn.utils.Bunch` per plan, in order.

    ``caller`` names the scikit-learn function the user called, in the warnings (:func:`in_sklearn_words`).

    The plans are computed in one pdpx session per kind of computation: scikit-learn's
    recursion numbers, brute's averages, brute's ICE curves (most calls need one).
    Every feature set of a session shares its validation, adapter and tree model.
    """
    from sklearn.utils import Bunch

    if not plans:
        return []
    first = plans[0]
    X = first.X
    frame = frame_of(X, adapt(first.estimator).feature_names() if not isinstance(X, pd.DataFrame) else None)
    targets = [[str(frame.columns[j]) for j in p.columns] for p in plans]
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(plans):
        key = "recursion" if p.recursion else "average" if p.kind == "average" else "ice"
        groups.setdefault(key, []).append(i)
    out: list = [None] * len(plans)
    for key, members in groups.items():
        sets = [targets[i] for i in members]
        custom, categorical, missing = {}, set(), False
        for i in members:
            for name, grid, cat in zip(targets[i], plans[i].grid_values, plans[i].categorical):
                # scikit-learn's grid of a column holding NaN holds NaN: pdpx's missing-value point stands for it
                values = _present(grid)
                missing = missing or len(values) < len(grid)
                custom[name] = values or [0.0]
                if cat:
                    categorical.add(name)
        if key == "recursion":
            results = _recursion(first.estimator, frame, sets, custom, first.classifier, n_jobs, progress)
        else:
            kinds = {plans[i].kind for i in members}
            kind = kinds.pop() if len(kinds) == 1 else "both"
            method, options = ("auto", None) if _trees_answer(first.estimator, frame, first.response) else (
                "brute", {"stack": False})
            with in_sklearn_words(first.X, frame, caller):
                collection = partial_dependence_many(
                    first.estimator, frame, sets, kind=kind, method=method, method_options=options,
                    response=first.response,
                    custom_values=custom, categorical_features=sorted(categorical) or None,
                    sample_weight=first.sample_weight, include_missing=missing, n_jobs=n_jobs, progress=progress,
                )
            results = [_on_grid(r, plans[i].grid_values) for i, r in zip(members, collection)]
        for i, (average, individual) in zip(members, results):
            bunch = Bunch(grid_values=plans[i].grid_values)
            if plans[i].kind in ("average", "both"):
                bunch["average"] = np.asarray(average, dtype=float)
            if plans[i].kind in ("individual", "both"):
                bunch["individual"] = np.asarray(individual, dtype=float)
            out[i] = bunch
    return out


@contextmanager
def in_sklearn_words(X, frame: pd.DataFrame, caller: str):
    """Pass on the warnings raised inside, pdpx's :class:`~pdpx.core.errors.ExtrapolationWarning` said in
    scikit-learn's words (:func:`sklearn_extrapolation`) and attributed to the user's line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        if issubclass(w.category, ExtrapolationWarning):
            warn(sklearn_extrapolation(w.message, X, frame, caller))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def sklearn_extrapolation(found: ExtrapolationWarning, X, frame: pd.DataFrame, caller: str) -> ExtrapolationWarning:
    """The extrapolation warning for a user of the scikit-learn drop-in: features as the user names them (a
    DataFrame's column names, else positions), and what to do with scikit-learn's arguments, or with pdpx's own
    functions for those who use them."""
    named = isinstance(X, pd.DataFrame)

    def feature(name) -> str:
        return repr(name) if named else f"{int(frame.columns.get_loc(name))}"

    what = " and ".join(feature(f) for f in found.features)
    share = f"{100 * found.share:.0f}%"
    if found.partner is not None:
        lead = (f"{share} of the partial dependence of feature {what} is computed on combinations of it with "
                f"feature {feature(found.partner)} that do not occur in X (the two are strongly dependent)")
    else:
        lead = (f"{share} of the grid of the 2-way partial dependence of features {what} are combinations of "
                "values that do not occur together in X")
    text = (f"{caller}: {lead}, so there the curve shows the model extrapolating, not what it learnt from data. "
            "With scikit-learn: the deciles that PartialDependenceDisplay marks on the x axis show where the data "
            "lie, and a narrower grid (percentiles=(0.1, 0.9), or custom_values) keeps the curve within them. With "
            "pdpx (pdpx.partial_dependence), the result's plot() shades the grid points without rows, and pdpx.ale "
            "computes accumulated local effects, which stay within the data.")
    return ExtrapolationWarning(text, features=found.features, share=found.share, partner=found.partner)


def _present(grid) -> list:
    """The grid's values that are not missing, each once, in order."""
    out: list = []
    for v in grid:
        if not (_missing(v) or any(v == u for u in out)):
            out.append(v)
    return out


def _on_grid(res, grids) -> tuple:
    """(average, individual) of pdpx's result ``res`` taken at scikit-learn's ``grids``: pdpx computed each grid's
    values (:func:`_present`, in order) then, when the column holds NaN, its missing-value point; a missing grid
    value is taken at that point, a value given twice at its one point."""
    picks = [_positions(list(mine), list(theirs)) for mine, theirs in zip(res.grid_values, grids)]
    average = res.average[(slice(None),) + np.ix_(*picks)]
    individual = None
    if res.individual is not None:
        individual = res.individual[(slice(None), slice(None)) + np.ix_(*picks)]
    return average, individual


def _positions(mine: list, theirs: list) -> list[int]:
    """Where each of scikit-learn's grid values ``theirs`` is in pdpx's grid ``mine``."""
    nan_at = next((k for k, u in enumerate(mine) if _missing(u)), None)
    values = [u for u in mine if not _missing(u)]
    present = _present(theirs)
    out = []
    for v in theirs:
        if _missing(v):
            out.append(nan_at)
            continue
        k = next(k for k, u in enumerate(present) if not _missing(u) and u == v)
        if len(values) != len(present):  # pdpx merged values the column cannot tell apart: match by value
            k = int(np.argmin([abs(float(u) - float(v)) for u in values])) if values else 0
        out.append(k if nan_at is None or k < nan_at else k + 1)
    return out


def _missing(v) -> bool:
    """A scalar missing value (NaN, None, pd.NA)."""
    return bool(pd.isna(v)) if np.ndim(v) == 0 else False


def _trees_answer(estimator, frame: pd.DataFrame, response: str) -> bool:
    """Whether the model is known to be a function of each row alone: pdpx reads its trees for ``response``, or
    every call on the way is its library's own code (:func:`_library_code`). When not, brute calls the model once
    per grid point with all the rows, as scikit-learn's brute does, so that a model whose output on a row depends
    on the other rows of the call gives scikit-learn's numbers (pdpx's brute stacks grid points by default)."""
    adapter = adapt(estimator)
    try:
        adapter.validate_columns(frame)
        if adapter.tree_model(response) is not None:
            return True
    except Exception:  # noqa: BLE001 - the pdpx call that follows says what is wrong with the input
        return False
    return _library_code(adapter, response)


def _library_code(adapter, response: str) -> bool:
    """Whether every call on the way to ``response`` is the model library's own code, which predicts row by row
    (:mod:`pdpx.core.trust`), and holds no function of the user's (a FunctionTransformer's ``func``, a
    TransformedTargetRegressor's ``inverse_func``): then stacking grid points cannot change the numbers."""
    if not adapter.library_roots or trust.path_refusal(adapter, response) is not None:
        return False
    return not any(callable(getattr(obj, attr, None)) for obj, *_ in adapter.prediction_path(response)
                   for attr in ("func", "inverse_func"))


def _recursion(estimator, frame, sets, custom, classifier, n_jobs, progress) -> list:
    """scikit-learn's recursion numbers of each feature set: pdpx's, less the initial prediction it leaves out."""
    adapter = adapt(estimator)
    if _boosting(estimator):
        if getattr(estimator, "_fitted_with_sw", False):
            raise NotImplementedError(f"{type(estimator).__name__} does not support partial dependence plots with "
                                      "the 'recursion' method when sample weights were given during fit time.")
        if getattr(estimator, "init", None) is not None:
            warn("Using recursion method with a non-constant init predictor will lead to incorrect partial "
                 f"dependence values. Got init={estimator.init}.", UserWarning)
    response = "decision_function" if classifier else "predict"
    if _boosting(estimator) and not classifier and "raw" in adapter.responses():
        response = "raw"
    collection = partial_dependence_many(estimator, frame, sets, method="recursion", response=response,
                                         custom_values=custom, include_missing=False, n_jobs=n_jobs,
                                         progress=progress)
    base = None
    if _boosting(estimator):
        base = np.asarray(adapter.tree_model(response).ensemble.base_score, dtype=float).reshape(-1)
    results = []
    for target, res in zip(sets, collection):
        average = np.asarray(res.average, dtype=float)
        if base is not None:
            average = average - base[-average.shape[0]:].reshape((-1,) + (1,) * len(target))
        results.append((average, None))
    return results
