"""Partition kernels for ``exact`` on trees of any size (deep forests above all).

Instead of walking one row at a time down a tree, the rows go down together, as
a set: a node receives a segment of an array of row indices, tests all of them
against its split (one feature column, one threshold: a tight loop with no
data-dependent branch), and partitions the segment in place into the rows that go
left and those that go right, which become its children's segments. A split on a
target feature hands its whole segment to both children (the grid goes both
ways there; the leaf boxes say which cells reach which leaf). A leaf receives
exactly the rows that reach it.

The work is the same number of (row, node) visits as a walk, but a visit is a
few instructions in a loop over a column rather than a dependent load and an
unpredictable branch: about 4x faster on a 100-tree randomForest of 1,300-node
trees. For shallow trees :mod:`.leafsets` is faster still.

Rows with sample weight 0 still pass (they add nothing to sums, and ICE wants
them).

One kernel, :func:`partition_walk`, sends the rows of a span down every tree and
uses the leaves in one of two ways:

* the weighted sum of the rows' margins on the grid: each leaf adds (weighted
  number of rows reaching it) x value to its region;
* per row, the difference array of its margins (a slice of rows at a time), which
  :func:`.rows.finish` integrates and finishes (link, outputs, sums, ICE).
"""

from __future__ import annotations

import numpy as np

from ...core.compiler import njit
from .kernels import NO_CORNERS, box_corner, grid_strides, whole_grid
from .records import SORTED, Case, KernelRecord
from .routing import F_SPECIAL, go_left_packed, numeric_left
from .rows import run


@njit(cache=True, inline="always")
def split_rows(idx, tmp, a, b, Xt, col_nan, node, nodes, thr_lt, miss_eff, routing):
    """Partition idx[a:b] in place: rows going left first. Returns the boundary.

    ``col_nan[f]``: whether column f has a NaN at all (most do not: a plain
    comparison then, about 20% faster). ``nodes``, ``thr_lt``, ``miss_eff``: those of
    ``routing`` (:class:`.prep.Routing`), unpacked once by the calling kernel; the rest of
    ``routing`` is read at special nodes only.
    """
    f = nodes[node, 2]
    col = Xt[f]
    nl = a
    nr = 0
    flags = nodes[node, 3]
    if flags & F_SPECIAL:
        _, _, _, thr, cat_offset, cat_nwords, cat_words, le, cats_left = routing
        th = thr[node]
        for k in range(a, b):
            r = idx[k]
            c = go_left_packed(col[r], node, flags, th, cat_offset, cat_nwords, cat_words, le, False, cats_left)
            idx[nl] = r  # nl <= k: never overwrites a row not yet read
            tmp[nr] = r
            nl += c
            nr += 1 - c
    elif not col_nan[f]:
        th = thr_lt[node]
        for k in range(a, b):
            r = idx[k]
            c = col[r] < th
            idx[nl] = r
            tmp[nr] = r
            nl += c
            nr += 1 - c
    else:
        th = thr_lt[node]
        ms = miss_eff[node]
        for k in range(a, b):
            r = idx[k]
            x = col[r]
            c = numeric_left(x, th, ms)  # NaN fails both comparisons, so ms decides where it goes
            idx[nl] = r
            tmp[nr] = r
            nl += c
            nr += 1 - c
    for k in range(nr):
        idx[nl + k] = tmp[k]
    return nl


@njit(cache=True, inline="always")
def segment_weight(idx, a, b, row_weight, unit):
    """The weight of the rows ``idx[a:b]``: ``(b - a) * unit`` when every row weighs ``unit`` > 0, else the sum
    of their ``row_weight``."""
    if unit > 0.0:
        return (b - a) * unit
    c = 0.0
    for k in range(a, b):
        c += row_weight[idx[k]]
    return c


@njit(cache=True)
def nan_columns(Xt):
    """Per row of ``Xt`` (a column of the data): whether it holds a NaN."""
    out = np.zeros(Xt.shape[0], dtype=np.bool_)
    for f in range(Xt.shape[0]):
        for r in range(Xt.shape[1]):
            if np.isnan(Xt[f, r]):
                out[f] = True
                break
    return out


@njit(cache=True, nogil=True)
def partition_walk(Xt, row_weight, unit, tree_start, max_tree_nodes, tgt, intervals, n_left, reach, routing,
                   tree_group, tree_w, value, n_margins, leaf_mask, box_ptr, box_lo, box_hi, grid_shape, per_row, cptr,
                   cpos, cval, out):
    """The rows (columns of ``Xt``) down every tree together, the leaves added into ``out`` (``routing``:
    :class:`.prep.Routing`).

    ``per_row`` False: ``out[0]`` += the difference array (n_margins * n_cells) of the
    ``row_weight``-weighted sum of the rows' margins: each leaf adds (weighted number of
    rows reaching it) x value to its region (``unit`` > 0: every row weighs ``unit``, so
    a leaf's weight is its segment's length times it). ``intervals``: regions are carried
    down the tree as one index interval per grid dimension (``n_left[node]``: the grid
    values a target node sends left are the first ``n_left``); otherwise they come from
    the prepared boxes (``reach``, ``leaf_mask``, ``box_*``). ``per_row`` True: the
    corners of the leaf each row reaches (``cpos[cptr[leaf]:cptr[leaf + 1]]``, ``cval``)
    into the row's column, ``out[pos, row]``.
    """
    nodes, thr_lt, miss_eff = routing[0], routing[1], routing[2]
    n = Xt.shape[1]
    col_nan = nan_columns(Xt)
    d = grid_shape.shape[0]
    strides, n_cells = grid_strides(grid_shape)
    D = out[0]
    idx = np.empty(n, dtype=np.int32)
    tmp = np.empty(n, dtype=np.int32)
    sn = np.empty(max_tree_nodes + 1, dtype=np.int64)
    sa = np.empty(max_tree_nodes + 1, dtype=np.int64)
    sb = np.empty(max_tree_nodes + 1, dtype=np.int64)
    s_lo = np.zeros((max_tree_nodes + 1, d), dtype=np.int64)
    s_hi = np.zeros((max_tree_nodes + 1, d), dtype=np.int64)
    for t in range(tree_start.shape[0] - 1):
        g = tree_group[t]
        tw = tree_w[t]
        for i in range(n):
            idx[i] = i
        sn[0] = tree_start[t]
        sa[0] = 0
        sb[0] = n
        whole_grid(s_lo, s_hi, grid_shape)
        sp = 1
        while sp > 0:
            sp -= 1
            top = sp  # the popped entry's slot: its intervals stay there for the child pushed first
            node = sn[top]
            a = sa[top]
            b = sb[top]
            lc = nodes[node, 0]
            if lc < 0:
                if per_row:
                    for k in range(a, b):
                        col = idx[k]
                        for c in range(cptr[node], cptr[node + 1]):
                            out[cpos[c], col] += cval[c]
                    continue
                cnt = segment_weight(idx, a, b, row_weight, unit)
                if cnt == 0.0:
                    continue
                cnt *= tw
                if intervals:
                    for corner in range(1 << d):
                        pos, sign = box_corner(top, corner, s_lo, s_hi, strides, grid_shape)
                        if pos >= 0:
                            _add_leaf(D, pos, sign * cnt, value, node, g, n_margins, n_cells)
                else:
                    mid = leaf_mask[node]
                    for bx in range(box_ptr[mid], box_ptr[mid + 1]):
                        for corner in range(1 << d):
                            pos, sign = box_corner(bx, corner, box_lo, box_hi, strides, grid_shape)
                            if pos >= 0:
                                _add_leaf(D, pos, sign * cnt, value, node, g, n_margins, n_cells)
                continue
            rc = nodes[node, 1]
            k = tgt[node]
            if k >= 0:  # the grid divides: both children get every row
                if intervals:
                    lo_k = s_lo[top, k]
                    hi_k = s_hi[top, k]
                    cut = n_left[node]
                    r_lo = max(lo_k, cut)
                    l_hi = min(hi_k, cut)
                    go_r = r_lo < hi_k
                    go_l = lo_k < l_hi
                else:
                    go_r = reach[rc]
                    go_l = reach[lc]
                if go_r:  # in the parent's slot: its intervals are already there
                    sp = _push(sn, sa, sb, sp, rc, a, b, False, s_lo, s_hi, top)
                if go_l:
                    sp = _push(sn, sa, sb, sp, lc, a, b, intervals, s_lo, s_hi, top)
                    if intervals:
                        s_hi[sp - 1, k] = l_hi
                if go_r and intervals:
                    s_lo[top, k] = r_lo
                continue
            m = split_rows(idx, tmp, a, b, Xt, col_nan, node, nodes, thr_lt, miss_eff, routing)
            if m < b:
                sp = _push(sn, sa, sb, sp, rc, m, b, False, s_lo, s_hi, top)
            if m > a:
                sp = _push(sn, sa, sb, sp, lc, a, m, intervals, s_lo, s_hi, top)


@njit(cache=True, inline="always")
def _push(sn, sa, sb, sp, node, a, b, copy, s_lo, s_hi, src):
    """Push (node, rows a:b) on the stack; returns the new stack size. ``copy``: the new entry starts with
    the intervals held in slot ``src`` (its parent's)."""
    if copy and sp != src:
        for k in range(s_lo.shape[1]):
            s_lo[sp, k] = s_lo[src, k]
            s_hi[sp, k] = s_hi[src, k]
    sn[sp] = node
    sa[sp] = a
    sb[sp] = b
    return sp + 1


@njit(cache=True, inline="always")
def _add_leaf(D, pos, v, value, node, g, n_margins, n_cells):
    if g >= 0:
        D[g * n_cells + pos] += v * value[node, 0]
    else:
        for m in range(n_margins):
            D[m * n_cells + pos] += v * value[node, m]


class Partition:
    """The partition kernels for one prepared request."""

    name = "partition"

    def __init__(self, prep):
        self.prep = prep

    def _walk(self, X, r0, r1, row_weight, unit, intervals, regions, per_row, corners, out):
        prep = self.prep
        ens = prep.ens
        n_left = prep.n_left if intervals else np.zeros(1, dtype=np.int64)
        reach, leaf_mask, box_ptr, box_lo, box_hi = regions
        partition_walk(np.ascontiguousarray(X[r0:r1].T), row_weight[r0:r1], unit, ens.tree_start,
                       int(prep.max_tree_nodes), prep.tgt, intervals, n_left, reach, prep.routing,
                       ens.tree_group, ens.effective_tree_weight(), ens.value, int(ens.n_margins), leaf_mask, box_ptr,
                       box_lo, box_hi, prep.grid_shape_array, per_row, *corners, out)
        return out

    def average_sum(self, X, row_weight, unit, threads):
        """Difference array (n_margins * n_cells): the ``row_weight``-weighted sum over the rows of X of their
        margins (``unit`` > 0: every weight is ``unit``)."""
        prep = self.prep
        if prep.intervals:  # no region tables needed
            regions = (np.zeros(1, dtype=np.bool_), np.zeros(1, dtype=np.int64), np.zeros(2, np.int64),
                       np.zeros((1, len(prep.grid_shape)), dtype=np.int64), np.zeros((1, len(prep.grid_shape)),
                                                                                  dtype=np.int64))
        else:
            regions = prep.regions()
        size = int(prep.ens.n_margins) * prep.n_cells
        return sum(run(lambda r0, r1: self._walk(X, r0, r1, row_weight, unit, bool(prep.intervals), regions, False,
                                                 NO_CORNERS, np.zeros((1, size)))[0], len(X), threads))

    def rows(self, X, row_weight, threads, fin, ice_row0):
        """(K, n_cells): weighted sums of the rows' outputs; ICE into ``fin.ice`` (see :func:`.rows.finish`)."""
        prep = self.prep
        ens = prep.ens

        def leaves():
            leaf_node = np.where((ens.left < 0) & prep.reach, np.arange(ens.n_nodes), -1).astype(np.int64)
            return leaf_node, np.repeat(np.arange(ens.n_trees, dtype=np.int64), np.diff(ens.tree_start))

        corners = prep.scaled_corners("partition", leaves, fin.factor)
        regions = prep.regions()
        size = len(fin.start) * prep.n_cells
        return fin.sums(lambda s0, s1: self._walk(X, s0, s1, row_weight, 0.0, False, regions, True, corners,
                                                  np.zeros((size, s1 - s0))),
                        X.shape[0], row_weight, threads, ice_row0)


def plan(prep) -> Partition:
    """The partition kernels for a prepared request (any tree size)."""
    return Partition(prep)


def _uses(plan) -> tuple:
    if plan.per_row:
        return (plan.regions,) + plan.finish
    return () if plan.intervals else (plan.regions,)  # intervals: carried down the trees, no region tables


#: This module's kernels (:mod:`.records`): the walk, for any tree, and the scan for NaN the counts' gather uses.
RECORDS = (
    KernelRecord("partition", "partition", "rows", {"partition_walk": 3.4}, uses=_uses, family="partition",
                 cases=(Case(kernel="partition"), Case(kernel="partition", kind="both"),
                        Case(kernel="partition", link="logistic", grids=SORTED))),
    KernelRecord("partition.nan", "partition", "shared", {"nan_columns": 0.3}, family="counts"),
)
