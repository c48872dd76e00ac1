"""core/splits.py: a column's values partitioned by a tree model's splits, checked against the model's own routing
rule (``TreeEnsemble.goes_left_many``, the reference every kernel is tested against): values of one class go the
same way at every split, and the grid's step boundaries are exactly where some split sends neighbours apart."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pdpx.core import splits
from pdpx.core.ir import ZERO_OR_NAN_MISSING, TreeEnsemble, TreeModel, numeric_encoder, numeric_values
from pdpx.core.treesum import TreeSum, TreeTerm

#: goes_left_many (the reference) rounds 1e300 to float32 as the model does: inf, with numpy's warning
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")


def stumps(thresholds, features, n_features, nan_modes=None, missing_left=None, **kw) -> TreeEnsemble:
    """One tree of one split per threshold (node 0 splits, nodes 1 and 2 are leaves)."""
    k = len(thresholds)
    idx = np.arange(k)
    left = np.full(3 * k, -1)
    right = np.full(3 * k, -1)
    left[3 * idx], right[3 * idx] = 3 * idx + 1, 3 * idx + 2
    feature = np.full(3 * k, -1)
    feature[3 * idx] = features
    threshold = np.zeros(3 * k)
    threshold[3 * idx] = thresholds
    nan_mode = np.zeros(3 * k, dtype=np.int64)
    nan_mode[3 * idx] = 0 if nan_modes is None else nan_modes
    ml = np.zeros(3 * k, dtype=bool)
    ml[3 * idx] = False if missing_left is None else missing_left
    value = np.tile([0.0, 1.0, 2.0], k) * (idx.repeat(3) + 1)
    return TreeEnsemble(left=left, right=right, feature=feature, threshold=threshold, missing_left=ml,
                        nan_mode=nan_mode, value=value, tree_start=np.arange(0, 3 * k + 1, 3),
                        tree_group=np.zeros(k, dtype=np.int64), n_features=n_features, **kw)


def model(ens) -> TreeModel:
    return TreeModel(ensemble=ens, encode=numeric_encoder, encode_values=numeric_values)


def probes(ens, nodes, rng) -> np.ndarray:
    """Values where routing is delicate: each threshold and one ulp (float64 and float32) either side, zero and
    the edges of what reads as zero, NaN, infinities, and random values."""
    t = ens.threshold[nodes]
    t32 = t.astype(np.float32)
    near = [t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), t32.astype(np.float64),
            np.nextafter(t32, np.float32(np.inf)).astype(np.float64),
            np.nextafter(t32, np.float32(-np.inf)).astype(np.float64)]
    z = splits.ZERO_READ
    special = [0.0, -0.0, z, -z, np.nextafter(z, 1), -np.nextafter(z, 1), float(np.nextafter(np.float32(z), 1)),
               np.nan, np.inf, -np.inf, 1e300]
    return np.concatenate(near + [np.array(special), rng.normal(0, 2, 200)])


def random_case(seed: int, comparison: str, float32_input: bool):
    rng = np.random.default_rng(seed)
    k = 30
    thresholds = np.round(rng.normal(0, 1.5, k), 2)
    thresholds[:3] = [0.0, 1e-35, 0.3 + 1e-9]  # at and near zero, and between two float32 values
    nan_modes = rng.choice([0, ZERO_OR_NAN_MISSING], k)
    ens = stumps(thresholds, rng.integers(0, 2, k), 2, nan_modes=nan_modes, missing_left=rng.random(k) < 0.5,
                 comparison=comparison, float32_input=float32_input)
    nodes = splits.split_nodes(ens, 0)
    return ens, nodes, probes(ens, nodes, rng)


def assert_routed_alike(routes, codes):
    """Values of one class (``codes``) go the same way at every split (``routes``: (splits, values), the model's
    own rule)."""
    for c in np.unique(codes):
        members = routes[:, codes == c]
        assert (members == members[:, :1]).all(), f"class {c} holds values the model routes apart"


CASES = [(seed, cmp, f32) for seed in range(3) for cmp in ("<=", "<") for f32 in (False, True)]


@pytest.mark.parametrize("seed, comparison, float32_input", CASES)
def test_values_of_one_class_go_the_same_way_at_every_split(seed, comparison, float32_input):
    ens, nodes, values = random_case(seed, comparison, float32_input)
    codes = splits.classes(ens, nodes, values)
    routes = ens.goes_left_many(nodes, values)  # (nodes, values): the model's own rule
    assert codes.min() == 0 and set(codes) == set(range(codes.max() + 1))
    assert_routed_alike(routes, codes)
    # and as few classes as routes, but for the values the model reads as missing (their own classes)
    plain = ~np.isnan(values) & ~splits.reads_as_zero(splits.as_read(ens, values))
    assert len(set(codes[plain])) == len({tuple(r) for r in routes[:, plain].T})


@pytest.mark.parametrize("seed, comparison, float32_input", CASES)
def test_side_changes_are_where_some_split_sends_neighbours_apart(seed, comparison, float32_input):
    ens, nodes, values = random_case(seed, comparison, float32_input)
    values = np.unique(values[np.isfinite(values)])
    routes = ens.goes_left_many(nodes, values)
    expected = np.any(routes[:, 1:] != routes[:, :-1], axis=0)
    np.testing.assert_array_equal(splits.side_changes(ens, nodes, values), expected)


def test_side_changes_in_blocks_equal_all_at_once(monkeypatch):
    ens, nodes, values = random_case(7, "<=", True)
    values = np.unique(values[np.isfinite(values)])
    whole = splits.side_changes(ens, nodes, values)
    monkeypatch.setattr(splits, "CHUNK", 1)  # one node at a time
    np.testing.assert_array_equal(splits.side_changes(ens, nodes, values), whole)
    assert whole.any()


def test_category_sets_are_routed_per_value():
    """A categorical split (codes 1 and 3 go left) beside a numeric one."""
    ens = stumps([0.0, 2.5], [0, 0], 1)
    ens.cat_offset[0], ens.cat_nwords[0] = 0, 1
    ens.cat_words = np.array([0b1010], dtype=np.uint32)
    ens.__post_init__()
    nodes = splits.split_nodes(ens, 0)
    values = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 1.0, np.nan])
    assert splits.by_category(ens, nodes)
    codes = splits.classes(ens, nodes, values)
    assert_routed_alike(ens.goes_left_many(nodes, values), codes)
    assert codes[1] == codes[5] and codes[1] != codes[0] and codes[3] != codes[4]


def sum_of_members():
    """A sum of three members: all of X as is, columns [2, 0] (reordered), and a sum nested in a term that reads
    columns [1, 2] whose own member reads its column 1 (X's column 2)."""
    a = model(stumps([0.5, 1.5, -1.0], [0, 1, 2], 3))
    b = model(stumps([0.25, 2.0, 3.0], [0, 1, 1], 2))
    c = model(stumps([-0.5, 0.75], [0, 0], 1))
    inner = TreeSum(terms=[TreeTerm(model=c, weights=np.ones((1, 1)), columns=[1])], offset=np.zeros(1))
    terms = [TreeTerm(model=a, weights=np.ones((1, 1))), TreeTerm(model=b, weights=np.ones((1, 1)), columns=[2, 0]),
             TreeTerm(model=inner, weights=np.ones((1, 1)), columns=[1, 2])]
    return TreeSum(terms=terms, offset=np.zeros(1)), a, b, c


def test_the_walk_maps_every_member_to_the_columns_of_x_it_reads():
    tm, a, b, c = sum_of_members()
    assert [(m, cols) for m, cols in splits.leaves(tm)] == [(a, None), (b, [2, 0]), (c, [2])]
    assert [(ens, j) for ens, j in splits.members(tm, 2)] == [(a.ensemble, 2), (b.ensemble, 0), (c.ensemble, 0)]
    assert [(ens, j) for ens, j in splits.members(tm, 0)] == [(a.ensemble, 0), (b.ensemble, 1)]
    with pytest.raises(splits.Unmapped, match="not trees"):
        list(splits.leaves(TreeSum(terms=[TreeTerm(model="x", weights=np.ones((1, 1)))], offset=np.zeros(1))))


def test_column_classes_of_a_sum_are_cells_no_member_tells_apart():
    """Rows of one cell of a column (all its members' classes alike) go the same way at every split on the column,
    in every member, each reading the column at its own position."""
    tm, *_ = sum_of_members()
    rng = np.random.default_rng(3)
    X = pd.DataFrame(np.round(rng.normal(0, 1.5, (400, 3)), 1), columns=["x0", "x1", "x2"])
    keys = splits.column_classes(tm, X, [0, 2])
    assert sorted(keys) == [0, 2] and len(keys[2]) == 3 and len(keys[0]) == 2
    for p in (0, 2):
        cell = splits.factor(keys[p], len(X))
        x = X.iloc[:, p].to_numpy()
        for ens, j in splits.members(tm, p):
            assert_routed_alike(ens.goes_left_many(splits.split_nodes(ens, j), x), cell)


def test_trees_that_read_other_columns_than_x_are_unmapped():
    tm = TreeModel(ensemble=stumps([0.5], [0], 3), encode=lambda X: np.zeros((len(X), 2)), encode_values=numeric_values)
    with pytest.raises(splits.Unmapped, match="one for one"):
        splits.column_classes(tm, pd.DataFrame({"a": [1.0], "b": [2.0], "c": [3.0]}), [0])


def test_factor_orders_combinations_lexicographically():
    codes = splits.factor([np.array([1, 0, 1, 0]), np.array([0, 5, 0, 2])], 4)
    assert codes.tolist() == [2, 1, 2, 0]
