"""Where the rows live: the sources of rows that implement :class:`pdpx.core.rows.Rows`.

* :mod:`.local`: a pandas DataFrame (an array, a table with named columns) held in this process;
* :mod:`.dask`: a Dask DataFrame or array, the method run partition by partition on the workers (or here);
* :mod:`.spark`: a ``pyspark.sql`` DataFrame, the method run with ``mapInPandas``, only sums crossing the
  cluster; its rows by position (:mod:`.spark_rows`), the checks of its types and of rows that change between
  actions (:mod:`.spark_checks`), the grids of columns too large to bring here (:mod:`.spark_grids`), the bootstrap
  from each partition's sums (:mod:`.spark_boot`);
* :mod:`.tasks`: what one partition's task runs, for Dask and Spark alike.

:func:`rows_for` picks the source for an ``X``; the core reaches it by name at run time
(:func:`pdpx.core.rows.rows_for`), as it reaches the built-in plugins, since the sources sit on the floor above
the core. What each source can do is the table of needs in :mod:`pdpx.core.rows`.
"""

from __future__ import annotations

from ..core.adapter import Adapter
from .dask import DaskData, is_dask_collection
from .local import LocalData
from .spark import SparkData, is_spark_frame

__all__ = ["place_of", "rows_for"]


def place_of(X) -> str:
    """Where ``X``'s rows live, as the table of needs names it (:data:`pdpx.core.rows.NEEDS`): ``"dask"``,
    ``"spark"`` or ``"local"``, from its type alone (no library imported, no row read)."""
    if is_dask_collection(X):
        return "dask"
    if is_spark_frame(X):
        return "spark"
    return "local"


def rows_for(X, adapter: Adapter):
    """The rows of ``X``: :class:`~pdpx.rows.local.LocalData`, :class:`~pdpx.rows.dask.DaskData` for a Dask
    collection, :class:`~pdpx.rows.spark.SparkData` for a Spark DataFrame (pyspark imported only for one)."""
    place = place_of(X)
    if place == "dask":
        return DaskData(X, adapter)
    if place == "spark":
        return SparkData(X, adapter)
    return LocalData(X, adapter)
