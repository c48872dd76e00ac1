"""Figures of issue 19's views: what is drawn, checked on the built layers."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from view_data import data_with_missing

import pdpx
from pdpx.outputs.plot import layer_data, layer_names

pytest.importorskip("plotnine", reason="plotnine is not installed")


@pytest.fixture(scope="module")
def fitted():
    X, y = data_with_missing(seed=11)
    return HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, y), X


def test_missing_point_ribbon_and_ticks(fitted):
    model, X = fitted
    res = pdpx.partial_dependence(model, X, "a", kind="both", grid_resolution=6, interval=0.9, n_boot=30)
    p = res.plot()
    names = layer_names(p)
    assert {"ice", "ice_points", "pd_interval", "pd_interval_points", "pd_line", "pd_categories"} <= set(names)
    line = layer_data(p, "pd_line")
    assert len(line) == 6 and np.isfinite(line["x"]).all()  # the missing point is not on the line
    point = layer_data(p, "pd_categories")
    assert len(point) == 1 and point["x"].iloc[0] > line["x"].max()
    assert point["y"].iloc[0] == pytest.approx(res.average[0, -1])
    ribbon = layer_data(p, "pd_interval")
    np.testing.assert_allclose(np.sort(ribbon["ymin"].to_numpy()), np.sort(res.lower[0, :-1]))
    built = p.draw()
    labels = [t.get_text() for t in built.axes[0].get_xticklabels()]
    assert labels[-1] == "missing"
    import matplotlib.pyplot as plt

    plt.close(built)


def test_bands_are_ice_quantiles(fitted):
    model, X = fitted
    res = pdpx.partial_dependence(model, X, "b", kind="both", grid_resolution=5)
    p = res.plot(bands=(0.1, 0.9))
    assert "ice" not in layer_names(p) and "ice_band" in layer_names(p)
    band = layer_data(p, "ice_band")
    q = np.quantile(res.individual[0], [0.1, 0.9], axis=0)
    np.testing.assert_allclose(np.sort(band["ymin"].to_numpy()), np.sort(q[0]))
    np.testing.assert_allclose(np.sort(band["ymax"].to_numpy()), np.sort(q[1]))
    with pytest.raises(pdpx.PdpxError, match="bands"):
        res.plot(bands=(0.9, 0.1))


def test_color_by_continuous_and_categorical(fitted):
    model, X = fitted
    res = pdpx.partial_dependence(model, X, "b", kind="both", grid_resolution=5, ice_sample=30)
    p = res.plot(color_by="a")
    ice = layer_data(p, "ice")
    assert ice["color"].nunique() > 5
    pg = res.plot(color_by="g")
    drawn = layer_data(pg, "ice")
    assert drawn["color"].nunique() == X["g"].iloc[res.ice_rows].nunique() == 3
    assert (drawn.groupby("group")["color"].nunique() == 1).all()  # one colour per curve
    with pytest.raises(pdpx.PdpxError, match="color_by='nope' is not a column"):
        res.plot(color_by="nope")


def test_overlay_of_groups_and_models(fitted):
    model, X = fitted
    res = pdpx.partial_dependence(model, X, "a", by="g", grid_resolution=5, interval=0.9, n_boot=20)
    p = res.plot()
    assert {"pd_interval", "pd_line", "pd_categories"} <= set(layer_names(p))
    line = layer_data(p, "pd_line")
    assert line["color"].nunique() == 3
    models = {"deep": model, "shallow": HistGradientBoostingRegressor(max_iter=3).fit(X, np.arange(len(X)))}
    cmp = pdpx.partial_dependence(models, X, "b", grid_resolution=5)
    assert layer_data(cmp.plot(), "pd_line")["color"].nunique() == 2
    with pytest.raises(pdpx.PdpxError, match="do not apply"):
        cmp.plot(n_ice=10)


def test_ice_colours_follow_the_rows(fitted):
    from pdpx.outputs.plot_bands import ice_colours

    model, X = fitted
    res = pdpx.partial_dependence(model, X, "b", kind="individual", grid_resolution=3, ice_sample=20, random_state=4)
    ice = res.to_frame()
    values, continuous = ice_colours([res], ice, "a")
    assert continuous
    np.testing.assert_array_equal(values.to_numpy(), X["a"].to_numpy()[ice["row"].astype(int)])
    labels, continuous = ice_colours([res], ice, "g")
    assert not continuous
    np.testing.assert_array_equal(labels.astype(str).to_numpy(), X["g"].astype(str).to_numpy()[ice["row"].astype(int)])
