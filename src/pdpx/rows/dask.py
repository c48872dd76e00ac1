"""Data beyond one machine: Dask DataFrames and arrays as ``X`` (a :class:`pdpx.core.rows.Rows`).

The method runs once per partition (on the workers of the active
``dask.distributed`` client, or partition by partition in this process when there
is none) and the partial results combine exactly: each partition returns its
weighted sum of curves and its total weight, and the average is the sum of sums over
the sum of weights. The model is scattered to every worker once
(``broadcast=True``), not shipped with each task; tree extraction then happens once
per worker, cached with the model there.

Every pass over the partitions is :meth:`DaskData.map_reduce` (a task on each partition, its
result brought here): the method's sums, pattern counts, heterogeneity's moments and H's sums.
Rows have positions, the order ``X.compute()`` gives them (partition after partition):
:meth:`DaskData.take` computes only the partitions that hold the rows asked for (ICE curves of
``ice_sample`` rows, H's sample).

Grids need the target features' values over all rows: only those columns are
computed and brought back (a million rows of one column is 8 MB).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..core.adapter import Adapter
from ..core.data import as_frame
from ..core.errors import PdpxError
from ..core.grid import feature_grid
from ..core.method import MethodResult, Request
from .tasks import Rebuilt, adapter_of, ice_here, partition_sums


def is_dask_collection(X) -> bool:
    """True for Dask DataFrames and arrays, without importing dask."""
    from_dask = any(getattr(k, "__module__", "").startswith("dask.") for k in type(X).__mro__)
    return from_dask and (hasattr(X, "npartitions") or hasattr(X, "chunks"))


class DaskData:
    """Background rows in a Dask DataFrame (arrays are converted): the :class:`pdpx.core.rows.Rows` interface,
    run partition by partition."""

    #: the column of the table of needs (:data:`pdpx.core.rows.NEEDS`), and the source's name in notes
    place, label = "dask", "Dask"
    #: the rows are in the Dask collection's partitions
    here = False

    def __init__(self, X, adapter: Adapter):
        import dask.array as da
        import dask.dataframe as dd

        self.given, self.model = X, adapter.model
        self.adapter = adapter  # what validated the rows: sessions sharing them (PDOptions.rows) reuse it
        feature_names = adapter.feature_names()
        if isinstance(X, da.Array):
            if X.ndim != 2:
                raise PdpxError(f"X must be 2-D (rows x features), got a dask array of shape {X.shape}")
            names = feature_names if feature_names and len(feature_names) == X.shape[1] else [
                f"x{i}" for i in range(X.shape[1])]
            X = X.rechunk({1: X.shape[1]})
            X = dd.from_dask_array(X, columns=list(names))
        self.frame = X
        self._columns: dict = {}
        self._weights = None  # the weights :meth:`weights` returned: they go with the rows :meth:`take` brings
        self.sizes = np.asarray(X.map_partitions(len).compute(), dtype=np.int64)
        self.n_rows = int(self.sizes.sum())
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)])
        if self.n_rows == 0:
            raise PdpxError("X has no rows; partial dependence averages over rows, so pass at least one")
        sample = as_frame(X.head(min(1000, int(self.sizes[0])) or 1, npartitions=-1), adapter)
        #: X's columns in the order the user gave them (integer positions refer to these)
        self.input_columns = [str(c) for c in sample.columns]
        #: a local sample of the rows, columns in the model's order: what validation and encoders see
        self.head = adapter.validate_columns(sample)
        self.columns = list(self.head.columns)
        #: the columns of :attr:`head` (the model's order) as text, and their dtypes
        self.names = [str(c) for c in self.columns]
        self.dtypes = self.head.dtypes.tolist()

    def shared_by(self, X, model) -> bool:
        """Whether a session of ``model`` on ``X`` may use these rows (the same collection and model)."""
        return model is self.model and X is self.given

    def once(self, X, key: str, compute):
        """``compute()`` (what depends on the rows is computed where they are, each time)."""
        return compute()

    def column(self, j: int) -> pd.Series:
        """Column ``j`` over all rows (computed once: grids and plots' rugs both need it)."""
        name = self.columns[j]
        if name not in self._columns:
            self._columns[name] = self.frame[name].compute()
        return self._columns[name]

    def feature_grid(self, column: pd.Series, **grid_options) -> np.ndarray:
        """:func:`pdpx.core.grid.feature_grid` (the column is here)."""
        return feature_grid(column, **grid_options)

    def partition(self, i: int) -> pd.DataFrame:
        """Partition ``i``, computed."""
        return self.frame.get_partition(i).compute()

    def weights(self, sample_weight):
        """``sample_weight`` computed when it is a Dask collection."""
        if sample_weight is not None and hasattr(sample_weight, "compute"):
            sample_weight = sample_weight.compute()
        self._weights = sample_weight
        return sample_weight

    def take(self, positions) -> tuple[pd.DataFrame, np.ndarray | None]:
        """The rows at ``positions`` (numbered as ``X.compute()`` orders them: partition after partition; in that
        order, repeats allowed) as a pandas frame of the model's columns, and their weights (None without
        ``sample_weight``). Only the partitions that hold them are computed."""
        import dask

        positions = np.asarray(positions, dtype=np.int64).reshape(-1)
        if positions.size and (positions.min() < 0 or positions.max() >= self.n_rows):
            raise PdpxError(f"row positions must be between 0 and {self.n_rows - 1} (X has {self.n_rows:,} rows)")
        part_of = np.searchsorted(self.offsets, positions, side="right") - 1
        parts = [int(p) for p in np.unique(part_of)]
        got = dask.compute(*[self.frame.get_partition(p) for p in parts])
        frames = []
        for p, part in zip(parts, got):
            frames.append(part[self.columns].iloc[positions[part_of == p] - self.offsets[p]])
        rows = pd.concat(frames, ignore_index=True) if frames else self.head.iloc[:0]
        order = np.argsort(np.argsort(part_of, kind="stable"), kind="stable")  # back to the order asked for
        rows = rows.iloc[order].reset_index(drop=True)
        w = None if self._weights is None else np.asarray(self._weights, dtype=np.float64)[positions]
        return rows, w

    def map_reduce(self, task, args: tuple, weights=None, *, model=None, progress: bool | None = False) -> list:
        """``task(model, part, part_weights, *args)`` on every partition with rows (its columns the model's, in its
        order), on the workers of the active ``dask.distributed`` client (the model scattered to them once) or
        here partition by partition: the partitions' results, in partition order. ``weights``: one per row of X,
        here; ``model``: these rows' model unless another (a view of it) is given."""
        model = self.model if model is None else model
        if weights is not None:
            weights = np.asarray(weights, dtype=np.float64).reshape(-1)
            if len(weights) != self.n_rows:
                raise PdpxError(f"sample_weight has {len(weights)} entries but X has {self.n_rows} rows; pass one "
                                "weight per row")
        keep = [i for i in range(len(self.sizes)) if self.sizes[i] > 0]
        parts_w = [None if weights is None else weights[self.offsets[i]: self.offsets[i + 1]] for i in keep]
        client = _active_client()
        if client is None:
            from ..core.progress import progress_bar

            results = []
            with progress_bar(len(keep), progress=progress, desc="pdpx partitions") as bar:
                for i, w in zip(keep, parts_w):  # here, every core for each partition in turn
                    results.append(in_order(model, self.partition(i), w, task, self.columns, args))
                    bar.update(1)
            return results
        model_future = client.scatter(model, broadcast=True, hash=False)
        parts = self.frame.to_delayed()
        part_futures = client.compute([parts[i] for i in keep])
        futures = [client.submit(in_order, model_future, pf, w, task, self.columns, args, pure=False)
                   for pf, w in zip(part_futures, parts_w)]
        try:
            if progress:
                from distributed import progress as dask_progress

                dask_progress(futures)
            return client.gather(futures)
        except KeyboardInterrupt:
            client.cancel(futures + list(part_futures) + [model_future])
            raise
        finally:
            client.cancel(list(part_futures))

    def run(self, method, adapter: Adapter, req: Request, *, model: Any, ice_rows=None) -> MethodResult:
        """``method``'s result (a :class:`~pdpx.core.method.Batch`, a method's plan) over all rows as a whole
        (:meth:`~pdpx.core.method.Batch.compute` of the request with ``rows`` these), or the method over every
        partition, combined exactly; with ``ice_rows``, the ICE curves of those rows, brought here (:meth:`take`)
        and computed here."""
        if ice_rows is not None and req.needs_individual:
            full = self.run(method, adapter, replace(req, kind="average"), model=model)
            return ice_here(self, method, adapter, req, full, ice_rows)
        view = getattr(adapter, "rebuilt", None) if adapter.model is not self.model else None  # a view of the model
        out = method.compute(adapter, replace(req, rows=self)) if view is None else None
        if out is not None:
            return out
        request = replace(req, X=self.head, n_jobs=1 if req.n_jobs is None else req.n_jobs, progress=False)
        shipped = model if view is None else Rebuilt(model, *view())  # the view, made again on the workers
        results = self.map_reduce(partition_task, (request, method.name), req.sample_weight, model=shipped,
                                  progress=req.progress)
        total_w = sum(r[1] for r in results)
        if total_w <= 0:
            raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
        # the partitions' averages, each by its share of the weight: within the range of the predictions
        total = sum((r[1] / total_w) * r[0] for r in results if r[1] > 0)
        individual = None
        if request.needs_individual:
            individual = np.concatenate([r[2] for r in results], axis=1)
        return MethodResult(average=total, individual=individual,
                            notes=[f"computed over {len(self.sizes)} Dask partitions"])

    def bootstrap(self, method, adapter: Adapter, req: Request, *, model: Any, ice_rows, options):
        """Never reached (the table of needs refuses ``interval=`` on Dask): None."""
        return None

    def gather_counts(self, model, response: str, order: int, memory_budget: int, *, task, sample_weight=None,
                      progress: bool | None = None):
        """Pattern counts of every row, gathered partition by partition (:meth:`map_reduce`); only the counts
        travel.

        Each partition runs ``task(model, part, weights, response, columns, order, memory_budget, n_jobs)``
        (``pdpx.plugins.trees.counts.gather_task``: core names no plugin, so the caller passes it in): ``n_jobs``
        1 on a cluster's workers (the cluster's parallelism), None (every core) here; the partitions' counts are
        added in partition order. ``sample_weight``: one weight per row of X (or a Dask collection of them).

        Returns
        -------
        The sum of the partitions' counts (``PatternCounts`` or ``SumCounts``): the counts of all rows.
        """
        weights = self.weights(sample_weight)
        n_jobs = None if _active_client() is None else 1
        results = self.map_reduce(task, (response, self.columns, int(order), int(memory_budget), n_jobs), weights,
                                  model=model, progress=progress)
        total = results[0]
        for r in results[1:]:
            total = total + r
        return total


def _active_client():
    """The active ``dask.distributed`` client, or None."""
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


def in_order(model, part: pd.DataFrame, weights, task, columns, args: tuple):
    """What one Dask task runs: ``task(model, part, weights, *args)`` on the partition's columns in the model's
    order."""
    part = part[columns] if list(part.columns) != list(columns) else part
    return task(model, part, weights, *args)


def partition_task(model, part: pd.DataFrame, weights, request: Request, method_name: str):
    """Run one method on one partition (a Dask task; ``model`` the model or a :class:`~pdpx.rows.tasks.Rebuilt` view
    of it); returns (its average curves, its weight, ICE or None)."""
    return partition_sums(adapter_of(model), part, weights, request, method_name)
