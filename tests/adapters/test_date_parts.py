"""Issue 49 point 4, date parts: exact PD of a ``datetime64`` column through a step that makes several columns of it.

A user's function declared column-wise (``declare_columnwise``) makes year, month, day of week, hour and sin/cos of
the day of year of a date column; a tree model (HistGradientBoosting, a DecisionTree, LightGBM) reads them. ``exact``
reads the column's dates as exact numbers (:func:`pdpx.core.dates.date_counts`) inside the reading only: the user's
function is given dates of the column's own dtype, the grid and results stay dates, and the numbers must equal the
definition (the pipeline's own predict with the column set to each grid date, averaged). A step not declared
column-wise, a period column and a date no exact number holds run brute, saying why.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.tree import DecisionTreeRegressor

import pdpx
from pdpx.core.dates import count_dates, date_counts
from pdpx.core.errors import PdpxError
from pdpx.extend import adapt, declare_columnwise

N = 300
SEEN: list = []  # the dtypes the user's function was given


def parts(Z):
    """Year, month, day of week, hour (on the column's own clock) and sin/cos of the day of year of one date column."""
    d = Z.iloc[:, 0] if isinstance(Z, pd.DataFrame) else pd.Series(np.asarray(Z).reshape(-1))
    SEEN.append(d.dtype)
    doy = d.dt.day_of_year.to_numpy(dtype=float)
    return np.column_stack([d.dt.year, d.dt.month, d.dt.day_of_week, d.dt.hour,
                            np.sin(2 * np.pi * doy / 365.25), np.cos(2 * np.pi * doy / 365.25)]).astype(float)


declare_columnwise(parts, 6)


def undeclared(Z):
    return parts(Z)


def frame(tz=None, unit="us", seed=0):
    rng = np.random.default_rng(seed)
    day = pd.Series(pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 800 * 24, N), "h"))
    day = day.astype(f"datetime64[{unit}]")
    if tz is not None:
        day = day.dt.tz_localize("UTC").dt.tz_convert(tz)
    X = pd.DataFrame({"day": day, "x": rng.normal(size=N)})
    y = (X.day.dt.month + 0.5 * X.day.dt.day_of_week + 0.2 * X.day.dt.hour + X.x + rng.normal(0, 0.1, N)).to_numpy()
    return X, y


def models():
    out = {"hgb": lambda: HistGradientBoostingRegressor(max_iter=20, random_state=0),
           "tree": lambda: DecisionTreeRegressor(max_depth=6, random_state=0)}
    try:
        import lightgbm as lgb
    except ImportError:  # pragma: no cover - installed in CI
        return out
    out["lightgbm"] = lambda: lgb.LGBMRegressor(n_estimators=20, num_leaves=8, min_child_samples=5, verbose=-1)
    return out


def fit(X, y, model="hgb", func=parts):
    pre = ColumnTransformer([("d", FunctionTransformer(func), ["day"])], remainder="passthrough")
    return make_pipeline(pre, models()[model]()).fit(X, y)


def at(X, column, value):
    """X with ``column`` set to ``value`` in every row, in the column's own dtype."""
    return X.assign(**{column: pd.Series([value] * len(X), index=X.index, dtype=X[column].dtype)})


def definition_ice(pipe, X, grid):
    return np.column_stack([pipe.predict(at(X, "day", v)) for v in grid])


@pytest.mark.parametrize("model", ["hgb", "tree", "lightgbm"])
@pytest.mark.parametrize("tz", [None, "Europe/Paris"])
def test_exact_equals_the_definition(model, tz):
    if model not in models():
        pytest.skip("lightgbm is not installed")
    X, y = frame(tz)
    pipe = fit(X, y, model)
    SEEN.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lightgbm's feature-name warning
        res = pdpx.partial_dependence(pipe, X, ["day"], method="exact", kind="both", grid_resolution=15)
        ice = definition_ice(pipe, X, res.grid_values[0])
    assert res.method == "exact"
    assert SEEN and all(d == X.day.dtype for d in SEEN), SEEN  # the user's function only ever saw dates
    grid = res.grid_values[0]
    assert pd.Series(grid).dtype == X.day.dtype  # the grid stays dates of the column's dtype
    assert np.abs(np.ravel(res.average) - ice.mean(axis=0)).max() <= 1e-9
    assert np.abs(np.asarray(res.individual).reshape(ice.shape) - ice).max() <= 1e-9
    assert np.ptp(ice.mean(axis=0)) > 0.5  # the dates matter: a flat curve would pass trivially


@pytest.mark.parametrize("tz", [None, "America/New_York"])
def test_two_way_with_another_feature(tz):
    X, y = frame(tz, seed=1)
    pipe = fit(X, y)
    res = pdpx.partial_dependence(pipe, X, ["day", "x"], method="exact", grid_resolution=6)
    g0, g1 = res.grid_values
    want = np.array([[pipe.predict(at(X, "day", a).assign(x=b)).mean() for b in g1] for a in g0])
    assert res.method == "exact"
    assert np.abs(np.asarray(res.average).reshape(want.shape) - want).max() <= 1e-9


def test_tree_model_marks_the_column_dated():
    X, y = frame()
    pipe = fit(X, y)
    adapter = adapt(pipe)
    adapter.validate_columns(X)
    tm = adapter.tree_model(adapter.responses()[0])
    assert tm is not None and 0 in tm.dated and 0 in tm.value_sets


def test_threshold_grid_is_dates_of_x_and_exact():
    X, y = frame(seed=2)
    pipe = fit(X, y, "tree")
    res = pdpx.partial_dependence(pipe, X, ["day"], grid="thresholds", method="exact")
    grid = res.grid_values[0]
    assert res.method == "exact" and grid.dtype == X.day.dtype
    assert set(pd.Series(grid)).issubset(set(X.day))  # points are dates the column holds
    want = definition_ice(pipe, X, grid).mean(axis=0)
    assert np.abs(np.ravel(res.average) - want).max() <= 1e-9


def test_nanosecond_column_of_whole_microseconds_is_exact():
    X, y = frame(unit="ns", seed=3)
    pipe = fit(X, y)
    res = pdpx.partial_dependence(pipe, X, ["day"], method="exact", grid_resolution=8)
    want = definition_ice(pipe, X, res.grid_values[0]).mean(axis=0)
    assert res.method == "exact" and np.abs(np.ravel(res.average) - want).max() <= 1e-9


def test_refusals_run_brute_with_the_reason():
    X, y = frame(unit="ns", seed=4)
    # a step not declared column-wise
    res = pdpx.partial_dependence(fit(X, y, func=undeclared), X, ["day"], grid_resolution=5)
    assert res.method == "brute" and any("declare_columnwise" in n for n in res.notes), res.notes
    # a date no exact number holds (a nanosecond after a whole microsecond)
    pipe = fit(X, y)
    Xs = X.copy()
    Xs.loc[0, "day"] = Xs.loc[0, "day"] + pd.Timedelta(1, "ns")
    res = pdpx.partial_dependence(pipe, Xs, ["day"], grid_resolution=5)
    assert res.method == "brute" and any("not a whole number of us" in n for n in res.notes), res.notes
    with pytest.raises(PdpxError, match="holds dates"):
        pdpx.partial_dependence(pipe, Xs, ["day"], grid_resolution=5, method="exact")
    # a period column
    Xp = X.assign(day=X.day.dt.to_period("D"))
    pre = ColumnTransformer([("d", FunctionTransformer(lambda Z: parts(Z.apply(lambda c: c.dt.to_timestamp()))),
                              ["day"])], remainder="passthrough")
    declare_columnwise(pre.transformers[0][1].func, 6)
    pipe = make_pipeline(pre, DecisionTreeRegressor(max_depth=4, random_state=0)).fit(Xp, y)
    res = pdpx.partial_dependence(pipe, Xp, ["day"], grid_resolution=5)
    assert res.method == "brute" and any("datetime64 columns" in n for n in res.notes), res.notes
    want = [pipe.predict(at(Xp, "day", v)).mean() for v in res.grid_values[0]]
    assert np.allclose(np.ravel(res.average), want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("dtype", ["datetime64[s]", "datetime64[ms]", "datetime64[us]", "datetime64[ns]",
                                   pd.DatetimeTZDtype("ns", "Europe/Paris"), pd.DatetimeTZDtype("s", "Asia/Tokyo")])
def test_date_counts_round_trip(dtype):
    utc = pd.Series(pd.to_datetime(["2021-03-28 00:30:00", "2021-10-31 01:30:00", None, "1969-12-31 23:59:59"],
                                   format="ISO8601")).dt.tz_localize("UTC")  # across both DST changes in Paris
    s = utc.dt.tz_convert(dtype.tz).astype(dtype) if isinstance(dtype, pd.DatetimeTZDtype) else \
        utc.dt.tz_localize(None).astype(dtype)
    n = date_counts(s, s.dtype)
    assert np.isnan(n[2]) and n[3] < 0 and np.all(np.diff(n[[3, 0, 1]]) > 0)
    assert pd.Series(count_dates(n, s.dtype)).equals(s)  # one date per number, in the column's dtype


def test_date_counts_refuses_what_float64_cannot_hold():
    s = pd.Series(pd.to_datetime(["2021-01-01 00:00:00.000000001"]))
    with pytest.raises(PdpxError, match="whole number of us"):
        date_counts(s, s.dtype)
    far = pd.Series(np.array(["2300-01-01"], dtype="datetime64[us]"))
    with pytest.raises(PdpxError, match="2\\*\\*53"):
        date_counts(far, far.dtype)


@pytest.mark.parametrize("feature", ["day", "x"])
def test_regions_with_a_date_column_made_into_parts(feature):
    """regions of the date feature, and of another with the date column a candidate split (by its days): each
    region's PD equals the definition on its rows; missing dates included."""
    X, y = frame("Europe/Paris", seed=5)
    X.loc[[3, 7], "day"] = pd.NaT
    pipe = fit(X, y)
    res = pdpx.regions(pipe, X, feature, method="exact")
    assert res.method == "exact"
    for region in res.regions:
        rows = X.iloc[region.rows]
        want = [pipe.predict(at(rows, "day", v) if feature == "day" else rows.assign(x=v)).mean()
                for v in res.grid_values]
        assert np.abs(np.ravel(region.average) - want).max() <= 1e-9
