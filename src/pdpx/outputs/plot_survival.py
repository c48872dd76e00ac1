"""The figures of a :class:`~pdpx.explain.survival.SurvivalProfile` (a survival model's PD over time).

``profile.plot()`` draws, by ``kind``:

* ``"heatmap"`` (default): features x times, each tile the feature's effect at that time (the range of its PD
  over the grid); the time-varying share of each feature beside its name;
* ``"lines"``: one feature's PD curves, one per time, coloured by time;
* ``"ice"``: one feature's ICE curves at one time, the PD over them (the profile computed with
  ``kind="both"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from ..core.result import grid_labels
from .plot_style import ICE_COLOR, PD_COLOR, theme_pdpx

if TYPE_CHECKING:  # pragma: no cover
    from ..explain.survival import SurvivalProfile

KINDS = ("heatmap", "lines", "ice")
#: Most ICE curves drawn (a seeded sample of the rows beyond).
ICE_MAX = 300
_SCALE = {"survival": "survival probability", "cumulative_hazard": "cumulative hazard"}


def plot_survival(profile: "SurvivalProfile", kind: str = "heatmap", *, feature: str | None = None,
                  time: float | None = None, title: str | None = None, base_size: float = 11):
    """A figure of ``profile``: ``kind`` one of ``"heatmap"``, ``"lines"``, ``"ice"`` (see the module docstring).
    ``feature``: the feature of ``"lines"`` and ``"ice"`` (default: the one with the largest effect); ``time``:
    the time of ``"ice"``, one of ``profile.times`` (default: the middle one)."""
    if kind not in KINDS:
        raise PdpxError(f"SurvivalProfile.plot(): kind must be one of {list(KINDS)}, got {kind!r}")
    if kind == "heatmap":
        return _heatmap(profile, title, base_size)
    if feature is None:
        feature = str(profile.effects().max(axis=1).idxmax())
    res = profile.result(feature)
    if kind == "lines":
        return _lines(profile, res, title, base_size)
    return _ice(profile, res, time, title, base_size)


def _x(res) -> tuple[np.ndarray, list[str] | None]:
    """The x positions of a 1-way result's grid, and its labels when the feature is categorical."""
    grid = res.grid_values[0]
    if res.categorical[0]:
        return np.arange(len(grid), dtype=np.float64), grid_labels(grid)
    return np.asarray(grid, dtype=np.float64), None


def _heatmap(profile, title, base_size):
    from plotnine import aes, geom_tile, ggplot, labs, scale_fill_gradient, scale_x_discrete, scale_y_discrete

    frame = profile.to_frame()
    shares = profile.shares
    order = list(dict.fromkeys(frame["feature"]))[::-1]  # the largest effect on top
    names = {f: f"{f}  ({shares[f]:.3f})" for f in order}
    frame["row"] = pd.Categorical(frame["feature"].map(names), categories=[names[f] for f in order])
    times = [f"{t:g}" for t in profile.times]
    frame["col"] = pd.Categorical([f"{t:g}" for t in frame["time"]], categories=times)
    return (ggplot(frame, aes("col", "row", fill="effect")) + geom_tile(color="white")
            + scale_fill_gradient(low="#f7fbff", high="#08306b", name="effect")
            + scale_x_discrete(name="time") + scale_y_discrete(name="feature (time-varying share)")
            + labs(title=title or f"Effect of each feature on the {_SCALE[profile.response]} over time",
                   caption="effect: the range of the feature's PD over its grid at that time")
            + theme_pdpx(base_size))


def _lines(profile, res, title, base_size):
    from plotnine import aes, geom_line, ggplot, labs, scale_color_cmap, scale_x_continuous

    x, labels = _x(res)
    curves = res.average.reshape(len(profile.times), -1)
    frame = pd.DataFrame({"x": np.tile(x, len(profile.times)), "yhat": curves.ravel(),
                          "time": np.repeat(np.asarray(profile.times, dtype=np.float64), len(x))})
    p = (ggplot(frame, aes("x", "yhat", color="time", group="time")) + geom_line(size=0.9)
         + scale_color_cmap("viridis", name="time")
         + labs(x=res.features[0], y=f"PD of the {_SCALE[profile.response]}",
                title=title or f"{res.features[0]}: partial dependence at each time")
         + theme_pdpx(base_size))
    if labels is not None:
        p += scale_x_continuous(breaks=list(x), labels=labels)
    return p


def _ice(profile, res, time, title, base_size):
    from plotnine import aes, geom_line, ggplot, labs, scale_x_continuous

    if res.individual is None:
        raise PdpxError("SurvivalProfile.plot(kind='ice'): this profile holds no ICE curves; compute it with "
                        "survival_profile(..., kind='both')")
    times = np.asarray(profile.times, dtype=np.float64)
    if time is None:
        k = len(times) // 2
    else:
        hits = np.flatnonzero(np.isclose(times, float(time), rtol=0, atol=0))
        if not hits.size:
            raise PdpxError(f"SurvivalProfile.plot(kind='ice'): time {time!r} is not one of the profile's times "
                            f"{[float(t) for t in times]}")
        k = int(hits[0])
    x, labels = _x(res)
    ice = res.individual[k].reshape(res.individual.shape[1], -1)
    if len(ice) > ICE_MAX:
        ice = ice[np.sort(np.random.default_rng(0).choice(len(ice), ICE_MAX, replace=False))]
    n = len(ice)
    curves = pd.DataFrame({"x": np.tile(x, n), "yhat": ice.ravel(), "row": np.repeat(np.arange(n), len(x))})
    pd_line = pd.DataFrame({"x": x, "yhat": res.average.reshape(len(times), -1)[k]})
    p = (ggplot(curves, aes("x", "yhat", group="row")) + geom_line(color=ICE_COLOR, alpha=0.25, size=0.3)
         + geom_line(pd_line, aes("x", "yhat"), inherit_aes=False, color=PD_COLOR, size=1.2)
         + labs(x=res.features[0], y=f"{_SCALE[profile.response]} at t = {times[k]:g}",
                title=title or f"{res.features[0]}: ICE curves at t = {times[k]:g}")
         + theme_pdpx(base_size))
    if labels is not None:
        p += scale_x_continuous(breaks=list(x), labels=labels)
    return p
