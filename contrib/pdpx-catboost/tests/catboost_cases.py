"""Shared set-up of the plugin's tests: the plugin loaded through its entry point, and data.

pdpx's own test suite keeps installed plugins out (PDPX_DISABLE_PLUGINS=1); these
tests turn entry points on, so they exercise the plugin as a user gets it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

catboost = pytest.importorskip("catboost", reason="catboost is not installed (pip install catboost)")


@pytest.fixture(autouse=True)
def plugin_from_entry_point(monkeypatch):
    """The process-wide plugin manager, rebuilt with installed plugins loaded."""
    from pdpx.extend import reset_plugin_manager

    monkeypatch.setenv("PDPX_DISABLE_PLUGINS", "0")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def data(n: int = 400, seed: int = 0, *, nan: bool = True) -> tuple[pd.DataFrame, np.ndarray]:
    """Numeric columns with ties (rounded values) and NaN, a string and an integer-labelled category."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "a": rng.normal(size=n),
        "b": np.round(rng.normal(size=n), 1),  # ties: many rows on each border
        "c": rng.choice(["x", "y", "z"], n),
        "d": pd.Categorical(rng.choice([40, 10, 30], n), categories=[40, 30, 20, 10]),
    })
    if nan:
        X.loc[rng.random(n) < 0.1, "a"] = np.nan
    f = (X["a"].fillna(-1).to_numpy() + (X["c"] == "x") + 0.5 * (X["d"].astype(int) == 30) + np.sin(2 * X["b"])
         + rng.normal(scale=0.2, size=n))
    return X, np.asarray(f, dtype=float)


def at_borders(model, X: pd.DataFrame, seed: int = 1) -> pd.DataFrame:
    """Rows of X with numeric cells on CatBoost's borders, one float32 ulp either side, +-1e-12, NaN,
    and categorical cells replaced by categories never seen in training."""
    rng = np.random.default_rng(seed)
    out = X.sample(len(X), replace=True, random_state=seed).reset_index(drop=True)
    borders = model.get_borders()
    cats = set(model.get_cat_feature_indices())
    for j, name in enumerate(out.columns):
        if j in cats:
            col = out[name].astype(object).to_numpy().copy()
            unseen = rng.random(len(out)) < 0.2
            col[unseen] = "never-seen" if isinstance(col[0], str) else 99
            out[name] = col
            continue
        t = np.asarray(borders.get(j, [0.0]), dtype=np.float32)
        with np.errstate(over="ignore"):
            cand = np.concatenate([t, np.nextafter(t, np.float32(np.inf)), np.nextafter(t, np.float32(-np.inf))]).astype(float)
        cand = np.concatenate([cand, cand + 1e-12, cand - 1e-12, [np.nan, 0.0, -0.0]])
        take = rng.random(len(out)) < 0.7
        col = out[name].to_numpy(dtype=float).copy()
        col[take] = rng.choice(cand, take.sum())
        out[name] = col
    return out


def tree_model_of(model, X, response):
    """The adapter pdpx picks for ``model`` and its TreeModel for ``response``."""
    from pdpx.extend import adapt

    ad = adapt(model)
    ad.validate_columns(X)
    tm = ad.tree_model(response)
    assert tm is not None, ad.tree_model_unavailable(response)
    return ad, tm
