"""Heterogeneity: how far the rows' ICE curves of a feature disagree with their average.

For feature ``j`` with grid ``z_1 .. z_G`` and ICE curves ``ice_i(z_g) = f(z_g, x_i,-j)``:

* each row's curve is **centered on its own mean over the grid**:
  ``c_ig = ice_i(z_g) - (1/G) sum_h ice_i(z_h)``. A feature whose effect only shifts
  some rows up or down (additive in the other features) then has identical centered
  curves and heterogeneity 0; only a change of shape across rows (an interaction) counts;
* the **curve**: at each grid point, the weighted variance of ``c_ig`` across the rows,
  ``V_g = sum_i w_i (c_ig - cbar_g)^2 / sum_i w_i`` (``w``: ``sample_weight``, all 1 by default;
  the population variance, no degrees-of-freedom correction);
* the **scalar** ``heterogeneity``: the mean of ``V_g`` over the grid points with equal
  weights ``1/G`` (the same weights as the centering), i.e. the weighted mean over rows of
  the squared distance between a row's centered curve and the centered PD curve.

Categorical features: the grid is the levels, each a grid point. The missing-value point
(``include_missing=True``) is a grid point like any other. Several outputs: one curve and
one scalar per output.

The curves are reduced as they come (:class:`~pdpx.core.curves.CurveMoments`, a curve reducer): from
``exact``'s one walk over the rows on trees of at most 64 leaves, else a chunk of rows at a time
from :class:`~pdpx.core.session.Session` (the model's own predictions on other models), each chunk's
weight, mean and sum of squared deviations per grid point merged into the running ones (Chan et
al.'s pairwise update), so the rows x grid matrix of all the rows is never held at once; rows in
Dask or Spark partitions, each partition's moments where its rows are, merged here.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.curves import CurveMoments, reduce_curves
from ..core.drawing import Drawable
from ..core.errors import PdpxError
from ..core.options import PDOptions
from ..core.result import grid_column, grid_labels, grid_type
from ..core.rows import require
from ..core.session import Session

#: Grid points of the measures of this module when ``grid_resolution`` is not given.
GRID_RESOLUTION = 20
#: Options of partial_dependence that do not apply (the measures set the curves' kind themselves).
REFUSED = ("kind", "centered", "ice_sample", "by", "by_bins", "interval", "n_boot")


@dataclass
class HeterogeneityResult(Drawable):
    """What :func:`heterogeneity` returns: per feature, the variance of the centered ICE curves.

    Attributes
    ----------
    features : list of str
    grid_values : list of ndarray
        Each feature's grid.
    categorical : list of bool
    variance : list of ndarray (n_outputs, n_grid)
        Each feature's curve: the weighted variance across rows of the centered ICE curves at each grid point.
    average : list of ndarray (n_outputs, n_grid)
        Each feature's PD curve (the weighted mean of the uncentered ICE curves).
    outputs : list of str
    method : str
        The method that computed the ICE curves (``exact`` or ``brute``).
    n_rows : int
    notes : list of str
    elapsed : float
        Seconds.
    """

    small = True  # a notebook shows its table and figure in full

    figure = "heterogeneity"

    features: list
    grid_values: list
    categorical: list
    variance: list
    average: list
    outputs: list
    method: str
    n_rows: int
    notes: list = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def heterogeneity(self) -> np.ndarray:
        """(n_features, n_outputs): each curve's mean over its grid points (equal weights)."""
        return np.array([v.mean(axis=1) for v in self.variance]).reshape(len(self.features), len(self.outputs))

    @property
    def table(self) -> pd.DataFrame:
        """``feature, output, heterogeneity, sd, feature_type, n_grid``, one row per feature and output, largest
        first (``sd``: the square root of ``heterogeneity``, in the units of the model's output)."""
        h = self.heterogeneity
        rows = [(f, out, float(h[i, o]), float(np.sqrt(max(h[i, o], 0.0))),
                 grid_type(self.categorical[i], self.grid_values[i]), len(self.grid_values[i]))
                for i, f in enumerate(self.features) for o, out in enumerate(self.outputs)]
        frame = pd.DataFrame(rows, columns=["feature", "output", "heterogeneity", "sd", "feature_type", "n_grid"])
        return frame.sort_values("heterogeneity", ascending=False, kind="stable").reset_index(drop=True)

    def to_frame(self) -> pd.DataFrame:
        """The curves in long form, one row per feature, output and grid point.

        Columns ``feature, output, feature_type, x, label`` (``x`` and ``label`` as ``x_1`` and
        ``label_1`` of :meth:`pdpx.PartialDependenceResult.to_frame`: the grid value, or the
        level's position for a categorical feature, and the value as text), ``variance`` (the
        curve), ``average`` (the PD curve) and ``heterogeneity`` (the feature's scalar).
        """
        parts = []
        h = self.heterogeneity
        for i, f in enumerate(self.features):
            parts.append(curve_columns(f, self.grid_values[i], self.categorical[i], self.outputs,
                                       variance=self.variance[i], average=self.average[i],
                                       heterogeneity=np.repeat(h[i][:, None], len(self.grid_values[i]), axis=1)))
        return pd.concat(parts, ignore_index=True)

    def plot(self, which: str = "bars", **kwargs):
        """A plotnine figure: ``"bars"`` (the scalar by feature) or ``"curves"`` (each feature's variance curve).

        Keyword arguments go to :func:`pdpx.outputs.plot_heterogeneity.plot_heterogeneity`.
        """
        return super().plot(which=which, **kwargs)

    def __repr__(self) -> str:
        top = self.table.head(3)
        shown = ", ".join(f"{f}: {h:.3g}" for f, h in zip(top.feature, top.heterogeneity))
        return (f"HeterogeneityResult({len(self.features)} features, {len(self.outputs)} output(s), "
                f"method={self.method!r}, n_rows={self.n_rows}; largest: {shown or 'none'})")


def curve_columns(feature: str, grid, categorical: bool, outputs: list, **values) -> pd.DataFrame:
    """Long-form rows of curves over one feature's grid: ``feature, output, feature_type, x, label`` and one column
    per array of ``values`` (each (n_outputs, n_grid))."""
    G, K = len(grid), len(outputs)
    along = np.tile(np.arange(G), K)
    x = along.astype(np.float64) if categorical else grid_column(grid, along)
    cols = {"feature": [feature] * (G * K), "output": np.repeat(np.asarray(outputs, dtype=object), G),
            "feature_type": grid_type(categorical, grid), "x": x,
            "label": np.asarray(grid_labels(grid), dtype=object)[along]}
    for name, arr in values.items():
        cols[name] = np.asarray(arr, dtype=np.float64).reshape(-1)
    return pd.DataFrame(cols)


def heterogeneity(model, X, features=None, **pd_options) -> HeterogeneityResult:
    """The heterogeneity of each feature's ICE curves (definition in :mod:`pdpx.explain.ice_spread`).

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence`.
    features : str / int or list of them, optional
        Default: every column that has a grid (constant and all-missing columns are left out).
    **pd_options
        Options of :func:`pdpx.partial_dependence`: ``grid_resolution`` (default 20 here), ``percentiles``,
        ``grid``, ``custom_values``, ``categorical_features``, ``response``, ``target``, ``sample_weight``
        (weights the variance across rows), ``method``, ``memory_budget`` (the size of a chunk of rows),
        ``include_missing`` (default False here), ``n_jobs``, ``method_options``.

    Returns
    -------
    HeterogeneityResult
    """
    options = measure_options("heterogeneity", pd_options)
    t0 = time.perf_counter()
    session = Session(model, X, options.but(kind="individual", centered=False, progress=False))
    feats = resolve_features(session, features, "heterogeneity")
    out = ice_moments(session, feats)
    return HeterogeneityResult(
        features=[session.names[j] for j in feats], grid_values=[session.grid_for(j) for j in feats],
        categorical=[session.categorical[j] for j in feats],
        variance=[m.variance for m, _ in out.moments], average=[u.mean for _, u in out.moments],
        outputs=out.outputs, method=out.method, n_rows=session.n_rows, notes=out.notes,
        elapsed=time.perf_counter() - t0)


def measure_options(function: str, pd_options: dict) -> PDOptions:
    """The checked options of a measure of this module, with its defaults (``grid_resolution`` 20, no missing point
    unless asked)."""
    options = PDOptions.checked(function, pd_options)
    refused = sorted(options.given & set(REFUSED))
    if refused:
        raise PdpxError(f"{function}(): option(s) {refused} do not apply ({function} computes every row's ICE "
                        "curve and centers it on its own mean); leave them out")
    if "grid_resolution" not in options.given:
        options = options.but(grid_resolution=GRID_RESOLUTION)
    if "include_missing" not in options.given:
        options = options.but(include_missing=False)
    return options


def resolve_features(session: Session, features, function: str) -> list:
    """Positions of ``features`` (None: every column with a grid)."""
    if features is not None:
        if isinstance(features, (str, numbers.Integral)):
            features = [features]
        return session.resolve_features(features)
    session.grids.prefetch(range(len(session.names)))
    feats = [j for j in range(len(session.names)) if has_grid(session, j)]
    if not feats:
        raise PdpxError(f"{function}(): no column of X has a grid (all are constant or missing)")
    return feats


def has_grid(session: Session, j: int) -> bool:
    """Whether column ``j`` has a grid (a constant or all-missing column has none)."""
    try:
        session.grid_for(j)
    except PdpxError:
        return False
    return True


@dataclass
class IceMoments:
    """What :func:`ice_moments` returns: per feature (moments of the centered curves, moments of the curves)."""

    moments: list
    outputs: list
    method: str
    notes: list


def ice_moments(session: Session, feats: list) -> IceMoments:
    """Moments over rows of each feature's centered and uncentered ICE curves: the curve reducer
    :class:`~pdpx.core.curves.CurveMoments` (:func:`~pdpx.core.curves.reduce_curves`: the method's one walk over the
    rows, else a chunk of rows at a time, else, rows held in partitions, each partition's where its rows are)."""
    if not session.data.here:
        require(session.data, "heterogeneity", "heterogeneity")
    got = reduce_curves(session, feats, CurveMoments())
    moments = got.value
    if feats[0] not in moments or moments[feats[0]][0].w <= 0:
        raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
    notes = got.notes
    if got.how == "walk":
        notes = ["every row's ICE curves computed in one pass over the rows, none held"]
    elif got.how == "partitions":
        notes = [f"ICE curves computed in each of {got.parts} {session.data.label} partitions, only their moments "
                 "gathered"]
    return IceMoments([moments[j] for j in feats], got.outputs, got.method, notes)
