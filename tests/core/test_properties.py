"""Property tests: random ensembles built directly in the IR; exact == brute over the IR's own predict."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treetools import IRAdapter

import pdpx
from pdpx.core.ir import LINKS, MalformedTreeError, TreeEnsemble

N_FEATURES = 3
VALUES = [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]  # thresholds and data share these: ties everywhere


@st.composite
def ensembles(draw):
    n_trees = draw(st.integers(1, 4))
    link = draw(st.sampled_from(LINKS))
    n_margins = 1 if link == "binary_logistic" else draw(st.integers(1, 3))
    vector = draw(st.booleans())
    cat_features = draw(st.sets(st.integers(0, N_FEATURES - 1), max_size=1))
    nodes = {k: [] for k in ("left", "right", "feature", "threshold", "missing_left", "nan_mode",
                             "cat_offset", "cat_nwords", "value")}
    words, tree_start, groups = [], [0], []

    def grow(depth):
        idx = len(nodes["left"])
        for k in nodes:
            nodes[k].append(None)
        if depth == 0 or draw(st.integers(0, 3)) == 0:
            nodes["left"][idx] = nodes["right"][idx] = nodes["feature"][idx] = -1
            nodes["threshold"][idx] = 0.0
            nodes["missing_left"][idx] = False
            nodes["nan_mode"][idx] = 0
            nodes["cat_offset"][idx] = -1
            nodes["cat_nwords"][idx] = 0
            nodes["value"][idx] = [draw(st.floats(-3, 3, allow_nan=False)) for _ in range(n_margins)]
            return idx
        f = draw(st.integers(0, N_FEATURES - 1))
        nodes["feature"][idx] = f
        nodes["missing_left"][idx] = draw(st.booleans())
        nodes["value"][idx] = [0.0] * n_margins
        if f in cat_features:
            nodes["cat_offset"][idx] = len(words)
            nodes["cat_nwords"][idx] = 1
            nodes["nan_mode"][idx] = 0
            nodes["threshold"][idx] = 0.0
            words.append(draw(st.integers(0, 2**8 - 1)))
        else:
            nodes["cat_offset"][idx] = -1
            nodes["cat_nwords"][idx] = 0
            nodes["nan_mode"][idx] = draw(st.integers(0, 2))
            nodes["threshold"][idx] = draw(st.sampled_from(VALUES + [np.inf]))
        nodes["left"][idx] = grow(depth - 1)
        nodes["right"][idx] = grow(depth - 1)
        return idx

    for _ in range(n_trees):
        grow(draw(st.integers(0, 4)))
        tree_start.append(len(nodes["left"]))
        groups.append(-1 if vector else draw(st.integers(0, n_margins - 1)))
    return TreeEnsemble(
        left=np.array(nodes["left"]), right=np.array(nodes["right"]), feature=np.array(nodes["feature"]),
        threshold=np.array(nodes["threshold"]), missing_left=np.array(nodes["missing_left"]),
        nan_mode=np.array(nodes["nan_mode"]), cat_offset=np.array(nodes["cat_offset"]),
        cat_nwords=np.array(nodes["cat_nwords"]), cat_words=np.array(words, dtype=np.uint32),
        value=np.array(nodes["value"]), tree_start=np.array(tree_start), tree_group=np.array(groups),
        tree_weight=np.array([draw(st.floats(0.1, 2)) for _ in range(n_trees)]),
        base_score=np.array([draw(st.floats(-1, 1)) for _ in range(n_margins)]),
        n_features=N_FEATURES, n_margins=n_margins, link=link,
        comparison=draw(st.sampled_from(["<=", "<"])), float32_input=draw(st.booleans()),
        categories_go_left=draw(st.booleans()), aggregation=draw(st.sampled_from(["sum", "mean"])),
    )


@st.composite
def cases(draw):
    ens = draw(ensembles())
    n = draw(st.integers(1, 12))
    cell = st.sampled_from(VALUES + [np.nan, 1e-40, 7.0, 0.1 + 1e-9])
    X = pd.DataFrame(
        np.array([[draw(cell) for _ in range(N_FEATURES)] for _ in range(n)]),
        columns=[f"f{j}" for j in range(N_FEATURES)],
    )
    k = draw(st.integers(1, N_FEATURES))
    features = draw(st.permutations(range(N_FEATURES)))[:k]
    custom = {
        f"f{j}": draw(st.lists(st.sampled_from(VALUES + [4.0, 5.0, -0.0 + 1e-40]), min_size=1, max_size=5, unique=True))
        for j in features
    }
    if draw(st.booleans()):  # sorted grids take another path (regions as intervals)
        custom = {k: sorted(v) for k, v in custom.items()}
    weights = draw(st.one_of(st.none(), st.lists(st.floats(0, 5), min_size=n, max_size=n)))
    if weights is not None and sum(weights) <= 0:
        weights = None
    return ens, X, features, custom, weights


@pytest.mark.parametrize("kernel", ["leafsets", "partition"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases(), st.sampled_from(["average", "both"]), st.booleans())
def test_exact_equals_brute_on_random_ensembles(kernel, case, kind, centered):
    ens, X, features, custom, weights = case
    adapter = IRAdapter(ens)
    kw = dict(kind=kind, custom_values=custom, sample_weight=weights, centered=centered)
    e = pdpx.partial_dependence(adapter, X, features, method="exact", method_options={"kernel": kernel}, **kw)
    b = pdpx.partial_dependence(adapter, X, features, method="brute", **kw)
    np.testing.assert_allclose(e.average, b.average, rtol=1e-9, atol=1e-9)
    if kind == "both":
        np.testing.assert_allclose(e.individual, b.individual, rtol=1e-9, atol=1e-9)


def _tiny(**over):
    base = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1], threshold=[0.5, 0, 0],
                missing_left=[True, False, False], value=[0.0, 1.0, 2.0], tree_start=[0, 3], tree_group=[0],
                n_features=1)
    base.update(over)
    return TreeEnsemble(**{k: np.asarray(v) if isinstance(v, list) else v for k, v in base.items()})


@pytest.mark.parametrize("over, pattern", [
    (dict(left=[1, 5, -1]), r"tree 0, node 1 .*leaf \(left == -1\) has a right child|child index points outside"),
    (dict(left=[1, -1, -1], right=[7, -1, -1]), r"tree 0, node 0 .*child index points outside its tree"),
    (dict(feature=[3, -1, -1]), r"tree 0, node 0 .*split feature outside 0..0"),
    (dict(threshold=[np.nan, 0, 0]), r"tree 0, node 0 .*threshold is NaN"),
    (dict(value=[0.0, np.inf, 2.0]), r"tree 0, node 1 .*leaf value is not finite"),
    (dict(left=[1, 2, -1], right=[2, 0, -1]), r"node"),
    (dict(tree_group=[3]), r"tree 0: output group 3 >= n_margins 1"),
    (dict(link="probit"), r"unknown link 'probit'"),
    (dict(tree_start=[0, 2]), r"tree_start must have n_trees \+ 1 entries running from 0 to n_nodes"),
])
def test_malformed_trees_are_errors_naming_tree_and_node(over, pattern):
    with pytest.raises(MalformedTreeError, match=pattern):
        _tiny(**over)


def test_tiny_tree_routes_as_documented():
    ens = _tiny()
    X = np.array([[0.5], [0.6], [np.nan]])
    np.testing.assert_array_equal(ens.predict_raw(X)[:, 0], [1.0, 2.0, 1.0])
    lt = _tiny(comparison="<")
    np.testing.assert_array_equal(lt.predict_raw(X)[:, 0], [2.0, 2.0, 1.0])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_one_row_walk_equals_the_vectorised_predict(case):
    ens, X, *_ = case
    arr = X.to_numpy(dtype=np.float64)
    for row in arr:
        np.testing.assert_allclose(ens.predict_raw_row(row), ens.predict_raw(row[None, :])[0], rtol=1e-12, atol=1e-12)
