"""Any model with a ``predict`` method, or a plain function ``f(X) -> predictions``.

Registered last (``trylast``): library adapters get the first look.
"""

from __future__ import annotations

import pandas as pd

from ..core.adapter import Adapter, as_2d
from ..core.errors import PdpxError
from ..core.hookspecs import hookimpl

_RESPONSE_ATTRS = ("predict_proba", "decision_function", "predict")


class GenericAdapter(Adapter):
    """Calls the model's own methods with the DataFrame the user passed."""

    library = "generic"

    def __init__(self, model):
        super().__init__(model)
        self._fn = model if callable(model) and not hasattr(model, "predict") else None
        self._n_outputs: dict[str, int] = {}

    def feature_names(self):
        names = getattr(self.model, "feature_names_in_", None)
        return [str(n) for n in names] if names is not None else None

    def classes(self):
        classes = getattr(self.model, "classes_", None)
        return list(classes) if classes is not None else None

    def is_classifier(self):
        return self.classes() is not None and hasattr(self.model, "predict_proba")

    def responses(self):
        if self._fn is not None:
            return ["predict"]
        have = [r for r in _RESPONSE_ATTRS if callable(getattr(self.model, r, None))]
        if self.is_classifier():
            # class labels are not numbers: a classifier's PD is of probabilities or scores
            return [r for r in have if r != "predict"] or have
        return [r for r in ("predict", "decision_function", "predict_proba") if r in have]

    def output_names(self, response):
        classes = self.classes()
        if response == "predict_proba" and classes is not None:
            return [str(c) for c in classes]
        if response == "decision_function" and classes is not None and len(classes) > 2:
            return [str(c) for c in classes]
        n = self._n_outputs.get(response, 1)
        base = {"predict": "prediction", "decision_function": "decision function"}.get(response, response)
        return [base] if n == 1 else [f"{base} {i}" for i in range(n)]

    def probe(self, X: pd.DataFrame, response: str) -> None:
        """Learn the number of outputs from one row (needed for output names)."""
        if response not in self._n_outputs:
            self._n_outputs[response] = self.predict(X.iloc[:1], response).shape[1]

    def user_code(self, response):
        """A model no library adapter knows is the user's code: the function, or its class's method."""
        if self._fn is not None:
            return f"the function {getattr(self._fn, '__qualname__', type(self._fn).__name__)}"
        return f"{type(self.model).__name__}.{response}"

    def predict(self, X, response):
        if self._fn is not None:
            return as_2d(self._fn(X))
        fn = getattr(self.model, response, None)
        if fn is None:
            raise PdpxError(f"{type(self.model).__name__} has no {response} method")
        return as_2d(fn(X))


@hookimpl(trylast=True)
def pdpx_adapt_model(model):
    """The generic adapter for anything with ``predict``, or a plain function (asked last)."""
    if isinstance(model, type):
        return None
    if callable(getattr(model, "predict", None)) or callable(model):
        return GenericAdapter(model)
    return None
