"""Calling R from Python: one lock for every R call, and the adapter for any R model given as a predict
function (what R returns is decoded by :func:`pdpx.r_wire.decode_prediction`); :class:`RSurvivalAdapter` for
an R survival model given as its curves' functions (``survival::coxph``: ``survfit()`` and ``predict()``).

R must be called from one thread at a time: adapters that call it are
:class:`SingleThreaded` (methods then never call their ``predict`` from threads)
and hold :data:`R_LOCK` around each call.
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from ..core.adapter import TIME_RESPONSES, Adapter
from ..core.errors import PdpxError
from ..core.times import step_columns, time_names
from ..r_wire import as_array, as_list, decode_prediction

#: Serialises every call into R made by pdpx adapters: R must be called from one thread.
R_LOCK = threading.RLock()


class SingleThreaded:
    """Mixin of adapters that call R: ``thread_safe = False``."""

    #: R may be called from one thread only: methods must not call :meth:`predict` from threads.
    thread_safe = False


class RFunctionAdapter(SingleThreaded, Adapter):
    """Any model whose predictions come from a function, typically an R closure via reticulate.

    Parameters
    ----------
    predict : callable
        ``predict(X) -> predictions`` for a DataFrame ``X`` of the rows (the R bridge
        wraps an R closure so that it takes one), returning any form
        :func:`decode_prediction` reads.
    output_names : list of str, optional
        One name per prediction column (class labels for probabilities).
    classes : list, optional
        Class labels when the outputs are class probabilities.
    feature_names : list of str, optional
        Columns the model needs, in order.
    model_name : str
        Shown in results (e.g. the R class).
    """

    library = "R"

    def __init__(self, predict: Callable, *, output_names=None, classes=None, feature_names=None,
                 model_name: str = "R model"):
        super().__init__(predict)
        self._predict_fn = predict
        self._classes = [str(c) for c in as_list(classes)] if classes is not None else None
        names = as_list(output_names)
        self._outputs = [str(o) for o in names] if names else (self._classes or ["prediction"])
        self._features = [str(f) for f in as_list(feature_names)] if feature_names is not None else None
        self.model_name = model_name

    def feature_names(self):
        return self._features

    def is_classifier(self):
        return self._classes is not None

    def classes(self):
        return self._classes

    def responses(self):
        return ["predict_proba"] if self._classes is not None else ["predict"]

    def output_names(self, response):
        return list(self._outputs)

    def predict(self, X, response):
        with R_LOCK:
            out = self._predict_fn(X)
        pred = decode_prediction(out, len(X))
        if pred.shape != (len(X), len(self._outputs)):
            raise PdpxError(
                f"the predict function returned shape {pred.shape} for {len(X)} rows; expected "
                f"({len(X)}, {len(self._outputs)}) (one column per output: {self._outputs!r})"
            )
        return pred


class RFrameAdapter(SingleThreaded, Adapter):
    """What the adapters of R tree models read in Python (ranger, gbm) share: inputs checked by their
    :class:`~pdpx.adapters.rlevels.LevelEncoder` (``self.encoder``) and R's predict called on a model frame
    of the columns ``self._features`` (``self._predict_fn``, under the R lock)."""

    library = "R"

    def validate_columns(self, X):
        X = super().validate_columns(X)
        self.encoder.encode(X)  # the same checks as at encoding time, with the same messages
        return X

    def r_predict(self, X, n_columns: int) -> np.ndarray:
        """R's prediction for ``X``: ``n_columns`` columns per row, checked."""
        if self._predict_fn is None:
            raise PdpxError(f"this {self.library} adapter has no predict function; only the tree methods can run")
        frame = self.encoder.model_frame(X[self._features] if list(map(str, X.columns)) != self._features else X)
        with R_LOCK:
            out = self._predict_fn(frame)
        pred = decode_prediction(out, len(frame))
        if pred.shape != (len(frame), n_columns):
            raise PdpxError(f"the {self.library} predict function returned shape {pred.shape}; "
                            f"expected ({len(frame)}, {n_columns})")
        return pred



class RSurvivalAdapter(RFunctionAdapter):
    """An R survival model given as functions of a DataFrame: ``survival`` and ``cumulative_hazard`` (rows x the
    model's ``times``, its curves' step times: ``survfit(model, newdata)``'s ``$surv`` and ``$cumhaz``), ``risk``
    and ``raw`` (one number per row: ``predict(type = "risk")`` and ``"lp"``). The curves are read at the call's
    times (``times=``) at the largest step time <= t; a time before the first step time is refused."""

    def __init__(self, functions: dict, times, *, feature_names=None, model_name: str = "R survival model"):
        super().__init__(functions["survival"], feature_names=feature_names, model_name=model_name)
        self._functions = dict(functions)
        self._steps = np.asarray(as_array(times), dtype=np.float64).ravel()

    def is_classifier(self):
        return False

    def classes(self):
        return None

    def responses(self):
        return [*TIME_RESPONSES, "risk", "raw"]

    def output_names(self, response):
        if response in TIME_RESPONSES:
            if self.times is None:  # pragma: no cover - the core sets the times before it asks
                raise PdpxError("the times of a survival response are not set (pdpx.core.times.resolve)")
            return time_names(self.times)
        return [self.response_label(response)]

    def training_times(self):
        return self._steps.copy()

    def set_times(self, times):
        times = np.asarray(times, dtype=np.float64)
        if times.size and self._steps.size and times[0] < self._steps[0]:
            raise PdpxError(f"times= start at {times[0]:.9g}, before the {self.model_name} model's first time "
                            f"{self._steps[0]:.9g}: survfit()'s curves start there; ask for times from "
                            f"{self._steps[0]:.9g} on")
        super().set_times(times)

    def predict(self, X, response):
        with R_LOCK:
            out = self._functions[response](X)
        timed = response in TIME_RESPONSES
        width = self._steps.size if timed else 1
        pred = decode_prediction(out, len(X))
        if pred.shape != (len(X), width):
            raise PdpxError(f"the {self.model_name} {response} function returned shape {pred.shape} for {len(X)} "
                            f"rows; expected ({len(X)}, {width})")
        if not timed:
            return pred
        return np.ascontiguousarray(pred[:, step_columns(self._steps, self.times)])

    def tree_model_unavailable(self, response):
        return f"a {self.model_name} model has no trees: brute calls R's survfit() and predict() on the rows"
