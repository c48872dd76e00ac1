"""Derivative ICE against ICE computed by brute force here, differenced with numpy.gradient."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingClassifier
from stacked import predict_copies

import pdpx
from pdpx.core.errors import PdpxError


def brute_ice(predict, X, col, grid):
    """ICE by hand: (n_outputs, n_rows, n_grid)."""
    copies = []
    for v in grid:
        Xv = X.copy()
        Xv[col] = v
        copies.append(Xv)
    curves = [np.asarray(p).reshape(len(X), -1) for p in predict_copies(predict, copies)]
    return np.stack(curves, axis=-1).transpose(1, 0, 2)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x1": rng.uniform(-1, 1, 300), "x2": rng.normal(1, 2, 300), "x3": rng.uniform(size=300)})
    return X


def test_tree_model_equals_gradient_of_brute_ice(data):
    X = data
    y = X.x1 ** 2 + X.x1 * X.x2 + X.x3
    model = GradientBoostingRegressor(n_estimators=40, random_state=0).fit(X, y)
    res = pdpx.derivative_ice(model, X, "x1", grid_resolution=25)
    assert res.method == "exact"  # the ICE curves come from the exact engine on trees
    grid = res.grid_values[0]
    ice = brute_ice(model.predict, X, "x1", grid)
    d = np.gradient(ice, grid, axis=-1)
    np.testing.assert_allclose(res.individual, d, atol=1e-9)
    np.testing.assert_allclose(res.average, d.mean(axis=1), atol=1e-9)
    np.testing.assert_allclose(res.sd, d.std(axis=1, ddof=1), atol=1e-9)


def test_centred_inside_one_sided_at_the_ends(data):
    X = data
    f = lambda d: np.sin(3 * d["x1"]) * d["x2"]
    res = pdpx.derivative_ice(f, X, "x1", custom_values={"x1": [-0.5, -0.2, 0.0, 0.4, 0.5]})
    g = np.array([-0.5, -0.2, 0.0, 0.4, 0.5])
    ice = brute_ice(f, X, "x1", g)[0]
    # ends: one-sided first differences
    np.testing.assert_allclose(res.individual[0, :, 0], (ice[:, 1] - ice[:, 0]) / 0.3, atol=1e-12)
    np.testing.assert_allclose(res.individual[0, :, -1], (ice[:, -1] - ice[:, -2]) / 0.1, atol=1e-12)
    # inside, on an even stretch (-0.5, -0.2 ... not even; use the point 0.0 between -0.2 and 0.4 by formula)
    h1, h2 = 0.2, 0.4
    inner = (h1 ** 2 * ice[:, 3] - h2 ** 2 * ice[:, 1] + (h2 ** 2 - h1 ** 2) * ice[:, 2]) / (h1 * h2 * (h1 + h2))
    np.testing.assert_allclose(res.individual[0, :, 2], inner, atol=1e-12)


def test_additive_model_has_zero_sd(data):
    X = data
    res = pdpx.derivative_ice(lambda d: d["x1"] ** 3 + 2 * d["x2"] - d["x3"], X, "x1", grid_resolution=15)
    np.testing.assert_allclose(res.sd, 0, atol=1e-12)
    np.testing.assert_allclose(res.individual, np.broadcast_to(res.average[:, None, :], res.individual.shape), atol=1e-12)  # every row the same slope


def test_product_sd_is_the_sd_of_the_other_feature(data):
    X = data
    res = pdpx.derivative_ice(lambda d: d["x1"] * d["x2"], X, "x1", grid_resolution=10)
    # d(x1 * x2)/dx1 = x2 for every grid point: the rows' slopes are their x2, the mean slope is mean(x2)
    np.testing.assert_allclose(res.individual[0], np.repeat(X.x2.to_numpy()[:, None], 10, axis=1), atol=1e-10)
    np.testing.assert_allclose(res.sd[0], np.full(10, X.x2.std(ddof=1)), rtol=1e-10)
    np.testing.assert_allclose(res.average[0], np.full(10, X.x2.mean()), rtol=1e-10)


def test_weighted_sd_and_mean(data):
    X = data
    w = np.random.default_rng(2).uniform(0.1, 2, len(X))
    res = pdpx.derivative_ice(lambda d: d["x1"] * d["x2"], X, "x1", grid_resolution=5, sample_weight=w)
    x2 = X.x2.to_numpy()
    m = np.sum(w * x2) / w.sum()
    v = np.sum(w * (x2 - m) ** 2) / (w.sum() - np.sum(w ** 2) / w.sum())
    np.testing.assert_allclose(res.average[0], m, rtol=1e-10)
    np.testing.assert_allclose(res.sd[0], np.sqrt(v), rtol=1e-10)


def test_kind_derivative_routes_here(data):
    X = data
    y = (X.x1 * X.x2 > 0).astype(int)
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(model, X, "x1", kind="derivative", grid_resolution=12)
    direct = pdpx.derivative_ice(model, X, "x1", grid_resolution=12)
    ice = brute_ice(lambda d: model.predict_proba(d)[:, 1], X, "x1", res.grid_values[0])
    np.testing.assert_allclose(res.individual, np.gradient(ice, res.grid_values[0], axis=-1), atol=1e-9)
    np.testing.assert_allclose(res.sd, direct.sd)
    df = res.to_frame()
    assert list(df.columns[-2:]) == ["yhat", "sd"]
    avg = df[df["kind"] == "average"]
    np.testing.assert_allclose(avg["sd"], res.sd[0])
    assert df.loc[df["kind"] == "individual", "sd"].isna().all()


def test_ice_sample_keeps_the_average_over_every_row(data):
    X = data
    f = lambda d: d["x1"] * d["x2"]
    res = pdpx.derivative_ice(f, X, "x1", grid_resolution=6, ice_sample=40, random_state=3)
    assert res.individual.shape == (1, 40, 6)
    np.testing.assert_allclose(res.average[0], X.x2.mean(), rtol=1e-10)
    np.testing.assert_allclose(res.sd[0], X.x2.to_numpy()[res.ice_rows].std(ddof=1), rtol=1e-10)


def test_refusals(data):
    X = data.assign(c=np.where(data.x1 > 0, "a", "b"))
    f = lambda d: d["x1"]
    with pytest.raises(PdpxError, match="is categorical"):
        pdpx.derivative_ice(f, X, "c")
    with pytest.raises(PdpxError, match="one numeric feature; got 2"):
        pdpx.partial_dependence(f, X, ["x1", "x2"], kind="derivative")
    with pytest.raises(PdpxError, match="by= is not supported"):
        pdpx.partial_dependence(f, X, "x1", kind="derivative", by="c")
    with pytest.raises(PdpxError, match="kind must be 'derivative'"):
        pdpx.derivative_ice(f, X, "x1", kind="both")
    with pytest.raises(PdpxError, match="include_missing=True"):
        pdpx.derivative_ice(f, X, "x1", include_missing=True)
    with pytest.raises(PdpxError, match=r"kind.*'derivative'"):  # the accepted values name the new kind
        pdpx.partial_dependence(f, X, "x1", kind="slopes")
    with pytest.raises(PdpxError, match="unknown option"):
        pdpx.derivative_ice(f, X, "x1", grid_res=5)
    # partial_dependence_many keeps the Session kinds only
    with pytest.raises(PdpxError, match="kind"):
        pdpx.partial_dependence_many(f, X, ["x1"], kind="derivative")


def test_plot(data, tmp_path):
    pytest.importorskip("plotnine")
    from pdpx.outputs.plot import layer_data, layer_names

    res = pdpx.derivative_ice(lambda d: d["x1"] * d["x2"], data, "x1", grid_resolution=8)
    p = res.plot(n_ice=20)
    assert layer_names(p) == ["zero", "dice", "mean_derivative", "sd", "rug"]
    assert layer_data(p, "dice")["group"].nunique() == 20
    res.save(tmp_path / "dice.png")
