"""interval="jackknife" (pdpx.core.jackknife): the bias-corrected infinitesimal jackknife of the PD, against the
formula written out here from each member's own predict and the in-bag counts redrawn here by scikit-learn's own
sampling rule."""

from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    BaggingRegressor,
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.ensemble._bootstrap import _get_n_samples_bootstrap
from sklearn.ensemble._forest import _generate_sample_indices
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeRegressor

import pdpx


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(250, 4)), columns=["a", "b", "c", "d"])
    y = 2 * X["a"] + X["b"] ** 2 + X["a"] * X["c"] + rng.normal(scale=0.5, size=250)
    return X, y.to_numpy()


def member_pd(predict, X, feature, grid, columns=None):
    """A member's PD by definition: the feature set to each grid value on every row, the member's own predict on
    the array it was fitted on (``columns``: the ones a bagged member reads), averaged over the rows."""
    out = []
    for v in grid:
        A = X.assign(**{feature: v}).to_numpy()
        out.append(np.mean(np.asarray(predict(A if columns is None else A[:, columns]), dtype=float), axis=0))
    return np.array(out)


def forest_counts(forest, n, sample_weight=None):
    """In-bag counts (n, B) redrawn from each tree's seed by scikit-learn's own rule (as its fit draws them)."""
    n_boot = _get_n_samples_bootstrap(n, forest.max_samples, sample_weight)
    return np.stack([np.bincount(_generate_sample_indices(t.random_state, n, n_boot, sample_weight), minlength=n)
                     for t in forest.estimators_], axis=1)


def ij_reference(N, pds):
    """The bias-corrected infinitesimal jackknife written out: for each grid point, the sum over training rows of
    the squared covariance over the members of N_i and PD_b, minus n / B^2 times the sum of the squared centered
    member PDs (Wager et al.'s bootstrap correction, the issue's formula) when every member drew n rows out of n;
    for members that drew another number, n * (mean variance of the counts) / B^2 (forestci's correction)."""
    N = np.asarray(N, dtype=float)
    n, B = N.shape
    out = np.empty(pds.shape[1])
    full = all(N[:, b].sum() == n for b in range(B))
    v = 1.0 if full else np.mean([np.var(N[i]) for i in range(n)])  # population variance over the B members
    for g in range(pds.shape[1]):
        t = pds[:, g]
        cov = np.array([np.mean((N[i] - N[i].mean()) * (t - t.mean())) for i in range(n)])
        out[g] = np.sum(cov ** 2) - n * v / B ** 2 * np.sum((t - t.mean()) ** 2)
    return out


def check_band(res, pds, N, level=0.95):
    """``res``'s se, variance and band against the formula from the members' own PDs ``pds`` (B, grid)."""
    V = ij_reference(N, pds)
    se = np.sqrt(np.maximum(V, 0))
    z = NormalDist().inv_cdf((1 + level) / 2)
    np.testing.assert_allclose(res.variance[0], V, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.se[0], se, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.lower[0], res.average[0] - z * se, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.upper[0], res.average[0] + z * se, rtol=1e-12, atol=1e-12)
    assert np.sum(se > 0) >= len(se) // 2 and np.all(res.se[0][V < 0] == 0)  # a band; none where V < 0
    return V


@pytest.mark.parametrize("max_samples", [None, 0.5])
def test_forest_se_is_the_jackknife_of_its_trees_pds(data, max_samples):
    X, y = data
    m = RandomForestRegressor(n_estimators=60, max_depth=5, max_samples=max_samples, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=6, interval="jackknife", level=0.9)
    assert res.method == "exact" and res.n_train == len(X) and res.interval == 0.9
    pds = np.stack([member_pd(t.predict, X, "a", res.grid_values[0]) for t in m.estimators_])
    np.testing.assert_allclose(res.members[:, 0], pds, rtol=1e-12, atol=1e-12)  # pdpx's member PDs: the trees'
    np.testing.assert_allclose(res.average[0], pds.mean(axis=0), rtol=1e-12, atol=1e-12)
    N = forest_counts(m, len(X))
    check_band(res, pds, N, level=0.9)
    check_band(res, res.members[:, 0], N, level=0.9)  # from pdpx's own member PDs, to the same digits
    assert res.band.startswith("infinitesimal jackknife: 90% band, learner variance from one fit (60 trees")
    df = res.to_frame()
    np.testing.assert_allclose(df["se"], res.se[0], rtol=1e-12)
    assert "infinitesimal jackknife" in " ".join(res.notes)


def test_the_pd_over_other_rows_keeps_the_training_size(data):
    X, y = data
    m = RandomForestRegressor(n_estimators=40, max_depth=4, random_state=1).fit(X, y)
    new = X.iloc[:70] + 0.1  # any rows: the counts stay those of the 250 training rows
    res = pdpx.partial_dependence(m, new, "b", grid_resolution=5, interval="jackknife")
    pds = np.stack([member_pd(t.predict, new, "b", res.grid_values[0]) for t in m.estimators_])
    check_band(res, pds, forest_counts(m, len(X)))
    assert res.n_train == 250


def test_a_weighted_fit_and_a_classifier(data):
    X, y = data
    sw = np.random.default_rng(3).uniform(0.2, 2.0, len(X))
    m = RandomForestRegressor(n_estimators=40, max_depth=4, random_state=2).fit(X, y, sample_weight=sw)
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=5, interval="jackknife")
    pds = np.stack([member_pd(t.predict, X, "a", res.grid_values[0]) for t in m.estimators_])
    check_band(res, pds, forest_counts(m, len(X), sw))  # scikit-learn draws rows in proportion to the weights
    c = RandomForestClassifier(n_estimators=40, max_depth=4, random_state=0).fit(X, (y > 1).astype(int))
    res = pdpx.partial_dependence(c, X, "c", grid_resolution=5, interval="jackknife")
    pds = np.stack([member_pd(lambda A, t=t: t.predict_proba(A)[:, 1], X, "c", res.grid_values[0])
                    for t in c.estimators_])
    check_band(res, pds, forest_counts(c, len(X)))


def test_bagged_trees_and_bagged_models_by_brute_force(data):
    X, y = data
    n = len(X)
    bag = BaggingRegressor(DecisionTreeRegressor(max_depth=4), n_estimators=120, max_features=0.75,
                           random_state=0).fit(X, y)
    res = pdpx.partial_dependence(bag, X, "a", grid_resolution=5, interval="jackknife")
    pds = np.stack([member_pd(t.predict, X, "a", res.grid_values[0], columns=f)
                    for t, f in zip(bag.estimators_, bag.estimators_features_)])
    N = np.stack([np.bincount(s, minlength=n) for s in bag.estimators_samples_], axis=1)
    check_band(res, pds, N)
    small = X.iloc[:40]  # a stable learner: its Monte Carlo correction needs many members per training row
    ridge = BaggingRegressor(Ridge(), n_estimators=200, random_state=0).fit(small, y[:40])
    res = pdpx.partial_dependence(ridge, small, "b", grid_resolution=4, interval="jackknife")
    assert res.method == "brute"
    pds = np.stack([member_pd(e.predict, small, "b", res.grid_values[0]) for e in ridge.estimators_])
    check_band(res, pds, np.stack([np.bincount(s, minlength=40) for s in ridge.estimators_samples_], axis=1))


def test_formula_against_a_direct_sum_and_a_pipeline(data):
    X, y = data
    from pdpx.core.jackknife import ij_variance

    rng = np.random.default_rng(0)
    N = rng.poisson(1.0, size=(40, 15))
    curves = rng.normal(size=(15, 2, 3))
    np.testing.assert_allclose(ij_variance(N, curves).reshape(-1),
                               ij_reference(N, curves.reshape(15, -1)), rtol=1e-12, atol=1e-14)
    from pdpx.core import jackknife

    old, jackknife.BLOCK_ROWS = jackknife.BLOCK_ROWS, 7  # the training rows a block at a time
    try:
        np.testing.assert_allclose(ij_variance(N.astype(np.uint16), curves).reshape(-1),
                                   ij_reference(N, curves.reshape(15, -1)), rtol=1e-12, atol=1e-14)
    finally:
        jackknife.BLOCK_ROWS = old
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=30, max_depth=4, random_state=0))
    pipe.fit(X, y)
    res = pdpx.partial_dependence(pipe, X, "d", grid_resolution=4, interval="jackknife")
    scaled = pipe[0]
    pds = np.stack([member_pd(lambda A, t=t: t.predict(scaled.transform(pd.DataFrame(A, columns=X.columns))),
                              X, "d", res.grid_values[0]) for t in pipe[-1].estimators_])
    check_band(res, pds, forest_counts(pipe[-1], len(X)))


def test_models_without_in_bag_counts_are_refused(data):
    X, y = data
    cases = [
        (ExtraTreesRegressor(n_estimators=5, random_state=0), "bootstrap=False: each member saw every row"),
        (GradientBoostingRegressor(n_estimators=5), "a GradientBoostingRegressor has none"),
        (KNeighborsRegressor(), "a KNeighborsRegressor has none"),
        (BaggingRegressor(DecisionTreeRegressor(), n_estimators=4, bootstrap=False, max_samples=0.5,
                          random_state=0), "bootstrap=False"),
    ]
    for model, why in cases:
        model.fit(X, y)
        with pytest.raises(pdpx.PdpxError, match=f"interval='jackknife': .*{why}"):
            pdpx.partial_dependence(model, X, "a", grid_resolution=4, interval="jackknife")

    def f(A):
        return np.asarray(A)[:, 0]
    with pytest.raises(pdpx.PdpxError, match="cannot read them from a function"):
        pdpx.partial_dependence(f, X, "a", grid_resolution=4, interval="jackknife")
    forest = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(pdpx.PdpxError, match="by= cannot be combined"):
        pdpx.partial_dependence(forest, X, "a", interval="jackknife", by="b")
    with pytest.raises(pdpx.PdpxError, match="for a dict of refit models use interval='members'"):
        pdpx.partial_dependence({"a": forest, "b": forest}, X, "a", interval="jackknife")
    with pytest.raises(pdpx.PdpxError, match="one feature set per call"):
        pdpx.partial_dependence_many(forest, X, ["a"], interval="jackknife")


def test_the_band_is_drawn_with_its_meaning(data):
    pytest.importorskip("plotnine")
    from pdpx.outputs.plot import layer_names

    X, y = data
    m = RandomForestRegressor(n_estimators=40, max_depth=4, random_state=0).fit(X, y)
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=5, interval="jackknife")
    p = res.plot()
    assert "shaded: infinitesimal jackknife: 95% band, learner variance from one fit (40 trees" in p.labels.caption
    assert "pd_interval" in layer_names(p)
    assert "infinitesimal jackknife" in res._repr_html_()


def test_a_pipeline_whose_trees_cannot_be_read_is_refused_for_the_jackknife(data):
    from sklearn.decomposition import PCA

    X, y = data
    pipe = make_pipeline(PCA(), RandomForestRegressor(n_estimators=10, random_state=0)).fit(X, y)
    with pytest.raises(pdpx.PdpxError, match="interval='jackknife' reads the forest's members as "
                                             "interval='members' does, which refused"):
        pdpx.partial_dependence(pipe, X, "a", grid_resolution=4, interval="jackknife")
