"""The ``oblivious`` kernel for ``exact``: ensembles whose every tree is oblivious (symmetric).

A tree is *oblivious* when it is a full binary tree of depth ``d`` and all nodes
of a level test the same split (feature, threshold, missing direction, NaN rule,
category set), as in CatBoost's default trees. Which leaf a row reaches is then a
``d``-bit number: bit ``l`` set when the row goes right at level ``l``. The walk
needs no node loads at all: ``d`` tests, one per level, which vectorise over a
block of rows (CatBoost's own predict works this way).

For a request on target features S, the levels of a tree that split on S
contribute the *target bits*: the grid decides them (each pattern of target bits
is reached by a fixed box of grid cells, the region tables of
:class:`.prep.Prepared`), the row decides the others. So for every row and tree:

* the row's *own* bits come from the non-target levels (``d`` tests at most, less
  than the ``2^d - 1`` node tests of :mod:`.leafsets` on a full tree);
* the leaves it reaches are ``own | p`` for the few target patterns ``p`` of the
  tree that some grid cell reaches.

Then, as for the other kernels:

* a response linear in the trees, average only: per tree, the weighted number of
  rows per own-bits pattern (``2^d`` bins); leaf ``L`` is reached by the rows of
  bin ``L & ~target_mask``, and each leaf's box is added once, scaled by that;
* ICE or a non-linear link: per row, each reached leaf adds its value to its box
  in the row's difference array (precomputed corners per leaf); the rows' margins
  on the grid then go through the link and the requested outputs as numpy arrays,
  a slice of rows at a time.

The layout is detected from the ensemble's arrays (any library's trees qualify)
and kept with the ensemble; ``auto`` uses this kernel whenever every tree is
oblivious.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ...core.ir import LINKS, apply_link
from .kernels import F_SPECIAL, go_left_packed, scatter_boxes
from .leafsets import BLOCK, load_block
from .products import counts_by_bytes, products_sums

#: deepest tree, and most leaves over all trees, the kernel takes (the per-part counts are that long)
MAX_DEPTH = 20
MAX_SLOTS = 1 << 22


@njit(cache=True, inline="always")
def _same_split(a, b, feature, threshold, missing_left, nan_mode, cat_offset, cat_nwords, cat_words):
    if feature[a] != feature[b] or missing_left[a] != missing_left[b] or nan_mode[a] != nan_mode[b]:
        return False
    ta = threshold[a]
    tb = threshold[b]
    if not (ta == tb or (np.isnan(ta) and np.isnan(tb))):
        return False
    ca = cat_offset[a] >= 0
    if ca != (cat_offset[b] >= 0):
        return False
    if ca:
        na = cat_nwords[a]
        nb = cat_nwords[b]
        for k in range(max(na, nb)):
            wa = cat_words[cat_offset[a] + k] if k < na else np.uint32(0)
            wb = cat_words[cat_offset[b] + k] if k < nb else np.uint32(0)
            if wa != wb:
                return False
    return True


@njit(cache=True)
def oblivious_layout(tree_start, left, right, feature, threshold, missing_left, nan_mode, cat_offset, cat_nwords,
                     cat_words, max_depth, max_slots):
    """The oblivious description of every tree, or ``ok=False`` when a tree is not oblivious.

    Returns
    -------
    ok : bool
    depth : (n_trees,) int64
    level_ptr : (n_trees + 1,) int64, the levels of tree ``t`` are ``level_ptr[t]:level_ptr[t + 1]``
    level_node : (n_levels,) int64, one node of each level (all its nodes split alike)
    slot_ptr : (n_trees + 1,) int64, leaf ``L`` of tree ``t`` is slot ``slot_ptr[t] + L``
    slot_node : (n_slots,) int64, the node of each slot (bit ``l`` of ``L``: right at level ``l``)
    """
    n_trees = tree_start.shape[0] - 1
    depth = np.zeros(n_trees, dtype=np.int64)
    level_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    slot_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    fail = (False, depth, level_ptr, np.zeros(0, dtype=np.int64), slot_ptr, np.zeros(0, dtype=np.int64))
    # pass 1: depths, checking the shape and the splits level by level
    cur = np.empty(1 << max_depth, dtype=np.int64)
    nxt = np.empty(1 << max_depth, dtype=np.int64)
    for t in range(n_trees):
        cur[0] = tree_start[t]
        width = 1
        d = 0
        while True:
            first = cur[0]
            if left[first] < 0:
                for i in range(width):
                    if left[cur[i]] >= 0:
                        return fail
                break
            if d >= max_depth:
                return fail
            for i in range(width):
                node = cur[i]
                if left[node] < 0 or not _same_split(first, node, feature, threshold, missing_left, nan_mode,
                                                     cat_offset, cat_nwords, cat_words):
                    return fail
                nxt[2 * i] = left[node]
                nxt[2 * i + 1] = right[node]
            width *= 2
            d += 1
            for i in range(width):
                cur[i] = nxt[i]
        depth[t] = d
        level_ptr[t + 1] = level_ptr[t] + d
        slot_ptr[t + 1] = slot_ptr[t] + (1 << d)
        if slot_ptr[t + 1] > max_slots:
            return fail
    level_node = np.empty(level_ptr[n_trees], dtype=np.int64)
    slot_node = np.empty(slot_ptr[n_trees], dtype=np.int64)
    # pass 2: a node per level, and the leaf of each bit pattern
    for t in range(n_trees):
        d = depth[t]
        node = tree_start[t]
        for lvl in range(d):
            level_node[level_ptr[t] + lvl] = node
            node = left[node]
        for leaf in range(1 << d):
            node = tree_start[t]
            for lvl in range(d):
                node = right[node] if (leaf >> lvl) & 1 else left[node]
            slot_node[slot_ptr[t] + leaf] = node
    return True, depth, level_ptr, level_node, slot_ptr, slot_node


def static_oblivious(ens):
    """The oblivious layout of ``ens`` (a tuple as :func:`oblivious_layout`), or None; kept with the ensemble."""
    def build():
        out = oblivious_layout(ens.tree_start, ens.left, ens.right, ens.feature, ens.threshold, ens.missing_left,
                               ens.nan_mode, ens.cat_offset, ens.cat_nwords, ens.cat_words, MAX_DEPTH, MAX_SLOTS)
        return out[1:] if out[0] else None
    return ens.derived("pdpx.plugins.trees.oblivious.static_oblivious", build)


@njit(cache=True)
def request_layout(depth, level_ptr, level_node, slot_ptr, slot_node, tgt, flags, feature, thr_lt, miss_eff,
                   leaf_mask):
    """Per tree: the levels a row decides (numeric ones vectorised, special ones by the general rule) and
    the target patterns some grid cell reaches.

    Returns num_ptr, num_feat, num_thr, num_miss, num_bit; spec_ptr, spec_node, spec_bit;
    pat_ptr, pat (target-bit patterns per tree); own_mask (n_trees,) the bits rows decide.
    """
    n_trees = depth.shape[0]
    n_levels = level_node.shape[0]
    num_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    spec_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    pat_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    num_feat = np.empty(n_levels, dtype=np.int64)
    num_thr = np.empty(n_levels, dtype=np.float64)
    num_miss = np.empty(n_levels, dtype=np.bool_)
    num_bit = np.empty(n_levels, dtype=np.int64)
    spec_node = np.empty(n_levels, dtype=np.int64)
    spec_bit = np.empty(n_levels, dtype=np.int64)
    own_mask = np.zeros(n_trees, dtype=np.int64)
    pats = np.empty(slot_node.shape[0], dtype=np.int64)
    tbits = np.empty(64, dtype=np.int64)
    n_num = 0
    n_spec = 0
    n_pat = 0
    for t in range(n_trees):
        n_t = 0
        for lvl in range(depth[t]):
            node = level_node[level_ptr[t] + lvl]
            if tgt[node] >= 0:
                tbits[n_t] = lvl
                n_t += 1
                continue
            own_mask[t] |= 1 << lvl
            if flags[node] & F_SPECIAL:
                spec_node[n_spec] = node
                spec_bit[n_spec] = lvl
                n_spec += 1
            else:
                num_feat[n_num] = feature[node]
                num_thr[n_num] = thr_lt[node]
                num_miss[n_num] = miss_eff[node]
                num_bit[n_num] = lvl
                n_num += 1
        num_ptr[t + 1] = n_num
        spec_ptr[t + 1] = n_spec
        # target patterns: every combination of the target bits whose leaf some grid cell reaches
        # (a leaf's box depends on its target bits only, so own bits 0 stand for all)
        for c in range(1 << n_t):
            p = 0
            for k in range(n_t):
                if (c >> k) & 1:
                    p |= 1 << tbits[k]
            if leaf_mask[slot_node[slot_ptr[t] + p]] >= 0:
                pats[n_pat] = p
                n_pat += 1
        pat_ptr[t + 1] = n_pat
    return (num_ptr, num_feat[:n_num], num_thr[:n_num], num_miss[:n_num], num_bit[:n_num], spec_ptr,
            spec_node[:n_spec], spec_bit[:n_spec], pat_ptr, pats[:n_pat].copy(), own_mask)


@njit(cache=True, inline="always")
def _own_bits(t, Xb, bits, num_ptr, num_feat, num_thr, num_miss, num_bit, spec_ptr, spec_node, spec_bit,
              X, c0, nb, nodes, thr, cat_offset, cat_nwords, cat_words, le, cats_left):
    """bits[r] = the leaf bits row c0 + r decides in tree t (target bits 0)."""
    for r in range(BLOCK):
        bits[r] = 0
    for k in range(num_ptr[t], num_ptr[t + 1]):
        f = num_feat[k]
        th = num_thr[k]
        ms = num_miss[k]
        sh = num_bit[k]
        for r in range(BLOCK):
            x = Xb[f, r]
            go_left = (x < th) | (ms & (not (x >= th)))
            bits[r] |= (1 - np.int64(go_left)) << sh
    for k in range(spec_ptr[t], spec_ptr[t + 1]):
        node = spec_node[k]
        flags = nodes[node, 3]
        sh = spec_bit[k]
        for r in range(nb):
            if not go_left_packed(X[c0 + r, nodes[node, 2]], node, flags, thr[node], cat_offset, cat_nwords,
                                  cat_words, le, False, cats_left):
                bits[r] |= np.int64(1) << sh


@njit(cache=True, parallel=True)
def oblivious_counts(X, row_weight, n_parts, slot_ptr, num_ptr, num_feat, num_thr, num_miss, num_bit, spec_ptr,
                     spec_node, spec_bit, nodes, thr, cat_offset, cat_nwords, cat_words, le, cats_left):
    """(n_parts, n_slots): per tree, the weighted number of rows per own-bits pattern, per part of the rows."""
    n = X.shape[0]
    nf = X.shape[1]
    n_trees = slot_ptr.shape[0] - 1
    counts = np.zeros((n_parts, slot_ptr[n_trees]))
    n_blocks = (n + BLOCK - 1) // BLOCK
    per_part = (n_blocks + n_parts - 1) // n_parts
    for p in prange(n_parts):
        Xb = np.empty((nf, BLOCK))
        bits = np.empty(BLOCK, dtype=np.int64)
        cnt = counts[p]
        for blk in range(p * per_part, min(n_blocks, (p + 1) * per_part)):
            c0 = blk * BLOCK
            c1 = min(n, c0 + BLOCK)
            nb = c1 - c0
            load_block(X, c0, c1, Xb)
            for t in range(n_trees):
                _own_bits(t, Xb, bits, num_ptr, num_feat, num_thr, num_miss, num_bit, spec_ptr, spec_node,
                          spec_bit, X, c0, nb, nodes, thr, cat_offset, cat_nwords, cat_words, le, cats_left)
                base = slot_ptr[t]
                for r in range(nb):
                    cnt[base + bits[r]] += row_weight[c0 + r]
    return counts


@njit(cache=True, parallel=True)
def oblivious_margins(X, slot_ptr, num_ptr, num_feat, num_thr, num_miss, num_bit, spec_ptr, spec_node, spec_bit,
                      nodes, thr, cat_offset, cat_nwords, cat_words, le, cats_left, pat_ptr, cor_ptr, cor_pos, val_ptr,
                      val, n_margins, grid_shape, base_score, factor):
    """(n_margins * n_cells, n_rows): ``factor * (margin + base_score)`` of each row on the grid, transposed.

    The leaves of a tree that share their target bits share their boxes, so the
    corner positions of a (tree, target pattern) ``q`` are the same for every row
    (``cor_pos[cor_ptr[q]:cor_ptr[q + 1]]``); only the value changes: corner ``j``
    of leaf ``L`` (own bits | pattern) adds ``val[val_ptr[q] + L * nc + j]``
    (see :func:`pattern_tables`). The block's difference arrays are kept
    transposed (cell, row) so that each corner is one update over the block's rows.
    """
    n = X.shape[0]
    nf = X.shape[1]
    n_trees = slot_ptr.shape[0] - 1
    n_cells = 1
    for k in range(grid_shape.shape[0]):
        n_cells *= grid_shape[k]
    size = n_margins * n_cells
    out = np.empty((size, n))
    n_blocks = (n + BLOCK - 1) // BLOCK
    for blk in prange(n_blocks):
        Xb = np.empty((nf, BLOCK))
        bits = np.empty(BLOCK, dtype=np.int64)
        DT = np.zeros((size, BLOCK))
        c0 = blk * BLOCK
        c1 = min(n, c0 + BLOCK)
        nb = c1 - c0
        load_block(X, c0, c1, Xb)
        for t in range(n_trees):
            _own_bits(t, Xb, bits, num_ptr, num_feat, num_thr, num_miss, num_bit, spec_ptr, spec_node,
                      spec_bit, X, c0, nb, nodes, thr, cat_offset, cat_nwords, cat_words, le, cats_left)
            for q in range(pat_ptr[t], pat_ptr[t + 1]):
                v0 = val_ptr[q]
                nc = cor_ptr[q + 1] - cor_ptr[q]
                for j in range(nc):
                    row = DT[cor_pos[cor_ptr[q] + j]]
                    for r in range(BLOCK):
                        row[r] += val[v0 + bits[r] * nc + j]
        _integrate_block(DT, n_margins, grid_shape, n_cells)
        for m in range(n_margins):
            b = base_score[m]
            for i in range(m * n_cells, (m + 1) * n_cells):
                dst = out[i]
                src = DT[i]
                for r in range(nb):
                    dst[c0 + r] = factor * (src[r] + b)
    return out


@njit(cache=True, inline="always")
def _integrate_block(DT, n_margins, grid_shape, n_cells):
    """In place: ``kernels.integrate_row`` on every column (row of the block) of DT (cells, rows) at once."""
    d = grid_shape.shape[0]
    inner = n_cells
    outer = 1
    nr = DT.shape[1]
    for k in range(d):
        size = grid_shape[k]
        inner //= size
        for m in range(n_margins):
            base = m * n_cells
            for o in range(outer):
                b = base + o * size * inner
                for i in range(1, size):
                    cur = b + i * inner
                    for s in range(inner):
                        dst = DT[cur + s]
                        src = DT[cur - inner + s]
                        for r in range(nr):
                            dst[r] += src[r]
        outer *= size


@njit(cache=True)
def pattern_tables(slot_ptr, pat_ptr, pats, own_mask, cptr, cpos, cval):
    """Corner positions per (tree, target pattern) and their values by leaf (see :func:`oblivious_margins`).

    Leaves with the same target bits have boxes alike, hence corners alike in number
    and position (``kernels.leaf_corners`` lists them in the same order).
    """
    n_trees = slot_ptr.shape[0] - 1
    n_q = pats.shape[0]
    cor_ptr = np.zeros(n_q + 1, dtype=np.int64)
    val_ptr = np.zeros(n_q + 1, dtype=np.int64)
    for t in range(n_trees):
        n_leaves = slot_ptr[t + 1] - slot_ptr[t]
        for q in range(pat_ptr[t], pat_ptr[t + 1]):
            s0 = slot_ptr[t] + pats[q]
            nc = cptr[s0 + 1] - cptr[s0]
            cor_ptr[q + 1] = cor_ptr[q] + nc
            val_ptr[q + 1] = val_ptr[q] + n_leaves * nc
    cor_pos = np.empty(cor_ptr[n_q], dtype=np.int64)
    val = np.zeros(val_ptr[n_q])
    for t in range(n_trees):
        n_leaves = slot_ptr[t + 1] - slot_ptr[t]
        for q in range(pat_ptr[t], pat_ptr[t + 1]):
            pq = pats[q]
            s0 = slot_ptr[t] + pq
            nc = cor_ptr[q + 1] - cor_ptr[q]
            for j in range(nc):
                cor_pos[cor_ptr[q] + j] = cpos[cptr[s0] + j]
            for own in range(n_leaves):  # rows' own bits (target bits 0)
                if own & ~own_mask[t]:
                    continue
                s = slot_ptr[t] + (own | pq)
                for j in range(nc):
                    val[val_ptr[q] + own * nc + j] = cval[cptr[s] + j]
    return cor_ptr, cor_pos, val_ptr[:n_q], val


class Oblivious:
    """The oblivious kernels for one prepared request."""

    name = "oblivious"

    def __init__(self, prep, static):
        self.prep = prep
        ens = prep.ens
        st = prep.static
        self.depth, self.level_ptr, self.level_node, self.slot_ptr, self.slot_node = static
        (self.num_ptr, self.num_feat, self.num_thr, self.num_miss, self.num_bit, self.spec_ptr, self.spec_node,
         self.spec_bit, self.pat_ptr, self.pats, self.own_mask) = request_layout(
            self.depth, self.level_ptr, self.level_node, self.slot_ptr, self.slot_node, prep.tgt,
            np.ascontiguousarray(st.nodes[:, 3]), ens.feature, st.thr_lt, st.miss_eff, prep.leaf_mask)
        self._corners = None
        self.quantized = None  # the numeric levels' byte tests (:func:`.products.quantize_levels`), on first use

    def corners(self):
        """Difference-array updates per (tree, pattern) (built on first use: only per-row sums need them)."""
        if self._corners is None:
            tree_of = np.repeat(np.arange(self.prep.ens.n_trees, dtype=np.int64), np.diff(self.slot_ptr))
            self._corners = pattern_tables(self.slot_ptr, self.pat_ptr, self.pats, self.own_mask,
                                           *self.prep.leaf_corners(self.slot_node, tree_of))
        return self._corners

    def _bits_args(self):
        ens = self.prep.ens
        return (self.slot_ptr, self.num_ptr, self.num_feat, self.num_thr, self.num_miss, self.num_bit, self.spec_ptr,
                self.spec_node, self.spec_bit, self.prep.nodes, ens.threshold, ens.cat_offset, ens.cat_nwords,
                ens.cat_words, bool(ens.comparison == "<="), bool(ens.categories_go_left))

    def average_sum(self, X, row_weight, unit_weight, parts):
        """Difference array (n_margins * n_cells): the weighted sum over the rows of X of their margins."""
        counts = counts_by_bytes(self, X, row_weight, parts)  # numeric levels as byte tests where they fit
        if counts is None:
            counts = oblivious_counts(X, row_weight, parts, *self._bits_args())
        by_own = counts.sum(axis=0)
        # leaf L of tree t is reached by the rows whose own bits are L's own bits
        sizes = np.diff(self.slot_ptr)
        tree_of = np.repeat(np.arange(len(sizes)), sizes)
        leaf = np.arange(self.slot_ptr[-1]) - self.slot_ptr[tree_of]
        per_node = np.zeros(self.prep.ens.n_nodes)
        per_node[self.slot_node] = by_own[self.slot_ptr[tree_of] + (leaf & self.own_mask[tree_of])]
        per_node[self.prep.leaf_mask < 0] = 0.0
        return scatter_boxes(per_node, *self.prep.box_args())

    def rows(self, X, row_weight, parts, finish_args, ice, ice_row0):
        """(K, n_cells): weighted sums of the rows' outputs; ICE into ``ice``.

        The kernel gives the rows' margins on the grid, a slice of rows at a time; the
        link and the outputs are then whole-array numpy operations (vectorised exp).
        """
        n_margins, grid_shape, base_score, link, scale, outputs, want_ice = finish_args
        link = LINKS[link]
        n_cells = int(np.prod(grid_shape))
        n = X.shape[0]
        sums = np.zeros((len(outputs), n_cells))
        step = max(4 * BLOCK, (2**17 // (n_margins * n_cells)) // BLOCK * BLOCK)  # slices that stay in cache
        # the kernel applies the link's affine part: logistic needs exp(-z), exp and softmax exp(z)
        factor = {"identity": 1.0, "logistic": -scale, "binary_logistic": -scale}.get(link, scale)
        args = (*self._bits_args(), self.pat_ptr, *self.corners(), n_margins, grid_shape, base_score, float(factor))
        if n_margins == 1 and not want_ice and link in ("logistic", "binary_logistic", "exp"):
            fused = products_sums(self, X, row_weight, parts, grid_shape, float(factor), float(base_score[0]),
                                  link != "exp")
            if fused is not None:
                if link != "binary_logistic":
                    return np.repeat(fused[None, :], len(outputs), axis=0)
                return np.stack([row_weight.sum() - fused if k == 0 else fused for k in outputs])
        for s0 in range(0, n, step):
            s1 = min(n, s0 + step)
            z = oblivious_margins(X[s0:s1], *args).reshape(n_margins, n_cells, s1 - s0)
            resp = _respond(link, z, outputs)  # (K, n_cells, rows)
            sums += resp @ row_weight[s0:s1]
            if want_ice:
                ice[:, ice_row0 + s0: ice_row0 + s1, :] = resp.transpose(0, 2, 1)
        return sums


def _respond(link: str, z: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    """The requested outputs (K, cells, rows) from ``z`` (n_margins, cells, rows), the margins with the link's
    affine part applied (:func:`oblivious_margins`' ``factor``): ``core.ir.apply_link`` in place, whole arrays."""
    if link == "identity":
        return z[outputs]
    if link == "softmax":  # z is scale * margin already
        return apply_link(link, z, 1.0, axis=0)[outputs]
    with np.errstate(over="ignore"):  # exp(-z) = inf: the probability is 0, as it should be
        np.exp(z, out=z)
        if link == "exp":
            return z[outputs]
        z += 1.0
        np.reciprocal(z, out=z)
    if link == "logistic":
        return z[outputs]
    # binary_logistic: outputs 0 and 1 are 1 - p and p of the one margin
    if list(outputs) == [1]:
        return z
    return np.stack([1.0 - z[0] if k == 0 else z[0] for k in outputs])


def plan(prep, required: bool = False) -> Oblivious | None:
    """Oblivious kernels for a prepared request, or None when a tree is not oblivious."""
    static = static_oblivious(prep.ens)
    if static is None:
        return None
    return Oblivious(prep, static)
