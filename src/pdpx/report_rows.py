"""The rows each part of :func:`pdpx.report` rests on, for a pandas frame or a Spark DataFrame.

On a Spark DataFrame the report computes what pdpx computes from all rows where they
live (the PD curves, their importance, Friedman's H: only sums cross the cluster), draws
the ICE curves of the rows a pandas frame would give (:meth:`~pdpx.rows.spark.SparkData.take`
brings them by position), and runs "Where the average misleads" (heterogeneity, regions:
every row's ICE curve of every feature; the explained-variance ledger) on the seeded sample
it would read of a pandas frame of the same rows, brought here. Each function below gives
a pandas frame exactly the rows the report read before, so both kinds of X give the same
page.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .core.plugins import adapt
from .rows.spark import SparkData
from .rows.spark_checks import changed

__all__ = ["ledger", "page_frame", "rows_note", "seeded_rows", "spark_rows"]


def spark_rows(model, X, options, seed: int, max_rows: int | None):
    """A Spark ``X`` as the report's rows: ``(X, None, options)``, or with ``max_rows`` below its row count the seeded
    sample of ``max_rows`` rows a pandas frame would give, brought here, with their weights: ``(rows, row count of X,
    options)``."""
    n = X.count()
    if max_rows is None or n <= max_rows:
        return X, None, options
    data = SparkData(X, adapt(model))
    if data.n_rows != n:  # rows that change between actions (pdpx.rows.spark_checks)
        raise changed(f"X counted {n:,} rows, then {data.n_rows:,}")
    data.weights(options.sample_weight)  # the weights' column travels with the rows taken
    take = np.sort(np.random.default_rng(seed).choice(n, int(max_rows), replace=False))
    rows, w = data.take(take)
    return rows, n, (options if w is None else options.but(sample_weight=w))


def seeded_rows(frame, session, seed: int, size: int, options: dict):
    """A seeded sample of at most ``size`` of the report's rows (every row when there are fewer), a pandas frame;
    from a Spark DataFrame, the same rows brought here. ``options["sample_weight"]`` becomes the sample's weights."""
    n = session.n_rows
    take = np.sort(np.random.default_rng(seed).choice(n, min(n, size), replace=False))
    if not session.data.here:
        rows, w = session.data.take(take)
    else:
        rows = frame.iloc[take] if len(take) < len(frame) else frame
        w = None if options.get("sample_weight") is None else np.asarray(options["sample_weight"])[take]
    if w is not None:
        options["sample_weight"] = w
    return rows


def ledger(measure, model, frame, session, features: list, seed: int, size: int, options: dict):
    """The report's explained-variance ledger (``measure``: :func:`pdpx.explained_variance`): on a seeded sample of
    ``size`` rows when there are more (``sample=size``); from a Spark DataFrame, the rows that sample draws (every
    row when fewer) brought here with their weights, so that the same call on them reads the same rows."""
    n = session.n_rows
    kw = dict(options, sample=size if n > size else None)
    if not session.data.here:
        take = np.sort(np.random.default_rng(seed).choice(n, size, replace=False)) if n > size else np.arange(n)
        frame, w = session.data.take(take)
        kw.update({} if w is None else {"sample_weight": w})
    return measure(model, frame, features, threeway=0, random_state=seed, **kw)


def page_frame(frame, session) -> pd.DataFrame:
    """The rows the page's summary describes: ``frame``, or a Spark DataFrame's model columns over all rows (each
    brought here once: the grids read them too)."""
    if session.data.here:
        return frame
    return pd.DataFrame({name: session.data.column(j).reset_index(drop=True) for j, name in enumerate(session.names)})


def rows_note(frame, session, n_ice: int, hstat, section_rows: int) -> str:
    """What the page says of a Spark DataFrame's rows (nothing for a pandas frame): ``hstat`` the report's H (None
    without pairs), ``section_rows`` the most rows "Where the average misleads" reads (0: no such section)."""
    if session.data.here:
        return ""
    n = session.n_rows
    parts = [f"the PD curves and their importance average all {n:,} rows where they live (only sums come here)"]
    if hstat is not None:
        parts.append(f"Friedman's H rests on {'all ' if hstat.n_rows == n else 'a seeded sample of '}"
                     f"{hstat.n_rows:,} rows" + ("" if hstat.n_rows == n else ", brought here"))
    parts.append(f"the ICE curves drawn are those of a seeded sample of {min(n_ice, n):,} rows, brought here")
    if section_rows:
        parts.append(f"'Where the average misleads' rests on a seeded sample of {min(section_rows, n):,} rows, "
                     "brought here")
    return "X is a Spark DataFrame: " + "; ".join(parts) + "."
