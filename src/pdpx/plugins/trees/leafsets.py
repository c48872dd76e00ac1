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

One kernel, :func:`leafset_walk`, finds the sets and uses them in one of two ways:

* a response linear in the trees, average only: per leaf, the weighted number of
  rows that reach it; the corners are then added once per leaf, not once per row;
* ICE, or a non-linear link: per row, the difference array of its margins, for a
  slice of rows at a time; :func:`.rows.finish` integrates them and applies the
  link and the outputs.

Leaf ids here are slots: leaf ``j`` of tree ``t`` is id ``t * 64 + j``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ...core.compiler import njit
from .kernels import NO_CORNERS, load_block, preorder, scatter_boxes
from .records import SORTED, Case, KernelRecord
from .routing import BLOCK, F_SPECIAL, add_numeric, keep_block, keep_special, numeric_tables
from .rows import run

MAX_LEAVES = 64


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
    num_feat, num_thr, num_miss = numeric_tables(n_internal)
    num_keep_l = np.empty(n_internal, dtype=np.uint64)
    num_keep_r = np.empty(n_internal, dtype=np.uint64)
    spec_node = np.empty(n_internal, dtype=np.int64)
    spec_keep_l = np.empty(n_internal, dtype=np.uint64)
    spec_keep_r = np.empty(n_internal, dtype=np.uint64)
    n_num = 0
    n_spec = 0
    all_ones = np.uint64(0xFFFFFFFFFFFFFFFF)
    for t in range(n_trees):
        n_order = preorder(tree_start[t], left, right, reach, stack, order, 0)  # reached nodes, left child first
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
            add_numeric(n_num, node, feature, thr_lt, miss_eff, num_feat, num_thr, num_miss)
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


class NodeMasks(NamedTuple):
    """The node masks of :func:`leafset_layout` (what it returns after ``ok`` and ``slot_node``), as one argument
    of the kernels that walk them (:func:`leafset_walk`, the counts' and the averaged curves' gathers)."""

    init: np.ndarray
    num_ptr: np.ndarray
    num_feat: np.ndarray
    num_thr: np.ndarray
    num_miss: np.ndarray
    num_keep_l: np.ndarray
    num_keep_r: np.ndarray
    spec_ptr: np.ndarray
    spec_node: np.ndarray
    spec_keep_l: np.ndarray
    spec_keep_r: np.ndarray


def node_masks(layout) -> NodeMasks:
    """The :class:`NodeMasks` of a :func:`leafset_layout` result."""
    return NodeMasks(layout[1], *layout[3:])


@njit(cache=True, inline="always")
def node_words(t, words, num_row, spec_row, Xb, X, c0, nb, num_ptr, num_feat, num_thr, num_miss, num_keep_l,
               num_keep_r, spec_ptr, spec_node, spec_keep_l, spec_keep_r, routing):
    """Tree ``t``'s nodes over the block of rows ``c0 : c0 + nb`` of X (columns of ``Xb``): numeric node ``k``
    keeps its leaves in the words ``words[num_row[k]]`` (special node ``k``: ``words[spec_row[k]]``) of the rows
    that go its way.

    Numeric nodes are one vectorised compare per node over the block (:func:`.routing.keep_block`); nodes
    with another rule are routed row by row (:func:`.routing.keep_special`).
    """
    for k in range(num_ptr[t], num_ptr[t + 1]):
        keep_block(words[num_row[k]], Xb, num_feat[k], num_thr[k], num_miss[k], num_keep_l[k], num_keep_r[k])
    for k in range(spec_ptr[t], spec_ptr[t + 1]):
        keep_special(words[spec_row[k]], X, c0, nb, spec_node[k], routing, spec_keep_l[k], spec_keep_r[k])


@njit(cache=True, nogil=True)
def leafset_walk(X, row_weight, masks, routing, per_row, cptr, cpos, cval, out):
    """The leaves each row of X reaches, added into ``out``, block by block (``masks``: :class:`NodeMasks`,
    ``routing``: :class:`.prep.Routing`).

    ``per_row`` False: ``out[0, t * 64 + j]`` += the row's weight for each leaf ``j`` of tree ``t``
    it reaches (the weighted number of rows per leaf). True: the leaf's difference-array corners
    ``cpos[cptr[s]:cptr[s + 1]]`` / ``cval`` into the row's column, ``out[pos, row]``.
    """
    (init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r, spec_ptr, spec_node, spec_keep_l,
     spec_keep_r) = masks
    n = X.shape[0]
    n_trees = init.shape[0]
    Xb = np.empty((X.shape[1], BLOCK))
    words = np.empty((1, BLOCK), dtype=np.uint64)
    bv = words[0]
    num_row = np.zeros(num_feat.shape[0], dtype=np.int64)  # one word per row: every node keeps into row 0
    spec_row = np.zeros(spec_node.shape[0], dtype=np.int64)
    for c0 in range(0, n, BLOCK):
        nb = min(BLOCK, n - c0)
        load_block(X, c0, c0 + nb, Xb)
        for t in range(n_trees):
            start = init[t]
            for r in range(BLOCK):
                bv[r] = start
            node_words(t, words, num_row, spec_row, Xb, X, c0, nb, num_ptr, num_feat, num_thr, num_miss, num_keep_l,
                       num_keep_r, spec_ptr, spec_node, spec_keep_l, spec_keep_r, routing)
            base = t * 64
            for r in range(nb):
                bits = bv[r]
                while bits:
                    s = base + trailing_zeros(bits)
                    bits &= bits - np.uint64(1)
                    if per_row:
                        for c in range(cptr[s], cptr[s + 1]):
                            out[cpos[c], c0 + r] += cval[c]
                    else:
                        out[0, s] += row_weight[c0 + r]


class LeafSets:
    """The leaf-set kernels for one prepared request: reached leaves by slot, node masks, corners."""

    name = "leafsets"

    def __init__(self, prep, layout):
        self.slot_node = layout[2]
        self.masks = node_masks(layout)
        self.prep = prep

    def _reach_args(self):
        return self.masks, self.prep.routing

    def average_sum(self, X, row_weight, unit, threads):
        """Difference array (n_margins * n_cells): the ``row_weight``-weighted sum over the rows of X of their
        margins."""
        args = self._reach_args()
        n_slots = len(self.slot_node)

        def part(r0, r1):
            out = np.zeros((1, n_slots))
            leafset_walk(X[r0:r1], row_weight[r0:r1], *args, False, *NO_CORNERS, out)
            return out[0]

        by_slot = sum(run(part, len(X), threads))
        per_node = np.zeros(self.prep.ens.n_nodes)
        used = self.slot_node >= 0
        per_node[self.slot_node[used]] = by_slot[used]
        return scatter_boxes(per_node, *self.prep.box_args())

    def rows(self, X, row_weight, threads, fin, ice_row0):
        """(K, n_cells): weighted sums of the rows' outputs; ICE into ``fin.ice`` (see :func:`.rows.finish`)."""
        args = self._reach_args()
        ens = self.prep.ens
        corners = self.prep.scaled_corners(
            "leafsets", lambda: (self.slot_node, np.repeat(np.arange(ens.n_trees, dtype=np.int64), 64)), fin.factor)
        size = len(fin.start) * self.prep.n_cells

        def margins(s0, s1):
            out = np.zeros((size, s1 - s0))
            leafset_walk(X[s0:s1], row_weight[s0:s1], *args, True, *corners, out)
            return out

        return fin.sums(margins, X.shape[0], row_weight, threads, ice_row0)


def reaches_few(prep) -> bool:
    """Whether the grid of a prepared request reaches at most :data:`MAX_LEAVES` leaves of every tree (what
    ``kernel="leafsets"`` asked for needs on larger trees), numpy only."""
    ens = prep.ens
    if prep.static.leaves_per_tree.max() <= MAX_LEAVES:
        return True
    reached = np.add.reduceat((prep.reach & (ens.left < 0)).astype(np.int64), ens.tree_start[:-1])
    return bool(reached.max() <= MAX_LEAVES)


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


def _fits(ens, budget, order) -> bool:
    from .prep import static_layout

    return int(static_layout(ens).leaves_per_tree.max()) <= MAX_LEAVES


#: This module's kernels (:mod:`.records`): the node masks (shared with the counts and the averaged curves) and the
#: walk, for trees of at most 64 leaves.
RECORDS = (
    KernelRecord("leafsets.layout", "leafsets", "shared", {"leafset_layout": 1.5}, family="leafsets"),
    KernelRecord("leafsets", "leafsets", "rows", {"leafset_walk": 1.5}, fits=_fits, family="leafsets",
                 uses=lambda plan: ("leafsets.layout", plan.regions) + (plan.finish if plan.per_row else ("scatter",)),
                 cases=(Case(kernel="leafsets"), Case(kernel="leafsets", kind="both"),
                        Case(kernel="leafsets", link="logistic", grids=SORTED),  # per-row finish with exp
                        Case(kernel="leafsets", link="softmax", n_margins=3, grids=SORTED))),
)
