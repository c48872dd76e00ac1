"""Rows held in this process: a pandas DataFrame (or an array, or a table with named columns) as ``X``.

Several sessions may share one :class:`LocalData` (``PDOptions.rows``: a report's sessions,
Friedman's H's): what depends only on the rows' values is then computed once for all of them
(:meth:`LocalData.once`), and only for that object's frame, so a frame changed in place
between two public calls is read again.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..core.adapter import Adapter
from ..core.data import named_frame
from ..core.grid import feature_grid
from ..core.method import MethodResult, Request


class LocalData:
    """Background rows held in this process: the :class:`pdpx.core.rows.Rows` interface.

    Attributes
    ----------
    frame : DataFrame of shape (n_rows, n_features)
        The rows, columns in the model's order (validated by the adapter).
    n_rows : int
    """

    #: the column of the table of needs (:data:`pdpx.core.rows.NEEDS`), and the source's name in notes
    place, label = "local", "pandas"
    #: every row is here (a pandas frame)
    here = True

    def __init__(self, X, adapter: Adapter):
        #: X as given and the adapter that validated it (which may have learnt from the rows, e.g. their category
        #: codes): a session on the same X and model shares both (:meth:`shared_by`)
        self.source, self.adapter = X, adapter
        frame, names = named_frame(X, adapter)
        #: X's columns in the order the user gave them (integer positions refer to these)
        self.input_columns = names
        self.frame = adapter.validate_columns(frame)
        #: the columns of :attr:`frame` (the model's order) as text, and their dtypes
        self.names = names if self.frame is frame else [str(c) for c in self.frame.columns.tolist()]
        self.dtypes = self.frame.dtypes.tolist()
        self.n_rows = len(self.frame)
        self._columns: dict[int, pd.Series] = {}
        self._kept: dict = {}

    def subset(self, rows) -> LocalData:
        """The rows at positions ``rows``, validated already (one ``by=`` group's), with nothing kept yet."""
        out = copy.copy(self)
        out.frame = out.source = self.frame.iloc[rows]
        out.n_rows = len(out.frame)
        out._columns, out._kept = {}, {}
        return out

    def shared_by(self, X, model) -> bool:
        """Whether a session of ``model`` on ``X`` may use these rows (the same X object, or this frame, and the
        same model)."""
        return model is self.adapter.model and (X is self.source or X is self.frame)

    def once(self, X, key: str, compute):
        """``compute()``, kept under ``key`` for every session that shares these rows when ``X`` is their frame
        (the same object); for any other frame (a sample of it, a partition) computed every time."""
        if X is not self.frame:
            return compute()
        if key not in self._kept:
            self._kept[key] = compute()
        return self._kept[key]

    @property
    def head(self) -> pd.DataFrame:
        """The rows validation and encoders look at: here, all of them."""
        return self.frame

    def column(self, j: int) -> pd.Series:
        """Column ``j`` over all rows (taken out of the frame once: grids, support and rugs all read it)."""
        if j not in self._columns:  # by label (unique: as_frame checks), which pandas answers faster than iloc
            self._columns[j] = self.frame[self.frame.columns[j]]
        return self._columns[j]

    @property
    def model(self):
        """The model these rows were validated for."""
        return self.adapter.model

    def weights(self, sample_weight):
        """``sample_weight`` as given (already local)."""
        return sample_weight

    def feature_grid(self, column: pd.Series, **grid_options) -> np.ndarray:
        """:func:`pdpx.core.grid.feature_grid`."""
        return feature_grid(column, **grid_options)

    def take(self, positions) -> tuple[pd.DataFrame, None]:
        """The rows at ``positions`` (the weights stay with the caller, who holds them here: None)."""
        return self.frame.iloc[np.asarray(positions, dtype=np.int64)].reset_index(drop=True), None

    def map_reduce(self, task, args: tuple, weights=None, *, model=None, progress: bool | None = False) -> list:
        """``[task(model, frame, weights, *args)]``: every row is one part, here."""
        return [task(self.model if model is None else model, self.frame, weights, *args)]

    def bootstrap(self, method, adapter: Adapter, req: Request, *, model: Any, ice_rows, options) -> None:
        """None: the bootstrap resamples every row's ICE curve here (the session computes them)."""
        return None

    def run(self, method, adapter: Adapter, req: Request, *, model: Any, ice_rows: np.ndarray | None) -> MethodResult:
        """``method`` (a :class:`~pdpx.core.method.Batch`, a method's plan) over every row; with ``ice_rows``, ICE
        for those rows only (the average uses all)."""
        if ice_rows is None or not req.needs_individual:
            return method.compute(adapter, req)
        full = method.compute(adapter, replace(req, kind="average"))
        sub = replace(req, X=self.frame.iloc[ice_rows], kind="individual",
                      sample_weight=None if req.sample_weight is None else req.sample_weight[ice_rows])
        if sub.sample_weight is not None and sub.sample_weight.sum() <= 0:
            sub = replace(sub, sample_weight=None)
        part = method.compute(adapter, sub)
        return MethodResult(average=full.average, individual=part.individual, notes=full.notes)
