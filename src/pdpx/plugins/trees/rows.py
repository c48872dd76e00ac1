"""The row loop of the tree kernels, written once: rows shared among threads, and the rows' finish.

Every row kernel (:mod:`.oblivious`, :mod:`.leafsets`, :mod:`.partition`,
:mod:`.products`) is a plain numba function that runs on one thread over the rows
it is given, without holding the GIL. Here:

* :func:`run` splits the rows into one span per thread and runs a kernel on each
  span, the calling thread taking the first and the process's pool of threads the
  others (:func:`pdpx.core.threads.in_threads`; numba's own threading layer is never
  started, so forked processes and concurrent callers are safe whatever the platform);
* :func:`finish` turns the difference arrays of a slice of rows' margins (as the
  kernels leave them when they add margins) into the requested outputs, their
  weighted sums and ICE, a cache-sized slice of rows at a time: the integral along
  the grid axes and the link are two small kernels over the slice
  (:func:`.kernels.integrate_columns`, :func:`.kernels.exp_columns`), the outputs
  and sums numpy operations.

Weights reach the kernels divided by their total, so every sum is a weighted
*mean* and stays within the range of the values it averages: predictions of
1e307 average to 1e307, not to infinity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.ir import apply_link
from ...core.threads import in_threads
from .kernels import exp_columns, integrate_columns
from .routing import BLOCK

#: a thread gets at least this many rows (fewer are not worth a thread)
MIN_ROWS_PER_THREAD = 4 * BLOCK
#: elements of a slice's margins array: about 1 MB, so that the finish stays in cache
SLICE_ELEMENTS = 2**17


def spans(n: int, threads: int) -> list[tuple[int, int]]:
    """``0..n`` in at most ``threads`` consecutive spans of whole blocks (the last may be short)."""
    parts = max(1, min(threads, n // MIN_ROWS_PER_THREAD))
    blocks = -(-n // BLOCK)
    cuts = [min(n, BLOCK * (blocks * i // parts)) for i in range(parts + 1)]
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a] or [(0, n)]


def run(fn, n: int, threads: int) -> list:
    """``fn(r0, r1)`` for each span of ``0..n`` (:func:`spans`), in threads when there are several."""
    return in_threads(lambda span: fn(*span), spans(n, threads))


def link_factor(link: str, scale: float) -> float:
    """The factor the kernels apply to margins (with the base score): the link's affine part.

    Logistic links need ``exp(-scale * z)``, ``exp`` and ``softmax`` need ``scale * z``.
    """
    return {"identity": 1.0, "logistic": -scale, "binary_logistic": -scale}.get(link, scale)


def slice_rows(size: int, row_bytes: int | None = None, budget: int | None = None, threads: int = 1) -> int:
    """Rows per slice of a ``size``-cell margins array: about :data:`SLICE_ELEMENTS` (whole blocks, at least
    one), and with ``budget``, few enough that ``threads`` slices of ``row_bytes`` a row fit in it (at least
    one row)."""
    rows = max(BLOCK, (SLICE_ELEMENTS // max(1, size)) // BLOCK * BLOCK)
    if budget is not None:
        rows = min(rows, budget // max(1, threads * (row_bytes or 8 * size)))
    return max(1, rows)


def finish(margins, n: int, row_weight: np.ndarray, threads: int, start: np.ndarray, grid_shape: tuple, link: str,
           outputs: np.ndarray, ice: np.ndarray | None, ice_row0: int, budget: int | None = None) -> np.ndarray:
    """(K, n_cells): the ``row_weight``-weighted sums of the rows' outputs; ICE of row i into
    ``ice[:, ice_row0 + i]`` when ``ice`` is given.

    Each thread holds one slice at a time: its margins and outputs (the outputs are the
    margins themselves when they are all requested in order); with ``budget`` (bytes), the
    slices of all threads together fit in it (:func:`slice_rows`).

    ``margins(s0, s1)`` returns the difference arrays (n_margins * n_cells, s1 - s0) of
    the margins of rows s0..s1 times the link factor (:func:`link_factor`); ``start``
    (n_margins,), the factor times the base score, is added at the first cell, which
    the integral along every grid axis (:func:`.kernels.integrate_columns`) carries to
    every cell.
    """
    n_margins = len(start)
    n_cells = int(np.prod(grid_shape))
    step = slice_rows(n_margins * n_cells, 8 * (n_margins + len(outputs)) * n_cells, budget, len(spans(n, threads)))
    shape = np.asarray(grid_shape, dtype=np.int64)

    def part(r0, r1):
        sums = np.zeros((len(outputs), n_cells))
        for s0 in range(r0, r1, step):
            s1 = min(r1, s0 + step)
            z = margins(s0, s1)
            z[::n_cells] += start[:, None]
            integrate_columns(z, n_margins, shape)
            resp = respond(link, z.reshape(n_margins, n_cells, s1 - s0), outputs)  # (K, cells, rows)
            sums += resp @ row_weight[s0:s1]
            if ice is not None:
                ice[:, ice_row0 + s0: ice_row0 + s1, :] = resp.transpose(0, 2, 1)
            del z, resp  # before the next slice's arrays: one slice per thread at a time
        return sums

    return sum(run(part, n, threads))


@dataclass
class Finish:
    """How a request's rows are finished: the link's factor, the start of every margin (factor x base
    score), the grid, the link, the outputs, and where ICE goes (None: not asked for)."""

    factor: float
    start: np.ndarray
    grid_shape: tuple
    link: str
    outputs: np.ndarray
    ice: np.ndarray | None
    #: bytes the slices of the finish may take at once (None: no bound beyond the cache-sized slices)
    budget: int | None = None

    def sums(self, margins, n: int, row_weight: np.ndarray, threads: int, ice_row0: int) -> np.ndarray:
        """:func:`finish` of this request."""
        return finish(margins, n, row_weight, threads, self.start, self.grid_shape, self.link, self.outputs,
                      self.ice, ice_row0, self.budget)


def respond(link: str, z: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    """The requested outputs (K, cells, rows) from ``z`` (n_margins, cells, rows), the margins with the link's
    affine part applied (:func:`link_factor`): ``core.ir.apply_link``, in place."""
    if link == "identity":
        return pick(z, outputs)
    if link == "softmax":  # z is scale * margin already
        return pick(apply_link(link, z, 1.0, axis=0), outputs)
    # exp(z), or the logistic function 1 / (1 + exp(z)) of z = -scale * margin (exp(z) = inf: probability 0)
    exp_columns(z.reshape(z.shape[0] * z.shape[1], z.shape[2]), link != "exp")
    if link in ("exp", "logistic"):
        return pick(z, outputs)
    # binary_logistic: outputs 0 and 1 are 1 - p and p of the one margin
    if list(outputs) == [1]:
        return z
    return np.stack([1.0 - z[0] if k == 0 else z[0] for k in outputs])


def pick(z: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    """``z[outputs]``: ``z`` itself (no copy) when the outputs are all its margins in order."""
    if len(outputs) == len(z) and np.array_equal(outputs, np.arange(len(z))):
        return z
    return z[outputs]
