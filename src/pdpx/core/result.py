"""Result objects and their tidy DataFrame form.

The tidy schema (one row per output x curve x grid point) is stable:

============  ========  =========================================================
column        dtype     meaning
============  ========  =========================================================
feature_set   string    the target features joined by ", " (e.g. ``"age, fare"``)
output        string    class label, target name, or the response's name
kind          string    ``"average"`` (the PD curve) or ``"individual"`` (ICE)
row           Int64     position of the row in X for ICE; <NA> for the average
feature_j     string    name of the j-th target feature (j = 1, 2, ...)
type_j        string    ``"numeric"``, ``"categorical"`` or ``"date"``
x_j           float64   grid value (numeric) or position in the category list; for a date
                        feature the date, in the column's own dtype (``datetime64``, with
                        its time zone, or ``period``)
label_j       string    grid value as text (the category for categorical features; a date
                        in ISO form, the day alone when every grid date is at midnight)
yhat          float64   partial dependence (or ICE) value, centered if asked
lower, upper  float64   bounds of the bootstrap interval of the PD (only with ``interval=``;
                        NaN on ICE rows)
============  ========  =========================================================

A survival model's ``survival`` and ``cumulative_hazard`` (one output per time, ``res.times``) add a
``time`` column (float64, the output's time) right after ``output``.

The missing-value grid point (``include_missing``) has ``x_j`` NaN (NaT for a date) and
``label_j`` ``"missing"``. A collection mixing date and numeric features stacks ``x_j`` as
an object column (each value keeps its type).

How much data supports each grid point is kept out of this schema (so it stays stable):
``res.support`` / ``res.unsupported`` are arrays of the grid's shape and
:meth:`PartialDependenceResult.support_frame` is their tidy form, one row per grid cell
(:mod:`pdpx.core.support` defines them). Results of several models or groups (:mod:`pdpx.core.stacked`) add a
``model`` column or one named after the ``by`` column.

A collection's frame stacks its results; ``feature_j``, ``type_j``, ``x_j`` and
``label_j`` are <NA> past a feature set's own number of features.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np
import pandas as pd

from . import dates
from .drawing import Drawable
from .errors import PdpxError
from .extrapolation import Extrapolation
from .support import SupportInputs, unsupported_cells

SCHEMA_HEAD = ["feature_set", "output", "kind", "row"]
#: Bytes a string cell takes beyond its text (an offset, or a pointer), and what
#: building the frame holds per row beyond the frame (one index array at a time).
_STRING_ROW = 9
_BUILD_ROW = 16


def feature_columns(j: int) -> list[str]:
    """The tidy frame's columns for the j-th feature (1-based): ``feature_j``, ``type_j``, ``x_j``, ``label_j``."""
    return [f"feature_{j}", f"type_{j}", f"x_{j}", f"label_{j}"]


def grid_label(v) -> str:
    """A grid value as text, as ``label_j`` of the tidy frame writes it (floats to 6 significant digits; a date
    in ISO form, the day alone at midnight; a missing value or date ``"missing"``)."""
    if isinstance(v, (float, np.floating)):
        return "missing" if np.isnan(v) else f"{float(v):.6g}"
    if isinstance(v, (pd.Timestamp, np.datetime64, pd.Period)) or v is pd.NaT:
        return dates.date_label(v)
    return str(v)


def message_value(v) -> str:
    """A grid value as a message quotes it: a number in full (9 significant digits), a date in ISO form, the missing
    point by name, anything else as its Python value (``'a'``, ``True``), never a numpy repr."""
    if isinstance(v, (float, np.floating)):
        return "missing (NaN)" if np.isnan(v) else f"{float(v):.9g}"
    if isinstance(v, (pd.Timestamp, np.datetime64, pd.Period)) or v is pd.NaT:
        return dates.date_label(v)
    return repr(v.item() if isinstance(v, np.generic) else v)


def grid_labels(grid) -> list[str]:
    """Every value of one feature's grid as text (:func:`grid_label`); a grid of dates shows the time of day only
    when some date is not at midnight."""
    if dates.is_date_grid(grid):
        return dates.date_labels(grid)
    return [grid_label(v) for v in grid]


def grid_type(categorical: bool, grid) -> str:
    """``type_j`` of the tidy frame: ``"categorical"``, ``"date"`` (a grid of dates) or ``"numeric"``."""
    return "categorical" if categorical else "date" if dates.is_date_grid(grid) else "numeric"


def grid_column(grid, idx: np.ndarray):
    """``x_j`` of the tidy frame for a numeric or date grid at positions ``idx``: float64, or the dates in the
    column's own type (time zone or period frequency kept)."""
    if dates.is_date_grid(grid):
        return grid[idx] if isinstance(grid, np.ndarray) else pd.array(grid).take(idx)
    return np.asarray(grid, dtype=np.float64)[idx]


class CurveResult(Drawable):
    """What :func:`pdpx.partial_dependence` returns: curves of one or several models on one grid.

    The family: :class:`PartialDependenceResult` (one model; its subclasses
    ``DerivativeResult`` for ``kind="derivative"`` and ``ALEResult`` from :func:`pdpx.ale`)
    and :class:`~pdpx.core.stacked.StackedResult` (``by=``, a dict of models). Every member has
    ``features``, ``feature_set``, ``grid_values``, ``grid_shape``, ``categorical``,
    ``outputs``, ``kind``, ``method``, :meth:`to_frame`, :meth:`plot` and :meth:`save`.
    """

    def to_frame(self, *, kind: str | None = None, n_features: int | None = None, memory_budget=None):
        """The tidy long DataFrame (schema in :mod:`pdpx.core.result`)."""
        raise NotImplementedError  # pragma: no cover - every member defines it


@dataclass
class PartialDependenceResult(CurveResult):
    """Partial dependence of one model on one set of features (one joint grid).

    Attributes
    ----------
    features : list of str
        The target features, in grid order.
    grid_values : list of ndarray
        One 1-D array per feature: its grid. A date feature's grid holds dates of the
        column's own type: a numpy ``datetime64`` array, a pandas ``DatetimeArray`` (time
        zone kept) or ``PeriodArray`` (:mod:`pdpx.core.dates`).
    categorical : list of bool
        Whether each feature was treated as categorical.
    average : ndarray of shape (n_outputs, *grid_shape)
        The partial dependence (centered at the first grid point if ``centered``).
    individual : ndarray of shape (n_outputs, n_rows, *grid_shape) or None
        ICE curves, when ``kind`` was ``"individual"`` or ``"both"``.
    outputs : list of str
        Label of each output (class, target, or response name).
    response : str
        The model method whose values are reported (``predict``, ``predict_proba``, ...).
    method : str
        The method that actually ran (``brute``, ``exact``, ``recursion``, ...).
    kind : str
    centered : bool
    n_rows : int
        Number of background rows averaged over.
    elapsed : float
        Seconds taken by the method.
    notes : list of str
        What the method wants the user to know (e.g. which node weights it used).
    feature_data : dict
        The target features' values in X (for rugs and histograms in plots).
    ice_rows : ndarray or None
        Row positions in X of the ICE curves when ``ice_sample`` chose a subset;
        None when every row has its curve.
    lower, upper : ndarray of shape (n_outputs, *grid_shape) or None
        Bootstrap interval of the PD (``interval=``), see :mod:`pdpx.core.bootstrap`.
    interval : float or None
        Its confidence level.
    background : DataFrame or None
        The rows of X (model-ordered columns) the curves were computed on, kept by
        reference for ``res.plot(color_by=...)``; None for Dask input.
    extrapolation : pdpx.core.extrapolation.Extrapolation or None
        The extrapolation check: the share of the PD on combinations absent from the data.
    diagnostics : pdpx.core.support.SupportInputs or None
        What the support diagnostics (``support``, ``outside_hull``, ``unsupported``,
        ``support_frame()``) are computed from when first read; they are kept then.
    steps : dict
        ``{feature: comparison}`` for the features whose grid is ``grid="thresholds"``: the
        curve along them is a step function and the grid has one point per step. ``"<="``:
        each point stands for the step ending at it (the last one for every value above the
        largest threshold); ``"<"``: the step starting at it (the first one for every value
        below the smallest). ``to_frame()`` carries it in ``frame.attrs["steps"]``.
    """

    figure = "partial_dependence"

    features: list[str]
    grid_values: list[np.ndarray]
    categorical: list[bool]
    average: np.ndarray
    individual: np.ndarray | None
    outputs: list[str]
    response: str
    response_label: str
    method: str
    kind: str
    centered: bool
    n_rows: int
    elapsed: float = 0.0
    notes: list[str] = field(default_factory=list)
    feature_data: dict = field(default_factory=dict, repr=False)
    model_name: str = ""
    ice_rows: np.ndarray | None = None
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    interval: float | None = None
    background: object = field(default=None, repr=False)
    extrapolation: Extrapolation | None = field(default=None, repr=False)
    diagnostics: SupportInputs | None = field(default=None, repr=False)
    steps: dict = field(default_factory=dict)
    times: np.ndarray | None = None

    @property
    def grid_kind(self) -> str:
        """``"thresholds"`` when some feature's grid has one point per step (``steps``), else ``"values"``."""
        return "thresholds" if self.steps else "values"

    @property
    def feature_set(self) -> str:
        return ", ".join(self.features)

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(len(g) for g in self.grid_values)

    @property
    def support(self) -> np.ndarray | None:
        """Rows of X (weighted by ``sample_weight``) in each grid point's interval or cell's rectangle.

        An array of ``grid_shape`` (:mod:`pdpx.core.support`); the same for ICE samples, centered
        results and groups (each group's own rows). None only if it could not be computed (a note
        in :attr:`notes` says why). Computed when first read.
        """
        return None if self.diagnostics is None else self.diagnostics.counts(self.notes)

    @property
    def outside_hull(self) -> np.ndarray | None:
        """Two numeric features: grid points outside the convex hull of the rows' pairs (else None)."""
        return None if self.diagnostics is None else self.diagnostics.hull(self.notes)

    @property
    def unsupported(self) -> np.ndarray | None:
        """Grid cells with no row within one grid step, or outside the convex hull (2 numeric features).

        What figures shade; the rule is in :mod:`pdpx.core.support`. None if the support is unknown.
        """
        support = self.support
        if support is None:
            return None
        return unsupported_cells(support, self.grid_values, self.categorical, self.outside_hull)

    def support_frame(self) -> pd.DataFrame:
        """One row per grid cell: ``feature_j``, ``x_j``, ``label_j`` as in :meth:`to_frame`, then
        ``support`` (weighted rows), ``outside_hull`` (<NA> unless two numeric features) and ``supported``."""
        support = self.support
        if support is None:
            raise PdpxError("support_frame(): this result holds no support (it could not be computed; see res.notes)")
        n_grid = int(np.prod(self.grid_shape))
        cell = np.arange(n_grid, dtype=np.int64)
        strides = np.cumprod((1,) + tuple(reversed(self.grid_shape)))[::-1][1:]
        cols: dict = {"feature_set": pd.array([self.feature_set] * n_grid, dtype="string")}
        for j, grid in enumerate(self.grid_values):
            along = (cell // strides[j]) % self.grid_shape[j]
            names = feature_columns(j + 1)
            cols[names[0]] = pd.array([self.features[j]] * n_grid, dtype="string")
            cols[names[1]] = pd.array([grid_type(self.categorical[j], grid)] * n_grid, dtype="string")
            cols[names[2]] = along.astype(np.float64) if self.categorical[j] else grid_column(grid, along)
            cols[names[3]] = pd.array(grid_labels(grid), dtype="string").take(along)
        cols["support"] = np.asarray(support, dtype=np.float64).reshape(-1)
        hull = (pd.array([pd.NA] * n_grid, dtype="boolean") if self.outside_hull is None
                else pd.array(np.asarray(self.outside_hull, dtype=bool).reshape(-1), dtype="boolean"))
        cols["outside_hull"] = hull
        cols["supported"] = ~self.unsupported.reshape(-1)
        return pd.DataFrame(cols)

    def __repr__(self) -> str:
        shape = " x ".join(str(s) for s in self.grid_shape)
        ice = "" if self.individual is None else f", ICE for {self.individual.shape[1]} rows"
        return (
            f"<PartialDependenceResult features={self.features} grid={shape} outputs={self.outputs} "
            f"response={self.response!r} method={self.method!r}{ice}>"
        )

    # -------------------------------------------------------------- tidy
    def _parts(self, kind: str | None) -> list[tuple[str, np.ndarray | None, np.ndarray]]:
        """(kind, ICE row positions or None, values (K, n_curves, n_grid)) of the curves ``kind`` selects."""
        if kind not in (None, "average", "individual"):
            raise PdpxError(f"to_frame(): kind must be None (everything), 'average' or 'individual'; got {kind!r}")
        K, n_grid = len(self.outputs), int(np.prod(self.grid_shape))
        parts = []
        if kind in (None, "average") and self.kind in ("average", "both"):
            parts.append(("average", None, np.asarray(self.average).reshape(K, 1, n_grid)))
        if kind in (None, "individual") and self.individual is not None:
            n = self.individual.shape[1]
            rows = np.arange(n) if self.ice_rows is None else np.asarray(self.ice_rows)
            parts.append(("individual", rows, np.asarray(self.individual).reshape(K, n, n_grid)))
        if kind == "individual" and not parts:
            raise PdpxError("to_frame(kind='individual'): this result holds no ICE curves (computed with "
                            f"kind={self.kind!r}); compute it with kind='individual' or 'both'")
        return parts

    def frame_nbytes(self, *, kind: str | None = None, n_features: int | None = None) -> int:
        """Estimated peak bytes of :meth:`to_frame` (the frame plus what building it holds)."""
        parts = self._parts(kind)
        rows = sum(v.shape[0] * v.shape[1] * v.shape[2] for _, _, v in parts)
        d = len(self.features)
        n_features = max(n_features or d, d)
        text = [len(self.feature_set), float(np.mean([len(o) for o in self.outputs])), 9.0]
        for j in range(d):
            labels = grid_labels(self.grid_values[j][:1000])
            text += [len(self.features[j]), 11.0, float(np.mean([len(x) for x in labels])) if labels else 0.0]
        per_row = 8 + 9 + 8 * n_features + (16 if self.lower is not None else 0) + (8 if self.times is not None else 0)
        per_row += sum(_STRING_ROW + t for t in text) + _STRING_ROW * 3 * (n_features - d)
        return int(rows * (per_row + _BUILD_ROW))

    def to_frame(self, *, kind: str | None = None, n_features: int | None = None,
                 memory_budget=None, backend: str = "pandas"):
        """The tidy long DataFrame (schema in :mod:`pdpx.core.result`).

        Parameters
        ----------
        kind : {None, "average", "individual"}
            Which curves: everything the result holds (default), only the PD
            curve, or only the ICE curves.
        n_features : int, optional
            Emit ``feature_j`` ... columns up to this many features (used to stack
            results of different sizes); default: this result's number of features.
        memory_budget : int or str, optional
            Bytes the frame may take (default: the current setting, see
            :func:`pdpx.set_config`). A frame that would not fit is refused up
            front with its estimated size and what to do instead.
        backend : {"pandas", "polars"}, default "pandas"
            The DataFrame library of the result (polars: the same columns and values).
        """
        from .config import format_bytes, get_config, parse_bytes
        from .data import to_backend

        to_backend(pd.DataFrame(), backend)  # an unknown backend, or polars missing: before any work

        if n_features is not None and (not isinstance(n_features, (int, np.integer))
                                       or isinstance(n_features, bool) or n_features < 1):
            raise PdpxError(f"to_frame(): n_features must be an integer >= 1 or None; got {n_features!r}")
        budget = get_config()["memory_budget"] if memory_budget is None else parse_bytes(memory_budget)
        need = self.frame_nbytes(kind=kind, n_features=n_features)
        if need > budget:
            n_ice = 0 if self.individual is None else self.individual.shape[1]
            raise PdpxError(
                f"to_frame(): the tidy frame of this result would take about {format_bytes(need)} "
                f"({n_ice:,} ICE curves x {int(np.prod(self.grid_shape)):,} grid points x "
                f"{len(self.outputs)} output(s)), over the memory budget of {format_bytes(budget)}. "
                "Use to_frame(kind='average'), the arrays res.average / res.individual directly, ICE for a "
                "sample of rows (ice_sample=1000 when computing), or raise the budget "
                "(to_frame(memory_budget='4GB') or pdpx.set_config(memory_budget='4GB'))."
            )
        return to_backend(self._build_frame(self._parts(kind), n_features), backend)

    def _build_frame(self, parts, n_features: int | None) -> pd.DataFrame:
        """Columns built once at full length, strings taken from small arrays of their values."""
        d = len(self.features)
        n_features = max(n_features or d, d)
        grid_shape = self.grid_shape
        n_grid = int(np.prod(grid_shape))
        K = len(self.outputs)
        sizes = [K * v.shape[1] * n_grid for _, _, v in parts]
        total = int(sum(sizes))
        idx_type = np.int32 if max(n_grid, K, 2) < 2**31 else np.int64

        def text(values, codes) -> pd.api.extensions.ExtensionArray:
            return pd.array(np.asarray(values, dtype=object), dtype="string").take(codes)

        def constant(value) -> pd.api.extensions.ExtensionArray:
            return text([value], np.zeros(total, dtype=idx_type))

        cols: dict = {"feature_set": constant(self.feature_set)}
        output_codes = np.concatenate([np.repeat(np.arange(K, dtype=idx_type), v.shape[1] * n_grid)
                                       for _, _, v in parts])
        cols["output"] = text(list(self.outputs), output_codes)
        if self.times is not None:  # a survival model's curves: the time of each output, as a number
            cols["time"] = np.asarray(self.times, dtype=np.float64)[output_codes]
        del output_codes
        kinds = ["average", "individual"]
        cols["kind"] = text(kinds, np.concatenate(
            [np.full(size, kinds.index(k), dtype=idx_type) for (k, _, _), size in zip(parts, sizes)]))
        row_values = np.zeros(total, dtype=np.int64)
        row_mask = np.ones(total, dtype=bool)
        at = 0
        for (_, rows, _), size in zip(parts, sizes):
            if rows is not None:
                row_values[at: at + size] = np.tile(np.repeat(np.asarray(rows, dtype=np.int64), n_grid), K)
                row_mask[at: at + size] = False
            at += size
        cols["row"] = pd.arrays.IntegerArray(row_values, row_mask)
        del row_values, row_mask
        strides = np.cumprod((1,) + tuple(reversed(grid_shape)))[::-1][1:]  # row-major strides
        for j in range(n_features):
            names = feature_columns(j + 1)
            if j >= d:
                cols[names[0]] = constant(None)
                cols[names[1]] = constant(None)
                cols[names[2]] = np.full(total, np.nan)
                cols[names[3]] = constant(None)
                continue
            cell = np.arange(n_grid, dtype=np.int64)
            along = ((cell // strides[j]) % grid_shape[j]).astype(idx_type)  # grid index of each cell
            idx = np.concatenate([np.tile(along, K * v.shape[1]) for _, _, v in parts])
            grid = self.grid_values[j]
            cols[names[0]] = constant(self.features[j])
            cols[names[1]] = constant(grid_type(self.categorical[j], grid))
            if self.categorical[j]:
                cols[names[2]] = idx.astype(np.float64)
            else:
                cols[names[2]] = grid_column(grid, idx)
            cols[names[3]] = text(grid_labels(grid), idx)
            del idx
        cols["yhat"] = np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1) for _, _, v in parts])
        if self.lower is not None:
            for name, bound in (("lower", self.lower), ("upper", self.upper)):
                cols[name] = np.concatenate([
                    np.asarray(bound, dtype=np.float64).reshape(-1) if k == "average"
                    else np.full(v.size, np.nan) for k, _, v in parts])
        df = pd.DataFrame(cols, copy=False)
        df.attrs.update(
            response=self.response, response_label=self.response_label, method=self.method,
            centered=self.centered, interval=self.interval,
            steps=dict(self.steps),  # grid="thresholds": {feature: "<=" or "<"} (pandas frames only)
        )
        return df


class PartialDependenceCollection(Sequence, Drawable):
    """Results of several feature sets computed in one call.

    Index by position or by feature name(s): ``coll["age"]``, ``coll[("age", "fare")]``.
    ``skipped`` maps feature sets that were left out of a default "every column"
    request (constant columns) to the reason.
    """

    figure = "collection"

    def __init__(self, results: list[PartialDependenceResult], skipped: dict | None = None):
        self.results = list(results)
        self.skipped = dict(skipped or {})

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[PartialDependenceResult]:
        return iter(self.results)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer, slice)):
            return self.results[key]
        wanted = (key,) if isinstance(key, str) else tuple(key)
        for r in self.results:
            if tuple(r.features) == wanted:
                return r
        raise KeyError(f"no result for features {wanted!r}; have {[tuple(r.features) for r in self.results]}")

    def __repr__(self) -> str:
        sets = [r.feature_set for r in self.results]
        return f"<PartialDependenceCollection of {len(self)}: {sets}>"

    @property
    def method(self) -> list[str]:
        return [r.method for r in self.results]

    def to_frame(self, *, backend: str = "pandas"):
        """All results stacked in the tidy schema (``backend="polars"`` for a polars DataFrame)."""
        if not self.results:
            raise ValueError("the collection is empty")
        from .config import format_bytes, get_config
        from .data import to_backend

        to_backend(pd.DataFrame(), backend)

        width = max(len(r.features) for r in self.results)
        need = sum(r.frame_nbytes(n_features=width) for r in self.results)
        budget = get_config()["memory_budget"]
        if 2 * need > budget:  # the results' frames and their concatenation
            raise PdpxError(
                f"to_frame(): the tidy frame of this collection would take about {format_bytes(2 * need)} "
                f"while it is stacked, over the memory budget of {format_bytes(budget)}; stack the results' "
                "own frames yourself (coll[i].to_frame()), use kind='average' when computing, or raise the "
                "budget (pdpx.set_config(memory_budget='4GB'))."
            )
        return to_backend(pd.concat([r.to_frame(n_features=width, memory_budget=budget) for r in self.results],
                                    ignore_index=True), backend)
