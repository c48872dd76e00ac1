"""Averages of ``exp`` and logistic responses of oblivious ensembles with no exp per (row, grid cell).

A non-linear link needs each row's response on every grid cell (the average of
probabilities is not the probability of the average). With
``E = exp(factor * (margin + base))`` the response is ``E`` (link ``exp``) or
``1 / (1 + E)`` (logistic links, ``factor = -scale``), and ``E`` is a product over
the trees of ``exp(factor * leaf value)``. So :func:`bytes_walk` runs the
difference arrays of :func:`.oblivious.oblivious_walk` in the multiplicative group:
a corner multiplies by ``exp(factor * corner value)`` (precomputed once per leaf), and
prefix products integrate them. The n x cells exps become a multiplication each; the
response and its weighted sum follow in the same pass over a block of rows, so no
(cells, rows) array is ever written out. Over the grid's last two axes that pass walks
the cells in order once: a cell's ``E`` is ``P(i, j) = P(i - 1, j) R(i, j)``, ``R`` the
running product of grid row ``i``'s factors, so only one grid row of running products
is kept, and on one or two axes only the cells some tree multiplies are read (earlier
axes of a 3-way grid take prefix products first). Four rows share one division
where the product of their ``1 + E`` cannot overflow, else two
(``w1 / x + w2 / y = (w1 y + w2 x) / (x y)``, and two such pairs over their product).

The rows' own leaf bits come from *quantized* inputs, as in CatBoost's own predict:
per feature that a non-target level tests, the row's value becomes a byte, the
number of that feature's thresholds at or below it, and a level's test is one byte
comparison (a feature whose levels send NaN both ways gets a byte for each way); the
bits of a tree fit a byte (depth at most 8). The linear averages' counts of rows per
own-bits pattern (:func:`bytes_walk` counting) use the same bytes. Requests this
does not fit (deeper trees, more than 254 thresholds on a feature, or leaves so large
that a partial product could leave the range of doubles) take the float kernels of
:mod:`.oblivious`, which are exact for all.
"""

from __future__ import annotations

import numpy as np

from ...core.compiler import njit
from .records import SORTED, Case, KernelRecord
from .routing import special_block
from .rows import run

#: rows per block (the fastest of 64, 128 and 256 on benchmarks/bench_catboost.py: 2-way 30 x 30 grid)
BLOCK = 128
#: partial sums per grid cell of the responses (a vector's worth of doubles: the adds run side by side)
LANES = 8

#: copies of the counts :func:`bytes_walk` adds rows into when it counts (4: a quarter of the adds each)
COUNT_COPIES = 4
#: most thresholds per feature that a byte holds (and one more value for NaN going right)
MAX_BINS = 254
#: deepest tree whose leaf bits fit a byte
MAX_DEPTH = 8
#: largest |factor * (partial margin)| the products may meet: exp stays a normal double well inside
PRODUCT_RANGE = 600.0
#: largest |factor * margin| for paired divisions: the product of two rows' ``1 + E`` stays finite
PAIR_RANGE = 300.0
#: the same for four rows over one division: the product of four rows' ``1 + E`` stays finite
QUAD_RANGE = 170.0


def quantize_levels(num_feat, num_thr, num_miss, num_bit, depth):
    """How the numeric levels test bytes, or None when they cannot.

    One byte row per feature and NaN direction that the levels use. Returns ``qfeat``
    (the feature of each byte row), ``cuts`` and ``cut_ptr`` (its sorted thresholds),
    ``nan_byte`` (the byte of NaN: 0 when those levels send NaN left, 255 when right), and
    per level ``lq`` (its byte row), ``lcut`` (goes right when the byte is above it) and
    ``lw`` (its bit).
    """
    if len(depth) and depth.max() > MAX_DEPTH or np.isnan(num_thr).any():
        return None
    key = num_feat * 2 + num_miss.astype(np.int64)
    order = np.lexsort((num_thr, key))
    ks, ts = key[order], num_thr[order]
    new = np.ones(len(ks), dtype=bool)
    new[1:] = (ks[1:] != ks[:-1]) | (ts[1:] != ts[:-1])
    keys, counts = np.unique(ks[new], return_counts=True)
    if len(counts) and counts.max() > MAX_BINS:
        return None
    cut_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    lq = np.searchsorted(keys, key).astype(np.int64)
    pair = np.empty(len(ks), dtype=np.int64)
    pair[order] = np.cumsum(new) - 1  # each level's (key, threshold) among the distinct ones
    # right iff x >= t_k iff (number of thresholds <= x) > k
    lcut = (pair - cut_ptr[lq]).astype(np.uint8)
    nan_byte = np.where(keys % 2 == 1, 0, 255).astype(np.uint8)
    return ((keys // 2).astype(np.int64), ts[new].astype(np.float64), cut_ptr, nan_byte, lq, lcut,
            (np.int64(1) << num_bit).astype(np.uint8))


def byte_tables(cuts, cut_ptr):
    """Per byte row, a table over ``4 m`` equal-width buckets between its first and last of ``m``
    thresholds: the number of thresholds at or below each bucket's start (``tab_ptr``, ``table``,
    ``scale``: buckets per unit)."""
    m = np.diff(cut_ptr)
    tab_ptr = np.concatenate([[0], np.cumsum(4 * m + 1)]).astype(np.int64)
    table = np.zeros(tab_ptr[-1], dtype=np.int64)
    scale = np.zeros(len(m))
    for q in range(len(m)):
        c = cuts[cut_ptr[q]:cut_ptr[q + 1]]
        if m[q] > 1 and c[-1] > c[0]:
            scale[q] = 4 * m[q] / (c[-1] - c[0])
            table[tab_ptr[q]:tab_ptr[q + 1]] = np.searchsorted(c, c[0] + np.arange(4 * m[q] + 1) / scale[q],
                                                               side="right")
    return tab_ptr, table, scale


def quantize(X, qfeat, cuts, cut_ptr, nan_byte, width):
    """(byte rows, width) bytes: the number of the row's feature thresholds at or below each row's value
    (NaN: ``nan_byte``); columns past the rows are 0. (The kernel computes them block by block.)"""
    Q = np.zeros((len(qfeat), width), dtype=np.uint8)
    _load_bytes(X, 0, X.shape[0], Q, qfeat, cuts, cut_ptr, nan_byte, *byte_tables(cuts, cut_ptr),
                np.empty((X.shape[1], width)))
    return Q


@njit(cache=True)
def merged_corners(slot_ptr, pat_ptr, cor_ptr, cor_pos, val_ptr, val):
    """Per tree, its corner positions once each (the corners of its patterns meet where their boxes do)
    and, per own-bits pattern of a row, the sum of the corner values at each: ``mpos_ptr``, ``mpos``,
    ``mval_ptr``, ``mval`` (tree ``t`` of ``n_leaves``, own bits ``L``, position ``j``:
    ``mval[mval_ptr[t] + j * n_leaves + L]``). Pattern ``q``'s value at (own bits ``L``, its corner ``j``)
    is ``val[val_ptr[q] + L * nc + j]``, ``nc`` its number of corners."""
    n_trees = slot_ptr.shape[0] - 1
    mpos_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    mval_ptr = np.zeros(n_trees + 1, dtype=np.int64)
    mpos = np.empty(cor_pos.shape[0], dtype=np.int64)  # each tree's positions, sorted, once each
    for t in range(n_trees):
        c0 = cor_ptr[pat_ptr[t]]
        c1 = cor_ptr[pat_ptr[t + 1]]
        u = mpos_ptr[t]
        if c1 > c0:
            srt = np.sort(cor_pos[c0:c1])
            mpos[u] = srt[0]
            u += 1
            for k in range(1, c1 - c0):
                if srt[k] != srt[k - 1]:
                    mpos[u] = srt[k]
                    u += 1
        mpos_ptr[t + 1] = u
        mval_ptr[t + 1] = mval_ptr[t] + (u - mpos_ptr[t]) * (slot_ptr[t + 1] - slot_ptr[t])
    mval = np.zeros(mval_ptr[n_trees])
    for t in range(n_trees):
        u = mpos[mpos_ptr[t]:mpos_ptr[t + 1]]
        n_leaves = slot_ptr[t + 1] - slot_ptr[t]
        for q in range(pat_ptr[t], pat_ptr[t + 1]):
            nc = cor_ptr[q + 1] - cor_ptr[q]
            for j in range(nc):
                local = np.searchsorted(u, cor_pos[cor_ptr[q] + j])
                dest = mval_ptr[t] + local * n_leaves
                src = val_ptr[q] + j
                for leaf in range(n_leaves):
                    mval[dest + leaf] += val[src + leaf * nc]
    mpos = mpos[:mpos_ptr[n_trees]].copy()
    return mpos_ptr, mpos, mval_ptr, mval


@njit(cache=True, inline="always")
def _load_bytes(X, c0, nb, Qb, qfeat, cuts, cut_ptr, nan_byte, tab_ptr, table, scale, Xb):
    """Qb[q, r] = the byte of row c0 + r in byte row q (0 past the rows).

    The rows are first copied column by column into ``Xb`` (n_features, width), so each
    byte row reads its feature's values one after another (a third of the time of reading
    them from the rows of X, 20 features apart). A byte row's constants are read once,
    before its loop over the rows (a store into the bytes could otherwise be any array's,
    for all the compiler knows).
    """
    for r in range(nb):
        for f in range(X.shape[1]):
            Xb[f, r] = X[c0 + r, f]
    for q in range(qfeat.shape[0]):
        k0 = cut_ptr[q]
        m = cut_ptr[q + 1] - k0
        row = Qb[q]
        if m == 0:
            for r in range(row.shape[0]):
                row[r] = 0
            continue
        first = cuts[k0]
        last = cuts[k0 + m - 1]
        t0 = tab_ptr[q]
        sc = scale[q]
        nanb = nan_byte[q]
        xs = Xb[qfeat[q]]
        # a value's byte: its bucket's count of thresholds at or below the bucket's start, corrected by a walk
        # over the thresholds (exact whatever the rounding of the bucket); NaN: the byte row's NaN byte
        for r in range(nb):
            x = xs[r]
            if np.isnan(x):
                row[r] = nanb
                continue
            if x < first:
                row[r] = 0
                continue
            if x >= last:
                row[r] = m
                continue
            k = table[t0 + min(4 * m, int((x - first) * sc))]
            while k > 0 and cuts[k0 + k - 1] > x:
                k -= 1
            while k < m and cuts[k0 + k] <= x:
                k += 1
            row[r] = k
        for r in range(nb, row.shape[0]):
            row[r] = 0


@njit(cache=True, inline="always")
def _byte_bits(t, Qb, bits, num_ptr, lq, lcut, lw, spec_ptr, spec_node, spec_bit, X, c0, nb, routing, go):
    """bits[r] = the leaf bits row c0 + r decides in tree t: a byte comparison per numeric level, the
    general rule for the others (:func:`.routing.special_block`; ``go``: its scratch)."""
    for r in range(BLOCK):
        bits[r] = 0
    for k in range(num_ptr[t], num_ptr[t + 1]):
        qr = Qb[lq[k]]
        cut = lcut[k]
        w = lw[k]
        for r in range(BLOCK):
            bits[r] |= (qr[r] > cut) * w
    for k in range(spec_ptr[t], spec_ptr[t + 1]):
        special_block(X, c0, nb, spec_node[k], routing, go)
        w = np.uint8(1 << spec_bit[k])
        for r in range(nb):
            if not go[r]:
                bits[r] |= w


@njit(cache=True, inline="always")
def _pair(row, wb, r, h):
    """Rows ``r`` and ``r + h`` of a block over one division: ``w1 / x1 + w2 / x2 = (w1 x2 + w2 x1) / (x1 x2)``
    with ``x = 1 + E``; returns the numerator and the denominator."""
    x = 1.0 + row[r]
    y = 1.0 + row[r + h]
    return wb[r] * y + wb[r + h] * x, x * y


@njit(cache=True, inline="always")
def _respond(row, wb, a, logistic, pair):
    """Add one cell's weighted responses of a block of rows (``row``: their ``E``) into ``a`` (LANES,):
    ``E``, ``1 / (1 + E)``, or ``1 / (1 + E)`` of ``pair`` (2 or 4) rows over one division
    (``w1 / x1 + w2 / x2 = (w1 x2 + w2 x1) / (x1 x2)``, and two such pairs over their product)."""
    if logistic and pair == 4:
        q = BLOCK // 4
        for r0 in range(0, q, LANES):
            for lane in range(LANES):
                n12, p12 = _pair(row, wb, r0 + lane, q)
                n34, p34 = _pair(row, wb, r0 + lane + 2 * q, q)
                a[lane] += (n12 * p34 + n34 * p12) / (p12 * p34)
    elif logistic and pair == 2:
        half = BLOCK // 2
        for r0 in range(0, half, LANES):
            for lane in range(LANES):
                num, den = _pair(row, wb, r0 + lane, half)
                a[lane] += num / den
    elif logistic:
        for r0 in range(0, BLOCK, LANES):
            for lane in range(LANES):
                a[lane] += wb[r0 + lane] / (1.0 + row[r0 + lane])
    else:
        for r0 in range(0, BLOCK, LANES):
            for lane in range(LANES):
                a[lane] += wb[r0 + lane] * row[r0 + lane]


@njit(cache=True, nogil=True)
def bytes_walk(X, qfeat, cuts, cut_ptr, nan_byte, tab_ptr, table, scale, row_weight, slot_ptr, num_ptr, lq, lcut, lw,
               spec_ptr, spec_node, spec_bit, routing, products, mpos_ptr, mpos, mval_ptr, eval_, grid_shape, e_base,
               logistic, pair, out):
    """Each row's own leaf bits per tree from its bytes, added into ``out``, block by block.

    ``products`` False: ``out[c, slot_ptr[t] + bits]`` += the row's weight, as
    :func:`.oblivious.oblivious_walk` counts, ``out`` holding :data:`COUNT_COPIES` (4) copies of the
    counts: four consecutive rows add to the four copies, so no add waits for the one before (the
    block's last ``nb % 4`` rows add to copy 0; the caller sums the copies). True: ``out[0, cell]``
    += the weighted sum over the rows of ``E`` (``logistic``: ``1 / (1 + E)``) on the grid, ``E``
    the product of the trees' ``exp`` factors (``eval_``, by merged corner) from ``e_base`` at the
    first cell.
    """
    n = X.shape[0]
    n_trees = num_ptr.shape[0] - 1
    d = grid_shape.shape[0]
    n_cells = 1
    for k in range(d):
        n_cells *= grid_shape[k]
    Qb = np.zeros((qfeat.shape[0], BLOCK), dtype=np.uint8)
    Xb = np.empty((X.shape[1], BLOCK))  # a block of rows, column by column
    bits = np.empty(BLOCK, dtype=np.uint8)
    go = np.empty(BLOCK, dtype=np.bool_)
    DT = np.ones((n_cells if products else 0, BLOCK))  # set back to 1 as the response reads it; cell 0
    if products:  # starts at e_base, which the prefix products carry to every cell
        for r in range(BLOCK):
            DT[0, r] = e_base
    acc = np.zeros((n_cells if products else 0, LANES))  # per cell, LANES partial sums
    wb = np.empty(BLOCK)
    # the grid as (outer, n0, n1), its last two axes (n0 = 1 for one axis): prefix products along the axes
    # before them, then within each outer slice a cell's E is P(i, j) = P(i - 1, j) * R(i, j), R the running
    # product of row i's factors up to j, so one pass over the cells in order computes every E and its
    # response with one grid row of running products (``col``) in cache; only the cells whose factor is not
    # 1 (``active``: those some tree multiplies, every cell once earlier axes spread them) are read from DT
    n1 = grid_shape[d - 1] if products else 1
    n0 = grid_shape[d - 2] if products and d >= 2 else 1
    n_outer = n_cells // (n0 * n1) if products else 0
    active = np.zeros(n_cells if products else 0, dtype=np.bool_)
    if products:
        active[0] = True
        for k in range(mpos.shape[0]):
            active[mpos[k]] = True
        if d > 2:
            active[:] = True
    col = np.empty((n1, BLOCK))
    running = np.empty(BLOCK)
    for c0 in range(0, n, BLOCK):
        nb = min(BLOCK, n - c0)
        for r in range(BLOCK):
            wb[r] = row_weight[c0 + r] if r < nb else 0.0
        _load_bytes(X, c0, nb, Qb, qfeat, cuts, cut_ptr, nan_byte, tab_ptr, table, scale, Xb)
        for t in range(n_trees):
            _byte_bits(t, Qb, bits, num_ptr, lq, lcut, lw, spec_ptr, spec_node, spec_bit, X, c0, nb, routing, go)
            if not products:
                base = slot_ptr[t]
                out0, out1, out2, out3 = out[0], out[1], out[2], out[3]
                for r in range(0, nb - 3, 4):
                    out0[base + bits[r]] += wb[r]
                    out1[base + bits[r + 1]] += wb[r + 1]
                    out2[base + bits[r + 2]] += wb[r + 2]
                    out3[base + bits[r + 3]] += wb[r + 3]
                for r in range(nb - nb % 4, nb):
                    out0[base + bits[r]] += wb[r]
                continue
            n_leaves = (mval_ptr[t + 1] - mval_ptr[t]) // max(1, mpos_ptr[t + 1] - mpos_ptr[t])
            for j in range(mpos_ptr[t + 1] - mpos_ptr[t]):
                row = DT[mpos[mpos_ptr[t] + j]]
                vals = eval_[mval_ptr[t] + j * n_leaves:mval_ptr[t] + (j + 1) * n_leaves]
                for r in range(BLOCK):
                    row[r] *= vals[bits[r]]
        if not products:
            continue
        inner = n_cells
        outer = 1
        for k in range(d - 2):  # prefix products along the axes before the last two
            size = grid_shape[k]
            inner //= size
            for o in range(outer):
                for i in range(1, size):
                    cur = o * size * inner + i * inner
                    for s in range(inner):
                        dst = DT[cur + s]
                        src = DT[cur - inner + s]
                        for r in range(BLOCK):
                            dst[r] *= src[r]
            outer *= size
        for o in range(n_outer):
            first = o * n0 * n1
            for j in range(n1):
                for r in range(BLOCK):
                    col[j, r] = 1.0
            for i in range(n0):
                for r in range(BLOCK):
                    running[r] = 1.0
                for j in range(n1):
                    c = first + i * n1 + j
                    if active[c]:  # its factor into the running product, and set back (cell 0: to e_base)
                        row = DT[c]
                        reset = e_base if c == 0 else 1.0
                        for r in range(BLOCK):
                            running[r] *= row[r]
                            row[r] = reset
                    cj = col[j]
                    for r in range(BLOCK):
                        cj[r] *= running[r]
                    _respond(cj, wb, acc[c], logistic, pair)
    for i in range(acc.shape[0]):
        s = 0.0
        for lane in range(LANES):
            s += acc[i, lane]
        out[0, i] += s


def products_sums(kern, X, row_weight, threads, grid_shape, factor: float, start: float, logistic: bool):
    """The ``row_weight``-weighted sums (n_cells,) of one margin's response by :func:`bytes_walk`'s products,
    or None when the request does not fit them (see the module's docstring). ``start``: the factor times
    the base score."""
    ens = kern.prep.ens
    n_dims = len(grid_shape)
    # a cell of a tree's difference array, and of its partial prefix sums, is at most 2**n_dims times the
    # tree's largest |leaf|; |factor * margin| at most the sum of those
    top = float((np.maximum.reduceat(np.abs(ens.value).max(axis=1), ens.tree_start[:-1])
                 * np.abs(ens.tree_weight)).sum())
    if abs(factor) * 2**n_dims * top + abs(start) > PRODUCT_RANGE:
        return None
    levels = _levels(kern)
    if levels is None:
        return None
    mpos_ptr, mpos, mval_ptr, mval = merged_corners(kern.slot_ptr, kern.pat_ptr, *kern.corners())
    reach = abs(factor) * top + abs(start)  # |factor * margin| at most
    pair = 4 if reach < QUAD_RANGE else (2 if reach < PAIR_RANGE else 1)
    products = (True, mpos_ptr, mpos, mval_ptr, np.exp(factor * mval), np.asarray(grid_shape, dtype=np.int64),
                float(np.exp(start)), bool(logistic), int(pair))
    return _walk(kern, X, row_weight, threads, levels, products, int(np.prod(grid_shape)))


def _walk(kern, X, row_weight, threads, levels, products: tuple, width: int) -> np.ndarray:
    """:func:`bytes_walk` over the rows of X shared among threads: the sum of the parts' ``out`` (``width``)."""
    (qfeat, cuts, cut_ptr, nan_byte, lq, lcut, lw), tables = levels
    args = (qfeat, cuts, cut_ptr, nan_byte, *tables)
    rest = (kern.slot_ptr, kern.num_ptr, lq, lcut, lw, kern.spec_ptr, kern.spec_node, kern.spec_bit, kern.prep.routing,
            *products)

    copies = 1 if products[0] else COUNT_COPIES

    def part(r0, r1):
        out = np.zeros((copies, width))
        bytes_walk(X[r0:r1], *args, row_weight[r0:r1], *rest, out)
        return out.sum(axis=0)

    return sum(run(part, len(X), threads))


#: Target sets whose byte tests an ensemble keeps (the oldest is dropped past this many)
KEEP_LEVELS = 64


def _levels(kern):
    """The request's byte tests (:func:`quantize_levels`) and their bucket tables (:func:`byte_tables`), or None
    when they do not fit. They depend only on the ensemble and which nodes split on a target feature, so the
    ensemble keeps them per target set (a call on the same feature set builds none)."""
    if kern.quantized is None:
        kept = kern.prep.ens.derived("pdpx.plugins.trees.products.levels", dict)
        key = np.flatnonzero(kern.prep.tgt >= 0).tobytes()
        hit = kept.get(key)
        if hit is None:
            levels = quantize_levels(kern.num_feat, kern.num_thr, kern.num_miss, kern.num_bit, kern.depth)
            hit = (levels, byte_tables(levels[1], levels[2])) if levels else ()
            if len(kept) >= KEEP_LEVELS:
                kept.pop(next(iter(kept)))
            kept[key] = hit
        kern.quantized = hit
    return kern.quantized or None


#: (products, mpos_ptr, mpos, mval_ptr, eval_, grid_shape, e_base, logistic, pair) of counting rows instead
NO_PRODUCTS = (False, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64),
               np.zeros(0), np.ones(1, dtype=np.int64), 1.0, False, 1)


def counts_by_bytes(kern, X, row_weight, threads):
    """(n_slots,) as the counts of :func:`.oblivious.oblivious_walk`, the levels tested on bytes; None when
    they do not fit."""
    levels = _levels(kern)
    if levels is None:
        return None
    return _walk(kern, X, row_weight, threads, levels, NO_PRODUCTS, int(kern.slot_ptr[-1]))


#: This module's kernels (:mod:`.records`): the walk on byte tests (products of exp factors, or counts of rows),
#: and the merged corners of a logistic or exp average.
RECORDS = (
    KernelRecord("products", "products", "shared", {"bytes_walk": 3.2}, family="oblivious"),
    KernelRecord("products.corners", "products", "shared", {"merged_corners": 2.1}, family="oblivious",
                 cases=(Case(kernel="oblivious", link="logistic", depth=2, grids=SORTED),  # products of exp factors
                        Case(kernel="oblivious", link="logistic", depth=2, kind="both", grids=SORTED))),
)
