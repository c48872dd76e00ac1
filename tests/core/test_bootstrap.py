"""A dict of models, and the bootstrap interval, against direct computations."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import Ridge
from view_data import data_with_missing, direct_ice

import pdpx


@pytest.fixture(scope="module")
def three():
    X, y = data_with_missing(seed=9)
    X = X[["a", "b"]].fillna(0.0)
    models = {
        "hgb": HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, y),
        "forest": RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y),
        "ridge": Ridge().fit(X, y),
    }
    return models, X


def test_dict_of_models(three):
    models, X = three
    res = pdpx.partial_dependence(models, X, "a", grid_resolution=6, kind="both")
    assert res.labels == ["hgb", "forest", "ridge"]
    assert res.method == {"hgb": "exact", "forest": "exact", "ridge": "brute"}  # each its fastest exact method
    for name, m in models.items():
        np.testing.assert_array_equal(res[name].grid_values[0], res.grid_values[0])
        ice = direct_ice(m.predict, X, "a", res.grid_values[0])
        np.testing.assert_allclose(res[name].average[0], ice.mean(0), rtol=1e-10)
    df = res.to_frame(kind="average")
    assert list(df.columns[:2]) == ["feature_set", "model"]
    assert df.groupby("model", observed=True).size().tolist() == [6, 6, 6]
    with pytest.raises(pdpx.PdpxError, match="model 'bad'"):
        pdpx.partial_dependence({"ok": models["ridge"], "bad": "not a model"}, X, "a")
    with pytest.raises(pdpx.PdpxError, match="cannot be combined"):
        pdpx.partial_dependence(models, X, "a", by="b")


def _replicates(ice, w, n_boot, seed):
    """The documented resampling, written out: n draws with replacement per replicate."""
    n = ice.shape[0]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_boot):
        idx = rng.integers(0, n, size=n)
        out.append((w[idx, None] * ice[idx]).sum(0) / w[idx].sum())
    return np.array(out)


@pytest.mark.parametrize("weighted", [False, True])
def test_interval_is_the_percentile_bootstrap(three, weighted):
    models, X = three
    m = models["hgb"]
    w = np.random.default_rng(1).uniform(0.2, 3.0, len(X)) if weighted else None
    res = pdpx.partial_dependence(m, X, "b", grid_resolution=5, interval=0.9, n_boot=40, random_state=7,
                                  sample_weight=w)
    assert res.individual is None and res.interval == 0.9
    ice = direct_ice(m.predict, X, "b", res.grid_values[0])
    reps = _replicates(ice, np.ones(len(X)) if w is None else w, 40, 7)
    lo, hi = np.quantile(reps, [0.05, 0.95], axis=0)
    np.testing.assert_allclose(res.lower[0], lo, rtol=1e-9)
    np.testing.assert_allclose(res.upper[0], hi, rtol=1e-9)
    assert np.all(res.lower[0] <= res.average[0] + 1e-12) and np.all(res.average[0] <= res.upper[0] + 1e-12)
    df = res.to_frame()
    np.testing.assert_allclose(df["lower"], lo, rtol=1e-9)


def test_interval_with_ice_sample_and_centering(three):
    models, X = three
    m = models["forest"]
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=4, interval=0.8, n_boot=30, random_state=3,
                                  kind="both", ice_sample=25, centered=True)
    ice = direct_ice(m.predict, X, "a", res.grid_values[0])
    np.testing.assert_allclose(res.individual[0], (ice - ice[:, :1])[res.ice_rows], atol=1e-10)
    centered = ice - ice[:, :1]
    # replicates come after the ice_sample draw from the same seed: redo both
    rng_seed = 3
    reps = []
    n = len(X)
    rng = np.random.default_rng(rng_seed)
    rng.choice(n, size=25, replace=False)
    rng2 = np.random.default_rng(rng_seed)
    for _ in range(30):
        idx = rng2.integers(0, n, size=n)
        reps.append(centered[idx].mean(0))
    lo, hi = np.quantile(np.array(reps), [0.1, 0.9], axis=0)
    np.testing.assert_allclose(res.lower[0], lo, atol=1e-10)
    np.testing.assert_allclose(res.upper[0], hi, atol=1e-10)
    assert res.lower[0, 0] == 0 and res.upper[0, 0] == 0  # centered: no spread at the first point


def test_interval_errors(three):
    models, X = three
    with pytest.raises(pdpx.PdpxError, match="interval"):
        pdpx.partial_dependence(models["ridge"], X, "a", interval=1.5)
    with pytest.raises(pdpx.PdpxError, match="n_boot"):
        pdpx.partial_dependence(models["ridge"], X, "a", interval=0.9, n_boot=1)
