"""Every row's ICE curve averaged over a feature's grid, for several features in one pass, without the curves.

Friedman's overall H (:mod:`pdpx.explain.interaction`) needs, for a feature ``j``
and every row ``i``, the row's ICE curve over ``j``'s grid averaged with given
shares ``s_g`` of the grid points (there: the data's distribution of ``x_j``)::

    mean_j(i) = sum_g s_g f(g, x_i,-j)

For a response that is a sum of leaf values (regression, margins, forest
probabilities), ``f(g, x_i,-j) = base + sum_L v_L [g passes L's conditions on j]
[x_i passes L's conditions on the other features]``, so::

    mean_j(i) = base + sum_L v_L m_j(L) [x_i passes L's conditions on every feature but j]

where ``m_j(L) = sum_g s_g [g in L's grid region]`` is computed once per leaf from
the regions ``exact`` uses (:func:`.prep.prepare`: float32 rounding, missing values,
category sets). The leaves a row passes on every feature but ``j`` are the leaf-set
words ``pre[a] & suf[a + 1]`` of the counts' gather
(:func:`.counts_kernels.gather_leafsets`), and the leaf the row reaches is
``pre[q]``. So one pass over the rows gives ``mean_j`` at every row for every
feature at once, and the response ``f(x_i)`` itself, at about the cost of one
order-1 gather; the (rows x grid points) ICE curves are never formed.

Only trees of at most 64 leaves (one word of leaf bits) and responses that are sums
of leaf values qualify; :func:`curve_means` returns None otherwise, and the caller
computes the ICE curves.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ...core.compiler import njit
from ...core.ir import TreeModel
from ...core.threads import in_threads, thread_count
from ...core.treesum import TreeSum
from .counts_kernels import leaf_words, word_buffers
from .kernels import load_block
from .records import Case, KernelRecord
from .registry import ran
from .routing import BLOCK
from .rows import spans

#: Bytes of encoded rows per chunk at most (as ``engine.MAX_CHUNK_BYTES``).
MAX_CHUNK_BYTES = 64 * 2**20


@njit(cache=True, nogil=True)
def means_walk(X, r0, r1, masks, num_lf, spec_lf, q, routing, jl, tree_margin, lv, vm, F, D):
    """Rows ``r0:r1`` of X (``r0`` a multiple of ``BLOCK``), each tree ``t`` adding to margin ``m = tree_margin[t]``:
    ``F[m, r] +=`` the value of the leaf row ``r`` reaches; ``D[k, m, r] +=`` the sum of ``vm[k, leaf]`` over the
    leaves whose conditions on every feature but the tree-local feature ``a`` with ``jl[t, a] == k`` the row
    passes, less the reached leaf's value.

    ``lv[slot]``: leaf slot ``t * 64 + j``'s value (tree weight included), ``vm[k, slot]``: the same times
    ``m_k`` of the leaf. The leaf words are :func:`.counts_kernels.leaf_words`, as the counts' gather uses them
    (``masks``: the trees' :class:`.leafsets.NodeMasks`, ``routing``: :class:`.prep.Routing`).
    """
    (init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r, spec_ptr, spec_node, spec_keep_l,
     spec_keep_r) = masks
    n_trees = init.shape[0]
    one = np.uint64(1)
    Xb, P, pre, suf = word_buffers(X.shape[1], jl.shape[1])
    own = np.empty(BLOCK)
    for c0 in range(r0, r1, BLOCK):
        c1 = min(r1, c0 + BLOCK)
        nb = c1 - c0
        load_block(X, c0, c1, Xb)
        for t in range(n_trees):
            qt = q[t]
            mt = tree_margin[t]
            leaf_words(t, Xb, X, c0, nb, init, num_ptr, num_feat, num_thr, num_miss, num_keep_l, num_keep_r, num_lf,
                       spec_ptr, spec_node, spec_keep_l, spec_keep_r, spec_lf, qt, routing, P, pre, suf)
            base = t * 64
            Fm = F[mt]
            for r in range(nb):
                v = lv[base + trailing_zeros(pre[qt, r])]
                own[r] = v
                Fm[c0 + r] += v
            for a in range(qt):
                k = jl[t, a]
                if k < 0:
                    continue
                vk = vm[k]
                Dk = D[k, mt]
                for r in range(nb):
                    acc = -own[r]
                    bits = pre[a, r] & suf[a + 1, r]
                    while bits:
                        acc += vk[base + trailing_zeros(bits)]
                        bits &= bits - one
                    Dk[c0 + r] += acc


def available(tm) -> bool:
    """Whether :func:`curve_means` can compute on ``tm`` (numpy only: nothing is compiled to tell): the
    planner's :func:`.plan.means_available`."""
    from .plan import means_available

    return means_available(tm)


def curve_means(tm, requests: list, shares: list, n_jobs=None, memory_budget: int = 256 << 20):
    """``([mean_k (len(outputs), n) per request], f (len(outputs), n))``, or None when ``tm`` does not qualify.

    ``requests``: 1-way requests on the same rows, response and outputs (their features, grids and
    categorical flags are read; the rows and options of the first); ``shares[k]`` (n_grid,): the weights of
    request ``k``'s grid points, summing to 1. ``mean_k[:, i] = sum_g shares[k][g] f(g, x_i,-j)``, and ``f`` the
    response at each row, both on the requested outputs.
    """
    if not requests or not available(tm):
        return None
    outputs = np.asarray(requests[0].outputs, dtype=np.int64)
    means, f = _margins(tm, requests, shares, n_jobs, memory_budget)
    return [m[outputs] for m in means], f[outputs]


def _margins(tm, requests, shares, n_jobs, budget):
    """(per request (M, n) or None where its share is None, (M, n)) on every output of ``tm`` (its margins, or a
    TreeSum's outputs)."""
    if not isinstance(tm, TreeSum):
        return _one(tm, requests, shares, n_jobs, budget)
    n = len(requests[0].X)
    f = np.repeat(np.asarray(tm.offset, dtype=np.float64)[:, None], n, axis=1)
    means = [None if s is None else f.copy() for s in shares]
    for term in tm.terms:
        cols = term.columns
        X = requests[0].X if cols is None else requests[0].X.iloc[:, cols]
        present = [k for k, r in enumerate(requests)
                   if shares[k] is not None and (cols is None or r.features[0] in cols)]
        if present:
            subs = [replace(requests[k], X=X, features=[requests[k].features[0] if cols is None
                                                        else cols.index(requests[k].features[0])])
                    for k in present]
            sub_shares = [shares[k] for k in present]
        else:  # the member reads none of the features: only its prediction is needed
            subs, sub_shares = [replace(requests[0], X=X)], [None]
        got, f_t = _margins(term.model, subs, sub_shares, n_jobs, budget)
        W = np.asarray(term.weights, dtype=np.float64)
        f_w = W @ f_t
        f += f_w
        mine = dict(zip(present, got))
        for k, m in enumerate(means):
            if m is not None:  # a member not reading feature k: its own prediction in every mean
                m += W @ mine[k] if k in mine else f_w
    return means, f


def _one(tm: TreeModel, requests, shares, n_jobs, budget):
    from .counts import leafset_features, leafset_layout
    from .engine import encoded_chunk
    from .leafsets import node_masks
    from .prep import static_layout

    ran("means")
    ens = tm.ensemble
    st = static_layout(ens)
    ls, (num_lf, spec_lf, q, _lord) = leafset_layout(ens, st)
    slot_node, masks = ls[2], node_masks(ls)
    _, lfeat = leafset_features(ens, st)
    M = int(ens.n_margins)
    wanted = [(k, r, s) for k, (r, s) in enumerate(zip(requests, shares)) if s is not None]
    jl = np.full(lfeat.shape, -1, dtype=np.int64)
    m_slot = np.zeros((max(1, len(wanted)), len(slot_node)))
    for i, (_, req, share) in enumerate(wanted):
        jl[lfeat == int(req.features[0])] = i
        m_node = _leaf_shares(tm, req, share)
        m_slot[i] = np.where(slot_node >= 0, m_node[np.maximum(slot_node, 0)], 0.0)
    X = requests[0].X
    n = len(X)
    F = np.zeros((M, n))
    D = np.zeros((len(m_slot), M, n))
    passes = [(tree_margin, lv, np.ascontiguousarray(m_slot * lv)) for tree_margin, lv in leaf_passes(ens, slot_node)]
    threads = thread_count(n_jobs)
    chunk = int(max(1, min(n, min(budget // 2, MAX_CHUNK_BYTES) // (8 * max(1, X.shape[1]) * 3))))
    for r0 in range(0, n, chunk):
        r1 = min(n, r0 + chunk)
        Xc = encoded_chunk(tm, X.iloc[r0:r1])
        Fc, Dc = F[:, r0:r1], D[:, :, r0:r1]  # views: each span writes its own rows
        for tree_margin, lv, vm in passes:
            def part(span, Xc=Xc, Fc=Fc, Dc=Dc, tree_margin=tree_margin, lv=lv, vm=vm):
                means_walk(Xc, span[0], span[1], masks, num_lf, spec_lf, q, st.routing, jl, tree_margin, lv, vm, Fc,
                           Dc)

            in_threads(part, spans(r1 - r0, threads))
    F += ens.base_score.astype(np.float64)[:, None]
    means = [None] * len(requests)
    for i, (k, _, _) in enumerate(wanted):
        means[k] = F + D[i]
    return means, F


def leaf_passes(ens, slot_node) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(tree_margin, lv)`` per walk of the rows: the margin each tree adds to, and each leaf slot's value (times
    its tree's weight; 0 for empty slots). One walk when every tree adds to one margin (one margin, or one tree
    per margin and round); one per margin when trees carry a value for every margin (forest classifiers)."""
    M = int(ens.n_margins)
    used = np.flatnonzero(slot_node >= 0)
    node = slot_node[used]
    tree = used // 64
    tw = ens.effective_tree_weight()
    group = np.asarray(ens.tree_group, dtype=np.int64)
    if M == 1 or np.all(group >= 0):
        lv = np.zeros(len(slot_node))
        lv[used] = tw[tree] * ens.value[node, 0]
        return [(np.maximum(group, 0), lv)]
    out = []
    for m in range(M):
        lv = np.zeros(len(slot_node))
        vec = group[tree] < 0
        lv[used[vec]] = tw[tree[vec]] * ens.value[node[vec], m]
        mine = group[tree] == m
        lv[used[mine]] = tw[tree[mine]] * ens.value[node[mine], 0]
        out.append((np.full(ens.n_trees, m, dtype=np.int64), lv))
    return out


def _leaf_shares(tm: TreeModel, req, share: np.ndarray) -> np.ndarray:
    """Per node: ``m(L) = sum_g share[g] [grid point g reaches leaf L]`` (0 at internal and unreached nodes)."""
    from .prep import prepare

    prep = prepare(tm, req)
    _, leaf_mask, box_ptr, box_lo, box_hi = prep.regions()
    S = np.concatenate([[0.0], np.cumsum(np.asarray(share, dtype=np.float64))])
    per_box = S[box_hi[:, 0]] - S[box_lo[:, 0]]
    n_masks = len(box_ptr) - 1
    per_mask = np.bincount(np.repeat(np.arange(n_masks), np.diff(box_ptr)), weights=per_box, minlength=n_masks)
    out = np.zeros(len(leaf_mask))
    leaves = leaf_mask >= 0
    out[leaves] = per_mask[leaf_mask[leaves]]
    return out


def _fits(ens, budget, order) -> bool:
    from .prep import static_layout

    return int(static_layout(ens).leaves_per_tree.max()) <= 64


#: This module's kernel (:mod:`.records`): the walk of every row's averaged ICE curves, for trees of at most 64
#: leaves; the layouts and leaf regions it shares with the counts and ``exact``.
RECORDS = (
    KernelRecord("means", "curve_means", "means", {"means_walk": 2.0}, fits=_fits, family="counts",
                 uses=lambda plan: ("leafsets.layout", "counts.layout", "counts.locals", "intervals", "masks"),
                 cases=(Case(run="means"),)),
)
