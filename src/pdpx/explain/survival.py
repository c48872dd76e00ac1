"""What only time shows: a survival model's partial dependence at several times (``docs/survival.md``).

:func:`survival_profile` computes every feature's PD at the asked times (one
:func:`pdpx.partial_dependence_many` call: a time axis is one more set of outputs) and returns a
:class:`SurvivalProfile`: per feature and time its effect (the range of the PD over the grid), and per
feature its **time-varying share** (:func:`time_varying_share`): how much of its effect changes shape over
time rather than scaling one curve. A Cox model's cumulative hazard ``H0(t) exp(f(x))`` has a PD
``H0(t) * PD_exp(x)``: one curve scaled by time, share 0 (to rounding). Its figures
(:mod:`pdpx.outputs.plot_survival`): a feature x time heat map of the effects, one feature's PD lines
coloured by time, and its ICE curves at one time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.adapter import TIME_RESPONSES
from ..core.compute import compute_many
from ..core.drawing import Drawable
from ..core.errors import PdpxError
from ..core.options import PDOptions
from ..core.result import PartialDependenceCollection, PartialDependenceResult


def time_varying_share(curves: np.ndarray) -> float:
    """The time-varying share of one feature's PD ``curves`` of shape (times, grid points).

    Each time's curve is centered over the grid (its mean over the grid points taken out: the feature's
    effect at that time), giving ``E`` (times x grid). The effect that is one curve scaled by a factor per time
    is the best rank-one approximation of ``E``, which keeps ``s1**2`` of ``||E||**2`` (``s1`` its largest
    singular value). The share is ``1 - s1**2 / ||E||**2``, in [0, 1]: 0 when every time's effect is the same
    curve scaled, towards 1 when the effect changes shape over time; 0 for a feature without effect.
    """
    curves = np.asarray(curves, dtype=np.float64)
    if curves.ndim != 2:
        raise PdpxError(f"time_varying_share(): curves must be (times, grid points), got shape {curves.shape}")
    effect = curves - curves.mean(axis=1, keepdims=True)
    total = float(np.sum(effect * effect))
    if total <= 0 or not np.isfinite(total):
        return 0.0
    s = np.linalg.svd(effect, compute_uv=False)
    return float(min(max(1.0 - s[0] ** 2 / total, 0.0), 1.0))


@dataclass
class SurvivalProfile(Drawable):
    """Every feature's PD at each time of a survival model (:func:`survival_profile`).

    Attributes
    ----------
    curves : PartialDependenceCollection
        One 1-way result per feature, one output per time (``curves["age"].average``: (times, grid)).
    times : ndarray
        The times.
    response : str
        ``"survival"`` or ``"cumulative_hazard"``.
    """

    figure = "survival"
    small = True

    curves: PartialDependenceCollection
    times: np.ndarray
    response: str

    @property
    def features(self) -> list[str]:
        return [r.features[0] for r in self.curves]

    def result(self, feature: str) -> PartialDependenceResult:
        """The PD result of one feature (all times)."""
        if feature not in self.features:
            raise PdpxError(f"no feature {feature!r} in this profile; it has {self.features}")
        return self.curves[feature]

    @property
    def shares(self) -> pd.Series:
        """The time-varying share of each feature (:func:`time_varying_share`), largest first."""
        values = {r.features[0]: time_varying_share(r.average.reshape(len(self.times), -1)) for r in self.curves}
        return pd.Series(values, name="time_varying_share").sort_values(ascending=False, kind="stable")

    def effects(self) -> pd.DataFrame:
        """The effect of each feature (rows) at each time (columns): the range of its PD over the grid."""
        rows = {r.features[0]: np.ptp(r.average.reshape(len(self.times), -1), axis=1) for r in self.curves}
        return pd.DataFrame.from_dict(rows, orient="index", columns=list(self.times))

    def to_frame(self) -> pd.DataFrame:
        """One row per feature and time: ``feature``, ``time``, ``effect`` (the PD's range over the grid) and the
        feature's ``time_varying_share``; features in the order of their largest effect."""
        eff = self.effects()
        order = eff.max(axis=1).sort_values(ascending=False, kind="stable").index
        shares = self.shares
        rows = [(f, float(t), float(eff.loc[f, t]), float(shares[f])) for f in order for t in eff.columns]
        return pd.DataFrame(rows, columns=["feature", "time", "effect", "time_varying_share"])

    def __repr__(self) -> str:
        return (f"<SurvivalProfile {self.response} of {len(self.features)} feature(s) at {len(self.times)} "
                f"time(s)>")


def survival_profile(model, X, features=None, *, times=None, response: str = "survival",
                     **pd_options) -> SurvivalProfile:
    """Every feature's partial dependence at each of ``times`` (a survival model), with the time-varying shares.

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence` (a survival model).
    features : list, optional
        The features (each its own 1-way curve); default every column of X.
    times : list of float, optional
        As in :func:`pdpx.partial_dependence` (default: 5 quantiles of the model's training times).
    response : {"survival", "cumulative_hazard"}
    **pd_options
        Options of :func:`pdpx.partial_dependence` (``grid_resolution``, ``kind="both"`` for ICE figures, ...).
    """
    if response not in TIME_RESPONSES:
        raise PdpxError(f"survival_profile(): response must be one of {list(TIME_RESPONSES)}, got {response!r}")
    sets = None if features is None else [[f] for f in ([features] if isinstance(features, str) else features)]
    options = PDOptions.checked("survival_profile", {**pd_options, "response": response, "times": times})
    curves = compute_many(model, X, sets, options)
    if any(len(r.features) != 1 for r in curves):
        raise PdpxError("survival_profile(): each feature is its own curve; pass a list of single features")
    return SurvivalProfile(curves=curves, times=np.asarray(curves[0].times), response=response)
