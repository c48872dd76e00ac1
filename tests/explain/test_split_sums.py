"""The regions' split statistics from one compiled pass equal numpy's sums per code, candidate by candidate."""

import numpy as np

from pdpx.explain import split_sums


def test_code_sums_equal_bincounts_on_a_subset_of_rows(monkeypatch):
    monkeypatch.setattr(split_sums, "MIN_ROWS_PER_THREAD", 100)  # several threads on small data
    rng = np.random.default_rng(0)
    n, KG = 1000, 7
    sizes = np.array([3, 1, 12], dtype=np.int64)
    codes = np.ascontiguousarray(np.stack([rng.integers(0, m, n) for m in sizes], axis=1).astype(np.int32))
    w, C = rng.random(n), rng.normal(size=(n, KG))
    wq = w * (C ** 2).sum(axis=1) / KG
    rows = np.sort(rng.choice(n, 600, replace=False))
    got = split_sums.code_sums(codes, sizes, rows, w, wq, C)
    for s, m in enumerate(sizes):
        k = codes[rows, s]
        want = np.column_stack([np.bincount(k, minlength=m), np.bincount(k, w[rows], m), np.bincount(k, wq[rows], m)]
                               + [np.bincount(k, w[rows] * C[rows, g], m) for g in range(KG)])
        np.testing.assert_allclose(got[s], want, rtol=1e-12, atol=1e-12)
