"""rows.local: the validated rows several sessions of one call share (``PDOptions.rows``), and what is kept for them.

What depends only on the rows' values (the digest keying exact's pattern counts) is computed once for the sessions
that were handed the same :class:`~pdpx.rows.local.LocalData`, and only for its own frame: a sample of it, another
model's session, or a new call on a frame changed in place computes it again.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor

from pdpx.core.session import Session
from pdpx.plugins.trees import counts_use
from pdpx.rows.local import LocalData


@pytest.fixture
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, X["a"] - X["b"])
    return model, X


@pytest.fixture
def hashed(monkeypatch):
    """The frames whose rows were hashed (one entry per pass over them)."""
    calls = []
    real = counts_use._rows_digest
    monkeypatch.setattr(counts_use, "_rows_digest", lambda frame: calls.append(frame) or real(frame))
    return calls


def test_once_keeps_a_value_for_its_own_frame_only(fitted):
    model, X = fitted
    first = Session(model, X)
    rows = first.data
    counter = iter(range(100))
    assert rows.once(rows.frame, "k", lambda: next(counter)) == 0
    assert rows.once(rows.frame, "k", lambda: next(counter)) == 0  # kept
    assert rows.once(rows.frame.copy(), "k", lambda: next(counter)) == 1  # equal values, another object: computed
    part = rows.subset(np.arange(10))
    assert part.once(part.frame, "k", lambda: next(counter)) == 2  # a subset keeps nothing of its parent's
    assert rows.shared_by(X, model) and rows.shared_by(rows.frame, model)
    assert not rows.shared_by(X.copy(), model)
    other = RandomForestRegressor(n_estimators=2, max_depth=2, random_state=1).fit(X, X["b"])
    assert not rows.shared_by(X, other)  # validated by another model's adapter: not shared


def test_sessions_handed_the_same_rows_hash_them_once(fitted, hashed):
    model, X = fitted
    first = Session(model, X)
    second = Session(model, X, first.options.but(rows=first.data, kind="average", grid_resolution=5))
    third = Session(model, X, first.options.but(rows=first.data, centered=True))
    assert second.data is first.data and third.data is first.data and isinstance(first.data, LocalData)
    assert second.adapter is first.adapter  # with the adapter that validated them (it may learn from the rows)
    w = np.arange(80.0)
    digests = set()
    for s in (first, second, third):
        req = s.request([0])
        assert req.rows is first.data
        digests.add(counts_use.digest(req.X, None, req.rows))
    assert len(hashed) == 1 and len(digests) == 1
    assert counts_use.digest(X, w, first.data) != digests.pop()  # the weights are hashed every time
    assert len(hashed) == 1


def test_a_session_not_handed_the_rows_hashes_them_itself(fitted, hashed):
    model, X = fitted
    first = Session(model, X)
    alone = Session(model, X, first.options)  # no rows handed down: its own validated copy
    assert alone.data is not first.data
    for s in (first, alone):
        req = s.request([0])
        counts_use.digest(req.X, None, req.rows)
    assert len(hashed) == 2


def test_a_frame_changed_after_the_call_is_hashed_again(fitted, hashed):
    model, X = fitted
    first = Session(model, X)
    before = counts_use.digest(first.X, None, first.data)
    X.loc[0, "a"] = 7.0  # changed in place after the sessions that shared it: the next call's rows are new
    again = Session(model, X)
    after = counts_use.digest(again.X, None, again.request([0]).rows)
    assert after != before and len(hashed) == 2


def test_pd_many_with_counts_equals_the_definition_after_an_in_place_change(fitted):
    import pdpx

    model, X = fitted
    X = X.copy()
    sets = [["a"], ["b"], ["a", "b"]]
    kw = dict(grid_resolution=4, method="exact", method_options={"engine": "counts"})
    pdpx.partial_dependence_many(model, X, sets, **kw)
    X["a"] = X["a"] * 3.0  # in place, same object: the counts kept for the old values must not answer
    got = pdpx.partial_dependence_many(model, X, [["a"]], **kw)[0]
    want = []
    for g in got.grid_values[0]:
        Z = X.copy()
        Z["a"] = g
        want.append(model.predict(Z).mean())
    np.testing.assert_allclose(got.average[0], want, rtol=1e-10)


def test_h_statistic_hashes_its_rows_once_for_all_its_sessions(fitted, hashed):
    import pdpx

    model, X = fitted
    X = X.assign(c=X["a"] * X["b"])
    model = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, X["a"] * X["b"])
    res = pdpx.h_statistic(model, X, method="exact")
    assert res.method == "exact"
    full = [frame for frame in hashed if len(frame) == len(X)]  # (the trees' check hashes its own small samples)
    assert len(full) == 1
