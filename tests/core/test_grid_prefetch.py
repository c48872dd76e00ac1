"""Grids built ahead on every core (``Grids.prefetch``) are the grids, notes and errors of one at a time."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from pdpx.core.errors import PdpxError
from pdpx.core.grids import Grids
from pdpx.core.session import Session


def _frame():
    rng = np.random.default_rng(3)
    n = 3000
    return pd.DataFrame({
        "uniform": rng.uniform(-1, 1, n),
        "few": rng.integers(0, 4, n).astype(float),
        "narrow": rng.integers(0, 3, n).astype(np.float32),
        "constant": np.full(n, 2.0),
        "level": pd.Categorical(rng.choice(["a", "b", "c"], n)),
        "gappy": np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n)),
    })


def _session(X):
    y = X["uniform"].to_numpy() + X["few"].to_numpy()
    model = HistGradientBoostingRegressor(max_iter=5, categorical_features="from_dtype").fit(X, y)
    return Session(model, X, grid_resolution=7)


def _each(grids, n):
    out = []
    for j in range(n):
        try:
            out.append((grids.grid_for(j), list(grids.notes.get(j, []))))
        except PdpxError as err:
            out.append((None, str(err)))
    return out


def test_prefetched_grids_equal_one_at_a_time():
    X = _frame()
    session = _session(X)
    alone = _each(Grids(session.inputs), X.shape[1])
    ahead = Grids(session.inputs)
    ahead.prefetch(range(X.shape[1]))
    assert set(ahead._raw) == set(range(X.shape[1])), "every column built ahead"
    got = _each(ahead, X.shape[1])
    assert not ahead._raw, "grid_for takes what prefetch built"
    for j, ((g1, n1), (g2, n2)) in enumerate(zip(alone, got)):
        assert n1 == n2, X.columns[j]
        if g1 is None:
            assert g2 is None
        else:
            np.testing.assert_array_equal(np.asarray(g1), np.asarray(g2))
    assert alone[3][0] is None, "the constant column has no grid (an error, kept for its turn)"
    with pytest.raises(PdpxError):
        ahead.grid_for(3)
