"""pdpx.explained_variance against its definition: every PD function by brute force at each row's own values (the
columns set keeping their dtype, the model's own predict, a weighted mean over the rows), centered, and R2 by hand;
3-way H as hstats defines it, written out the same way."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from stacked import predict_copies

import pdpx

LEVEL = {"u": 0.0, "v": 1.0, "w": -2.0}


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n), "x3": rng.uniform(-1, 1, n),
                         "g": pd.Categorical(rng.choice(list("uvw"), n), categories=list("uvw"))})


def _sign_model(d):
    """y = 3 x1 1[x2 > 0] - 3 x1 1[x2 <= 0] + x3 (+ the level of g)."""
    level = d["g"].astype(str).map(LEVEL).to_numpy() if "g" in d else 0.0
    return 3 * d["x1"].to_numpy() * np.where(d["x2"].to_numpy() > 0, 1.0, -1.0) + d["x3"].to_numpy() + level


def pd_at_rows(predict, X, cols, w):
    """PD_cols at each row's own values of ``cols``: the rows' weighted mean prediction with ``cols`` set to them."""
    copies = []
    for i in range(len(X)):
        Z = X.copy()
        for c in cols:
            Z[c] = pd.Series([X[c].iloc[i]] * len(X), index=X.index).astype(X[c].dtype)
        copies.append(Z)
    return np.asarray([np.average(np.asarray(p, dtype=float), axis=0, weights=w)
                       for p in predict_copies(predict, copies)])


def centered(v, w):
    return v - np.average(v, axis=0, weights=w)


def r2(f, approx, w):
    fc = centered(f, w)
    return 1 - np.average((fc - approx) ** 2, axis=0, weights=w) / np.average(fc ** 2, axis=0, weights=w)


def test_an_additive_model_is_explained_by_its_curves():
    X = _data()

    def additive(d):
        return np.sin(3 * d["x1"].to_numpy()) + d["x2"].to_numpy() ** 2 + d["g"].astype(str).map(LEVEL).to_numpy()

    res = pdpx.explained_variance(additive, X)
    assert res.ledger["what"].tolist() == ["1-way"]  # no pair and no feature interacts: nothing else to add
    assert res.ledger["r2"].iloc[0] == pytest.approx(1.0, abs=1e-9)
    assert res.regions == {} and (res.threeway["h2"] < 1e-12).all()


@pytest.mark.parametrize("weighted", [False, True])
def test_the_ledger_equals_r2_by_hand(weighted):
    X = _data()
    w = np.random.default_rng(2).uniform(0.2, 2, len(X)) if weighted else np.ones(len(X))
    res = pdpx.explained_variance(_sign_model, X, sample_weight=w if weighted else None, pairs=1, threeway=0)
    f = _sign_model(X)
    one = {c: centered(pd_at_rows(_sign_model, X, [c], w), w) for c in X.columns}
    additive = sum(one.values())
    assert res.ledger["r2"].iloc[0] == pytest.approx(r2(f, additive, w), abs=1e-9)
    assert res.ledger.loc[1, "what"] == "pair x1 x x2"
    pair = centered(pd_at_rows(_sign_model, X, ["x1", "x2"], w), w) - one["x1"] - one["x2"]
    assert res.ledger["r2"].iloc[1] == pytest.approx(r2(f, additive + pair, w), abs=1e-9)
    assert res.ledger["r2"].iloc[1] == pytest.approx(1.0, abs=1e-9)
    regions = res.ledger[res.ledger["what"] == "regions of x1"]
    assert len(regions) == 1 and regions["builds_on"].iloc[0] == 1 and regions["r2"].iloc[0] > 0.95
    found = res.regions["x1"]
    assert found.splits[0].feature == "x2"
    regional = np.zeros(len(X))  # x1's curve in each region, at the row's x1, centered within the region
    for r in found.regions:
        sub = X.iloc[r.rows]
        regional[r.rows] = centered(pd_at_rows(_sign_model, sub, ["x1"], w[r.rows]), w[r.rows])
    want = r2(f, additive - one["x1"] + regional, w)
    assert regions["r2"].iloc[0] == pytest.approx(want, abs=1e-9)


def test_a_tree_model_exactly_on_every_row():
    from sklearn.tree import DecisionTreeRegressor

    X = _data(n=150).drop(columns="g")
    model = DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, _sign_model(X))
    res = pdpx.explained_variance(model, X, pairs=1, region_features=0, threeway=0, method="exact")
    assert res.n_rows == 150 and res.method == "exact"
    w = np.ones(len(X))
    f = model.predict(X)
    one = {c: centered(pd_at_rows(model.predict, X, [c], w), w) for c in X.columns}
    assert res.ledger["r2"].iloc[0] == pytest.approx(r2(f, sum(one.values()), w), abs=1e-9)
    a, b = res.ledger.loc[1, "added"].split(" x ")
    pair = centered(pd_at_rows(model.predict, X, [a, b], w), w) - one[a] - one[b]
    assert res.ledger["r2"].iloc[1] == pytest.approx(r2(f, sum(one.values()) + pair, w), abs=1e-9)


def _h3_by_hand(predict, X, cols, w):
    """hstats' three-way H^2 written out: every function by brute force at the rows, centered."""
    F = {}
    for k in (1, 2, 3):
        for s in itertools.combinations(cols, k):
            F[s] = centered(pd_at_rows(predict, X, list(s), w), w)
    a, b, c = cols
    num = F[cols] - F[(a, b)] - F[(a, c)] - F[(b, c)] + F[(a,)] + F[(b,)] + F[(c,)]
    return np.average(num ** 2, axis=0, weights=w) / np.average(F[cols] ** 2, axis=0, weights=w)


@pytest.mark.parametrize("kind", ["product", "pairs only"])
def test_threeway_h_equals_the_definition(kind):
    X = _data(n=40).drop(columns="g")

    def f(d):
        x1, x2, x3 = (d[c].to_numpy() for c in ("x1", "x2", "x3"))
        return 4 * x1 * x2 * x3 + x1 if kind == "product" else x1 * x2 + x2 * x3 + x1

    res = pdpx.explained_variance(f, X, pairs=0, region_features=0, threeway=3)
    assert len(res.threeway) == 1
    got = res.threeway["h2"].iloc[0]
    assert got == pytest.approx(_h3_by_hand(f, X, ("x1", "x2", "x3"), np.ones(len(X))), rel=1e-7, abs=1e-12)
    assert (got > 0.5) if kind == "product" else (got < 1e-12)


def test_threeway_h_on_a_tree_model_equals_the_definition():
    from sklearn.tree import DecisionTreeRegressor

    X = _data(n=60).drop(columns="g")
    model = DecisionTreeRegressor(max_depth=5, random_state=0).fit(X, X.x1 * X.x2 * X.x3)
    res = pdpx.explained_variance(model, X, pairs=0, region_features=0, method="exact")
    cols = tuple(res.threeway.iloc[0][["feature_1", "feature_2", "feature_3"]])
    want = _h3_by_hand(model.predict, X[list(cols)].join(X.drop(columns=list(cols)))[X.columns], cols,
                       np.ones(len(X)))
    assert res.threeway["h2"].iloc[0] == pytest.approx(want, rel=1e-7, abs=1e-12)


def test_several_outputs_one_ledger_row_per_output():
    from sklearn.linear_model import LogisticRegression

    X = _data(n=80).drop(columns="g")
    model = LogisticRegression().fit(X, np.digitize(X.x1 + X.x2, [-0.4, 0.4]))
    res = pdpx.explained_variance(model, X, pairs=1, region_features=0, threeway=0)
    assert len(res.outputs) == 3 and len(res.ledger) == 3 * res.ledger["step"].nunique()
    w = np.ones(len(X))
    f = model.predict_proba(X)
    one = sum(centered(pd_at_rows(model.predict_proba, X, [c], w), w) for c in X.columns)
    np.testing.assert_allclose(res.ledger[res.ledger.step == 1]["r2"].to_numpy(), r2(f, one, w), atol=1e-9)


def test_bad_arguments_say_what_to_pass():
    with pytest.raises(pdpx.PdpxError, match="pairs must be a whole number >= 0"):
        pdpx.explained_variance(_sign_model, _data(), pairs=-1)
    with pytest.raises(pdpx.PdpxError, match=r"option\(s\) \['grid_resolution'\] do not apply"):
        pdpx.explained_variance(_sign_model, _data(), grid_resolution=10)


def test_plot_draws_the_ledger():
    pytest.importorskip("plotnine")
    res = pdpx.explained_variance(_sign_model, _data(n=60), threeway=0)
    res.plot().draw()
    assert list(res.to_frame().columns) == ["step", "what", "added", "builds_on", "output", "r2", "gain"]


def test_errors_name_the_function_called():
    X = _data()
    with pytest.raises(pdpx.PdpxError, match=r"^explained_variance\(\): sample=5000 rows, but X has 120"):
        pdpx.explained_variance(_sign_model, X, sample=5000)


def test_a_categorical_column_with_missing_values_is_explained_by_hand():
    """A categorical column holding missing values: its missing rows are a cell of their own (the model sees a
    missing value there), and the ledger's 1-way R2 equals the one computed by hand."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    X = _data(n=100, seed=3)
    X.loc[X.index[::7], "g"] = np.nan
    y = _sign_model(X.fillna({"g": "u"}))
    model = HistGradientBoostingRegressor(max_iter=30, categorical_features="from_dtype", random_state=0).fit(X, y)
    res = pdpx.explained_variance(model, X, pairs=0, region_features=0, threeway=0)
    w = np.ones(len(X))
    one = {c: centered(pd_at_rows(model.predict, X, [c], w), w) for c in X.columns}
    assert res.method == "exact"
    assert res.ledger["r2"].iloc[0] == pytest.approx(r2(model.predict(X), sum(one.values()), w), abs=1e-9)
