"""The two kernels of ``exact``: leaf sets (trees of <= 64 reached leaves) and partition (any tree).

Random small ensembles are in test_properties.py (both kernels); here: the 64-leaf
boundary, which kernel ``auto`` takes, the option's errors, and node rules the
vectorised test does not express (categorical sets, zero-as-missing) inside trees
that do use leaf sets.
"""

import re

import numpy as np
import pandas as pd
import pytest
from treetools import IRAdapter

import pdpx
from pdpx.core.ir import TreeEnsemble
from pdpx.plugins.trees import leafsets as _leafsets


def full_tree_ensemble(depth, n_trees=3, n_features=3, seed=0, link="identity", **over):
    """Complete binary trees of ``depth`` (2**depth leaves each), random splits and values."""
    rng = np.random.default_rng(seed)
    left, right, feature, threshold, value, starts = [], [], [], [], [], [0]
    for _ in range(n_trees):
        base = len(left)
        n_internal = 2**depth - 1
        for i in range(2 * n_internal + 1):
            if i < n_internal:
                left.append(base + 2 * i + 1)
                right.append(base + 2 * i + 2)
                feature.append(int(rng.integers(n_features)))
                threshold.append(float(rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0])))
                value.append(0.0)
            else:
                left.append(-1)
                right.append(-1)
                feature.append(-1)
                threshold.append(0.0)
                value.append(float(rng.normal()))
        starts.append(len(left))
    n = len(left)
    kw = dict(
        left=np.array(left), right=np.array(right), feature=np.array(feature), threshold=np.array(threshold),
        missing_left=rng.integers(0, 2, n).astype(bool), value=np.array(value), tree_start=np.array(starts),
        tree_group=np.zeros(n_trees, dtype=int), n_features=n_features, link=link,
    )
    kw.update(over)
    return TreeEnsemble(**kw)


def data(n=40, n_features=3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, -0.7, -0.5, 0.0, 0.2, 0.5, 1.0, 1.5, np.nan], size=(n, n_features))
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(n_features)])


def kernel_calls(monkeypatch):
    """Count calls of the leaf-set kernel (exact looks it up on the module at call time)."""
    calls = []
    for name in ("leafset_walk",):
        fn = getattr(_leafsets, name)

        def wrapped(*a, _fn=fn, **k):
            calls.append(_fn.__name__ if hasattr(_fn, "__name__") else "kernel")
            return _fn(*a, **k)

        monkeypatch.setattr(_leafsets, name, wrapped)
    return calls


@pytest.mark.parametrize("depth, uses_leafsets", [(6, True), (7, False)], ids=["64-leaves", "128-leaves"])
@pytest.mark.parametrize("link", ["identity", "logistic"])
def test_the_64_leaf_boundary(monkeypatch, depth, uses_leafsets, link):
    ens = full_tree_ensemble(depth, link=link)
    X = data()
    calls = kernel_calls(monkeypatch)
    kw = dict(kind="both", custom_values={"f0": [-2.0, -0.6, 0.1, 0.7, 2.0]})
    e = pdpx.partial_dependence(IRAdapter(ens), X, "f0", method="exact", **kw)
    b = pdpx.partial_dependence(IRAdapter(ens), X, "f0", method="brute", **kw)
    np.testing.assert_allclose(e.average, b.average, atol=1e-12)
    np.testing.assert_allclose(e.individual, b.individual, atol=1e-12)
    assert bool(calls) == uses_leafsets


def test_leafsets_refused_with_the_reason_when_a_tree_is_too_large():
    ens = full_tree_ensemble(7)
    with pytest.raises(pdpx.PdpxError, match=r"more than 64 leaves .* use kernel 'auto' or 'partition'"):
        pdpx.partial_dependence(IRAdapter(ens), data(), "f0", method="exact", method_options={"kernel": "leafsets"})


def test_only_reached_leaves_count_against_the_limit(monkeypatch):
    """128 leaves, but a grid on one side of the root's split reaches 64 of them: leafsets may be asked for."""
    ens = full_tree_ensemble(7, n_trees=1)
    root_feature, root_thr = int(ens.feature[0]), float(ens.threshold[0])
    name = f"f{root_feature}"
    kw = dict(kind="both", custom_values={name: [root_thr - 3, root_thr - 1]})
    b = pdpx.partial_dependence(IRAdapter(ens), data(), name, method="brute", **kw)
    for kernel, uses_leafsets in [("auto", False), ("leafsets", True)]:
        calls = kernel_calls(monkeypatch)
        e = pdpx.partial_dependence(IRAdapter(ens), data(), name, method="exact", method_options={"kernel": kernel},
                                    **kw)
        np.testing.assert_allclose(e.individual, b.individual, atol=1e-12)
        assert bool(calls) == uses_leafsets, kernel


@pytest.mark.parametrize("kernel", ["auto", "leafsets", "partition"])
def test_special_rules_inside_leafset_trees(kernel):
    """Categorical sets and zero-as-missing nodes are tested row by row inside the leaf-set kernel."""
    ens0 = full_tree_ensemble(4, n_trees=4, seed=3)
    n = ens0.n_nodes
    cat_offset = np.full(n, -1)
    cat_nwords = np.zeros(n, dtype=int)
    nan_mode = np.zeros(n, dtype=np.int8)
    internal = np.flatnonzero(ens0.left >= 0)
    feature = ens0.feature.copy()
    for i, node in enumerate(internal):
        if i % 3 == 0:  # categorical split on f2
            feature[node] = 2
            cat_offset[node] = 0
            cat_nwords[node] = 1
        elif i % 3 == 1:
            nan_mode[node] = 2  # zero or NaN: missing
    ens = TreeEnsemble(
        left=ens0.left, right=ens0.right, feature=feature, threshold=ens0.threshold, missing_left=ens0.missing_left,
        value=ens0.value, tree_start=ens0.tree_start, tree_group=ens0.tree_group, n_features=3,
        cat_offset=cat_offset, cat_nwords=cat_nwords, cat_words=np.array([0b1010], dtype=np.uint32),
        nan_mode=nan_mode, link="exp", link_scale=0.5,
    )
    X = data()
    X["f2"] = np.random.default_rng(2).choice([0.0, 1.0, 2.0, 3.0, 40.0, np.nan], size=len(X))
    for feats in (["f0"], ["f1", "f0"]):
        kw = dict(kind="both", grid_resolution=6)
        e = pdpx.partial_dependence(IRAdapter(ens), X, feats, method="exact", method_options={"kernel": kernel}, **kw)
        b = pdpx.partial_dependence(IRAdapter(ens), X, feats, method="brute", **kw)
        np.testing.assert_allclose(e.average, b.average, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(e.individual, b.individual, rtol=1e-12, atol=1e-12)


def test_rows_span_many_blocks_and_memory_chunks(capsys):
    """More rows than one 64-row block, in several memory chunks (wide rows, 1 MB budget), with weights."""
    ens = full_tree_ensemble(5, n_trees=6, link="logistic", n_features=200)
    X = data(n=1000, n_features=200, seed=5)
    w = np.random.default_rng(0).uniform(0, 3, len(X))
    for kind in ("average", "both"):
        kw = dict(kind=kind, grid_resolution=7, sample_weight=w, memory_budget="1MB", progress=True)
        e = pdpx.partial_dependence(IRAdapter(ens), X, ["f1"], method="exact", **kw)
        chunks = re.findall(r"pdpx exact: 100%.*? (\d+)/\1 ", capsys.readouterr().err)
        assert chunks and int(chunks[-1]) > 1
        b = pdpx.partial_dependence(IRAdapter(ens), X, ["f1"], method="brute", **kw)
        np.testing.assert_allclose(e.average, b.average, atol=1e-12)
        if kind == "both":
            np.testing.assert_allclose(e.individual, b.individual, atol=1e-12)


def test_kernel_option_errors():
    ens = full_tree_ensemble(3)
    a = IRAdapter(ens)
    with pytest.raises(pdpx.PdpxError, match=r"'kernel': 'fast'.*expected one of \['auto', 'oblivious', 'leafsets', 'partition'\]"):
        pdpx.partial_dependence(a, data(), "f0", method="exact", method_options={"kernel": "fast"})
    with pytest.raises(pdpx.PdpxError, match=r"method_options \['kernal'\] are not options of method 'exact'; "
                                             r"its options: \['kernel', 'engine'\]"):
        pdpx.partial_dependence(a, data(), "f0", method="exact", method_options={"kernal": "partition"})
    with pytest.raises(pdpx.PdpxError, match=r"not options of method 'brute'; its options: \['stack'\]"):
        pdpx.partial_dependence(a, data(), "f0", method="brute", method_options={"kernel": "partition"})


def test_option_meant_for_exact_when_auto_picks_brute():
    from sklearn.linear_model import LinearRegression

    X = data().fillna(0.0)
    m = LinearRegression().fit(X, X["f0"] * 2)
    with pytest.raises(pdpx.PdpxError, match=r"not options of method 'brute' \(chosen by method='auto'\)"):
        pdpx.partial_dependence(m, X, "f0", method_options={"kernel": "partition"})
