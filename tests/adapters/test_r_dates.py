"""R forests fitted on a ``Date`` or ``POSIXct`` column (no R needed: hand-made forests).

R's randomForest and ranger read such a column through ``data.matrix()``: a ``Date`` as its days since
1970-01-01, a ``POSIXct`` as its seconds (UTC). The R package tells the adapter which inputs those are
(``time_units``); pdpx then takes dates (``datetime64``, tz-aware for a POSIXct) for them, gives grids of
dates, and the tree engine's numbers equal brute force through a predict function that reads the dates as
R does (the R package's testthat tests compare with R's own ``predict``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rforests import padded_forest

import pdpx
from pdpx.adapters.randomforest import RandomForestAdapter
from pdpx.adapters.ranger import RangerAdapter
from pdpx.core.errors import PdpxError

EPOCH = pd.Timestamp("1970-01-01")
DAY_CUT = 19000.5  # between 2022-01-08 and 2022-01-09
SECOND_CUT = 1.6e9  # 2020-09-13 12:26:40 UTC


def days_of(s: pd.Series) -> np.ndarray:
    return ((s - EPOCH) / pd.Timedelta(days=1)).to_numpy(dtype=np.float64)


def seconds_of(s: pd.Series) -> np.ndarray:
    return ((s.dt.tz_convert("UTC").dt.tz_localize(None) - EPOCH) / pd.Timedelta(seconds=1)).to_numpy(np.float64)


def ranger_spec() -> dict:
    """Tree 1: day <= DAY_CUT -> 1, else 2. Tree 2: at <= SECOND_CUT -> (day <= DAY_CUT + 3 ? 10 : 30), else 20."""
    return {
        "treetype": "Regression", "n_nodes": [3, 5],
        "split_var": [0, 0, 0, 1, 0, 0, 0, 0], "split_value": [DAY_CUT, 1.0, 2.0, SECOND_CUT, DAY_CUT + 3, 20.0,
                                                               10.0, 30.0],
        "left": [1, 0, 0, 1, 3, 0, 0, 0], "right": [2, 0, 0, 2, 4, 0, 0, 0],
        "is_ordered": [True, True], "levels": [None, None], "feature_names": ["day", "at"],
    }


def ranger_by_hand(X: pd.DataFrame) -> np.ndarray:
    d, s = days_of(X["day"]), seconds_of(X["at"])
    t2 = np.where(s <= SECOND_CUT, np.where(d <= DAY_CUT + 3, 10.0, 30.0), 20.0)
    return ((np.where(d <= DAY_CUT, 1.0, 2.0) + t2) / 2)[:, None]


def frame(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    at = pd.Timestamp("2020-09-01", tz="UTC") + pd.to_timedelta(rng.integers(0, 86400 * 30, n), unit="s")
    return pd.DataFrame({"day": pd.Timestamp("2021-12-20") + pd.to_timedelta(rng.integers(0, 40, n), unit="D"),
                         "at": at.tz_convert("America/New_York")})


def ranger_adapter():
    return RangerAdapter(ranger_spec(), ranger_by_hand, time_units=["days", "seconds"])


@pytest.mark.parametrize("feature", ["day", "at", ["day", "at"]])
def test_ranger_exact_on_dates_equals_brute_and_the_grid_is_dates(feature):
    X = frame()
    ex = pdpx.partial_dependence(ranger_adapter(), X, feature, kind="both", grid_resolution=8, method="exact")
    br = pdpx.partial_dependence(ranger_adapter(), X, feature, kind="both", grid_resolution=8, method="brute")
    assert ex.method == "exact"
    np.testing.assert_allclose(ex.individual, br.individual, rtol=0, atol=1e-12)
    names = [feature] if isinstance(feature, str) else feature
    for name, g in zip(names, ex.grid_values):
        assert pd.Series(g).dtype == X[name].dtype  # dates in the column's own dtype (and zone)
    # the definition, written out: every row's column set to one grid date, the hand predictor, averaged
    if isinstance(feature, str):
        for k, v in enumerate(ex.grid_values[0]):
            Xv = X.assign(**{feature: pd.Series([v] * len(X), index=X.index).astype(X[feature].dtype)})
            assert ex.average[0, k] == pytest.approx(ranger_by_hand(Xv).mean(), abs=1e-12)


def test_grid_thresholds_of_a_date_is_one_whole_day_or_second_per_step():
    X = frame()
    day = pdpx.partial_dependence(ranger_adapter(), X, "day", grid="thresholds")
    # steps: up to 19000.5 days, to 19003.5, above: the last whole day of each, and the first day above the last
    assert [str(pd.Timestamp(v).date()) for v in day.grid_values[0]] == ["2022-01-08", "2022-01-11", "2022-01-12"]
    at = pdpx.partial_dependence(ranger_adapter(), X, "at", grid="thresholds")
    assert str(at.grid_values[0].tz) == "America/New_York"
    assert [seconds_of(pd.Series(at.grid_values[0]))[k] for k in (0, 1)] == [SECOND_CUT, SECOND_CUT + 1]
    for res, name in ((day, "day"), (at, "at")):
        br = pdpx.partial_dependence(ranger_adapter(), X, name, custom_values={name: list(res.grid_values[0])},
                                     method="brute")
        np.testing.assert_allclose(res.average, br.average, rtol=0, atol=1e-12)


def test_regions_split_a_date_at_the_trees_threshold_and_show_the_date():
    X = frame(n=200)
    res = pdpx.regions(ranger_adapter(), X, "at")
    assert res.splits and res.splits[0].feature == "day"
    assert res.rules[0] == "day <= 2022-01-11"  # DAY_CUT + 3 = 19003.5: the days up to 2022-01-11 go left
    left = days_of(X["day"]) <= DAY_CUT + 3
    np.testing.assert_array_equal(np.sort(res.regions[0].rows), np.flatnonzero(left))


def test_the_other_functions_take_the_dates():
    X = frame()
    ad = ranger_adapter()
    assert set(pdpx.importance(ad, X)["feature"]) == {"day", "at"}
    h = pdpx.h_statistic(ad, X)
    assert len(h.pairwise) == 1
    het = pdpx.heterogeneity(ad, X)
    assert set(het.table["feature"]) == {"day", "at"} and het.method == "exact"


def randomforest_adapter():
    """randomForest's hand forest (tests/rforests.py) with its numeric input x on days: x <= 0.5 is day <= DAY_CUT,
    x <= 0.25 is day <= DAY_CUT - 2."""
    forest = padded_forest()
    forest["xbestsplit"][0, 0] = DAY_CUT
    forest["xbestsplit"][0, 2] = DAY_CUT - 2
    forest["xlevels"] = {"day": 0.0, "f": ["a", "b", "c"]}

    def predict(X):
        d, f = days_of(X["day"]), X["f"].astype(str).to_numpy()
        t1 = np.where(d <= DAY_CUT, 1.0, 3.0)
        t2 = np.where(np.isin(f, ["a", "c"]), 10.0, 20.0)
        t3 = np.where(d <= DAY_CUT - 2, np.where(f == "b", 5.0, 7.0), 9.0)
        return (t1 + t2 + t3) / 3

    return RandomForestAdapter(forest, predict, time_units=["days", None])


def test_randomforest_exact_on_dates_equals_brute_recursion_too():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"day": pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.integers(0, 15, 40), unit="D"),
                      "f": pd.Categorical(rng.choice(list("abc"), 40), categories=list("abc"))})
    ad = randomforest_adapter()
    for feature in ("day", ["day", "f"]):
        ex = pdpx.partial_dependence(ad, X, feature, kind="both", method="exact")
        br = pdpx.partial_dependence(ad, X, feature, kind="both", method="brute")
        np.testing.assert_allclose(ex.individual, br.individual, rtol=0, atol=1e-12)
        assert ex.grid_values[0].dtype == X["day"].dtype
    routed = RandomForestAdapter(ad.forest, ad._predict_fn, time_units=["days", None], training_data=X)
    rec = pdpx.partial_dependence(routed, X, "day", method="recursion")
    assert rec.method == "recursion" and rec.grid_values[0].dtype == X["day"].dtype


def test_dates_for_an_input_r_held_as_numbers_are_refused_in_plain_words():
    X = frame()
    plain = RangerAdapter(ranger_spec(), ranger_by_hand)  # no time units: the model was fitted on numbers
    with pytest.raises(PdpxError, match=r"'day' is numeric in the ranger model but holds dates or times; pass "
                                        r"numbers$"):
        pdpx.partial_dependence(plain, X, "day", method="brute")
    with pytest.raises(PdpxError, match="time units from R"):
        RangerAdapter(ranger_spec(), ranger_by_hand, time_units=["weeks", ""])
