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

from ...core.compiler import njit
from .kernels import load_block, scatter_boxes
from .products import counts_by_bytes, products_sums
from .records import SORTED, Case, KernelRecord
from .routing import BLOCK, F_SPECIAL, add_numeric, numeric_left, numeric_tables, special_block
from .rows import run

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


def node_depths(ens) -> np.ndarray:
    """Each node's depth in its tree (roots 0), level by level with numpy."""
    depth = np.zeros(ens.n_nodes, dtype=np.int64)
    level = ens.tree_start[:-1]
    d = 0
    while level.size:
        level = level[ens.left[level] >= 0]
        d += 1
        level = np.concatenate([ens.left[level], ens.right[level]])
        depth[level] = d
    return depth


def maybe_oblivious(ens) -> bool:
    """Whether every tree of ``ens`` has all its leaves at one depth (numpy only: what :func:`oblivious_layout`
    checks first, before it compares the splits of each level)."""
    def build():
        depth = node_depths(ens)
        leaf_depth = np.where(ens.left < 0, depth, -1)
        deepest = np.maximum.reduceat(leaf_depth, ens.tree_start[:-1])
        shallowest = np.minimum.reduceat(np.where(ens.left < 0, depth, np.iinfo(np.int64).max), ens.tree_start[:-1])
        leaves = np.add.reduceat((ens.left < 0).astype(np.int64), ens.tree_start[:-1])
        return bool(np.all(deepest == shallowest) and np.all(deepest <= MAX_DEPTH)
                    and np.all(leaves == 2 ** np.minimum(deepest, 62)))
    return ens.derived("pdpx.plugins.trees.oblivious.maybe_oblivious", build)


def is_oblivious(ens) -> bool:
    """Whether :func:`oblivious_layout` takes ``ens`` (every tree oblivious: :func:`maybe_oblivious`, the nodes of
    each level splitting alike, at most :data:`MAX_SLOTS` leaves in all), read with numpy only so that the
    planner (:mod:`.plan`) decides before anything is compiled; kept with the ensemble."""
    def build():
        if not maybe_oblivious(ens):
            return False
        leaf = ens.left < 0
        if int(leaf.sum()) > MAX_SLOTS:
            return False
        inner = np.flatnonzero(~leaf)
        if not inner.size:
            return True
        # each internal node's tree and level
        depth = node_depths(ens)
        tree_of = np.repeat(np.arange(ens.n_trees), np.diff(ens.tree_start))
        key = tree_of[inner] * (MAX_DEPTH + 1) + depth[inner]
        order = np.argsort(key, kind="stable")
        nodes, key = inner[order], key[order]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        rep = np.repeat(nodes[first], np.diff(np.r_[first, len(nodes)]))  # the first node of each level
        return _alike(ens, nodes, rep)
    return ens.derived("pdpx.plugins.trees.oblivious.is_oblivious", build)


def _alike(ens, a, b) -> bool:
    """Whether nodes ``a`` split as nodes ``b`` (as :func:`_same_split`), numpy only."""
    for name in ("feature", "missing_left", "nan_mode"):
        arr = getattr(ens, name)
        if arr is not None and np.any(arr[a] != arr[b]):
            return False
    ta, tb = ens.threshold[a], ens.threshold[b]
    if np.any((ta != tb) & ~(np.isnan(ta) & np.isnan(tb))):
        return False
    if ens.cat_offset is None:
        return True
    ca, cb = ens.cat_offset[a] >= 0, ens.cat_offset[b] >= 0
    if np.any(ca != cb):
        return False
    for x, y in zip(a[ca], b[ca]):  # categorical splits: their sets' words, the shorter padded with zeros
        wx = ens.cat_words[ens.cat_offset[x]: ens.cat_offset[x] + ens.cat_nwords[x]]
        wy = ens.cat_words[ens.cat_offset[y]: ens.cat_offset[y] + ens.cat_nwords[y]]
        n = max(len(wx), len(wy))
        if np.any(np.pad(wx, (0, n - len(wx))) != np.pad(wy, (0, n - len(wy)))):
            return False
    return True


def static_oblivious(ens):
    """The oblivious layout of ``ens`` (a tuple as :func:`oblivious_layout`), or None; kept with the ensemble."""
    def build():
        if not maybe_oblivious(ens):
            return None
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
    num_feat, num_thr, num_miss = numeric_tables(n_levels)
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
                add_numeric(n_num, node, feature, thr_lt, miss_eff, num_feat, num_thr, num_miss)
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
              X, c0, nb, routing, go):
    """bits[r] = the leaf bits row c0 + r decides in tree t (target bits 0; ``go``: scratch of
    :func:`.routing.special_block`)."""
    for r in range(BLOCK):
        bits[r] = 0
    for k in range(num_ptr[t], num_ptr[t + 1]):
        f = num_feat[k]
        th = num_thr[k]
        ms = num_miss[k]
        sh = num_bit[k]
        for r in range(BLOCK):
            x = Xb[f, r]
            go_left = numeric_left(x, th, ms)
            bits[r] |= (1 - np.int64(go_left)) << sh
    for k in range(spec_ptr[t], spec_ptr[t + 1]):
        special_block(X, c0, nb, spec_node[k], routing, go)
        sh = spec_bit[k]
        for r in range(nb):
            if not go[r]:
                bits[r] |= np.int64(1) << sh


@njit(cache=True, nogil=True)
def oblivious_walk(X, row_weight, slot_ptr, num_ptr, num_feat, num_thr, num_miss, num_bit, spec_ptr, spec_node,
                   spec_bit, routing, per_row, pat_ptr, cor_ptr, cor_pos, val_ptr, val, out):
    """Each row's own leaf bits per tree, added into ``out``, block by block (``routing``:
    :class:`.prep.Routing`).

    ``per_row`` False: ``out[0, slot_ptr[t] + bits]`` += the row's weight (per tree, the
    weighted number of rows per own-bits pattern). True: the difference arrays of the
    rows' margins, ``out[cell, row]``. The leaves of a tree that share their target
    bits share their boxes, so the corner positions of a (tree, target pattern) ``q``
    are the same for every row (``cor_pos[cor_ptr[q]:cor_ptr[q + 1]]``); only the
    value changes: corner ``j`` of leaf ``L`` (own bits | pattern) adds
    ``val[val_ptr[q] + L * nc + j]`` (see :func:`pattern_tables`), one update over
    the block's rows per corner.
    """
    n = X.shape[0]
    n_trees = slot_ptr.shape[0] - 1
    Xb = np.empty((X.shape[1], BLOCK))
    bits = np.empty(BLOCK, dtype=np.int64)
    go = np.empty(BLOCK, dtype=np.bool_)
    for c0 in range(0, n, BLOCK):
        nb = min(BLOCK, n - c0)
        load_block(X, c0, c0 + nb, Xb)
        for t in range(n_trees):
            _own_bits(t, Xb, bits, num_ptr, num_feat, num_thr, num_miss, num_bit, spec_ptr, spec_node, spec_bit, X, c0,
                      nb, routing, go)
            if not per_row:
                base = slot_ptr[t]
                for r in range(nb):
                    out[0, base + bits[r]] += row_weight[c0 + r]
                continue
            for q in range(pat_ptr[t], pat_ptr[t + 1]):
                v0 = val_ptr[q]
                nc = cor_ptr[q + 1] - cor_ptr[q]
                for j in range(nc):
                    dst = out[cor_pos[cor_ptr[q] + j]]
                    for r in range(nb):
                        dst[c0 + r] += val[v0 + bits[r] * nc + j]


@njit(cache=True)
def pattern_tables(slot_ptr, pat_ptr, pats, own_mask, cptr, cpos, cval):
    """Corner positions per (tree, target pattern) and their values by leaf (see :func:`oblivious_walk`).

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

    def __init__(self, prep, static, products: bool = False):
        self.prep = prep
        self.products = products  # the plan's link "products" (:mod:`.plan`): an average of one margin's exp
        ens = prep.ens
        st = prep.static
        self.depth, self.level_ptr, self.level_node, self.slot_ptr, self.slot_node = static
        (self.num_ptr, self.num_feat, self.num_thr, self.num_miss, self.num_bit, self.spec_ptr, self.spec_node,
         self.spec_bit, self.pat_ptr, self.pats, self.own_mask) = request_layout(
            self.depth, self.level_ptr, self.level_node, self.slot_ptr, self.slot_node, prep.tgt,
            np.ascontiguousarray(st.nodes[:, 3]), ens.feature, st.thr_lt, st.miss_eff, prep.leaf_mask)
        self._corners = {}
        self.quantized = None  # the numeric levels' byte tests (:func:`.products.quantize_levels`), on first use

    def corners(self, factor: float = 1.0):
        """Difference-array updates per (tree, pattern), values times ``factor`` (built on first use: only
        per-row sums need them)."""
        if factor not in self._corners:
            tree_of = np.repeat(np.arange(self.prep.ens.n_trees, dtype=np.int64), np.diff(self.slot_ptr))
            corners = self.prep.scaled_corners("oblivious", lambda: (self.slot_node, tree_of), factor)
            self._corners[factor] = pattern_tables(self.slot_ptr, self.pat_ptr, self.pats, self.own_mask, *corners)
        return self._corners[factor]

    def _bits_args(self):
        return (self.slot_ptr, self.num_ptr, self.num_feat, self.num_thr, self.num_miss, self.num_bit, self.spec_ptr,
                self.spec_node, self.spec_bit, self.prep.routing)

    def average_sum(self, X, row_weight, unit, threads):
        """Difference array (n_margins * n_cells): the ``row_weight``-weighted sum over the rows of X of their
        margins."""
        counts = counts_by_bytes(self, X, row_weight, threads)  # numeric levels as byte tests where they fit
        if counts is None:
            args = self._bits_args()
            n_slots = int(self.slot_ptr[-1])

            def part(r0, r1):
                out = np.zeros((1, n_slots))
                oblivious_walk(X[r0:r1], row_weight[r0:r1], *args, False, *NO_PATTERNS, out)
                return out[0]

            counts = sum(run(part, len(X), threads))
        # leaf L of tree t is reached by the rows whose own bits are L's own bits
        sizes = np.diff(self.slot_ptr)
        tree_of = np.repeat(np.arange(len(sizes)), sizes)
        leaf = np.arange(self.slot_ptr[-1]) - self.slot_ptr[tree_of]
        per_node = np.zeros(self.prep.ens.n_nodes)
        per_node[self.slot_node] = counts[self.slot_ptr[tree_of] + (leaf & self.own_mask[tree_of])]
        per_node[self.prep.leaf_mask < 0] = 0.0
        return scatter_boxes(per_node, *self.prep.box_args())

    def rows(self, X, row_weight, threads, fin, ice_row0):
        """(K, n_cells): weighted sums of the rows' outputs; ICE into ``fin.ice``.

        The kernel gives the difference arrays of the rows' margins, a slice of rows at a
        time; :func:`.rows.finish` integrates them and applies the link and the outputs
        as whole-array numpy operations (vectorised exp). An average of one margin's exp
        or logistic response takes the products of :mod:`.products` when they fit.
        """
        link, outputs = fin.link, fin.outputs
        if self.products:  # the plan's choice; None when the byte tests or the range do not fit
            fused = products_sums(self, X, row_weight, threads, fin.grid_shape, fin.factor, fin.start[0],
                                  link != "exp")
            if fused is not None:
                if link != "binary_logistic":
                    return np.repeat(fused[None, :], len(outputs), axis=0)
                return np.stack([row_weight.sum() - fused if k == 0 else fused for k in outputs])
        args = (*self._bits_args(), True, self.pat_ptr, *self.corners(fin.factor))
        size = len(fin.start) * self.prep.n_cells

        def margins(s0, s1):
            out = np.zeros((size, s1 - s0))
            oblivious_walk(X[s0:s1], row_weight[s0:s1], *args, out)
            return out

        return fin.sums(margins, X.shape[0], row_weight, threads, ice_row0)


#: (pat_ptr, cor_ptr, cor_pos, val_ptr, val) of no pattern: what :func:`oblivious_walk` takes when it counts rows
NO_PATTERNS = (np.zeros(1, dtype=np.int64),) * 2 + (np.zeros(0, dtype=np.int64),) * 2 + (np.zeros(0),)


def plan(prep, required: bool = False, products: bool = False) -> Oblivious | None:
    """Oblivious kernels for a prepared request, or None when a tree is not oblivious; ``products``: the plan
    takes the products of :mod:`.products` for its average (link ``"products"`` of :class:`.plan.Plan`)."""
    static = static_oblivious(prep.ens)
    if static is None:
        return None
    return Oblivious(prep, static, products)


def _uses(plan) -> tuple:
    if not plan.per_row:
        return ("products", plan.regions, "scatter")
    exp = ("products.corners",) if plan.response_link in ("logistic", "binary_logistic", "exp") else ()
    return ("products", plan.regions, "oblivious.corners") + plan.finish + exp


#: This module's kernels (:mod:`.records`): the layouts and the walk for ensembles of oblivious trees, and the
#: corner tables of the rows' margins.
RECORDS = (
    KernelRecord("oblivious", "oblivious", "rows",
                 {"oblivious_layout": 1.3, "request_layout": 1.0, "oblivious_walk": 1.4},
                 fits=lambda ens, budget, order: is_oblivious(ens), uses=_uses, family="oblivious",
                 cases=(Case(kernel="oblivious", depth=2), Case(kernel="oblivious", depth=2, kind="both"),
                        Case(kernel="oblivious", depth=9, grids=SORTED))),  # deeper than a byte: the float walk
    KernelRecord("oblivious.corners", "oblivious", "shared", {"pattern_tables": 0.6}, family="oblivious"),
)
