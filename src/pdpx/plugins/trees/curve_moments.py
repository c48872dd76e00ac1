"""Moments over rows of every row's ICE curve, for several features in one pass, without holding the curves.

:func:`pdpx.heterogeneity` needs, for each feature ``j`` with grid ``z_1 .. z_G`` and
every row ``i``, the row's ICE curve ``f(z_g, x_i,-j)`` centered on its own mean over the
grid, and the weighted mean and spread of those centered curves across the rows. A tree's
contribution to the curve of row ``i`` depends only on the leaves the row reaches when
``x_j`` is free: the leaf-set words of the counts' gather (:func:`.counts_kernels.leaf_words`)
give them, ``pre[a] & suf[a + 1]`` for the tree-local feature ``a`` that is ``j``. Each
such leaf adds its value over its grid region for ``j`` (the regions ``exact`` uses:
:func:`.prep.prepare`, float32 rounding, missing values, category sets), into a
difference array per row and feature. The regions of those leaves partition the grid, so
only the leaves other than the one the row reaches need an update, by their value less the
reached leaf's (which every tree adds at every grid point, with the row's prediction): a
tree adds nothing for a feature that is not on the row's path. So one walk over the rows, at about the cost
of an order-1 gather, gives every row's margins on every requested feature's grid. A
block of rows at a time, they are integrated along the grid, the link is applied
(identity, exp, logistic, softmax), the curves are centered on their own means, and
their weighted sums are added to per-thread accumulators; the (rows x grid points)
curves are never held beyond one block.

The sums are taken about a shift (each thread's first row's centered curve), so that
the variance ``sum w (c - shift)^2 / W - (sum w (c - shift) / W)^2`` does not cancel
catastrophically; the threads' and chunks' moments are merged with Chan et al.'s
pairwise update. Only plain tree models (no sum of several) whose trees have at most 64
leaves qualify: :func:`curve_moments` returns None otherwise, and the caller computes
the curves.
"""

from __future__ import annotations

import math

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ...core.compiler import njit
from ...core.ir import TreeModel
from ...core.threads import in_threads, thread_count
from .counts_kernels import leaf_words, word_buffers
from .kernels import load_block
from .records import Case, KernelRecord
from .registry import ran
from .routing import BLOCK
from .rows import spans

#: Bytes of encoded rows per chunk at most (as ``engine.MAX_CHUNK_BYTES``).
MAX_CHUNK_BYTES = 64 * 2**20
#: The links as the kernel numbers them.
LINK_CODES = {"identity": 0, "exp": 1, "logistic": 2, "binary_logistic": 3, "softmax": 4}


@njit(cache=True, inline="always")
def _sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(cache=True, inline="always")
def respond_block(z, G, nb, link, scale, outputs, resp):
    """``resp[o, g, r]``: output ``outputs[o]`` of the margins ``z[:, g, r]`` under ``link`` (codes of
    :data:`LINK_CODES`, as :func:`pdpx.core.ir.apply_link`)."""
    M = z.shape[0]
    K = outputs.shape[0]
    if link == 4:  # softmax over the margins
        for g in range(G):
            for r in range(nb):
                top = -np.inf
                for m in range(M):
                    top = max(top, scale * z[m, g, r])
                tot = 0.0
                for m in range(M):
                    tot += math.exp(scale * z[m, g, r] - top)
                for o in range(K):
                    resp[o, g, r] = math.exp(scale * z[outputs[o], g, r] - top) / tot
        return
    for o in range(K):
        m = 0 if link == 3 else outputs[o]
        for g in range(G):
            for r in range(nb):
                v = z[m, g, r]
                if link == 0:
                    resp[o, g, r] = v
                elif link == 1:
                    resp[o, g, r] = math.exp(scale * v)
                else:
                    p = _sigmoid(scale * v)
                    resp[o, g, r] = 1.0 - p if (link == 3 and outputs[o] == 0) else p


@njit(cache=True, inline="always")
def _add_box(v, box, at, k, s, bstart, bend, blo, bhi, D):
    """Add ``v`` over a leaf's box on the grid into the row's difference array at ``D[at:]`` (grid point ``g`` at
    ``at + g * BLOCK``): ``box`` is :func:`_tree_tables`' packed ``lo + 32768 hi``, or -2: read
    ``bstart[k, s]:bend[k, s]`` of ``blo``, ``bhi``."""
    if box >= 0:  # one run of grid points (sorted grids): the tree's own small table
        D[at + (box & 32767) * BLOCK] += v
        D[at + (box >> 15) * BLOCK] -= v
        return
    for b in range(bstart[k, s], bend[k, s]):
        D[at + blo[b] * BLOCK] += v
        D[at + bhi[b] * BLOCK] -= v


@njit(cache=True, inline="always")
def add_moments(k, G, nb, resp, rmean, w, S1, S2, SP, shift, have_shift):
    """Feature ``k``'s block of curves ``resp[o, g, r]`` (``nb`` rows, ``G`` grid points) centered on each row's
    mean and added to the weighted sums about ``shift[k]`` (set from the block's first row if not yet)."""
    K = resp.shape[0]
    for o in range(K):
        for r in range(nb):
            rmean[o, r] = 0.0
        for g in range(G):
            for r in range(nb):
                rmean[o, r] += resp[o, g, r]
        for r in range(nb):
            rmean[o, r] /= G
    if not have_shift[k]:
        for o in range(K):
            for g in range(G):
                shift[k, o, g] = resp[o, g, 0] - rmean[o, 0]
        have_shift[k] = True
    for o in range(K):
        for g in range(G):
            sh = shift[k, o, g]
            s1 = 0.0
            s2 = 0.0
            sp = 0.0
            for r in range(nb):
                f = resp[o, g, r]
                d = f - rmean[o, r] - sh
                wd = w[r] * d
                s1 += wd
                s2 += wd * d
                sp += w[r] * f
            S1[k, o, g] += s1
            S2[k, o, g] += s2
            SP[k, o, g] += sp


@njit(cache=True, inline="always")
def write_curves(k, G, nb, resp, rmean, out, rowstats, at):
    """Feature ``k``'s block of curves ``resp[o, g, r]`` centered on each row's mean ``rmean[o, r]`` into
    ``out[k, at + r, o * G + g]``, the means into ``rowstats[k, o, at + r]`` and the sum of the centered curve's
    squares over outputs and grid points into ``rowstats[k, K, at + r]``."""
    K = resp.shape[0]
    for r in range(nb):
        sq = 0.0
        for o in range(K):
            mu = rmean[o, r]
            rowstats[k, o, at + r] = mu
            for g in range(G):
                d = resp[o, g, r] - mu
                out[k, at + r, o * G + g] = d
                sq += d * d
        rowstats[k, K, at + r] = sq


@njit(cache=True, nogil=True)
def moments_walk(X, r0, r1, row_w, masks, num_lf, spec_lf, q, routing, jl, tree_margin, lv, tbox, tboxed,
                 bstart, bend, blo, bhi, n_grid, start, link, scale, outputs, S1, S2, SP, shift, have_shift, row0,
                 out, rowstats):
    """Rows ``r0:r1`` of X (``r0`` a multiple of ``BLOCK``) with weights ``row_w``: for each requested feature
    ``k`` (tree-local feature ``a`` of tree ``t`` is ``k`` when ``jl[t, a] == k``), output ``o`` and grid point
    ``g < n_grid[k]``, adds ``sum_r w_r d``, ``sum_r w_r d^2`` (into ``S1``, ``S2``; ``d = c - shift[k, o, g]``,
    ``c`` the row's curve centered on its mean over the grid) and ``sum_r w_r f`` (into ``SP``; ``f`` the curve).

    ``tree_margin[p, t]`` / ``lv[p, slot]``: per walk ``p`` of :func:`.curve_means.leaf_passes`, the margin tree
    ``t`` adds to and leaf slot ``t * 64 + j``'s value; ``tbox[t, a, j]``: leaf ``j`` of tree ``t`` on the grid of
    its tree-local feature ``a`` (:func:`_tree_tables`), its one box ``[lo, hi)`` packed as ``lo + 32768 hi`` in the
    tree's own small table (what a walk over the tree's rows reads stays in cache), ``lo = hi = G`` for none (a
    no-op), -2 for several, read then from ``bstart[k, slot]:bend[k, slot]`` of the flat ``blo``, ``bhi``;
    ``tboxed[t, a]``: the bits of the leaves with a box (a leaf whose region holds no grid point moves no curve: it
    is never visited); ``start``: the base score per margin. ``shift`` is set from the first row when
    ``have_shift[k]`` is False. When ``out`` has rows, each row's centered curve is also written
    (:func:`write_curves`: row ``r`` of X at ``row0 + r``).

    Per block of rows and tree, feature by feature: the rows whose word of leaves other than their own is not
    empty (those whose path tests the feature) are one 64-bit mask from one vectorised pass over the block, and
    only those rows are visited, each adding its leaves straight into its column of the difference arrays (the
    rows' columns never collide).
    """
    (init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r, spec_ptr, spec_node, spec_keep_l,
     spec_keep_r) = masks
    n_trees = init.shape[0]
    n_pass = tree_margin.shape[0]
    M = start.shape[0]
    NK = bstart.shape[0]
    K = outputs.shape[0]
    Gmax = S1.shape[2]
    one = np.uint64(1)
    Xb, P, pre, suf = word_buffers(X.shape[1], jl.shape[1])
    F = np.zeros((M, BLOCK))
    D = np.zeros((NK, M, Gmax + 1, BLOCK))
    Dflat = D.reshape(-1)
    kbase = np.where(jl >= 0, jl * M * (Gmax + 1) * BLOCK, -1)  # where feature k's difference arrays start
    z = np.empty((M, Gmax, BLOCK))
    resp = np.empty((K, Gmax, BLOCK))
    rmean = np.empty((K, BLOCK))
    acc = np.empty(BLOCK)
    w = np.empty(BLOCK)
    v_own = np.zeros(BLOCK)
    word = np.empty(BLOCK, dtype=np.uint64)
    for c0 in range(r0, r1, BLOCK):
        c1 = min(r1, c0 + BLOCK)
        nb = c1 - c0
        valid = ~np.uint64(0) if nb == BLOCK else (one << np.uint64(nb)) - one
        load_block(X, c0, c1, Xb)
        for r in range(nb):
            w[r] = row_w[c0 + r]
        for t in range(n_trees):
            qt = q[t]
            leaf_words(t, Xb, X, c0, nb, init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r, num_lf,
                       spec_ptr, spec_node, spec_keep_l, spec_keep_r, spec_lf, qt, routing, P, pre, suf)
            slot0 = t * 64
            for p in range(n_pass):
                m = tree_margin[p, t]
                lvp = lv[p]
                for r in range(nb):
                    v = lvp[slot0 + trailing_zeros(pre[qt, r])]
                    v_own[r] = v
                    F[m, r] += v
                m_at = m * (Gmax + 1) * BLOCK
                for a in range(qt):
                    if kbase[t, a] < 0:
                        continue
                    boxed = tboxed[t, a]
                    rows = np.uint64(0)
                    for r in range(BLOCK):  # vectorised: the rows with another leaf to reach through feature a
                        bits = pre[a, r] & suf[a + 1, r] & ~pre[qt, r] & boxed
                        word[r] = bits
                        rows |= np.uint64(bits != 0) << np.uint64(r)
                    rows &= valid
                    at0 = kbase[t, a] + m_at
                    k = jl[t, a]
                    while rows:
                        r = trailing_zeros(rows)
                        rows &= rows - one
                        bits = word[r]
                        while bits:
                            j = trailing_zeros(bits)
                            bits &= bits - one
                            _add_box(lvp[slot0 + j] - v_own[r], tbox[t, a, j], at0 + r, k, slot0 + j, bstart, bend,
                                     blo, bhi, Dflat)
        for k in range(NK):
            G = n_grid[k]
            for m in range(M):
                for r in range(nb):
                    acc[r] = F[m, r] + start[m]
                for g in range(G):
                    for r in range(nb):
                        acc[r] += D[k, m, g, r]
                        D[k, m, g, r] = 0.0
                        z[m, g, r] = acc[r]
                for r in range(nb):
                    D[k, m, G, r] = 0.0
            respond_block(z, G, nb, link, scale, outputs, resp)
            add_moments(k, G, nb, resp, rmean, w, S1, S2, SP, shift, have_shift)
            if out.shape[1] > 0:
                write_curves(k, G, nb, resp, rmean, out, rowstats, row0 + c0)
        for m in range(M):
            for r in range(nb):
                F[m, r] = 0.0


def available(tm) -> bool:
    """Whether :func:`curve_moments` can compute on ``tm`` (numpy only): a plain tree model (not a sum of
    several) that fits this module's record."""
    return isinstance(tm, TreeModel) and _fits(tm.ensemble, 0, 0)


def curve_moments(tm, requests: list, n_jobs=None, memory_budget: int = 256 << 20, keep=None):
    """Per 1-way request (same rows, weights, response and outputs; their features and grids are read):
    ``(W, mean_f, mean_c, m2_c)`` over the rows, each array (len(outputs), n_grid): the weighted mean of the ICE
    curves, the weighted mean of the curves centered on their own means over the grid, and those centered
    curves' weighted sum of squared deviations from their mean; ``W`` the rows' total weight. None when ``tm``
    does not qualify (:func:`available`).

    ``keep``: optional ``(curves, row_stats)``, float64 arrays (n_requests, n_rows, n_outputs * G_max) and
    (n_requests, n_outputs + 1, n_rows), C-contiguous: request ``k``'s centered curve of row ``i`` is written into
    ``curves[k, i, o * G_k + g]`` (``G_k`` its grid's size), its mean over the grid into ``row_stats[k, o, i]``,
    and the sum of the centered curve's squares (over outputs and grid points) into ``row_stats[k, n_outputs, i]``.
    """
    if not requests or not available(tm):
        return None
    ran("moments")
    from .counts import leafset_features, leafset_layout
    from .curve_means import leaf_passes
    from .engine import encoded_chunk
    from .leafsets import node_masks
    from .prep import static_layout

    ens = tm.ensemble
    st = static_layout(ens)
    ls, (num_lf, spec_lf, q, _lord) = leafset_layout(ens, st)
    slot_node, masks = ls[2], node_masks(ls)
    _, lfeat = leafset_features(ens, st)
    jl = np.full(lfeat.shape, -1, dtype=np.int64)
    for k, req in enumerate(requests):
        jl[lfeat == int(req.features[0])] = k
    bstart, bend, blo, bhi, n_grid = _boxes(tm, requests, slot_node)
    passes = leaf_passes(ens, slot_node)
    tree_margin = np.ascontiguousarray(np.stack([p[0] for p in passes]))
    lv = np.ascontiguousarray(np.stack([p[1] for p in passes]))
    first = requests[0]
    outputs = np.asarray(first.outputs, dtype=np.int64)
    X = first.X
    n = len(X)
    w = np.ones(n) if first.sample_weight is None else np.asarray(first.sample_weight, dtype=np.float64)
    W = float(w.sum())
    if not W > 0:
        return None
    row_w = w / W
    NK, K, G = len(requests), len(outputs), int(n_grid.max())
    start = np.asarray(ens.base_score, dtype=np.float64)
    tbox, tboxed = _tree_tables(jl, bstart, bend, blo, bhi, n_grid, int(n_grid.max()))
    args = (masks, num_lf, spec_lf, q, st.routing, jl, tree_margin, lv, tbox, tboxed, bstart, bend, blo, bhi,
            n_grid, start,
            LINK_CODES[ens.link], float(ens.link_scale), outputs)
    out, rowstats = keep if keep is not None else (np.empty((NK, 0, 0)), np.empty((NK, K + 1, 0)))
    if keep is not None and (out.shape != (NK, n, K * G) or rowstats.shape != (NK, K + 1, n)
                             or not (out.flags.c_contiguous and rowstats.flags.c_contiguous)):
        raise ValueError(f"curve_moments: keep= needs C-contiguous arrays of shapes {(NK, n, K * G)} and "
                         f"{(NK, K + 1, n)}, got {out.shape} and {rowstats.shape}")
    threads = thread_count(n_jobs)
    chunk = int(max(1, min(n, min(memory_budget // 2, MAX_CHUNK_BYTES) // (8 * max(1, X.shape[1]) * 3))))
    parts = []
    for r0 in range(0, n, chunk):
        r1 = min(n, r0 + chunk)
        Xc = encoded_chunk(tm, X.iloc[r0:r1])
        wc = np.ascontiguousarray(row_w[r0:r1])

        def part(span, Xc=Xc, wc=wc, r0=r0):
            S1, S2, SP = np.zeros((NK, K, G)), np.zeros((NK, K, G)), np.zeros((NK, K, G))
            shift, have = np.zeros((NK, K, G)), np.zeros(NK, dtype=np.bool_)
            moments_walk(Xc, span[0], span[1], wc, *args, S1, S2, SP, shift, have, r0, out, rowstats)
            return float(wc[span[0]:span[1]].sum()), S1, S2, SP, shift

        parts += in_threads(part, spans(r1 - r0, threads))
    return _merged(parts, n_grid, W)


def _merged(parts, n_grid, W):
    """Per feature ``(W, mean_f, mean_c, m2_c)`` from the spans' sums about their shifts (Chan's update)."""
    tw, mean, m2, fsum = 0.0, None, None, None
    for w, S1, S2, SP, shift in parts:
        if w <= 0:
            continue
        m_c = shift + S1 / w
        q = S2 - S1 ** 2 / w
        if mean is None:
            tw, mean, m2, fsum = w, m_c, q, SP.copy()
            continue
        tot = tw + w
        delta = m_c - mean
        mean = mean + delta * (w / tot)
        m2 = m2 + q + delta ** 2 * (tw * w / tot)
        fsum += SP
        tw = tot
    out = []
    for k, G in enumerate(n_grid):
        out.append((W, fsum[k, :, :G] / tw, mean[k, :, :G], np.maximum(m2[k, :, :G], 0.0) * (W / tw)))
    return out


def _tree_tables(jl, bstart, bend, blo, bhi, n_grid, G: int) -> tuple[np.ndarray, np.ndarray]:
    """``(tbox, tboxed)``: ``tbox`` (n_trees, q_max, 64) int32: per tree, tree-local feature ``a`` and leaf ``j``, the
    leaf's one box on the feature's grid as ``lo + 32768 hi``; ``lo = hi = G`` (the grid's size: updates there are
    never read) where it has none, -2 where it has several (or the grid has more than 32,767 points), -1 where
    the feature is not requested. ``tboxed`` (n_trees, q_max) uint64: the bits of the leaves with a box; ``G``:
    the largest grid's size, ``n_grid``: each requested feature's."""
    n_trees, q_max = jl.shape
    t, a = np.nonzero(jl >= 0)
    k = jl[t, a]
    slots = (t * 64)[:, None] + np.arange(64)[None, :]  # (pairs, 64)
    first = bstart[k[:, None], slots]
    count = bend[k[:, None], slots] - first
    packed = (n_grid[k] * 32769)[:, None] + np.zeros(first.shape, dtype=np.int64)  # none: lo = hi = G (a no-op)
    one = count == 1
    packed[one] = blo[first[one]] + 32768 * bhi[first[one]]
    packed[count > 1] = -2
    if G >= 32768:
        packed[:] = -2
    tbox = np.full((n_trees, q_max, 64), -1, dtype=np.int32)
    tbox[t, a] = packed
    bit = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))
    tboxed = np.zeros((n_trees, q_max), dtype=np.uint64)
    tboxed[t, a] = np.bitwise_or.reduce(np.where(count > 0, bit[None, :], np.uint64(0)), axis=1)
    return tbox, tboxed


def _boxes(tm, requests, slot_node):
    """Each requested feature's leaf boxes on its grid, by leaf slot: ``bstart``, ``bend`` (NK, n_slots) into
    the flat ``blo``, ``bhi``, and the grid sizes ``n_grid`` (NK,)."""
    from .prep import prepare

    n_slots = len(slot_node)
    NK = len(requests)
    bstart = np.zeros((NK, n_slots), dtype=np.int64)
    bend = np.zeros((NK, n_slots), dtype=np.int64)
    lo, hi, n_grid, off = [], [], np.zeros(NK, dtype=np.int64), 0
    used = slot_node >= 0
    for k, req in enumerate(requests):
        prep = prepare(tm, req)
        _, leaf_mask, box_ptr, box_lo, box_hi = prep.regions()
        n_grid[k] = req.n_grid
        mask = np.full(n_slots, -1, dtype=np.int64)
        mask[used] = leaf_mask[slot_node[used]]
        have = mask >= 0
        bstart[k, have] = off + box_ptr[mask[have]]
        bend[k, have] = off + box_ptr[mask[have] + 1]
        lo.append(box_lo[:, 0])
        hi.append(box_hi[:, 0])
        off += len(box_lo)
    blo = np.ascontiguousarray(np.concatenate(lo), dtype=np.int64)
    bhi = np.ascontiguousarray(np.concatenate(hi), dtype=np.int64)
    return bstart, bend, blo, bhi, n_grid


def _fits(ens, budget, order) -> bool:
    from .prep import static_layout

    return ens.link in LINK_CODES and int(static_layout(ens).leaves_per_tree.max()) <= 64


#: This module's kernel (:mod:`.records`): the walk of every row's ICE curves' moments over the rows, for trees of at
#: most 64 leaves; the layouts and leaf regions it shares with the counts and ``exact``.
RECORDS = (
    KernelRecord("moments", "curve_moments", "moments", {"moments_walk": 4.0}, fits=_fits, family="counts",
                 uses=lambda plan: ("leafsets.layout", "counts.layout", "counts.locals", "intervals", "masks"),
                 cases=(Case(run="moments"),)),
)
