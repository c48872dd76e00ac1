"""``geom_curves``: plotnine's ``geom_line`` for many curves of one style (ICE curves), drawn in one go.

plotnine draws a line layer group by group, and per group it slices and transforms a
data frame: about 2.5 ms a curve, so a figure's 100 ICE curves took a quarter of a
second, most of a report's drawing time. When every group's style (colour, size,
line type, alpha) is constant within the group, the coordinates are linear and no
arrow is drawn, ``geom_curves`` transforms the layer's data once and adds, per
curve, the same matplotlib ``Line2D`` that ``geom_line`` adds (same points, colour,
width, join and cap style, z-order, in the same order), so the figure is the same
pixel for pixel. Any other layer goes through ``geom_line``'s own drawing.

Imports plotnine: load this module only when drawing.
"""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from plotnine import geom_line

try:  # the line width factor and colour conversion geom_line itself uses (hex alpha), for identical pixels
    from plotnine._utils import SIZE_FACTOR, to_rgba
except ImportError:  # pragma: no cover - a plotnine that moved them: draw every layer as geom_line does
    SIZE_FACTOR = to_rgba = None
#: plotnine's names of join and cap styles that matplotlib spells differently.
_JOIN = {"mitre": "miter"}
_CAP = {"square": "projecting"}


class geom_curves(geom_line):  # noqa: N801 - named like the plotnine geoms it stands for
    """``geom_line`` that draws the curves of a constant style without a data frame per curve."""

    def draw_panel(self, data, panel_params, coord, ax):
        fast = (to_rgba is not None and coord.is_linear and not self.params.get("arrow") and len(data) >= 2
                and set(data["linetype"].unique()) == {"solid"})
        if fast:
            _, inverse, counts = np.unique(data["group"].to_numpy(), return_inverse=True, return_counts=True)
            data = data[counts[inverse.reshape(-1)] >= 2]  # as geom_path: lines of two points or more
            fast = len(data) >= 2
        if fast:
            data = data.sort_values("group", kind="mergesort").reset_index(drop=True)
            style = [c for c in ("color", "size", "linetype", "alpha") if c in data.columns]
            fast = len(data.drop_duplicates(style + ["group"])) == data["group"].nunique()
        if not fast:
            return super().draw_panel(data, panel_params, coord, ax)
        data = coord.transform(data, panel_params, munch=True)
        group = data["group"].to_numpy()
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        ends = np.r_[starts[1:], len(group)]
        x, y = data["x"].to_numpy(), data["y"].to_numpy()
        color, alpha, size = data["color"].to_numpy(), data["alpha"].to_numpy(), data["size"].to_numpy()
        join = self.params.get("linejoin", "miter")
        cap = self.params.get("lineend", "butt")
        style = dict(linestyle="solid", zorder=self.params["zorder"], rasterized=self.params["raster"],
                     solid_joinstyle=_JOIN.get(join, join), solid_capstyle=_CAP.get(cap, cap))
        for a, b in zip(starts, ends):
            ax.add_artist(Line2D(x[a:b], y[a:b], color=to_rgba(color[a], float(alpha[a])),
                                 linewidth=size[a] * SIZE_FACTOR, **style))
