"""Leaf-set kernels for ``exact`` on shallow trees (at most 64 reachable leaves per tree).

Walking one row down a tree is a chain of loads that depend on each other and of
branches the processor cannot predict, so a walk costs tens of nanoseconds
however small the tree. For trees whose leaves fit in one 64-bit word there is a
faster way to find the leaves a row reaches, in the spirit of QuickScorer
(Lucchese et al., SIGIR 2015):

* Number the leaves that some grid cell reaches (the *reached* leaves) from left
  to right. The leaves below any node are then a run of consecutive bits.
* A row starts with every reached leaf in its set. At each internal node that
  splits on a non-target feature, the row goes one way, so the leaves of the
  other child's subtree are removed: ``set &= keep_if_left`` or
  ``set &= keep_if_right``. Splits on target features remove nothing (the grid
  goes both ways there, and the leaf boxes say which cells reach which leaf).
* What is left is exactly the set of leaves the walk would visit.

The node tests do not depend on each other, so they run as a plain loop over the
nodes of a tree, and for each node as a vectorised loop over a block of 64 rows
(one column of the block, one threshold): no data-dependent branches, no chains
of loads. Each reached leaf then adds its value to its grid box through a
precomputed list of difference-array *corners* (``cpos``, ``cval``: flat
position and signed, tree-weighted value), per margin.

Two kernels use the sets:

* :func:`leafset_counts` (a response linear in the trees, average only): per
  leaf, the weighted number of rows that reach it; the corners are then added
  once per leaf, not once per row.
* :func:`leafset_rows` (ICE, or a non-linear link): per row, the difference array
  of its margins, integrated, linked and reduced to the requested outputs inside
  the kernel (``finish_row``), so only the output (the average, and ICE when
  asked) is ever allocated, not a margins array per row.

Leaf ids here are slots: leaf ``j`` of tree ``t`` is id ``t * 64 + j``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import trailing_zeros

from .kernels import F_SPECIAL, finish_row, go_left_packed, scatter_boxes

MAX_LEAVES = 64
BLOCK = 64  # rows per block: one column of a block is one vectorised compare per node


@njit(cache=True)
def leafset_layout(tree_start, left, right, feature, flags, thr_lt, miss_eff, tgt, reach):
    """Leaf numbering and node masks for every tree, or ``ok=False`` when a tree has > 64 reached leaves.

    Returns
    -------
    ok : bool
    init : (n_trees,) uint64, the reached leaves of each tree
    slot_node : (n_trees * 64,) int64, the node of leaf ``j`` of tree ``t`` at ``t * 64 + j``
    num_ptr : (n_trees + 1,) int64, numeric non-target nodes of tree ``t``: ``num_ptr[t]:num_ptr[t + 1]``
    num_feat, num_thr, num_miss, num_keep_l, num_keep_r : per numeric node: feature, threshold
        for a strict ``x < thr`` test and where NaN goes (True = left), as ``thr_lt`` and
        ``miss_eff`` of ``prep.Prepared``, and the leaves kept when the row goes
        left / right
    spec_ptr, spec_node, spec_keep_l, spec_keep_r : the same for nodes with a rule the
        vectorised test does not express (categorical sets, zero-as-missing): tested one
        row at a time with the general routing rule
    """
    n_nodes = left.shape[0]
    n_trees = tree_start.shape[0] - 1
    init = np.zeros(n_trees, dtype=np.uint64)
    slot_node = np.full(n_trees * 64, -1, dtype=np.int64)
    num_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    spec_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    count = np.zeros(n_nodes, dtype=np.int64)
    lo = np.zeros(n_nodes, dtype=np.int64)
    order = np.empty(n_nodes, dtype=np.int64)
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    n_internal = 0
    for i in range(n_nodes):
        if left[i] >= 0:
            n_internal += 1
    num_feat = np.empty(n_internal, dtype=np.int64)
    num_thr = np.empty(n_internal, dtype=np.float64)
    num_miss = np.empty(n_internal, dtype=np.bool_)
    num_keep_l = np.empty(n_internal, dtype=np.uint64)
    num_keep_r = np.empty(n_internal, dtype=np.uint64)
    spec_node = np.empty(n_internal, dtype=np.int64)
    spec_keep_l = np.empty(n_internal, dtype=np.uint64)
    spec_keep_r = np.empty(n_internal, dtype=np.uint64)
    n_num = 0
    n_spec = 0
    all_ones = np.uint64(0xFFFFFFFFFFFFFFFF)
    for t in range(n_trees):
        # reached nodes in pre-order, left child first
        n_order = 0
        sp = 1
        stack[0] = tree_start[t]
        while sp > 0:
            sp -= 1
            node = stack[sp]
            if not reach[node]:
                continue
            order[n_order] = node
            n_order += 1
            if left[node] >= 0:
                stack[sp] = right[node]
                stack[sp + 1] = left[node]
                sp += 2
        # reached leaves below each node (children come after their parent in pre-order)
        for k in range(n_order - 1, -1, -1):
            node = order[k]
            if left[node] < 0:
                count[node] = 1
            else:
                c = 0
                if reach[left[node]]:
                    c += count[left[node]]
                if reach[right[node]]:
                    c += count[right[node]]
                count[node] = c
        n_leaves = count[tree_start[t]]
        if n_leaves > 64:
            return (False, init, slot_node, num_ptr, num_feat[:0], num_thr[:0], num_miss[:0], num_keep_l[:0],
                    num_keep_r[:0], spec_ptr, spec_node[:0], spec_keep_l[:0], spec_keep_r[:0])
        init[t] = all_ones if n_leaves == 64 else (np.uint64(1) << np.uint64(n_leaves)) - np.uint64(1)
        lo[tree_start[t]] = 0
        for k in range(n_order):
            node = order[k]
            if left[node] < 0:
                slot_node[t * 64 + lo[node]] = node
                continue
            a = lo[node]
            mid = a + (count[left[node]] if reach[left[node]] else 0)
            b = a + count[node]
            lo[left[node]] = a
            lo[right[node]] = mid
            if tgt[node] >= 0:
                continue
            # leaves [a, mid) are the left subtree's, [mid, b) the right subtree's
            left_bits = _bits(a, mid)
            right_bits = _bits(mid, b)
            if flags[node] & F_SPECIAL:
                spec_node[n_spec] = node
                spec_keep_l[n_spec] = ~right_bits
                spec_keep_r[n_spec] = ~left_bits
                n_spec += 1
                continue
            num_feat[n_num] = feature[node]
            num_thr[n_num] = thr_lt[node]
            num_miss[n_num] = miss_eff[node]
            num_keep_l[n_num] = ~right_bits
            num_keep_r[n_num] = ~left_bits
            n_num += 1
        num_ptr[t + 1] = n_num
        spec_ptr[t + 1] = n_spec
    return (True, init, slot_node, num_ptr, num_feat[:n_num], num_thr[:n_num], num_miss[:n_num],
            num_keep_l[:n_num], num_keep_r[:n_num], spec_ptr, spec_node[:n_spec], spec_keep_l[:n_spec],
            spec_keep_r[:n_spec])


@njit(cache=True, inline="always")
def _bits(a, b):
    """Bits a..b-1 set (0 <= a <= b <= 64)."""
    if b <= a:
        return np.uint64(0)
    width = b - a
    ones = np.uint64(0xFFFFFFFFFFFFFFFF) if width == 64 else (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    return ones << np.uint64(a)


@njit(cache=True, inline="always")
def load_block(X, c0, c1, Xb):
    """Rows c0..c1 of X as columns of Xb (n_features, BLOCK); the rest of the block is zero."""
    nb = c1 - c0
    nf = X.shape[1]
    for r in range(nb):
        for f in range(nf):
            Xb[f, r] = X[c0 + r, f]
    for r in range(nb, BLOCK):
        for f in range(nf):
            Xb[f, r] = 0.0


@njit(cache=True, inline="always")
def _reached(t, Xb, bv, init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r,
             spec_ptr, spec_node, spec_keep_l, spec_keep_r, X, c0, nb, nodes, thr, cat_offset, cat_nwords,
             cat_words, le, cats_left):
    """bv[r] = the leaves of tree t that row c0 + r reaches."""
    start = init[t]
    for r in range(BLOCK):
        bv[r] = start
    for k in range(num_ptr[t], num_ptr[t + 1]):
        f = num_feat[k]
        th = num_thr[k]
        ms = num_miss[k]
        kl = num_keep_l[k]
        kr = num_keep_r[k]
        for r in range(BLOCK):
            x = Xb[f, r]
            go_left = (x < th) | (ms & (not (x >= th)))
            bv[r] &= kl if go_left else kr
    for k in range(spec_ptr[t], spec_ptr[t + 1]):
        node = spec_node[k]
        flags = nodes[node, 3]
        for r in range(nb):
            if go_left_packed(X[c0 + r, nodes[node, 2]], node, flags, thr[node], cat_offset, cat_nwords,
                               cat_words, le, False, cats_left):
                bv[r] &= spec_keep_l[k]
            else:
                bv[r] &= spec_keep_r[k]


@njit(cache=True, parallel=True)
def leafset_counts(X, row_weight, n_parts, init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r,
                   spec_ptr, spec_node, spec_keep_l, spec_keep_r, nodes, thr, cat_offset, cat_nwords, cat_words,
                   le, cats_left):
    """(n_parts, n_trees * 64): the weighted number of rows reaching each leaf, per part of the rows."""
    n = X.shape[0]
    nf = X.shape[1]
    n_trees = init.shape[0]
    counts = np.zeros((n_parts, n_trees * 64))
    n_blocks = (n + BLOCK - 1) // BLOCK
    per_part = (n_blocks + n_parts - 1) // n_parts
    for p in prange(n_parts):
        Xb = np.empty((nf, BLOCK))
        bv = np.empty(BLOCK, dtype=np.uint64)
        cnt = counts[p]
        for blk in range(p * per_part, min(n_blocks, (p + 1) * per_part)):
            c0 = blk * BLOCK
            c1 = min(n, c0 + BLOCK)
            nb = c1 - c0
            load_block(X, c0, c1, Xb)
            for t in range(n_trees):
                _reached(t, Xb, bv, init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r,
                         spec_ptr, spec_node, spec_keep_l, spec_keep_r, X, c0, nb, nodes, thr, cat_offset,
                         cat_nwords, cat_words, le, cats_left)
                base = t * 64
                for r in range(nb):
                    w = row_weight[c0 + r]
                    bits = bv[r]
                    while bits:
                        cnt[base + trailing_zeros(bits)] += w
                        bits &= bits - np.uint64(1)
    return counts


@njit(cache=True, parallel=True)
def leafset_rows(X, row_weight, n_parts, init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r,
                 spec_ptr, spec_node, spec_keep_l, spec_keep_r, nodes, thr, cat_offset, cat_nwords, cat_words,
                 le, cats_left, cptr, cpos, cval, n_margins, grid_shape, base_score, link, link_scale, outputs,
                 want_ice, ice, ice_row0):
    """Per row: margins on the grid, the link, the requested outputs.

    Returns (n_parts, K, n_cells), the row_weight-weighted sums of the outputs per
    part of the rows; when ``want_ice``, ``ice`` (K, N, n_cells) receives each
    row's outputs (unweighted), row ``i`` of X at ``ice[:, ice_row0 + i]``.
    """
    n = X.shape[0]
    nf = X.shape[1]
    n_trees = init.shape[0]
    K = outputs.shape[0]
    n_cells = 1
    for k in range(grid_shape.shape[0]):
        n_cells *= grid_shape[k]
    size = n_margins * n_cells
    sums = np.zeros((n_parts, K, n_cells))
    n_blocks = (n + BLOCK - 1) // BLOCK
    per_part = (n_blocks + n_parts - 1) // n_parts
    for p in prange(n_parts):
        Xb = np.empty((nf, BLOCK))
        bv = np.empty(BLOCK, dtype=np.uint64)
        Dblk = np.empty((BLOCK, size))
        R = np.empty((n_margins + 1, n_cells))
        acc = sums[p]
        for blk in range(p * per_part, min(n_blocks, (p + 1) * per_part)):
            c0 = blk * BLOCK
            c1 = min(n, c0 + BLOCK)
            nb = c1 - c0
            load_block(X, c0, c1, Xb)
            Dblk[:nb, :] = 0.0
            for t in range(n_trees):
                _reached(t, Xb, bv, init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r,
                         spec_ptr, spec_node, spec_keep_l, spec_keep_r, X, c0, nb, nodes, thr, cat_offset,
                         cat_nwords, cat_words, le, cats_left)
                base = t * 64
                for r in range(nb):
                    D = Dblk[r]
                    bits = bv[r]
                    while bits:
                        s = base + trailing_zeros(bits)
                        bits &= bits - np.uint64(1)
                        for c in range(cptr[s], cptr[s + 1]):
                            D[cpos[c]] += cval[c]
            for r in range(nb):
                finish_row(Dblk[r], R, n_margins, grid_shape, n_cells, base_score, link, link_scale, outputs,
                            row_weight[c0 + r], acc, want_ice, ice, ice_row0 + c0 + r)
    return sums


class LeafSets:
    """The leaf-set kernels for one prepared request: reached leaves by slot, node masks, corners."""

    name = "leafsets"

    def __init__(self, prep, layout):
        (_, self.init, self.slot_node, self.num_ptr, self.num_feat, self.num_thr, self.num_miss, self.num_keep_l,
         self.num_keep_r, self.spec_ptr, self.spec_node, self.spec_keep_l, self.spec_keep_r) = layout
        self.prep = prep
        self._corners = None

    def corners(self):
        """Difference-array updates per leaf slot (built on first use: only per-row sums need them)."""
        if self._corners is None:
            prep = self.prep
            ens = prep.ens
            self._corners = prep.leaf_corners(self.slot_node, np.repeat(np.arange(ens.n_trees, dtype=np.int64), 64))
        return self._corners

    def _reach_args(self):
        ens = self.prep.ens
        return (
            self.init, self.num_ptr, self.num_feat, self.num_thr, self.num_miss, self.num_keep_l, self.num_keep_r,
            self.spec_ptr, self.spec_node, self.spec_keep_l, self.spec_keep_r, self.prep.nodes, ens.threshold,
            ens.cat_offset, ens.cat_nwords, ens.cat_words, bool(ens.comparison == "<="),
            bool(ens.categories_go_left),
        )

    def average_sum(self, X, row_weight, unit_weight, parts):
        """Difference array (n_margins * n_cells): the weighted sum over the rows of X of their margins."""
        by_slot = leafset_counts(X, row_weight, parts, *self._reach_args()).sum(axis=0)
        per_node = np.zeros(self.prep.ens.n_nodes)
        used = self.slot_node >= 0
        per_node[self.slot_node[used]] = by_slot[used]
        return scatter_boxes(per_node, *self.prep.box_args())

    def rows(self, X, row_weight, parts, finish_args, ice, ice_row0):
        """(K, n_cells): weighted sums of the rows' outputs; ICE into ``ice`` (see :func:`leafset_rows`)."""
        return leafset_rows(X, row_weight, parts, *self._reach_args(), *self.corners(), *finish_args, ice,
                            ice_row0).sum(axis=0)


def plan(prep, required: bool = False) -> LeafSets | None:
    """Leaf-set kernels for a prepared request, or None.

    By default only for ensembles whose every tree has at most 64 leaves (deciding
    costs nothing then). ``required``: whenever every tree has at most 64 leaves
    that the grid reaches (which needs the region tables).
    """
    ens = prep.ens
    if prep.static.leaves_per_tree.max() > MAX_LEAVES:
        if not required:
            return None
        reached = np.add.reduceat((prep.reach & (ens.left < 0)).astype(np.int64), ens.tree_start[:-1])
        if reached.max() > MAX_LEAVES:
            return None
    st = prep.static
    layout = leafset_layout(ens.tree_start, ens.left, ens.right, ens.feature, np.ascontiguousarray(st.nodes[:, 3]),
                            st.thr_lt, st.miss_eff, prep.tgt, prep.reach)
    if not layout[0]:
        return None
    return LeafSets(prep, layout)
