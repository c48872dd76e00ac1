"""R randomForest models given as plain data (the forest arrays) plus a predict function.

The forest is read by :mod:`pdpx.adapters.randomforest_trees`; predictions go
through the function given (R's ``predict`` behind it, for ``brute``). Two ways
in: the R package hands the forest over through :mod:`pdpx.r_bridge`, and Python
users with rpy2 get :class:`~pdpx.adapters.rpy2.RandomForestRpy2Adapter`, a
subclass. Neither registers a hook here: the R bridge builds its adapter itself,
and :mod:`pdpx.adapters.rpy2` is the plugin that recognises rpy2 objects.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from ..core.adapter import Adapter
from ..core.errors import PdpxError
from ..core.ir import TreeEnsemble, TreeModel
from ..r_wire import as_array, decode_prediction
from .randomforest_trees import (
    ForestData,
    ForestEncoder,
    forest_ensemble,
    read_forest,
    route_counts,
    with_node_weights,
)
from .rfunction import R_LOCK, SingleThreaded

NO_NODE_WEIGHTS = (
    "none: randomForest stores no node counts. Pass the training rows "
    "(training_data=X_train) so pdpx can count them by routing the rows through the trees"
)


class RandomForestAdapter(SingleThreaded, Adapter):
    """A randomForest model given as plain data plus a predict function.

    Parameters
    ----------
    forest : ForestData or mapping
        The forest (a mapping is read with :func:`read_forest`).
    predict : callable, optional
        ``predict(X) -> predictions`` for a DataFrame ``X`` with the model's
        columns (brute); for classification it must return the class
        probabilities (R's ``type = "prob"``), one column per class.
    feature_names, classes, coefs
        As in :func:`read_forest` (ignored when ``forest`` is a ForestData).
    training_data : DataFrame, optional
        The training rows; routed through the trees to give ``recursion`` its
        node counts (randomForest stores none).
    training_weight : array, optional
        Weights of the training rows for those counts.
    time_units : list of (str or None), optional
        Per predictor, ``"days"`` or ``"seconds"`` when R's data holds it as a ``Date`` or ``POSIXct``: its
        dates (``datetime64`` columns, grids of dates) are then read as the days or seconds since 1970-01-01
        UTC the forest splits on; None: numbers only.
    model : object, optional
        The original model object (shown in results).
    inbag : mapping, optional
        The forest's in-bag counts (``keep.inbag = TRUE``) as the R package sends them (:mod:`.rinbag`).
    """

    library = "randomForest"

    def __init__(
        self,
        forest,
        predict: Callable | None = None,
        *,
        feature_names=None,
        classes=None,
        coefs=None,
        training_data: pd.DataFrame | None = None,
        training_weight=None,
        time_units=None,
        model: Any = None,
        inbag=None,
    ):
        super().__init__(model if model is not None else self)
        self.forest = forest if isinstance(forest, ForestData) else read_forest(
            forest, feature_names=feature_names, classes=classes, coefs=coefs
        )
        self._predict_fn = predict
        self.encoder = ForestEncoder(self.forest, time_units)
        self.training_data = training_data
        self.training_weight = training_weight
        self._tree_models: dict = {}
        self.inbag = inbag  # keep.inbag = TRUE: the counts as the R package sends them (adapters/rinbag.py)

    def __repr__(self):
        kind = "classification" if self.forest.is_classification else "regression"
        return f"<{type(self).__name__}: randomForest {kind}, {self.forest.n_trees} trees>"

    def inbag_counts(self):
        """How many times each tree drew each training row (``keep.inbag = TRUE``), ``(n_rows, n_trees)``, for
        ``interval="jackknife"`` and ``oob=True`` (:mod:`pdpx.adapters.rinbag`)."""
        from .rinbag import inbag_counts

        return inbag_counts(self.inbag, "randomForest", self.forest.n_trees)

    # facts
    def feature_names(self):
        return list(self.forest.feature_names)

    def is_classifier(self):
        return self.forest.is_classification

    def classes(self):
        return list(self.forest.classes) if self.forest.is_classification else None

    def responses(self):
        return ["predict_proba"] if self.forest.is_classification else ["predict"]

    def output_names(self, response):
        if self.forest.is_classification:
            return list(self.forest.classes)
        return ["prediction"]

    # prediction
    def validate_columns(self, X):
        X = super().validate_columns(X)
        for j in range(self.forest.n_features):  # clear errors before any R call
            self.encoder.column(j, X.iloc[:, j])
        return X

    def model_frame(self, X: pd.DataFrame) -> pd.DataFrame:
        """X with factor columns as pandas Categoricals in the model's levels (validated)."""
        out = {}
        for j, name in enumerate(self.forest.feature_names):
            col = X.iloc[:, j]
            if j in self.forest.unused:
                out[name] = col.array
            elif self.forest.is_factor(j):
                codes = self.encoder.factor_codes(j, col)
                out[name] = pd.Categorical.from_codes(codes, categories=self.forest.xlevels[j])
            else:
                self.encoder.numeric(j, col)  # validates (missing values, types)
                out[name] = col.array  # an ordered Categorical stays one: R codes it itself
        return pd.DataFrame(out, index=X.index)

    def predict(self, X, response):
        if self._predict_fn is None:
            raise PdpxError("this randomForest adapter has no predict function; only exact / recursion can run")
        X = X[self.feature_names()] if list(map(str, X.columns)) != self.feature_names() else X
        frame = self.model_frame(X)
        with R_LOCK:
            out = self._predict_fn(frame)
        pred = decode_prediction(out, len(frame))
        return self._check_prediction(pred, len(frame))

    def _check_prediction(self, pred: np.ndarray, n: int) -> np.ndarray:
        k = len(self.forest.classes) if self.forest.is_classification else 1
        if pred.shape != (n, k):
            raise PdpxError(f"the randomForest predict function returned shape {pred.shape}; expected ({n}, {k})")
        if np.isnan(pred).any():
            raise PdpxError(
                "randomForest returned missing predictions (NA); its predictors must not have missing values"
            )
        return pred

    # trees
    def _ensemble(self) -> TreeEnsemble:
        return forest_ensemble(self.forest)

    def _base_tree_model(self) -> TreeModel:
        if "base" not in self._tree_models:
            ens = self._ensemble()
            self._tree_models["base"] = TreeModel(
                ensemble=ens, encode=self.encoder.encode, encode_values=self.encoder.encode_values,
                notes=[], recursion_weights=NO_NODE_WEIGHTS,
                dated=frozenset(j for j, u in enumerate(self.encoder.time_units) if u is not None),
            )
        return self._tree_models["base"]

    def tree_model(self, response):
        if response not in self.responses():
            return None
        if self.training_data is None:
            return self._base_tree_model()
        if "routed" not in self._tree_models:
            self._tree_models["routed"] = route_training_rows(
                self._base_tree_model(), self, self.training_data, self.training_weight
            )
        return self._tree_models["routed"]

    def tree_model_unavailable(self, response):
        return f"a randomForest model has no response {response!r}; use {self.responses()[0]!r}"


def route_training_rows(tm: TreeModel, adapter: Adapter, data: pd.DataFrame, weight=None) -> TreeModel:
    """``tm`` with node counts from routing the training rows ``data`` (for ``recursion``)."""
    if not isinstance(data, pd.DataFrame):
        raise PdpxError("training_data must be a pandas DataFrame with the model's predictor columns")
    data = adapter.validate_columns(data)
    w = None if weight is None else as_array(weight)
    counts = route_counts(tm.ensemble, tm.encode(data), w)
    src = f"counts of the {len(data):,} training rows given, routed through the trees (randomForest stores none)"
    return with_node_weights(tm, counts, src)
