"""Grids: percentiles, unique values, custom values, categories, integers, booleans, NaN."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats.mstats import mquantiles as scipy_mquantiles

import pdpx
from pdpx.core.grid import feature_grid, mquantiles


def grid(col, **kw):
    opts = dict(categorical=False, grid_resolution=5, percentiles=(0.05, 0.95))
    opts.update(kw)
    return feature_grid(pd.Series(col, name="f"), **opts)


def test_mquantiles_matches_scipy():
    x = np.random.default_rng(1).normal(size=137)
    np.testing.assert_allclose(mquantiles(x, [0.05, 0.95]), scipy_mquantiles(x, prob=[0.05, 0.95]), atol=1e-14)


def test_percentile_grid_is_evenly_spaced_between_percentiles():
    x = np.arange(1000, dtype=float)
    g = grid(x)
    lo, hi = scipy_mquantiles(x, prob=[0.05, 0.95])
    np.testing.assert_allclose(g, np.linspace(lo, hi, 5))


def test_unique_values_when_fewer_than_resolution():
    np.testing.assert_array_equal(grid([3.0, 1.0, 2.0, 1.0]), [1.0, 2.0, 3.0])


def test_nan_is_excluded_from_the_grid():
    g = grid([1.0, np.nan, 2.0, 3.0, np.nan])
    np.testing.assert_array_equal(g, [1.0, 2.0, 3.0])


def test_integer_feature_gets_whole_numbers_of_its_dtype():
    g = grid(np.arange(200), grid_resolution=7)
    assert g.dtype == np.int64
    assert np.all(np.diff(g) > 0)
    assert g[0] >= 9 and g[-1] <= 190


def test_boolean_feature_is_two_categories():
    g = grid([True, False, True], categorical=True)
    assert list(g) == [False, True]


def test_category_order_is_kept():
    col = pd.Categorical(["low", "high", "mid", "low"], categories=["low", "mid", "high"], ordered=True)
    assert list(grid(col, categorical=True)) == ["low", "mid", "high"]


def test_unobserved_categories_are_left_out():
    col = pd.Categorical(["a", "c"], categories=["a", "b", "c"])
    assert list(grid(col, categorical=True)) == ["a", "c"]


def test_custom_values_keep_their_order():
    np.testing.assert_array_equal(grid(np.arange(10.0), custom=[5, 1, 3]), [5.0, 1.0, 3.0])


def test_custom_values_for_categorical():
    col = pd.Categorical(["a", "b"], categories=["a", "b", "z"])
    assert list(grid(col, categorical=True, custom=["z", "a"])) == ["z", "a"]


def test_grid_through_the_public_call_and_nan_rows_still_averaged():
    X = pd.DataFrame({"a": [0.0, 1.0, np.nan, 3.0], "b": [1.0, 2.0, 3.0, 4.0]})

    def f(frame):  # a plain function is a model: NaN rows are averaged over too
        return frame["b"].to_numpy() * 10 + np.nan_to_num(frame["a"].to_numpy())

    res = pdpx.partial_dependence(f, X, ["b"], kind="both")
    np.testing.assert_array_equal(res.grid_values[0], [1.0, 2.0, 3.0, 4.0])
    # the row whose 'a' is NaN contributes 0 for a: average over all four rows
    np.testing.assert_allclose(res.average[0], 10 * res.grid_values[0] + (0 + 1 + 0 + 3) / 4)
    assert res.individual.shape == (1, 4, 4)


def test_mixed_types_in_an_object_column_explain_themselves():
    with pytest.raises(pdpx.PdpxError, match="mixes types"):
        grid(pd.Series(["a", 1, "b"], dtype=object), categorical=True)


def test_custom_values_for_a_feature_with_one_value():
    X = pd.DataFrame({"a": [1.0, 1.0, 1.0], "b": [1.0, 2.0, 3.0]})
    res = pdpx.partial_dependence(lambda d: d["a"] * 2 + d["b"], X, ["a"], custom_values={"a": [0, 5]})
    np.testing.assert_allclose(res.average[0], [0 + 2, 10 + 2])
