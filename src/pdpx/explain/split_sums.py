"""The statistics of the regions' split search, per candidate code, in one compiled pass over a node's rows.

:func:`pdpx.regions` scores every split of a node's rows by every candidate feature from
sums per code of that feature (its bin between thresholds, or its level): the rows, their
weight, their sum of ``w q`` and of ``w c`` (:mod:`pdpx.explain.subgroups`). Summed with
one ``bincount`` per column and candidate, a node costs (3 + outputs x grid points) passes
over its rows per candidate. Here one numba pass over the node's rows adds each row's
statistics to its code's row of every candidate at once (the row's curve is read once), on
every core (each thread a share of the rows, its sums added after). :func:`region_sums` gives
the found regions' weights, mean curves and spreads in two passes over the rows.

The passes compile through pdpx's one compile helper (:func:`pdpx.core.compiler.njit`: cached
where numba may cache, else compiled in memory for the process), on first use, so importing
this module imports no numba; :func:`warm_up` compiles them for the argument types the
regions give them, and the warm-up (``python -m pdpx.plugins.trees.warmup``) calls it
(:data:`pdpx.core.compiler.ELSEWHERE`).
"""

from __future__ import annotations

import functools

import numpy as np

from ..core.compiler import njit
from ..core.threads import in_threads, thread_count

#: Rows a thread gets at least (fewer are not worth a thread).
MIN_ROWS_PER_THREAD = 20_000


def _sums_py(codes, cols, offsets, rows, w, wq, C, out):
    """``out[offsets[s] + codes[i, cols[s]]] += [1, w_i, wq_i, w_i C_i]`` for each row ``i`` of ``rows`` and
    candidate ``s``."""
    n_cands = cols.shape[0]
    KG = C.shape[1]
    for i in rows:
        wi = w[i]
        qi = wq[i]
        for s in range(n_cands):
            b = offsets[s] + codes[i, cols[s]]
            out[b, 0] += 1.0
            out[b, 1] += wi
            out[b, 2] += qi
            for g in range(KG):
                out[b, 3 + g] += wi * C[i, g]


def _regions_py(rid, R, w, C, rowmean, W, S1, SM, SS):
    """Per region ``r`` of the rows (``rid[i]``, ``0 <= rid < R``): weight ``W[r]``, ``S1[r] = sum w C`` (KG),
    ``SM[r, o] = sum w rowmean[o]`` and ``SS[r, o] = sum w |C_o - mean_r,o|^2`` (output ``o``'s slice of the
    curve, about the region's weighted mean: two passes, no cancellation)."""
    n, KG = C.shape
    K = rowmean.shape[0]
    G = KG // K
    for i in range(n):
        r = rid[i]
        wi = w[i]
        W[r] += wi
        for g in range(KG):
            S1[r, g] += wi * C[i, g]
        for o in range(K):
            SM[r, o] += wi * rowmean[o, i]
    mean = np.zeros((R, KG))
    for r in range(R):
        if W[r] > 0:
            for g in range(KG):
                mean[r, g] = S1[r, g] / W[r]
    for i in range(n):
        r = rid[i]
        wi = w[i]
        for o in range(K):
            acc = 0.0
            for g in range(o * G, (o + 1) * G):
                d = C[i, g] - mean[r, g]
                acc += d * d
            SS[r, o] += wi * acc


def _bins_py(cuts, x, strict, out):
    """``out[i]``: the number of ``cuts`` (increasing) below ``x[i]`` (``strict``: ``< x``, else ``<= x``), as
    ``np.searchsorted`` with side ``left`` / ``right``; ``len(cuts) + 1`` for a missing ``x[i]``. A binary search
    whose steps do not depend on the value (the window halves whatever the comparison says), run on 16 values in
    step, so their loads and compares go together (vectorised) instead of waiting on one another."""
    n = cuts.shape[0]
    m = x.shape[0]
    lanes = 16
    base = np.zeros(lanes, dtype=np.int64)
    loose = not strict
    for i0 in range(0, m, lanes):
        L = min(lanes, m - i0)
        for k in range(lanes):
            base[k] = 0
        length = n
        while length > 1:
            half = length >> 1
            for k in range(L):
                c = cuts[base[k] + half - 1]
                v = x[i0 + k]
                base[k] += half * ((c < v) | (loose & (c == v)))
            length -= half
        for k in range(L):
            v = x[i0 + k]
            if v != v:
                out[i0 + k] = n + 1
            elif n == 0:
                out[i0 + k] = 0
            else:
                c = cuts[base[k]]
                out[i0 + k] = base[k] + ((c < v) | (loose & (c == v)))


@functools.lru_cache(maxsize=None)
def _kernel(fn=_sums_py):
    """``fn`` compiled by :func:`pdpx.core.compiler.njit` (cached where numba may cache), leaving the GIL free."""
    return njit(cache=True, nogil=True)(fn)


def bins(cuts: np.ndarray, x: np.ndarray, strict: bool) -> np.ndarray:
    """(len(x),) int32: :func:`_bins_py` of the float64 ``x`` between ``cuts`` (compiled; leaves the GIL free)."""
    out = np.empty(len(x), dtype=np.int32)
    # the cuts copied (a few): always writable, so that only x's being read-only (a column of pandas' copy-on-write)
    # makes another signature of the compiled search
    _kernel(_bins_py)(np.array(cuts, dtype=np.float64), np.ascontiguousarray(x, dtype=np.float64), bool(strict), out)
    return out


def region_sums(rid: np.ndarray, R: int, w: np.ndarray, C: np.ndarray, rowmean: np.ndarray) -> tuple:
    """``(W (R,), S1 (R, KG), SM (R, K), SS (R, K))`` of :func:`_regions_py` over every row: each region's weight,
    sums of ``w c``, of ``w`` times the rows' means, and of ``w`` times the squared deviations from its mean curve
    per output."""
    K, KG = rowmean.shape[0], C.shape[1]
    W, S1, SM, SS = np.zeros(R), np.zeros((R, KG)), np.zeros((R, K)), np.zeros((R, K))
    _kernel(_regions_py)(np.asarray(rid, dtype=np.int64), R, w, C, rowmean, W, S1, SM, SS)
    return W, S1, SM, SS


def code_sums(codes: np.ndarray, sizes: np.ndarray, rows: np.ndarray, w: np.ndarray, wq: np.ndarray,
              C: np.ndarray, cols: np.ndarray | None = None) -> list[np.ndarray]:
    """Per candidate ``s`` (column ``cols[s]`` of ``codes``, (n, n_columns) int32, with ``sizes[s]`` codes; ``cols``
    by default every column), the array (sizes[s], 3 + KG) of ``[rows, weight, sum w q, sums of w c]`` per code
    over ``rows``."""
    cols = np.arange(codes.shape[1], dtype=np.int64) if cols is None else np.asarray(cols, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    total = int(np.sum(sizes))
    kernel = _kernel()
    parts = max(1, min(thread_count(None), len(rows) // MIN_ROWS_PER_THREAD))
    chunks = np.array_split(np.asarray(rows, dtype=np.int64), parts)

    def run(chunk):
        out = np.zeros((total, 3 + C.shape[1]))
        kernel(codes, cols, offsets, chunk, w, wq, C, out)
        return out

    out = sum(in_threads(run, chunks))
    return [out[o: o + m] for o, m in zip(offsets, sizes)]


def warm_up() -> None:
    """Compile the three passes for the argument types the regions give them (:mod:`.split_search`,
    :mod:`.subgroups`): a column to bin, writable or read-only; the candidates' codes (int32) with the rows,
    weights and centered curves (float64) of a node; the rows' region numbers (int64). The warm-up
    (:mod:`pdpx.plugins.trees.warmup`, family ``measures``) calls it."""
    x = np.array([0.0, 1.0, np.nan, 2.0])
    frozen = x.copy()
    frozen.flags.writeable = False
    bins(np.array([0.5, 1.5]), x, True)
    bins(np.array([0.5, 1.5]), frozen, False)
    n, K, G = len(x), 1, 2
    w, C = np.ones(n), np.zeros((n, K * G))
    code_sums(np.zeros((n, 2), dtype=np.int32), np.array([2, 3]), np.arange(n), w, w.copy(), C)
    region_sums(np.zeros(n, dtype=np.int64), 1, w, C, np.zeros((K, n)))
