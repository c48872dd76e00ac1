"""compare_methods: exact equals brute, recursion equals scikit-learn's, and the degenerate tree of the docs."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.inspection import partial_dependence as sk_pd
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

import pdpx
from pdpx.core.errors import ExtrapolationWarning, PdpxError


def degenerate():
    """Two correlated features; y = 1700 at (1, 0) (one row), 200 at (1, 1) (4 rows), 0 elsewhere."""
    X = pd.DataFrame({"x1": [0, 0, 0, 0, 0, 1, 1, 1, 1, 1], "x2": [0, 0, 0, 0, 1, 0, 1, 1, 1, 1]}, dtype=float)
    y = np.array([0, 0, 0, 0, 0, 1700, 200, 200, 200, 200], dtype=float)
    return X, y, DecisionTreeRegressor(random_state=0).fit(X, y)


def test_degenerate_tree_500_against_950():
    X, y, tree = degenerate()
    t = tree.tree_
    assert t.feature[0] == 0  # the root splits on x1, its right child on x2
    cmp = pdpx.compare_methods(tree, X, "x1")
    frame = cmp.to_frame()
    assert list(frame["x_1"]) == [0.0, 1.0]
    np.testing.assert_allclose(frame["exact"], [0.0, 950.0])
    np.testing.assert_allclose(frame["recursion"], [0.0, 500.0])
    np.testing.assert_allclose(frame["difference"], [0.0, -450.0])
    # brute's answer written out: every row with x1 = 1, predicted, averaged
    np.testing.assert_allclose(tree.predict(X.assign(x1=1.0)).mean(), 950.0)
    s = cmp.summary().iloc[0]
    assert s["max_abs_difference"] == 450.0 and s["at"] == "x1 = 1"
    assert s["exact_at"] == 950.0 and s["recursion_at"] == 500.0


@pytest.fixture(scope="module")
def friedman():
    rng = np.random.default_rng(0)
    x1 = rng.uniform(size=400)
    X = pd.DataFrame({"a": x1, "b": x1 + rng.normal(0, 0.1, 400), "c": rng.uniform(size=400)})
    y = X.a * 3 + np.sin(4 * X.b) + X.a * X.c
    return X, y


@pytest.mark.parametrize("make", [lambda: DecisionTreeRegressor(max_depth=6, random_state=0),
                                  lambda: RandomForestRegressor(n_estimators=15, max_depth=6, random_state=0)])
def test_exact_is_brute_and_recursion_is_sklearns(friedman, make):
    X, y = friedman
    model = make().fit(X, y)
    with pytest.warns(ExtrapolationWarning, match="'b'") as caught:  # b = a + noise: the warning is right
        cmp = pdpx.compare_methods(model, X, "b", grid_resolution=20)
    assert sum(issubclass(w.category, ExtrapolationWarning) for w in caught) == 1  # once, not once per method
    grid = cmp.exact.grid_values[0]
    brute = np.array([model.predict(X.assign(b=v)).mean() for v in grid])
    np.testing.assert_allclose(cmp.exact.average[0], brute, atol=1e-9)
    sk = sk_pd(model, X, ["b"], method="recursion", custom_values={"b": grid})
    np.testing.assert_allclose(cmp.recursion.average[0], sk["average"][0], atol=1e-9)
    df = cmp.to_frame()
    np.testing.assert_allclose(df["difference"], sk["average"][0] - brute, atol=1e-9)
    assert np.abs(df["difference"]).max() > 1e-3  # correlated a, b: the two part


def test_two_features_and_boosting_offset(friedman):
    X, y = friedman
    model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    cmp = pdpx.compare_methods(model, X, ["a", "c"], grid_resolution=6)
    g1, g2 = cmp.exact.grid_values
    sk = sk_pd(model, X, ["a", "c"], method="recursion", custom_values={"a": g1, "c": g2})
    # scikit-learn leaves out the initial prediction of boosting; pdpx adds it back (docs/methods.md)
    np.testing.assert_allclose(cmp.recursion.average[0], sk["average"][0] + model.init_.constant_[0, 0], atol=1e-9)
    brute = np.array([[model.predict(X.assign(a=u, c=v)).mean() for v in g2] for u in g1])
    np.testing.assert_allclose(cmp.exact.average[0], brute, atol=1e-9)
    assert len(cmp.to_frame()) == 36


def test_refusals(friedman):
    X, y = friedman
    linear = LinearRegression().fit(X, y)
    with pytest.raises(PdpxError, match="compare_methods\\(\\): recursion cannot run for LinearRegression"):
        pdpx.compare_methods(linear, X, "a")
    tree = DecisionTreeRegressor(max_depth=3).fit(X, y)
    with pytest.raises(PdpxError, match="method='brute' is not supported"):
        pdpx.compare_methods(tree, X, "a", method="brute")
    with pytest.raises(PdpxError, match="kind='both' is not supported"):
        pdpx.compare_methods(tree, X, "a", kind="both")
    with pytest.raises(PdpxError, match="unknown option"):
        pdpx.compare_methods(tree, X, "a", grid_size=3)


def test_plot(friedman, tmp_path):
    pytest.importorskip("plotnine")
    from pdpx.outputs.plot import layer_names

    X, y, tree = degenerate()
    cmp = pdpx.compare_methods(tree, X, "x1")
    assert layer_names(cmp.plot()) == ["zero", "curves", "gap", "curve_points", "gap_points"]
    cmp.save(tmp_path / "cmp.png")
    X, y = friedman
    with pytest.warns(ExtrapolationWarning):  # a and b are dependent by construction
        two = pdpx.compare_methods(DecisionTreeRegressor(max_depth=4).fit(X, y), X, ["a", "b"], grid_resolution=5)
    assert layer_names(two.plot()) == ["gap_tiles"]
