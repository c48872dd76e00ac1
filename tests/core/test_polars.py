"""polars DataFrames in, wherever pandas ones go: the same numbers; to_frame(backend="polars") out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdpx

pl = pytest.importorskip("polars", reason="polars is not installed")
pytest.importorskip("sklearn", reason="scikit-learn is not installed")
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

N = 200


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.uniform(size=N),
                      "g": pd.Categorical(rng.choice(["x", "y", "z"], N))})
    y = X["a"] * X["b"] + (X["g"] == "y") + rng.normal(scale=0.1, size=N)
    return X, y


def polars_of(X: pd.DataFrame):
    return pl.DataFrame({"a": X["a"].to_numpy(), "b": X["b"].to_numpy(),
                         "g": pl.Series(X["g"].astype(str).to_numpy()).cast(pl.Enum(["x", "y", "z"]))})


@pytest.mark.parametrize("method", ["brute", "exact", "auto"])
@pytest.mark.parametrize("features", [["a"], ["g"], ["a", "g"]])
def test_same_numbers_as_pandas(data, method, features):
    X, y = data
    model = HistGradientBoostingClassifier(max_iter=10, categorical_features="from_dtype").fit(X, y > y.median())
    w = np.linspace(0.5, 1.5, N)
    ours = pdpx.partial_dependence(model, polars_of(X), features, method=method, kind="both", grid_resolution=7,
                                   sample_weight=pl.Series(w))
    ref = pdpx.partial_dependence(model, X, features, method="brute", kind="both", grid_resolution=7, sample_weight=w)
    for g1, g2 in zip(ours.grid_values, ref.grid_values):
        np.testing.assert_array_equal(np.asarray(g1), np.asarray(g2))
    np.testing.assert_allclose(ours.average, ref.average, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.individual, ref.individual, rtol=1e-12, atol=1e-12)


def test_lazyframe_many_and_report(data, tmp_path):
    pytest.importorskip("plotnine", reason="plotnine is not installed")
    X, y = data
    Xn = X[["a", "b"]]
    model = Ridge().fit(Xn, y)
    lazy = pl.DataFrame(Xn).lazy()
    coll = pdpx.partial_dependence_many(model, lazy, ["a", "b"], grid_resolution=5)
    ref = pdpx.partial_dependence_many(model, Xn, ["a", "b"], grid_resolution=5)
    pd.testing.assert_frame_equal(coll.to_frame(), ref.to_frame())
    path = pdpx.report(model, pl.DataFrame(Xn), tmp_path / "r.html", progress=False, interactions=None)
    assert path.read_text().count("<img") >= 2


def test_to_frame_polars_backend(data):
    X, y = data
    model = RandomForestRegressor(5, max_depth=3, random_state=0).fit(X[["a", "b"]], y)
    res = pdpx.partial_dependence(model, X[["a", "b"]], ["a", "b"], kind="both", grid_resolution=4)
    frame = res.to_frame(backend="polars")
    assert isinstance(frame, pl.DataFrame)
    pd.testing.assert_frame_equal(frame.to_pandas(use_pyarrow_extension_array=False),
                                  res.to_frame().astype({"row": "float64"}).assign(row=lambda d: d["row"]),
                                  check_dtype=False)
    assert frame.schema["yhat"] == pl.Float64 and frame.schema["feature_set"] == pl.String
    assert frame.filter(pl.col("kind") == "average")["row"].null_count() == 16
    coll = pdpx.partial_dependence_many(model, X[["a", "b"]], ["a", "b"], grid_resolution=4)
    assert isinstance(coll.to_frame(backend="polars"), pl.DataFrame)
    with pytest.raises(pdpx.PdpxError, match="backend must be 'pandas' or 'polars'"):
        res.to_frame(backend="arrow")


def test_polars_series_is_refused(data):
    X, y = data
    model = Ridge().fit(X[["a"]], y)
    with pytest.raises(pdpx.PdpxError, match="polars Series"):
        pdpx.partial_dependence(model, pl.Series("a", X["a"].to_numpy()), ["a"])


def test_sklearn_dropin_takes_polars(data):
    from sklearn.inspection import partial_dependence as sk_pd

    from pdpx.sklearn import partial_dependence

    X, y = data
    Xn = X[["a", "b"]]
    model = Ridge().fit(Xn, y)
    ours = partial_dependence(model, pl.DataFrame(Xn), ["a"], kind="both", grid_resolution=6)
    theirs = sk_pd(model, Xn, ["a"], kind="both", grid_resolution=6)
    np.testing.assert_allclose(ours["average"], theirs["average"], rtol=1e-12)
    np.testing.assert_allclose(ours["individual"], theirs["individual"], rtol=1e-12)
