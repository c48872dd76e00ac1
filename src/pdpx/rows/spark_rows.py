"""Rows of a Spark DataFrame by position: the numbering ``toPandas()`` gives them.

Position ``i`` of a Spark DataFrame is its ``i``-th row in the order ``toPandas()`` (or ``collect()``)
returns the rows: the rows of partition 0 first, in the order the partition holds them, then those of
partition 1, and so on. :func:`partition_counts` counts the rows of each partition in one small
aggregation (``F.spark_partition_id()``, part of the DataFrame API, so it runs under Spark Connect);
:func:`take_rows` brings the rows at given positions here in one ``mapInPandas`` pass, each task keeping
the rows of its partition whose positions were asked for.

The numbering assumes that the DataFrame gives the same rows, in the same partitions and order, on each
action. A DataFrame read from files or built from a pandas frame does; one whose rows come from a
nondeterministic source (a UDF marked ``asNondeterministic()``, ``rand()`` over rows whose order is not
fixed, a shuffle whose order is not fixed, a table written to while it is read) should be ``.cache()``'d
(and counted once) or ``.checkpoint()``'ed first. :func:`take_rows` walks every row of every partition
and checks their tally (:mod:`pdpx.rows.spark_checks`: count, values and order of each partition) against
the earlier passes', so pdpx says so rather than return other rows.
"""

from __future__ import annotations

import contextlib
import pickle
import warnings

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from .spark_checks import Tally, tallies_by_partition, tally

#: The column that carries a row's partition while positions are counted, and its position once taken
PART_COLUMN, _POS = "__pdpx_partition", "__pdpx_position"
#: The column that carries a partition's tally (:mod:`pdpx.rows.spark_checks`) out of a pass that takes rows
_TALLY = "__pdpx_tally"

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


def take_rows(frame, columns: list[str], positions, counts: np.ndarray, check=None) -> pd.DataFrame:
    """The rows of ``frame`` at ``positions`` (in that order, repeats allowed), its columns ``columns``, as
    ``frame.toPandas().iloc[positions][columns]`` gives them, without bringing the other rows here. ``counts``:
    :func:`partition_counts` of ``frame``. ``check``: a :class:`pdpx.rows.spark_checks.RowCheck` of ``frame``'s
    rows, which the tally of every row this pass reads (each task walks its whole partition) must match."""
    from pyspark.sql import functions as F

    n = int(counts.sum())
    positions = np.asarray(positions, dtype=np.int64).reshape(-1)
    if positions.size and (positions.min() < 0 or positions.max() >= n):
        raise PdpxError(f"row positions must be between 0 and {n - 1} (X has {n:,} rows)")
    wanted = np.unique(positions)
    if len(wanted) == n:  # every row: the order toPandas() gives is the numbering itself
        local = to_pandas(frame.select(*columns, F.spark_partition_id().alias(PART_COLUMN)))
        if check is not None:
            check.seen(tallies_by_partition(local, columns, PART_COLUMN), by_position=True)
        if len(local) != n:
            raise PdpxError(_NONDETERMINISTIC)
        return local[columns].iloc[positions].reset_index(drop=True)
    starts = np.concatenate([[0], np.cumsum(counts)])
    part_of = np.searchsorted(starts, wanted, side="right") - 1
    asked = {int(p): wanted[part_of == p] - starts[p] for p in np.unique(part_of)}  # positions within each partition
    found, parts = _found(frame, columns, asked, starts)
    if check is not None:
        check.seen(parts, by_position=True)
    at = pd.Index(found[_POS].to_numpy()).get_indexer(positions) if len(found) else np.full(len(positions), -1)
    if len(found) != len(wanted) or (at < 0).any():
        raise PdpxError(_NONDETERMINISTIC)
    return found[columns].iloc[at].reset_index(drop=True)


def _found(frame, columns: list[str], asked: dict, starts: np.ndarray) -> tuple[pd.DataFrame, dict]:
    """One ``mapInPandas`` pass: the rows at the places ``asked[partition]`` within each partition of ``frame``
    (their positions in :data:`_POS`), and ``{partition: Tally}`` of every row the pass read."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, LongType, StructField, StructType

    def keep(batches):
        seen, read, part, first = 0, Tally(), None, None
        for batch in batches:
            if len(batch) == 0:
                continue
            part, first = int(batch[PART_COLUMN].iat[0]), batch.iloc[:1]
            read = read + tally(batch, columns, seen)
            mine = asked.get(part)
            local = np.arange(seen, seen + len(batch))
            seen += len(batch)
            hit = np.zeros(len(batch), dtype=bool) if mine is None else np.isin(local, mine, assume_unique=True)
            if hit.any() and part + 1 < len(starts):
                yield batch.loc[hit, columns].assign(**{_POS: local[hit] + starts[part], _TALLY: None})
        if part is not None:  # the partition's tally, in a row of its own: a copy of a row, at position -1 - part
            yield first[columns].assign(**{_POS: -1 - part, _TALLY: pickle.dumps(read)})

    selected = frame.select(*columns)
    schema = StructType(list(selected.schema.fields) + [StructField(_POS, LongType(), False),
                                                        StructField(_TALLY, BinaryType(), True)])
    with quiet():
        got = to_pandas(frame.select(*columns, F.spark_partition_id().alias(PART_COLUMN)).mapInPandas(keep, schema))
    mark = (got[_POS] < 0).to_numpy()
    parts: dict = {}
    for p, t in zip(-1 - got[_POS].to_numpy()[mark], got[_TALLY].to_numpy()[mark]):
        parts[int(p)] = parts[int(p)] + pickle.loads(t) if int(p) in parts else pickle.loads(t)
    return got.loc[~mark].drop(columns=_TALLY).reset_index(drop=True), parts
