"""numba kernels of the one-pass pattern counts (:mod:`.counts`, :mod:`.counts_pd`).

For a leaf ``L`` and a row, the *failing set* ``F(row, L)`` is the set of
distinct features whose condition on ``L``'s path the row does not satisfy. A
gather adds each row's weight to ``count[L, F]`` for every leaf with
``|F| <= order`` (order 1 or 2). A leaf whose path has ``p`` distinct features
has ``1 + p`` slots (order 1) or ``1 + p + p (p - 1) / 2`` (order 2):

* slot ``0``: ``F = {}`` (the row reaches ``L`` on its own values);
* slot ``1 + o``: ``F = {feature of ordinal o}``;
* slot ``1 + p + hi (hi - 1) / 2 + lo``: ``F = {ordinals lo < hi}``.

A feature's *ordinal* in a leaf is its rank among the distinct features of the
leaf's path in order of first appearance from the root. It is the same for
every leaf below the node where the feature first appears, so the ordinal of a
node's feature (``ford``) can be carried down a walk instead of looked up.

Two gather kernels, with the routing of :mod:`.routing` (``go_left_packed``, and
the plain numeric test on ``thr_lt`` / ``miss_eff`` of :class:`.prep.Static`):

* :func:`gather_leafsets` (trees of at most 64 leaves): per block of 64 rows and
  tree, the leaves each row *passes* on each feature's conditions as one 64-bit
  word per (row, feature) (one vectorised compare per node, as
  :mod:`.leafsets`); the leaves with failing set ``{a}`` or ``{a, b}`` are then
  a few ANDs of those words;
* :func:`gather_partition` (any tree): rows go down each tree together as
  segments of an index array (as :mod:`.partition`), each segment carrying its
  failing set; at a split on a feature not yet in the set, the segment is
  partitioned and each part also goes the other way with the feature added.

Both run in parallel over *parts*: a part takes every ``n_tree_groups``-th tree
and a contiguous range of rows, and writes counts of its row group (its trees'
slots are its own), so the per-thread copies exist only when rows are split.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ...core.compiler import njit
from .kernels import load_block
from .partition import segment_weight, split_rows
from .records import Case, KernelRecord
from .routing import BLOCK, keep_block, keep_special, set_block


@njit(cache=True, inline="always")
def slot_size(p, order):
    """Slots of a leaf with ``p`` distinct path features at ``order``."""
    if order >= 2:
        return 1 + p + p * (p - 1) // 2
    return 1 + p


@njit(cache=True, inline="always")
def pair_slot(p, oa, ob):
    """Offset within a leaf's slots of ``F = {ordinals oa, ob}`` (``oa != ob``)."""
    a = np.int64(oa)
    b = np.int64(ob)
    lo = min(a, b)
    hi = max(a, b)
    return 1 + p + hi * (hi - 1) // 2 + lo


@njit(cache=True, inline="always")
def _push_path(stack, s_m, s_depth, sp, node, m, depth):
    """Push ``node`` with its path's ``m`` distinct features and its depth; returns the new stack size."""
    stack[sp] = node
    s_m[sp] = m
    s_depth[sp] = depth
    return sp + 1


@njit(cache=True)
def count_layout(tree_start, left, right, feature, max_tree_nodes, order):
    """The slot layout of an ensemble at ``order``.

    Returns
    -------
    ford : (n_nodes,) int64, ordinal of an internal node's feature on its path (-1 at leaves)
    n_pf : (n_nodes,) int64, distinct path features of a leaf (0 elsewhere)
    pf_ptr, pf : a leaf's path features (in ordinal order) are ``pf[pf_ptr[L]: pf_ptr[L] + n_pf[L]]``
    slot_base : (n_nodes,) int64, first slot of a leaf (-1 elsewhere)
    n_slots : int
    max_depth : int, the deepest leaf's depth
    """
    n_nodes = left.shape[0]
    ford = np.full(n_nodes, -1, dtype=np.int64)
    n_pf = np.zeros(n_nodes, dtype=np.int64)
    pf_ptr = np.zeros(n_nodes, dtype=np.int64)
    slot_base = np.full(n_nodes, -1, dtype=np.int64)
    stack = np.empty(max_tree_nodes + 1, dtype=np.int64)
    s_m = np.empty(max_tree_nodes + 1, dtype=np.int64)
    s_depth = np.empty(max_tree_nodes + 1, dtype=np.int64)
    dist = np.empty(max_tree_nodes + 1, dtype=np.int64)
    total_pf = 0
    n_slots = 0
    max_depth = 0
    for pass_ in range(2):  # pass 0 sizes pf, pass 1 fills it
        pf = np.empty(total_pf, dtype=np.int64)
        used = 0
        for t in range(tree_start.shape[0] - 1):
            sp = _push_path(stack, s_m, s_depth, 0, tree_start[t], 0, 0)
            while sp > 0:
                sp -= 1
                node = stack[sp]
                m = s_m[sp]
                depth = s_depth[sp]
                if left[node] < 0:
                    if pass_ == 0:
                        total_pf += m
                        if depth > max_depth:
                            max_depth = depth
                    else:
                        n_pf[node] = m
                        pf_ptr[node] = used
                        for k in range(m):
                            pf[used + k] = dist[k]
                        used += m
                        slot_base[node] = n_slots
                        n_slots += slot_size(m, order)
                    continue
                f = feature[node]
                o = m
                for k in range(m):
                    if dist[k] == f:
                        o = k
                        break
                if o == m:
                    dist[m] = f
                    m2 = m + 1
                else:
                    m2 = m
                ford[node] = o
                sp = _push_path(stack, s_m, s_depth, sp, right[node], m2, depth + 1)
                sp = _push_path(stack, s_m, s_depth, sp, left[node], m2, depth + 1)
    return ford, n_pf, pf_ptr, pf, slot_base, n_slots, max_depth


@njit(cache=True)
def leafset_locals(n_trees, num_ptr, num_feat, spec_ptr, spec_node, feature, slot_node, n_pf, pf_ptr, pf,
                   n_features):
    """Tree-local feature numbers for the leaf-set gather.

    Returns ``num_lf`` / ``spec_lf`` (local feature of each numeric / special node
    of ``leafsets.leafset_layout``), ``q`` (distinct features per tree) and
    ``lord`` (n_trees * 64, max q) int8: the ordinal of local feature ``a`` in
    the path of leaf slot ``j`` of tree ``t`` at ``[t * 64 + j, a]`` (-1: not on it).
    """
    local = np.full(n_features, -1, dtype=np.int64)
    num_lf = np.empty(num_feat.shape[0], dtype=np.int64)
    spec_lf = np.empty(spec_node.shape[0], dtype=np.int64)
    q = np.zeros(n_trees, dtype=np.int64)
    tree_feats = np.empty(n_features, dtype=np.int64)
    q_max = 1
    for t in range(n_trees):
        qt = 0
        for k in range(num_ptr[t], num_ptr[t + 1]):
            f = num_feat[k]
            if local[f] < 0:
                local[f] = qt
                tree_feats[qt] = f
                qt += 1
            num_lf[k] = local[f]
        for k in range(spec_ptr[t], spec_ptr[t + 1]):
            f = feature[spec_node[k]]
            if local[f] < 0:
                local[f] = qt
                tree_feats[qt] = f
                qt += 1
            spec_lf[k] = local[f]
        q[t] = qt
        if qt > q_max:
            q_max = qt
        for a in range(qt):
            local[tree_feats[a]] = -1
    lord = np.full((n_trees * 64, q_max), -1, dtype=np.int8)
    for t in range(n_trees):
        qt = 0
        for k in range(num_ptr[t], num_ptr[t + 1]):
            f = num_feat[k]
            if local[f] < 0:
                local[f] = num_lf[k]
                tree_feats[num_lf[k]] = f
        for k in range(spec_ptr[t], spec_ptr[t + 1]):
            f = feature[spec_node[k]]
            if local[f] < 0:
                local[f] = spec_lf[k]
                tree_feats[spec_lf[k]] = f
        for j in range(64):
            leaf = slot_node[t * 64 + j]
            if leaf < 0:
                continue
            for o in range(n_pf[leaf]):
                lord[t * 64 + j, local[pf[pf_ptr[leaf] + o]]] = o
        for a in range(q[t]):
            local[tree_feats[a]] = -1
    return num_lf, spec_lf, q, lord


@njit(cache=True)
def leafset_slots(slot_node, slot_base, n_pf, lord):
    """Per leaf slot ``t * 64 + j``: its first count slot, its number of path features, and the count slot of
    each tree-local feature's failing set ``{a}`` (``s1``, -1 where ``a`` is not on the leaf's path)."""
    n = slot_node.shape[0]
    leaf_base = np.full(n, -1, dtype=np.int64)
    leaf_p = np.zeros(n, dtype=np.int64)
    s1 = np.full(lord.shape, -1, dtype=np.int64)
    for i in range(n):
        leaf = slot_node[i]
        if leaf < 0:
            continue
        leaf_base[i] = slot_base[leaf]
        leaf_p[i] = n_pf[leaf]
        for a in range(lord.shape[1]):
            if lord[i, a] >= 0:
                s1[i, a] = slot_base[leaf] + 1 + np.int64(lord[i, a])
    return leaf_base, leaf_p, s1


def leafset_pairs(q, lfeat, pairs):
    """(``pair_last``, ``pair_ok``) of :func:`gather_leafsets`: which tree-local feature pairs ``a < b`` of each
    tree to count at order 2. ``lfeat[t, a]``: the feature (column) of tree ``t``'s local feature ``a``;
    ``pairs``: None (every pair) or the (column, column) pairs to count."""
    n_trees, q_max = lfeat.shape
    if pairs is None:
        ok = np.ones((n_trees, q_max, q_max), dtype=np.bool_)
    else:
        n_features = int(max([lfeat.max(initial=-1)] + [max(p) for p in pairs])) + 1
        wanted = np.zeros((n_features + 1, n_features + 1), dtype=np.bool_)  # the last row / column: no feature
        for fa, fb in pairs:
            wanted[fa, fb] = wanted[fb, fa] = True
        f = np.where(lfeat >= 0, lfeat, n_features)
        ok = wanted[f[:, :, None], f[:, None, :]]
    a_idx = np.arange(q_max)
    ok &= (a_idx[:, None] < a_idx[None, :])[None]  # a < b
    ok &= (a_idx[None, :] < np.asarray(q)[:, None])[:, None, :]  # b a local feature of the tree
    last = np.where(ok.any(axis=2), q_max - 1 - np.argmax(ok[:, :, ::-1], axis=2), -1).astype(np.int64)
    return last, np.ascontiguousarray(ok)


@njit(cache=True, inline="always")
def word_buffers(nf, q_max):
    """The scratch of :func:`leaf_words` for rows of ``nf`` columns and trees of at most ``q_max`` local features:
    the block ``Xb`` and the words ``P``, ``pre``, ``suf``."""
    Xb = np.empty((nf, BLOCK))
    P = np.empty((q_max, BLOCK), dtype=np.uint64)
    pre = np.empty((q_max + 1, BLOCK), dtype=np.uint64)
    suf = np.empty((q_max + 1, BLOCK), dtype=np.uint64)
    return Xb, P, pre, suf


@njit(cache=True, inline="always")
def leaf_words(t, Xb, X, c0, nb, init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r, num_lf, spec_ptr,
               spec_node, spec_keep_l, spec_keep_r, spec_lf, qt, routing, P, pre, suf):
    """Tree ``t``'s leaf words for the block of rows ``c0 : c0 + nb`` of X (columns in ``Xb``, as ``load_block``).

    ``P[a, r]``: the leaves whose conditions on tree-local feature ``a`` (of ``qt``) row ``r`` passes;
    ``pre[a]`` / ``suf[a]``: their ANDs over the features before ``a`` / from ``a`` on (``pre[qt]``: the leaf
    the row reaches; ``pre[a] & suf[a + 1]``: the leaves it passes on every feature but ``a``). Numeric nodes
    are one vectorised compare per node over the block, a feature's first node writing its word outright (no fill
    to AND into first); nodes with another rule are routed row by row (:func:`.routing.keep_special`) once every
    word holds at least the tree's leaves.
    """
    start = init[t]
    seen = np.uint64(0)  # the local features a node has written: a feature's first node sets its word, no fill first
    for k in range(num_ptr[t], num_ptr[t + 1]):
        bit = np.uint64(1) << np.uint64(num_lf[k])
        if seen & bit:
            keep_block(P[num_lf[k]], Xb, num_feat[k], num_thr[k], num_miss[k], num_keep_l[k], num_keep_r[k])
        else:
            set_block(P[num_lf[k]], start, Xb, num_feat[k], num_thr[k], num_miss[k], num_keep_l[k], num_keep_r[k])
            seen |= bit
    for a in range(qt):
        if not (seen >> np.uint64(a)) & np.uint64(1):
            for r in range(BLOCK):
                P[a, r] = start
    for k in range(spec_ptr[t], spec_ptr[t + 1]):
        keep_special(P[spec_lf[k]], X, c0, nb, spec_node[k], routing, spec_keep_l[k], spec_keep_r[k])
    for r in range(BLOCK):
        pre[0, r] = start
        suf[qt, r] = start
    for a in range(qt):
        for r in range(BLOCK):
            pre[a + 1, r] = pre[a, r] & P[a, r]
    for a in range(qt - 1, -1, -1):
        for r in range(BLOCK):
            suf[a, r] = suf[a + 1, r] & P[a, r]


@njit(cache=True, inline="always")
def load_weighted(X, row_weight, c0, r1, Xb, w):
    """The block of rows ``c0 : min(r1, c0 + BLOCK)`` of X into ``Xb`` (``load_block``) and their weights into
    ``w``; returns the number of rows."""
    c1 = min(r1, c0 + BLOCK)
    load_block(X, c0, c1, Xb)
    for r in range(c1 - c0):
        w[r] = row_weight[c0 + r]
    return c1 - c0


@njit(cache=True, inline="always")
def add_failing(cnt, w, x, y, z, nb, mrow, mbits, base, a, b, s1, leaf_base, leaf_p, lord):
    """Add each row's weight ``w[r]`` to the count slot of every leaf in its word ``x[r] & ~y[r] & z[r]``: the
    failing set ``{a}`` (``b < 0``, slot ``s1``) or ``{a, b}`` of tree-local features, leaf ``j`` of the tree
    at ``base + j``. The rows with a leaf are gathered first without a branch (``mrow`` / ``mbits``: scratch)."""
    one = np.uint64(1)
    m = 0
    for r in range(nb):
        bits = x[r] & ~y[r] & z[r]
        mrow[m] = r
        mbits[m] = bits
        m += bits != 0
    for k in range(m):
        r = mrow[k]
        bits = mbits[k]
        while bits:
            i = base + trailing_zeros(bits)
            bits &= bits - one
            if b < 0:
                cnt[s1[i, a]] += w[r]
            else:
                cnt[leaf_base[i] + pair_slot(leaf_p[i], lord[i, a], lord[i, b])] += w[r]


@njit(cache=True, nogil=True)
def gather_leafsets(X, row_weight, order, r0, r1, tg, n_tree_groups, masks, num_lf, spec_lf, q, leaf_base, leaf_p,
                    s1, lord, routing, pair_last, pair_ok, cnt):
    """Add to ``cnt`` (n_slots,) the counts of rows ``r0:r1`` of X (``r0`` a multiple of ``BLOCK``) on trees
    ``tg, tg + n_tree_groups, ...`` of at most 64 leaves (see the module docstring); ``masks``: the trees'
    :class:`.leafsets.NodeMasks`, ``routing``: :class:`.prep.Routing`.

    At order 2, only the failing sets ``{a, b}`` (tree-local features ``a < b`` of tree ``t``) with
    ``pair_ok[t, a, b]`` are counted, and none with ``b > pair_last[t, a]`` (:func:`leafset_pairs`: every
    pair, or only the feature pairs asked for; the other pair slots stay 0).

    Per block of 64 rows and tree: ``P[a, r]``, the leaves whose conditions on
    local feature ``a`` row ``r`` passes; ``pre`` / ``suf`` their running ANDs
    from either end, so the leaves failing exactly ``{a}`` are
    ``pre[a] & ~P[a] & suf[a + 1]``. Every step but the final scatter of counts
    is a loop over the block's rows.
    """
    (init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r, spec_ptr, spec_node, spec_keep_l,
     spec_keep_r) = masks
    n_trees = init.shape[0]
    Xb, P, pre, suf = word_buffers(X.shape[1], lord.shape[1])
    xa = np.empty(BLOCK, dtype=np.uint64)
    mbits = np.empty(BLOCK, dtype=np.uint64)
    mrow = np.empty(BLOCK, dtype=np.int64)
    w = np.empty(BLOCK)
    for c0 in range(r0, r1, BLOCK):
        nb = load_weighted(X, row_weight, c0, r1, Xb, w)
        for t in range(tg, n_trees, n_tree_groups):
            qt = q[t]
            leaf_words(t, Xb, X, c0, nb, init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r, num_lf,
                       spec_ptr, spec_node, spec_keep_l, spec_keep_r, spec_lf, qt, routing, P, pre, suf)
            base = t * 64
            for r in range(nb):  # the leaf each row reaches on its own values
                cnt[leaf_base[base + trailing_zeros(pre[qt, r])]] += w[r]
            for a in range(qt):
                add_failing(cnt, w, pre[a], P[a], suf[a + 1], nb, mrow, mbits, base, a, -1, s1, leaf_base, leaf_p,
                            lord)
            if order < 2:
                continue
            for a in range(qt - 1):
                last = pair_last[t, a]
                if last <= a:
                    continue
                alive = np.uint64(0)
                for r in range(BLOCK):
                    xa[r] = pre[a, r] & ~P[a, r]  # passing every feature before a, failing a
                    alive |= xa[r]
                b = a + 1
                while alive and b <= last:
                    Pb = P[b]
                    if pair_ok[t, a, b]:  # the rows failing exactly {a, b} somewhere, without a branch
                        add_failing(cnt, w, xa, Pb, suf[b + 1], nb, mrow, mbits, base, a, b, s1, leaf_base, leaf_p,
                                    lord)
                    # (a pair not asked for: rows still have to pass b for later ones)
                    alive = np.uint64(0)
                    for r in range(BLOCK):
                        xa[r] &= Pb[r]
                        alive |= xa[r]
                    b += 1


@njit(cache=True, inline="always")
def _push(sn, sa, sb, so1, so2, sp, node, a, b, o1, o2):
    sn[sp] = node
    sa[sp] = a
    sb[sp] = b
    so1[sp] = o1
    so2[sp] = o2
    return sp + 1


@njit(cache=True, nogil=True)
def gather_partition(Xt, has_nan, row_weight, unit, order, r0, r1, tg, n_tree_groups, tree_start, max_depth, ford,
                     slot_base, n_pf, routing, cnt):
    """Add to ``cnt`` (n_slots,) the counts of rows ``r0:r1`` (columns of ``Xt``) on trees ``tg, tg +
    n_tree_groups, ...`` of any size; ``has_nan[f]``: whether column ``f`` holds a NaN (:func:`.partition.nan_columns`);
    ``unit`` > 0: every row weighs ``unit`` (:func:`.partition.segment_weight`); ``routing``: :class:`.prep.Routing`.

    A stack entry is (node, segment ``idx[a:b]``, failing set as ordinals
    ``o1 < o2``, -1 for none). Segments handed to two entries are permuted only
    within themselves by either, so each still holds its rows when popped.
    """
    nodes, thr_lt, miss_eff = routing[0], routing[1], routing[2]
    n_trees = tree_start.shape[0] - 1
    cap = 3 * max_depth + 4
    if r1 > r0:
        idx = np.empty(r1 - r0, dtype=np.int32)
        tmp = np.empty(r1 - r0, dtype=np.int32)
        sn = np.empty(cap, dtype=np.int64)
        sa = np.empty(cap, dtype=np.int64)
        sb = np.empty(cap, dtype=np.int64)
        so1 = np.empty(cap, dtype=np.int64)
        so2 = np.empty(cap, dtype=np.int64)
        for t in range(tg, n_trees, n_tree_groups):
            for i in range(r1 - r0):
                idx[i] = r0 + i
            sp = _push(sn, sa, sb, so1, so2, 0, tree_start[t], 0, r1 - r0, -1, -1)
            while sp > 0:
                sp -= 1
                node = sn[sp]
                a = sa[sp]
                b = sb[sp]
                o1 = so1[sp]
                o2 = so2[sp]
                lc = nodes[node, 0]
                if lc < 0:
                    c = segment_weight(idx, a, b, row_weight, unit)
                    s = slot_base[node]
                    if o2 >= 0:
                        s += pair_slot(n_pf[node], o1, o2)
                    elif o1 >= 0:
                        s += 1 + o1
                    cnt[s] += c
                    continue
                rc = nodes[node, 1]
                o = ford[node]
                if o == o1 or o == o2:  # the set already fails this feature: both ways, rows intact
                    sp = _push(sn, sa, sb, so1, so2, sp, rc, a, b, o1, o2)
                    sp = _push(sn, sa, sb, so1, so2, sp, lc, a, b, o1, o2)
                    continue
                m = split_rows(idx, tmp, a, b, Xt, has_nan, node, nodes, thr_lt, miss_eff, routing)
                size = 0 if o1 < 0 else (1 if o2 < 0 else 2)
                if size < order:
                    n1 = o if o1 < 0 else min(o, o1)
                    n2 = -1 if o1 < 0 else max(o, o1)
                    if m > a:
                        sp = _push(sn, sa, sb, so1, so2, sp, rc, a, m, n1, n2)
                    if m < b:
                        sp = _push(sn, sa, sb, so1, so2, sp, lc, m, b, n1, n2)
                if m < b:
                    sp = _push(sn, sa, sb, so1, so2, sp, rc, m, b, o1, o2)
                if m > a:
                    sp = _push(sn, sa, sb, so1, so2, sp, lc, a, m, o1, o2)


@njit(cache=True)
def subset_weights(slot_base, n_pf, pf_ptr, pf, counts, fa, fb):
    """Per node: the weight of rows whose failing set at that leaf lies within ``{fa, fb}`` (fb = -1: ``{fa}``).

    Those are the rows that reach the leaf exactly when a grid point passes the
    leaf's conditions on ``fa`` and ``fb``; zero at internal nodes.
    """
    n_nodes = slot_base.shape[0]
    W = np.zeros(n_nodes)
    for node in range(n_nodes):
        s = slot_base[node]
        if s < 0:
            continue
        p = n_pf[node]
        oa = -1
        ob = -1
        for k in range(p):
            f = pf[pf_ptr[node] + k]
            if f == fa:
                oa = k
            elif f == fb:
                ob = k
        w = counts[s]
        if oa >= 0:
            w += counts[s + 1 + oa]
        if ob >= 0:
            w += counts[s + 1 + ob]
        if oa >= 0 and ob >= 0:
            w += counts[s + pair_slot(p, oa, ob)]
        W[node] = w
    return W


def kernel_shape(ens) -> tuple[int, int, int]:
    """(most histogram bins of a tree, total bins, most leaves of a tree): what the gather kernels' records
    (:data:`RECORDS`) read.

    numpy only (nothing is compiled), so that the planner (:mod:`.plan`) can tell which kernels a gather will run before
    any of them is compiled. A leaf at depth ``d`` takes ``2^d`` bins, two leaves of one parent share theirs
    (:func:`.counts_patterns.pattern_layout`).
    """
    def build():
        left, right = ens.left, ens.right
        depth = np.zeros(ens.n_nodes, dtype=np.int64)
        frontier = np.asarray(ens.tree_start[:-1], dtype=np.int64)
        d = 0
        while frontier.size:
            inner = frontier[left[frontier] >= 0]
            frontier = np.concatenate([left[inner], right[inner]])
            d += 1
            depth[frontier] = d
        is_leaf = left < 0
        lc, rc = np.maximum(left, 0), np.maximum(right, 0)
        twin = ~is_leaf & (left[lc] < 0) & (left[rc] < 0)  # both children leaves: one histogram for the two
        twin_leaf = np.zeros(ens.n_nodes, dtype=bool)
        twin_leaf[left[twin]] = True
        twin_leaf[right[twin]] = True
        own = (is_leaf & ~twin_leaf) | twin
        tree_of = np.repeat(np.arange(ens.n_trees), np.diff(ens.tree_start))
        bins = np.zeros(ens.n_trees, dtype=np.float64)
        np.add.at(bins, tree_of[own], np.ldexp(1.0, np.minimum(depth[own] + twin[own], 62)))
        leaves = np.bincount(tree_of[is_leaf], minlength=ens.n_trees)
        big = float(1 << 62)
        return int(min(bins.max(), big)), int(min(bins.sum(), big)), int(leaves.max())

    return ens.derived("pdpx.plugins.trees.counts.shape", build)


def path_features(ens) -> np.ndarray:
    """The number of distinct features on the path of every node of ``ens`` (a leaf's ``n_pf`` of
    :func:`count_layout`), read with numpy only, so that the planner knows the counts' size
    (:func:`n_slots`) before any kernel is compiled; kept with the ensemble."""
    def build():
        left, right, feature = ens.left, ens.right, ens.feature
        n = ens.n_nodes
        inner = np.flatnonzero(left >= 0)
        parent = np.full(n, -1, dtype=np.int64)
        parent[left[inner]] = inner
        parent[right[inner]] = inner
        # a node adds a feature to its subtree's paths when no ancestor splits on it
        new = np.zeros(n, dtype=np.int64)
        todo, anc = inner, parent[inner]
        while todo.size:
            live = anc >= 0
            todo, anc = todo[live], anc[live]
            fresh = feature[anc] != feature[todo]
            todo, anc = todo[fresh], parent[anc[fresh]]
            if not todo.size:
                break
            done = anc < 0
            new[todo[done]] = 1
            todo, anc = todo[~done], anc[~done]
        roots = inner[parent[inner] < 0]
        new[roots] = 1
        # a node's count: the new features among its ancestors
        out = np.zeros(n, dtype=np.int64)
        nodes, anc = np.arange(n, dtype=np.int64), parent.copy()
        while nodes.size:
            live = anc >= 0
            nodes, anc = nodes[live], anc[live]
            out[nodes] += new[anc]
            anc = parent[anc]
        return out

    return ens.derived("pdpx.plugins.trees.counts.path_features", build)


def n_slots(ens, order: int) -> int:
    """The slots of the counts of ``ens`` at ``order`` (as :func:`count_layout` numbers them), numpy only."""
    p = path_features(ens)[ens.left < 0]
    per_leaf = 1 + p + (p * (p - 1) // 2 if order >= 2 else 0)
    return int(per_leaf.sum())


def _leafsets_fit(ens, budget, order) -> bool:
    return kernel_shape(ens)[2] <= 64


#: This module's kernels (:mod:`.records`): the slot layout and the subset weights every gather's PD reads, the
#: tree-local feature numbers (shared with the averaged curves), and the ``leafsets`` and ``partition`` gathers.
RECORDS = (
    KernelRecord("counts.layout", "counts_kernels", "shared", {"count_layout": 1.2}, family="counts"),
    KernelRecord("counts", "counts_kernels", "counts", {"subset_weights": 0.6}, family="counts",
                 # the PD from counts: regions as intervals (sorted numeric grids) or grid masks, either
                 uses=lambda plan: ("counts.layout", "intervals", "masks", "scatter")),
    KernelRecord("counts.locals", "counts_kernels", "shared", {"leafset_locals": 0.8}, family="counts"),
    KernelRecord("counts.leafsets", "counts_kernels", "counts", {"leafset_slots": 0.4, "gather_leafsets": 2.6},
                 fits=_leafsets_fit, uses=lambda plan: ("leafsets.layout", "counts.locals"), family="counts",
                 cases=(Case(run="counts", kernel="leafsets"),)),
    KernelRecord("counts.partition", "counts_kernels", "counts", {"gather_partition": 1.8},
                 uses=lambda plan: ("partition.nan",), family="counts",
                 cases=(Case(run="counts", kernel="partition"),)),
)
