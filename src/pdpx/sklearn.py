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
* Parameter-type errors are ``pdpx.sklearn.InvalidParameterError`` (a ``ValueError``
  and a ``TypeError``, like scikit-learn's, which is not public).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd

from .api import partial_dependence as pdpx_partial_dependence
from .core.data import from_polars, is_polars
from .core.grid import mquantiles
from .core.plugins import adapt

__all__ = ["partial_dependence", "InvalidParameterError"]

_RECURSION_CLASSES = (
    "GradientBoostingClassifier", "GradientBoostingRegressor", "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor", "HistGradientBoostingRegressor", "DecisionTreeRegressor",
    "RandomForestRegressor",
)
_COLUMNS_SPEC = ("No valid specification of the columns. Only a scalar, list or slice of all integers or all "
                 "strings, or boolean mask is allowed")


class InvalidParameterError(ValueError, TypeError):
    """A parameter of the wrong type or value (scikit-learn raises its own class of the same bases)."""


# ------------------------------------------------------------------ parameter checks (scikit-learn's wording)
def _array_like(v) -> bool:
    if isinstance(v, (str, bytes, numbers.Number)) or v is None:
        return False
    if hasattr(v, "shape") and len(getattr(v, "shape", ())) == 0:
        return False
    return hasattr(v, "__len__") or hasattr(v, "shape") or hasattr(v, "__array__")


def _sparse(v) -> bool:
    return hasattr(v, "nnz") and hasattr(v, "tocsr")


def _has(*methods):
    return lambda v: all(callable(getattr(v, m, None)) for m in methods)


def _among(*options):
    return lambda v: isinstance(v, str) and v in options


def _is(*types):
    return lambda v: isinstance(v, types)


def _int_from(low):
    return lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= low


def _str_options(options: set) -> str:
    # a set, iterated as scikit-learn iterates its own (same literal order, same process hash seed)
    return "a str among {" + ", ".join(repr(o) for o in options) + "}"


_NONE = (lambda v: v is None, "None")
_ARRAY = (_array_like, "an array-like")
_PARAMS = {
    "X": [_ARRAY, (_sparse, "a sparse array or matrix")],
    "features": [_ARRAY, (_is(numbers.Integral), "an instance of 'int'"), (_is(str), "an instance of 'str'")],
    "sample_weight": [_ARRAY, _NONE],
    "categorical_features": [_ARRAY, _NONE],
    "feature_names": [_ARRAY, _NONE],
    "response_method": [(_among("auto", "predict_proba", "decision_function"),
                         _str_options({"auto", "predict_proba", "decision_function"}))],
    "percentiles": [(_is(tuple), "an instance of 'tuple'")],
    "grid_resolution": [(_int_from(1), "an int in the range [1, inf)")],
    "method": [(_among("auto", "recursion", "brute"), _str_options({"auto", "recursion", "brute"}))],
    "kind": [(_among("average", "individual", "both"), _str_options({"average", "individual", "both"}))],
    "custom_values": [(_is(dict), "an instance of 'dict'"), _NONE],
}
_ESTIMATOR = [(_has("fit", "predict"), "an object implementing 'fit' and 'predict'"),
              (_has("fit", "predict_proba"), "an object implementing 'fit' and 'predict_proba'"),
              (_has("fit", "decision_function"), "an object implementing 'fit' and 'decision_function'")]


def _refuse(name, value, constraints):
    texts = [text for _, text in constraints]
    allowed = texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " or " + texts[-1]
    raise InvalidParameterError(
        f"The {name!r} parameter of partial_dependence must be {allowed}. Got {value!r} instead.")


def _check_params(values: dict, pdpx_model: bool) -> None:
    if not pdpx_model and not any(ok(values["estimator"]) for ok, _ in _ESTIMATOR):
        _refuse("estimator", values["estimator"], _ESTIMATOR)
    for name, constraints in _PARAMS.items():
        if not any(ok(values[name]) for ok, _ in constraints):
            _refuse(name, values[name], constraints)


# ------------------------------------------------------------------ the model
def _sklearn_estimator(model) -> bool:
    return any(ok(model) for ok, _ in _ESTIMATOR)


def _read_by_adapter(model) -> bool:
    """Whether a pdpx adapter other than the generic one takes the model (Boosters, R models, plugins)."""
    try:
        return adapt(model).library not in ("generic", "scikit-learn")
    except Exception:  # noqa: BLE001 - not a model pdpx knows: scikit-learn's check decides
        return False


def _kind_of_model(estimator) -> tuple[bool, bool]:
    """(is classifier, is regressor), checked the way scikit-learn checks, or by the adapter."""
    if _sklearn_estimator(estimator):
        from sklearn.base import is_classifier, is_regressor
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(estimator)
        clf, reg = is_classifier(estimator), is_regressor(estimator)
        if clf or reg or not _read_by_adapter(estimator):
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
    return _read_by_adapter(estimator)  # XGBoost, LightGBM, plugins: pdpx reads their trees


# ------------------------------------------------------------------ features and grids
def _key_type(key):
    """'int', 'str', 'bool' or None for an empty list: what the columns are selected by."""
    if isinstance(key, (bool, np.bool_)):
        return "bool"
    if isinstance(key, str):
        return "str"
    if isinstance(key, int):
        return "int"
    if isinstance(key, slice):
        raise TypeError("Only array-like or scalar are supported. A Python slice was given.")
    if isinstance(key, (list, tuple)):
        kinds = set()
        for k in set(key):
            if isinstance(k, (list, tuple)) or not isinstance(k, (bool, np.bool_, str, int)) or type(k) not in (
                    bool, np.bool_, str, int):
                raise ValueError(_COLUMNS_SPEC)
            kinds.add(_key_type(k))
        if len(kinds) > 1:
            raise ValueError(_COLUMNS_SPEC)
        return kinds.pop() if kinds else None
    if hasattr(key, "dtype"):
        kind = {"i": "int", "u": "int", "b": "bool", "O": "str", "U": "str", "S": "str"}.get(np.dtype(key.dtype).kind)
        if kind is None:
            raise ValueError(_COLUMNS_SPEC)
        return kind
    raise ValueError(_COLUMNS_SPEC)


def _column_indices(X, key, columns) -> list[int]:
    kind = _key_type(key)
    n = X.shape[1]
    if kind == "int" and np.any(np.less(key, 0)):
        raise ValueError(f"all features must be in [0, {n - 1}]")
    if isinstance(key, (list, tuple)) and not key:
        return []
    if kind in ("int", "bool"):
        try:
            index = np.asarray(key) if kind == "bool" or not np.isscalar(key) else key
            return np.atleast_1d(np.arange(n)[index]).tolist()
        except IndexError as exc:
            raise ValueError(f"all features must be in [0, {n - 1}] or [-{n}, 0]") from exc
    if columns is None:
        raise ValueError("Specifying the columns using strings is only supported for dataframes.")
    wanted = [key] if np.isscalar(key) else list(key)
    missing = {*wanted} - {*columns}
    if missing:
        raise ValueError(f"Some column names are not columns of the dataframe: {missing}")
    return [columns.index(c) for c in wanted]


def _names(columns, n, feature_names) -> list:
    if feature_names is None:
        names = list(columns) if columns is not None else [f"x{i}" for i in range(n)]
    else:
        names = feature_names.tolist() if hasattr(feature_names, "tolist") else list(feature_names)
    if len(set(names)) != len(names):
        raise ValueError("feature_names should not contain duplicates.")
    return names


def _categorical_flags(categorical_features, indices, n, names) -> list[bool]:
    if categorical_features is None:
        return [False] * len(indices)
    cats = np.asarray(categorical_features)
    if cats.size == 0:
        raise ValueError("Passing an empty list (`[]`) to `categorical_features` is not supported. Use `None` "
                         "instead to indicate that there are no categorical features.")
    if cats.dtype.kind == "b":
        if cats.size != n:
            raise ValueError("When `categorical_features` is a boolean array-like, the array should be of shape "
                             f"(n_features,). Got {cats.size} elements while `X` contains {n} features.")
        return [bool(cats[i]) for i in indices]
    if cats.dtype.kind not in ("i", "O", "U"):
        raise ValueError("Expected `categorical_features` to be an array-like of boolean, integer, or string. "
                         f"Got {cats.dtype} instead.")
    positions = set()
    for c in cats:
        if isinstance(c, str):
            if c not in names:
                raise ValueError(f"Feature {c!r} not in feature_names")
            positions.add(names.index(c))
        else:
            positions.add(c)
    return [i in positions for i in indices]


def _axis(column: np.ndarray, j: int, categorical: bool, percentiles, grid_resolution: int) -> np.ndarray:
    try:
        uniques = np.unique(column)
    except TypeError as exc:
        raise ValueError(
            f"The column #{j} contains mixed data types. Finding unique categories fail due to sorting. It usually "
            "means that the column contains `np.nan` values together with `str` categories. Such use case is not "
            "yet supported in scikit-learn."
        ) from exc
    if categorical or uniques.shape[0] < grid_resolution:
        return uniques
    lo, hi = mquantiles(np.asarray(column, dtype=float), percentiles)
    if np.allclose(lo, hi):
        raise ValueError("percentiles are too close to each other, unable to build the grid. Please choose "
                         "percentiles that are further apart.")
    return np.linspace(lo, hi, num=grid_resolution, endpoint=True)


def _grids(columns: list[np.ndarray], categorical, percentiles, grid_resolution, custom: dict) -> list[np.ndarray]:
    if not isinstance(percentiles, Iterable) or len(percentiles) != 2:
        raise ValueError("'percentiles' must be a sequence of 2 elements.")
    if not all(0 <= p <= 1 for p in percentiles):
        raise ValueError("'percentiles' values must be in [0, 1].")
    if percentiles[0] >= percentiles[1]:
        raise ValueError("percentiles[0] must be strictly less than percentiles[1].")
    if grid_resolution <= 1:
        raise ValueError("'grid_resolution' must be strictly greater than 1.")
    custom = {k: np.asarray(v, dtype=object if any(isinstance(x, str) for x in v) else None) for k, v in custom.items()}
    bad = {k: v.ndim for k, v in custom.items() if v.ndim != 1}
    if bad:
        raise ValueError("The custom grid for some features is not a one-dimensional array. "
                         + ", ".join(f"Feature {k}: {d} dimensions" for k, d in bad.items()))
    return [custom[j] if j in custom else _axis(col, j, cat, percentiles, grid_resolution)
            for j, (col, cat) in enumerate(zip(columns, categorical))]


def _weights(sample_weight, n_rows: int):
    if sample_weight is None:
        return None
    if np.isscalar(sample_weight):
        w = np.full(n_rows, float(sample_weight))
    else:
        w = np.asarray(sample_weight, dtype=float)
    if w.ndim != 1:
        raise ValueError(f"Sample weights must be 1D array or scalar, got {w.ndim}D array. Expected either a scalar "
                         f"value or a 1D array of length {n_rows}.")
    if w.shape != (n_rows,):
        raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n_rows,)}!")
    if np.all(w == 0):
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return w


def _as_table(X):
    """X as scikit-learn sees it: a DataFrame stays one (polars becomes pandas), a list becomes an array."""
    if is_polars(X):
        return from_polars(X)
    if isinstance(X, pd.DataFrame) or hasattr(X, "__array__") or _sparse(X):
        return X
    arr = np.asarray(X, dtype=object)
    if arr.ndim != 2:
        raise ValueError(f"Expected 2D array, got {arr.ndim}D array instead")
    return arr


def _frame(X, names_of_model) -> pd.DataFrame:
    """The background rows as the DataFrame pdpx computes on (an array takes the model's column names)."""
    if isinstance(X, pd.DataFrame):
        return X
    arr = np.asarray(X)
    if names_of_model is not None and len(names_of_model) == arr.shape[1]:
        columns = list(names_of_model)
    else:
        columns = [f"x{i}" for i in range(arr.shape[1])]
    frame = pd.DataFrame(arr, columns=columns)
    return frame.infer_objects() if arr.dtype == object else frame


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
    from sklearn.utils import Bunch

    foreign = not _sklearn_estimator(estimator) and _read_by_adapter(estimator)
    _check_params(dict(locals()), foreign)
    classifier, regressor = _kind_of_model(estimator)
    X = _as_table(X)
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
    if _sparse(X):
        X = X.toarray()
    n_rows, n_features = X.shape
    weights = _weights(sample_weight, n_rows)
    columns = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
    raw_columns = list(X.columns) if isinstance(X, pd.DataFrame) else None
    indices = _column_indices(X, features, raw_columns)
    names = _names(raw_columns, n_features, feature_names)
    categorical = _categorical_flags(categorical_features, indices, n_features, names)
    given = [features] if isinstance(features, (str, int)) else list(np.atleast_1d(features)) if not isinstance(
        features, (list, tuple)) else list(features)
    take = (lambda j: X.iloc[:, j]) if isinstance(X, pd.DataFrame) else (lambda j: np.asarray(X)[:, j])
    for j, feature, cat in zip(indices, given, categorical):
        if not cat and np.dtype(getattr(take(j).dtype, "numpy_dtype", take(j).dtype)).kind in "iu":
            raise ValueError(
                f"The column {feature!r} contains integer data. Partial dependence plots are not supported for "
                "integer data: this can lead to implicit rounding with NumPy arrays or even errors with newer "
                "pandas versions. Please convert numerical features to floating point dtypes ahead of time to "
                "avoid problems.")
    custom = {i: custom_values[f] for i, f in enumerate(given) if custom_values and _hashable(f) and f in custom_values}
    values = _grids([take(j) for j in indices], categorical, percentiles, grid_resolution, custom)

    frame = _frame(X, adapt(estimator).feature_names() if columns is None else None)
    target = [str(frame.columns[j]) for j in indices]
    if method == "recursion":
        average = _recursion(estimator, frame, target, values, classifier)
        return Bunch(grid_values=values, average=average)
    if classifier:
        have = adapt(estimator).responses()
        order = ["predict_proba", "decision_function"] if response_method == "auto" else [response_method]
        response = next((r for r in order if r in have), None)
        if response is None:
            raise AttributeError(f"{type(estimator).__name__} has none of the following attributes: "
                                 f"{', '.join(order)}.")
    else:
        response = "predict"
    res = pdpx_partial_dependence(
        estimator, frame, target, kind="both" if kind == "both" else kind, method="auto", response=response,
        custom_values={t: list(v) for t, v in zip(target, values)},
        categorical_features=[t for t, c in zip(target, categorical) if c] or None, sample_weight=weights,
        progress=False,
    )
    out = Bunch(grid_values=values)
    if kind in ("average", "both"):
        out["average"] = np.asarray(res.average, dtype=float)
    if kind in ("individual", "both"):
        out["individual"] = np.asarray(res.individual, dtype=float)
    return out


def _hashable(key) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def _recursion(estimator, frame, target, values, classifier) -> np.ndarray:
    """scikit-learn's recursion numbers: pdpx's, less the initial prediction scikit-learn leaves out."""
    adapter = adapt(estimator)
    if _boosting(estimator):
        if getattr(estimator, "_fitted_with_sw", False):
            raise NotImplementedError(f"{type(estimator).__name__} does not support partial dependence plots with "
                                      "the 'recursion' method when sample weights were given during fit time.")
        if getattr(estimator, "init", None) is not None:
            warnings.warn("Using recursion method with a non-constant init predictor will lead to incorrect partial "
                          f"dependence values. Got init={estimator.init}.", UserWarning, stacklevel=3)
    response = "decision_function" if classifier else "predict"
    if _boosting(estimator) and not classifier and "raw" in adapter.responses():
        response = "raw"
    res = pdpx_partial_dependence(estimator, frame, target, method="recursion", response=response,
                                  custom_values={t: list(v) for t, v in zip(target, values)}, progress=False)
    average = np.asarray(res.average, dtype=float)
    if _boosting(estimator):
        base = np.asarray(adapter.tree_model(response).ensemble.base_score, dtype=float).reshape(-1)
        average = average - base[-average.shape[0]:].reshape((-1,) + (1,) * len(target))
    return average
