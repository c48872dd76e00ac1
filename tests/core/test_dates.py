"""Date features (datetime64 with and without a time zone, periods): grids of dates, the definition, frames, labels.

Every value is checked against the definition: the column set to each grid date in its own dtype (zone and unit
kept), the model's own predict, the average over the rows.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import PdpxError

N = 240
START = pd.Timestamp("2021-01-01")


def frame(kind: str = "naive", unit: str = "us", seed: int = 0, n: int = N) -> pd.DataFrame:
    """Rows with a date column of ``kind`` (naive, tz, period, hours), a number and a category."""
    rng = np.random.default_rng(seed)
    days = START + pd.to_timedelta(rng.integers(0, 730, n), unit="D")
    X = pd.DataFrame({"when": days, "x": rng.normal(size=n), "c": pd.Categorical(rng.choice(list("abc"), n))})
    if kind == "hours":
        X["when"] = X["when"] + pd.to_timedelta(rng.integers(0, 24, n), unit="h")
    X["when"] = X["when"].astype(f"datetime64[{unit}]")
    if kind == "tz":
        X["when"] = X["when"].dt.tz_localize("Europe/Paris")
    if kind == "period":
        X["when"] = X["when"].dt.to_period("M")
    return X


def stamps(col: pd.Series) -> pd.Series:
    return col.dt.to_timestamp() if isinstance(col.dtype, pd.PeriodDtype) else col


def date_features(X: pd.DataFrame) -> pd.DataFrame:
    """Day of year, year and hour of the date; the category as its code."""
    d = stamps(X["when"])
    return pd.DataFrame({"doy": d.dt.day_of_year, "year": d.dt.year, "hour": d.dt.hour, "x": X["x"],
                         "c": X["c"].cat.codes})


class DateModel:
    """A plain model reading the date column; it refuses any other dtype than the one it was built with."""

    def __init__(self, dtype):
        self.dtype = dtype

    def predict(self, X):
        assert X["when"].dtype == self.dtype, (X["when"].dtype, self.dtype)
        d = stamps(X["when"])
        days = (d.dt.tz_localize(None) if getattr(d.dt, "tz", None) is not None else d) - START
        t = days.dt.total_seconds().to_numpy() / 86_400
        return np.sin(t / 60) + 0.002 * t * X["x"].to_numpy() + (X["c"] == "b").to_numpy()


def pipeline(X):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.tree import DecisionTreeRegressor

    y = DateModel(X["when"].dtype).predict(X)
    return make_pipeline(FunctionTransformer(date_features), DecisionTreeRegressor(max_depth=6, random_state=0)).fit(
        X, y)


def by_definition(model, X, feature, value):
    """The model's mean prediction with ``feature`` set to ``value`` in every row (its own dtype)."""
    Z = X.copy()
    Z[feature] = pd.Series(pd.array([value] * len(X), dtype=X[feature].dtype), index=X.index)
    assert Z[feature].dtype == X[feature].dtype
    return model.predict(Z)


KINDS = [("naive", "ns"), ("naive", "us"), ("naive", "ms"), ("naive", "s"), ("tz", "us"), ("tz", "ns"),
         ("period", "us"), ("hours", "s")]


@pytest.mark.parametrize("kind,unit", KINDS)
@pytest.mark.parametrize("which", ["pipeline", "plain"])
def test_pd_and_ice_equal_the_definition(kind, unit, which):
    X = frame(kind, unit)
    model = pipeline(X) if which == "pipeline" else DateModel(X["when"].dtype)
    res = pdpx.partial_dependence(model, X, ["when"], kind="both", grid_resolution=12)
    grid = res.grid_values[0]
    assert res.method == "brute"
    if kind == "period":
        assert isinstance(grid, pd.arrays.PeriodArray) and grid.dtype == X["when"].dtype
    elif kind == "tz":
        assert isinstance(grid, pd.arrays.DatetimeArray) and grid.dtype == X["when"].dtype
    else:
        assert isinstance(grid, np.ndarray) and grid.dtype == X["when"].dtype
    for k in range(len(grid)):
        pred = by_definition(model, X, "when", grid[k])
        np.testing.assert_allclose(res.average[0, k], pred.mean(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(res.individual[0, :, k], pred, rtol=1e-12, atol=1e-12)
    cen = pdpx.partial_dependence(model, X, ["when"], kind="individual", centered=True, grid_resolution=12)
    first = by_definition(model, X, "when", grid[0])
    last = by_definition(model, X, "when", grid[len(grid) - 1])
    np.testing.assert_allclose(cen.individual[0, :, -1], last - first, atol=1e-12)


def test_two_way_with_a_date_equals_the_definition():
    X = frame("tz")
    model = DateModel(X["when"].dtype)
    res = pdpx.partial_dependence(model, X, ["when", "x"], grid_resolution=5)
    gd, gx = res.grid_values
    assert gd.dtype == X["when"].dtype
    for i in range(len(gd)):
        for k in range(len(gx)):
            Z = X.copy()
            Z["when"] = pd.array([gd[i]] * len(X), dtype=X["when"].dtype)
            Z["x"] = gx[k]
            np.testing.assert_allclose(res.average[0, i, k], model.predict(Z).mean(), atol=1e-12)
    df = res.to_frame()
    assert df["x_1"].dtype == X["when"].dtype and list(df["type_1"].unique()) == ["date"]
    assert df["type_2"].iloc[0] == "numeric" and df["x_2"].dtype == np.float64


def test_grid_of_midnights_is_whole_days_between_the_percentiles():
    X = frame("naive", n=2000)
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], grid_resolution=30)
    g = pd.DatetimeIndex(res.grid_values[0])
    assert len(g) == 30 and g.is_monotonic_increasing
    assert (g == g.normalize()).all()  # whole days
    lo, hi = X["when"].quantile(0.05), X["when"].quantile(0.95)
    assert abs(g[0] - lo) <= pd.Timedelta(days=1) and abs(g[-1] - hi) <= pd.Timedelta(days=1)
    steps = np.diff(g.asi8) / 86_400e6
    assert steps.max() - steps.min() <= 1  # equally spaced, to a whole day
    labels = res.to_frame()["label_1"].tolist()
    assert labels == [d.strftime("%Y-%m-%d") for d in g]


def test_grid_of_hours_is_whole_hours_and_labels_show_the_time():
    X = frame("hours")
    X["when"] = START + (X["when"] - START) / 73  # about ten days, then to whole hours
    X["when"] = X["when"].dt.floor("h")
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], grid_resolution=25)
    g = pd.DatetimeIndex(res.grid_values[0])
    assert len(g) == 25 and (g == g.floor("h")).all() and not (g == g.normalize()).all()
    assert res.to_frame()["label_1"].tolist() == [d.strftime("%Y-%m-%d %H:%M") for d in g]


def test_seconds_over_years_give_whole_days():
    """A grid step of weeks: the grid's dates are days (a person reads them), though the column holds seconds."""
    rng = np.random.default_rng(5)
    X = frame("naive", unit="s")
    X["when"] = X["when"] + pd.to_timedelta(rng.integers(0, 86_400, len(X)), unit="s")
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], grid_resolution=20)
    g = pd.DatetimeIndex(res.grid_values[0])
    assert len(g) == 20 and (g == g.normalize()).all() and g.dtype == X["when"].dtype
    assert all(len(s) == 10 for s in res.to_frame()["label_1"])


def test_month_starts_give_month_starts_and_few_dates_are_used_as_they_are():
    rng = np.random.default_rng(1)
    months = pd.date_range("2015-01-01", periods=96, freq="MS")
    X = pd.DataFrame({"when": rng.choice(months, 500), "x": rng.normal(size=500),
                      "c": pd.Categorical(rng.choice(list("abc"), 500))})
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], grid_resolution=20)
    g = pd.DatetimeIndex(res.grid_values[0])
    assert (g.day == 1).all() and (g == g.normalize()).all() and len(g) > 10
    few = X.assign(when=X["when"].where(X["when"] < pd.Timestamp("2015-07-01"), pd.Timestamp("2015-01-01")))
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), few, ["when"], grid_resolution=20)
    assert list(pd.DatetimeIndex(res.grid_values[0])) == sorted(few["when"].unique())


def test_tz_grid_keeps_the_zone_and_is_midnight_on_its_clock():
    X = frame("tz")
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], grid_resolution=15)
    g = pd.DatetimeIndex(res.grid_values[0])
    assert str(g.tz) == "Europe/Paris"
    assert (g.hour == 0).all() and (g.minute == 0).all()
    assert repr(res.to_frame()["label_1"].iloc[0]).count(":") == 0  # the day alone
    assert res.grid_values[0][0].tz is not None  # a Timestamp with its zone


@pytest.mark.parametrize("given", [
    ["2021-03-01", "2021-06-15"],
    [pd.Timestamp("2021-03-01"), pd.Timestamp("2021-06-15")],
    [np.datetime64("2021-03-01"), np.datetime64("2021-06-15")],
    pd.to_datetime(["2021-03-01", "2021-06-15"]).to_pydatetime().tolist(),
])
@pytest.mark.parametrize("kind", ["naive", "tz"])
def test_custom_values_take_dates(given, kind):
    X = frame(kind)
    model = DateModel(X["when"].dtype)
    res = pdpx.partial_dependence(model, X, ["when"], custom_values={"when": given})
    g = res.grid_values[0]
    assert g.dtype == X["when"].dtype
    want = pd.DatetimeIndex(["2021-03-01", "2021-06-15"])
    if kind == "tz":
        want = want.tz_localize("Europe/Paris")  # dates without a zone are read on the column's clock
    assert list(pd.DatetimeIndex(g)) == list(want)
    for k in range(2):
        np.testing.assert_allclose(res.average[0, k], by_definition(model, X, "when", g[k]).mean(), atol=1e-12)


def test_custom_values_of_periods_and_their_errors():
    X = frame("period")
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], custom_values={"when": ["2021-05",
                                                                                                   "2022-01"]})
    assert [str(p) for p in res.grid_values[0]] == ["2021-05", "2022-01"]
    with pytest.raises(PdpxError, match="custom_values for 'when' must be periods.*'not a date' is not one"):
        pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], custom_values={"when": ["not a date"]})


@pytest.mark.parametrize("given,match", [
    (["2021-03-01", "soon"], "custom_values for 'when' must be dates .*'soon' is not one"),
    ([1.5, 2.5], "must be dates .*not numbers"),
    (["2021-03-01", "2021-03-01"], "repeated dates"),
    ([pd.Timestamp("2021-03-01", tz="UTC")], "time zone, but column 'when' has none"),
    (["2021-03-01", None], "missing date"),
])
def test_custom_values_refused_with_a_clear_error(given, match):
    X = frame("naive")
    with pytest.raises(PdpxError, match=match):
        pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], custom_values={"when": given})


def test_custom_values_finer_than_the_unit_are_rounded_with_a_note():
    X = frame("naive", unit="s")
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"],
                                  custom_values={"when": ["2021-03-01 00:00:00.7", "2021-04-01"]})
    assert list(pd.DatetimeIndex(res.grid_values[0])) == [pd.Timestamp("2021-03-01 00:00:01"),
                                                          pd.Timestamp("2021-04-01")]
    assert any("finer than the column's unit (s)" in n for n in res.notes)


class AcceptsMissing(DateModel):
    def predict(self, X):
        assert X["when"].dtype == self.dtype
        fill = pd.Series(pd.array([START] * len(X), dtype="datetime64[us]"), index=X.index)
        if getattr(self.dtype, "tz", None) is not None:
            fill = fill.dt.tz_localize(self.dtype.tz)
        filled = X.assign(when=X["when"].where(X["when"].notna(), fill.astype(self.dtype)))
        out = super().predict(filled)
        return np.where(X["when"].isna().to_numpy(), 5.0, out)


@pytest.mark.parametrize("kind", ["naive", "tz"])
def test_missing_date_point(kind):
    X = frame(kind)
    X.loc[X.index[:10], "when"] = pd.NaT
    model = AcceptsMissing(X["when"].dtype)
    res = pdpx.partial_dependence(model, X, ["when"], grid_resolution=8)
    g = res.grid_values[0]
    assert pd.isna(g[len(g) - 1]) and g.dtype == X["when"].dtype
    np.testing.assert_allclose(res.average[0, -1], 5.0)
    df = res.to_frame()
    assert df["label_1"].iloc[-1] == "missing" and pd.isna(df["x_1"].iloc[-1])
    assert res.support[-1] == 10


def test_auto_runs_brute_when_the_trees_could_be_read():
    """A Pipeline whose trees pdpx reads (the date column dropped): a date feature still runs brute, with the reason."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.tree import DecisionTreeRegressor

    X = frame("naive")[["when", "x"]]
    y = X["x"].to_numpy() ** 2
    model = make_pipeline(ColumnTransformer([("d", "drop", ["when"])], remainder="passthrough"),
                          DecisionTreeRegressor(max_depth=3)).fit(X, y)
    res = pdpx.partial_dependence(model, X, ["when"], grid_resolution=6)
    assert res.method == "brute"
    assert any("holds dates" in n for n in res.notes)
    np.testing.assert_allclose(res.average[0], model.predict(X).mean())
    other = pdpx.partial_dependence(model, X, ["x"], grid_resolution=6)  # the number alone: the trees answer
    assert other.method == "exact"


def test_derivative_is_per_day():
    X = frame("naive")

    class Linear:
        def predict(self, X):
            return (X["when"] - START).dt.total_seconds().to_numpy() / 86_400 * 0.5 + X["x"].to_numpy()

    res = pdpx.derivative_ice(Linear(), X, "when", grid_resolution=10)
    np.testing.assert_allclose(res.average[0], 0.5, rtol=1e-9)
    assert any("per day" in n for n in res.notes)


def ale_by_definition(model, X, feature, n_bins):
    """First-order ALE written out on dates: edges at the k / n_bins quantiles of the observed dates (the smallest
    date whose ECDF reaches k / n_bins), each row moved to its bin's two edges, local effects averaged per bin,
    accumulated and centered on the rows' mean."""
    col = X[feature]
    xs = col.sort_values().array
    idx = [max(-(-k * len(xs) // n_bins) - 1, 0) for k in range(n_bins + 1)]
    z = pd.Series(xs[idx]).drop_duplicates().array
    effects, mass = [], []
    for k in range(1, len(z)):
        rows = ((col >= z[0]) if k == 1 else (col > z[k - 1])) & (col <= z[k])
        lo, hi = X[rows].copy(), X[rows].copy()
        lo[feature] = pd.Series(pd.array([z[k - 1]] * len(lo), dtype=col.dtype), index=lo.index)
        hi[feature] = pd.Series(pd.array([z[k]] * len(hi), dtype=col.dtype), index=hi.index)
        effects.append(np.mean(model.predict(hi) - model.predict(lo)))
        mass.append(rows.sum())
    acc = np.concatenate([[0.0], np.cumsum(effects)])
    return z, acc - sum(m * (acc[k] + acc[k + 1]) / 2 for k, m in enumerate(mass)) / sum(mass)


@pytest.mark.parametrize("kind,unit", [("naive", "us"), ("naive", "ns"), ("tz", "us"), ("period", "us"),
                                       ("hours", "s")])
def test_ale_of_a_date_feature_equals_the_definition(kind, unit):
    X = frame(kind, unit=unit)
    model = DateModel(X["when"].dtype)
    res = pdpx.ale(model, X, "when", grid_resolution=7)
    z, ref = ale_by_definition(model, X, "when", 7)
    assert res.grid_values[0].dtype == X["when"].dtype
    assert list(pd.array(res.grid_values[0], dtype=X["when"].dtype)) == list(z)
    np.testing.assert_allclose(res.average[0], ref, rtol=0, atol=1e-12)


def test_importance_and_h_on_a_date_feature():
    X = frame("tz")
    model = pipeline(X)
    imp = pdpx.importance(model, X, features=["when", "x"])
    row = imp.set_index("feature").loc["when"]
    assert row["feature_type"] == "date"
    res = pdpx.partial_dependence(model, X, ["when"])
    assert row["importance"] == pytest.approx(np.std(res.average[0], ddof=1))


def test_h_statistic_of_a_date_equals_the_definition():
    """Friedman's pairwise H squared, from partial dependences at the rows' own dates and numbers, written out."""
    X = frame("tz", n=60)
    model = DateModel(X["when"].dtype)
    h = pdpx.h_statistic(model, X, ["when", "x"]).to_frame()
    n = len(X)

    def centered_pd(columns):
        out = np.empty(n)
        for i in range(n):
            Z = X.copy()
            for c in columns:
                Z[c] = pd.Series([X[c].iloc[i]] * n, index=X.index).astype(X[c].dtype)
            out[i] = model.predict(Z).mean()
        return out - out.mean()

    both, when, x = centered_pd(["when", "x"]), centered_pd(["when"]), centered_pd(["x"])
    want = ((both - when - x) ** 2).sum() / (both ** 2).sum()
    assert want > 0.01
    np.testing.assert_allclose(h.loc[h["statistic"] == "pairwise", "h2"].item(), want, rtol=1e-9)


def test_extrapolation_check_and_support_read_dates():
    rng = np.random.default_rng(3)
    n = 2000
    days = START + pd.to_timedelta(rng.integers(0, 730, n), unit="D")
    X = pd.DataFrame({"when": days.tz_localize("UTC")})
    X["x"] = (days - START).days / 100 + rng.normal(scale=0.2, size=n)  # tied to the date
    X["c"] = pd.Categorical(["a"] * n)
    model = DateModel(X["when"].dtype)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = pdpx.partial_dependence(model, X, ["when"], grid_resolution=20)
    assert res.extrapolation.partner == "x" and res.extrapolation.warns
    assert any(issubclass(w.category, pdpx.ExtrapolationWarning) for w in caught)
    assert res.support.sum() > 0.8 * n  # the rows within the grid's intervals
    with pytest.warns(pdpx.ExtrapolationWarning):
        two = pdpx.partial_dependence(model, X, ["when", "x"], grid_resolution=6)
    assert two.outside_hull is not None and two.outside_hull.any() and not two.outside_hull.all()
    assert not any("support not computed" in n for n in res.notes + two.notes)


def test_collection_frame_mixes_dates_and_numbers():
    X = frame("naive")
    coll = pdpx.partial_dependence_many(DateModel(X["when"].dtype), X, [["when"], ["x"], ["c"]], grid_resolution=5)
    df = coll.to_frame()
    assert set(df["type_1"]) == {"date", "numeric", "categorical"}
    dated = df[df["type_1"] == "date"]
    assert all(isinstance(v, pd.Timestamp) for v in dated["x_1"])


def test_repr_and_grid_label_print_dates():
    from pdpx.core.result import grid_label

    assert grid_label(pd.Timestamp("2021-03-01")) == "2021-03-01"
    assert grid_label(np.datetime64("2021-03-01T12:30")) == "2021-03-01 12:30"
    assert grid_label(pd.Timestamp("2021-03-01", tz="Europe/Paris")) == "2021-03-01"
    assert grid_label(pd.Period("2021-03", "M")) == "2021-03"
    assert grid_label(pd.NaT) == "missing"


@pytest.mark.parametrize("kind", ["naive", "tz"])
def test_groups_by_a_date_column_are_labelled_with_dates(kind):
    X = frame(kind)
    model = DateModel(X["when"].dtype)
    res = pdpx.partial_dependence(model, X, ["x"], by="when", by_bins=3, grid_resolution=4)
    assert len(res.labels) == 3
    for label in res.labels:
        lo, hi = label.strip("[(]").split(", ")
        assert pd.Timestamp(lo) < pd.Timestamp(hi) and len(lo) == 10  # days: midnights
    wall = X["when"].dt.tz_localize(None) if kind == "tz" else X["when"]
    first = res.labels[0].strip("[(]").split(", ")
    rows = (wall >= pd.Timestamp(first[0])) & (wall <= pd.Timestamp(first[1]))
    group = X[rows.to_numpy()]
    grid = res.results[0].grid_values[0]
    for k in range(len(grid)):
        np.testing.assert_allclose(res.results[0].average[0, k], model.predict(group.assign(x=grid[k])).mean(),
                                   atol=1e-12)


@pytest.mark.parametrize("kind", ["naive", "tz", "period"])
def test_polars_frame_holds_dates(kind):
    pl = pytest.importorskip("polars")
    X = frame(kind)
    res = pdpx.partial_dependence(DateModel(X["when"].dtype), X, ["when"], grid_resolution=4)
    df = res.to_frame(backend="polars")
    assert isinstance(df.schema["x_1"], pl.Datetime)
    assert df.schema["x_1"].time_zone == ("Europe/Paris" if kind == "tz" else None)
    first = pd.Timestamp(df["x_1"][0])
    want = res.grid_values[0][0]
    want = want.start_time if kind == "period" else pd.Timestamp(want)
    assert first == want
    assert df["label_1"].to_list() == res.to_frame()["label_1"].tolist()


def test_sklearn_dropin_refuses_a_date_with_a_clear_error():
    from pdpx.sklearn import partial_dependence as sklearn_partial_dependence

    X = frame("naive")
    with pytest.raises(ValueError, match="The column 'when' holds dates .*pdpx.partial_dependence"):
        sklearn_partial_dependence(pipeline(X), X, ["when"])


@pytest.mark.parametrize("kind", ["naive", "tz", "period"])
def test_constant_and_empty_date_columns_are_refused_clearly(kind):
    X = frame(kind)
    model = DateModel(X["when"].dtype)
    one = X.assign(when=pd.Series([X["when"].iloc[0]] * len(X), index=X.index).astype(X["when"].dtype))
    first = X["when"].iloc[0]
    shown = str(first) if kind == "period" else first.strftime("%Y-%m-%d")
    with pytest.raises(PdpxError, match=f"feature 'when' is constant \\(every date is {shown}\\)"):
        pdpx.partial_dependence(model, one, ["when"])
    none = X.assign(when=pd.Series(pd.array([pd.NaT] * len(X), dtype=X["when"].dtype), index=X.index))
    with pytest.raises(PdpxError, match="feature 'when' has only missing dates"):
        pdpx.partial_dependence(model, none, ["when"], include_missing=False)
