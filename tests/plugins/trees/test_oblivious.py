"""The ``oblivious`` kernel of ``exact`` on synthetic oblivious ensembles, against brute and the other kernels.

Oblivious trees: every node of a level tests the same split. The ensembles here
mix depths (including single leaves), NaN directions, NaN read as zero,
zero-or-NaN missing, categorical levels, vector leaves and non-linear links, and
lay their nodes out in an order other than the heap order, so that detection
reads the structure, not a layout.
"""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from treetools import IRAdapter, assert_exact_equals_brute

import pdpx
from pdpx.core.ir import NAN_AS_ZERO, NAN_MISSING, ZERO_OR_NAN_MISSING, TreeEnsemble
from pdpx.plugins.trees import oblivious as _oblivious
from pdpx.plugins.trees import products as _products

THRESHOLDS = [-1.0, -0.5, 0.0, 0.2, 0.5, 1.0]


def oblivious_ensemble(depths, *, n_features=4, seed=0, n_margins=1, vector_leaves=False, cat_feature=None,
                       nan_modes=(NAN_MISSING,), link="identity", comparison="<=", depth_first=True, **over):
    """Oblivious trees of the given depths (0: a single leaf), nodes depth-first (or in heap order)."""
    rng = np.random.default_rng(seed)
    left, right, feature, threshold, miss, nan_mode, cat_off, cat_nw, value = [], [], [], [], [], [], [], [], []
    words = []
    starts = [0]
    groups = []
    for t, d in enumerate(depths):
        levels = []
        for _ in range(d):
            f = int(rng.integers(n_features))
            if f == cat_feature:
                word = int(rng.integers(1, 2**6))
                levels.append((f, 0.0, bool(rng.integers(2)), NAN_MISSING, word))
            else:
                levels.append((f, float(rng.choice(THRESHOLDS)), bool(rng.integers(2)),
                               int(rng.choice(nan_modes)), None))
        leaves = rng.normal(size=(2**d, n_margins if vector_leaves else 1))
        base = len(left)

        def add(level, path, d=d, levels=levels, leaves=leaves):
            me = len(left)
            for lst in (left, right, feature, threshold, miss, nan_mode, cat_off, cat_nw):
                lst.append(0)
            value.append(np.zeros(leaves.shape[1]))
            if level == d:
                left[me] = right[me] = feature[me] = -1
                cat_off[me] = -1
                miss[me] = True
                value[me] = leaves[path]
                return me
            f, thr, ml, nm, word = levels[level]
            feature[me], threshold[me], miss[me], nan_mode[me] = f, thr, ml, nm
            if word is None:
                cat_off[me] = -1
            else:
                cat_off[me], cat_nw[me] = len(words), 1
                words.append(word)
            left[me] = add(level + 1, path, d, levels, leaves)
            right[me] = add(level + 1, path | (1 << level), d, levels, leaves)
            return me

        if depth_first:
            add(0, 0)
        else:  # heap order: node i has children 2i+1, 2i+2
            n_int = 2**d - 1
            for i in range(2 ** (d + 1) - 1):
                level = int(np.floor(np.log2(i + 1)))
                if i < n_int:
                    f, thr, ml, nm, word = levels[level]
                    left.append(base + 2 * i + 1)
                    right.append(base + 2 * i + 2)
                    feature.append(f)
                    threshold.append(thr)
                    miss.append(ml)
                    nan_mode.append(nm)
                    cat_off.append(-1 if word is None else len(words))
                    cat_nw.append(0 if word is None else 1)
                    if word is not None:
                        words.append(word)
                    value.append(np.zeros(leaves.shape[1]))
                else:
                    for lst, v in ((left, -1), (right, -1), (feature, -1), (threshold, 0.0), (miss, True),
                                   (nan_mode, NAN_MISSING), (cat_off, -1), (cat_nw, 0)):
                        lst.append(v)
                    value.append(leaves[i - n_int])
        starts.append(len(left))
        groups.append(-1 if vector_leaves else t % n_margins)
    kw = dict(
        left=np.array(left), right=np.array(right), feature=np.array(feature), threshold=np.array(threshold),
        missing_left=np.array(miss, dtype=bool), nan_mode=np.array(nan_mode, dtype=np.int8),
        cat_offset=np.array(cat_off), cat_nwords=np.array(cat_nw), cat_words=np.array(words, dtype=np.uint32),
        value=np.array(value), tree_start=np.array(starts), tree_group=np.array(groups), n_features=n_features,
        n_margins=n_margins, link=link, comparison=comparison,
        tree_weight=rng.uniform(0.5, 1.5, len(depths)), base_score=rng.normal(size=n_margins),
    )
    kw.update(over)
    return TreeEnsemble(**kw)


def data(n=60, n_features=4, seed=1, cat_feature=None):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, -0.7, -0.5, 0.0, 0.2, 0.5, 1.0, 1.5, np.nan], size=(n, n_features))
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(n_features)])
    if cat_feature is not None:
        frame[f"f{cat_feature}"] = rng.choice([0.0, 1.0, 2.0, 3.0, 5.0, 7.0, np.nan], size=n)
    return frame


def kernel_calls(monkeypatch):
    """The kernels a call runs, by what they do: the float walk counting rows ("oblivious_counts") or adding
    margins ("oblivious_margins"), the byte walk counting ("oblivious_counts_bytes") or multiplying
    ("oblivious_products"); once per kind, however many threads share the rows."""
    calls = []

    def spy(module, name, kinds):
        fn = getattr(module, name)

        def wrapped(*a, _fn=fn, **k):
            kind = kinds[bool(a[kinds[2]])]
            if kind not in calls:
                calls.append(kind)
            return _fn(*a, **k)

        monkeypatch.setattr(module, name, wrapped)

    spy(_oblivious, "oblivious_walk", ("oblivious_counts", "oblivious_margins", 12))
    spy(_products, "bytes_walk", ("oblivious_counts_bytes", "oblivious_products", 18))
    return calls


DEPTHS = [0, 1, 2, 3, 6, 4, 2, 5]


@pytest.mark.parametrize("link", ["identity", "logistic", "exp"])
@pytest.mark.parametrize("features", ["f0", ["f0", "f1"], ["f2", "f0"]])
@pytest.mark.parametrize("depth_first", [True, False], ids=["depth-first", "heap"])
def test_oblivious_equals_brute_and_is_used(monkeypatch, link, features, depth_first):
    ens = oblivious_ensemble(DEPTHS, seed=4, link=link, nan_modes=(NAN_MISSING, NAN_AS_ZERO, ZERO_OR_NAN_MISSING),
                             depth_first=depth_first)
    X = data()
    calls = kernel_calls(monkeypatch)
    w = np.random.default_rng(5).uniform(0, 2, len(X))
    for kernel in ("oblivious", "auto"):
        assert_exact_equals_brute(IRAdapter(ens), X, features, kernel=kernel, grid_resolution=7)
    assert_exact_equals_brute(IRAdapter(ens), X, features, kernel="oblivious", grid_resolution=5, sample_weight=w)
    # ICE: margins; averages: counts (linear) or the products of exp(leaf) (logistic, exp), on bytes
    assert set(calls) == {"oblivious_margins"} | ({"oblivious_counts_bytes"} if link == "identity"
                                                  else {"oblivious_products"})
    # the other kernels agree on the same model
    for kernel in ("leafsets", "partition"):
        assert_exact_equals_brute(IRAdapter(ens), X, features, kernel=kernel, grid_resolution=7)


@pytest.mark.parametrize("comparison", ["<=", "<"])
def test_unsorted_grids_and_ties_at_thresholds(comparison):
    ens = oblivious_ensemble([3, 4, 2, 6], seed=7, comparison=comparison, link="logistic")
    X = data(seed=2)
    grid = {"f1": [1.0, -0.5, 0.0, 0.5, np.nextafter(0.5, 1), -1.0], "f3": [0.2, -1.0, 1.0]}
    for kind in ("average", "both"):
        e = pdpx.partial_dependence(IRAdapter(ens), X, ["f1", "f3"], method="exact", kind=kind, custom_values=grid,
                                    method_options={"kernel": "oblivious"})
        b = pdpx.partial_dependence(IRAdapter(ens), X, ["f1", "f3"], method="brute", kind=kind, custom_values=grid)
        np.testing.assert_allclose(e.average, b.average, rtol=1e-12, atol=1e-12)
        if kind == "both":
            np.testing.assert_allclose(e.individual, b.individual, rtol=1e-12, atol=1e-12)


def test_float32_inputs():
    base = oblivious_ensemble([4, 5, 3], seed=8)
    thr = np.where(base.left >= 0, base.threshold + 1e-9, base.threshold)
    ens = oblivious_ensemble([4, 5, 3], seed=8, float32_input=True, threshold=thr)
    X = data(seed=3)
    X.iloc[::3, 0] = 0.5 + 2e-9  # above the threshold 0.5 + 1e-9, but the same float32
    assert_exact_equals_brute(IRAdapter(ens), X, ["f0", "f1"], kernel="oblivious", grid_resolution=6)


def test_categorical_levels_and_vector_leaves():
    ens = oblivious_ensemble([3, 5, 2, 4, 6], seed=9, cat_feature=2, n_margins=3, vector_leaves=True,
                             link="softmax")
    X = data(cat_feature=2)
    for features in ("f2", ["f2", "f0"], "f1"):
        assert_exact_equals_brute(IRAdapter(ens), X, features, kernel="oblivious", grid_resolution=6)
        margins = dataclasses.replace(ens, link="identity")  # the raw margins: the average-only path
        assert_exact_equals_brute(IRAdapter(margins), X, features, kernel="oblivious", grid_resolution=6)


def test_margins_by_tree_group():
    ens = oblivious_ensemble([2, 3, 4, 1, 5, 6], seed=10, n_margins=3, link="softmax")
    assert_exact_equals_brute(IRAdapter(ens), data(), ["f0", "f3"], kernel="oblivious", grid_resolution=5)


def test_not_oblivious_falls_back_and_the_option_says_why(monkeypatch):
    ens = oblivious_ensemble([3, 3], seed=11)
    # one node of the second level of tree 0 tests another threshold: no longer oblivious
    second_level = [int(ens.left[0]), int(ens.right[0])]
    thr = ens.threshold.copy()
    thr[second_level[1]] += 0.25
    changed = oblivious_ensemble([3, 3], seed=11, threshold=thr)
    calls = kernel_calls(monkeypatch)
    assert_exact_equals_brute(IRAdapter(changed), data(), "f0", grid_resolution=5)
    assert calls == []
    with pytest.raises(pdpx.PdpxError, match=r"'kernel': 'oblivious'.*not oblivious.*use kernel 'auto'"):
        pdpx.partial_dependence(IRAdapter(changed), data(), "f0", method="exact",
                                method_options={"kernel": "oblivious"})
    # a leaf above the last level (an unbalanced tree) is not oblivious either
    assert _oblivious.static_oblivious(ens) is not None
    assert _oblivious.static_oblivious(changed) is None


def _tree_bound(ens):
    """sum over trees of the largest |tree weight * leaf value| (the bound the products path checks)."""
    top = np.maximum.reduceat(np.abs(ens.value).max(axis=1), ens.tree_start[:-1]) * np.abs(ens.tree_weight)
    return float(top.sum())


@pytest.mark.parametrize("features", ["f0", ["f0", "f1"], ["f0", "f1", "f3"]])
@pytest.mark.parametrize("path", ["quads", "pairs", "single divisions", "margins"])
def test_products_paths_equal_brute(monkeypatch, features, path):
    """The average of a logistic response by products of exp(leaf), with four rows, two rows or one row per
    division, and the margins + exp path it falls back to when a partial product could overflow: all equal
    brute (weighted)."""
    ens = oblivious_ensemble(DEPTHS, seed=12, link="logistic", base_score=np.array([0.3]))
    bound = _tree_bound(ens)
    assert bound < _products.QUAD_RANGE  # the model takes the four-row divisions unless told otherwise
    if path == "pairs":
        monkeypatch.setattr(_products, "QUAD_RANGE", bound / 2)
    elif path == "single divisions":
        monkeypatch.setattr(_products, "QUAD_RANGE", bound / 2)
        monkeypatch.setattr(_products, "PAIR_RANGE", bound / 2)
    elif path == "margins":
        monkeypatch.setattr(_products, "PRODUCT_RANGE", bound / 2)
    rows_per_division = []
    real = _products.bytes_walk

    def spy(*a):
        if a[18]:  # products, not counts: how many rows share a division
            rows_per_division.append(a[-2])
        return real(*a)

    monkeypatch.setattr(_products, "bytes_walk", spy)
    X = data(seed=6)
    w = np.random.default_rng(7).uniform(0, 2, len(X))
    for weights in (None, w):
        e = pdpx.partial_dependence(IRAdapter(ens), X, features, method="exact", grid_resolution=6, sample_weight=weights,
                                    method_options={"kernel": "oblivious"})
        b = pdpx.partial_dependence(IRAdapter(ens), X, features, method="brute", grid_resolution=6, sample_weight=weights)
        np.testing.assert_allclose(e.average, b.average, rtol=1e-12, atol=1e-12)
    assert sorted(set(rows_per_division)) == {"quads": [4], "pairs": [2], "single divisions": [1], "margins": []}[path]


def test_products_refused_for_large_leaves_and_exact_still_equals_brute(monkeypatch):
    """Leaves so large that exp of a partial margin would overflow: the margins path, still equal to brute,
    probabilities of 0 and 1 included."""
    ens = oblivious_ensemble([3, 4, 2, 6], seed=13, link="logistic")
    ens = dataclasses.replace(ens, value=ens.value * 300.0)
    assert _tree_bound(ens) > _products.PRODUCT_RANGE
    calls = kernel_calls(monkeypatch)
    e = pdpx.partial_dependence(IRAdapter(ens), data(), ["f0", "f1"], method="exact", grid_resolution=6)
    b = pdpx.partial_dependence(IRAdapter(ens), data(), ["f0", "f1"], method="brute", grid_resolution=6)
    np.testing.assert_allclose(e.average, b.average, rtol=1e-12, atol=1e-12)
    assert calls == ["oblivious_margins"]


def test_products_with_categorical_and_special_levels(monkeypatch):
    """Categorical levels and NaN-as-zero levels (tested row by row) next to byte-tested numeric ones."""
    ens = oblivious_ensemble([3, 5, 2, 4, 6], seed=14, cat_feature=2, link="logistic",
                             nan_modes=(NAN_MISSING, NAN_AS_ZERO, ZERO_OR_NAN_MISSING))
    X = data(cat_feature=2)
    calls = kernel_calls(monkeypatch)
    for features in ("f2", ["f2", "f0"], "f1", ["f1", "f3"]):
        e = pdpx.partial_dependence(IRAdapter(ens), X, features, method="exact", grid_resolution=6)
        b = pdpx.partial_dependence(IRAdapter(ens), X, features, method="brute", grid_resolution=6)
        np.testing.assert_allclose(e.average, b.average, rtol=1e-12, atol=1e-12)
    assert set(calls) == {"oblivious_products"}


def test_byte_tests_limits_and_the_fallback(monkeypatch):
    """Levels fit bytes up to 254 thresholds per feature and depth 8; beyond, the margins path, equal to brute."""
    feat = np.zeros(255, dtype=np.int64)
    thr = np.arange(255, dtype=float)
    miss = np.ones(255, dtype=bool)
    bit = np.zeros(255, dtype=np.int64)
    assert _products.quantize_levels(feat[:254], thr[:254], miss[:254], bit[:254], np.array([1] * 254)) is not None
    assert _products.quantize_levels(feat, thr, miss, bit, np.array([1] * 255)) is None
    assert _products.quantize_levels(feat[:9], thr[:9], miss[:9], bit[:9], np.array([9])) is None
    # the byte of a value: the number of thresholds at or below it; NaN by the levels' direction
    qfeat, cuts, cut_ptr, nan_byte, lq, lcut, lw = _products.quantize_levels(
        np.array([0, 0, 1]), np.array([0.5, -1.0, 0.5]), np.array([True, True, False]), np.array([0, 1, 0]),
        np.array([2, 1]))
    X = np.array([[-2.0, 0.5], [0.5, np.nan], [np.nan, 0.4999]])
    Q = _products.quantize(X, qfeat, cuts, cut_ptr, nan_byte, 4)
    np.testing.assert_array_equal(Q, [[0, 2, 0, 0], [1, 255, 0, 0]])
    np.testing.assert_array_equal(lcut, [1, 0, 0])
    for link, fallback in (("logistic", "oblivious_margins"), ("identity", "oblivious_counts")):
        ens = oblivious_ensemble([9, 3, 2], seed=15, link=link)
        calls = kernel_calls(monkeypatch)
        e = pdpx.partial_dependence(IRAdapter(ens), data(), ["f0", "f1"], method="exact", grid_resolution=6)
        b = pdpx.partial_dependence(IRAdapter(ens), data(), ["f0", "f1"], method="brute", grid_resolution=6)
        np.testing.assert_allclose(e.average, b.average, rtol=1e-12, atol=1e-12)
        assert calls == [fallback]


def test_bytes_equal_searchsorted():
    """Every byte is the number of the feature's thresholds at or below the value: ties, clusters, +-inf, NaN."""
    rng = np.random.default_rng(16)
    n_levels = 600
    feat = rng.integers(0, 5, n_levels)
    thr = np.where(feat == 0, 0.25, np.round(rng.normal(size=n_levels) ** 3, 3))  # feature 0: one threshold
    thr[feat == 1] = 1e-9 * rng.integers(0, 50, (feat == 1).sum())  # clustered: many thresholds in one bucket
    miss = rng.random(n_levels) < 0.5
    qfeat, cuts, cut_ptr, nan_byte, lq, lcut, lw = _products.quantize_levels(
        feat, thr, miss, np.zeros(n_levels, dtype=np.int64), np.array([6]))
    X = np.round(rng.normal(size=(3000, 5)) ** 3, 3)
    on = rng.random(X.shape) < 0.3
    X[on] = rng.choice(thr, on.sum())
    X[::9, 1] = 1e-9 * rng.integers(-5, 60, len(X[::9]))
    X[::17] = np.nan
    X[::19, 2] = np.inf
    X[::23, 3] = -np.inf
    Q = _products.quantize(X, qfeat, cuts, cut_ptr, nan_byte, 3008)
    for q in range(len(qfeat)):
        c = cuts[cut_ptr[q]:cut_ptr[q + 1]]
        col = X[:, qfeat[q]]
        ref = np.where(np.isnan(col), nan_byte[q], np.searchsorted(c, col, side="right"))
        np.testing.assert_array_equal(Q[q, :3000], ref)
        assert (Q[q, 3000:] == 0).all()
    # a level goes right when its byte is above its cut: x >= threshold
    for k in range(n_levels):
        col = X[:, feat[k]]
        right = np.where(np.isnan(col), not miss[k], col >= thr[k])
        np.testing.assert_array_equal(Q[lq[k], :3000] > lcut[k], right)


#: The special cases the one-pass kernels are checked on (:func:`special_case`): category sets and zero-as-missing
#: splits (routed one row at a time), one tree per margin, leaves with a value for every margin, and the links.
SPECIAL = {"categorical": dict(cat_feature=1), "zero-or-nan": dict(nan_modes=(NAN_MISSING, ZERO_OR_NAN_MISSING)),
           "margins per tree": dict(n_margins=3), "vector leaves": dict(n_margins=3, vector_leaves=True),
           "logistic": dict(link="logistic"), "binary_logistic": dict(link="binary_logistic"),
           "softmax": dict(n_margins=3, link="softmax"), "exp": dict(link="exp")}


def special_case(kind: str, n: int):
    """(ensemble, rows, rng) of the ``SPECIAL`` case ``kind``: six oblivious trees on four features, rows of a few
    values with missing ones; a category column of codes 0..5 for ``"categorical"``."""
    ens = oblivious_ensemble([3, 2, 4, 1, 0, 3], seed=7, **SPECIAL[kind])
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.choice([-1.2, -0.5, 0.0, 0.1, 0.5, 2.0, np.nan], size=(n, 4)),
                     columns=[f"f{j}" for j in range(4)])
    if kind == "categorical":
        X["f1"] = rng.integers(0, 6, len(X)).astype(float)
    return ens, X, rng
