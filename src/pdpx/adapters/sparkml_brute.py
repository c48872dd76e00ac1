"""A Spark ML model that is not read as trees, averaged through its own ``transform`` where the rows are.

With a Spark DataFrame ``X``, Spark's Python tasks cannot call a Spark ML model (it lives in
the JVM of the driver's session), so brute force runs as Spark does it: ``X``'s rows
cross-joined with the grid's cells (a broadcast table of a few rows), the feature columns
set to each cell's values (cast to ``X``'s column types), the model's ``transform`` on the
joined rows, and one aggregation by cell of the weighted predictions (class probabilities
where the model gives them) and the weights. Only the per-cell sums come back: the result
is the definition (set the column, call the model, average) computed in Spark.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from ..core.method import MethodResult, Request

#: Names of the columns pdpx adds to the joined rows (the cell and its values).
CELL = "__pdpx_cell"


def average_by_transform(adapter, frame, req: Request, weight_column: str | None) -> MethodResult:
    """The PD of ``req`` over the rows of the Spark DataFrame ``frame`` through ``adapter``'s model's
    ``transform`` (see the module docstring); ``weight_column``: the column of weights, or None."""
    from pyspark.ml.functions import vector_to_array
    from pyspark.sql import functions as F

    names = [adapter.names[j] for j in req.features]
    cells = list(itertools.product(*[list(np.asarray(g).tolist()) for g in req.grid_values]))
    grid = pd.DataFrame({CELL: np.arange(len(cells), dtype=np.int64),
                         **{f"{CELL}{k}": [c[k] for c in cells] for k in range(len(names))}})
    types = dict(frame.dtypes)
    keep = list(adapter.names) + ([weight_column] if weight_column and weight_column not in adapter.names else [])
    stacked = frame.select(*keep).crossJoin(F.broadcast(frame.sparkSession.createDataFrame(grid)))
    for k, name in enumerate(names):
        stacked = stacked.withColumn(name, F.col(f"{CELL}{k}").cast(types[name]))
    out = adapter.model.transform(adapter.assembled(stacked))
    w = F.col(weight_column).cast("double") if weight_column else F.lit(1.0)
    if adapter.classifies:
        probability = vector_to_array(adapter.tree.getProbabilityCol())
        values = [probability[int(o)] for o in req.outputs]
    else:
        values = [F.col(adapter.tree.getPredictionCol())]
    sums = out.groupBy(CELL).agg(*[F.sum(w * v).alias(f"s{i}") for i, v in enumerate(values)],
                                 F.sum(w).alias("w")).toPandas().sort_values(CELL)
    total = sums["w"].to_numpy(dtype=np.float64)
    if len(sums) != len(cells) or not np.all(total > 0):
        raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
    average = np.stack([sums[f"s{i}"].to_numpy(dtype=np.float64) / total for i in range(len(values))])
    note = (f"averaged through the model's own transform in Spark: X's rows joined with the {len(cells)} grid "
            "cells, one aggregation by cell")
    return MethodResult(average=average.reshape(len(values), *req.grid_shape), notes=[note])
