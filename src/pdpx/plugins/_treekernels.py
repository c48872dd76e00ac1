"""numba kernels shared by ``exact`` and ``recursion`` (imported lazily: numba is optional).

The idea (design.md, "Why exact can be fast"): for target features S, every leaf
of a tree is reached by a fixed *box* of grid cells (the grid points that satisfy
the S-splits on its path). A background row reaches a set of leaves that depends
only on its values of the other features. So one walk per (row, tree), branching
both ways at S-splits, visits every leaf the row can reach; each leaf adds its
value to its box in a difference array (2^d corner updates), and one cumulative
sum per grid axis at the end turns the differences into values on the grid.

A leaf's region in one grid dimension is a set of grid indices; it is split into
runs of consecutive indices (one run for a sorted numeric grid), and the region is
the product of the runs: one box per combination.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

NAN_AS_ZERO = 1
ZERO_OR_NAN_MISSING = 2


# bits of the packed node flags (see _treeprep.pack_nodes)
F_MISSING_LEFT = 1
F_NAN_SHIFT = 1  # two bits: nan_mode
F_CATEGORICAL = 8
F_TARGET = 16
F_REACH = 32


@njit(cache=True, inline="always")
def _go_left_packed(x, node, flags, thr, cat_offset, cat_nwords, cat_words, le, float32_input, cats_left):
    if float32_input:
        x = np.float64(np.float32(x))
    missing_left = (flags & F_MISSING_LEFT) != 0
    if flags & F_CATEGORICAL:
        if np.isnan(x):
            return missing_left
        if x < 0.0:
            inset = False
        else:
            c = np.int64(x)
            off = cat_offset[node]
            if c >= 32 * cat_nwords[node]:
                inset = False
            else:
                inset = ((cat_words[off + c // 32] >> np.uint32(c % 32)) & np.uint32(1)) == 1
        return inset if cats_left else not inset
    mode = (flags >> F_NAN_SHIFT) & 3
    if np.isnan(x):
        if mode == NAN_AS_ZERO:
            x = 0.0
        else:
            return missing_left
    elif mode == ZERO_OR_NAN_MISSING and abs(x) <= 1e-35:
        return missing_left
    if le:
        return x <= thr
    return x < thr


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
        pool[n_masks, :] = True
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
            pool[lm, :] = pool[mid, :]
            pool[rm, :] = pool[mid, :]
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
    return reach, leaf_mask, box_ptr, box_lo, box_hi


@njit(cache=True, inline="always")
def _add_box(D, m, b, box_lo, box_hi, strides, d, v):
    """Add ``v`` to box ``b`` of margin ``m`` in difference array ``D`` (m, cells)."""
    if d == 1:
        D[m, box_lo[b, 0]] += v
        D[m, box_hi[b, 0]] -= v
        return
    if d == 2:
        s0 = strides[0]
        D[m, box_lo[b, 0] * s0 + box_lo[b, 1]] += v
        D[m, box_lo[b, 0] * s0 + box_hi[b, 1]] -= v
        D[m, box_hi[b, 0] * s0 + box_lo[b, 1]] -= v
        D[m, box_hi[b, 0] * s0 + box_hi[b, 1]] += v
        return
    for corner in range(1 << d):
        pos = 0
        sign = 1.0
        for k in range(d):
            if (corner >> k) & 1:
                pos += box_hi[b, k] * strides[k]
                sign = -sign
            else:
                pos += box_lo[b, k] * strides[k]
        D[m, pos] += sign * v


@njit(cache=True, parallel=True)
def accumulate_rows(X, row_weight, per_row, n_blocks, tree_start, tree_group, tree_w, nodes, thr,
                    cat_offset, cat_nwords, cat_words, value, le, float32_input, cats_left,
                    leaf_mask, box_ptr, box_lo, box_hi, strides, n_margins, n_cells, max_tree_nodes):
    """Leaf contributions of background rows, as difference arrays.

    ``nodes`` is (n_nodes, 4) int64: left, right, feature, flags (packed so that one
    node is one cache line; see ``_treeprep.pack_nodes``); ``thr`` the thresholds.

    per_row=True: returns (n_rows, n_margins, n_cells), one array per row (ICE, non-linear links).
    per_row=False: returns (n_blocks, n_margins, n_cells), row_weight-weighted sums per block of rows.
    """
    n = X.shape[0]
    d = strides.shape[0]
    n_trees = tree_start.shape[0] - 1
    n_out = n if per_row else n_blocks
    out = np.zeros((n_out, n_margins, n_cells))
    block = (n + n_blocks - 1) // n_blocks
    for bi in prange(n_blocks):
        stack = np.empty(max_tree_nodes + 1, dtype=np.int64)
        r0 = bi * block
        r1 = min(n, r0 + block)
        # per-row outputs: small chunks of rows, so their difference arrays stay in cache
        # while every tree streams past; summed output: the whole block at once
        chunk = 32 if per_row else max(1, r1 - r0)
        for c0 in range(r0, r1, chunk):
            c1 = min(r1, c0 + chunk)
            for t in range(n_trees):  # trees outer: a tree's nodes stay in cache for the chunk's rows
                g = tree_group[t]
                root = tree_start[t]
                for i in range(c0, c1):
                    if per_row:
                        D = out[i]
                        tw = tree_w[t]
                    else:
                        if row_weight[i] == 0.0:
                            continue
                        D = out[bi]
                        tw = tree_w[t] * row_weight[i]
                    sp = 0
                    node = root
                    while True:
                        lc = nodes[node, 0]
                        while lc >= 0:
                            rc = nodes[node, 1]
                            flags = nodes[node, 3]
                            if flags & F_TARGET:  # target split: the grid divides, follow both sides
                                if nodes[lc, 3] & F_REACH:
                                    if nodes[rc, 3] & F_REACH:
                                        stack[sp] = rc
                                        sp += 1
                                    node = lc
                                else:
                                    node = rc
                            elif _go_left_packed(X[i, nodes[node, 2]], node, flags, thr[node], cat_offset, cat_nwords,
                                                 cat_words, le, float32_input, cats_left):
                                node = lc
                            else:
                                node = rc
                            lc = nodes[node, 0]
                        mid = leaf_mask[node]
                        for b in range(box_ptr[mid], box_ptr[mid + 1]):
                            if g >= 0:
                                _add_box(D, g, b, box_lo, box_hi, strides, d, tw * value[node, 0])
                            else:
                                for m in range(n_margins):
                                    _add_box(D, m, b, box_lo, box_hi, strides, d, tw * value[node, m])
                        if sp == 0:
                            break
                        sp -= 1
                        node = stack[sp]
    return out


@njit(cache=True)
def recursion_pass(tree_start, tree_group, tree_w, left, right, node_weight, value, tgt, reach,
                   leaf_mask, box_ptr, box_lo, box_hi, strides, n_margins, n_cells, max_tree_nodes):
    """Friedman's weighted traversal, as difference arrays: (n_margins, n_cells).

    At a split on a non-target feature both children are followed, each weighted
    by its share of the parent's node weight; at a target split the grid is
    divided (the leaf boxes) instead.
    """
    d = strides.shape[0]
    D = np.zeros((n_margins, n_cells))
    n_trees = tree_start.shape[0] - 1
    stack = np.empty(max_tree_nodes + 1, dtype=np.int64)
    frac = np.empty(max_tree_nodes + 1)
    for t in range(n_trees):
        g = tree_group[t]
        sp = 1
        stack[0] = tree_start[t]
        frac[0] = 1.0
        while sp > 0:
            sp -= 1
            node = stack[sp]
            f = frac[sp]
            if left[node] < 0:
                v = tree_w[t] * f
                for b in range(box_ptr[leaf_mask[node]], box_ptr[leaf_mask[node] + 1]):
                    if g >= 0:
                        _add_box(D, g, b, box_lo, box_hi, strides, d, v * value[node, 0])
                    else:
                        for m in range(n_margins):
                            _add_box(D, m, b, box_lo, box_hi, strides, d, v * value[node, m])
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
    return D
