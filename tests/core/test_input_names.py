"""Inputs whose columns have names are matched to the model's columns by name; predictions must be numbers.

A pyarrow Table or RecordBatch and a polars DataFrame with the model's columns in
another order give the partial dependence of the pandas frame in the model's order,
which is checked against the definition computed by hand; names that do not match are a
clear error. A predict returning text (even text that reads as numbers) is the model's
fault: :class:`~pdpx.core.errors.ModelOutputError`, never parsed.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.errors import ModelOutputError, PdpxError

pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")
lgb = pytest.importorskip("lightgbm")

N = 250
GRID = 7


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(11)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.normal(size=N) * 5, "c": rng.uniform(size=N)})
    X["c"] = X["c"].astype(np.float32)
    y = 2 * X.a + np.sin(X.b) + 3 * X.c
    model = lgb.LGBMRegressor(n_estimators=20, verbose=-1).fit(X, y)
    return model, X


def definition(model, X: pd.DataFrame, f: str, values) -> np.ndarray:
    """PD of ``f`` at ``values``: every row of X with ``f`` set to the value (dtype kept), predict, average."""
    out = []
    for v in values:
        Z = X.copy()
        Z[f] = pd.array(np.full(len(Z), v), dtype=X[f].dtype)
        out.append(np.mean(model.predict(Z)))
    return np.array(out)


def shuffled(X: pd.DataFrame, kind: str, rename=None):
    frame = X[["c", "a", "b"]].rename(columns=rename or {})
    if kind == "arrow":
        return pa.Table.from_pandas(frame, preserve_index=False)
    if kind == "recordbatch":
        return pa.RecordBatch.from_pandas(frame, preserve_index=False)
    if kind == "polars":
        return pl.from_pandas(frame)
    if kind == "polars-lazy":
        return pl.from_pandas(frame).lazy()
    return frame


@pytest.mark.parametrize("kind", ["pandas", "arrow", "recordbatch", "polars", "polars-lazy"])
@pytest.mark.parametrize("feature", ["a", "b", "c"])
def test_columns_in_another_order_are_matched_by_name(fitted, kind, feature):
    model, X = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pdpx.partial_dependence(model, shuffled(X, kind), [feature], grid_resolution=GRID)
        ref = pdpx.partial_dependence(model, X, [feature], grid_resolution=GRID)
    np.testing.assert_array_equal(res.grid_values[0], ref.grid_values[0])
    want = definition(model, X, feature, res.grid_values[0])
    np.testing.assert_allclose(res.average[0], want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ref.average[0], want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", ["arrow", "polars"])
def test_an_integer_feature_is_a_position_in_the_table_as_given(fitted, kind):
    model, X = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pdpx.partial_dependence(model, shuffled(X, kind), [1], grid_resolution=GRID)  # column 1 is 'a'
    assert res.features == ["a"]
    np.testing.assert_allclose(res.average[0], definition(model, X, "a", res.grid_values[0]), rtol=1e-9)


@pytest.mark.parametrize("kind", ["arrow", "recordbatch", "polars"])
def test_names_that_do_not_match_are_a_clear_error(fitted, kind):
    model, X = fitted
    renamed = shuffled(X, kind, rename={"b": "z"})
    with pytest.raises(PdpxError) as info:
        pdpx.partial_dependence(model, renamed, ["a"], grid_resolution=GRID)
    text = str(info.value)
    assert "missing ['b']" in text and "not seen at fit time ['z']" in text and "Pass X with exactly" in text


def test_a_narrow_arrow_column_keeps_its_type(fitted):
    model, X = fitted
    table = pa.Table.from_pandas(X[["c", "b", "a"]], preserve_index=False)
    assert table.schema.field("c").type == pa.float32()
    res = pdpx.partial_dependence(model, table, ["c"], grid_resolution=GRID)
    g = np.asarray(res.grid_values[0])
    np.testing.assert_array_equal(g.astype(np.float32).astype(np.float64), g)
    np.testing.assert_allclose(res.average[0], definition(model, X, "c", g), rtol=1e-9)


def test_a_pyarrow_array_is_refused(fitted):
    model, _ = fitted
    with pytest.raises(PdpxError, match="pyarrow .*one column"):
        pdpx.partial_dependence(model, pa.chunked_array([[1.0, 2.0]]), ["a"])


class TextModel:
    """A regressor whose predict returns what ``output`` makes of the rows."""

    def __init__(self, output):
        self.output = output

    def fit(self, X, y):
        return self

    def predict(self, X):
        return self.output(X)


@pytest.mark.parametrize("output", [
    lambda X: np.array([f"{v:.3f}" for v in X["a"]]),                # numeric strings
    lambda X: np.array([f"{v:.3f}".encode() for v in X["a"]]),       # numeric bytes
    lambda X: np.array([str(v) for v in X["a"]], dtype=object),      # objects holding numeric strings
    lambda X: np.array([1.0] + ["2.0"] * (len(X) - 1), dtype=object),  # mixed: a number, then text
    lambda X: pd.Series([str(v) for v in X["a"]], dtype="string"),  # pandas strings
], ids=["str", "bytes", "object-str", "object-mixed", "pandas-string"])
@pytest.mark.parametrize("method", ["brute", "auto"])
def test_numeric_strings_from_predict_are_refused(fitted, output, method):
    _, X = fitted
    with pytest.raises(ModelOutputError) as info:
        pdpx.partial_dependence(TextModel(output), X, ["a"], method=method, grid_resolution=GRID)
    text = str(info.value)
    assert "the model's predict" in text and "text" in text and "not numbers" in text


def test_numbers_held_as_objects_are_still_numbers(fitted):
    _, X = fitted
    model = TextModel(lambda Z: np.asarray(Z["a"].to_numpy() * 2.0, dtype=object))
    res = pdpx.partial_dependence(model, X, ["a"], method="brute", grid_resolution=GRID)
    np.testing.assert_allclose(res.average[0], 2.0 * np.asarray(res.grid_values[0]), rtol=1e-12)
