"""Pattern counts (plugins/trees/counts*.py) on ensembles built in the IR.

* the counts themselves, against their definition (per row and leaf, the
  features whose condition on the leaf's path the row fails, walked with the IR's
  own routing);
* every 1-way and 2-way average from the counts, against brute force on the IR's
  own prediction (set the column, predict, weighted average), on random ensembles
  with ties, NaN, zero-as-missing, categorical sets, float32 inputs, both
  comparisons, several outputs, vector leaves and weights; both gather kernels,
  both orders;
* counts add over row partitions, chunks and threads;
* what the counts refuse, and why;
* the threshold grid: one point per step of the curve.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdpx.core.errors import PdpxError
from pdpx.core.ir import ZERO_OR_NAN_MISSING, TreeEnsemble, TreeModel, numeric_encoder, numeric_values
from pdpx.core.method import Request
from pdpx.core.steps import threshold_grid
from pdpx.plugins.trees import counts as C
from pdpx.plugins.trees import counts_pd as CP

pytest.importorskip("numba", reason="the counts kernels need numba")

N_FEATURES = 4
VALUES = [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]  # thresholds and data share these: ties everywhere


@st.composite
def ensembles(draw, link="identity", max_depth=5):
    n_trees = draw(st.integers(1, 5))
    n_margins = draw(st.integers(1, 3))
    vector = draw(st.booleans())
    cat_features = draw(st.sets(st.integers(0, N_FEATURES - 1), max_size=1))
    nodes = {k: [] for k in ("left", "right", "feature", "threshold", "missing_left", "nan_mode", "cat_offset",
                             "cat_nwords", "value")}
    words, tree_start, groups = [], [0], []

    def grow(depth):
        idx = len(nodes["left"])
        for k in nodes:
            nodes[k].append(None)
        if depth == 0 or draw(st.integers(0, 4)) == 0:
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
            nodes["threshold"][idx] = draw(st.sampled_from(VALUES + [np.inf, 0.1 + 1e-9]))
        nodes["left"][idx] = grow(depth - 1)
        nodes["right"][idx] = grow(depth - 1)
        return idx

    for _ in range(n_trees):
        grow(draw(st.integers(0, max_depth)))
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


CELLS = VALUES + [np.nan, 1e-40, -0.0, 7.0, 0.1 + 1e-9, 0.1 + 2e-9, 4.0, 5.0]


@st.composite
def cases(draw):
    ens = draw(ensembles())
    n = draw(st.integers(1, 30))
    X = pd.DataFrame(np.array([[draw(st.sampled_from(CELLS)) for _ in range(N_FEATURES)] for _ in range(n)]),
                     columns=[f"f{j}" for j in range(N_FEATURES)])
    weights = draw(st.one_of(st.none(), st.lists(st.floats(0, 5), min_size=n, max_size=n)))
    if weights is not None and sum(weights) <= 0:
        weights = None
    grids = [np.array(draw(st.lists(st.sampled_from(CELLS), min_size=1, max_size=6, unique_by=repr)))
             for _ in range(N_FEATURES)]
    if draw(st.booleans()):  # sorted grids take another path (regions as intervals)
        grids = [np.sort(g) for g in grids]  # NaN last
    return ens, X, None if weights is None else np.array(weights), grids


def tm_of(ens):
    return TreeModel(ens, numeric_encoder, numeric_values)


def request(X, features, grids, outputs, kind="average"):
    return Request(X=X, features=list(features), grid_values=[grids[f] for f in features],
                   categorical=[False] * len(features), response="predict", outputs=list(outputs), kind=kind,
                   sample_weight=None, memory_budget=1 << 28)


def brute(ens, X, features, grids, w):
    """The definition: every row with the target columns set to each grid point, the IR's own prediction,
    the weighted average. Shape (n_outputs, *grid_shape)."""
    A = X.to_numpy(dtype=np.float64)
    shape = tuple(len(grids[f]) for f in features)
    out = np.empty((ens.n_outputs,) + shape)
    for idx in np.ndindex(shape):
        Xm = A.copy()
        for k, f in enumerate(features):
            Xm[:, f] = grids[f][idx[k]]
        out[(slice(None),) + idx] = np.average(ens.predict(Xm), axis=0, weights=w)
    return out


def feature_sets(order):
    sets = [[f] for f in range(N_FEATURES)]
    if order == 2:
        sets += [[a, b] for a in range(N_FEATURES) for b in range(N_FEATURES) if a != b]
    return sets


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("kernel", ["patterns", "leafsets", "partition"])
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases())
def test_every_average_equals_brute_on_random_ensembles(kernel, order, case):
    ens, X, w, grids = case
    tm = tm_of(ens)
    counts = C.gather(tm, X, w, order=order, kernel=kernel)
    outputs = list(range(ens.n_outputs))
    for feats in feature_sets(order):
        got = CP.partial_dependence(tm, counts, request(X, feats, grids, outputs)).average
        np.testing.assert_allclose(got, brute(ens, X, feats, grids, w), rtol=1e-9, atol=1e-9, err_msg=str(feats))


def counts_by_definition(ens, X, w, order):
    """count[L, F] by walking each leaf's path with the IR's routing: {(leaf, frozenset F): weight}."""
    A = X.to_numpy(dtype=np.float64)
    w = np.ones(len(A)) if w is None else w
    out = {}
    for t in range(ens.n_trees):
        stack = [(int(ens.tree_start[t]), [])]  # (node, [(node, went left)] on the path)
        while stack:
            node, path = stack.pop()
            if ens.left[node] >= 0:
                stack.append((int(ens.left[node]), path + [(node, True)]))
                stack.append((int(ens.right[node]), path + [(node, False)]))
                continue
            for r in range(len(A)):
                fails = {int(ens.feature[nd]) for nd, went in path
                         if bool(ens.goes_left(nd, np.array([A[r, ens.feature[nd]]]))[0]) != went}
                if len(fails) <= order:
                    key = (node, frozenset(fails))
                    out[key] = out.get(key, 0.0) + w[r]
    return out


def slot_of(layout, leaf, F):
    p = layout.n_pf[leaf]
    feats = list(layout.pf[layout.pf_ptr[leaf]: layout.pf_ptr[leaf] + p])
    o = sorted(feats.index(f) for f in F)
    if not o:
        return layout.slot_base[leaf]
    if len(o) == 1:
        return layout.slot_base[leaf] + 1 + o[0]
    return layout.slot_base[leaf] + 1 + p + o[1] * (o[1] - 1) // 2 + o[0]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("kernel", ["patterns", "leafsets", "partition"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases())
def test_counts_are_their_definition(kernel, order, case):
    ens, X, w, _ = case
    counts = C.gather(tm_of(ens), X, w, order=order, kernel=kernel)
    layout = C.count_layout(ens, order)
    expected = np.zeros(layout.n_slots)
    for (leaf, F), v in counts_by_definition(ens, X, w, order).items():
        expected[slot_of(layout, leaf, F)] += v
    np.testing.assert_allclose(counts.counts, expected, rtol=1e-12, atol=1e-12)
    assert counts.total_weight == pytest.approx(len(X) if w is None else w.sum())


# ----------------------------------------------------------------- order 2 for some pairs only
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases(), wanted=st.sets(st.sampled_from([(a, b) for a in range(N_FEATURES)
                                                     for b in range(a + 1, N_FEATURES)]), max_size=3))
def test_pairs_counted_are_their_definition_and_the_others_are_refused(case, wanted):
    """``pairs=`` (leafsets): the 1-way slots and the asked pairs' slots as defined, the other pairs' slots 0;
    every 1-way average and each asked pair's equals brute, the other pairs are refused."""
    ens, X, w, grids = case
    tm = tm_of(ens)
    counts = C.gather(tm, X, w, order=2, kernel="leafsets", pairs=[(b, a) for a, b in wanted])  # either order
    assert counts.pairs == frozenset(wanted)
    layout = C.count_layout(ens, 2)
    expected = np.zeros(layout.n_slots)
    for (leaf, F), v in counts_by_definition(ens, X, w, 2).items():
        if len(F) < 2 or tuple(sorted(F)) in wanted:
            expected[slot_of(layout, leaf, F)] += v
    np.testing.assert_allclose(counts.counts, expected, rtol=1e-12, atol=1e-12)
    outputs = list(range(ens.n_outputs))
    for feats in feature_sets(2):
        req = request(X, feats, grids, outputs)
        if len(feats) == 1 or tuple(sorted(feats)) in wanted:
            assert counts.answers(feats)
            got = CP.partial_dependence(tm, counts, req).average
            np.testing.assert_allclose(got, brute(ens, X, feats, grids, w), rtol=1e-9, atol=1e-9, err_msg=str(feats))
        else:
            assert not counts.answers(feats)
            with pytest.raises(PdpxError, match="gathered for other pairs"):
                CP.partial_dependence(tm, counts, req)


def test_pairs_restrict_only_the_leafsets_kernel_and_must_match_to_add():
    ens = full_tree_ensemble(4, n_trees=3)
    X = many_rows(300)
    every = C.gather(tm_of(ens), X, order=2, kernel="partition", pairs=[(0, 1)])
    assert every.pairs is None and every.answers([2, 3])  # the other kernels count every pair
    assert C.gather(tm_of(ens), X, order=2, kernel="patterns", pairs=[(0, 1)]).pairs is None
    some = C.gather(tm_of(ens), X, order=2, kernel="leafsets", pairs=[(0, 1)])
    assert some.answers([1, 0]) and some.answers([3]) and not some.answers([2, 3])
    with pytest.raises(PdpxError, match="gathered for other pairs"):
        some + C.gather(tm_of(ens), X, order=2, kernel="leafsets", pairs=[(2, 3)])
    both = some + C.gather(tm_of(ens), X, order=2, kernel="leafsets", pairs=[(1, 0)])
    np.testing.assert_array_equal(both.counts, 2 * some.counts)
    for pairs, message in [([(0, 1)], "at order 1 no pair is counted"), ([(0, 0)], "two distinct"),
                           ([(0, 1, 2)], "two distinct"), ([(-1, 2)], "non-negative"), ([3], "pairs of two")]:
        with pytest.raises(PdpxError, match=message):
            C.gather(tm_of(ens), X, order=1 if "order 1" in message else 2, pairs=pairs)


# ----------------------------------------------------------------- deeper trees, many rows
def full_tree_ensemble(depth, n_trees=3, n_features=N_FEATURES, seed=0, **over):
    """Complete binary trees of ``depth``, random splits (some categorical, some zero-as-missing) and values."""
    rng = np.random.default_rng(seed)
    left, right, feature, threshold, value, starts, cat_offset, nan_mode = [], [], [], [], [], [0], [], []
    for _ in range(n_trees):
        base = len(left)
        n_internal = 2**depth - 1
        for i in range(2 * n_internal + 1):
            if i < n_internal:
                left.append(base + 2 * i + 1)
                right.append(base + 2 * i + 2)
                f = int(rng.integers(n_features))
                feature.append(f)
                threshold.append(float(rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0])))
                cat_offset.append(0 if f == n_features - 1 else -1)
                nan_mode.append(0 if f == n_features - 1 else int(rng.integers(3)))
                value.append([0.0, 0.0])
            else:
                left.append(-1)
                right.append(-1)
                feature.append(-1)
                threshold.append(0.0)
                cat_offset.append(-1)
                nan_mode.append(0)
                value.append(list(rng.normal(size=2)))
        starts.append(len(left))
    n = len(left)
    kw = dict(left=np.array(left), right=np.array(right), feature=np.array(feature), threshold=np.array(threshold),
              missing_left=rng.integers(0, 2, n).astype(bool), value=np.array(value), tree_start=np.array(starts),
              tree_group=np.full(n_trees, -1), n_features=n_features, n_margins=2, nan_mode=np.array(nan_mode),
              cat_offset=np.array(cat_offset), cat_nwords=np.where(np.array(cat_offset) >= 0, 1, 0),
              cat_words=np.array([0b101101], dtype=np.uint32))
    kw.update(over)
    return TreeEnsemble(**kw)


def many_rows(n, n_features=N_FEATURES, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, -0.7, -0.5, 0.0, 0.2, 0.5, 1.0, 1.5, np.nan], size=(n, n_features))
    X[:, -1] = rng.choice([0.0, 1.0, 2.0, 3.0, 5.0, 40.0, np.nan], size=n)  # category codes
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(n_features)])


@pytest.mark.parametrize("depth, kernels", [(6, ("patterns", "leafsets", "partition")), (7, ("patterns", "partition"))],
                         ids=["64-leaves", "128-leaves"])
def test_deep_trees_many_rows_weights_and_chunks(depth, kernels):
    """Trees with up to 64 leaves (every kernel) and more (no leaf sets); rows in several memory chunks."""
    ens = full_tree_ensemble(depth, n_trees=5)
    X = many_rows(700)
    w = np.random.default_rng(0).uniform(0, 3, len(X))
    w[::7] = 0.0
    grids = {f: np.array([-2.0, -0.6, 0.0, 0.1, 0.7, 2.0, np.nan]) for f in range(N_FEATURES - 1)}
    grids[N_FEATURES - 1] = np.array([0.0, 1.0, 3.0, 5.0, 40.0, np.nan])
    for kernel in kernels:
        whole = C.gather(tm_of(ens), X, w, order=2, kernel=kernel)
        hist = 8 * 5 * 4**depth if kernel == "patterns" else 0  # 5 trees of 2^depth leaves, 2^depth bins each
        chunked = C.gather(tm_of(ens), X, w, order=2, kernel=kernel, memory_budget=whole.nbytes + hist + 20_000)
        np.testing.assert_allclose(chunked.counts, whole.counts, rtol=1e-12)
        for feats in feature_sets(2):
            got = CP.partial_dependence(tm_of(ens), chunked, request(X, feats, grids, [0, 1])).average
            np.testing.assert_allclose(got, brute(ens, X, feats, grids, w), rtol=1e-9, atol=1e-9)


def test_kernels_refuse_trees_they_cannot_take():
    ens = full_tree_ensemble(7, n_trees=1)
    with pytest.raises(PdpxError, match="more than 64 leaves.*'auto' or 'partition'"):
        C.gather(tm_of(ens), many_rows(10), kernel="leafsets")
    deep = full_tree_ensemble(12, n_trees=1)  # 4096 leaves of depth 12: 2^24 histogram bins
    with pytest.raises(PdpxError, match="kernel='patterns': a tree of this model is too deep"):
        C.gather(tm_of(deep), many_rows(10), kernel="patterns")


def test_auto_takes_histograms_for_pairs_and_leaf_sets_for_one_way():
    shallow, mid, deep = full_tree_ensemble(6), full_tree_ensemble(7), full_tree_ensemble(12, n_trees=1)
    budget = 1 << 28
    assert C.choose_kernel(shallow, "auto", budget, order=2) == "patterns"
    assert C.choose_kernel(shallow, "auto", budget, order=1) == "leafsets"
    assert C.choose_kernel(mid, "auto", budget, order=1) == "patterns"  # 128 leaves of depth 7: 2^14 bins
    assert C.choose_kernel(deep, "auto", budget, order=2) == "partition"
    assert C.choose_kernel(shallow, "auto", 1000, order=2) == "leafsets"  # histograms over the budget


# ------------------------------------------------------------------ additive
@pytest.mark.parametrize("kernel", ["patterns", "leafsets", "partition"])
@pytest.mark.parametrize("weighted", [False, True])
def test_counts_of_parts_add_up_to_the_counts_of_the_whole(kernel, weighted):
    ens = full_tree_ensemble(5, n_trees=4, seed=2)
    X = many_rows(500, seed=3)
    w = np.random.default_rng(1).uniform(0, 2, len(X)) if weighted else None
    whole = C.gather(tm_of(ens), X, w, kernel=kernel)
    cut = [0, 170, 171, 320, 500]
    parts = [C.gather(tm_of(ens), X.iloc[a:b], None if w is None else w[a:b], kernel=kernel)
             for a, b in zip(cut[:-1], cut[1:])]
    total = sum(parts)
    assert total.n_rows == whole.n_rows == len(X)
    assert total.total_weight == pytest.approx(whole.total_weight)
    if weighted:
        np.testing.assert_allclose(total.counts, whole.counts, rtol=1e-12)
    else:
        np.testing.assert_array_equal(total.counts, whole.counts)  # counts of rows: integers, exactly
    halves = parts[0] + parts[1] + parts[2] + parts[3]
    np.testing.assert_array_equal(halves.counts, total.counts)


@pytest.mark.parametrize("kernel", ["patterns", "leafsets", "partition"])
@pytest.mark.parametrize("n_trees", [1, 3, 40])
def test_threads_and_row_groups_give_the_same_counts(kernel, n_trees):
    """One tree (rows split among threads, each with its own counts) and many (trees split)."""
    ens = full_tree_ensemble(4, n_trees=n_trees, seed=4)
    X = many_rows(1500, seed=5)
    one = C.gather(tm_of(ens), X, kernel=kernel, n_jobs=1)
    two = C.gather(tm_of(ens), X, kernel=kernel, n_jobs=2)
    np.testing.assert_array_equal(one.counts, two.counts)


def test_parts_split_trees_when_plenty_else_rows():
    assert C.thread_parts(200, 4, 10_000, 1000, 1 << 28) == (4, 1)
    assert C.thread_parts(1, 4, 10_000, 1000, 1 << 28) == (1, 4)
    assert C.thread_parts(1, 4, 10_000, 1000, 8 * 1000 * 2) == (1, 2)  # the budget holds two copies of the counts
    assert C.thread_parts(5, 1, 10_000, 1000, 1 << 28) == (1, 1)


def test_counts_of_other_models_or_orders_do_not_add():
    a = C.gather(tm_of(full_tree_ensemble(3, seed=1)), many_rows(20))
    b = C.gather(tm_of(full_tree_ensemble(3, seed=2)), many_rows(20))
    with pytest.raises(PdpxError, match="different models"):
        a + b
    c = C.gather(tm_of(full_tree_ensemble(3, seed=1)), many_rows(20), order=1)
    with pytest.raises(PdpxError, match="different models \\(or at different orders\\)"):
        a + c


# ------------------------------------------------------------------ refusals
def test_what_counts_do_not_compute_is_refused_with_the_reason():
    ens = full_tree_ensemble(3)
    X = many_rows(30)
    grids = {f: np.array([0.0, 1.0]) for f in range(N_FEATURES)}
    tm = tm_of(ens)
    c1 = C.gather(tm, X, order=1)
    cases = [
        (tm, c1, request(X, [0], grids, [0], kind="both"), "ICE curves need each row"),
        (tm, c1, request(X, [0, 1, 2], grids, [0]), "one or two features, not 3"),
        (tm, c1, request(X, [0, 1], grids, [0]), "gathered at order 1; a 2-way request needs order 2"),
    ]
    logistic = tm_of(full_tree_ensemble(3, n_margins=2, link="softmax"))
    cases.append((logistic, C.gather(logistic, X), request(X, [0], grids, [0]), "softmax link .* response='raw'"))
    for model, counts, req, reason in cases:
        assert CP.unavailable(model, req, counts) is not None
        with pytest.raises(PdpxError, match=reason):
            CP.partial_dependence(model, counts, req)
    assert CP.unavailable(tm, request(X, [0, 1], grids, [0])) is None


def test_counts_of_another_model_are_refused():
    X = many_rows(30)
    grids = {f: np.array([0.0, 1.0]) for f in range(N_FEATURES)}
    other = C.gather(tm_of(full_tree_ensemble(3, seed=9)), X)
    with pytest.raises(PdpxError, match="gathered on another model"):
        CP.partial_dependence(tm_of(full_tree_ensemble(3, seed=1)), other, request(X, [0], grids, [0]))


def test_zero_total_weight_is_an_error():
    ens = full_tree_ensemble(3)
    X = many_rows(10)
    counts = C.gather(tm_of(ens), X, np.zeros(10))
    with pytest.raises(PdpxError, match="zero for every row"):
        CP.partial_dependence(tm_of(ens), counts, request(X, [0], {0: np.array([0.0])}, [0]))


@pytest.mark.parametrize("kwargs, message", [
    (dict(order=3), "order=3: .* pass 1 or 2"),
    (dict(kernel="fast"), "kernel='fast': expected one of"),
    (dict(sample_weight=np.ones(3)), "sample_weight has 3 entries but X has 10 rows"),
    (dict(memory_budget=1000), "take .* more than the memory budget .* order=1"),
])
def test_gather_arguments_are_checked(kwargs, message):
    with pytest.raises(PdpxError, match=message):
        C.gather(tm_of(full_tree_ensemble(4)), many_rows(10), **kwargs)


def test_counts_size_is_known_before_gathering():
    ens = full_tree_ensemble(4, n_trees=2)  # paths of at most 4 distinct features
    lay = C.count_layout(ens, 2)
    leaves = np.flatnonzero(ens.left < 0)
    p = lay.n_pf[leaves]
    assert C.counts_nbytes(tm_of(ens), 2) == 8 * int(np.sum(1 + p + p * (p - 1) // 2))
    assert C.counts_nbytes(tm_of(ens), 1) == 8 * int(np.sum(1 + p))


# ------------------------------------------------------------------ the threshold grid
def representative(grid, v, comparison):
    """The grid point standing for value ``v`` as documented: for ``<=`` the first point at or above v (the last
    point, above the largest threshold, for larger values), for ``<`` the last point at or below it."""
    if comparison == "<=":
        above = grid[grid >= v]
        return above[0] if above.size else grid[-1]
    below = grid[grid <= v]
    return below[-1] if below.size else grid[0]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(ens=ensembles(max_depth=4), feature=st.integers(0, N_FEATURES - 2),
       values=st.lists(st.floats(-4, 8, allow_nan=False, width=32), min_size=1, max_size=20))
def test_threshold_grid_has_one_point_per_step(ens, feature, values):
    cat = np.any((ens.left >= 0) & (ens.feature == feature) & (ens.cat_offset >= 0))
    if cat:
        with pytest.raises(PdpxError, match="category sets"):
            threshold_grid(tm_of(ens), feature)
        return
    grid = threshold_grid(tm_of(ens), feature)
    nodes = np.flatnonzero((ens.left >= 0) & (ens.feature == feature))
    zero_missing = np.any(ens.nan_mode[nodes] == ZERO_OR_NAN_MISSING)
    if nodes.size == 0 or not (np.any(np.isfinite(ens.threshold[nodes])) or zero_missing):
        assert grid.size == 0
        return
    assert np.all(np.diff(grid) > 0)
    route = ens.goes_left_many(nodes, grid)
    # neighbouring points lie on different steps: some split routes them apart
    assert np.all(np.any(route[:, 1:] != route[:, :-1], axis=0))
    t = ens.threshold[nodes][np.isfinite(ens.threshold[nodes])]
    probe = np.concatenate([values, t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), [0.0, 1e-36, -1e-36]])
    if ens.float32_input:
        probe = probe.astype(np.float32).astype(np.float64)  # the values the model compares
    # every value goes the way some point goes at every split on the feature: each step's value is on the grid
    seen = {tuple(c) for c in route.T}
    assert all(tuple(c) in seen for c in ens.goes_left_many(nodes, probe).T)
    if not np.any(ens.nan_mode[nodes] == 2):  # zero-as-missing adds zero's own step; otherwise, as documented
        rep = np.array([representative(grid, v, ens.comparison) for v in probe])
        np.testing.assert_array_equal(ens.goes_left_many(nodes, probe), ens.goes_left_many(nodes, rep))


def test_threshold_grid_gives_zero_its_own_step_where_zero_is_missing():
    """LightGBM's zero-as-missing: zero goes the missing way, its neighbours by the threshold."""
    ens = TreeEnsemble(left=np.array([1, -1, -1]), right=np.array([2, -1, -1]), feature=np.array([0, -1, -1]),
                       threshold=np.array([1.5, 0, 0]), missing_left=np.array([False] * 3), nan_mode=np.array([2, 0, 0]),
                       value=np.array([0.0, 1.0, 2.0]), tree_start=np.array([0, 3]), tree_group=np.array([0]),
                       n_features=1)
    grid = threshold_grid(tm_of(ens), 0)
    assert ens.goes_left(0, grid).tolist() == [True, False, True, False]
    assert grid[1] == 0.0 and grid[2] == 1.5


def test_threshold_grid_in_float32_is_the_largest_float32_going_left():
    """A float64 threshold between two float32 values, compared in float32 with <=: the point is the float32
    just below it (rounding the threshold itself to float32 would go the other way)."""
    t = float(np.float32(0.3)) + 1e-9  # above float32(0.3), below the next float32
    ens = TreeEnsemble(left=np.array([1, -1, -1]), right=np.array([2, -1, -1]), feature=np.array([0, -1, -1]),
                       threshold=np.array([t, 0, 0]), missing_left=np.array([False] * 3),
                       value=np.array([0.0, 1.0, 2.0]), tree_start=np.array([0, 3]), tree_group=np.array([0]),
                       n_features=1, float32_input=True)
    grid = threshold_grid(tm_of(ens), 0)
    assert grid[0] == float(np.float32(0.3))
    assert grid[1] == float(np.nextafter(np.float32(0.3), np.float32(1)))
    assert ens.goes_left(0, np.array(grid)).tolist() == [True, False]


def test_threshold_grid_of_a_strict_comparison_starts_below_the_smallest_threshold():
    ens = TreeEnsemble(left=np.array([1, -1, 3, -1, -1]), right=np.array([2, -1, 4, -1, -1]),
                       feature=np.array([0, -1, 0, -1, -1]), threshold=np.array([1.0, 0, 2.0, 0, 0]),
                       missing_left=np.array([False] * 5), value=np.array([0.0, 1.0, 0.0, 2.0, 3.0]),
                       tree_start=np.array([0, 5]), tree_group=np.array([0]), n_features=2, comparison="<")
    assert threshold_grid(tm_of(ens), 0).tolist() == [np.nextafter(1.0, -np.inf), 1.0, 2.0]
    assert threshold_grid(tm_of(ens), 1).size == 0  # never split on: a flat curve


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ens=ensembles(max_depth=6))
def test_the_kernel_choice_reads_the_histogram_sizes_the_kernel_uses(ens):
    """``kernel_shape`` (numpy, nothing compiled) gives the bins the patterns kernel lays out (leaves of one
    parent sharing a histogram) and the leaves per tree."""
    from pdpx.plugins.trees.counts_patterns import parents_first, pattern_layout
    from pdpx.plugins.trees.prep import static_layout

    st = static_layout(ens)
    topo = parents_first(ens.tree_start, ens.left, ens.right, int(st.max_tree_nodes))
    hist_base, read_base, read_flip, depth, bins, total = pattern_layout(ens.tree_start, ens.left, ens.right, topo)
    assert C.kernel_shape(ens) == (int(bins.max()), int(total), int(st.leaves_per_tree.max()))
    leaves = ens.left < 0
    assert np.all(read_base[leaves] >= 0) and np.all(read_base[~leaves] < 0)
    # every leaf reads 2^depth bins of its own, or shares its parent's 2^depth with its sibling
    shared = read_base[leaves][np.flatnonzero(read_flip[leaves])]
    assert len(np.unique(read_base[leaves])) == leaves.sum() - len(shared)
