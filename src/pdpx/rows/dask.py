"""Data beyond one machine: Dask DataFrames and arrays as ``X``.

The method runs once per partition (on the workers of the active
``dask.distributed`` client, or partition by partition in this process when there
is none) and the partial results combine exactly: each partition returns its
weighted sum of curves and its total weight, and the average is the sum of sums over
the sum of weights. The model is scattered to every worker once
(``broadcast=True``), not shipped with each task; tree extraction then happens once
per worker, cached with the model there.

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
from ..core.method import MethodResult, Request
from .tasks import partition_sums


def is_dask_collection(X) -> bool:
    """True for Dask DataFrames and arrays, without importing dask."""
    from_dask = any(getattr(k, "__module__", "").startswith("dask.") for k in type(X).__mro__)
    return from_dask and (hasattr(X, "npartitions") or hasattr(X, "chunks"))


class DaskData:
    """Background rows in a Dask DataFrame (arrays are converted): the interface of
    :class:`pdpx.rows.local.LocalData`, run partition by partition."""

    #: the column of the table of needs (:data:`pdpx.core.rows.NEEDS`)
    source = "dask"
    #: the rows are in the Dask collection's partitions
    here = False
    #: ``ice_sample`` needs random access to rows: not offered for Dask input.
    supports_ice_sample = False

    def __init__(self, X, adapter: Adapter):
        import dask.array as da
        import dask.dataframe as dd

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

    def column(self, j: int) -> pd.Series:
        """Column ``j`` over all rows (computed once: grids and plots' rugs both need it)."""
        name = self.columns[j]
        if name not in self._columns:
            self._columns[name] = self.frame[name].compute()
        return self._columns[name]

    def partition(self, i: int) -> pd.DataFrame:
        """Partition ``i``, computed."""
        return self.frame.get_partition(i).compute()

    def weights(self, sample_weight):
        """``sample_weight`` computed when it is a Dask collection."""
        if sample_weight is not None and hasattr(sample_weight, "compute"):
            return sample_weight.compute()
        return sample_weight

    def run(self, method, adapter: Adapter, req: Request, *, model: Any, ice_rows=None) -> MethodResult:
        """``method``'s result (a :class:`~pdpx.core.method.Batch`, a method's plan) over all rows as a whole
        (:meth:`~pdpx.core.method.Batch.whole`), or the method over every partition, combined exactly (see
        :func:`run`)."""
        out = method.whole(adapter, req, self)
        if out is not None:
            return out
        return run(model, self, req, method, req.sample_weight, progress=req.progress, columns=self.columns)

    def gather_counts(self, model, response: str, order: int, memory_budget: int, *, task, sample_weight=None,
                      progress: bool | None = None):
        """Pattern counts of every row, gathered partition by partition; only the counts travel.

        Each partition runs ``task(model, part, weights, response, columns, order, memory_budget, n_jobs)``
        (``pdpx.plugins.trees.counts.gather_task``: core names no plugin, so the caller passes it in) on the
        workers of the active ``dask.distributed`` client, the model scattered to them once, or here
        partition by partition when there is none; the partitions' counts are added in partition order.

        Parameters
        ----------
        model : object
            The fitted model (what :func:`pdpx.core.plugins.adapt` takes).
        response : str
            The response whose trees are read (``adapter.tree_model(response)``).
        order : {1, 2}
            Count failing sets of at most this many features.
        memory_budget : int
            Bytes for one partition's counts and encoded rows (counts larger than it are refused).
        task : callable
            What a partition runs, as above.
        sample_weight : array-like or Dask collection or None
            One weight per row of X, in X's order.
        progress : bool or None
            Show a progress bar (None: pdpx's default).

        Returns
        -------
        The sum of the partitions' counts (``PatternCounts`` or ``SumCounts``): the counts of all rows.
        """
        weights = self.weights(sample_weight)
        if weights is not None:
            weights = np.asarray(weights, dtype=np.float64).reshape(-1)
            if len(weights) != self.n_rows:
                raise PdpxError(f"sample_weight has {len(weights)} entries but X has {self.n_rows} rows; pass one "
                                "weight per row")
        keep = [i for i in range(len(self.sizes)) if self.sizes[i] > 0]
        parts_w = [None if weights is None else weights[self.offsets[i]: self.offsets[i + 1]] for i in keep]
        args = (response, self.columns, int(order), int(memory_budget))
        client = _active_client()
        if client is None:
            from ..core.progress import progress_bar

            results = []
            with progress_bar(len(keep), progress=progress, desc="pdpx counts") as bar:
                for i, w in zip(keep, parts_w):  # here, every core for each partition in turn
                    results.append(task(model, self.partition(i), w, *args, None))
                    bar.update(1)
        else:
            model_future = client.scatter(model, broadcast=True, hash=False)
            parts = self.frame.to_delayed()
            part_futures = client.compute([parts[i] for i in keep])
            futures = [client.submit(task, model_future, pf, w, *args, 1, pure=False)  # the cluster's parallelism
                       for pf, w in zip(part_futures, parts_w)]
            try:
                if progress:
                    from distributed import progress as dask_progress

                    dask_progress(futures)
                results = client.gather(futures)
            except KeyboardInterrupt:
                client.cancel(futures + list(part_futures) + [model_future])
                raise
            finally:
                client.cancel(list(part_futures))
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


def partition_task(model, part: pd.DataFrame, weights, request: Request, method_name: str, columns):
    """Run one method on one partition (a Dask task); returns (its average curves, its weight, ICE or None)."""
    from ..core.plugins import adapt

    part = part[columns] if list(part.columns) != list(columns) else part
    return partition_sums(adapt(model), part, weights, request, method_name)


def run(model, data: DaskData, request: Request, method, weights: np.ndarray | None, *,
        progress: bool | None, columns) -> MethodResult:
    """The method over every partition, combined exactly."""
    parts_w = None
    if weights is not None:
        parts_w = [weights[data.offsets[i]: data.offsets[i + 1]] for i in range(len(data.sizes))]
    # tasks use one thread each: the cluster provides the parallelism
    request = replace(request, X=data.head, n_jobs=1 if request.n_jobs is None else request.n_jobs,
                      progress=False)
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        client = None
    if client is None:
        results = _run_local(model, data, request, method.name, parts_w, progress, columns)
    else:
        results = _run_cluster(client, model, data, request, method.name, parts_w, progress, columns)
    total_w = sum(r[1] for r in results)
    if total_w <= 0:
        raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
    # the partitions' averages, each by its share of the weight: within the range of the predictions
    total = sum((r[1] / total_w) * r[0] for r in results if r[1] > 0)
    individual = None
    if request.needs_individual:
        individual = np.concatenate([r[2] for r in results], axis=1)
    return MethodResult(average=total, individual=individual,
                        notes=[f"computed over {len(data.sizes)} Dask partitions"])


def _run_local(model, data, request, method_name, parts_w, progress, columns):
    from ..core.progress import progress_bar

    out = []
    with progress_bar(len(data.sizes), progress=progress, desc="pdpx partitions") as bar:
        for i in range(len(data.sizes)):
            w = None if parts_w is None else parts_w[i]
            if data.sizes[i] == 0:
                continue
            out.append(partition_task(model, data.partition(i), w, request, method_name, columns))
            bar.update(1)
    return out


def _run_cluster(client, model, data, request, method_name, parts_w, progress, columns):
    model_future = client.scatter(model, broadcast=True, hash=False)
    parts = data.frame.to_delayed()
    part_futures = client.compute(parts)
    futures = []
    for i, pf in enumerate(part_futures):
        if data.sizes[i] == 0:
            continue
        w = None if parts_w is None else parts_w[i]
        futures.append(client.submit(partition_task, model_future, pf, w, request, method_name, columns,
                                     pure=False))
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
