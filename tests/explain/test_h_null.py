"""pdpx.h_test: the additive part against its definition (1-way PDs by brute force), the p-values and adjustments
against their formulas, and the test separating a real pair (y = x0 + x1 + 2 x0 x1 + noise) from an additive one."""

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import PdpxError
from pdpx.explain.h_null import additive_part, adjusted

sklearn = pytest.importorskip("sklearn")
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402

from pdpx.core.options import PDOptions  # noqa: E402


def _data(n=240, seed=0, interaction=True):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(n, 3)), columns=["x0", "x1", "x2"])
    signal = X.x0 + X.x1 + 2 * X.x0 * X.x1 if interaction else X.x0 + X.x1 ** 2
    return X, signal + rng.normal(scale=0.2, size=n)


def _gbm():
    return GradientBoostingRegressor(n_estimators=40, max_depth=3, learning_rate=0.2, random_state=0)


def test_real_pair_has_a_small_p_value_and_an_additive_one_does_not():
    X, y = _data(interaction=True)
    real = pdpx.h_test(_gbm().fit(X, y), X, y, pairs=[("x0", "x1")], n_null=19, random_state=1)
    X, y = _data(interaction=False)
    none = pdpx.h_test(_gbm().fit(X, y), X, y, pairs=[("x0", "x1")], n_null=19, random_state=1)
    r, n = real.to_frame(), none.to_frame()
    assert list(r.columns[:2]) == ["feature_1", "feature_2"]
    assert r.p_value.iloc[0] == pytest.approx(1 / 20)  # above every null H
    assert n.p_value.iloc[0] > 0.05  # not rejected at 5% (under the null p is about uniform; here 0.1)
    assert r.h.iloc[0] > 1.5 * r.h_null_q95.iloc[0]


def test_table_rows_in_the_order_asked_and_p_values_from_the_null():
    X, y = _data(n=120, interaction=True)
    model = _gbm().fit(X, y)
    res = pdpx.h_test(model, X, y, pairs=[("x2", "x0"), ("x0", "x1")], features=["x1", "x2"], n_null=6,
                      adjust="fdr", residuals="in_sample", random_state=0)
    t = res.to_frame()
    assert list(zip(t.feature_1, t.feature_2)) == [("x1", None), ("x2", None), ("x2", "x0"), ("x0", "x1")]
    h = pdpx.h_statistic(model, X, ["x1", "x2"], pairs=[("x2", "x0"), ("x0", "x1")])
    over = dict(zip(h.overall.feature, h.overall.h))
    pair = {frozenset((a, b)): v for a, b, v in zip(h.pairwise.feature_1, h.pairwise.feature_2, h.pairwise.h)}
    np.testing.assert_allclose(t.h, [over["x1"], over["x2"], pair[frozenset(("x2", "x0"))],
                                     pair[frozenset(("x0", "x1"))]], rtol=1e-12)
    assert res.null.shape == (6, 4)
    p = (1 + (res.null >= t.h.to_numpy()[None, :] - 1e-12).sum(axis=0)) / 7
    np.testing.assert_allclose(t.p_value, p)
    np.testing.assert_allclose(t.p_adjusted[:2], adjusted(p[:2], "fdr"))
    np.testing.assert_allclose(t.p_adjusted[2:], adjusted(p[2:], "fdr"))
    only = pdpx.h_test(model, X, y, pairs=[("x0", "x1")], features=[], n_null=2, residuals="in_sample")
    assert list(zip(only.to_frame().feature_1, only.to_frame().feature_2)) == [("x0", "x1")]
    np.testing.assert_allclose(only.to_frame().h, t.h.iloc[3], rtol=1e-12)


def test_adjustments_match_their_definitions():
    p = np.array([0.01, 0.04, 0.03, 0.5])
    # Holm: sorted 0.01, 0.03, 0.04, 0.5 times 4, 3, 2, 1, running maximum, capped at 1
    np.testing.assert_allclose(adjusted(p, "holm"), [0.04, 0.09, 0.09, 0.5])
    # Benjamini-Hochberg: p * m / rank, running minimum from the largest
    np.testing.assert_allclose(adjusted(p, "fdr"), [0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5])
    np.testing.assert_allclose(adjusted(p, None), p)


def test_additive_part_is_the_mean_plus_centered_one_way_pds():
    X, y = _data(n=60)
    model = _gbm().fit(X, y)
    fitted = model.predict(X)
    got = additive_part(model, X, fitted, PDOptions.checked("h_test", {}))
    want = np.full(len(X), fitted.mean())
    for c in X.columns:
        pd_rows = []
        for v in X[c]:  # the 1-way PD at the row's own value, by brute force
            Z = X.copy()
            Z[c] = v
            pd_rows.append(model.predict(Z).mean())
        pd_rows = np.asarray(pd_rows)
        want += pd_rows - pd_rows.mean()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    linear = LinearRegression().fit(X, y)  # an additive model is its own additive part
    np.testing.assert_allclose(additive_part(linear, X, linear.predict(X), PDOptions.checked("h_test", {})),
                               linear.predict(X), rtol=1e-10)


def test_budget_refuses_before_the_other_refits_and_bad_input():
    X, y = _data(n=80)
    model = _gbm().fit(X, y)
    with pytest.raises(PdpxError, match="over max_seconds"):
        pdpx.h_test(model, X, y, pairs=[("x0", "x1")], n_null=10**6, max_seconds=1)
    with pytest.raises(PdpxError, match="regressor"):
        pdpx.h_test(RandomForestClassifier(5).fit(X, y > 0), X, y > 0, n_null=2)
    with pytest.raises(PdpxError, match="n_null"):
        pdpx.h_test(model, X, y, n_null=0)
    with pytest.raises(PdpxError, match="'additive'"):
        pdpx.h_test(model, X, y, n_null=2, residuals="oob")
    with pytest.raises(PdpxError, match="adjust"):
        pdpx.h_test(model, X, y, n_null=2, adjust="bonferroni")
    with pytest.raises(PdpxError, match="do not apply"):
        pdpx.h_test(model, X, y, n_null=2, grid_resolution=5)
