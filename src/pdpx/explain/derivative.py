"""Derivative ICE (Goldstein, Kapelner, Bleich and Pitkin 2015): :func:`derivative_ice`.

Where the ICE curves of a feature are parallel, the feature acts additively; where
their slopes differ across rows, it interacts with other features. Derivative ICE
makes that visible: the slope of every row's ICE curve along the grid, and the
standard deviation of those slopes across rows at each grid point.

* The ICE curves come from the same engine as :func:`pdpx.partial_dependence`
  (``kind="both"``: ``exact`` on tree models, brute force otherwise), on its grid.
* The derivatives are finite differences along the grid, ``numpy.gradient(ice, grid)``:
  at interior points the second-order difference for uneven spacing (with even spacing
  ``h``, ``(f(x + h) - f(x - h)) / 2h``); at the two ends the one-sided first difference.
  No smoothing (ICEbox smooths before differencing; trees make step functions whose
  differences are what they are).
* ``average`` is the derivative of the partial dependence (every row, weighted as the PD
  is), which is the mean of the rows' derivatives.
* ``sd``: at each grid point, the standard deviation of the rows' derivatives (sample
  standard deviation, ``n - 1``; with ``sample_weight``, the unbiased weighted form
  ``sum w (d - m)^2 / (V1 - V2 / V1)`` with ``V1 = sum w``, ``V2 = sum w^2``). Zero
  everywhere for a model additive in the feature.

A date feature's derivatives are changes per day (24 hours; the grid's dates counted
in days, fractions of a day for times). Numeric and date features, one at a time;
``pdpx.partial_dependence(..., kind="derivative")`` calls this function.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

from ..core.data import to_backend
from ..core.dates import is_date_grid
from ..core.errors import PdpxError
from ..core.options import PDOptions
from ..core.result import PartialDependenceResult
from ..core.session import Session
from ..core.support import grid_floats


@dataclass(repr=False)
class DerivativeResult(PartialDependenceResult):
    """Derivative ICE on one numeric feature (a :class:`PartialDependenceResult`).

    ``individual`` (n_outputs, n_rows, n_grid) holds the rows' derivative curves,
    ``average`` (n_outputs, n_grid) the derivative of the PD, ``sd`` (n_outputs, n_grid)
    the standard deviation of the rows' derivatives at each grid point.
    ``to_frame()`` adds a column ``sd`` (on the average rows; NaN on the rows' curves).
    """

    figure = "derivative"

    sd: np.ndarray | None = None

    def __repr__(self) -> str:
        return (f"<DerivativeResult feature={self.features[0]!r} grid={len(self.grid_values[0])} "
                f"outputs={self.outputs} method={self.method!r}, derivatives of {self.individual.shape[1]} ICE curves>")

    def to_frame(self, *, kind: str | None = None, n_features: int | None = None, memory_budget=None,
                 backend: str = "pandas"):
        """The tidy frame of :class:`PartialDependenceResult` plus ``sd`` (see the class)."""
        to_backend(pd.DataFrame(), backend)  # refuse a bad backend before any work
        df = super().to_frame(kind=kind, n_features=n_features, memory_budget=memory_budget)
        sd = np.full(len(df), np.nan)
        avg = (df["kind"] == "average").to_numpy()
        if avg.any():
            sd[avg] = np.asarray(self.sd, dtype=np.float64).reshape(-1)
        df["sd"] = sd
        return to_backend(df, backend)


def derivative_ice(model, X, feature, **pd_options) -> DerivativeResult:
    """Derivative ICE curves of ``model`` along one numeric feature, and their spread across rows.

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence` (one model; not a dict).
    feature : str or int (or a list of one)
        A numeric feature.
    **pd_options
        Options of :func:`pdpx.partial_dependence` (grid, method, response, target,
        ``sample_weight``, ``ice_sample`` ...); ``kind`` may only be ``"derivative"``;
        ``by``, ``interval`` and ``include_missing=True`` are refused (the missing-value
        point has no neighbour to difference with).

    Returns
    -------
    DerivativeResult
        ``individual`` the derivative curves, ``average`` the mean derivative, ``sd``.
    """
    kind = pd_options.pop("kind", "derivative")
    if kind != "derivative":
        raise PdpxError(f"derivative_ice(): kind must be 'derivative' (or left out); got {kind!r}")
    return derivatives(model, X, feature, PDOptions.checked("derivative_ice", pd_options))


def derivatives(model, X, feature, options: PDOptions) -> DerivativeResult:
    """:func:`derivative_ice` with checked options (``pdpx.partial_dependence(kind="derivative")`` calls it)."""
    if isinstance(model, dict):
        raise PdpxError("derivative_ice(): model must be one fitted model, not a dict of models; "
                        "call it once per model")
    for name in ("by", "interval"):
        if getattr(options, name) is not None:
            raise PdpxError(f"derivative_ice(): {name}= is not supported (got {getattr(options, name)!r}); "
                            "leave it out")
    if options.grid == "thresholds":
        raise PdpxError("derivative_ice(): grid='thresholds' gives a step curve, whose derivative is zero between "
                        "steps and undefined at them; use the default grid (grid_resolution points)")
    if options.include_missing is True:
        raise PdpxError("derivative_ice(): include_missing=True is not supported: the missing-value point has "
                        "no neighbour on the grid to take a difference with")
    features = [feature] if isinstance(feature, (str, numbers.Integral)) else list(feature)
    if len(features) != 1:
        raise PdpxError(f"derivative_ice(): derivative ICE is for one numeric feature; got {len(features)} "
                        f"({features!r})")
    session = Session(model, X, options.but(kind="both", include_missing=False))
    feats = session.resolve_features(features)
    name = session.names[feats[0]]
    if session.categorical[feats[0]]:
        raise PdpxError(f"derivative_ice(): feature {name!r} is categorical; derivatives need a numeric "
                        "feature (use pdpx.partial_dependence(kind='individual') for its ICE)")
    res = session.compute(feats)
    dated = is_date_grid(res.grid_values[0])
    grid = grid_floats(res.grid_values[0])  # a date feature: days since 1970, so derivatives are per day
    if grid.size < 2:
        raise PdpxError(f"derivative_ice(): the grid of {name!r} has {grid.size} point; differences need two "
                        "or more (raise grid_resolution)")
    d_ice = np.gradient(np.asarray(res.individual, dtype=np.float64), grid, axis=-1)
    d_avg = np.gradient(np.asarray(res.average, dtype=np.float64), grid, axis=-1)
    w = session.sample_weight
    if w is not None and res.ice_rows is not None:
        w = w[res.ice_rows]
    sd = spread(d_ice, w)
    notes = list(res.notes) + ["derivatives: numpy.gradient along the grid (second-order differences inside, "
                               "one-sided at the ends)"]
    if dated:
        notes.append(f"derivatives of date feature {name!r} are changes per day (24 hours)")
    base = {f.name: getattr(res, f.name) for f in fields(PartialDependenceResult)}
    base.update(average=d_avg, individual=d_ice, kind="both", centered=False, notes=notes)
    return DerivativeResult(**base, sd=sd)


def spread(d: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Standard deviation across rows (axis 1 of (K, n, G)): sample (n - 1), or unbiased weighted (see module)."""
    n = d.shape[1]
    if w is None:
        if n < 2:
            return np.full((d.shape[0], d.shape[2]), np.nan)
        return d.std(axis=1, ddof=1)
    v1, v2 = w.sum(), (w ** 2).sum()
    denom = v1 - v2 / v1 if v1 > 0 else 0.0
    if denom <= 0:
        return np.full((d.shape[0], d.shape[2]), np.nan)
    m = np.einsum("r,krg->kg", w, d) / v1
    return np.sqrt(np.einsum("r,krg->kg", w, (d - m[:, None, :]) ** 2) / denom)
