"""Spark ML (``pyspark.ml``) tree models: their trees read for ``exact``, their ``transform`` for ``brute``.

Recognised: ``DecisionTree``, ``RandomForest`` and ``GBT`` regression and classification models,
alone (X's columns, in order, are the model's feature vector) or as the last stage of a
``PipelineModel`` whose earlier stages are ``StringIndexer`` models, ``OneHotEncoder`` models of
their outputs and one ``VectorAssembler`` (X's columns are the pipeline's raw inputs; a text
column's code is its position in the indexer's labels; :mod:`pdpx.adapters.sparkml_pipeline`).
Regression models and boosted classifiers are read from the model's text
(:mod:`pdpx.adapters.sparkml_trees`); a decision tree's or forest's class probabilities from its
saved form (:mod:`pdpx.adapters.sparkml_saved`), the first time its trees are asked for. Where that
fails, the reason is given and the model's ``transform`` is averaged (brute). Any other Spark ML model
with a ``numFeatures`` (``LogisticRegression``, ``LinearSVC``, ...), alone or ending such a pipeline,
is averaged through its ``transform`` (brute): class probabilities where it gives them, else its
prediction.

Predictions (``brute``, and the check of the trees against the model) call the model's own
``transform`` in the active Spark session, on the rows given as a Spark DataFrame; the prediction
(regression) or the ``probability`` vector (classification) comes back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..core.adapter import Adapter
from ..core.errors import PdpxError
from ..core.hookspecs import hookimpl
from ..core.ir import TreeModel, model_cache
from .rlevels import LevelEncoder
from .sparkml_pipeline import slots_of
from .sparkml_saved import classifier_trees, saved_nodes
from .sparkml_trees import onto_columns, parse, spark_ensemble

#: The tree models read, by class name: (aggregation of the trees, whether they classify)
TREES = {
    "DecisionTreeRegressionModel": ("sum", False), "RandomForestRegressionModel": ("mean", False),
    "GBTRegressionModel": ("sum", False), "DecisionTreeClassificationModel": ("sum", True),
    "RandomForestClassificationModel": ("mean", True), "GBTClassificationModel": ("sum", True),
}


@dataclass(frozen=True)
class SparkMLTrees:
    """What a Spark task needs of a Spark ML tree model, without its JVM objects (picklable): the class name,
    X's columns, each column's StringIndexer labels (None: a number), the trees on X's columns (``[(weight,
    nodes)]``; None while a classifier's saved form is not read yet), the classes, and each slot of the
    feature vector's ``(column, one-hot values or None, a missing value's code or None)``."""

    kind: str
    names: tuple
    levels: tuple
    trees: tuple | None
    n_classes: int = 0
    slots: tuple = ()


#: Classifiers whose class probabilities are read from the saved form, not from the text
SAVED = ("DecisionTreeClassificationModel", "RandomForestClassificationModel")


def probabilities(model) -> bool:
    """Whether a Spark ML model gives class probabilities (its ``probability`` column)."""
    return model.hasParam("probabilityCol") and hasattr(model, "numClasses")


def read_spec(model) -> SparkMLTrees:
    """The :class:`SparkMLTrees` of a tree model, alone or ending a ``PipelineModel`` (a decision tree's or
    forest's classifier trees not read yet: :func:`with_saved_trees`)."""
    stages = list(model.stages) if type(model).__name__ == "PipelineModel" else [model]
    tree = stages[-1]
    n = int(tree.numFeatures)
    if len(stages) > 1:
        names, levels, slots = slots_of(stages[:-1], n)
    else:
        names, levels, slots = [f"x{i}" for i in range(n)], [None] * n, [(i, None, None) for i in range(n)]
    kind = type(tree).__name__
    classes = int(tree.numClasses) if probabilities(tree) else 0
    read = kind in TREES and kind not in SAVED
    trees = tuple(onto_columns(parse(tree.toDebugString), slots)) if read else None
    return SparkMLTrees(kind, tuple(names), tuple(levels), trees, classes, tuple(slots))


def with_saved_trees(spec: SparkMLTrees, tree) -> SparkMLTrees:
    """``spec`` with the trees of a decision tree or forest classifier read from its saved form."""
    trees = classifier_trees(saved_nodes(tree), spec.n_classes)
    return replace(spec, trees=tuple(onto_columns(trees, list(spec.slots))))


class SparkMLAdapter(Adapter):
    """A Spark ML tree model, alone or at the end of a ``PipelineModel`` (see the module docstring); or its
    :class:`SparkMLTrees` in a Spark task (trees only: no ``transform`` there)."""

    library = "pyspark.ml"

    def __init__(self, model):
        super().__init__(model)
        self.spec = model if isinstance(model, SparkMLTrees) else read_spec(model)
        self.tree = None if isinstance(model, SparkMLTrees) else (
            model.stages[-1] if type(model).__name__ == "PipelineModel" else model)
        self.aggregation = TREES.get(self.spec.kind, ("", False))[0]
        self.classifies = self.spec.n_classes > 0
        self.names = list(self.spec.names)
        self.encoder = LevelEncoder(self.names, list(self.spec.levels), "Spark ML", allow_missing=True)
        self._tree_model: TreeModel | None = None

    def portable(self) -> SparkMLTrees:
        """What Spark's tasks receive instead of the model (its JVM objects cannot travel), with its trees."""
        self.saved_refusal()
        return self.spec

    def saved_refusal(self) -> str:
        """Why a decision tree's or forest's classifier trees could not be read from its saved form ("" once
        they are read; read once per model, kept with it)."""
        if self.spec.trees is not None or self.spec.kind not in SAVED:
            return ""
        if self.tree is None:
            return "its class counts were not read on the driver"

        def read():
            try:
                return with_saved_trees(self.spec, self.tree)
            except PdpxError as exc:  # SavedFormUnreadable, or counts pdpx does not read
                return str(exc)

        got = model_cache.get(self.tree, "pdpx.adapters.sparkml_saved", (), read, state=str(self.tree.uid))
        if isinstance(got, str):
            return got
        self.spec = got
        return ""

    def feature_names(self):
        return list(self.names)

    def unkept(self, j: int, codes: np.ndarray) -> np.ndarray:
        """``codes`` of column ``j``, refused when missing where the column's StringIndexer does not keep invalid
        values (Spark's transform fails on them, or drops the rows)."""
        text = self.spec.levels[j] is not None
        if text and np.isnan(codes).any() and all(m is None for c, _, m in self.spec.slots if c == j):
            raise PdpxError(f"column {self.names[j]!r} has missing values, which the pipeline's StringIndexer "
                            "refuses (its handleInvalid is not 'keep'); fill them, or fit the indexer with "
                            "handleInvalid='keep'")
        return codes

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        """X's columns in the trees' numeric space (a text column: its code in the indexer's labels)."""
        out = self.encoder.encode(X)
        for j in range(out.shape[1]):
            self.unkept(j, out[:, j])
        return out

    def encode_values(self, position: int, values) -> np.ndarray:
        """Grid values of column ``position`` in the same space."""
        return self.unkept(position, self.encoder.encode_values(position, values))

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
        out = self.model.transform(self.assembled(spark.createDataFrame(frame)))
        if self.classifies:
            got = out.select(vector_to_array(self.tree.getProbabilityCol()).alias("p")).toPandas()["p"]
            return np.asarray(np.stack(got.to_numpy()), dtype=np.float64)
        return out.select(self.tree.getPredictionCol()).toPandas().to_numpy(dtype=np.float64)

    def assembled(self, sdf):
        """``sdf`` as the model reads it: a model alone gets its features vector assembled from the columns (a
        pipeline assembles its own)."""
        if type(self.model).__name__ == "PipelineModel":
            return sdf
        from pyspark.ml.feature import VectorAssembler

        return VectorAssembler(inputCols=self.names, outputCol=self.tree.getFeaturesCol(),
                               handleInvalid="keep").transform(sdf)

    def average_in_spark(self, frame, req, weight_column):
        """Brute force over a Spark DataFrame's rows through the model's own ``transform``, in Spark
        (:mod:`pdpx.adapters.sparkml_brute`); None in a Spark task (no model there)."""
        if self.tree is None:
            return None
        from .sparkml_brute import average_by_transform

        return average_by_transform(self, frame, req, weight_column)

    def tree_model(self, response):
        if response not in self.responses() or self.tree_model_unavailable(response) != "":
            return None
        if self._tree_model is None:
            kind = self.spec.kind
            link = ("binary_logistic", 2.0) if kind == "GBTClassificationModel" else ("identity", 1.0)
            ens = spark_ensemble(list(self.spec.trees), len(self.names), aggregation=self.aggregation,
                                 link=link[0], link_scale=link[1], description=f"Spark ML {kind}")
            self._tree_model = TreeModel(ensemble=ens, encode=self.encode, encode_values=self.encode_values,
                                         recursion_weights="none: pdpx reads no node counts of Spark's trees")
        return self._tree_model

    def tree_model_unavailable(self, response):
        if response not in self.responses():
            return f"a Spark ML {self.spec.kind} has no response {response!r}; use {self.responses()[0]!r}"
        if self.spec.kind not in TREES:
            return f"a Spark ML {self.spec.kind} is not a tree model; pdpx averages its transform (brute)"
        if self.spec.kind in SAVED:
            why = self.saved_refusal()
            if why:
                return (f"pdpx reads a Spark ML {self.spec.kind}'s class counts from the model saved to a temporary "
                        f"folder of this machine, and could not: {why}. It averages the model's transform "
                        "(method='brute')")
        if self.classifies and self.spec.n_classes != 2 and self.spec.kind == "GBTClassificationModel":
            return "a boosted Spark ML classifier of more than two classes is not read"
        return ""


@hookimpl
def pdpx_adapt_model(model):
    """The Spark ML adapter for a tree model of ``pyspark.ml``, alone or ending a ``PipelineModel``."""
    if isinstance(model, SparkMLTrees):
        return SparkMLAdapter(model)
    if not type(model).__module__.startswith("pyspark.ml"):
        return None
    from pyspark.ml import Model

    last = model.stages[-1] if type(model).__name__ == "PipelineModel" and model.stages else model
    if type(last).__name__ not in TREES and not (isinstance(last, Model) and hasattr(last, "numFeatures")):
        return None
    return SparkMLAdapter(model)
