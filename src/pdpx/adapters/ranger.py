"""R ranger forests given as plain data (the flattened forest) plus R's predict.

The forest is read by :mod:`pdpx.adapters.ranger_trees`; predictions for ``brute``
go through the R closure given (``predict(model, data)$predictions`` behind it, a survival forest's
``$chf``). The R bridge builds this adapter; it registers no hook.

A survival forest (``treetype`` "Survival") answers ``survival`` and ``cumulative_hazard`` at the call's
times (``times=``, :mod:`pdpx.core.times`), each read at the largest of ranger's death times <= t; a time
before the first death time is refused (ranger's curves start there). The cumulative hazard is the
average of the trees' leaf hazards: exact on the trees. The survival is ``exp(-chf)`` of each row's
averaged hazard, as ranger's ``predict`` computes it: no sum of leaves, but the exp of one, which the
``exact`` method computes row by row (the trees' margin with the link ``exp(-m)``), as it does a
classifier's probabilities.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from ..core.adapter import TIME_RESPONSES
from ..core.errors import PdpxError
from ..core.ir import TreeModel
from ..core.times import step_columns, time_names
from ..r_wire import as_array, as_list
from .ranger_trees import death_times, ranger_ensemble, ranger_outputs
from .rfunction import RFrameAdapter
from .rlevels import LevelEncoder

#: What a ranger survival forest's exact survival is (said in the result's notes).
SURVIVAL_NOTE = ["the survival is exp(-chf) of each row's cumulative hazard averaged over the trees (ranger's "
                 "predict()$survival), computed exactly from the trees row by row, then averaged over the rows"]
NO_NODE_WEIGHTS = "none: ranger stores no node counts (use method = \"exact\", which needs none)"


class RangerAdapter(RFrameAdapter):
    """A ranger forest (see :mod:`pdpx.adapters.ranger_trees` for ``spec``) plus a predict function.

    Parameters
    ----------
    spec : mapping
        The flattened forest, with ``feature_names`` and ``levels`` (per input: the
        factor's levels in the order ranger codes them, or None).
    predict : callable, optional
        ``predict(X) -> predictions`` for a DataFrame with the model's inputs
        (factors as Categoricals in ``levels``): the regression prediction, the
        class probabilities of a probability forest, the fraction of trees
        voting for each class of a classification forest, or a survival forest's
        cumulative hazard at every death time (``$chf``).
    time_units : list of (str or None), optional
        Per input, ``"days"`` (an R ``Date`` column) or ``"seconds"`` (a ``POSIXct``): its dates are read as
        the numbers ranger splits on (:class:`~pdpx.adapters.rlevels.LevelEncoder`).
    """

    library = "ranger"

    def __init__(self, spec: Mapping, predict: Callable | None = None, time_units=None):
        super().__init__(self)
        self.spec = dict(spec)
        self.spec["levels"] = [None if lv is None else [str(v) for v in as_list(lv)]
                               for lv in as_list(spec["levels"])]
        self.treetype = str(spec["treetype"])
        self._features = [str(n) for n in as_list(spec["feature_names"])]
        self._classes = ranger_outputs(self.spec)
        self.encoder = LevelEncoder(self._features, self.spec["levels"], "ranger", allow_missing=False,
                                    time_units=time_units)
        self._predict_fn = predict
        self._tree_model: TreeModel | None = None
        self._survival = self.treetype == "Survival"
        self._death_times = death_times(self.spec) if self._survival else None

    def __repr__(self):
        return f"<RangerAdapter: ranger {self.treetype.lower()}, {len(as_list(self.spec['n_nodes']))} trees>"

    def feature_names(self):
        return list(self._features)

    def is_classifier(self):
        return self._classes is not None

    def classes(self):
        return None if self._classes is None else list(self._classes)

    def responses(self):
        if self._survival:
            return list(TIME_RESPONSES)
        return ["predict"] if self._classes is None else ["predict_proba"]

    def output_names(self, response):
        if self._survival:
            if self.times is None:  # pragma: no cover - the core sets the times before it asks
                raise PdpxError("the times of a survival response are not set (pdpx.core.times.resolve)")
            return time_names(self.times)
        return ["prediction"] if self._classes is None else list(self._classes)

    def training_times(self):
        return None if self._death_times is None else self._death_times.copy()

    def set_times(self, times):
        times = np.asarray(times, dtype=np.float64)
        if self._survival and times.size and times[0] < self._death_times[0]:
            raise PdpxError(f"times= start at {times[0]:.9g}, before the ranger forest's first death time "
                            f"{self._death_times[0]:.9g}: its curves (predict()$chf, $survival) start there; ask "
                            f"for times from {self._death_times[0]:.9g} on")
        super().set_times(times)

    def time_bytes(self, response):
        if not self._survival:
            return 0
        return 8 * int(as_array(self.spec["n_nodes"]).sum())

    def predict(self, X, response):
        if not self._survival:
            pred = self.r_predict(X, 1 if self._classes is None else len(self._classes))
            return np.asarray(pred, dtype=np.float64)
        chf = np.asarray(self.r_predict(X, self._death_times.size), dtype=np.float64)
        chf = np.ascontiguousarray(chf[:, step_columns(self._death_times, self.times)])
        return np.exp(-chf) if response == "survival" else chf

    def inbag_counts(self):
        """How many times each tree drew each training row (``keep.inbag = TRUE``), ``(n_rows, n_trees)``, for
        ``interval="jackknife"`` and ``oob=True`` (:mod:`pdpx.adapters.rinbag`)."""
        from .rinbag import inbag_counts

        return inbag_counts(self.spec.get("inbag"), "ranger", as_array(self.spec["n_nodes"]).size)

    def tree_model(self, response):
        if response not in self.responses():
            return None
        if self._survival:
            key = (response, tuple(self.times.tolist()))
            if getattr(self, "_survival_key", None) != key:
                self._tree_model = TreeModel(
                    ensemble=ranger_ensemble(self.spec, self.times, survival=response == "survival"),
                    encode=self.encoder.encode, notes=SURVIVAL_NOTE if response == "survival" else [],
                    encode_values=self.encoder.encode_values, recursion_weights=NO_NODE_WEIGHTS,
                    dated=frozenset(j for j, u in enumerate(self.encoder.time_units) if u is not None))
                self._survival_key = key
            return self._tree_model
        if self._tree_model is None:
            notes = []
            if self.treetype == "Classification":
                notes.append("a ranger classification forest predicts the majority vote (a label); pdpx reports "
                             "the fraction of trees voting for each class")
            self._tree_model = TreeModel(
                ensemble=ranger_ensemble(self.spec), encode=self.encoder.encode,
                encode_values=self.encoder.encode_values, notes=notes, recursion_weights=NO_NODE_WEIGHTS,
                dated=frozenset(j for j, u in enumerate(self.encoder.time_units) if u is not None),
            )
        return self._tree_model

    def tree_model_unavailable(self, response):
        return f"a ranger model has no response {response!r}; use {self.responses()[0]!r}"
