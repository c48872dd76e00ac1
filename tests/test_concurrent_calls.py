"""Concurrent calls on one model (issue 48, point 6): eight threads computing partial dependence of the same model
on a cold cache never raise and never differ from one serial call.

Each round takes a fresh copy of the model (nothing of it cached) and clears pdpx's model cache, then starts
eight threads at once (a barrier): they read the model's contents, fingerprint it, run the trust check (which
holds XGBoost's thread count at one for its block) and compute, at the same time. The serial result is checked
against the definition (the model's own predict), and every thread's against the serial result, bit for bit.
"""

from __future__ import annotations

import copy
import threading

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core.ir import model_cache

THREADS = 8
ROUNDS = 6
FEATURES = ["a", "b"]


def _data(n=200):
    rng = np.random.default_rng(7)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"))
    y = X.a + np.sin(2 * X.b) + X.c * X.d
    return X, y


def _sklearn():
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _data()
    return Pipeline([("sc", StandardScaler()), ("m", HistGradientBoostingRegressor(max_iter=20))]).fit(X, y), X


def _xgboost():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    return xgb.XGBRegressor(n_estimators=30, max_depth=3).fit(X, y), X


def _lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = _data()
    return lgb.LGBMRegressor(n_estimators=30, num_leaves=8, verbose=-1).fit(X, y), X


def _catboost():
    cb = pytest.importorskip("catboost")
    pytest.importorskip("pdpx_catboost", reason="the CatBoost plugin (contrib/pdpx-catboost) is not installed")
    X, y = _data()
    return cb.CatBoostRegressor(iterations=30, depth=3, verbose=False, thread_count=1).fit(X, y), X


MODELS = {"scikit-learn": _sklearn, "XGBoost": _xgboost, "LightGBM": _lightgbm, "CatBoost": _catboost}


def definition(model, X, feature, grid):
    out = []
    for v in grid:
        Z = X.copy()
        Z[feature] = v
        out.append(np.mean(model.predict(Z)))
    return np.array(out)


def _all_at_once(model, X, method):
    """Each thread's result (or what it raised), the threads started together."""
    barrier = threading.Barrier(THREADS)
    out: list = [None] * THREADS

    def run(i):
        barrier.wait()
        try:
            out[i] = [pdpx.partial_dependence(model, X, f, method=method).average for f in FEATURES]
        except BaseException as exc:  # noqa: BLE001 - collected and reported below
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


@pytest.mark.parametrize("library", list(MODELS))
@pytest.mark.parametrize("method", ["exact", "auto"])
def test_eight_threads_on_a_cold_cache_agree_with_one_serial_call(library, method, monkeypatch):
    if library == "CatBoost":  # an installed plugin: loaded for this test (tests/conftest.py keeps them out)
        from pdpx.core.plugins import reset_plugin_manager

        monkeypatch.setenv("PDPX_DISABLE_PLUGINS", "0")
        reset_plugin_manager()
    fitted, X = MODELS[library]()
    model_cache.clear()
    serial = [pdpx.partial_dependence(copy.deepcopy(fitted), X, f, method=method) for f in FEATURES]
    for f, res in zip(FEATURES, serial):
        np.testing.assert_allclose(res.average[0], definition(fitted, X, f, res.grid_values[0]), rtol=1e-5,
                                   atol=1e-6)
    for _ in range(ROUNDS):
        model = copy.deepcopy(fitted)
        model_cache.clear()
        for got in _all_at_once(model, X, method):
            if isinstance(got, BaseException):
                raise got
            for avg, res in zip(got, serial):
                if method == "exact":
                    np.testing.assert_array_equal(avg, res.average)
                else:  # auto may answer a cold call with brute (no compiling): equal to the last bits
                    np.testing.assert_allclose(avg, res.average, rtol=1e-6, atol=1e-9)
