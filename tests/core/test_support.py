"""Support of grid points and cells, the convex hull, and the extrapolation warning.

Every count is checked against a direct loop over the rows written here from the
definition in :mod:`pdpx.core.support`; the warning against data built to be
independent or dependent.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import pdpx
from pdpx.core import extrapolation as E
from pdpx.core import support as S
from pdpx.core.errors import ExtrapolationWarning, PdpxWarning


def model(X):
    """A model of every column (brute force: no library needed)."""
    return lambda Z: np.asarray(Z.select_dtypes("number").fillna(0).sum(axis=1), dtype=float)


def loop_intervals(grid):
    """Each point's interval, by the definition: midpoints, outer ends mirrored."""
    g = sorted(float(v) for v in grid)
    out = {}
    for i, v in enumerate(g):
        lo = (g[i - 1] + v) / 2 if i > 0 else v - ((g[1] - v) / 2 if len(g) > 1 else 0)
        hi = (v + g[i + 1]) / 2 if i < len(g) - 1 else v + ((v - g[-2]) / 2 if len(g) > 1 else 0)
        out[v] = (lo, hi, i == len(g) - 1)
    return out


def loop_support_1d(values, grid, weights=None, categorical=False):
    w = np.ones(len(values)) if weights is None else np.asarray(weights, float)
    out = []
    if categorical:
        for v in grid:
            out.append(sum(w[r] for r in range(len(values)) if not pd.isna(values[r]) and values[r] == v))
        return np.array(out, dtype=float)
    ivs = loop_intervals([v for v in grid if not np.isnan(v)])
    for v in grid:
        if np.isnan(v):
            out.append(sum(w[r] for r in range(len(values)) if np.isnan(values[r])))
            continue
        lo, hi, last = ivs[float(v)]
        total = 0.0
        for r in range(len(values)):
            x = values[r]
            if np.isnan(x):
                continue
            if (lo <= x < hi) or (last and x == hi) or (lo == hi and x == lo):
                total += w[r]
        out.append(total)
    return np.array(out)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n = 400
    X = pd.DataFrame({
        "a": rng.normal(size=n),
        "b": rng.uniform(0, 10, size=n),
        "c": pd.Categorical(rng.choice(["u", "v", "w"], size=n, p=[0.5, 0.45, 0.05])),
        "d": rng.normal(size=n),
    })
    X.loc[rng.choice(n, 30, replace=False), "a"] = np.nan
    X.loc[(X["b"] > 3) & (X["b"] < 7), "b"] = 9.9  # a gap in b
    return X, rng.uniform(0, 3, size=n)


def pd_(X, features, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        return pdpx.partial_dependence(model(X), X, features, method="brute", **kw)


# ------------------------------------------------------------------ 1-way
def test_numeric_support_counts_rows_in_half_intervals(data):
    X, _ = data
    res = pd_(X, "b", grid_resolution=15)
    grid = res.grid_values[0]
    assert res.support.shape == res.grid_shape
    np.testing.assert_array_equal(res.support, loop_support_1d(X["b"].to_numpy(), grid))
    assert (res.support == 0).any()  # the gap
    # unsupported: no row within one grid step (the point's interval and its neighbours')
    order = np.argsort(grid)
    s = res.support[order]
    wide = [s[max(i - 1, 0): i + 2].sum() for i in range(len(s))]
    expect = np.empty(len(s), dtype=bool)
    expect[order] = np.array(wide) == 0
    assert res.unsupported.tolist() == expect.tolist()
    assert res.unsupported.any() and res.unsupported.sum() < (res.support == 0).sum() + 1


def test_isolated_empty_interval_is_not_unsupported():
    X = pd.DataFrame({"x": [0.0, 0.1, 2.0, 2.1, 8.0, 9.0, 10.0]})
    res = pd_(X, "x", custom_values={"x": [0.0, 1.0, 2.0, 4.0, 5.0, 6.0, 7.0, 10.0]})
    np.testing.assert_array_equal(res.support, [2, 0, 2, 0, 0, 0, 1, 2])
    # 1, 4 and 6 have a supported neighbour; only 5 has no row within a grid step
    assert res.unsupported.tolist() == [False, False, False, False, True, False, False, False]


def test_weights_and_the_missing_point(data):
    X, w = data
    res = pd_(X, "a", grid_resolution=12, sample_weight=w, include_missing=True)
    assert np.isnan(res.grid_values[0][-1])
    expect = loop_support_1d(X["a"].to_numpy(), res.grid_values[0], w)
    np.testing.assert_allclose(res.support, expect, rtol=1e-12)
    assert res.support[-1] == pytest.approx(w[X["a"].isna().to_numpy()].sum())


def test_unsorted_custom_grid_and_exact_edges():
    X = pd.DataFrame({"x": [0.0, 1.0, 1.5, 2.0, 2.0, 3.0, 4.0, 7.0, -0.5, 4.5]})
    res = pd_(X, "x", custom_values={"x": [3.0, 1.0, 2.0]})
    # intervals: 1 -> [0.5, 1.5), 2 -> [1.5, 2.5), 3 -> [2.5, 3.5]
    np.testing.assert_array_equal(res.support, [1.0, 1.0, 3.0])
    np.testing.assert_array_equal(res.support, loop_support_1d(X["x"].to_numpy(), [3.0, 1.0, 2.0]))


def test_categorical_support(data):
    X, w = data
    res = pd_(X, "c", sample_weight=w)
    expect = [w[(X["c"] == lev).to_numpy()].sum() for lev in res.grid_values[0]]
    np.testing.assert_allclose(res.support, expect)
    np.testing.assert_allclose(res.support, loop_support_1d(X["c"].to_numpy(), res.grid_values[0], w, True))


def test_ice_sample_centered_and_frame(data):
    X, _ = data
    full = pd_(X, "b", grid_resolution=10)
    res = pd_(X, "b", grid_resolution=10, kind="both", ice_sample=25, centered=True)
    np.testing.assert_array_equal(res.support, full.support)  # every row of X, not the ICE sample
    frame = res.support_frame()
    assert list(frame.columns) == ["feature_set", "feature_1", "type_1", "x_1", "label_1", "support",
                                   "outside_hull", "supported"]
    np.testing.assert_array_equal(frame["support"], res.support)
    assert frame["outside_hull"].isna().all()
    assert "support" not in res.to_frame().columns  # the tidy schema is unchanged


# ------------------------------------------------------------------ 2-way
def test_two_way_cells_count_rows_in_rectangles(data):
    X, w = data
    res = pd_(X, ["b", "c"], grid_resolution=8, sample_weight=w)
    g1, g2 = res.grid_values
    ivs = loop_intervals(g1)
    expect = np.zeros(res.grid_shape)
    for r in range(len(X)):
        for i, v in enumerate(g1):
            lo, hi, last = ivs[float(v)]
            x = X["b"].iloc[r]
            if (lo <= x < hi) or (last and x == hi):
                for k, lev in enumerate(g2):
                    if X["c"].iloc[r] == lev:
                        expect[i, k] += w[r]
    np.testing.assert_allclose(res.support, expect)
    assert res.outside_hull is None  # a categorical feature: no hull


def test_two_way_numeric_hull():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 300)
    X = pd.DataFrame({"x": x, "y": x + rng.uniform(-0.05, 0.05, 300)})
    res = pd_(X, ["x", "y"], grid_resolution=9)
    from scipy.spatial import Delaunay

    tri = Delaunay(X.to_numpy())
    g1, g2 = res.grid_values
    pts = np.array([[a, b] for a in g1 for b in g2])
    expect = (tri.find_simplex(pts) < 0).reshape(res.grid_shape)
    # points within 1e-9 of the hull's edge may fall either way: compare the rest
    assert (res.outside_hull == expect).mean() > 0.97
    assert res.outside_hull[0, -1] and res.outside_hull[-1, 0] and not res.outside_hull[4, 4]
    box = np.pad(res.support, 1)
    near = sum(box[1 + di: 1 + di + 9, 1 + dk: 1 + dk + 9] for di in (-1, 0, 1) for dk in (-1, 0, 1))
    assert (res.unsupported == ((near == 0) | res.outside_hull)).all()


def test_degenerate_hulls():
    # collinear: only grid points on the segment are inside
    a, b = np.arange(5.0), 2 * np.arange(5.0)
    out = S.outside_hull(a, b, [0.0, 1.0, 2.0], [0.0, 2.0, 3.0])
    assert out.tolist() == [[False, True, True], [True, False, True], [True, True, True]]
    # two distinct points, and one point
    out = S.outside_hull([0.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.5, 0.7], [0.5, 0.1])
    assert out.tolist() == [[False, True], [True, True]]
    out = S.outside_hull([2.0, 2.0], [3.0, 3.0], [2.0, 1.0], [3.0])
    assert out.tolist() == [[False], [True]]
    # no finite pair: every finite grid point is outside; the missing point never
    out = S.outside_hull([np.nan], [1.0], [1.0, np.nan], [1.0])
    assert out.tolist() == [[True], [False]]


# ---------------------------------------------------------- groups, models
def test_by_groups_count_their_own_rows(data):
    X, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        st = pdpx.partial_dependence(model(X), X, "b", by="c", method="brute", grid_resolution=10)
    grid = st.results[0].grid_values[0]
    for lab, r in zip(st.labels, st.results):
        rows = (X["c"] == lab).to_numpy()
        np.testing.assert_array_equal(r.support, loop_support_1d(X["b"].to_numpy()[rows], grid))


def test_dict_of_models_each_carry_support(data):
    X, _ = data
    m = model(X)
    st = pdpx.partial_dependence({"one": m, "two": m}, X, "d", method="brute", grid_resolution=6)
    for r in st.results:
        np.testing.assert_array_equal(r.support, loop_support_1d(X["d"].to_numpy(), r.grid_values[0]))


def test_dask_input_has_support(data):
    dd = pytest.importorskip("dask.dataframe")
    X, _ = data
    Xn = X[["a", "b", "d"]]
    res = pd_(dd.from_pandas(Xn, npartitions=3), "b", grid_resolution=10)
    np.testing.assert_array_equal(res.support, loop_support_1d(Xn["b"].to_numpy(), res.grid_values[0]))
    assert res.extrapolation is not None
    assert any("first" in n and "Dask" in n for n in res.notes)


# ------------------------------------------------------------------ warning
def test_independent_features_never_warn():
    for seed, n in [(0, 60), (1, 300), (2, 5000)]:
        rng = np.random.default_rng(seed)
        X = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.exponential(size=n), "x3": rng.uniform(size=n),
                          "x4": rng.integers(0, 3, size=n)})
        with warnings.catch_warnings():
            warnings.simplefilter("error", PdpxWarning)
            coll = pdpx.partial_dependence_many(model(X), X, ["x1", "x2", ("x1", "x2"), ("x2", "x3"),
                                                              ("x1", "x4")], method="brute", grid_resolution=20)
        assert all(r.extrapolation.share < E.WARN_SHARE for r in coll)


def test_near_copy_warns_once_naming_features_and_ale():
    rng = np.random.default_rng(0)
    x1 = rng.normal(size=1000)
    X = pd.DataFrame({"x1": x1, "x2": x1 + rng.normal(scale=0.05, size=1000), "x3": rng.normal(size=1000)})
    with pytest.warns(ExtrapolationWarning) as rec:
        coll = pdpx.partial_dependence_many(model(X), X, ["x1", "x2", ("x1", "x2")], method="brute",
                                            grid_resolution=15)
    msgs = [str(w.message) for w in rec if issubclass(w.category, ExtrapolationWarning)]
    assert len(msgs) == 1  # once per call
    assert "'x1'" in msgs[0] and "'x2'" in msgs[0] and "pdpx.ale" in msgs[0] and "%" in msgs[0]
    assert coll[0].extrapolation.partner == "x2" and coll[0].extrapolation.share >= E.WARN_SHARE
    assert coll[2].extrapolation.share > 0.5 and coll[2].outside_hull.mean() > 0.5
    with pytest.warns(ExtrapolationWarning, match=r"2-way partial dependence of 'x1' x 'x2'"):
        pdpx.partial_dependence(model(X), X, ["x1", "x2"], method="brute", grid_resolution=10)


def test_share_matches_the_rule_written_out():
    """The 1-way share, recomputed from the rule with plain loops over bins."""
    rng = np.random.default_rng(5)
    n = 2000
    a = rng.normal(size=n)
    X = pd.DataFrame({"a": a, "b": 0.95 * a + 0.3 * rng.normal(size=n)})
    w = rng.uniform(0.5, 1.5, n)
    grid = np.linspace(-1.5, 1.5, 13)
    check = E.extrapolation_check(X, [0], [grid], [False], w, numeric=[True, True])
    B = E.n_bins(n)
    assert B == 10

    def bins(v):  # edges: quantiles of at most 1,000 evenly spaced rows (every ceil(n / 1000)-th row)
        step = -(-len(v) // 1000)
        inner = np.unique(np.quantile(v[::step], np.linspace(0, 1, B + 1)[1:-1]))
        return np.array([sum(x >= e for e in inner) for x in v]), inner

    ba, ea = bins(X["a"].to_numpy())
    bb, _ = bins(X["b"].to_numpy())
    W = w.sum()
    share = 0.0
    for g in grid:
        i = sum(g >= e for e in ea)
        for k in range(B):
            in_i, in_k = ba == i, bb == k
            exp_n = in_i.sum() * in_k.sum() / n
            exp_w = w[in_i].sum() * w[in_k].sum() / W
            cell = w[in_i & in_k].sum()
            if exp_n >= E.MIN_EXPECTED and cell < E.ABSENT * exp_w:
                share += w[in_k].sum() / W
    share /= len(grid)
    assert check.share == pytest.approx(share, rel=1e-12)
    assert check.partner == "b"


def test_support_summary():
    rng = np.random.default_rng(0)
    x1 = rng.normal(size=500)
    X = pd.DataFrame({"x1": x1, "x2": x1 + rng.normal(scale=0.05, size=500)})
    with pytest.warns(ExtrapolationWarning):
        res = pdpx.partial_dependence(model(X), X, ["x1", "x2"], method="brute", grid_resolution=10)
    text = S.support_summary(res)
    assert f"{int(res.unsupported.sum())} of 100 grid cells of x1, x2" in text and "pdpx.ale" in text
    Xi = pd.DataFrame({"x1": x1, "x2": rng.normal(size=500)})
    assert S.support_summary(pdpx.partial_dependence(model(Xi), Xi, "x1", method="brute")) is None


def test_support_never_refuses(monkeypatch):
    X = pd.DataFrame({"x": np.arange(50.0), "y": np.arange(50.0) % 7})

    def boom(*a, **k):
        raise RuntimeError("no")

    monkeypatch.setattr(S, "support_counts", boom)
    res = pdpx.partial_dependence(model(X), X, "x", method="brute")
    assert res.support is None and res.unsupported is None
    assert any("support not computed" in n for n in res.notes)
    res.plot()  # figures draw without support


def test_partner_bins_vectorised_equal_the_per_column_bins():
    from pdpx.core import extrapolation as support

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(3000, 8)), columns=[f"c{i}" for i in range(8)])
    X["c1"] = np.round(X["c1"])            # ties: repeated quantile edges
    X.loc[::5, "c2"] = np.nan              # missing values: the per-column path
    X["c3"] = 1.0                          # constant
    X["c4"] = X["c4"].astype("float32")
    X["c5"] = rng.integers(0, 3, 3000)     # few distinct integers
    for n_bins in (2, 5, 10):
        fast = support._partner_bins(X, list(range(8)), n_bins)
        slow = [support._bins(X.iloc[:, k], False, n_bins)[0] for k in range(8)]
        for k in range(8):
            np.testing.assert_array_equal(fast[k], slow[k], err_msg=f"column {k}, {n_bins} bins")
