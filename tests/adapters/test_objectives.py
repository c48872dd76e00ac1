"""Every LightGBM and XGBoost objective: ``method="auto"`` equals the definition (the column set to each grid
value, the model's own predict / predict_proba, averaged), and where ``exact`` answers it equals it too.

The links are allow-lists per objective (``lightgbm.py`` ``_link``, ``xgboost_trees.py``'s sets): an objective
off them (LightGBM ``cross_entropy_lambda``, ``reg_sqrt``; XGBoost ``binary:hinge``, custom objectives) refuses
the tree engine with the reason in ``res.notes``, and brute answers. XGBoost predicts in float32, hence its
tolerance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from stacked import predict_copies

import pdpx
from pdpx.core.errors import PdpxError

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

N = 240


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.uniform(size=N), "c": rng.normal(size=N)})
    a = X["a"].to_numpy()
    return {
        "X": X,
        "reg": np.exp(0.5 * a + X["b"].to_numpy()) + rng.uniform(0, 0.1, N),
        "binary": (a + rng.normal(size=N) > 0).astype(int),
        "prob": 1 / (1 + np.exp(-a)),
        "multi": np.digitize(a, [-0.5, 0.5]),
    }


def definition(fn, X, feature, grid):
    """(n_outputs, n_grid): the mean over rows of ``fn`` with ``feature`` set to each grid value."""
    copies = []
    for v in grid:
        Z = X.copy()
        Z[feature] = v
        copies.append(Z)
    out = []
    for p in predict_copies(fn, copies):
        p = np.asarray(p, dtype=np.float64)
        out.append((p[:, None] if p.ndim == 1 else p).mean(axis=0))
    return np.array(out).T


def check(model, X, fn, *, exact: bool, rtol: float, reason: str | None = None):
    """auto equals the definition; exact runs (and equals it) iff ``exact``, else it refuses with ``reason``."""
    res = pdpx.partial_dependence(model, X, "a", grid_resolution=12)
    d = definition(fn, X, "a", res.grid_values[0])
    if res.average.shape[0] == 1 and d.shape[0] == 2:  # a binary classifier reports its positive class
        d = d[1:]
    assert res.average.shape == d.shape
    np.testing.assert_allclose(res.average, d, rtol=rtol, atol=rtol * 1e-2)
    if exact:
        assert res.method == "exact", res.notes
        e = pdpx.partial_dependence(model, X, "a", method="exact", grid_resolution=12)
        np.testing.assert_allclose(e.average, d, rtol=rtol, atol=rtol * 1e-2)
    else:
        assert res.method == "brute"
        assert any(reason in n for n in res.notes), res.notes
        with pytest.raises(PdpxError, match=reason):
            pdpx.partial_dependence(model, X, "a", method="exact")


def squared(y, p):
    """A custom objective (squared error), in either argument order LightGBM / XGBoost pass."""
    if hasattr(p, "get_label"):
        y, p = p, y
    if hasattr(y, "get_label"):
        y = y.get_label()
    return p - y, np.ones_like(p)


# ------------------------------------------------------------------ LightGBM
LGB = dict(n_estimators=10, num_leaves=6, min_child_samples=5, verbose=-1, random_state=0)
LGB_REGRESSION = ["regression", "l1", "huber", "fair", "poisson", "quantile", "mape", "gamma", "tweedie",
                  "cross_entropy"]


@pytest.mark.parametrize("objective", LGB_REGRESSION)
def test_lightgbm_regressor_objectives(data, objective):
    y = data["prob"] if objective == "cross_entropy" else data["reg"]
    m = lgb.LGBMRegressor(objective=objective, **LGB).fit(data["X"], y)
    check(m, data["X"], m.predict, exact=True, rtol=1e-9)


def test_lightgbm_regressor_custom_objective_is_its_raw_score(data):
    m = lgb.LGBMRegressor(objective=squared, **LGB).fit(data["X"], data["reg"])
    check(m, data["X"], m.predict, exact=True, rtol=1e-9)


@pytest.mark.parametrize("objective", ["cross_entropy_lambda", "reg_sqrt"])
def test_lightgbm_objectives_off_the_list_run_brute(data, objective):
    kw = {"objective": "regression", "reg_sqrt": True} if objective == "reg_sqrt" else {"objective": objective}
    y = data["prob"] if objective == "cross_entropy_lambda" else data["reg"]
    m = lgb.LGBMRegressor(**kw, **LGB).fit(data["X"], y)
    check(m, data["X"], m.predict, exact=False, rtol=1e-9, reason="is not one pdpx knows")


@pytest.mark.parametrize("objective", ["binary", "cross_entropy"])
def test_lightgbm_binary_classifier_objectives(data, objective):
    """cross_entropy's predict_proba is the logistic of the raw score (was an IndexError in the tree engine)."""
    m = lgb.LGBMClassifier(objective=objective, **LGB).fit(data["X"], data["binary"])
    check(m, data["X"], m.predict_proba, exact=True, rtol=1e-9)


@pytest.mark.parametrize("objective", ["multiclass", "multiclassova"])
def test_lightgbm_multiclass_objectives(data, objective):
    m = lgb.LGBMClassifier(objective=objective, **LGB).fit(data["X"], data["multi"])
    check(m, data["X"], m.predict_proba, exact=True, rtol=1e-9)


def test_lightgbm_classifier_custom_objective_answers_raw(data):
    """LightGBM's predict_proba returns the raw scores under a custom objective: pdpx's response is 'raw'
    (which equals that predict_proba), and predict_proba is refused with the reason (was an IndexError)."""
    m = lgb.LGBMClassifier(objective=squared, **LGB).fit(data["X"], data["binary"])
    with pytest.warns(UserWarning, match="raw scores"):
        np.testing.assert_array_equal(m.predict_proba(data["X"]), m.predict(data["X"], raw_score=True))
    res = pdpx.partial_dependence(m, data["X"], "a", grid_resolution=12)
    assert res.response == "raw" and res.method == "exact"
    d = definition(lambda Z: m.predict(Z, raw_score=True), data["X"], "a", res.grid_values[0])
    np.testing.assert_allclose(res.average, d, rtol=1e-9, atol=1e-12)
    with pytest.raises(PdpxError, match=r"no response .predict_proba.; use one of \[.raw.\]"):
        pdpx.partial_dependence(m, data["X"], "a", response="predict_proba")


def test_lightgbm_ranker(data):
    m = lgb.LGBMRanker(**LGB).fit(data["X"], np.digitize(data["X"]["a"], [0]), group=[N // 3] * 3)
    check(m, data["X"], m.predict, exact=True, rtol=1e-9)


# ------------------------------------------------------------------- XGBoost
XGB = dict(n_estimators=8, max_depth=3, random_state=0)
XGB_REGRESSION = ["reg:squarederror", "reg:squaredlogerror", "reg:logistic", "binary:logistic", "binary:logitraw",
                  "count:poisson", "reg:gamma", "reg:tweedie", "reg:absoluteerror", "reg:pseudohubererror",
                  "reg:quantileerror", "survival:cox"]


def xgb_target(data, objective):
    if objective == "reg:logistic":
        return data["prob"]
    return data["binary"] if objective.startswith("binary") else data["reg"]


@pytest.mark.parametrize("objective", XGB_REGRESSION)
def test_xgboost_regressor_objectives(data, objective):
    extra = {"quantile_alpha": 0.3} if objective == "reg:quantileerror" else {}
    m = xgb.XGBRegressor(objective=objective, **XGB, **extra).fit(data["X"], xgb_target(data, objective))
    check(m, data["X"], m.predict, exact=True, rtol=2e-5)


def test_xgboost_survival_aft(data):
    d = xgb.DMatrix(data["X"])
    d.set_float_info("label_lower_bound", data["reg"])
    d.set_float_info("label_upper_bound", 1.5 * data["reg"])
    b = xgb.train({"objective": "survival:aft"}, d, 8)
    check(b, data["X"], lambda Z: b.predict(xgb.DMatrix(Z)), exact=True, rtol=2e-5)


@pytest.mark.parametrize("cls", ["XGBRegressor", "XGBClassifier"])
def test_xgboost_hinge_and_custom_run_brute(data, cls):
    k = getattr(xgb, cls)
    fn = "predict_proba" if cls == "XGBClassifier" else "predict"
    m = k(objective="binary:hinge", **XGB).fit(data["X"], data["binary"])
    check(m, data["X"], getattr(m, fn), exact=False, rtol=1e-9, reason="binary:hinge")
    m = k(objective=squared, **XGB).fit(data["X"], data["binary"] if cls == "XGBClassifier" else data["reg"])
    check(m, data["X"], getattr(m, fn), exact=False, rtol=1e-9, reason="custom objective")


@pytest.mark.parametrize("objective", ["binary:logistic", "binary:logitraw"])
def test_xgboost_binary_classifier_objectives(data, objective):
    m = xgb.XGBClassifier(objective=objective, **XGB).fit(data["X"], data["binary"])
    check(m, data["X"], m.predict_proba, exact=True, rtol=2e-5)


@pytest.mark.parametrize("objective", ["multi:softprob", "multi:softmax"])
def test_xgboost_multiclass_objectives(data, objective):
    m = xgb.XGBClassifier(objective=objective, **XGB).fit(data["X"], data["multi"])
    check(m, data["X"], m.predict_proba, exact=True, rtol=2e-5)


@pytest.mark.parametrize("objective", ["rank:pairwise", "rank:ndcg", "rank:map"])
def test_xgboost_ranking_objectives(data, objective):
    m = xgb.XGBRanker(objective=objective, **XGB).fit(data["X"], np.digitize(data["X"]["a"], [0]),
                                                      qid=np.repeat([0, 1, 2], N // 3))
    check(m, data["X"], m.predict, exact=True, rtol=2e-5)


def test_xgboost_objective_off_the_list_refuses(data, monkeypatch):
    """An objective on no allow-list is refused, never guessed (simulated: reg:squarederror taken off)."""
    from pdpx.adapters import xgboost as xa

    m = xgb.XGBRegressor(objective="reg:squarederror", **XGB).fit(data["X"], data["reg"])
    monkeypatch.setattr(xa, "IDENTITY_OBJECTIVES", xa.IDENTITY_OBJECTIVES - {"reg:squarederror"})
    check(m, data["X"], m.predict, exact=False, rtol=1e-9, reason="reg:squarederror")


def test_a_wrong_link_is_caught_when_the_trees_are_read(data, monkeypatch):
    """The listed link is compared with the library's own transformed prediction on an all-missing row: a
    wrong one (simulated: identity for poisson / count:poisson) keeps the trees out, and brute answers."""
    from pdpx.adapters import lightgbm as la
    from pdpx.adapters import xgboost_trees as xt

    X = data["X"]
    m = lgb.LGBMRegressor(objective="poisson", **LGB).fit(X, data["reg"])
    link = la.LightGBMAdapter._link
    monkeypatch.setattr(la.LightGBMAdapter, "_link", lambda self, r: ("identity",) + link(self, r)[1:])
    res = pdpx.partial_dependence(m, X, "a", grid_resolution=12)
    assert res.method == "brute" and any("does not reproduce" in n for n in res.notes), res.notes
    np.testing.assert_allclose(res.average[0], definition(m.predict, X, "a", res.grid_values[0])[0], rtol=1e-12)

    x = xgb.XGBRegressor(objective="count:poisson", **XGB).fit(X, data["reg"])
    monkeypatch.setattr(xt, "EXP_OBJECTIVES", xt.EXP_OBJECTIVES - {"count:poisson"})
    res = pdpx.partial_dependence(x, X, "a", grid_resolution=12)
    assert res.method == "brute" and any("does not reproduce" in n for n in res.notes), res.notes
    np.testing.assert_allclose(res.average[0], definition(x.predict, X, "a", res.grid_values[0])[0], rtol=1e-6)
