"""The ``patterns`` gather of the pattern counts: for shallow trees, a branch-free pass over every leaf.

For a leaf at depth ``D``, a row's *pattern* is ``D`` bits, one per node on the
leaf's path: 1 where the row goes the leaf's way. Per block of 64 rows and per
tree, patterns are built from the root down, one vectorised step per node
(``child = parent << 1 | passed``), and every leaf adds each row's weight to
its histogram bin ``hist[leaf, pattern]``: a fixed amount of work per (row,
leaf), with no branch that depends on the data. Two leaves of one parent share a
histogram: the parent's pattern and the way each row goes there (``pattern << 1 |
goes left``) is the left leaf's pattern, and with its last bit flipped the right
leaf's, so such pairs cost one update per row instead of two. After the pass, each leaf's
``2^D`` bins are read once: a bin's zero bits are the nodes the rows failed, their
features the failing set, and bins whose failing set has at most ``order``
features go to the count slots of :mod:`.counts_kernels`.

Per (row, tree) this is ``nodes`` comparisons and ``leaves`` histogram updates,
whatever the order: for trees of depth 6 that is cheaper than following each
row's failing sets (:func:`.counts_kernels.gather_leafsets` at order 2). The
histograms take ``sum over leaves of 2^depth`` bins, so the kernel is for
shallow trees only (:data:`MAX_BINS` per tree).
"""

from __future__ import annotations

import numpy as np

from ...core.compiler import njit
from .counts_kernels import load_weighted, pair_slot
from .kernels import preorder
from .records import Case, KernelRecord
from .routing import BLOCK, F_SPECIAL, numeric_left, special_block

#: Most histogram bins per tree (sum over its leaves of 2^depth) the kernel takes.
MAX_BINS = 1 << 14


@njit(cache=True)
def pattern_layout(tree_start, left, right, topo):
    """Histogram offsets: where the gather writes, where each leaf reads, bins per tree, total bins.

    Returns ``hist_base`` (per node: the first bin of the histogram a *twin parent* (both children leaves)
    or a leaf without a twin writes, -1 elsewhere), ``read_base`` / ``read_flip`` (per leaf: the histogram
    holding its patterns, and 1 for the right child of a twin parent, whose pattern is the parent's bin
    with the last bit flipped), ``depth``, ``bins`` per tree and the ``total``. A tree deeper than 40 gets
    ``1 << 62`` bins (never taken) and no offsets.
    """
    n_nodes = left.shape[0]
    depth = np.zeros(n_nodes, dtype=np.int64)
    hist_base = np.full(n_nodes, -1, dtype=np.int64)
    read_base = np.full(n_nodes, -1, dtype=np.int64)
    read_flip = np.zeros(n_nodes, dtype=np.int64)
    bins = np.zeros(tree_start.shape[0] - 1, dtype=np.int64)
    total = 0
    for t in range(tree_start.shape[0] - 1):
        b = 0
        for k in range(tree_start[t], tree_start[t + 1]):
            node = topo[k]
            if left[node] >= 0:
                depth[left[node]] = depth[node] + 1
                depth[right[node]] = depth[node] + 1
        for node in range(tree_start[t], tree_start[t + 1]):
            if depth[node] > 40:
                b = 1 << 62
                break
        if b == 0:
            for node in range(tree_start[t], tree_start[t + 1]):
                lc = left[node]
                if lc >= 0 and left[lc] < 0 and left[right[node]] < 0:  # a twin parent: one histogram for both
                    hist_base[node] = total + b
                    read_base[lc] = total + b
                    read_base[right[node]] = total + b
                    read_flip[right[node]] = 1
                    b += 1 << (depth[node] + 1)
            for node in range(tree_start[t], tree_start[t + 1]):
                if left[node] < 0 and read_base[node] < 0:
                    hist_base[node] = total + b
                    read_base[node] = total + b
                    b += 1 << depth[node]
        bins[t] = b
        if b < (1 << 62):
            total += b
    return hist_base, read_base, read_flip, depth, bins, total


@njit(cache=True, nogil=True)
def gather_patterns(X, row_weight, r0, r1, tg, n_tree_groups, tree_start, topo, routing, hist_base, max_tree_nodes,
                    h):
    """Add to ``h`` (n_bins,) the weighted pattern histograms of rows ``r0:r1`` of X (``r0`` a multiple of
    ``BLOCK``) on trees ``tg, tg + n_tree_groups, ...`` (see the module docstring; ``routing``:
    :class:`.prep.Routing`).

    ``topo``: the nodes of each tree with every parent before its children (node
    ids, tree by tree; the tree's nodes are ``tree_start[t]:tree_start[t + 1]``).
    """
    nodes, thr_lt, miss_eff = routing[0], routing[1], routing[2]
    n_trees = tree_start.shape[0] - 1
    Xb = np.empty((X.shape[1], BLOCK))
    pat = np.empty((max_tree_nodes, BLOCK), dtype=np.int32)  # patterns < 2^14 (MAX_BINS): int32 stays in L1
    go = np.empty(BLOCK, dtype=np.int32)
    w = np.empty(BLOCK)
    for c0 in range(r0, r1, BLOCK):
        nb = load_weighted(X, row_weight, c0, r1, Xb, w)
        for t in range(tg, n_trees, n_tree_groups):
            root = tree_start[t]
            for r in range(BLOCK):
                pat[0, r] = 0
            for k in range(tree_start[t], tree_start[t + 1]):
                node = topo[k]
                p = pat[node - root]
                lc = nodes[node, 0]
                base = hist_base[node]
                if lc < 0:
                    if base >= 0:  # (a leaf of a twin parent has none: the parent counted its rows)
                        for r in range(nb):
                            h[base + p[r]] += w[r]
                    continue
                f = nodes[node, 2]
                flags = nodes[node, 3]
                if flags & F_SPECIAL:
                    special_block(X, c0, nb, node, routing, go)
                else:
                    th = thr_lt[node]
                    ms = miss_eff[node]
                    for r in range(BLOCK):
                        x = Xb[f, r]
                        go[r] = numeric_left(x, th, ms)
                if base >= 0:  # a twin parent: its pattern and the way each row goes, for both leaves
                    for r in range(nb):
                        h[base + ((p[r] << 1) | go[r])] += w[r]
                    continue
                pl = pat[lc - root]
                pr = pat[nodes[node, 1] - root]
                for r in range(BLOCK):
                    s = p[r] << 1
                    pl[r] = s | go[r]
                    pr[r] = s | (1 - go[r])


@njit(cache=True)
def patterns_to_counts(hist, tree_start, left, right, ford, read_base, read_flip, slot_base, n_pf, order, n_slots,
                       max_tree_nodes):
    """The count slots from pattern histograms: each bin's failing set is the features of its zero bits.

    A leaf's pattern ``v`` is at ``read_base[leaf] + (v ^ read_flip[leaf])`` (:func:`pattern_layout`)."""
    counts = np.zeros(n_slots)
    stack = np.empty(max_tree_nodes + 1, dtype=np.int64)
    s_depth = np.empty(max_tree_nodes + 1, dtype=np.int64)
    path = np.empty(max_tree_nodes + 1, dtype=np.int64)  # ordinal of the feature of each node on the path
    for t in range(tree_start.shape[0] - 1):
        stack[0] = tree_start[t]
        s_depth[0] = 0
        sp = 1
        while sp > 0:
            sp -= 1
            node = stack[sp]
            d = s_depth[sp]
            if left[node] >= 0:
                path[d] = ford[node]
                stack[sp] = right[node]
                s_depth[sp] = d + 1
                stack[sp + 1] = left[node]
                s_depth[sp + 1] = d + 1
                sp += 2
                continue
            base = read_base[node]
            flip = read_flip[node]
            s0 = slot_base[node]
            p = n_pf[node]
            for v in range(1 << d):
                c = hist[base + (v ^ flip)]
                if c == 0.0:
                    continue
                o1 = -1
                o2 = -1
                many = False
                for k in range(d):  # bit d - 1 - k is the k-th node of the path
                    if (v >> (d - 1 - k)) & 1:
                        continue
                    o = path[k]
                    if o == o1 or o == o2:
                        continue
                    if o1 < 0:
                        o1 = o
                    elif o2 < 0:
                        o2 = o
                    else:
                        many = True
                        break
                if many or (o2 >= 0 and order < 2):
                    continue
                if o2 >= 0:
                    counts[s0 + pair_slot(p, o1, o2)] += c
                elif o1 >= 0:
                    counts[s0 + 1 + o1] += c
                else:
                    counts[s0] += c
    return counts


@njit(cache=True)
def parents_first(tree_start, left, right, max_tree_nodes):
    """The nodes of every tree in pre-order (each parent before its children), tree by tree."""
    topo = np.empty(left.shape[0], dtype=np.int64)
    stack = np.empty(max_tree_nodes + 1, dtype=np.int64)
    every = np.ones(left.shape[0], dtype=np.bool_)
    k = 0
    for t in range(tree_start.shape[0] - 1):
        k = preorder(tree_start[t], left, right, every, stack, topo, k)
    return topo


def _fits(ens, budget, order) -> bool:
    from .counts_kernels import kernel_shape

    max_bins, total, _ = kernel_shape(ens)
    return max_bins <= MAX_BINS and 8 * total <= budget


#: This module's kernel (:mod:`.records`): the ``patterns`` gather, for shallow trees whose histograms fit the budget.
RECORDS = (
    KernelRecord("counts.patterns", "counts_patterns", "counts",
                 {"parents_first": 0.2, "pattern_layout": 0.4, "gather_patterns": 1.2, "patterns_to_counts": 0.8},
                 fits=_fits, family="counts", cases=(Case(run="counts", kernel="patterns"),)),
)
