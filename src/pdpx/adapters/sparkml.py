"""Spark ML (``pyspark.ml``) tree models: their trees read for ``exact``, their ``transform`` for ``brute``.

Recognised: ``DecisionTree``, ``RandomForest`` and ``GBT`` regression and classification models,
alone (X's columns, in order, are the model's feature vector) or as the last stage of a
``PipelineModel`` whose earlier stages are ``StringIndexer`` models and one ``VectorAssembler``
(X's columns are the pipeline's raw inputs; a text column's code is its position in the
indexer's labels). Trees are read from the model's text (:mod:`pdpx.adapters.sparkml_trees`):
regression models, and boosted classifiers' probabilities; a decision tree's or forest's class
probabilities are not in the text, so those run ``brute``.

Predictions (``brute``, and the check of the trees against the model) call the model's own
``transform`` in the active Spark session, on the rows given as a Spark DataFrame; the prediction
(regression) or the ``probability`` vector (classification) comes back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.adapter import Adapter
from ..core.errors import PdpxError
from ..core.hookspecs import hookimpl
from ..core.ir import TreeModel
from .rlevels import LevelEncoder
from .sparkml_trees import spark_ensemble

#: The tree models read, by class name: (aggregation of the trees, whether they classify)
TREES = {
    "DecisionTreeRegressionModel": ("sum", False), "RandomForestRegressionModel": ("mean", False),
    "GBTRegressionModel": ("sum", False), "DecisionTreeClassificationModel": ("sum", True),
    "RandomForestClassificationModel": ("mean", True), "GBTClassificationModel": ("sum", True),
}


@dataclass(frozen=True)
class SparkMLTrees:
    """What a Spark task needs of a Spark ML tree model, without its JVM objects (picklable): the class name,
    X's columns, each column's StringIndexer labels (None: a number), the trees' text and the classes."""

    kind: str
    names: tuple
    levels: tuple
    text: str
    n_classes: int = 0


def read_spec(model) -> SparkMLTrees:
    """The :class:`SparkMLTrees` of a tree model, alone or ending a ``PipelineModel``."""
    stages = list(model.stages) if type(model).__name__ == "PipelineModel" else [model]
    tree = stages[-1]
    indexers = {s.getOutputCol(): s for s in stages[:-1] if type(s).__name__ == "StringIndexerModel"}
    assemblers = [s for s in stages[:-1] if type(s).__name__ == "VectorAssembler"]
    other = [type(s).__name__ for s in stages[:-1] if type(s).__name__ not in ("StringIndexerModel",
                                                                               "VectorAssembler")]
    if other or len(assemblers) > 1 or (len(stages) > 1 and not assemblers):
        raise PdpxError(f"pdpx reads a Spark ML pipeline of StringIndexer models, one VectorAssembler and a tree "
                        f"model; this one has {other or [type(s).__name__ for s in stages]}. Pass a function "
                        "that predicts a pandas DataFrame instead")
    n = int(tree.numFeatures)
    if assemblers:
        slots = list(assemblers[0].getInputCols())
        if len(slots) != n:
            raise PdpxError(f"the VectorAssembler makes {len(slots)} slots but the tree model reads {n}; pdpx "
                            "reads assemblers of scalar columns only")
        names = [indexers[c].getInputCol() if c in indexers else c for c in slots]
        levels = [tuple(indexers[c].labelsArray[0]) if c in indexers else None for c in slots]
    else:
        names, levels = [f"x{i}" for i in range(n)], [None] * n
    classes = int(tree.numClasses) if TREES[type(tree).__name__][1] else 0
    return SparkMLTrees(type(tree).__name__, tuple(names), tuple(levels), tree.toDebugString, classes)


class SparkMLAdapter(Adapter):
    """A Spark ML tree model, alone or at the end of a ``PipelineModel`` (see the module docstring); or its
    :class:`SparkMLTrees` in a Spark task (trees only: no ``transform`` there)."""

    library = "pyspark.ml"

    def __init__(self, model):
        super().__init__(model)
        self.spec = model if isinstance(model, SparkMLTrees) else read_spec(model)
        self.tree = None if isinstance(model, SparkMLTrees) else (
            model.stages[-1] if type(model).__name__ == "PipelineModel" else model)
        self.aggregation, self.classifies = TREES[self.spec.kind]
        self.names = list(self.spec.names)
        self.encoder = LevelEncoder(self.names, list(self.spec.levels), "Spark ML", allow_missing=True)
        self._tree_model: TreeModel | None = None

    def portable(self) -> SparkMLTrees:
        """What Spark's tasks receive instead of the model (its JVM objects cannot travel)."""
        return self.spec

    def feature_names(self):
        return list(self.names)

    def is_classifier(self):
        return self.classifies

    def classes(self):
        return [str(float(k)) for k in range(self.spec.n_classes)] if self.classifies else None

    def responses(self):
        return ["predict_proba"] if self.classifies else ["predict"]

    def output_names(self, response):
        return self.classes() if self.classifies else ["prediction"]

    def predict(self, X: pd.DataFrame, response: str) -> np.ndarray:
        """The model's ``transform`` of ``X``'s rows in the active Spark session."""
        from pyspark.ml.functions import vector_to_array
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if self.tree is None:
            raise PdpxError(f"a Spark ML {self.spec.kind} cannot predict inside Spark's tasks (its transform runs "
                            "in the driver's session): with a Spark DataFrame X only its trees are read; pass "
                            "X.toPandas() (or a sample) to average its transform")
        if spark is None:
            raise PdpxError("a Spark ML model predicts in a Spark session; start one (SparkSession.builder"
                            ".getOrCreate()) before calling pdpx")
        frame = pd.DataFrame({c: X[c].astype(str) if isinstance(X[c].dtype, pd.CategoricalDtype) else X[c]
                              for c in X.columns})
        sdf = spark.createDataFrame(frame)
        if type(self.model).__name__ != "PipelineModel":
            from pyspark.ml.feature import VectorAssembler

            sdf = VectorAssembler(inputCols=self.names, outputCol=self.tree.getFeaturesCol(),
                                  handleInvalid="keep").transform(sdf)
        out = self.model.transform(sdf)
        if self.classifies:
            got = out.select(vector_to_array(self.tree.getProbabilityCol()).alias("p")).toPandas()["p"]
            return np.asarray(np.stack(got.to_numpy()), dtype=np.float64)
        return out.select(self.tree.getPredictionCol()).toPandas().to_numpy(dtype=np.float64)

    def tree_model(self, response):
        if response not in self.responses() or self.tree_model_unavailable(response) != "":
            return None
        if self._tree_model is None:
            kind = self.spec.kind
            link = ("binary_logistic", 2.0) if self.classifies else ("identity", 1.0)
            ens = spark_ensemble(self.spec.text, len(self.names), aggregation=self.aggregation,
                                 link=link[0], link_scale=link[1], description=f"Spark ML {kind}")
            self._tree_model = TreeModel(ensemble=ens, encode=self.encoder.encode,
                                         encode_values=self.encoder.encode_values,
                                         recursion_weights="none: Spark's text holds no node counts")
        return self._tree_model

    def tree_model_unavailable(self, response):
        if response not in self.responses():
            return f"a Spark ML {self.spec.kind} has no response {response!r}; use {self.responses()[0]!r}"
        if self.classifies and self.spec.kind != "GBTClassificationModel":
            return ("a Spark ML decision tree or forest classifier's leaf class counts are not in its text; "
                    "pdpx averages its transform (brute)")
        if self.classifies and self.spec.n_classes != 2:
            return "a boosted Spark ML classifier of more than two classes is not read"
        return ""


@hookimpl
def pdpx_adapt_model(model):
    """The Spark ML adapter for a tree model of ``pyspark.ml``, alone or ending a ``PipelineModel``."""
    if isinstance(model, SparkMLTrees):
        return SparkMLAdapter(model)
    if not type(model).__module__.startswith("pyspark.ml"):
        return None
    last = model.stages[-1] if type(model).__name__ == "PipelineModel" and model.stages else model
    if type(last).__name__ not in TREES:
        return None
    return SparkMLAdapter(model)
