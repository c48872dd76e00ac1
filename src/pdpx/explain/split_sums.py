"""The statistics of the regions' split search, per candidate code, in one compiled pass over a node's rows.

:func:`pdpx.regions` scores every split of a node's rows by every candidate feature from
sums per code of that feature (its bin between thresholds, or its level): the rows, their
weight, their sum of ``w q`` and of ``w c`` (:mod:`pdpx.explain.subgroups`). Summed with
one ``bincount`` per column and candidate, a node costs (3 + outputs x grid points) passes
over its rows per candidate. Here one numba pass over the node's rows adds each row's
statistics to its code's row of every candidate at once (the row's curve is read once), on
every core (each thread a share of the rows, its sums added after).

numba caches the compiled pass next to this module, or compiles it in memory for the
process where it finds no writable folder.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core.threads import in_threads, thread_count

#: Rows a thread gets at least (fewer are not worth a thread).
MIN_ROWS_PER_THREAD = 20_000


def _sums_py(codes, offsets, rows, w, wq, C, out):
    """``out[offsets[s] + codes[i, s]] += [1, w_i, wq_i, w_i C_i]`` for each row ``i`` of ``rows`` and candidate
    ``s``."""
    n_cands = codes.shape[1]
    KG = C.shape[1]
    for i in rows:
        wi = w[i]
        qi = wq[i]
        for s in range(n_cands):
            b = offsets[s] + codes[i, s]
            out[b, 0] += 1.0
            out[b, 1] += wi
            out[b, 2] += qi
            for g in range(KG):
                out[b, 3 + g] += wi * C[i, g]


@functools.lru_cache(maxsize=None)
def _kernel():
    import numba

    try:
        return numba.njit(cache=True, nogil=True)(_sums_py)
    except RuntimeError:  # numba found no writable folder for its cache: compile for this process only
        return numba.njit(nogil=True)(_sums_py)


def code_sums(codes: np.ndarray, sizes: np.ndarray, rows: np.ndarray, w: np.ndarray, wq: np.ndarray,
              C: np.ndarray) -> list[np.ndarray]:
    """Per candidate ``s`` (column of ``codes``, (n, n_cands) int64 with ``sizes[s]`` codes), the array
    (sizes[s], 3 + KG) of ``[rows, weight, sum w q, sums of w c]`` per code over ``rows``."""
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    total = int(np.sum(sizes))
    kernel = _kernel()
    parts = max(1, min(thread_count(None), len(rows) // MIN_ROWS_PER_THREAD))
    chunks = np.array_split(np.asarray(rows, dtype=np.int64), parts)

    def run(chunk):
        out = np.zeros((total, 3 + C.shape[1]))
        kernel(codes, offsets, chunk, w, wq, C, out)
        return out

    out = sum(in_threads(run, chunks))
    return [out[o: o + m] for o, m in zip(offsets, sizes)]
