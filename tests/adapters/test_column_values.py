"""Issue 49 point 4: exact through steps that make several columns of one raw column.

A spline basis (periodic or not), one-hot bins (KBinsDiscretizer, or ordinal bins then
OneHotEncoder), powers of one column, a TargetEncoder and sin/cos of an hour declared through
``declare_columnwise``: ``exact`` reads each split on a derived column as a set of the raw
column's values, and must equal the definition (the pipeline's own predict, averaged with the
raw column set to each grid value), on the default grid, at grid="thresholds" (in raw units),
for ICE, for another feature and for a pair. A step declared column-wise that reads other columns
makes blocks that are no image of any raw value: refused (brute, saying why).
"""

import warnings

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    OneHotEncoder,
    PolynomialFeatures,
    SplineTransformer,
    StandardScaler,
    TargetEncoder,
)
from sklearn.tree import DecisionTreeRegressor
from stacked import predict_copies

import pdpx
from pdpx.adapters import column_values
from pdpx.adapters.sklearn_transforms import declare_columnwise
from pdpx.core.errors import PdpxError, StackingWarning
from pdpx.core.ir import TreeEnsemble

N = 400
rng = np.random.default_rng(49)
X = pd.DataFrame({"hour": rng.integers(0, 24, N), "temp": rng.normal(15, 5, N).round(1),
                  "shop": rng.choice(["a", "b", "c"], N)})
Y = np.sin(2 * np.pi * X.hour / 24) * 3 + 0.2 * X.temp + (X.shop == "b") + rng.normal(0, 0.3, N)


def sincos(Z):
    """sin and cos of an hour, for every column given (stacked: all sines, then all cosines)."""
    Z = np.asarray(Z, dtype=float)
    return np.hstack([np.sin(2 * np.pi * Z / 24), np.cos(2 * np.pi * Z / 24)])


declare_columnwise(sincos, 2)
KB = {"quantile_method": "averaged_inverted_cdf"}
ENCODERS = {
    "periodic spline": lambda: SplineTransformer(n_knots=7, degree=3, extrapolation="periodic"),
    "spline": lambda: SplineTransformer(n_knots=5, degree=2, extrapolation="linear"),
    "sin/cos": lambda: FunctionTransformer(sincos),
    "one-hot bins": lambda: KBinsDiscretizer(n_bins=6, encode="onehot-dense", **KB),
    "bins then OneHotEncoder": lambda: make_pipeline(KBinsDiscretizer(n_bins=5, encode="ordinal", **KB),
                                                     OneHotEncoder(sparse_output=False)),
    "powers": lambda: PolynomialFeatures(3),
    "spline then scaler": lambda: make_pipeline(SplineTransformer(n_knots=6), StandardScaler()),
}
FINALS = {
    "hgb": lambda: HistGradientBoostingRegressor(max_iter=25, random_state=0),
    "tree": lambda: DecisionTreeRegressor(max_depth=7, random_state=0),
    "lightgbm": lambda: lgb.LGBMRegressor(n_estimators=20, min_child_samples=5, verbose=-1),
}


def pipeline(encoder, final):
    pre = make_column_transformer((encoder, ["hour"]), (OneHotEncoder(), ["shop"]), remainder="passthrough",
                                  sparse_threshold=0)
    return make_pipeline(pre, final).fit(X, Y)


def definition(model, col, values):
    """Average of the model's own predict with ``col`` set to each value."""
    copies = []
    for v in values:
        Xv = X.copy()
        Xv[col] = v
        copies.append(Xv)
    return np.array([p.mean() for p in predict_copies(model.predict, copies)])


def exact(model, features, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", pdpx.TreeMismatchWarning)
        return pdpx.partial_dependence(model, X, features, method="exact", **kw)


@pytest.mark.parametrize("final", sorted(FINALS))
@pytest.mark.parametrize("encoder", sorted(ENCODERS))
def test_exact_equals_definition(encoder, final):
    model = pipeline(ENCODERS[encoder](), FINALS[final]())
    tol = 1e-9 if final != "lightgbm" else 1e-7
    res = exact(model, ["hour"])
    grid = np.asarray(res.grid_values[0], dtype=float)
    np.testing.assert_allclose(np.asarray(res.average).ravel(), definition(model, "hour", grid), atol=tol)
    # custom values between the hours (not among X's values: evaluated as they come)
    custom = np.array([-0.5, 3.25, 11.5, 23.75])
    res = exact(model, ["hour"], custom_values={"hour": custom})
    np.testing.assert_allclose(np.asarray(res.average).ravel(), definition(model, "hour", custom), atol=tol)


@pytest.mark.parametrize("encoder", sorted(ENCODERS))
def test_thresholds_grid_in_raw_units(encoder):
    """grid="thresholds": points are hours (raw units), the curve equals the definition there, and every hour
    of X has the partial dependence of the point ending its run (the steps are the curve on X's values)."""
    model = pipeline(ENCODERS[encoder](), HistGradientBoostingRegressor(max_iter=25, random_state=0))
    res = exact(model, ["hour"], grid="thresholds")
    grid = np.asarray(res.grid_values[0], dtype=float)
    hours = np.unique(X.hour.to_numpy(dtype=float))
    assert set(grid) <= set(hours) and grid[-1] == hours[-1]
    np.testing.assert_allclose(np.asarray(res.average).ravel(), definition(model, "hour", grid), atol=1e-9)
    every = definition(model, "hour", hours)
    step_of = np.searchsorted(grid, hours)  # each hour belongs to the run ending at the next grid point
    np.testing.assert_allclose(every, np.asarray(res.average).ravel()[step_of], atol=1e-9)


@pytest.mark.parametrize("encoder", ["periodic spline", "sin/cos", "bins then OneHotEncoder"])
def test_ice_other_feature_and_pair(encoder):
    model = pipeline(ENCODERS[encoder](), HistGradientBoostingRegressor(max_iter=25, random_state=0))
    res = exact(model, ["hour"], kind="individual")
    grid = np.asarray(res.grid_values[0], dtype=float)
    ice = np.asarray(res.individual).reshape(N, len(grid))
    for g, v in enumerate(grid[:5]):
        Xv = X.copy()
        Xv["hour"] = v
        np.testing.assert_allclose(ice[:, g], model.predict(Xv), atol=1e-9)
    res = exact(model, ["temp"])  # hour keeps each row's own value (its codes)
    np.testing.assert_allclose(np.asarray(res.average).ravel(),
                               definition(model, "temp", np.asarray(res.grid_values[0])), atol=1e-9)
    res = exact(model, ["hour", "shop"])
    hours, shops = res.grid_values
    avg = np.asarray(res.average).reshape(len(hours), len(shops))
    copies = []
    for h in hours:
        for s in shops:
            Xv = X.copy()
            Xv["hour"], Xv["shop"] = h, s
            copies.append(Xv)
    want = np.array([p.mean() for p in predict_copies(model.predict, copies)]).reshape(len(hours), len(shops))
    assert np.abs(avg - want).max() < 1e-9


def test_target_encoder_on_a_numeric_column():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model = pipeline(TargetEncoder(), HistGradientBoostingRegressor(max_iter=25, random_state=0))
    for kw in ({}, {"grid": "thresholds"}):  # thresholds: the hours it encodes, in raw units
        res = exact(model, ["hour"], **kw)
        grid = np.asarray(res.grid_values[0], dtype=float)
        np.testing.assert_allclose(np.asarray(res.average).ravel(), definition(model, "hour", grid), atol=1e-9)
    assert set(grid) == set(range(24))


def test_classifier_on_sparse_one_hot_bins():
    """KBinsDiscretizer(encode="onehot") makes a sparse matrix; a forest reads its absent entries as zeros."""
    yc = (Y > np.median(Y)).astype(int)
    pre = make_column_transformer((KBinsDiscretizer(n_bins=6, encode="onehot", **KB), ["hour"]),
                                  ("drop", ["shop"]), remainder="passthrough")
    model = make_pipeline(pre, RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0)).fit(X, yc)
    res = exact(model, ["hour"])
    grid = np.asarray(res.grid_values[0], dtype=float)
    want = [model.predict_proba(X.assign(hour=v))[:, 1].mean() for v in grid]
    np.testing.assert_allclose(np.asarray(res.average).reshape(len(grid), -1)[:, -1], want, atol=1e-9)


def mixing(Z):
    """Declared column-wise, but each row's block reads the other column: no image of any hour."""
    Z = np.asarray(Z, dtype=float)
    return np.hstack([np.sin(Z[:, :1] + Z[:, 1:2]), np.cos(Z[:, :1])])


def batchwise(Z):
    """Declared column-wise, but standardised within the batch."""
    Z = np.asarray(Z, dtype=float)
    return np.hstack([Z - Z.mean(), (Z - Z.mean()) ** 2])


@pytest.mark.parametrize("func,cols", [(mixing, ["hour", "temp"]), (batchwise, ["hour"])])
def test_a_block_no_raw_value_makes_is_refused(func, cols):
    declare_columnwise(func, 2 if func is batchwise else 1, layout="interleaved")
    pre = make_column_transformer((FunctionTransformer(func), cols), remainder="drop")
    model = make_pipeline(pre, HistGradientBoostingRegressor(max_iter=10, random_state=0)).fit(X, Y)
    if func is batchwise:  # brute's own check finds the batch-dependent step too, and warns once
        with pytest.warns(StackingWarning, match="depend on the other rows"):
            res = pdpx.partial_dependence(model, X, ["hour"])
    else:
        res = pdpx.partial_dependence(model, X, ["hour"])
    assert res.method == "brute"
    assert any("not the image of its value" in n for n in res.notes), res.notes
    with pytest.raises(PdpxError, match="not the image"):
        pdpx.partial_dependence(model, X, ["hour"], method="exact")


def test_a_non_numeric_column_made_into_several_is_refused():
    def lengths(Z):
        return np.hstack([np.vectorize(len)(np.asarray(Z, dtype=object)), np.zeros((len(Z), 1))])

    declare_columnwise(lengths, 2)
    pre = make_column_transformer((FunctionTransformer(lengths), ["shop"]), remainder="passthrough")
    model = make_pipeline(pre, DecisionTreeRegressor(max_depth=4, random_state=0)).fit(X, Y)
    res = pdpx.partial_dependence(model, X, ["shop"])
    assert res.method == "brute" and any("numeric columns only" in n for n in res.notes), res.notes


def test_declare_columnwise_checks_its_arguments():
    with pytest.raises(ValueError, match="n_outputs"):
        declare_columnwise(np.sin, 0)
    with pytest.raises(ValueError, match="layout"):
        declare_columnwise(np.sin, 2, layout="sideways")


def test_interleaved_layout_of_two_columns():
    def pair(Z):
        Z = np.asarray(Z, dtype=float)
        return np.stack([np.sin(Z), np.cos(Z)], axis=2).reshape(len(Z), -1)  # sin x0, cos x0, sin x1, cos x1

    declare_columnwise(pair, 2, layout="interleaved")
    pre = make_column_transformer((FunctionTransformer(pair), ["hour", "temp"]), remainder="drop")
    model = make_pipeline(pre, HistGradientBoostingRegressor(max_iter=15, random_state=0)).fit(X, Y)
    for col in ("hour", "temp"):
        res = exact(model, [col])
        np.testing.assert_allclose(np.asarray(res.average).ravel(),
                                   definition(model, col, np.asarray(res.grid_values[0])), atol=1e-9)


def test_value_set_codes_are_route_classes_and_new_routes_are_refused():
    """One stump on the derived column sin(x) <= 0: values share a code exactly when they route alike; a value
    outside the evaluated set takes its class's code, or is refused when it routes like none."""
    ens = TreeEnsemble(left=np.array([1, -1, -1]), right=np.array([2, -1, -1]), feature=np.array([0, 0, 0]),
                       threshold=np.array([0.0, 0, 0]), missing_left=np.array([True, False, False]),
                       value=np.array([0.0, 1.0, 2.0]), tree_start=np.array([0, 3]), tree_group=np.array([0]),
                       n_features=1)

    def evaluate(x):
        return np.sin(np.asarray(x, dtype=float))[:, None]

    vs = column_values.build("x", np.array([0.5, 1.0, 4.0, 5.0, np.nan]), evaluate, ens, [np.array([0])], True)
    codes = vs.codes(np.array([0.5, 1.0, 4.0, 5.0, 2.0, 6.0, np.nan]))
    assert codes[0] == codes[1] == codes[4] and codes[2] == codes[3] == codes[5] and codes[0] != codes[2]
    assert codes[6] == codes[2]  # NaN: sin(NaN) is missing, which goes left, as sin(4) <= 0 does
    only_right = column_values.build("x", np.array([0.5, 1.0]), evaluate, ens, [np.array([0])], False)
    with pytest.raises(PdpxError, match="reaches the model's splits in a way none"):
        only_right.codes(np.array([4.0]))
    assert only_right.codes(np.array([np.nan]))[0] == -1


def test_a_value_met_in_a_partition_outside_the_reading_falls_back_to_brute_under_auto():
    """Rows in Dask partitions: the reading knows the grid's values, not every partition's. A value there that
    routes like none of them cannot be coded in trees already in use: ``auto`` answers with brute (equal to the
    definition, saying why in the notes); ``method="exact"`` asked by name refuses with the reason."""
    dd = pytest.importorskip("dask.dataframe", reason="Dask (pdpx[dask]) is needed for rows in partitions")
    model = pipeline(FunctionTransformer(sincos), HistGradientBoostingRegressor(max_iter=25, random_state=0))
    Xh = X.assign(hour=X.hour + 0.5)  # half hours, and whole hours in the grid Dask's quantiles give
    parts = dd.from_pandas(Xh, npartitions=3)
    res = pdpx.partial_dependence(model, parts, "hour", grid_resolution=7)
    assert res.method == "brute"
    assert any(n.startswith("exact not used: value") and "brute answered" in n for n in res.notes), res.notes
    expected = [model.predict(Xh.assign(hour=v)).mean() for v in res.grid_values[0]]
    np.testing.assert_allclose(res.average[0], expected, rtol=0, atol=1e-12)
    with pytest.raises(column_values.UnreadValueError, match="reaches the model's splits in a way none"):
        pdpx.partial_dependence(model, parts, "hour", grid_resolution=7, method="exact")
