"""What pdpx checks of a Spark DataFrame's columns and rows: types it can read, and rows that stay the same.

Types (:func:`check_types`), from the schema alone, before any pass over the rows: pdpx reads
numbers, strings, booleans, dates and timestamps (a ``decimal`` column is read as a double). A
struct, array or map column, binary, an interval, a column of nulls only (``void``) or any other
type is refused, naming the column, its Spark type and what to do.

Rows (:class:`RowCheck`): pdpx passes over a Spark X several times (the columns for the grids,
each partition's sums, the rows of the ICE curves, the bootstrap's draws), and each pass is a
new Spark action that computes X again. A DataFrame whose values change from one action to the
next (a column from a non-deterministic expression, ``F.rand()`` without a seed or a UDF marked
``asNondeterministic()``, not cached; a table written to while it is read) would give numbers
from different rows: a PD that is not the mean of its ICE curves. So each pass that reads
values also reads their *tally* (:class:`Tally`): the row count and, modulo 2**64, the sum over
rows of each column's value hashes, of each row's hash (its columns together) and, within a
partition, of each row's hash weighted by its place there. The first pass sets the reference;
every later pass must give the same count and sums, or pdpx refuses, naming ``cache()`` and
``checkpoint()`` and the columns that changed. Sums over all rows do not depend on how Spark
splits the rows into partitions; the passes that read rows by position (:mod:`.spark_rows`:
ICE rows, the bootstrap) also compare each partition's count and its rows' order. Text values
outside the levels counted by the first aggregation are counted too. A number (or a time) is its
own 64 bits, any other value pandas' hash of it (``pandas.util.hash_array``), as pyspark converts the
values for the driver and for the tasks alike; a random change escapes only with probability about
2**-64.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.errors import PdpxError

#: Spark types pdpx reads as they come (``DataFrame.dtypes`` spelling); ``decimal(p,s)`` is read as a double
READABLE = frozenset({"tinyint", "smallint", "int", "bigint", "float", "double", "boolean", "string", "date",
                      "timestamp", "timestamp_ntz"})
#: Spark types, by the start of their name, that are text (their columns become categories)
TEXT = ("string", "varchar", "char")

_WHAT_TO_DO = {
    "struct": "select or flatten its fields (X.select('{c}.*') or F.col('{c}.field'))",
    "array": "take its elements as columns (F.col('{c}')[0], ...) or leave it out",
    "map": "take its values as columns (F.col('{c}')['key'], ...) or leave it out",
    "binary": "decode it to a string (F.decode('{c}', 'utf-8')) or leave it out",
    "interval": "convert it to a number (e.g. its seconds) or leave it out",
    "void": "it holds only nulls: cast it to the type the model was fitted on (F.col('{c}').cast('double'))",
}

#: Mixes a row's column hashes together (odd: a bijection modulo 2**64)
_MIX = np.uint64(0x9E3779B97F4A7C15)

_CHANGED = ("its rows change between Spark actions: a column from a non-deterministic expression (F.rand() without a "
            "seed, a UDF marked asNondeterministic()) that is not cached, or a source written to while pdpx reads it. "
            "Cache it first (X = X.cache(); X.count()) or checkpoint it (X = X.checkpoint()), then pass it again")


def readable(spark_type: str) -> bool:
    """Whether pdpx reads a column of this Spark type (``DataFrame.dtypes`` spelling)."""
    return spark_type in READABLE or spark_type.startswith(("decimal(", "varchar(", "char("))


def quoted(name: str) -> str:
    """``name`` as a Spark column reference that means that column, whatever its characters (dots, backticks)."""
    return "`" + name.replace("`", "``") + "`"


def is_text(spark_type: str) -> bool:
    """Whether a column of this Spark type is text (a category here)."""
    return spark_type.split("(")[0] in TEXT


def check_types(types: dict, columns) -> None:
    """Refuse, before any pass over the rows, the first of ``columns`` whose Spark type (``types[c]``) pdpx cannot
    read, naming it, its type and what to do."""
    for c in columns:
        t = types[c]
        if readable(t):
            continue
        kind = t.split("<")[0].split("(")[0].split(" ")[0]
        todo = _WHAT_TO_DO.get(kind, "cast it to one of those or leave it out").format(c=c)
        raise PdpxError(f"column {c!r} is a Spark {t}; pdpx reads numbers, strings, booleans, dates and timestamps: "
                        f"{todo}")


def changed(what: str) -> PdpxError:
    """The error for rows that changed between passes: ``what`` says how."""
    return PdpxError(f"X gave other rows on one pass than on another ({what}): {_CHANGED}")


@dataclass
class Tally:
    """What a pass read of some rows (see the module's docstring): ``n`` rows; sums modulo 2**64 of each column's
    value hashes (``columns``), of the rows' hashes and of the rows' hashes weighted by their places in their
    partition (``rows``, ``ordered``: keyed by the columns read, sorted); text values outside the levels
    (``outside``, by column). ``a + b`` is the tally of both sets of rows (``ordered`` only within a partition)."""

    n: int = 0
    columns: dict = field(default_factory=dict)
    rows: dict = field(default_factory=dict)
    ordered: dict = field(default_factory=dict)
    outside: dict = field(default_factory=dict)

    def __add__(self, other: "Tally") -> "Tally":
        def add(a: dict, b: dict) -> dict:
            return {k: (a.get(k, 0) + b.get(k, 0)) & 0xFFFFFFFFFFFFFFFF for k in a.keys() | b.keys()}

        return Tally(self.n + other.n, add(self.columns, other.columns), add(self.rows, other.rows),
                     add(self.ordered, other.ordered), {k: self.outside.get(k, 0) + other.outside.get(k, 0)
                                                        for k in self.outside.keys() | other.outside.keys()})


def _hash(values: pd.Series) -> np.ndarray:
    """A 64-bit word for each value: a number's (or a time's) own 64 bits, any other value's hash by pandas (by its
    text); the row's hash mixes them (:func:`tally`)."""
    a = values.to_numpy()
    if isinstance(a, np.ndarray) and a.dtype.kind in "fiumMb":
        if a.dtype.itemsize == 8:
            return np.ascontiguousarray(a).view(np.uint64)
        return a.astype(np.float64 if a.dtype.kind == "f" else np.int64).view(np.uint64)
    return pd.util.hash_array(np.asarray(a, dtype=object))


def tally(part: pd.DataFrame, columns: list, start: int = 0, local: pd.DataFrame | None = None) -> Tally:
    """The :class:`Tally` of ``part``'s ``columns`` (as pyspark gives them), its first row at place ``start`` of
    its partition; ``local``: the same rows with text columns as categories, whose missing values that are not
    missing in ``part`` are values outside the levels."""
    n = len(part)
    key = tuple(sorted(str(c) for c in columns))
    row = np.zeros(n, dtype=np.uint64)
    sums = {}
    for c in key:
        h = _hash(part[c])
        sums[c] = int(h.sum(dtype=np.uint64))
        row ^= h
        row *= _MIX
        row ^= row >> np.uint64(29)
    places = (2 * np.arange(start, start + n, dtype=np.uint64) + np.uint64(1))
    out = Tally(n, sums, {key: int(row.sum(dtype=np.uint64))}, {key: int((row * places).sum(dtype=np.uint64))})
    if local is not None:
        for c in local.columns:
            if isinstance(local[c].dtype, pd.CategoricalDtype) and c in part:
                k = int((local[c].isna().to_numpy() & part[c].notna().to_numpy()).sum())
                if k:
                    out.outside[c] = k
    return out


def tallies_by_partition(frame: pd.DataFrame, columns: list, part_column: str,
                         local: pd.DataFrame | None = None) -> dict:
    """``{partition: Tally}`` of the rows of ``frame`` (as ``toPandas()`` gives them: each partition's rows
    together, in order), whose partition is ``frame[part_column]``."""
    parts = frame[part_column].to_numpy()
    order = np.argsort(parts, kind="stable")
    if np.any(order != np.arange(len(order))):  # not as toPandas() gives them: each partition's rows gathered
        frame, parts = frame.iloc[order], parts[order]
        local = None if local is None else local.iloc[order]
    ids, starts = np.unique(parts, return_index=True)
    ends = np.append(starts[1:], len(parts))
    return {int(p): tally(frame.iloc[a:b], columns, 0, None if local is None else local.iloc[a:b])
            for p, a, b in zip(ids, starts, ends)}


class RowCheck:
    """The reference tallies of a Spark X's rows (the first pass's) and the check of each later pass against them
    (see the module's docstring). ``n_rows``: the rows X counted first."""

    def __init__(self, n_rows: int):
        self.n_rows = int(n_rows)
        self.total: Tally | None = None
        #: ``{partition: Tally}`` of the first pass that knew each row's partition
        self.parts: dict | None = None

    def counts(self) -> np.ndarray | None:
        """Rows of each partition (as :func:`pdpx.rows.spark_rows.partition_counts`), when a pass has seen them."""
        if self.parts is None:
            return None
        counts = np.zeros(max(self.parts, default=-1) + 1, dtype=np.int64)
        for p, t in self.parts.items():
            counts[p] = t.n
        return counts

    def seen(self, parts: dict, *, by_position: bool = False) -> None:
        """Check a pass's ``{partition: Tally}`` (partition ``-1``: not known) against the reference, or make it
        the reference; ``by_position``: the pass reads rows by their positions, so each partition's count and order
        must be the reference's too."""
        total = Tally()
        for t in parts.values():
            total = total + Tally(t.n, t.columns, t.rows, {}, t.outside)
        if total.n != self.n_rows:
            raise changed(f"X counted {self.n_rows:,} rows, then {total.n:,}")
        if total.outside:
            shown = ", ".join(f"{c!r}" for c in sorted(total.outside))
            raise changed(f"text column(s) {shown} hold values that were not there when X's levels were counted")
        if self.total is None:
            self.total = total
        else:
            self._compare(self.total, total, "")
        if -1 in parts:
            return
        if self.parts is None:
            self.parts = dict(parts)
        elif by_position:
            self._compare_parts(parts)

    def _compare_parts(self, parts: dict) -> None:
        mine = {p for p, t in self.parts.items() if t.n}
        theirs = {p for p, t in parts.items() if t.n}
        counts = self.counts()
        if mine != theirs or any(self.parts[p].n != parts[p].n for p in mine):
            raise changed("its rows are not in the same partitions on each action: "
                          f"{counts.tolist()} rows a partition, then other counts")
        for p in mine:
            self._compare(self.parts[p], parts[p], f" of partition {p}")

    @staticmethod
    def _compare(ref: Tally, got: Tally, where: str) -> None:
        """Compare the sums both tallies hold, adding to ``ref`` those it lacks."""
        bad = sorted(c for c in got.columns.keys() & ref.columns.keys() if got.columns[c] != ref.columns[c])
        if bad:
            raise changed(f"the values of column(s) {', '.join(repr(c) for c in bad)}{where} changed")
        if any(got.rows[k] != ref.rows[k] for k in got.rows.keys() & ref.rows.keys()):
            raise changed(f"the rows{where} hold their values in other combinations")
        if any(got.ordered[k] != ref.ordered[k] for k in got.ordered.keys() & ref.ordered.keys()):
            raise changed(f"the rows{where} came in another order")
        for mine, theirs in ((ref.columns, got.columns), (ref.rows, got.rows), (ref.ordered, got.ordered)):
            for k, v in theirs.items():
                mine.setdefault(k, v)
