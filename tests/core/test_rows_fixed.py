"""core.data.rows_fixed: what depends only on a frame's values is computed once inside the block, never outside."""

import numpy as np
import pandas as pd

from pdpx.core.data import fixed_memo, rows_fixed
from pdpx.plugins.trees import counts_use


def test_memo_only_for_the_same_frame_inside_the_block():
    X = pd.DataFrame({"a": [1.0, 2.0]})
    other = X.copy()
    assert fixed_memo(X) is None
    with rows_fixed(X):
        memo = fixed_memo(X)
        assert memo == {}
        assert fixed_memo(other) is None  # equal values, another object: not covered
        with rows_fixed(X):
            assert fixed_memo(X) is memo  # a block on the same frame inside keeps the memo
        with rows_fixed(other):
            assert fixed_memo(X) is None and fixed_memo(other) is not memo
        assert fixed_memo(X) is memo
    assert fixed_memo(X) is None


def test_counts_digest_hashes_the_rows_once_per_block_and_sees_changes_outside(monkeypatch):
    X = pd.DataFrame({"a": np.arange(5.0), "b": np.ones(5)})
    calls = []
    real = counts_use._rows_digest
    monkeypatch.setattr(counts_use, "_rows_digest", lambda frame: calls.append(1) or real(frame))
    w = np.arange(5.0)
    with rows_fixed(X):
        d1 = counts_use.digest(X, None)
        d2 = counts_use.digest(X, w)
        assert counts_use.digest(X, None) == d1
    assert len(calls) == 1 and d1 != d2  # the weights are hashed every time
    X.loc[0, "a"] = 7.0  # changed after the block: a new digest
    assert counts_use.digest(X, None) != d1
    assert len(calls) == 2
