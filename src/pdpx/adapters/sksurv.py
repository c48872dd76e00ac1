"""scikit-survival models: risk, survival and cumulative hazard at chosen times (``docs/survival.md``).

A scikit-survival estimator is a scikit-learn estimator whose ``predict`` is a risk score and whose
``predict_survival_function`` / ``predict_cumulative_hazard_function`` return step functions over its
distinct training times (``unique_times_``). The adapter offers:

* ``predict`` and ``risk``: the model's ``predict``;
* ``survival`` and ``cumulative_hazard``: one output per time of the call (``times=``,
  :mod:`pdpx.core.times`), each read by the model's own step-function rule: the value at the largest
  training time <= t, the first one's for a t before it (as the step functions do), and no t past the
  last training time (the step functions refuse it, so does pdpx).

Any other scikit-learn estimator with that interface (``predict_survival_function`` and ``unique_times_``)
is read the same way, by ``brute``.

Its trees (:mod:`.sksurv_trees`): survival forests and trees answer every response exactly (their leaves
hold the curves at every training time); gradient boosting with the Cox loss answers the risk and the
cumulative hazard. Anything else runs ``brute`` on the model's own functions.
"""

from __future__ import annotations

import numpy as np

from ..core.adapter import TIME_RESPONSES, as_2d
from ..core.errors import PdpxError
from ..core.hookspecs import hookimpl
from ..core.times import step_columns, time_names
from .sklearn import SklearnAdapter, is_sklearn_estimator

#: Most bytes the model's own functions hold for the rows of one call (:meth:`SksurvAdapter.predict`).
BLOCK_BYTES = 64 * 2**20
#: The model's method each response calls.
METHODS = {"predict": "predict", "risk": "predict", "survival": "predict_survival_function",
           "cumulative_hazard": "predict_cumulative_hazard_function"}


def is_sksurv_model(model) -> bool:
    """True for instances of scikit-survival estimators, without importing scikit-survival, and for any scikit-learn
    estimator with scikit-survival's interface (``predict_survival_function`` and ``unique_times_``)."""
    if isinstance(model, type):
        return False
    if any(getattr(k, "__module__", "").startswith("sksurv.") for k in type(model).__mro__):
        return True
    return (is_sklearn_estimator(model) and callable(getattr(model, "predict_survival_function", None))
            and hasattr(model, "unique_times_"))


class SksurvAdapter(SklearnAdapter):
    """A scikit-survival estimator: its risk score, and its survival and cumulative hazard at the call's times."""

    library = "scikit-survival"
    library_roots = ("sksurv", "sklearn")

    def is_classifier(self):
        return False

    def classes(self):
        return None

    def has_curves(self) -> bool:
        """Whether the model gives survival functions (a forest fitted with ``low_memory=True``, or boosting
        with another loss than Cox's, does not)."""
        if "_curves" not in vars(self):
            model = self.model
            ok = hasattr(model, "predict_survival_function") and not getattr(model, "low_memory", False)
            self._curves = ok and self.training_times() is not None
        return self._curves

    def training_times(self):
        if "_training" not in vars(self):
            try:
                times = getattr(self.model, "unique_times_", None)
            except (ValueError, AttributeError):  # boosting with a loss that has no baseline hazard
                times = None
            self._training = None if times is None else np.asarray(times, dtype=np.float64)
        return self._training

    def responses(self):
        return ["predict", "risk"] + (list(TIME_RESPONSES) if self.has_curves() else [])

    def output_names(self, response):
        if response in TIME_RESPONSES:
            if self.times is None:  # pragma: no cover - the core sets the times before it asks
                raise PdpxError("the times of a survival response are not set (pdpx.core.times.resolve)")
            return time_names(self.times)
        return [self.response_label(response)]

    def probe(self, X, response):
        """Nothing to learn: one output, or one per time."""

    def predict(self, X, response):
        """The model's own ``predict``, or its survival (cumulative hazard) function read at the times; a block of
        rows at a time, so that what the model holds per row (its curve at every training time, twice over for a
        forest's trees) stays within :data:`BLOCK_BYTES` whatever the number of rows pdpx stacks in one call."""
        training = self.training_times()
        per_row = 24 * (len(training) if training is not None else 1)
        size = max(1, BLOCK_BYTES // per_row)
        if len(X) <= size:
            return self._predict(X, response)
        return np.concatenate([self._predict(X.iloc[a: a + size], response) for a in range(0, len(X), size)])

    def _predict(self, X, response):
        X_in = self._model_input(X)
        if response not in TIME_RESPONSES:
            return as_2d(self.model.predict(X_in))
        fn = getattr(self.model, METHODS[response])
        cols = step_columns(self.training_times(), self.times)
        try:
            arr = fn(X_in, return_array=True)  # the step functions' values at every training time
        except TypeError:  # a model whose functions take no return_array: its step functions, called
            return np.stack([np.atleast_1d(f(self.times)) for f in fn(X_in)]).astype(np.float64)
        return np.ascontiguousarray(np.asarray(arr, dtype=np.float64)[:, cols])

    def prediction_path(self, response):
        method = METHODS.get(response, response)
        path = [(self.model, method)]
        members = getattr(self.model, "estimators_", None)
        if members is not None and type(self.model).__name__ in ("RandomSurvivalForest", "ExtraSurvivalTrees"):
            path += [(e, method) for e in members]
        return path

    def time_bytes(self, response):
        from . import sksurv_trees

        return sksurv_trees.time_bytes(self.model, response)

    def tree_model(self, response):
        from . import sksurv_trees

        return sksurv_trees.tree_model(self, response)

    def tree_model_unavailable(self, response):
        from . import sksurv_trees

        return sksurv_trees.unavailable_reason(self, response)

    def fingerprint(self):
        """:func:`pdpx.adapters.sksurv_trees.model_fingerprint`, computed once per adapter (one call: a survival
        forest's leaves hold a curve each, so reading them all costs about a quarter of a prediction)."""
        from . import sksurv_trees

        if "_fingerprint" not in vars(self):
            self._fingerprint = sksurv_trees.model_fingerprint(self.model)
        return self._fingerprint


@hookimpl(tryfirst=True)
def pdpx_adapt_model(model):
    """The scikit-survival adapter (asked before scikit-learn's, whose estimators they also are)."""
    if is_sksurv_model(model):
        return SksurvAdapter(model)
    return None
