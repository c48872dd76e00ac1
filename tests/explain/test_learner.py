"""interval="learner" (pdpx.Refits) and pdpx.cross_fitted against the formula computed here by hand: each model's PD
checked against brute force (the column set to each grid value, the model's own predict), then the mean, the
Nadeau-Bengio corrected variance and the t band."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pdpx
from pdpx.core.errors import PdpxError

sklearn = pytest.importorskip("sklearn")
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

GRID = {"a": np.linspace(0.1, 0.9, 5)}


def pd_by_brute(model, X, feature, grid):
    """The PD by its definition: the mean over the rows of the prediction with ``feature`` set to each value."""
    out = []
    for v in grid:
        Z = X.copy()
        Z[feature] = v
        out.append(model.predict(Z).mean())
    return np.asarray(out)


def band_by_hand(curves, ratio, level):
    K = len(curves)
    mean = curves.mean(axis=0)
    s2 = ((curves - mean) ** 2).sum(axis=0) / (K - 1)
    se = np.sqrt((1 / K + ratio) * s2)
    t = stats.t.ppf(0.5 + level / 2, K - 1)
    return mean, se, mean - t * se, mean + t * se


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.uniform(size=(160, 3)), columns=["a", "b", "c"])
    y = 2 * X.a + np.sin(4 * X.b) * X.a + rng.normal(scale=0.3, size=160)
    return X, y


@pytest.fixture(scope="module")
def folds(data):
    return list(KFold(4, shuffle=True, random_state=0).split(data[0]))


@pytest.fixture(scope="module")
def refits(data, folds):
    X, y = data
    return {f"fold{k}": RandomForestRegressor(20, max_depth=4, random_state=k).fit(X.iloc[tr], y.iloc[tr])
            for k, (tr, _) in enumerate(folds)}


def test_learner_band_is_the_formula_from_each_models_pd(data, folds, refits):
    X, _ = data
    res = pdpx.partial_dependence(pdpx.Refits(refits, folds=folds), X, "a", interval="learner", level=0.9,
                                  custom_values=GRID)
    curves = []
    for m in refits.values():
        own = pdpx.partial_dependence(m, X, "a", custom_values=GRID).average[0]
        np.testing.assert_allclose(own, pd_by_brute(m, X, "a", GRID["a"]), rtol=1e-12, atol=1e-12)
        curves.append(own)
    curves = np.asarray(curves)
    ratio = np.mean([len(te) / len(tr) for tr, te in folds])  # 40 / 120 each
    mean, se, lo, hi = band_by_hand(curves, ratio, 0.9)
    assert isinstance(res, pdpx.LearnerResult)
    np.testing.assert_allclose(res.members[:, 0], curves, rtol=1e-12)
    np.testing.assert_allclose(res.average[0], mean, rtol=1e-12)
    np.testing.assert_allclose(res.se[0], se, rtol=1e-12)
    np.testing.assert_allclose(res.lower[0], lo, rtol=1e-12)
    np.testing.assert_allclose(res.upper[0], hi, rtol=1e-12)
    assert res.correction == pytest.approx(1 / 4 + 1 / 3)
    frame = res.to_frame()
    np.testing.assert_allclose(frame["lower"], lo, rtol=1e-12)
    assert "learner" in frame.attrs["band"]


def test_train_fraction_gives_the_same_band_as_the_folds(data, folds, refits):
    X, _ = data
    a = pdpx.partial_dependence(pdpx.Refits(refits, folds=folds), X, "a", interval="learner", custom_values=GRID)
    b = pdpx.partial_dependence(pdpx.Refits(refits, train_fraction=0.75), X, "a", interval="learner",
                                custom_values=GRID)
    np.testing.assert_allclose(a.upper, b.upper, rtol=1e-12)
    assert a.interval == 0.95


def test_learner_refuses_a_plain_dict_and_bad_fractions(data, refits):
    X, _ = data
    with pytest.raises(PdpxError, match="Refits"):
        pdpx.partial_dependence(refits, X, "a", interval="learner")
    with pytest.raises(PdpxError, match="strictly between 0 and 1"):
        pdpx.Refits(refits, train_fraction=1.0)
    with pytest.raises(PdpxError, match="one of them"):
        pdpx.Refits(refits)
    with pytest.raises(PdpxError, match="3 \\(train, test\\) pairs for 4 models"):
        pdpx.Refits(refits, folds=[([0], [1])] * 3)
    with pytest.raises(PdpxError, match="kind='individual'"):
        pdpx.partial_dependence(pdpx.Refits(refits, train_fraction=0.5), X, "a", interval="learner",
                                kind="individual")


def test_cross_fitted_is_the_mean_of_the_folds_pd_on_their_held_out_rows(data, folds):
    X, y = data
    est = Ridge(alpha=0.5)
    res = pdpx.cross_fitted(est, X, y, "a", folds=folds, level=0.8, custom_values=GRID)
    curves = []
    for (tr, te), m in zip(folds, res.models.values()):
        ref = Ridge(alpha=0.5).fit(X.iloc[tr], y.iloc[tr])
        np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-12)
        curves.append(pd_by_brute(ref, X.iloc[te], "a", GRID["a"]))
    curves = np.asarray(curves)
    mean, se, lo, hi = band_by_hand(curves, 1 / 3, 0.8)
    np.testing.assert_allclose(res.average[0], mean, rtol=1e-10)
    np.testing.assert_allclose(res.se[0], se, rtol=1e-10)
    np.testing.assert_allclose(res.lower[0], lo, rtol=1e-10)
    np.testing.assert_allclose(res.upper[0], hi, rtol=1e-10)
    assert res.n_rows == len(X) and len(res.folds) == 4


def test_cross_fitted_builds_one_grid_from_all_rows_and_seeds_its_folds(data):
    X, y = data
    make = lambda: RandomForestRegressor(10, max_depth=3, random_state=0)  # a factory: called per fold
    a = pdpx.cross_fitted(make, X, y, "b", folds=3, grid_resolution=7, random_state=5)
    b = pdpx.cross_fitted(make, X, y, "b", folds=3, grid_resolution=7, random_state=5)
    whole = pdpx.partial_dependence(make().fit(X, y), X, "b", grid_resolution=7)
    np.testing.assert_array_equal(a.grid_values[0], whole.grid_values[0])
    np.testing.assert_array_equal(a.average, b.average)
    tests = np.sort(np.concatenate([te for _, te in a.folds]))
    np.testing.assert_array_equal(tests, np.arange(len(X)))  # every row held out once
    assert sorted(len(te) for _, te in a.folds) == [53, 53, 54]
    for k, ((_, te), m) in enumerate(zip(a.folds, a.models.values())):  # each fold's PD: on its held-out rows
        np.testing.assert_allclose(pd_by_brute(m, X.iloc[te], "b", a.grid_values[0]), a.members[k, 0], rtol=1e-10)


def test_cross_fitted_refuses_bad_folds(data):
    X, y = data
    with pytest.raises(PdpxError, match="did not see"):
        pdpx.cross_fitted(Ridge(), X, y, "a", folds=[(np.arange(100), np.arange(90, 160))] * 2)
    with pytest.raises(PdpxError, match="folds=1"):
        pdpx.cross_fitted(Ridge(), X, y, "a", folds=1)
    with pytest.raises(PdpxError, match="do not apply"):
        pdpx.cross_fitted(Ridge(), X, y, "a", interval=0.9)
    with pytest.raises(PdpxError, match="one target per row"):
        pdpx.cross_fitted(Ridge(), X, y[:10], "a")
    with pytest.raises(PdpxError, match="no fit method"):
        pdpx.cross_fitted(lambda: 3, X, y, "a")
