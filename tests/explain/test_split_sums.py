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


def _searchsorted_bins(cuts, x, strict):
    want = np.searchsorted(cuts, x, side="left" if strict else "right")
    want[np.isnan(x)] = len(cuts) + 1
    return want


def test_bins_equal_numpy_searchsorted_on_generated_columns():
    """The lock-step search (16 values at a time) against ``np.searchsorted`` on either side: no cuts, one cut,
    lengths that are not a multiple of 16, values equal to a cut, zeros of both signs, infinities and NaN."""
    rng = np.random.default_rng(7)
    for trial in range(400):
        cuts = np.unique(rng.normal(size=int(rng.integers(0, 300))).round(int(rng.integers(0, 3))))
        x = np.concatenate([rng.normal(size=int(rng.integers(0, 90))).round(1), cuts,
                            [np.nan, np.inf, -np.inf, 0.0, -0.0]])
        rng.shuffle(x)
        for strict in (True, False):
            got = split_sums.bins(cuts, x, strict)
            assert got.dtype == np.int32
            np.testing.assert_array_equal(got, _searchsorted_bins(cuts, x, strict), err_msg=f"trial {trial}")


def test_bins_of_nothing_and_of_one_value():
    assert split_sums.bins(np.array([0.5]), np.empty(0), True).shape == (0,)
    np.testing.assert_array_equal(split_sums.bins(np.array([0.5]), np.array([0.5]), True), [0])
    np.testing.assert_array_equal(split_sums.bins(np.array([0.5]), np.array([0.5]), False), [1])
    np.testing.assert_array_equal(split_sums.bins(np.empty(0), np.array([np.nan, 3.0]), True), [1, 0])
