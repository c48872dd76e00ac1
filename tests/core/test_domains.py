"""Property tests: random dtypes, ranges and NaN / inf patterns through ``auto``, ``exact`` and ``brute``.

For every drawn input the three methods either agree (to the model's own
precision) or refuse alike, with the same pdpx error; ``auto`` always equals
``brute``. Grids are always finite and in a dtype that holds their values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import pdpx
from pdpx import PdpxError

DTYPES = ["float64", "float32", "int8", "uint8", "int16", "int32", "int64", "Int16", "Float64"]


def _models():
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"t": rng.normal(0, 40, n), "u": rng.normal(size=n), "v": rng.normal(size=n)})
    X.loc[rng.random(n) < 0.1, "u"] = np.nan
    y = np.sin(X.t / 10) + np.nan_to_num(X.u) * X.v
    models = {
        "hgb": HistGradientBoostingRegressor(max_iter=15, random_state=0).fit(X, y),
        "tree": DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y),
    }
    try:
        import xgboost as xgb
    except ImportError:  # pragma: no cover - installed with pdpx[xgboost]
        pass
    else:
        models["xgb"] = xgb.XGBRegressor(n_estimators=15, max_depth=4, random_state=0).fit(X, y)
    return models


MODELS = _models()


@st.composite
def frames(draw):
    n = draw(st.integers(2, 25))
    dtype = draw(st.sampled_from(DTYPES))
    if dtype.lower().startswith(("int", "uint")):
        info = np.iinfo(np.dtype(dtype.lower()))
        values = draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=n, max_size=n))
        col = pd.array(values, dtype=dtype)
    else:
        width = 32 if dtype == "float32" else 64
        scale = draw(st.sampled_from([1e-9, 1.0, 1e6, 1e300]))
        values = draw(st.lists(st.floats(-1e3, 1e3, width=width), min_size=n, max_size=n))
        arr = np.asarray(values, dtype=np.float64) * (scale if width == 64 else min(scale, 1e30))
        special = draw(st.lists(st.sampled_from([None] * 12 + [np.nan, np.nan, np.inf, -np.inf]), min_size=n, max_size=n))
        arr = np.array([a if s is None else s for a, s in zip(arr, special)])
        col = pd.array(arr, dtype=dtype) if dtype == "Float64" else arr.astype(dtype)
    u = np.asarray(draw(st.lists(st.floats(-3, 3) | st.just(np.nan), min_size=n, max_size=n)))
    X = pd.DataFrame({"t": col, "u": u, "v": np.linspace(-1, 1, n)})
    custom = draw(st.none() | st.lists(st.integers(-2**40, 2**40) | st.floats(-1e6, 1e6), min_size=1, max_size=4,
                                       unique=True))
    percentiles = draw(st.sampled_from([(0.05, 0.95), (0.0, 1.0)]))
    kind = draw(st.sampled_from(["average", "both"]))
    return X, custom, percentiles, kind


def _run(model, X, options, method):
    try:
        res = pdpx.partial_dependence(model, X, "t", method=method, **options)
    except PdpxError as exc:
        return type(exc), str(exc)
    return res


@pytest.mark.parametrize("name", list(MODELS))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=frames())
def test_methods_agree_or_refuse_alike(name, case):
    X, custom, percentiles, kind = case
    model = MODELS[name]
    options = dict(kind=kind, grid_resolution=5, percentiles=percentiles)
    if custom is not None:
        options["custom_values"] = {"t": custom}
    results = {m: _run(model, X, options, m) for m in ("auto", "exact", "brute")}
    refused = {m: r for m, r in results.items() if isinstance(r, tuple)}
    event("refused" if refused else "computed")
    if refused:
        event(next(iter(refused.values()))[1][:60])
        assert len(refused) == 3, f"only {sorted(refused)} refused: {refused}"
        assert len({r[0] for r in refused.values()}) == 1, refused
        return
    auto, exact, brute = results["auto"], results["exact"], results["brute"]
    assert auto.method == "exact"
    grid = exact.grid_values[0]
    values = np.asarray(grid, dtype=np.float64)
    if X["t"].isna().any():  # include_missing="auto": these models accept NaN, so the grid ends with it
        assert np.isnan(values[-1])
        values = values[:-1]
    assert np.all(np.isfinite(values))  # the grid from the data never takes NaN or inf
    for r in (auto, brute):
        np.testing.assert_array_equal(r.grid_values[0], grid)
    if pd.api.types.is_integer_dtype(X["t"].dtype):
        assert np.asarray(grid).dtype.kind in "iuf"
    tol = dict(rtol=1e-5, atol=1e-6) if name == "xgb" else dict(rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(exact.average, brute.average, **tol)
    np.testing.assert_allclose(auto.average, brute.average, **tol)
    if kind == "both":
        np.testing.assert_allclose(exact.individual, brute.individual, **tol)
