"""R gbm models given as plain data (the flattened trees) plus R's predict.

The trees are read by :mod:`pdpx.adapters.gbm_trees`. Responses: ``predict`` is
``predict(model, newdata, n.trees, type = "response")``, ``raw`` the link scale
(``type = "link"``). The R bridge builds this adapter; it registers no hook.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from ..core.errors import PdpxError
from ..core.ir import TreeModel
from ..r_wire import as_list
from .gbm_trees import gbm_ensemble
from .rfunction import RFrameAdapter
from .rlevels import LevelEncoder

WEIGHTS = "gbm's node weights (the training weight of each node, as plot.gbm uses them)"


class GbmAdapter(RFrameAdapter):
    """A gbm model (see :mod:`pdpx.adapters.gbm_trees` for ``spec``) plus predict functions.

    Parameters
    ----------
    spec : mapping
        The flattened trees, with ``feature_names``, ``levels`` (per input: the
        factor's ``var.levels``, or None) and ``na_inputs`` (0-based inputs whose
        missing values must be routed; None: every input).
    predict : callable, optional
        ``predict(X) -> (n_rows, 2)``: the response and link scale predictions.
    """

    library = "gbm"

    def __init__(self, spec: Mapping, predict: Callable | None = None):
        super().__init__(self)
        self.spec = dict(spec)
        self.levels = [None if lv is None else [str(v) for v in as_list(lv)] for lv in as_list(spec["levels"])]
        self._features = [str(n) for n in as_list(spec["feature_names"])]
        na = spec.get("na_inputs")
        self.na_inputs = None if na is None else sorted(int(j) for j in as_list(na))
        self.encoder = LevelEncoder(self._features, self.levels, "gbm", allow_missing=True,
                                    unknown_as_missing=True)
        self._predict_fn = predict
        self._tree_models: dict = {}

    def __repr__(self):
        return f"<GbmAdapter: gbm {self.spec['distribution']}, {len(as_list(self.spec['n_nodes']))} trees>"

    def feature_names(self):
        return list(self._features)

    def responses(self):
        return ["predict", "raw"]

    def output_names(self, response):
        return ["prediction"] if response == "predict" else ["link"]

    def response_label(self, response):
        return "prediction (type = \"response\")" if response == "predict" else "link (type = \"link\")"

    def predict(self, X, response):
        pred = self.r_predict(X, 2)
        return np.ascontiguousarray(pred[:, [0 if response == "predict" else 1]], dtype=np.float64)

    def _encode(self, X):
        out = self.encoder.encode(X)
        self._check_missing(out)
        return out

    def _encode_values(self, position, values):
        out = self.encoder.encode_values(position, values)
        self._check_missing(out[:, None] if out.ndim == 1 else out, [position])
        return out

    def _check_missing(self, arr, positions=None):
        if self.na_inputs is None:
            return
        cols = positions if positions is not None else range(arr.shape[1])
        for k, j in enumerate(cols):
            col = arr[:, k if positions is not None else j]
            if j not in self.na_inputs and np.isnan(col).any():
                raise PdpxError(
                    f"column {self._features[j]!r} has missing values, but this gbm adapter was built for data "
                    "without them there (na_inputs); build it again with that column in na_inputs"
                )

    def tree_model(self, response):
        if response not in self.responses():
            return None
        if response not in self._tree_models:
            self._tree_models[response] = TreeModel(
                ensemble=gbm_ensemble(self.spec, self.na_inputs, response_scale=response == "predict"),
                encode=self._encode, encode_values=self._encode_values, notes=[], recursion_weights=WEIGHTS,
            )
        return self._tree_models[response]

    def tree_model_unavailable(self, response):
        return f"a gbm model has no response {response!r}; use \"predict\" or \"raw\""
