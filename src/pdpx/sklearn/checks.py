"""scikit-learn's checks of ``partial_dependence``'s arguments, with its wording.

Each function refuses what scikit-learn refuses, with the same error type and
message (``tests/sklearn/test_function.py`` compares them), and returns the
argument in the form the rest of :mod:`pdpx.sklearn` uses.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..core.data import from_polars, is_polars
from ..core.grid import mquantiles, sorted_mquantiles

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


def is_sparse(v) -> bool:
    """Whether ``v`` is a scipy sparse array or matrix (told by its methods: scipy is not imported)."""
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
    "X": [_ARRAY, (is_sparse, "a sparse array or matrix")],
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


def check_params(values: dict, pdpx_model: bool) -> None:
    """Refuse a parameter of the wrong type as scikit-learn's ``validate_params`` does (the estimator too,
    unless ``pdpx_model``: a model a pdpx adapter reads, which scikit-learn would refuse)."""
    if not pdpx_model and not any(ok(values["estimator"]) for ok, _ in _ESTIMATOR):
        _refuse("estimator", values["estimator"], _ESTIMATOR)
    for name, constraints in _PARAMS.items():
        if not any(ok(values[name]) for ok, _ in constraints):
            _refuse(name, values[name], constraints)


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


def column_indices(X, key, columns) -> list[int]:
    """Positions of the columns ``key`` selects (``columns``: a DataFrame's column names, else None)."""
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


def feature_names_of(columns, n, feature_names) -> list:
    """The feature names: ``feature_names`` if given, else the columns' names, else ``x0``, ``x1``..."""
    if feature_names is None:
        names = list(columns) if columns is not None else [f"x{i}" for i in range(n)]
    else:
        names = feature_names.tolist() if hasattr(feature_names, "tolist") else list(feature_names)
    if len(set(names)) != len(names):
        raise ValueError("feature_names should not contain duplicates.")
    return names


def categorical_flags(categorical_features, indices, n, names) -> list[bool]:
    """Whether each of the columns at ``indices`` is categorical, from ``categorical_features``."""
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


def _axis(column: np.ndarray, j: int, categorical: bool, percentiles, grid_resolution: int,
          sorted_column=None) -> np.ndarray:
    """One feature's grid, as scikit-learn builds it; ``sorted_column``: the float column sorted, when known."""
    if sorted_column is not None:  # a float column: its unique values and quantiles from the one sort
        uniques = sorted_unique(sorted_column)
    else:
        try:
            uniques = np.unique(column)
        except TypeError as exc:
            raise ValueError(
                f"The column #{j} contains mixed data types. Finding unique categories fail due to sorting. It "
                "usually means that the column contains `np.nan` values together with `str` categories. Such use "
                "case is not yet supported in scikit-learn."
            ) from exc
    if categorical or uniques.shape[0] < grid_resolution:
        return uniques
    if sorted_column is not None:
        lo, hi = sorted_mquantiles(sorted_column, percentiles)
    else:
        lo, hi = mquantiles(np.asarray(column, dtype=float), percentiles)
    if np.allclose(lo, hi):
        raise ValueError("percentiles are too close to each other, unable to build the grid. Please choose "
                         "percentiles that are further apart.")
    return np.linspace(lo, hi, num=grid_resolution, endpoint=True)


def sorted_unique(s: np.ndarray) -> np.ndarray:
    """``np.unique`` of a sorted float array ``s`` (NaNs, sorted last, collapse into one as there)."""
    keep = np.empty(s.shape[0], dtype=bool)
    keep[:1] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    out = s[keep]
    if out.size and np.isnan(out[-1]):
        out = out[:int(np.searchsorted(out, np.nan, side="left")) + 1]
    return out


def sorted_float(column):
    """A float64 column (pandas or numpy) sorted, or None for any other column."""
    if getattr(column, "dtype", None) != np.float64:  # others keep np.unique's dtype and errors
        return None
    return np.sort(np.asarray(column, dtype=np.float64))


def grids(columns: list[np.ndarray], categorical, percentiles, grid_resolution, custom: dict,
          keys=None, memo: dict | None = None) -> list[np.ndarray]:
    """Each target column's grid, as scikit-learn builds it (``custom``: position in the set -> values).

    ``memo`` (with ``keys``, the columns' positions in X): the grids and sorted float columns of earlier calls
    on the same X and arguments, shared (a display's feature sets repeat features); filled here.
    """
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
    memo = {} if memo is None else memo
    keys = list(range(len(columns))) if keys is None else keys
    out = []
    for j, (col, cat, key) in enumerate(zip(columns, categorical, keys)):
        if j in custom:
            out.append(custom[j])
            continue
        grid_key = ("grid", key, bool(cat), tuple(percentiles), grid_resolution)
        if grid_key not in memo:
            if ("sorted", key) not in memo:
                memo[("sorted", key)] = sorted_float(col)
            memo[grid_key] = _axis(col, j, cat, percentiles, grid_resolution, memo[("sorted", key)])
        out.append(memo[grid_key].copy())  # each result its own array
    return out


def weights(sample_weight, n_rows: int):
    """``sample_weight`` as an array of one weight per row, or None."""
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


def as_table(X):
    """X as scikit-learn sees it: a DataFrame stays one (polars becomes pandas), a list becomes an array."""
    if is_polars(X):
        return from_polars(X)
    if isinstance(X, pd.DataFrame) or hasattr(X, "__array__") or is_sparse(X):
        return X
    arr = np.asarray(X, dtype=object)
    if arr.ndim != 2:
        raise ValueError(f"Expected 2D array, got {arr.ndim}D array instead")
    return arr


def frame_of(X, names_of_model) -> pd.DataFrame:
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


def is_sklearn_estimator(model) -> bool:
    """Whether ``model`` has what scikit-learn asks of an estimator (``fit`` and a response)."""
    return any(ok(model) for ok, _ in _ESTIMATOR)


def hashable(key) -> bool:
    """Whether ``key`` can be looked up in a dict."""
    try:
        hash(key)
    except TypeError:
        return False
    return True
