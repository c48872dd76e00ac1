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


@njit(cache=True, inline="always")
def _go_left(x, node, threshold, missing_left, nan_mode, cat_offset, cat_nwords, cat_words,
             le, float32_input, cats_left):
    if float32_input:
        x = np.float64(np.float32(x))
    off = cat_offset[node]
    if off >= 0:
        if np.isnan(x):
            return missing_left[node]
        if x < 0.0:
            inset = False
        else:
            c = np.int64(x)
            nw = cat_nwords[node]
            if c >= 32 * nw:
                inset = False
            else:
                inset = ((cat_words[off + c // 32] >> np.uint32(c % 32)) & np.uint32(1)) == 1
        return inset if cats_left else not inset
    mode = nan_mode[node]
    if np.isnan(x):
        if mode == NAN_AS_ZERO:
            x = 0.0
        else:
            return missing_left[node]
    elif mode == ZERO_OR_NAN_MISSING and abs(x) <= 1e-35:
        return missing_left[node]
    if le:
        return x <= threshold[node]
    return x < threshold[node]


@njit(cache=True)
def leaf_regions(tree_start, left, right, tgt, left_grid, left_grid_row, dim_offset, dim_size,
                 max_tree_nodes):
    """Per node, whether any grid cell reaches it (``reach``), and per leaf the boxes.

    Parameters
    ----------
    tgt : (n_nodes,) int64, the grid dimension a node splits on, or -1
    left_grid : (n_target_nodes, sum(dim_size)) bool, which grid values go left at
        target node ``left_grid_row[node]`` (only its own dimension's slice is read)
    dim_offset, dim_size : (d,) int64, slices of the concatenated grid dimensions

    Returns
    -------
    reach : (n_nodes,) bool
    box_ptr : (n_nodes + 1,) int64, boxes of node i are box_ptr[i]:box_ptr[i+1]
    box_lo, box_hi : (n_boxes, d) int64, half-open index ranges per dimension
    """
    n_nodes = left.shape[0]
    d = dim_size.shape[0]
    total = 0
    for k in range(d):
        total += dim_size[k]
    reach = np.zeros(n_nodes, dtype=np.bool_)
    n_box = np.zeros(n_nodes, dtype=np.int64)
    stack_node = np.empty(max_tree_nodes + 1, dtype=np.int64)
    stack_mask = np.empty((max_tree_nodes + 1, total), dtype=np.bool_)
    leaf_mask = np.zeros((n_nodes, total), dtype=np.bool_)  # only leaves written
    n_trees = tree_start.shape[0] - 1
    for t in range(n_trees):
        sp = 0
        stack_node[0] = tree_start[t]
        stack_mask[0, :] = True
        sp = 1
        while sp > 0:
            sp -= 1
            node = stack_node[sp]
            mask = stack_mask[sp].copy()
            reach[node] = True
            if left[node] < 0:
                leaf_mask[node, :] = mask
                cnt = 1
                for k in range(d):
                    runs = 0
                    prev = False
                    for g in range(dim_size[k]):
                        cur = mask[dim_offset[k] + g]
                        if cur and not prev:
                            runs += 1
                        prev = cur
                    cnt *= runs
                n_box[node] = cnt
                continue
            k = tgt[node]
            if k < 0:
                stack_node[sp] = right[node]
                stack_mask[sp, :] = mask
                sp += 1
                stack_node[sp] = left[node]
                stack_mask[sp, :] = mask
                sp += 1
                continue
            row = left_grid_row[node]
            lm = mask.copy()
            rm = mask.copy()
            any_l = False
            any_r = False
            for g in range(dim_offset[k], dim_offset[k] + dim_size[k]):
                gl = left_grid[row, g]
                lm[g] = mask[g] and gl
                rm[g] = mask[g] and not gl
                any_l = any_l or lm[g]
                any_r = any_r or rm[g]
            if any_r:
                stack_node[sp] = right[node]
                stack_mask[sp, :] = rm
                sp += 1
            if any_l:
                stack_node[sp] = left[node]
                stack_mask[sp, :] = lm
                sp += 1
    box_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    for i in range(n_nodes):
        box_ptr[i + 1] = box_ptr[i] + n_box[i]
    nb = box_ptr[n_nodes]
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
    for node in range(n_nodes):
        if n_box[node] == 0:
            continue
        for k in range(d):
            r = 0
            prev = False
            for g in range(dim_size[k]):
                cur = leaf_mask[node, dim_offset[k] + g]
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
        # enumerate the product of runs
        for k in range(d):
            idx[k] = 0
        b = box_ptr[node]
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
    return reach, box_ptr, box_lo, box_hi


@njit(cache=True, inline="always")
def _add_box(D, m, b, box_lo, box_hi, strides, d, v):
    """Add ``v`` to box ``b`` of margin ``m`` in difference array ``D`` (m, cells)."""
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
def accumulate_rows(X, row_weight, per_row, n_blocks,
                    tree_start, tree_group, tree_w, left, right, feature, threshold, missing_left,
                    nan_mode, cat_offset, cat_nwords, cat_words, value, le, float32_input, cats_left,
                    tgt, reach, box_ptr, box_lo, box_hi, strides, n_margins, n_cells, max_tree_nodes):
    """Leaf contributions of background rows, as difference arrays.

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
        for i in range(r0, r1):
            slot = np.int64(bi)
            w = row_weight[i]
            if per_row:
                slot = np.int64(i)
                w = 1.0
            if w == 0.0:
                continue
            D = out[slot]
            for t in range(n_trees):
                g = tree_group[t]
                tw = tree_w[t] * w
                sp = 1
                stack[0] = tree_start[t]
                while sp > 0:
                    sp -= 1
                    node = stack[sp]
                    if left[node] < 0:
                        for b in range(box_ptr[node], box_ptr[node + 1]):
                            if g >= 0:
                                _add_box(D, g, b, box_lo, box_hi, strides, d, tw * value[node, 0])
                            else:
                                for m in range(n_margins):
                                    _add_box(D, m, b, box_lo, box_hi, strides, d, tw * value[node, m])
                        continue
                    if tgt[node] >= 0:
                        if reach[right[node]]:
                            stack[sp] = right[node]
                            sp += 1
                        if reach[left[node]]:
                            stack[sp] = left[node]
                            sp += 1
                        continue
                    x = X[i, feature[node]]
                    if _go_left(x, node, threshold, missing_left, nan_mode, cat_offset, cat_nwords,
                                cat_words, le, float32_input, cats_left):
                        nxt = left[node]
                    else:
                        nxt = right[node]
                    if reach[nxt]:
                        stack[sp] = nxt
                        sp += 1
    return out


@njit(cache=True)
def recursion_pass(tree_start, tree_group, tree_w, left, right, node_weight, value, tgt, reach,
                   box_ptr, box_lo, box_hi, strides, n_margins, n_cells, max_tree_nodes):
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
                for b in range(box_ptr[node], box_ptr[node + 1]):
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
