"""Figures of the measures (importance bars, H heatmaps): what they show fits on the page."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine", reason="plotnine is not installed (pip install 'pdpx[plot]')")

from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402

import pdpx  # noqa: E402

matplotlib.use("Agg")


@pytest.mark.parametrize("n_features", [2, 3, 6])
def test_the_h_heatmaps_title_lies_inside_the_figure(n_features):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, n_features)), columns=[f"x{j}" for j in range(n_features)])
    y = X["x0"] * X["x1"] + X.sum(axis=1)
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    h = pdpx.h_statistic(model, X)
    fig = h.plot().draw()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    page = fig.get_window_extent(renderer)
    titles = [t for t in fig.findobj(matplotlib.text.Text) if "Friedman's H)" in t.get_text()]
    assert titles, "the heatmap has its title"
    box = titles[0].get_window_extent(renderer)
    assert page.x0 <= box.x0 and box.x1 <= page.x1, (box, page)
    matplotlib.pyplot.close(fig)
