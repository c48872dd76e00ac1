"""The R bridge (pdpx.r_bridge) with Python stand-ins for R: the wire format both ways and one call.

The R package's own tests (r/pdpx/tests) run the same bridge from R.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rforests import as_layouts, hand_prediction, hand_X, padded_forest

import pdpx
from pdpx.r_bridge import frame_columns, frame_for_r, frame_from_r, r_adapter, r_partial_dependence

R_NA = np.array([0x7FF00000000007A2], dtype="<u8").view("<f8")[0]  # R's NA_real_: a signalling NaN


def _raw(values):
    return bytearray(np.array(values, dtype="<f8").tobytes())


@pytest.mark.filterwarnings("error")  # R's NA must not raise numpy's invalid-value warnings
def test_frame_from_r_reads_every_type_and_na():
    payload = {
        "n": 3, "names": ["x", "i", "j", "l", "f", "s"],
        "columns": {
            "x": {"type": "double", "data": _raw([1.5, R_NA, 3.0])},
            "i": {"type": "integer", "data": _raw([1, R_NA, 3])},
            "j": {"type": "integer", "data": _raw([1, 2, 3])},
            "l": {"type": "logical", "data": _raw([1, R_NA, 0])},
            "f": {"type": "factor", "codes": _raw([2, R_NA, 1]), "levels": ["lo", "hi"], "ordered": True},
            "s": {"type": "character", "codes": _raw([1, R_NA, 1]), "levels": "only"},  # one level: an R scalar
        },
    }
    df = frame_from_r(payload)
    assert list(df.columns) == payload["names"]
    assert [str(t) for t in df.dtypes] == ["float64", "float64", "int64", "boolean", "category", "str"]
    assert df.isna().sum().tolist() == [1, 1, 0, 1, 1, 1]
    assert df["f"].tolist()[0] == "hi" and df["f"].cat.ordered and list(df["f"].cat.categories) == ["lo", "hi"]
    assert df["s"].tolist()[0] == "only" and df["l"].tolist()[0] is True
    with pytest.raises(pdpx.PdpxError, match="column 'x' from R has 2 values, expected 3"):
        frame_from_r({**payload, "columns": {**payload["columns"], "x": {"type": "double", "data": _raw([1, 2])}}})
    with pytest.raises(pdpx.PdpxError, match="unknown type 'complex'"):
        frame_from_r({"n": 1, "names": ["z"], "columns": {"z": {"type": "complex"}}})


def test_frame_payloads_round_trip():
    X = pd.DataFrame({
        "num": [1.5, np.nan, 3.0], "int": [1, 2, 3], "flag": [True, False, True],
        "cat": pd.Categorical(["b", None, "a"], categories=["a", "b"]), "txt": ["x", None, "z"],
    })
    p = frame_columns(X)
    assert p["n"] == 3 and p["names"] == list(X.columns)
    num = np.frombuffer(p["columns"]["num"], "<f8")
    assert num[0] == 1.5 and np.isnan(num[1])
    np.testing.assert_array_equal(np.frombuffer(p["columns"]["flag"], "<f8"), [1, 0, 1])
    cat = np.frombuffer(p["columns"]["cat"], "<f8")
    assert cat[0] == 2 and np.isnan(cat[1]) and cat[2] == 1  # 1-based codes, as R's factors
    assert p["columns"]["txt"] == ["x", None, "z"]

    df = pd.DataFrame({"s": pd.array(["u", None, "u"], dtype="string"), "row": pd.array([0, None, 2], dtype="Int64"),
                       "y": [0.5, 1.5, 2.5]})
    r = frame_for_r(df, one_based=["row"])
    assert r["columns"]["s"]["type"] == "character" and r["columns"]["s"]["levels"] == ["u"]
    codes = np.frombuffer(r["columns"]["s"]["codes"], "<f8")
    assert codes[0] == 1 and np.isnan(codes[1])
    rows = np.frombuffer(r["columns"]["row"]["data"], "<f8")
    assert r["columns"]["row"]["type"] == "integer" and rows[0] == 1 and np.isnan(rows[1]) and rows[2] == 3


def test_r_bridge_with_a_python_stand_in_for_the_r_closure():
    X = hand_X()

    def closure(payload):  # what the R package's closure does, in Python
        n = payload["n"]
        x = np.frombuffer(payload["columns"]["x"], "<f8")
        codes = np.frombuffer(payload["columns"]["f"], "<f8").astype(int)
        f = np.array(["a", "b", "c"])[codes - 1]
        assert len(x) == n
        return bytearray(np.array([hand_prediction(a, b) for a, b in zip(x, f)]).astype("<f8").tobytes())

    spec = {"type": "randomForest", "forest": as_layouts(padded_forest())["compact"], "predict": closure,
            "feature_names": ["x", "f"], "classes": None, "coefs": None}
    ad = r_adapter(spec)
    out = r_partial_dependence(ad, X, ["f"], {"kind": "both", "method": "brute", "grid_resolution": 5.0})
    ref = pdpx.partial_dependence(ad, X, "f", kind="both", method="exact")
    assert out["meta"]["method"] == "brute" and out["meta"]["categorical"] == [True]
    cols = out["frame"]["columns"]
    yhat = np.frombuffer(cols["yhat"]["data"], "<f8")
    np.testing.assert_allclose(yhat, ref.to_frame()["yhat"].to_numpy(), atol=1e-12)
    rows = np.frombuffer(cols["row"]["data"], "<f8")
    assert np.nanmin(rows) == 1  # R positions
    x1 = np.frombuffer(cols["x_1"]["data"], "<f8")
    assert x1.min() == 1 and x1.max() == 3

    fn = r_adapter({"type": "function", "predict": closure, "output_names": "prediction",
                          "feature_names": ["x", "f"], "model_name": "lm"})
    out2 = r_partial_dependence(fn, X, "x", {"grid_resolution": 4, "percentiles": [0.0, 1.0], "centered": True})
    assert out2["meta"]["method"] == "brute" and out2["meta"]["centered"]
    with pytest.raises(pdpx.PdpxError, match="unknown option"):
        r_partial_dependence(fn, X, "x", {"grid.resolution": 4})


def test_logical_grid_values_reach_r_spelled_true_false_also_from_custom_values():
    """R rebuilds a logical grid point from its label: TRUE/FALSE, whether the grid came from the data or was given."""
    X = pd.DataFrame({"hot": [True, False, True, True], "t": [1.0, 2.0, 3.0, 4.0]})

    def closure(payload):  # the model: 10 * hot + t, from the columns R would read
        hot = np.frombuffer(payload["columns"]["hot"], "<f8")
        t = np.frombuffer(payload["columns"]["t"], "<f8")
        return bytearray((10.0 * hot + t).astype("<f8").tobytes())

    fn = r_adapter({"type": "function", "predict": closure, "output_names": "prediction",
                    "feature_names": ["hot", "t"], "model_name": "lm"})
    for opts in ({}, {"custom_values": {"hot": [False, True]}}):
        out = r_partial_dependence(fn, X, "hot", {"kind": "individual", **opts})
        assert out["meta"]["grid_values"] == [["FALSE", "TRUE"]]
        col = out["frame"]["columns"]["label_1"]
        labels = [col["levels"][int(c) - 1] for c in np.frombuffer(col["codes"], "<f8")]
        yhat = np.frombuffer(out["frame"]["columns"]["yhat"]["data"], "<f8")
        assert set(labels) == {"FALSE", "TRUE"}
        # each ICE value is the model at that row with hot set to the label's value
        rows = np.frombuffer(out["frame"]["columns"]["row"]["data"], "<f8").astype(int) - 1
        expected = [10.0 * (lab == "TRUE") + X["t"][r] for lab, r in zip(labels, rows)]
        np.testing.assert_allclose(yhat, expected)


def test_dates_and_times_cross_both_ways():
    days = [18262.0, R_NA, 18300.5]  # R's Date: days since 1970-01-01 (2020-01-01, NA, noon of a day)
    secs = [1577880000.0, R_NA, 1600000000.0]  # R's POSIXct: seconds since 1970-01-01 UTC
    payload = {"n": 3, "names": ["d", "t", "u"], "columns": {
        "d": {"type": "date", "data": _raw(days)},
        "t": {"type": "datetime", "data": _raw(secs), "tz": "America/New_York"},
        "u": {"type": "datetime", "data": _raw(secs), "tz": ""},
    }}
    df = frame_from_r(payload)
    assert str(df["d"].dtype).startswith("datetime64") and df["d"][0] == pd.Timestamp("2020-01-01")
    assert df["d"][2] == pd.Timestamp("2020-02-08 12:00") and df["d"].isna().tolist() == [False, True, False]
    assert str(df["t"].dt.tz) == "America/New_York"
    assert df["t"][0] == pd.Timestamp("2020-01-01 12:00", tz="UTC")  # the same instant, in New York's zone
    assert df["t"][0].hour == 7 and df["u"][0] == pd.Timestamp("2020-01-01 12:00")
    # back to R (a predict closure's rows, a result's frame): seconds since the epoch, the zone kept
    back = frame_columns(df)
    for name, want in (("d", np.array([18262.0, 0, 18300.5]) * 86400), ("t", secs), ("u", secs)):
        got = np.frombuffer(back["columns"][name], "<f8")
        np.testing.assert_array_equal(np.isnan(got), [False, True, False])
        np.testing.assert_allclose(got[[0, 2]], np.asarray(want, dtype=float)[[0, 2]])
    out = frame_for_r(df)
    assert out["columns"]["t"]["type"] == "datetime" and out["columns"]["t"]["tz"] == "America/New_York"
    assert out["columns"]["u"]["tz"] == ""
    np.testing.assert_allclose(np.frombuffer(out["columns"]["t"]["data"], "<f8")[[0, 2]], np.asarray(secs)[[0, 2]])


def test_a_datetime_feature_reaches_r_as_seconds_with_its_zone_and_custom_dates_are_taken():
    """The grid of a tz-aware feature goes to R as seconds and zone; R's custom dates come back as those dates."""
    days = pd.date_range("2021-01-01", periods=40, freq="D", tz="America/New_York")
    X = pd.DataFrame({"at": days, "x": np.arange(40.0)})

    def closure(payload):  # the model: the day of the year in New York plus x, from the seconds R would read
        secs = np.frombuffer(payload["columns"]["at"], "<f8")
        local = pd.to_datetime(secs, unit="s", utc=True).tz_convert("America/New_York")
        x = np.frombuffer(payload["columns"]["x"], "<f8")
        return bytearray((local.day_of_year.to_numpy() + x).astype("<f8").tobytes())

    fn = r_adapter({"type": "function", "predict": closure, "output_names": "prediction",
                    "feature_names": ["at", "x"], "model_name": "lm"})
    out = r_partial_dependence(fn, X, "at", {"grid_resolution": 4})
    grid = out["meta"]["grid_values"][0]
    assert grid["tz"] == "America/New_York"
    stamps = pd.to_datetime(grid["seconds"], unit="s", utc=True).tz_convert("America/New_York")
    assert stamps.min() >= days.min() and stamps.max() <= days.max()
    x1 = out["frame"]["columns"]["x_1"]
    assert x1["type"] == "datetime" and x1["tz"] == "America/New_York"
    np.testing.assert_allclose(np.frombuffer(x1["data"], "<f8"), grid["seconds"])
    yhat = np.frombuffer(out["frame"]["columns"]["yhat"]["data"], "<f8")
    np.testing.assert_allclose(yhat, stamps.day_of_year.to_numpy() + X["x"].mean())  # the definition
    # custom values from R: a Date vector (days since 1970-01-01)
    custom = {"at": {"type": "date", "data": _raw([18628.0, 18640.0])}}  # 2021-01-01, 2021-01-13
    X2 = X.assign(at=X["at"].dt.tz_localize(None))
    out = r_partial_dependence(fn, X2, "at", {"custom_values": custom})
    got = pd.to_datetime(out["meta"]["grid_values"][0]["seconds"], unit="s")
    assert list(got) == [pd.Timestamp("2021-01-01"), pd.Timestamp("2021-01-13")]
