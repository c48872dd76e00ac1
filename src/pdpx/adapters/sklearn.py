"""scikit-learn estimators and pipelines.

Prediction goes through the estimator's own methods. Tree extraction (for
``exact`` and ``recursion``) lives in :mod:`pdpx.adapters.sklearn_trees`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.adapter import Adapter, as_2d
from ..core.errors import NotFittedError, PdpxError
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


#: The largest magnitude a float32 holds: estimators that cast inputs to float32 refuse larger values.
FLOAT32_MAX = float(np.finfo(np.float32).max)


def out_of_domain(values: np.ndarray, float32: bool) -> np.ndarray:
    """Mask of values a scikit-learn estimator refuses: infinite ones, and beyond float32 if it casts."""
    with np.errstate(invalid="ignore"):
        bad = np.isinf(values)
        if float32:
            bad |= np.abs(values) > FLOAT32_MAX
    return bad


def refuse_out_of_domain(X: pd.DataFrame, name: str, float32: bool) -> None:
    """scikit-learn's estimators refuse infinite inputs (and, casting to float32, larger ones): say so up front.

    The columns are read in one pass (one array) when they all hold numbers; the first offending
    column is named.
    """
    try:  # every column holds numbers (the usual case): one array, no look at the dtypes
        values = X.to_numpy(dtype=np.float64, na_value=np.nan)
        numeric = list(range(X.shape[1]))
    except (TypeError, ValueError):
        numeric = [j for j, t in enumerate(X.dtypes.tolist()) if _numeric_not_bool(t)]
        if not numeric:
            return
        values = np.column_stack([X.iloc[:, j].to_numpy(dtype=np.float64, na_value=np.nan) for j in numeric])
    bad = out_of_domain(values, float32)
    hit = np.flatnonzero(bad.any(axis=0))
    if hit.size:
        col = X.columns[numeric[hit[0]]]
        limit = " or beyond float32's range (+-3.4e38, it casts inputs to float32)" if float32 else ""
        raise PdpxError(
            f"X column {col!r} holds {int(bad[:, hit[0]].sum())} infinite value(s){limit}; {name} (scikit-learn) "
            "refuses them. Replace them (e.g. with NaN where the model accepts missing values)"
        )


def _numeric_not_bool(dtype) -> bool:
    if isinstance(dtype, np.dtype):
        return dtype.kind in "iufc"
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


class SklearnAdapter(Adapter):
    """A scikit-learn estimator or Pipeline: its own predict methods, and its trees when it is a tree model."""
    library = "scikit-learn"

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
        names = getattr(self.model, "feature_names_in_", None)
        return [str(n) for n in names] if names is not None else None

    def n_features(self) -> int | None:
        return getattr(self.model, "n_features_in_", None)

    def validate_columns(self, X):
        X = super().validate_columns(X)
        n = self.n_features()
        if n is not None and X.shape[1] != n:
            raise PdpxError(
                f"X has {X.shape[1]} columns but {type(self.model).__name__} was fitted on {n}; "
                f"pass X with the {n} columns used for fitting, in the same order"
            )
        if self._checks_inputs():
            refuse_out_of_domain(X, type(self.model).__name__, self._casts_to_float32())
        self._validated = X  # composite models (pipelines, ensembles) evaluate their steps on its first row
        return X

    @property
    def reference_rows(self) -> pd.DataFrame | None:
        """The first row of the validated X (None before validation), taken out when a composite model asks."""
        X = vars(self).get("_validated")
        return None if X is None else X.iloc[:1]

    def _checks_inputs(self) -> bool:
        """Whether the estimator validates its own input (not a Pipeline, whose first step decides)."""
        return not hasattr(self.model, "steps") and not hasattr(self.model, "transformers")

    def _casts_to_float32(self) -> bool:
        if "_float32" not in vars(self):  # asked by validate_columns and check_grid: once per adapter
            from . import sklearn_trees

            self._float32 = sklearn_trees.casts_to_float32(self.model)
        return self._float32

    def check_grid(self, name, values):
        if not self._checks_inputs() or np.asarray(values).dtype.kind not in "iuf":
            return
        bad = out_of_domain(np.asarray(values, dtype=np.float64), self._casts_to_float32())
        if bad.any():
            raise PdpxError(
                f"grid values of {name!r} the {type(self.model).__name__} refuses as input: "
                f"{np.asarray(values)[bad][:5].tolist()} (infinite, or beyond float32's range for models "
                "that cast to float32); pass custom_values within range"
            )

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
