"""Data and direct references shared by the tests of issue 19's views."""

import numpy as np
import pandas as pd


def data_with_missing(n=240, seed=0, share=0.25):
    """Numeric a (with missing values), b, and a category g; a target that depends on all three."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "g": pd.Categorical(rng.choice(["p", "q", "r"], n))})
    X.loc[rng.random(n) < share, "a"] = np.nan
    y = np.nan_to_num(X["a"].to_numpy(), nan=2.5) * 2 + X["b"] * (X["g"] == "q") + rng.normal(size=n) * 0.1
    return X, y


def direct_ice(predict, X, feature, values):
    """ICE by definition: predict(X with ``feature`` set to v) for each v; shape (n_rows, n_values)."""
    out = []
    for v in values:
        Xv = X.copy()
        Xv[feature] = np.full(len(X), v, dtype=float) if not isinstance(v, str) else v
        out.append(np.asarray(predict(Xv), dtype=float))
    return np.stack(out, axis=1)
