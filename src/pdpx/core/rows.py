"""Where the rows live, as one interface: :class:`Rows`, and :data:`NEEDS`, what each source can do.

A source of rows (:mod:`pdpx.rows`: a pandas frame here, a Dask collection, a Spark DataFrame)
answers the same questions: how many rows, their columns' names and dtypes, a local head that
validation and the trees' encoders see, one column over all rows, the weights, the rows at some
positions (:meth:`Rows.take`), a task's sums over every partition (:meth:`Rows.map_reduce`) and a
method's run over every row (:meth:`Rows.run`). Code outside the sources never asks which kind it
holds: it reads :attr:`Rows.here` (every row is a pandas frame in this process) or calls
:func:`require`, which refuses what a source cannot do with the message of :data:`NEEDS`, the one
table of capabilities by source (``docs/large-data.md`` prints it: :func:`capability_table`).

The sources sit on the floor above the core; :func:`rows_for` reaches them by module name at run
time, as :mod:`.plugins` reaches the built-in plugins.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from .errors import PdpxError

#: The module that builds a source of rows for an ``X`` (``rows_for(X, adapter)``), imported by name
SOURCES = "pdpx.rows"

#: The sources, as :attr:`Rows.source` names them, and as the messages and the table name them
SOURCE_NAMES = {"local": "pandas", "dask": "Dask", "spark": "Spark"}

#: What to pass instead, by source, when it cannot do what was asked
INSTEAD = {
    "dask": "pass a pandas sample of it (X.sample(frac=...).compute())",
    "spark": "pass a pandas sample of it (X.sample(fraction=...).toPandas())",
}


@runtime_checkable
class Rows(Protocol):
    """Background rows, wherever they live (the sources of :mod:`pdpx.rows` implement it).

    Attributes
    ----------
    place : {"local", "dask", "spark"}
        Which source (the column of :data:`NEEDS`): read by :func:`require` only.
    label : str
        The source's name in notes ("pandas", "Dask", "Spark").
    model : object
        The model the rows were validated for (what :meth:`map_reduce`'s tasks receive by default).
    adapter : Adapter
        The adapter that validated them (sessions that share the rows, ``PDOptions.rows``, reuse it).
    here : bool
        Every row is in this process as a pandas frame (``head`` is all of them).
    n_rows : int
    names : list of str
        The model's columns, in its order.
    dtypes : list
        Their dtypes (of :attr:`head`).
    input_columns : list of str
        X's columns in the order the user gave them (integer positions refer to these).
    head : DataFrame
        What validation and encoders see: every row when :attr:`here`, else the first rows.
    """

    place: str
    label: str
    model: Any
    adapter: Any
    here: bool
    n_rows: int
    names: list
    dtypes: list
    input_columns: list
    head: pd.DataFrame

    def column(self, j: int) -> pd.Series:
        """Column ``j`` (of :attr:`names`) over all rows, brought here once."""

    def weights(self, sample_weight) -> np.ndarray | None:
        """``sample_weight`` as one weight per row, here (a Spark X: the named column's values)."""

    def feature_grid(self, column: pd.Series, **grid_options) -> np.ndarray:
        """:func:`pdpx.core.grid.feature_grid` of ``column`` (a source may build it where the rows are)."""

    def take(self, positions) -> tuple[pd.DataFrame, np.ndarray | None]:
        """The rows at ``positions`` (numbered as ``X`` as a pandas frame numbers them) as a pandas frame of the
        model's columns, and their weights (None without weights)."""

    def map_reduce(self, task, args: tuple, weights=None, *, model=None, progress: bool | None = False) -> list:
        """``task(model, part, part_weights, *args)`` on every part of the rows (a partition; the whole frame here),
        each where its rows are, ``part`` a pandas frame of the model's columns in its order: the parts' results
        (those of parts with rows), for the caller to add. ``weights``: one per row, here (a Spark X's travel with
        its rows); ``model``: :attr:`model` unless another (a view of it) is given."""

    def run(self, method, adapter, req, *, model: Any, ice_rows) -> Any:
        """``method`` (a method's plan, :class:`~pdpx.core.method.Batch`) over every row; with ``ice_rows``, ICE
        curves for those rows only."""

    def bootstrap(self, method, adapter, req, *, model: Any, ice_rows, options) -> Any:
        """``interval=`` computed where the rows are (a result with ``band``), or None: then from every row's ICE
        curve here."""

    def shared_by(self, X, model) -> bool:
        """Whether a session of ``model`` on ``X`` may use these rows."""

    def once(self, X, key: str, compute):
        """``compute()``, kept for the sessions that share these rows where the source can."""


@dataclass(frozen=True)
class Need:
    """One capability: what it is (as messages say it) and, by source, why that source cannot (absent: it can)."""

    what: str
    refused: dict = field(default_factory=dict)
    #: which public functions or options it is
    where: str = ""


_HERE = "it reads every row's {} in this process"

#: The table of needs: capability -> what it is and, by source, why a source cannot do it
NEEDS: dict[str, Need] = {
    "average": Need("the average (PD)", where="partial_dependence, partial_dependence_many, importance"),
    "ice": Need("ICE curves (kind='individual' or 'both')", where="kind="),
    "ice_sample": Need("ICE curves of a sample of the rows", where="ice_sample="),
    "interval": Need("the bootstrap interval", where="interval=0.9", refused={
        "dask": "the draws are summed partition by partition on Spark only"}),
    "members": Need("the band of the model's members", where="interval='members'"),
    "by": Need("by= groups", where="by=", refused={
        "dask": _HERE.format("group"), "spark": _HERE.format("group")}),
    "heterogeneity": Need("heterogeneity", where="heterogeneity"),
    "h_statistic": Need("Friedman's H", where="h_statistic"),
    "regions": Need("regions", where="regions", refused={
        "dask": "it keeps every row's centered ICE curve in this process",
        "spark": "it keeps every row's centered ICE curve in this process"}),
    "explained_variance": Need("the share of the predictions the curves explain", where="explained_variance",
                               refused={
        "dask": _HERE.format("curves and regions"), "spark": _HERE.format("curves and regions")}),
    "ale": Need("ALE", where="ale", refused={
        "dask": "it bins the rows by their values in this process",
        "spark": "it bins the rows by their values in this process"}),
    "derivative": Need("derivative ICE", where="derivative_ice"),
    "compare": Need("exact and recursion compared", where="compare_methods"),
    "report": Need("the report", where="report", refused={
        "dask": "it reads a pandas frame, or a Spark DataFrame where its rows are"}),
}


def message(need: str, source: str, call: str) -> str | None:
    """The refusal of ``need`` on ``source`` for ``call`` (a public function's name), or None where it works."""
    entry = NEEDS[need]
    why = entry.refused.get(source)
    if why is None:
        return None
    return f"{call}(): {entry.what} is not supported for a {SOURCE_NAMES[source]} X ({why}); {INSTEAD[source]}"


def require(rows, need: str, call: str) -> None:
    """Refuse (:class:`~pdpx.core.errors.PdpxError`, the message of :data:`NEEDS`) when ``rows`` (a :class:`Rows`,
    or the name of its source) cannot do ``need`` for ``call``."""
    source = rows if isinstance(rows, str) else rows.place
    text = message(need, source, call)
    if text is not None:
        raise PdpxError(text)


def capability_table() -> str:
    """:data:`NEEDS` as the Markdown table of ``docs/large-data.md`` (one row per capability, one column per
    source: "yes", or "no" and why)."""
    head = "| capability | asked by | " + " | ".join(SOURCE_NAMES.values()) + " |"
    lines = [head, "|" + "---|" * (len(SOURCE_NAMES) + 2)]
    for entry in NEEDS.values():
        cells = ["yes" if s not in entry.refused else f"no: {entry.refused[s]}" for s in SOURCE_NAMES]
        asked = ", ".join(f"`{w.strip()}`" for w in entry.where.split(","))
        lines.append(f"| {entry.what} | {asked} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rows_for(X, adapter) -> Rows:
    """The rows of ``X`` for ``adapter``'s model (:func:`pdpx.rows.rows_for`: a pandas frame, a Dask collection or a
    Spark DataFrame), validated by the adapter."""
    return importlib.import_module(SOURCES).rows_for(X, adapter)
