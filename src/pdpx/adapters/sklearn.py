"""scikit-learn estimators and pipelines.

Prediction goes through the estimator's own methods. Tree extraction (for
``exact`` and ``recursion``) lives in :mod:`pdpx.adapters.sklearn_trees`.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..core.adapter import Adapter, as_2d
from ..core.config import get_config
from ..core.dates import date_kind, is_date_grid
from ..core.errors import NotFittedError, PdpxError
from ..core.grid import column_dtype
from ..core.hookspecs import hookimpl


def is_sklearn_estimator(model) -> bool:
    """True for instances of scikit-learn estimators, without importing scikit-learn."""
    if isinstance(model, type):
        return False
    return any(getattr(k, "__module__", "").startswith("sklearn.") for k in type(model).__mro__)


def _final_estimator(model):
    """The estimator at the end of (nested) Pipelines, or ``model`` itself."""
    while hasattr(model, "steps") and model.steps and not isinstance(model.steps[-1][1], str):
        model = model.steps[-1][1]
    return model


def _single_output(model) -> bool:
    """Gradient boosting models of scikit-learn have exactly one output per class / target."""
    try:  # private modules: if they move, fall back to probing
        from sklearn.ensemble._gb import BaseGradientBoosting
        from sklearn.ensemble._hist_gradient_boosting.gradient_boosting import BaseHistGradientBoosting
    except ImportError:  # pragma: no cover
        return False
    return isinstance(model, (BaseGradientBoosting, BaseHistGradientBoosting))


def _roots(obj, method: str) -> tuple:
    """Whose code ``obj.method`` may be: the library of the adapter pdpx has for ``obj``; for a transformer with a
    column rule registered by a plugin (:func:`pdpx.adapters.sklearn_transforms.register_rule`), also the package
    of the class that defines its ``transform`` (the rule vouches for it). Empty: nobody's."""
    from ..core.plugins import adapt
    from .sklearn_transforms import rule_for

    if method == "transform" and rule_for(obj) is not None:
        definer = next((k for k in type(obj).__mro__ if "transform" in vars(k)), type(obj))
        return ("sklearn", definer.__module__.split(".")[0])
    try:
        return tuple(adapt(obj).library_roots)
    except PdpxError:
        return ()


def _is_forest(model) -> bool:
    """A random forest or extra-trees model, whose prediction calls each tree's own predict."""
    try:
        from sklearn.ensemble._forest import BaseForest
    except ImportError:  # pragma: no cover - a private module moved: no members to list
        return False
    return isinstance(model, BaseForest)


#: The largest magnitude a float32 holds: estimators that cast inputs to float32 refuse larger values.
FLOAT32_MAX = float(np.finfo(np.float32).max)


def out_of_domain(values: np.ndarray) -> np.ndarray:
    """Mask of the values an estimator may refuse: infinite ones, and those beyond float32's range (refused by
    estimators that cast to float32). Whether it does is the estimator's own answer (:meth:`SklearnAdapter.
    refusal`): HistGradientBoosting, for one, takes infinity in a numeric column as a very large value."""
    with np.errstate(invalid="ignore"):
        return np.isinf(values) | (np.abs(values) > FLOAT32_MAX)


#: rows :func:`candidates` reads at a time at most (fewer when a block of rows of every column would pass its share
#: of the memory budget)
CHECK_ROWS = 2**16
#: bytes per value of a block :func:`candidates` reads: the float64 copy and :func:`out_of_domain`'s temporaries
_CHECK_BYTES = 24


def candidates(X: pd.DataFrame):
    """``(column, its values as float64)`` of each numeric column holding a value :func:`out_of_domain` marks.

    The columns are read in one pass over blocks of rows when they all hold numbers, else one numeric column at a
    time; a block of rows of every column and its temporaries take at most a quarter of the memory budget in
    effect (:func:`pdpx.core.config.get_config`), and at most :data:`CHECK_ROWS` rows.
    """
    budget = get_config()["memory_budget"]
    step = int(min(CHECK_ROWS, max(1, budget // 4 // (_CHECK_BYTES * max(1, X.shape[1])))))
    try:  # every column holds numbers (the usual case): one pass over the rows, no look at the dtypes
        hit = np.zeros(X.shape[1], dtype=bool)
        for r0 in range(0, len(X), step):
            rows = X if len(X) <= step else X.iloc[r0:r0 + step]  # (a small X: no slice of it)
            hit |= out_of_domain(rows.to_numpy(dtype=np.float64, na_value=np.nan)).any(axis=0)
        return [(X.columns[h], X.iloc[:, h].to_numpy(dtype=np.float64, na_value=np.nan)) for h in np.flatnonzero(hit)]
    except (TypeError, ValueError):
        found = []
        for j, t in enumerate(X.dtypes.tolist()):
            if _numeric_not_bool(t):
                values = X.iloc[:, j].to_numpy(dtype=np.float64, na_value=np.nan)
                if out_of_domain(values).any():
                    found.append((X.columns[j], values))
        return found


def _kind(value: float) -> str:
    return "infinite" if np.isinf(value) else "beyond float32's range (+-3.4e38)"


def _representatives(values: np.ndarray) -> list[float]:
    """One value of each kind among out-of-domain ``values``: +inf, -inf, the first finite one beyond float32."""
    out = [v for v in (np.inf, -np.inf) if np.any(values == v)]
    finite = values[np.isfinite(values)]
    return out + ([float(finite[0])] if finite.size else [])


def _same_kind(values: np.ndarray, value: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        if np.isinf(value):
            return values == value
        return np.isfinite(values) & (np.abs(values) > FLOAT32_MAX)


def _ordinary_row(X: pd.DataFrame) -> pd.DataFrame:
    """A row of X whose numeric values are all finite and within float32's range: the first such row, or
    else the first row with each other value taken from its column's first such value (0 if none)."""
    numeric = [c for c in X.columns if _numeric_not_bool(X[c].dtype)]
    if not numeric:
        return X.iloc[:1].reset_index(drop=True)
    head = X[numeric].iloc[:1000].to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        fine = np.isfinite(head) & (np.abs(head) <= FLOAT32_MAX)
    ok = np.flatnonzero(fine.all(axis=1))
    if ok.size:
        return X.iloc[[int(ok[0])]].reset_index(drop=True)
    row = X.iloc[:1].reset_index(drop=True)
    for j, col in enumerate(numeric):
        if not fine[0, j]:
            good = np.flatnonzero(fine[:, j])
            if isinstance(row[col].dtype, np.dtype):
                row[col] = row[col].astype(np.float64)
            row.loc[0, col] = head[good[0], j] if good.size else 0.0
    return row


def _numeric_not_bool(dtype) -> bool:
    if isinstance(dtype, np.dtype):
        return dtype.kind in "iufc"
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


#: the attributes holding a function each scikit-learn class calls on the way to a prediction
_FUNCTIONS = {"FunctionTransformer": ("func",), "TransformedTargetRegressor": ("inverse_func",)}
#: packages whose functions are a library's, not the user's
_LIBRARIES = frozenset({"numpy", "scipy", "pandas", "sklearn", "math", "builtins", "operator"})


def _library_function(fn) -> bool:
    """Whether ``fn`` is a function of a library (:data:`_LIBRARIES`), a ``functools.partial`` of one included."""
    inner = getattr(fn, "func", None) if type(fn).__name__ == "partial" else None
    if inner is not None:
        return _library_function(inner)
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return str(module).split(".")[0] in _LIBRARIES


class SklearnAdapter(Adapter):
    """A scikit-learn estimator or Pipeline: its own predict methods, and its trees when it is a tree model."""
    library = "scikit-learn"
    library_roots = ("sklearn",)

    def check_fitted(self):
        from sklearn.exceptions import NotFittedError as SkNotFitted
        from sklearn.utils.validation import check_is_fitted

        try:
            check_is_fitted(self.model)
        except SkNotFitted as exc:
            raise NotFittedError(
                f"this {type(self.model).__name__} is not fitted yet: call .fit(X, y) before "
                "computing partial dependence"
            ) from exc
        if self.is_classifier():
            classes = getattr(self.model, "classes_", None)
            if classes is not None and isinstance(classes, list):
                raise PdpxError(
                    f"{type(self.model).__name__} is a multi-output classifier; pdpx supports "
                    "single-output classifiers and multi-output regressors. Compute each output's "
                    "model separately."
                )

    def feature_names(self):
        """The names the estimator was fitted on; a Pipeline's are its first real step's
        (:func:`pdpx.adapters.sklearn_pipeline.fitted_names`: a first ``"passthrough"`` step has none of its own)."""
        from . import sklearn_pipeline

        if sklearn_pipeline.is_pipeline(self.model):
            return sklearn_pipeline.fitted_names(self.model)
        names = getattr(self.model, "feature_names_in_", None)
        return [str(n) for n in names] if names is not None else None

    def n_features(self) -> int | None:
        from . import sklearn_pipeline

        if sklearn_pipeline.is_pipeline(self.model):
            return sklearn_pipeline.fitted_width(self.model)
        return getattr(self.model, "n_features_in_", None)

    def validate_columns(self, X):
        X = super().validate_columns(X)
        n = self.n_features()
        if n is not None and X.shape[1] != n:
            raise PdpxError(
                f"X has {X.shape[1]} columns but {type(self.model).__name__} was fitted on {n}; "
                f"pass X with the {n} columns used for fitting, in the same order"
            )
        self._validated = X  # composite models (pipelines, ensembles) evaluate their steps on its first row
        self._refusals = {}
        self._grids = {}  # column -> the grid values checked (column_values)
        for col, values in candidates(X):
            for value in _representatives(values[out_of_domain(values)]):
                reason = self.refusal(col, value)
                if reason:
                    count = int(np.sum(_same_kind(values, value)))
                    raise PdpxError(
                        f"X column {col!r} holds {count} {_kind(value)} value(s); {type(self.model).__name__} "
                        f"(scikit-learn) refuses them ({reason}). Replace them (e.g. with NaN where the model "
                        "accepts missing values)"
                    )
        return X

    def _range_in_x(self, name) -> tuple[float, float]:
        """(lowest, highest) value of numeric column ``name`` of the validated X, read once per X; (1, 0) for a
        column that is not numeric or holds no number."""
        X = self._validated
        ranges = vars(self).get("_ranges")
        if ranges is None or ranges[0] is not X:
            ranges = self._ranges = (X, {})
        if name not in ranges[1]:
            col = X[name] if name in X.columns else None
            out = (1.0, 0.0)
            if col is not None and pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(
                    col.dtype):
                x = col.to_numpy(dtype=np.float64, na_value=np.nan)
                if np.any(np.isfinite(x)):
                    out = (float(np.nanmin(x)), float(np.nanmax(x)))
            ranges[1][name] = out
        return ranges[1][name]

    def refusal(self, column, value: float) -> str | None:
        """The estimator's own error when ``value`` stands in ``column`` of an ordinary row of X (its
        predict is asked, once per column and kind of value: infinite, beyond float32, or each ordinary
        value asked), or None when it predicts.

        What an estimator accepts is its own rule (trees and forests cast to float32 and
        refuse infinity and larger values; HistGradientBoosting takes infinity in a
        numeric column, not in a categorical one; a Pipeline's first step decides), so
        pdpx asks rather than keeps a table that would go stale.
        """
        key = (column, float(np.sign(value)) if np.isinf(value) else "large" if abs(value) > FLOAT32_MAX
               else float(value))
        if key not in self._refusals:
            self._refusals[key] = self._ask(column, value)
        return self._refusals[key]

    def _ask(self, column, value: float) -> str | None:
        base = _ordinary_row(self._validated)
        probe = pd.concat([base, base], ignore_index=True)
        if np.isfinite(value) and abs(value) <= FLOAT32_MAX:  # an ordinary value: the column widens as brute's
            probe[column] = probe[column].astype(column_dtype(probe[column].dtype, np.asarray([value])))
        elif isinstance(probe[column].dtype, np.dtype):  # a numpy column holds the value as float64
            probe[column] = probe[column].astype(np.float64)
        probe.loc[1, column] = value
        response = (self.responses() or ["predict"])[0]
        with warnings.catch_warnings(), np.errstate(all="ignore"):  # a question, not the user's call
            warnings.simplefilter("ignore")
            try:
                self.predict(probe, response)
            except Exception as exc:  # noqa: BLE001 - the estimator's own refusal, whatever its type
                try:
                    self.predict(base, response)
                except Exception:  # noqa: BLE001 - the row itself fails: not this value's doing
                    return None
                return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
        return None

    @property
    def reference_rows(self) -> pd.DataFrame | None:
        """The first row of the validated X (None before validation), taken out when a composite model asks."""
        X = vars(self).get("_validated")
        return None if X is None else X.iloc[:1]

    def column_values(self, name) -> np.ndarray | None:
        """The values of numeric column ``name`` a call meets: those of the validated X and of the grids checked
        for it (float64, increasing, without repeats; a ``datetime64`` column's: its dates, as a sorted
        ``DatetimeIndex``); None before validation, for a column that is neither, or when X has one row (a member
        of a composite model sees only its reference row, not the call's grids)."""
        X = vars(self).get("_validated")
        if X is None or len(X) < 2 or name not in X.columns:
            return None
        col = X[name]
        if date_kind(col.dtype) == "datetime":  # a date column: its dates (the pipeline's reading counts them)
            seen = [col.array] + list(vars(self).get("_grids", {}).get(name, []))
            return pd.DatetimeIndex(pd.concat([pd.Series(s) for s in seen], ignore_index=True)).unique().sort_values()
        if not pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            return None
        seen = [col.to_numpy(dtype=np.float64, na_value=np.nan)] + list(vars(self).get("_grids", {}).get(name, []))
        return np.unique(np.concatenate(seen))

    def check_grid(self, name, values):
        if is_date_grid(values) and vars(self).get("_validated") is not None:  # kept for column_values
            vars(self).setdefault("_grids", {}).setdefault(name, []).append(values)
            return
        if np.asarray(values).dtype.kind not in "iuf" or vars(self).get("_validated") is None:
            return
        arr = np.asarray(values, dtype=np.float64)
        vars(self).setdefault("_grids", {}).setdefault(name, []).append(arr)
        for value in _representatives(arr[out_of_domain(arr)]):
            reason = self.refusal(name, value)
            if reason:
                raise PdpxError(
                    f"grid values of {name!r} the {type(self.model).__name__} refuses as input: "
                    f"{arr[_same_kind(arr, value)][:5].tolist()} ({_kind(value)}; {reason}); pass custom_values "
                    "within range"
                )
        self._check_beyond_x(name, arr)

    def _check_beyond_x(self, name, arr: np.ndarray) -> None:
        """Refuse grid values below or above every value of column ``name`` in X that the model refuses (a step
        defined on an interval: Box-Cox on positive numbers): the lowest and the highest such value are asked, once
        each (a domain is an interval, so the values between them and X's are taken too)."""
        lo, hi = self._range_in_x(name)
        if not lo <= hi or (arr.size and lo <= np.nanmin(arr) and np.nanmax(arr) <= hi):
            return  # not a numeric column, or every grid value within X's (the usual grid): nothing to ask
        with np.errstate(invalid="ignore"):
            ordinary = np.isfinite(arr) & ~out_of_domain(arr)
        for side, outside in (("below", arr < lo), ("above", arr > hi)):
            outside &= ordinary
            if not np.any(outside):
                continue
            value = float(arr[outside].min() if side == "below" else arr[outside].max())
            reason = self.refusal(name, value)
            if reason:
                raise PdpxError(f"grid values of {name!r} the {type(self.model).__name__} refuses as input: "
                                f"{arr[outside][:5].tolist()} ({side} every value of {name!r} in X; {reason}); "
                                "pass custom_values within the range the model takes")

    def is_classifier(self):
        if "_classifier" not in vars(self):  # scikit-learn reads the estimator's tags: once per adapter
            from sklearn.base import is_classifier

            self._classifier = bool(is_classifier(self.model))
        return self._classifier

    def classes(self):
        classes = getattr(self.model, "classes_", None)
        return list(classes) if classes is not None else None

    def responses(self):
        if self.is_classifier():
            return [r for r in ("predict_proba", "decision_function") if hasattr(self.model, r)]
        return ["predict"] + [r for r in ("decision_function",) if hasattr(self.model, r)]

    def _n_targets(self) -> int:
        n = getattr(self.model, "n_outputs_", None)
        if n is None:
            coef = getattr(self.model, "coef_", None)
            n = coef.shape[0] if coef is not None and np.ndim(coef) == 2 else 1
        return int(n)

    def output_names(self, response):
        if self.is_classifier():
            classes = [str(c) for c in self.classes()]
            if response == "decision_function" and len(classes) == 2:
                return [classes[1]]
            return classes
        n = self._n_outputs.get(response) if hasattr(self, "_n_outputs") else None
        n = n or self._n_targets()
        return ["prediction"] if n == 1 else [f"target {i}" for i in range(n)]

    def probe(self, X: pd.DataFrame, response: str) -> None:
        """Learn the number of outputs of a regressor from one prediction, unless the model says it.

        A Pipeline's outputs are its final estimator's: a gradient-boosting model there has one per
        target, so no prediction is needed (predicting one row costs a boosted model its whole
        per-call overhead).
        """
        if getattr(self.model, "n_outputs_", None) is not None or _single_output(_final_estimator(self.model)):
            return
        if not self.is_classifier():
            if not hasattr(self, "_n_outputs"):
                self._n_outputs = {}
            self._n_outputs[response] = self.predict(X.iloc[:1], response).shape[1]

    def _model_input(self, X: pd.DataFrame):
        if self.feature_names() is None:
            # fitted on an array: pass an array (a DataFrame would make scikit-learn warn)
            if all(pd.api.types.is_numeric_dtype(t) for t in X.dtypes):
                return X.to_numpy()
            return X.to_numpy(dtype=object)
        return X

    def predict(self, X, response):
        fn = getattr(self.model, response, None)
        if fn is None:
            raise PdpxError(f"{type(self.model).__name__} has no {response} method")
        return as_2d(fn(self._model_input(X)))

    def prediction_path(self, response):
        """The estimator's own method, and every part whose method it calls on the way: a forest's trees, a
        pipeline's transformers (:func:`pdpx.adapters.sklearn_pipeline.prediction_path`), the target transform of
        a TransformedTargetRegressor, a stacking model's final estimator. (Members read through their own
        adapters, a pipeline's final estimator among them, are checked by those.)"""
        from . import sklearn_pipeline

        model = self.model
        if hasattr(model, "steps"):  # a step of another library (the final model) is checked on its library's code
            return [step if type(step[0]).__module__.startswith("sklearn.") else (*step, _roots(*step))
                    for step in sklearn_pipeline.prediction_path(model, response)]
        path = [(model, response)]
        if _is_forest(model):
            member = "predict_proba" if self.is_classifier() else "predict"
            path += [(e, member) for e in model.estimators_]
        for attr, method in (("transformer_", "inverse_transform"), ("final_estimator_", "predict")):
            part = getattr(model, attr, None)
            if part is not None and hasattr(part, method):
                path.append((part, method))
        return path

    def user_code(self, response):
        """A method of the prediction path that is the user's own (:meth:`pdpx.core.adapter.Adapter.user_code`),
        else a user's function called on the way: a FunctionTransformer's ``func``, a TransformedTargetRegressor's
        ``inverse_func`` (NumPy's, SciPy's, pandas' and scikit-learn's own functions are a library's)."""
        own = super().user_code(response)
        if own is not None:
            return own
        for obj, *_ in self.prediction_path(response):
            for attr in _FUNCTIONS.get(type(obj).__name__, ()):
                fn = getattr(obj, attr, None)
                if fn is not None and not _library_function(fn):
                    return f"{type(obj).__name__}({attr}={getattr(fn, '__qualname__', type(fn).__name__)})"
        return None

    # tree structure: filled in by pdpx.adapters.sklearn_trees when available
    def tree_model(self, response):
        from . import sklearn_compose

        if sklearn_compose.handles(self.model):
            return sklearn_compose.tree_model(self, response)
        try:
            from . import sklearn_trees
        except ImportError:  # pragma: no cover - module ships with pdpx
            return None
        return sklearn_trees.tree_model(self, response)

    def fingerprint(self):
        """:func:`pdpx.adapters.sklearn_trees.model_fingerprint` (a tree model's node arrays); a Pipeline's steps'
        parameters and learnt values (:func:`pdpx.adapters.sklearn_state.steps_digest`); "" for other estimators
        (an ensemble's trees are keyed by their parts)."""
        from . import sklearn_pipeline, sklearn_trees

        if sklearn_pipeline.is_pipeline(self.model):
            return sklearn_pipeline.model_fingerprint(self.model)
        return sklearn_trees.model_fingerprint(self.model)

    def inbag_counts(self):
        """How many times each member drew each training row, (n_training_rows, n_members), for
        ``interval="jackknife"`` and ``oob=True`` (:mod:`pdpx.adapters.sklearn_inbag`; raises saying why not)."""
        from . import sklearn_inbag

        return sklearn_inbag.inbag_counts(self.model)

    def tree_model_unavailable(self, response):
        from . import sklearn_compose

        if sklearn_compose.handles(self.model):
            return sklearn_compose.unavailable_reason(self, response)
        try:
            from . import sklearn_trees
        except ImportError:  # pragma: no cover
            return super().tree_model_unavailable(response)
        return sklearn_trees.unavailable_reason(self, response)


@hookimpl
def pdpx_adapt_model(model):
    """The scikit-learn adapter for scikit-learn estimators (recognised without importing scikit-learn)."""
    if is_sklearn_estimator(model):
        return SklearnAdapter(model)
    return None
