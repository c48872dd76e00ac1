"""The R bridge's heterogeneity, regions and explained_variance (pdpx.r_bridge.r_explain) with a Python stand-in for
an R predict closure: what R receives equals the Python functions' results, numbers as R sends them (doubles)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.r_bridge import r_adapter, r_explain


def _f(d):
    """y = 3 x1 1[x2 > 0] - 3 x1 1[x2 <= 0] + x3 of a DataFrame."""
    return 3 * d["x1"].to_numpy() * np.where(d["x2"].to_numpy() > 0, 1.0, -1.0) + d["x3"].to_numpy()


def _closure(cols):
    """The stand-in for R's predict closure: it reads the columns as R does (raw float64 bytes)."""
    return _f(pd.DataFrame({k: np.frombuffer(cols["columns"][k], "<f8") for k in cols["names"]}))


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"x1": rng.uniform(-1, 1, 300), "x2": rng.uniform(-1, 1, 300), "x3": rng.uniform(-1, 1, 300)})
    ad = r_adapter({"type": "function", "predict": _closure, "output_names": "prediction",
                    "feature_names": ["x1", "x2", "x3"], "model_name": "lm"})
    return ad, X


def _column(frame, name):
    col = frame["columns"][name]
    if col["type"] == "character":
        codes = np.frombuffer(col["codes"], "<f8").astype(int) - 1
        return [col["levels"][c] for c in codes]
    return np.frombuffer(col["data"], "<f8")


def test_heterogeneity_for_r_equals_pdpx_heterogeneity(case):
    ad, X = case
    out = r_explain("heterogeneity", ad, X, ["x1", "x2", "x3"], {"grid_resolution": 8.0})
    want = pdpx.heterogeneity(_f, X, grid_resolution=8).table
    assert _column(out["table"], "feature") == list(want.feature)
    np.testing.assert_array_equal(_column(out["table"], "heterogeneity"), want.heterogeneity.to_numpy())
    assert out["meta"]["method"] == "brute" and out["meta"]["n_rows"] == 300


def test_regions_for_r_carry_each_rows_region_and_the_splits(case):
    ad, X = case
    out = r_explain("regions", ad, X, ["x1"], {"max_depth": 2.0, "grid_resolution": 8.0, "min_gain": 0.1})
    want = pdpx.regions(_f, X, "x1", grid_resolution=8)
    assert _column(out["regions"], "rule") == want.rules
    assert _column(out["splits"], "feature")[0] == "x2"
    region = _column(out["membership"], "region")
    for r in want.regions:
        assert (region[r.rows] == r.region).all()
    assert out["meta"]["removed"] == pytest.approx(want.removed) and out["meta"]["feature"] == "x1"


def test_regions_of_several_features_for_r_hold_each_feature_as_one(case):
    ad, X = case
    out = r_explain("regions", ad, X, ["x1", "x3"], {"grid_resolution": 8.0})
    assert out["features"] == ["x1", "x3"] and out["meta"]["feature"] == ["x1", "x3"]
    for name, part in zip(out["features"], out["each"]):
        want = pdpx.regions(_f, X, name, grid_resolution=8)
        assert _column(part["regions"], "rule") == want.rules and part["meta"]["feature"] == name
        assert part["meta"]["removed"] == pytest.approx(want.removed)
    every = r_explain("regions", ad, X, None, {"grid_resolution": 8.0})
    assert every["features"] == list(X.columns)


def test_explained_variance_for_r_takes_numbers_as_r_sends_them(case):
    ad, X = case
    out = r_explain("explained_variance", ad, X, ["x1", "x2", "x3"],
                    {"pairs": 1.0, "region_features": 0.0, "threeway": 0.0, "random_state": 0.0})
    want = pdpx.explained_variance(_f, X, ["x1", "x2", "x3"], pairs=1, region_features=0, threeway=0)
    np.testing.assert_allclose(_column(out["ledger"], "r2"), want.ledger.r2.to_numpy(), rtol=1e-12)
    assert out["threeway"]["n"] == 0
    with pytest.raises(pdpx.PdpxError, match="unknown measure"):
        r_explain("spread", ad, X, None, {})


def test_an_option_of_another_measure_is_refused_by_name(case):
    ad, X = case
    with pytest.raises(pdpx.PdpxError, match=r"unknown option\(s\) \['threeway'\]"):
        r_explain("heterogeneity", ad, X, ["x1"], {"threeway": 3.0})


def test_member_band_crosses_to_r_with_each_members_curve():
    """interval='members' through r_partial_dependence: R receives what the band is and every member's curve, in
    the order of the frame's average rows, equal to each tree's own predict averaged."""
    from sklearn.ensemble import RandomForestRegressor

    from pdpx.r_bridge import r_partial_dependence

    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})
    m = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, X["a"] * X["b"])
    out = r_partial_dependence(m, X, ["a", "b"], {"interval": "members", "level": 0.5, "grid_resolution": 3.0})
    meta = out["meta"]
    assert meta["band"] == "members: central 50% of 5 trees" and meta["members"]["labels"] == list("01234")
    np.testing.assert_allclose(np.frombuffer(meta["members"]["weights"], "<f8"), np.full(5, 0.2))
    curves = np.frombuffer(meta["members"]["yhat"], "<f8").reshape(5, 9)
    a, b = _column(out["frame"], "x_1"), _column(out["frame"], "x_2")
    for t, tree in enumerate(m.estimators_):
        own = [tree.predict(np.column_stack([np.full(len(X), u), np.full(len(X), v)])).mean() for u, v in zip(a, b)]
        np.testing.assert_allclose(curves[t], own, rtol=1e-12)
    plain = r_partial_dependence(m, X, ["a"], {"grid_resolution": 3.0})["meta"]
    assert plain["band"] is None and plain["members"] is None
