"""numba kernels shared by ``exact`` and ``recursion`` (imported on first use: importing numba costs a third of a
second, so a call that never walks trees never loads it; numba itself is a dependency of pdpx).

The idea (docs/methods.md, "Why exact is fast"): for target features S, every leaf
of a tree is reached by a fixed *box* of grid cells (the grid points that satisfy
the S-splits on its path). A background row reaches a set of leaves that depends
only on its values of the other features: at S-splits it goes both ways. Each
leaf a row reaches adds its value to its box in a difference array (2^d corner
updates), and one cumulative sum per grid axis turns the differences into values
on the grid.

A leaf's region in one grid dimension is a set of grid indices; it is split into
runs of consecutive indices (one run for a sorted numeric grid), and the region is
the product of the runs: one box per combination.

This module holds what the row kernels (:mod:`.oblivious`, :mod:`.leafsets` for
shallow trees, :mod:`.partition` for deep ones) and ``recursion`` share besides the
routing rule (:mod:`.routing`): where grid values go at target nodes, the leaf boxes
and their difference-array corners, blocks of rows as columns, and the order of a
walk. The kernels run on one thread each, without the GIL; :mod:`.rows` shares
the rows among threads and finishes the rows' margins (the link, the outputs).
"""

from __future__ import annotations

import numpy as np

from ...core.compiler import njit
from .records import SORTED, Case, KernelRecord
from .routing import goes_left

#: (cptr, cpos, cval) of no leaf: what the row kernels take for corners when they count rows instead
NO_CORNERS = (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))


@njit(cache=True, inline="always")
def preorder(root, left, right, reach, stack, order, k):
    """The nodes of the tree at ``root`` that ``reach`` marks, in pre-order (each parent before its children, the
    left child first), into ``order[k:]`` (a node not marked hides its subtree); returns ``k`` past the last."""
    stack[0] = root
    sp = 1
    while sp > 0:
        sp -= 1
        node = stack[sp]
        if not reach[node]:
            continue
        order[k] = node
        k += 1
        if left[node] >= 0:
            stack[sp] = right[node]
            stack[sp + 1] = left[node]
            sp += 2
    return k


@njit(cache=True, inline="always")
def whole_grid(s_lo, s_hi, grid_shape):
    """Stack slot 0 of the intervals a walk carries down a tree (one per grid dimension): the whole grid."""
    for k in range(grid_shape.shape[0]):
        s_lo[0, k] = 0
        s_hi[0, k] = grid_shape[k]


@njit(cache=True)
def mask_boxes(pool, n_masks, dim_offset, dim_size):
    """The boxes of the first ``n_masks`` grid masks of ``pool`` (:func:`leaf_regions`): ``box_ptr``,
    ``box_lo``, ``box_hi``."""
    d = dim_size.shape[0]
    # boxes of each mask: the product of its runs of consecutive grid indices per dimension
    n_box = np.zeros(n_masks, dtype=np.int64)
    for mid in range(n_masks):
        cnt = 1
        for k in range(d):
            runs = 0
            prev = False
            for g in range(dim_offset[k], dim_offset[k] + dim_size[k]):
                cur = pool[mid, g]
                if cur and not prev:
                    runs += 1
                prev = cur
            cnt *= runs
        n_box[mid] = cnt
    box_ptr = np.zeros(n_masks + 1, dtype=np.int64)
    for i in range(n_masks):
        box_ptr[i + 1] = box_ptr[i] + n_box[i]
    nb = box_ptr[n_masks]
    box_lo = np.empty((nb, d), dtype=np.int64)
    box_hi = np.empty((nb, d), dtype=np.int64)
    max_runs = 0
    for k in range(d):
        if dim_size[k] > max_runs:
            max_runs = dim_size[k]
    run_lo = np.empty((d, max_runs), dtype=np.int64)
    run_hi = np.empty((d, max_runs), dtype=np.int64)
    n_runs = np.empty(d, dtype=np.int64)
    idx = np.empty(d, dtype=np.int64)
    for mid in range(n_masks):
        if n_box[mid] == 0:
            continue
        for k in range(d):
            r = 0
            prev = False
            for g in range(dim_size[k]):
                cur = pool[mid, dim_offset[k] + g]
                if cur and not prev:
                    run_lo[k, r] = g
                if prev and not cur:
                    run_hi[k, r] = g
                    r += 1
                prev = cur
            if prev:
                run_hi[k, r] = dim_size[k]
                r += 1
            n_runs[k] = r
        for k in range(d):
            idx[k] = 0
        b = box_ptr[mid]
        while True:
            for k in range(d):
                box_lo[b, k] = run_lo[k, idx[k]]
                box_hi[b, k] = run_hi[k, idx[k]]
            b += 1
            k = d - 1
            while k >= 0:
                idx[k] += 1
                if idx[k] < n_runs[k]:
                    break
                idx[k] = 0
                k -= 1
            if k < 0:
                break
    return box_ptr, box_lo, box_hi


@njit(cache=True)
def leaf_regions(tree_start, left, right, tgt, left_grid, left_grid_row, dim_offset, dim_size,
                 max_tree_nodes):
    """Per node, whether any grid cell reaches it, and for each leaf its region as boxes.

    A region (a grid mask) changes only at splits on target features, so masks are
    kept in a pool, created only there, and shared by every node below; boxes are
    computed once per mask, not once per leaf.

    Parameters
    ----------
    tgt : (n_nodes,) int64, the grid dimension a node splits on, or -1
    left_grid : (n_target_nodes, sum(dim_size)) bool, which grid values go left at
        target node ``left_grid_row[node]`` (only its own dimension's slice is read)
    dim_offset, dim_size : (d,) int64, slices of the concatenated grid dimensions

    Returns
    -------
    reach : (n_nodes,) bool
    leaf_mask : (n_nodes,) int64, the region (mask id) of each reached leaf, else -1
    box_ptr : (n_masks + 1,) int64, boxes of mask m are box_ptr[m]:box_ptr[m + 1]
    box_lo, box_hi : (n_boxes, d) int64, half-open index ranges per dimension
    """
    n_nodes = left.shape[0]
    d = dim_size.shape[0]
    total = 0
    for k in range(d):
        total += dim_size[k]
    n_trees = tree_start.shape[0] - 1
    n_target = 0
    for i in range(n_nodes):
        if left[i] >= 0 and tgt[i] >= 0:
            n_target += 1
    pool = np.zeros((n_trees + 2 * n_target, total), dtype=np.bool_)
    n_masks = 0
    reach = np.zeros(n_nodes, dtype=np.bool_)
    leaf_mask = np.full(n_nodes, -1, dtype=np.int64)
    stack_node = np.empty(max_tree_nodes + 1, dtype=np.int64)
    stack_mid = np.empty(max_tree_nodes + 1, dtype=np.int64)
    for t in range(n_trees):
        for g in range(total):
            pool[n_masks, g] = True
        stack_node[0] = tree_start[t]
        stack_mid[0] = n_masks
        n_masks += 1
        sp = 1
        while sp > 0:
            sp -= 1
            node = stack_node[sp]
            mid = stack_mid[sp]
            reach[node] = True
            if left[node] < 0:
                leaf_mask[node] = mid
                continue
            k = tgt[node]
            if k < 0:
                stack_node[sp] = right[node]
                stack_mid[sp] = mid
                stack_node[sp + 1] = left[node]
                stack_mid[sp + 1] = mid
                sp += 2
                continue
            row = left_grid_row[node]
            lm = n_masks
            rm = n_masks + 1
            for g in range(total):
                pool[lm, g] = pool[mid, g]
                pool[rm, g] = pool[mid, g]
            any_l = False
            any_r = False
            for g in range(dim_offset[k], dim_offset[k] + dim_size[k]):
                m = pool[mid, g]
                gl = left_grid[row, g]
                pool[lm, g] = m and gl
                pool[rm, g] = m and not gl
                any_l = any_l or (m and gl)
                any_r = any_r or (m and not gl)
            n_masks += 2
            if any_r:
                stack_node[sp] = right[node]
                stack_mid[sp] = rm
                sp += 1
            if any_l:
                stack_node[sp] = left[node]
                stack_mid[sp] = lm
                sp += 1
    box_ptr, box_lo, box_hi = mask_boxes(pool, n_masks, dim_offset, dim_size)
    return reach, leaf_mask, box_ptr, box_lo, box_hi


@njit(cache=True, inline="always")
def grid_strides(grid_shape):
    """Row-major strides of a grid of shape ``grid_shape``."""
    d = grid_shape.shape[0]
    strides = np.empty(d, dtype=np.int64)
    s = 1
    for k in range(d - 1, -1, -1):
        strides[k] = s
        s *= grid_shape[k]
    return strides, s


@njit(cache=True, inline="always")
def box_corner(b, corner, box_lo, box_hi, strides, grid_shape):
    """Flat position and sign of corner ``corner`` (bit k: upper end in dimension k) of box ``b``.

    The difference array has the grid's own shape: a corner at the upper end of a
    dimension only affects cells past the grid, so it is dropped (position -1).
    """
    pos = 0
    sign = 1.0
    for k in range(strides.shape[0]):
        if (corner >> k) & 1:
            if box_hi[b, k] >= grid_shape[k]:
                return -1, 0.0
            pos += box_hi[b, k] * strides[k]
            sign = -sign
        else:
            pos += box_lo[b, k] * strides[k]
    return pos, sign


@njit(cache=True)
def leaf_boxes_sorted(tree_start, left, right, tgt, n_left, dim_size, max_tree_nodes):
    """``leaf_regions`` when every target node sends the first ``n_left[node]`` grid values left.

    Then every region is a box, carried down as one interval per dimension: no
    grid masks. Each reached leaf gets its own box (``leaf_mask[leaf]`` = box id).
    """
    n_nodes = left.shape[0]
    d = dim_size.shape[0]
    reach = np.zeros(n_nodes, dtype=np.bool_)
    leaf_mask = np.full(n_nodes, -1, dtype=np.int64)
    n_leaves = 0
    for i in range(n_nodes):
        if left[i] < 0:
            n_leaves += 1
    box_lo = np.empty((n_leaves, d), dtype=np.int64)
    box_hi = np.empty((n_leaves, d), dtype=np.int64)
    stack = np.empty(max_tree_nodes + 1, dtype=np.int64)
    s_lo = np.empty((max_tree_nodes + 1, d), dtype=np.int64)
    s_hi = np.empty((max_tree_nodes + 1, d), dtype=np.int64)
    nb = 0
    for t in range(tree_start.shape[0] - 1):
        stack[0] = tree_start[t]
        whole_grid(s_lo, s_hi, dim_size)
        sp = 1
        while sp > 0:
            sp -= 1
            node = stack[sp]
            reach[node] = True
            if left[node] < 0:
                leaf_mask[node] = nb
                for k in range(d):
                    box_lo[nb, k] = s_lo[sp, k]
                    box_hi[nb, k] = s_hi[sp, k]
                nb += 1
                continue
            k = tgt[node]
            lo_k = s_lo[sp, k] if k >= 0 else 0
            hi_k = s_hi[sp, k] if k >= 0 else 0
            cut = n_left[node]
            # right child first, so the left one is popped next; both share the parent's intervals
            push_right = k < 0 or max(lo_k, cut) < hi_k
            push_left = k < 0 or lo_k < min(hi_k, cut)
            base = sp
            if push_right:
                stack[sp] = right[node]
                sp += 1
            if push_left:
                stack[sp] = left[node]
                if sp != base:
                    for kk in range(d):
                        s_lo[sp, kk] = s_lo[base, kk]
                        s_hi[sp, kk] = s_hi[base, kk]
                sp += 1
            if k >= 0:
                e = base
                if push_right:
                    s_lo[e, k] = max(lo_k, cut)
                    e += 1
                if push_left:
                    s_hi[e, k] = min(hi_k, cut)
    box_ptr = np.arange(nb + 1, dtype=np.int64)
    return reach, leaf_mask, box_ptr, box_lo[:nb], box_hi[:nb]


@njit(cache=True)
def leaf_corners(leaf_node, leaf_tree, tree_group, tree_w, value, n_margins, leaf_mask, box_ptr, box_lo, box_hi,
                 grid_shape):
    """Difference-array updates of leaves, by leaf id: ``cptr`` (n_ids + 1), ``cpos``, ``cval``.

    Leaf id ``i`` is node ``leaf_node[i]`` of tree ``leaf_tree[i]`` (``-1``: no leaf,
    no updates). Its updates are ``cpos[cptr[i]:cptr[i + 1]]`` (flat positions
    ``m * n_cells + cell``) and ``cval`` (signed values, tree weight included).
    """
    n_ids = leaf_node.shape[0]
    d = grid_shape.shape[0]
    strides, n_cells = grid_strides(grid_shape)
    cptr = np.zeros(n_ids + 1, dtype=np.int64)
    cpos = np.empty(0, dtype=np.int64)
    cval = np.empty(0, dtype=np.float64)
    for fill in range(2):  # pass 1 counts, pass 2 fills
        if fill:
            for i in range(n_ids):
                cptr[i + 1] += cptr[i]
            cpos = np.empty(cptr[n_ids], dtype=np.int64)
            cval = np.empty(cptr[n_ids], dtype=np.float64)
        for i in range(n_ids):
            node = leaf_node[i]
            if node < 0:
                continue
            t = leaf_tree[i]
            g = tree_group[t]
            n_m = 1 if g >= 0 else n_margins
            mid = leaf_mask[node]
            c = cptr[i] if fill else 0
            for b in range(box_ptr[mid], box_ptr[mid + 1]):
                for corner in range(1 << d):
                    pos, sign = box_corner(b, corner, box_lo, box_hi, strides, grid_shape)
                    if pos < 0:
                        continue
                    for mm in range(n_m):
                        if fill:
                            m = g if g >= 0 else mm
                            cpos[c] = m * n_cells + pos
                            cval[c] = sign * tree_w[t] * value[node, 0 if g >= 0 else mm]
                        c += 1
            if not fill:
                cptr[i + 1] = c
    return cptr, cpos, cval


@njit(cache=True)
def scatter_boxes(node_weight, tree_start, tree_group, tree_w, value, n_margins, leaf_mask, box_ptr, box_lo, box_hi,
                  grid_shape):
    """Difference array (n_margins * n_cells) of every leaf's value x ``node_weight[leaf]`` on its box.

    ``node_weight``: per node, the weighted number of rows that reach it (exact), or
    its share of the tree's node weight (recursion); zero elsewhere.
    """
    strides, n_cells = grid_strides(grid_shape)
    d = grid_shape.shape[0]
    D = np.zeros(n_margins * n_cells)
    for t in range(tree_start.shape[0] - 1):
        g = tree_group[t]
        for node in range(tree_start[t], tree_start[t + 1]):
            c = node_weight[node]
            if c == 0.0:
                continue
            mid = leaf_mask[node]
            for b in range(box_ptr[mid], box_ptr[mid + 1]):
                for corner in range(1 << d):
                    pos, sign = box_corner(b, corner, box_lo, box_hi, strides, grid_shape)
                    if pos < 0:
                        continue
                    v = sign * c * tree_w[t]
                    if g >= 0:
                        D[g * n_cells + pos] += v * value[node, 0]
                    else:
                        for m in range(n_margins):
                            D[m * n_cells + pos] += v * value[node, m]
    return D


@njit(cache=True, inline="always")
def load_block(X, c0, c1, Xb):
    """Rows c0..c1 of X as the first columns of Xb (n_features, width); the other columns are zero."""
    nb = c1 - c0
    nf = X.shape[1]
    for r in range(nb):
        for f in range(nf):
            Xb[f, r] = X[c0 + r, f]
    for r in range(nb, Xb.shape[1]):
        for f in range(nf):
            Xb[f, r] = 0.0


@njit(cache=True, nogil=True)
def integrate_columns(out, n_margins, grid_shape):
    """In place: every column of ``out`` (n_margins * n_cells, n_columns), a difference array on the grid's
    own shape per margin, becomes the values on the grid: a cumulative sum along every grid axis, each
    step one contiguous update over the columns."""
    d = grid_shape.shape[0]
    n_cells = out.shape[0] // n_margins
    n_cols = out.shape[1]
    inner = n_cells
    outer = 1
    for k in range(d):
        size = grid_shape[k]
        inner //= size
        for m in range(n_margins):
            for o in range(outer):
                b = m * n_cells + o * size * inner
                for i in range(1, size):
                    cur = b + i * inner
                    for s in range(inner):
                        dst = out[cur + s]
                        src = out[cur - inner + s]
                        for c in range(n_cols):
                            dst[c] += src[c]
        outer *= size


@njit(cache=True, nogil=True)
def exp_columns(z, logistic):
    """In place: ``exp(z)``, or ``1 / (1 + exp(z))`` when ``logistic``. A row of cells along a grid is a
    step function, so a value equal to the previous cell's (same column) reuses its result."""
    n_cols = z.shape[1]
    prev_z = np.full(n_cols, np.nan)
    prev_v = np.zeros(n_cols)
    for i in range(z.shape[0]):
        row = z[i]
        for c in range(n_cols):
            x = row[c]
            if x != prev_z[c]:
                prev_z[c] = x
                e = np.exp(x)
                prev_v[c] = 1.0 / (1.0 + e) if logistic else e
            row[c] = prev_v[c]


@njit(cache=True)
def grid_left(target_nodes, values, routing):
    """(len(target_nodes), len(values)) bool: where grid values (rounded as the trees compare them) go at each
    target node (True = left), by the routing of :class:`.prep.Routing`."""
    out = np.empty((target_nodes.shape[0], values.shape[0]), dtype=np.bool_)
    for i in range(target_nodes.shape[0]):
        node = target_nodes[i]
        for j in range(values.shape[0]):
            out[i, j] = goes_left(values[j], node, routing)
    return out


@njit(cache=True)
def recursion_weights(tree_start, left, right, node_weight, tgt, reach, max_tree_nodes):
    """Friedman's traversal: per leaf, the share of its tree's weight that reaches it.

    At a split on a non-target feature both children are followed, each with its
    share of the parent's node weight; at a target split the grid is divided (the
    leaf boxes) instead, so both children keep the parent's share.
    """
    share = np.zeros(left.shape[0])
    stack = np.empty(max_tree_nodes + 1, dtype=np.int64)
    frac = np.empty(max_tree_nodes + 1)
    for t in range(tree_start.shape[0] - 1):
        sp = 1
        stack[0] = tree_start[t]
        frac[0] = 1.0
        while sp > 0:
            sp -= 1
            node = stack[sp]
            f = frac[sp]
            if left[node] < 0:
                share[node] += f
                continue
            lc = left[node]
            rc = right[node]
            if tgt[node] >= 0:
                fl = f
                fr = f
            else:
                wp = node_weight[node]
                if wp > 0:
                    fl = f * node_weight[lc] / wp
                    fr = f * node_weight[rc] / wp
                else:
                    fl = 0.0
                    fr = 0.0
            if reach[rc] and fr > 0:
                stack[sp] = rc
                frac[sp] = fr
                sp += 1
            if reach[lc] and fl > 0:
                stack[sp] = lc
                frac[sp] = fl
                sp += 1
    return share


#: This module's kernels (:mod:`.records`): the leaves' grid regions (intervals on sorted numeric grids, else grid
#: masks), the corners and integral of the rows' margins, the link's exp, the boxes of counted leaves, and
#: recursion's weights.
RECORDS = (
    KernelRecord("intervals", "kernels", "shared", {"leaf_boxes_sorted": 1.4}, family="leafsets"),
    KernelRecord("masks", "kernels", "shared", {"leaf_regions": 1.4, "grid_left": 0.6}, family="leafsets"),
    KernelRecord("corners", "kernels", "shared", {"leaf_corners": 0.8, "integrate_columns": 0.3}, family="leafsets"),
    KernelRecord("link", "kernels", "shared", {"exp_columns": 0.3}, family="leafsets"),
    KernelRecord("scatter", "kernels", "shared", {"scatter_boxes": 0.9}, family="leafsets"),
    KernelRecord("recursion", "kernels", "recursion", {"recursion_weights": 0.3},
                 uses=lambda plan: (plan.regions, "scatter"), family="leafsets",
                 cases=(Case(run="recursion", kernel="leafsets", grids=SORTED),)),
)
