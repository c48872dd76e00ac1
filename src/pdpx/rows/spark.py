"""Data in a Spark DataFrame as ``X``: partial dependence with only sums crossing the cluster.

:class:`SparkData` answers the questions of :class:`pdpx.rows.local.LocalData` for a
``pyspark.sql.DataFrame`` (a classic session or Spark Connect: only the DataFrame API
is used, never an RDD or the ``SparkContext``):

* the number of rows and the levels of each text column come from one aggregation;
* a local head (the first 1,000 rows) is what validation and the trees' encoders see;
* grids read a feature's values over all rows, brought here (all the model's columns in
  one pass when they fit the memory budget, else one column at a time), so they follow
  the same rules as for a pandas frame;
* a method runs with ``mapInPandas``: each task unpickles the model once per Python
  worker (kept by its digest, so the tasks a worker runs next reuse it), walks its
  partition's Arrow batches (each at most ``spark.sql.execution.arrow.maxRecordsPerBatch``
  rows, so a task's memory is one batch plus the method's own budget) and returns one row:
  its pickled sums. Tree models gather pattern counts (only the counts travel); any other
  model returns its weighted sum of curves and its weight. The driver adds the rows: a
  pure aggregation of each partition's output, so a task Spark retries replaces its output
  and is never counted twice, and an empty partition returns nothing.

Text columns become pandas categories whose levels are the column's distinct values
over all rows (sorted), as ``astype("category")`` gives on a pandas frame; decimal columns
are read as doubles; a model column of another type than numbers, strings, booleans, dates
and timestamps (struct, array, map, binary, ...) is refused from the schema before any pass.
Weights are a column of ``X`` named by ``sample_weight="column"``; it travels with its rows.

Every pass that reads values also reads their tally, checked against the first pass's
(:mod:`pdpx.rows.spark_checks`): a DataFrame whose rows change between actions is refused,
naming ``cache()`` and ``checkpoint()``, rather than give numbers from different rows.

Rows have positions, the order ``X.toPandas()`` gives them (:mod:`pdpx.rows.spark_rows`): ICE
curves are those of the rows a pandas X would show, brought here by position (:meth:`SparkData.take`);
the bootstrap adds each partition's sums over the same seeded draws (:mod:`pdpx.rows.spark_boot`);
a column too large for the memory budget here gets its grid from Spark's aggregations
(:mod:`pdpx.rows.spark_grids`).
"""

from __future__ import annotations

import hashlib
import pickle
import re
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..core.adapter import Adapter
from ..core.config import format_bytes, get_config
from ..core.data import short_list
from ..core.errors import PdpxError
from ..core.grid import feature_grid
from ..core.method import MethodResult, Request
from .spark_boot import BandResult, interval_of, partition_replicates
from .spark_checks import RowCheck, Tally, check_types, is_text, quoted, readable, tallies_by_partition, tally
from .spark_grids import fits, spark_grid, stand_in
from .spark_rows import PART_COLUMN, partition_counts, quiet, take_rows, to_pandas
from .tasks import Rebuilt, adapter_of, ice_here, partition_sums

#: Rows of the local head (validation, encoders, the extrapolation check)
HEAD_ROWS = 1000

#: The models a Python worker has unpickled, by digest (one per model: later tasks on the worker reuse it)
_WORKER_MODELS: dict[str, Any] = {}

#: Spark's numeric types, by the start of their name: what a weights column may be
_NUMBERS = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal(")


def is_spark_frame(X) -> bool:
    """True for a ``pyspark.sql`` DataFrame (classic or Spark Connect), without importing pyspark."""
    return type(X).__module__.startswith("pyspark.sql") and type(X).__name__ == "DataFrame"


def localize(part: pd.DataFrame, columns: list[str], levels: dict) -> pd.DataFrame:
    """Rows of a Spark DataFrame as the model's columns, in its order: each text column a category with
    ``levels[name]`` (the column's values over all rows), as on a pandas frame."""
    part = part[columns] if list(part.columns) != list(columns) else part
    return as_categories(part, levels)


def as_categories(part: pd.DataFrame, levels: dict) -> pd.DataFrame:
    """``part`` with each text column named in ``levels`` a category of those levels."""
    if not any(c in part for c in levels):
        return part
    return part.assign(**{c: pd.Categorical(part[c], categories=levels[c]) for c in levels if c in part})


class SparkData:
    """Background rows in a ``pyspark.sql.DataFrame``: the interface of :class:`pdpx.rows.local.LocalData`,
    run with ``mapInPandas`` (see the module's docstring)."""

    #: the column of the table of needs (:data:`pdpx.core.rows.NEEDS`), and the source's name in notes
    place, label = "spark", "Spark"
    #: The rows are not held here (figures draw no background rows, the extrapolation check reads the head);
    #: ICE rows (``ice_sample``) are brought here by their positions (:meth:`take`).
    here = False

    def __init__(self, X, adapter: Adapter):
        from pyspark.sql import functions as F

        self.frame, self.model = X, adapter.model
        self.adapter = adapter  # what validated the rows: sessions sharing them (PDOptions.rows) reuse it
        #: what the tasks receive: the model, or the adapter's picklable stand-in for one whose objects cannot
        #: travel (``adapter.portable()``, e.g. a model that lives in the JVM)
        self.shipped = adapter.portable() if callable(getattr(adapter, "portable", None)) else adapter.model
        self.types = dict(X.dtypes)
        #: X's columns in the order the user gave them (integer positions refer to these)
        self.input_columns = [str(c) for c in X.columns]
        if len(set(self.input_columns)) != len(self.input_columns):
            raise PdpxError("X has repeated column names; give each column a distinct name")
        known = adapter.feature_names()
        self._named = known is not None
        keys = None if known is None else set(known)  # the names as the library stores them (Adapter.column_key)
        features = [c for c in self.input_columns if keys is None or c in keys or adapter.column_key(c) in keys]
        check_types(self.types, features)  # from the schema: before any pass over the rows
        #: X as pdpx reads it (every pass): decimal columns as doubles
        decimals = {c: F.col(quoted(c)).cast("double") for c in self.input_columns
                    if self.types[c].startswith("decimal(")}
        self.source = X.withColumns(decimals) if decimals else X
        text = [c for c in features if is_text(self.types[c])]
        got = self.source.agg(F.count(F.lit(1)).alias("n"),
                              *[F.collect_set(c).alias(f"l{i}") for i, c in enumerate(text)]).collect()[0]
        self.n_rows = int(got[0])
        if self.n_rows == 0:
            raise PdpxError("X has no rows; partial dependence averages over rows, so pass at least one")
        self.levels = {c: sorted(str(v) for v in got[i + 1]) for i, c in enumerate(text)}
        #: the tallies of the passes over the rows, each checked against the first (rows that change are refused)
        self.check = RowCheck(self.n_rows)
        # a column of a type pdpx does not read is not the model's (refused above): validation sees its name only
        head = [c if readable(self.types[c]) else F.lit(None).cast("string").alias(c) for c in self.input_columns]
        sample = as_categories(to_pandas(self.source.select(*head).limit(HEAD_ROWS)), self.levels)
        self.weight_column = None
        self._refused = None  # (the column not seen at fit time, the error): a weight column, or an error
        try:
            head = adapter.validate_columns(sample)
        except PdpxError as exc:
            extra = [c for c in self.input_columns if known is not None and c not in known]
            if len(extra) != 1:
                raise
            head = adapter.validate_columns(sample.drop(columns=extra))
            self._refused = (extra[0], exc)
        self.columns = list(head.columns)
        #: the columns of :attr:`head` (the model's order) as text
        self.names = [str(c) for c in self.columns]
        #: the local head in the model's order, text columns as categories: what validation and encoders see
        self.head = localize(head, self.names, self.levels)
        self.dtypes = self.head.dtypes.tolist()
        self._columns: dict = {}
        #: the memory budget on the driver (the call's): a column that does not fit it is not brought here
        self.budget = int(get_config()["memory_budget"])
        check_schema(adapter, self.head, self.types)

    def weights(self, sample_weight):
        """The weights of ``sample_weight="column"`` over all rows (the column travels with its rows)."""
        if self._refused is not None and sample_weight != self._refused[0]:
            raise self._refused[1]
        if sample_weight is None:
            return None
        if not isinstance(sample_weight, str):
            raise PdpxError("for a Spark DataFrame X, pass sample_weight as the name of X's column of weights "
                            "(e.g. sample_weight='w'): an array cannot be matched to a DataFrame's rows")
        if sample_weight not in self.input_columns:
            raise PdpxError(f"sample_weight={sample_weight!r} is not a column of X; X's columns: "
                            f"{short_list(self.input_columns)}")
        check_types(self.types, [sample_weight])
        if not self.types[sample_weight].startswith(_NUMBERS):
            raise PdpxError(f"sample_weight column {sample_weight!r} is {self.types[sample_weight]}; weights must be "
                            "numbers: cast it (F.col(...).cast('double'))")
        self.weight_column = sample_weight
        if sample_weight in self.names and not self._named:  # the model stores no names: the weights are no feature
            keep = [c for c in self.names if c != sample_weight]
            self.head, self.columns, self.names = self.head[keep], keep, keep
            self.dtypes = self.head.dtypes.tolist()
        return self.column_named(sample_weight).to_numpy(dtype=np.float64, na_value=np.nan)

    def shared_by(self, X, model) -> bool:
        """Whether a session of ``model`` on ``X`` may use these rows (the same DataFrame object and model)."""
        return model is self.model and X is self.frame

    def once(self, X, key: str, compute):
        """``compute()`` (what depends on the rows is computed where they are, each time)."""
        return compute()

    def column(self, j: int) -> pd.Series:
        """Column ``j`` over all rows (brought here once: grids, support and rugs read it)."""
        return self.column_named(self.names[j])

    def column_named(self, name: str) -> pd.Series:
        """The column ``name`` over all rows; the first call brings every model column (and the weights) in
        one pass when they fit the memory budget, else this column alone; a model column that does not fit alone
        (not the weights, not dates) is a stand-in here (:func:`pdpx.rows.spark_grids.stand_in`)."""
        if name not in self._columns:
            wanted = self.read_columns()
            if 8 * self.n_rows * len(wanted) > self.budget:
                wanted = [name]
            if (not fits(self.n_rows, self.budget) and name in self.names and name != self.weight_column
                    and self.types[name] not in ("date", "timestamp", "timestamp_ntz")):
                self._columns[name] = stand_in(self.source, name, self.head[name], self.levels.get(name), self.n_rows)
                return self._columns[name]
            from pyspark.sql import functions as F

            rows = to_pandas(self.source.select(*wanted, F.spark_partition_id().alias(PART_COLUMN)))
            local = localize(rows, wanted, {c: v for c, v in self.levels.items() if c in wanted})
            self.check.seen(tallies_by_partition(rows, wanted, PART_COLUMN, local))
            self._columns.update({c: local[c] for c in wanted})
        return self._columns[name]

    def partition_counts(self) -> np.ndarray:
        """Rows of each partition of X, in partition order (:func:`pdpx.rows.spark_rows.partition_counts`): those
        the first pass that knew each row's partition counted, or counted now (once); refused when they differ from
        the rows X counted first (rows that change between actions: :class:`pdpx.rows.spark_checks.RowCheck`)."""
        if self.check.counts() is None:
            counts = partition_counts(self.source)
            self.check.seen({p: Tally(int(k)) for p, k in enumerate(counts)}, by_position=True)
        return self.check.counts()

    def read_columns(self) -> list:
        """The columns each pass over the rows reads: the model's and the weights'."""
        wcol = self.weight_column
        return self.names + ([wcol] if wcol is not None and wcol not in self.names else [])

    def bootstrap(self, method, adapter: Adapter, req: Request, *, model: Any, ice_rows, options) -> BandResult:
        """``interval=`` as a level (the bootstrap) with its band computed where the rows are
        (:mod:`pdpx.rows.spark_boot`: the replicates of the same call on ``X.toPandas()``): the average and ICE as
        :meth:`run` gives them for ``options.kind``, and ``band``."""
        from pyspark import cloudpickle
        from pyspark.sql import functions as F

        counts = self.partition_counts()
        need = 8 * (self.n_rows + int(counts.max()) * len(req.outputs) * req.n_grid)
        if need > req.memory_budget:
            raise PdpxError(f"interval (the bootstrap) on a Spark X: a task holds its partition's ICE curves and "
                            f"draws {self.n_rows:,} row positions at a time ({format_bytes(need)}), over the memory "
                            "budget. Repartition X into more partitions, raise memory_budget, or pass a pandas sample "
                            "(X.sample(fraction=...).toPandas())")
        out = self.run(method, adapter, replace(req, kind=options.kind), model=model, ice_rows=ice_rows)
        starts = np.concatenate([[0], np.cumsum(counts)])
        seed = options.random_state if options.random_state is not None else np.random.SeedSequence().entropy
        payload = cloudpickle.dumps(self.shipped if model is self.model else model, protocol=pickle.HIGHEST_PROTOCOL)
        request = replace(req, X=self.head.iloc[:0], sample_weight=None, progress=False,
                          n_jobs=1 if req.n_jobs is None else req.n_jobs)
        names, levels, wcol, n, n_boot = self.names, self.levels, self.weight_column, self.n_rows, options.n_boot
        name = method.name  # the tasks receive the method's name, not its plan (which holds this session)

        wanted = self.read_columns()

        def run(batches):
            yield from partition_replicates(batches, payload, request, name, wanted,
                                            lambda b: localize(b, names, levels), wcol, starts, n, n_boot, seed,
                                            PART_COLUMN)

        with quiet():
            got = self.source.select(*wanted, F.spark_partition_id().alias(PART_COLUMN)).mapInPandas(
                run, "sums binary").collect()
        sums = self._checked([pickle.loads(r[0]) for r in got], by_position=True)
        band = interval_of(sum(s[0] for s in sums), sum(s[1] for s in sums), (len(req.outputs), *req.grid_shape),
                           options.interval, options.centered)
        note = (f"bootstrap interval: {n_boot} replicates of the {n:,} rows, each partition's sums added (the "
                "replicates of the same call on X.toPandas())")
        return BandResult(average=out.average, individual=out.individual, notes=list(out.notes) + [note], band=band)

    def take(self, positions) -> tuple[pd.DataFrame, np.ndarray | None]:
        """The rows at ``positions`` (numbered as ``X.toPandas()`` orders them: :mod:`pdpx.rows.spark_rows`) as a
        pandas frame of the model's columns in its order, text columns categories as for all rows, and their
        weights (None without ``sample_weight``). One small pass counts each partition's rows (once per
        ``SparkData``), one ``mapInPandas`` pass brings the rows asked for. Assumes the DataFrame gives its rows
        in the same order on each action (cache or checkpoint a nondeterministic one)."""
        wcol = self.weight_column
        got = take_rows(self.source, self.read_columns(), positions, self.partition_counts(), self.check)
        w = None if wcol is None else got[wcol].to_numpy(dtype=np.float64, na_value=np.nan)
        return localize(got, self.names, self.levels), w

    def feature_grid(self, column: pd.Series, *, categorical: bool, grid_resolution: int, percentiles, custom=None,
                     notes: list | None = None) -> np.ndarray:
        """:func:`pdpx.core.grid.feature_grid`; for the stand-in of a column too large to bring here, the grid from
        Spark's aggregations by the same rules (:func:`pdpx.rows.spark_grids.spark_grid`)."""
        if custom is None and "stand_in" in column.attrs:
            return spark_grid(self.source, column, categorical=categorical, grid_resolution=grid_resolution,
                              percentiles=percentiles, n_rows=self.n_rows, notes=[] if notes is None else notes)
        return feature_grid(column, categorical=categorical, grid_resolution=grid_resolution,
                            percentiles=percentiles, custom=custom, notes=notes)

    def run(self, method, adapter: Adapter, req: Request, *, model: Any, ice_rows=None) -> MethodResult:
        """``method``'s result (a :class:`~pdpx.core.method.Batch`) over all rows as a whole
        (:meth:`~pdpx.core.method.Batch.compute` of the request with ``rows`` these: pattern counts), or the
        method on every partition, the partitions' weighted sums added. ICE (``kind='individual'``/``'both'``):
        the average so, and the curves of the rows at ``ice_rows`` (every row when None) brought here
        (:meth:`take`) and computed here."""
        if req.needs_individual:
            return self._with_ice(method, adapter, req, model, ice_rows)
        view = getattr(adapter, "rebuilt", None) if adapter.model is not self.model else None
        out = method.compute(adapter, replace(req, rows=self)) if view is None else None
        if out is not None:
            return out
        if view is None and method.name == "brute" and callable(getattr(adapter, "average_in_spark", None)):
            out = adapter.average_in_spark(self.source, req, self.weight_column)  # a model that predicts in Spark
            if out is not None:
                return out
        request = replace(req, X=self.head.iloc[:0], sample_weight=None, progress=False,
                          n_jobs=1 if req.n_jobs is None else req.n_jobs)
        shipped = model if view is None else Rebuilt(self.shipped, *view())
        rows = self.map_reduce(_curves_task, (request, method.name), model=shipped)
        total_w = sum(r[1] for r in rows)
        if total_w <= 0:
            raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
        total = sum(r[0] for r in rows if r[1] > 0) / total_w
        return MethodResult(average=total, notes=[f"computed over {len(rows)} Spark partitions"])

    def _with_ice(self, method, adapter: Adapter, req: Request, model: Any, ice_rows) -> MethodResult:
        """The average over every row (:meth:`run`) and the ICE curves of the rows at ``ice_rows`` (all when None),
        computed here on those rows (:meth:`take`): what ``LocalData.run`` gives for the same rows as pandas."""
        everyone = ice_rows is None
        rows = np.arange(self.n_rows) if everyone else np.asarray(ice_rows)
        need = 8 * len(rows) * (len(self.names) + 1)
        if everyone and need > req.memory_budget:
            raise PdpxError(f"ICE curves of every row of a Spark X bring its {self.n_rows:,} rows here "
                            f"({format_bytes(need)} with their curves over the memory budget's "
                            f"{format_bytes(req.memory_budget)} left). Pass ice_sample= (e.g. ice_sample=1000: "
                            "the average still uses every row), kind='average', or raise memory_budget")
        full = self.run(method, adapter, replace(req, kind="average"), model=model)
        return ice_here(self, method, adapter, req, full, rows)

    def gather_counts(self, model, response: str, order: int, memory_budget: int, *, task, sample_weight=None,
                      progress: bool | None = None):
        """Pattern counts of every row, gathered partition by partition (see the module's docstring); the
        signature of :meth:`pdpx.rows.dask.DaskData.gather_counts`. ``sample_weight`` is not read: the
        weights travel with their rows as :attr:`weight_column`."""
        rows = self.map_reduce(_counts_task, (task, response, int(order), int(memory_budget)), model=model)
        total = rows[0]
        for r in rows[1:]:
            total = total + r
        return total

    def map_reduce(self, task, args: tuple, weights=None, *, model=None, progress: bool | None = False) -> list:
        """``task(model, part, weights, *args)`` over the Arrow batches of every partition, summed within
        the partition (:func:`partition_run`): the partitions' sums (one per partition that has rows). ``weights``
        is not read (the weights travel with their rows as :attr:`weight_column`); ``model``: these rows' model
        unless another (a view of it) is given."""
        from pyspark import cloudpickle  # functions of a notebook or script travel by value

        model = self.model if model is None else model
        payload = cloudpickle.dumps(self.shipped if model is self.model else model, protocol=pickle.HIGHEST_PROTOCOL)
        digest = hashlib.sha256(payload).hexdigest()
        names, levels, wcol = self.names, self.levels, self.weight_column

        def run(batches):
            yield from partition_run(batches, payload, digest, task, args, names, levels, wcol)

        with quiet():
            got = self.source.select(*self.read_columns()).mapInPandas(run, "sums binary").collect()
        return self._checked([pickle.loads(r[0]) for r in got])

    def _checked(self, outputs: list, by_position: bool = False) -> list:
        """The sums of the tasks' ``outputs`` (each ``(partition, Tally, sums)``), once their tallies are checked
        against the rows' first pass (:class:`pdpx.rows.spark_checks.RowCheck`)."""
        parts: dict = {}
        for p, t, _ in outputs:
            parts[p] = parts[p] + t if p in parts else t
        self.check.seen(parts, by_position=by_position)
        return [o[2] for o in outputs]


def partition_run(batches, payload: bytes, digest: str, task, args: tuple, names, levels, wcol):
    """What one Spark task runs: ``task`` on each non-empty batch of its partition, the results added; one
    output row (the pickled sum), or none for an empty partition. The model is unpickled once per worker."""
    from pyspark import TaskContext

    model = _WORKER_MODELS.get(digest)
    if model is None:
        model = _WORKER_MODELS[digest] = pickle.loads(payload)
    columns = names + ([wcol] if wcol is not None and wcol not in names else [])
    total, read = None, Tally()
    for batch in batches:
        if len(batch) == 0:
            continue
        w = None if wcol is None else batch[wcol].to_numpy(dtype=np.float64, na_value=np.nan)
        local = localize(batch, names, levels)
        read = read + tally(batch, columns, read.n, local)
        got = task(model, local, w, *args)
        total = got if total is None else total + got
    if total is not None:
        context = TaskContext.get()
        part = -1 if context is None else context.partitionId()
        yield pd.DataFrame({"sums": [pickle.dumps((part, read, total), protocol=pickle.HIGHEST_PROTOCOL)]})


class _Sums(tuple):
    """(weighted sum of curves, weight): added element by element."""

    def __add__(self, other):
        return _Sums((self[0] + other[0], self[1] + other[1]))


def _curves_task(model, part, weights, request: Request, method_name: str):
    average, W = partition_sums(adapter_of(model), part, weights, request, method_name)[:2]
    return _Sums((average * W, W))


def _counts_task(model, part, weights, task, response, order, memory_budget):
    return task(model, part, weights, response, list(part.columns), order, memory_budget, 1)


def check_schema(adapter: Adapter, head: pd.DataFrame, types: dict) -> None:
    """Refuse, naming the column, a DataFrame whose columns' types the model was not fitted on: a text column
    (a category here) that the model's trees split as a number, or a number they split as a category; for any
    model, the model predicting a few rows of the head as Spark types them."""
    response = (adapter.responses() or [None])[0]
    if response is None:
        return
    bad = []
    try:
        adapter.predict(head.iloc[:5], response)
        tm = adapter.tree_model(response)
    except Exception as exc:  # noqa: BLE001 - the model's own refusal, reported with the columns' types
        text = str(exc)
        said = f" The model said: {type(exc).__name__}: {text[:300]}"
        bad = [c for c in head.columns if re.search(r"(?<![\w])" + re.escape(str(c)) + r"(?![\w])", text)]
        bad = bad or [c for c in head.columns if is_text(types.get(c, ""))]
        if not bad:  # nothing points at the columns' types: the model's own error, as it is
            raise
    else:
        said = ""
        if tm is not None and tm.ensemble.n_features == head.shape[1]:
            e = tm.ensemble
            split = ~e.is_leaf
            for j, c in enumerate(head.columns):
                used = split & (e.feature == j)
                if used.any():
                    as_category = e.cat_offset[used] >= 0
                    text = isinstance(head[c].dtype, pd.CategoricalDtype) and c in types
                    if (text and not as_category.any()) or (not text and as_category.all()):
                        bad.append(c)
    if bad:
        shown = ", ".join(f"{c!r} ({types.get(c)})" for c in bad)
        raise PdpxError(f"X's Spark schema gives column(s) {shown} a type the model was not fitted on (a text column "
                        f"becomes a category; numbers stay numbers). Cast each to its type in the model's training "
                        f"frame, e.g. X.withColumn(name, F.col(name).cast('double')) for a number.{said}")
