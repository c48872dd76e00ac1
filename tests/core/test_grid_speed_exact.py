"""A numeric feature's grid without sorting the column equals, bit for bit, the grid from the sorted column.

The reference below is the definition written out: every finite value sorted, the distinct values counted, and
the two percentiles read from the sorted values with plotting positions alpha = beta = 0.4 (the arithmetic of
``scipy.stats.mstats.mquantiles``); ``grid_between`` then spaces the grid between them in both computations.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats.mstats import mquantiles as scipy_mquantiles

import pdpx.core.grid as grid_module
from pdpx.core.errors import PdpxError
from pdpx.core.grid import feature_grid, grid_between, grid_dtype


def definition_quantiles(ordered: np.ndarray, percentiles) -> np.ndarray:
    """mquantiles of the sorted values, vectorised as scipy writes it (alpha = beta = 0.4)."""
    n = ordered.size
    p = np.asarray(percentiles, dtype=np.float64)
    aleph = n * p + (0.4 + p * (1.0 - 0.4 - 0.4))
    k = np.floor(np.clip(aleph, 1, n - 1)).astype(int)
    gamma = np.clip(aleph - k, 0, 1)
    return (1.0 - gamma) * ordered[k - 1] + gamma * ordered[k]


def definition_grid(column: pd.Series, grid_resolution: int, percentiles) -> np.ndarray:
    """The grid from the fully sorted column (the definition, before the speed-up)."""
    data = column.to_numpy(dtype=np.float64, na_value=np.nan)
    ordered = np.sort(data[np.isfinite(data)])
    if ordered.size == 0:
        raise PdpxError("no finite values")
    uniques = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    if uniques.size == 1:
        raise PdpxError("constant")
    if uniques.size < grid_resolution:
        if pd.api.types.is_integer_dtype(column.dtype):
            return uniques.astype(grid_dtype(column.dtype, uniques))
        return uniques.astype(np.float64)
    lo, hi = definition_quantiles(ordered, percentiles)
    return grid_between(column.name, column.dtype, lo, hi, grid_resolution, percentiles)


def assert_same_grid(column: pd.Series, grid_resolution: int, percentiles) -> None:
    """feature_grid equals the definition: same dtype, same bytes (-0.0 is not 0.0), or both raise."""
    try:
        expected = definition_grid(column, grid_resolution, percentiles)
    except PdpxError:
        with pytest.raises(PdpxError):
            feature_grid(column, categorical=False, grid_resolution=grid_resolution, percentiles=percentiles)
        return
    got = feature_grid(column, categorical=False, grid_resolution=grid_resolution, percentiles=percentiles)
    assert got.dtype == expected.dtype, (column.dtype, grid_resolution, percentiles)
    assert np.array_equal(got, expected), (column.dtype, grid_resolution, percentiles)
    assert got.tobytes() == expected.tobytes(), (column.dtype, grid_resolution, percentiles)


def generated_column(rng: np.random.Generator, grid_resolution: int) -> pd.Series:
    """A column of one of the kinds that reach a numeric grid, of a size below or above the probe's."""
    n = int(rng.choice([1, 2, 7, 60, 900, 5_000, 30_000]))
    kind = rng.integers(7)
    if kind == 0:  # floats with ties: few to many distinct values, around the grid's size
        m = int(rng.choice([1, 2, grid_resolution - 1, grid_resolution, grid_resolution + 1, 3 * grid_resolution]))
        values = rng.choice(rng.normal(size=max(m, 1)), size=n)
    elif kind == 1:  # integers of several widths
        dtype = rng.choice([np.int8, np.int16, np.int64, np.uint8])
        hi = int(min(np.iinfo(dtype).max, rng.choice([2, grid_resolution, 10 * grid_resolution, 1000])))
        values = rng.integers(0, hi, size=n, endpoint=True).astype(dtype)
    elif kind == 2:  # missing and infinite values mixed in
        values = rng.normal(size=n)
        values[rng.random(n) < 0.2] = np.nan
        values[rng.random(n) < 0.05] = np.inf
        values[rng.random(n) < 0.05] = -np.inf
    elif kind == 3:  # float32: the grid holds float32 values
        values = (rng.normal(size=n) * 10).astype(np.float32)
    elif kind == 4:  # zeros of both signs, often at the percentiles
        values = rng.normal(size=n)
        values[rng.random(n) < rng.choice([0.1, 0.5, 0.97])] = 0.0
        values[rng.random(n) < 0.5] *= -1.0
    elif kind == 5:  # nullable integers with missing values
        values = pd.array(rng.integers(-50, 50, size=n), dtype="Int64")
        values[rng.random(n) < 0.3] = pd.NA
    else:  # continuous, sorted (a column stored in order)
        values = np.sort(rng.uniform(-1e3, 1e3, size=n))
    return pd.Series(values, name="x")


def test_feature_grid_equals_the_sorted_definition_on_generated_columns(monkeypatch):
    """Many seeded columns and settings; both the partitioned path and the sorted fallback are taken."""
    calls = {"partitioned": 0, "zeros of both signs": 0}
    selected = grid_module._selected_quantiles

    def counted(finite, percentiles):
        out = selected(finite, percentiles)
        calls["partitioned" if out is not None else "zeros of both signs"] += 1
        return out

    monkeypatch.setattr(grid_module, "_selected_quantiles", counted)
    rng = np.random.default_rng(20261126)
    for _ in range(600):
        grid_resolution = int(rng.integers(2, 101))
        percentiles = [(0.0, 1.0), (0.05, 0.95), tuple(np.sort(rng.uniform(0, 1, 2)))][rng.integers(3)]
        assert_same_grid(generated_column(rng, grid_resolution), grid_resolution, percentiles)
    assert calls["partitioned"] > 100 and calls["zeros of both signs"] > 0, calls


def test_zeros_of_both_signs_at_a_percentile_keep_the_sorted_sign():
    """-0.0 and 0.0 tie; which one sits at a percentile's rank is the sort's choice, and the grid keeps it."""
    rng = np.random.default_rng(3)
    values = rng.normal(size=20_000)
    values[:2_000] = 0.0
    values[:1_000] = -0.0
    column = pd.Series(rng.permutation(values), name="x")
    for percentiles in [(0.0, 1.0), (0.5, 0.95), (0.05, 0.5)]:  # the median lands on a zero
        assert_same_grid(column, 100, percentiles)
    finite = column.to_numpy().copy()
    assert grid_module._selected_quantiles(finite, (0.5, 0.95)) is None  # the sort decides the sign there


def test_the_probe_proves_distinct_values_only_when_there_are_enough():
    """A sample with grid_resolution distinct values proves the column has them; too few proves nothing."""
    many = np.repeat(np.arange(5.0), 1_000)  # 5 distinct values in 5,000 rows
    assert grid_module._has_distinct(many, 5)
    assert not grid_module._has_distinct(many, 6)
    assert not grid_module._has_distinct(np.array([-0.0, 0.0, 0.0]), 2)  # -0.0 == 0.0: one value, as np.unique


def test_the_quantiles_equal_scipy_mquantiles_on_the_sorted_column():
    """The reference's percentiles are scipy's mquantiles (default alpha = beta = 0.4), value for value."""
    x = np.random.default_rng(5).normal(size=10_001)
    for percentiles in [(0.0, 1.0), (0.05, 0.95), (0.3, 0.31)]:
        assert np.array_equal(definition_quantiles(np.sort(x), percentiles),
                              np.asarray(scipy_mquantiles(x, prob=percentiles)))
        assert np.array_equal(grid_module._selected_quantiles(x.copy(), percentiles),
                              definition_quantiles(np.sort(x), percentiles))


floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
pools = st.lists(st.one_of(floats, st.sampled_from([0.0, -0.0, 1.0, -1.0])), min_size=1, max_size=120)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool=pools, n=st.integers(1, 9_000), seed=st.integers(0, 2**32 - 1), grid_resolution=st.integers(2, 100),
       percentiles=st.sampled_from([(0.0, 1.0), (0.05, 0.95), (0.25, 0.75)]),
       dtype=st.sampled_from(["float64", "float32"]))
def test_feature_grid_equals_the_sorted_definition(pool, n, seed, grid_resolution, percentiles, dtype):
    """Any floats (huge, tiny, signed zeros, NaN, inf), repeated at random, in float64 or float32."""
    values = np.random.default_rng(seed).choice(np.array(pool), size=n)
    with np.errstate(over="ignore"):
        column = pd.Series(values.astype(dtype), name="x")
    assert_same_grid(column, grid_resolution, percentiles)
