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
type_j        string    ``"numeric"`` or ``"categorical"``
x_j           float64   grid value (numeric) or position in the category list
label_j       string    grid value as text (the category for categorical features)
yhat          float64   partial dependence (or ICE) value, centered if asked
============  ========  =========================================================

A collection's frame stacks its results; ``feature_j``, ``type_j``, ``x_j`` and
``label_j`` are <NA> past a feature set's own number of features.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np
import pandas as pd

SCHEMA_HEAD = ["feature_set", "output", "kind", "row"]


def feature_columns(j: int) -> list[str]:
    """The tidy frame's columns for the j-th feature (1-based): ``feature_j``, ``type_j``, ``x_j``, ``label_j``."""
    return [f"feature_{j}", f"type_{j}", f"x_{j}", f"label_{j}"]


def grid_label(v) -> str:
    """A grid value as text, as ``label_j`` of the tidy frame writes it (floats to 6 significant digits)."""
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    return str(v)


@dataclass
class PartialDependenceResult:
    """Partial dependence of one model on one set of features (one joint grid).

    Attributes
    ----------
    features : list of str
        The target features, in grid order.
    grid_values : list of ndarray
        One 1-D array per feature: its grid.
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
    """

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

    @property
    def feature_set(self) -> str:
        return ", ".join(self.features)

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(len(g) for g in self.grid_values)

    def __repr__(self) -> str:
        shape = " x ".join(str(s) for s in self.grid_shape)
        ice = "" if self.individual is None else f", ICE for {self.individual.shape[1]} rows"
        return (
            f"<PartialDependenceResult features={self.features} grid={shape} outputs={self.outputs} "
            f"response={self.response!r} method={self.method!r}{ice}>"
        )

    # -------------------------------------------------------------- tidy
    def to_frame(self, *, n_features: int | None = None) -> pd.DataFrame:
        """The tidy long DataFrame (schema in :mod:`pdpx.core.result`).

        Parameters
        ----------
        n_features : int, optional
            Emit ``feature_j`` ... columns up to this many features (used to stack
            results of different sizes); default: this result's number of features.
        """
        d = len(self.features)
        n_features = max(n_features or d, d)
        grid_shape = self.grid_shape
        n_grid = int(np.prod(grid_shape))
        mesh = np.indices(grid_shape).reshape(d, n_grid)  # grid index of each cell, per feature
        K = len(self.outputs)

        parts = []
        if self.kind in ("average", "both"):
            parts.append(("average", None, self.average.reshape(K, 1, n_grid)))
        if self.individual is not None:
            n = self.individual.shape[1]
            rows = np.arange(n) if self.ice_rows is None else np.asarray(self.ice_rows)
            parts.append(("individual", rows, self.individual.reshape(K, n, n_grid)))

        frames = []
        for kind, rows, values in parts:
            n_curves = values.shape[1]
            total = K * n_curves * n_grid
            cols: dict = {
                "feature_set": np.full(total, self.feature_set, dtype=object),
                "output": np.repeat(np.array(self.outputs, dtype=object), n_curves * n_grid),
                "kind": np.full(total, kind, dtype=object),
                "row": (
                    pd.array(np.tile(np.repeat(rows, n_grid), K), dtype="Int64")
                    if rows is not None
                    else pd.array([pd.NA] * total, dtype="Int64")
                ),
            }
            for j in range(n_features):
                names = feature_columns(j + 1)
                if j < d:
                    idx = np.tile(mesh[j], K * n_curves)
                    grid = self.grid_values[j]
                    if self.categorical[j]:
                        x = idx.astype(np.float64)
                    else:
                        x = np.asarray(grid, dtype=np.float64)[idx]
                    labels = np.array([grid_label(v) for v in grid], dtype=object)[idx]
                    cols[names[0]] = np.full(total, self.features[j], dtype=object)
                    cols[names[1]] = np.full(total, "categorical" if self.categorical[j] else "numeric", dtype=object)
                    cols[names[2]] = x
                    cols[names[3]] = labels
                else:
                    cols[names[0]] = np.full(total, None, dtype=object)
                    cols[names[1]] = np.full(total, None, dtype=object)
                    cols[names[2]] = np.full(total, np.nan)
                    cols[names[3]] = np.full(total, None, dtype=object)
            cols["yhat"] = values.reshape(-1).astype(np.float64)
            frames.append(pd.DataFrame(cols))
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        for c in df.columns:
            if c in ("row", "yhat") or c.startswith("x_"):
                continue
            df[c] = df[c].astype("string")
        df.attrs.update(
            response=self.response, response_label=self.response_label, method=self.method,
            centered=self.centered,
        )
        return df

    # --------------------------------------------------------------- plots
    def plot(self, **kwargs):
        """An undrawn plotnine ``ggplot`` of this result (see :func:`pdpx.outputs.plot.plot_result`)."""
        from ..outputs import plot as _plot  # lazy: plotnine is optional

        return _plot.plot_result(self, **kwargs)

    def save(self, path, *, width=None, height=None, dpi=200, **plot_options):
        """Draw :meth:`plot` (with ``plot_options``) and write it to PNG, SVG or PDF (by the extension).

        Returns the path written; see :func:`pdpx.outputs.plot.save`.
        """
        from ..outputs import plot as _plot

        return _plot.save(self.plot(**plot_options), path, width=width, height=height, dpi=dpi)


class PartialDependenceCollection(Sequence):
    """Results of several feature sets computed in one call.

    Index by position or by feature name(s): ``coll["age"]``, ``coll[("age", "fare")]``.
    ``skipped`` maps feature sets that were left out of a default "every column"
    request (constant columns) to the reason.
    """

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

    def to_frame(self) -> pd.DataFrame:
        """All results stacked in the tidy schema."""
        if not self.results:
            raise ValueError("the collection is empty")
        width = max(len(r.features) for r in self.results)
        return pd.concat([r.to_frame(n_features=width) for r in self.results], ignore_index=True)

    def plot(self, **kwargs):
        """An undrawn plotnine figure, one facet per feature set (see :func:`pdpx.outputs.plot.plot_collection`)."""
        from ..outputs import plot as _plot

        return _plot.plot_collection(self, **kwargs)

    def save(self, path, *, width=None, height=None, dpi=200, **plot_options):
        """Draw :meth:`plot` (with ``plot_options``) and write it to PNG, SVG or PDF (by the extension)."""
        from ..outputs import plot as _plot

        return _plot.save(self.plot(**plot_options), path, width=width, height=height, dpi=dpi)
