"""Rows of a Spark DataFrame by position: the numbering ``toPandas()`` gives them.

Position ``i`` of a Spark DataFrame is its ``i``-th row in the order ``toPandas()`` (or ``collect()``)
returns the rows: the rows of partition 0 first, in the order the partition holds them, then those of
partition 1, and so on. :func:`partition_counts` counts the rows of each partition in one small
aggregation (``F.spark_partition_id()``, part of the DataFrame API, so it runs under Spark Connect);
:func:`take_rows` brings the rows at given positions here in one ``mapInPandas`` pass, each task keeping
the rows of its partition whose positions were asked for.

The numbering assumes that the DataFrame gives the same rows, in the same partitions and order, on each
action. A DataFrame read from files or built from a pandas frame does; one whose rows come from a
nondeterministic source (``sample()`` without a seed, ``rand()``, a shuffle whose order is not fixed, a
table written to while it is read) should be ``.cache()``'d (and counted once) or ``.checkpoint()``'ed
first. When the rows counted differ from the rows found, pdpx says so rather than return other rows.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pandas as pd

from .errors import PdpxError

#: The column that carries a row's partition while positions are counted, and its position once taken
PART_COLUMN, _POS = "__pdpx_partition", "__pdpx_position"

_NONDETERMINISTIC = ("the DataFrame gave other rows on this pass than on the pass that counted them: its rows "
                     "are not in the same partitions and order on each action. Cache it first "
                     "(X = X.cache(); X.count()) or checkpoint it, then pass it again")


@contextlib.contextmanager
def quiet():
    """A block in which pyspark's warning about pandas versions it has not yet certified is not shown
    (pdpx converts the columns' types itself and is tested with the pandas installed beside it)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support pandas.*")
        yield


def to_pandas(frame) -> pd.DataFrame:
    """``frame.toPandas()`` without pyspark's pandas-version warning."""
    with quiet():
        return frame.toPandas()


def partition_counts(frame) -> np.ndarray:
    """Rows of each partition of ``frame``, in partition order (one aggregation; partitions with no rows 0)."""
    from pyspark.sql import functions as F

    got = frame.select(F.spark_partition_id().alias(PART_COLUMN)).groupBy(PART_COLUMN).count().collect()
    by_part = {int(r[0]): int(r[1]) for r in got}
    counts = np.zeros(max(by_part, default=-1) + 1, dtype=np.int64)
    for p, n in by_part.items():
        counts[p] = n
    return counts


def take_rows(frame, columns: list[str], positions, counts: np.ndarray) -> pd.DataFrame:
    """The rows of ``frame`` at ``positions`` (in that order, repeats allowed), its columns ``columns``, as
    ``frame.toPandas().iloc[positions][columns]`` gives them, without bringing the other rows here. ``counts``:
    :func:`partition_counts` of ``frame``."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType

    n = int(counts.sum())
    positions = np.asarray(positions, dtype=np.int64).reshape(-1)
    if positions.size and (positions.min() < 0 or positions.max() >= n):
        raise PdpxError(f"row positions must be between 0 and {n - 1} (X has {n:,} rows)")
    wanted = np.unique(positions)
    selected = frame.select(*columns)
    if len(wanted) == n:  # every row: the order toPandas() gives is the numbering itself
        local = to_pandas(selected)
        if len(local) != n:
            raise PdpxError(_NONDETERMINISTIC)
        return local.iloc[positions].reset_index(drop=True)
    starts = np.concatenate([[0], np.cumsum(counts)])
    part_of = np.searchsorted(starts, wanted, side="right") - 1
    asked = {int(p): wanted[part_of == p] - starts[p] for p in np.unique(part_of)}  # positions within each partition

    def keep(batches):
        seen = 0
        for batch in batches:
            if len(batch) == 0:
                continue
            mine = asked.get(int(batch[PART_COLUMN].iat[0]))
            if mine is None:
                return
            local = np.arange(seen, seen + len(batch))
            hit = np.isin(local, mine, assume_unique=True)
            seen += len(batch)
            if hit.any():
                yield batch.loc[hit, columns].assign(**{_POS: local[hit] + starts[int(batch[PART_COLUMN].iat[0])]})

    schema = StructType(list(selected.schema.fields) + [StructField(_POS, LongType(), False)])
    with quiet():
        found = to_pandas(frame.select(*columns, F.spark_partition_id().alias(PART_COLUMN)).mapInPandas(keep, schema))
    at = pd.Index(found[_POS].to_numpy()).get_indexer(positions) if len(found) else np.full(len(positions), -1)
    if len(found) != len(wanted) or (at < 0).any():
        raise PdpxError(_NONDETERMINISTIC)
    return found[columns].iloc[at].reset_index(drop=True)
