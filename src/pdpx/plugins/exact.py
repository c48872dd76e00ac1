"""``exact``: brute's answer computed from the tree structure, at tree speed.

For each background row and tree, the leaves the row reaches when its target
features take every grid value: the row follows its own values at splits on
other features and goes both ways at splits on the target features. Each reached
leaf adds its value to the grid cells that reach it (difference arrays, see
:mod:`pdpx.plugins._treekernels`). Cost grows with rows x tree size, not rows x
grid points.

Two kernels find the reached leaves (``method_options={"kernel": ...}``; ``auto``
picks):

* ``leafsets``, for shallow trees (``auto``: at most 64 leaves each, as in boosted
  models; asked for: at most 64 leaves that the grid reaches): bit masks of
  leaves, a vectorised test per node over blocks of rows
  (:mod:`pdpx.plugins._leafsets`);
* ``partition``, for any tree: rows go down each tree together, each node
  partitioning its segment of row indices (:mod:`pdpx.plugins._partition`).

Then:

* a response linear in the trees (regression, forest probabilities, margins),
  average only: per leaf, the weighted number of rows reaching it; each leaf's box
  is added once, scaled by that number;
* ICE, or a non-linear link (probabilities of boosted classifiers, exp of
  Poisson models): per row, its margins on the grid, the link and the requested
  outputs, summed (and stored as ICE) inside the kernel.

Rows are encoded and passed in chunks that fit the memory budget.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import PdpxError
from ..core.hookspecs import hookimpl
from ..core.method import Method, MethodResult, Request
from ..core.progress import progress_bar
from ._treeprep import integrate, prepare, set_threads, tree_unavailable

KERNELS = ("auto", "leafsets", "partition")


def _kernel_option(options: dict) -> str:
    kernel = options.get("kernel", "auto")
    if kernel not in KERNELS:
        raise PdpxError(f"method_options={{'kernel': {kernel!r}}}: expected one of {list(KERNELS)}")
    return kernel


def _encoded_chunk(tm, X) -> np.ndarray:
    """Encoded rows as float64 (float32-rounded once here when the model compares in float32)."""
    Xc = np.ascontiguousarray(tm.encode(X), dtype=np.float64)
    if tm.ensemble.float32_input:  # round once here instead of at every node
        Xc = Xc.astype(np.float32).astype(np.float64)
    return Xc


def choose_kernel(prep, kernel: str = "auto"):
    """The row kernel for a prepared request: leaf sets when every tree has at most 64 leaves, else partition."""
    from . import _leafsets, _partition

    if kernel != "partition":
        ls = _leafsets.plan(prep, required=kernel == "leafsets")
        if ls is not None:
            return ls
        if kernel == "leafsets":
            raise PdpxError(
                "method_options={'kernel': 'leafsets'}: a tree of this model has more than "
                f"{_leafsets.MAX_LEAVES} leaves that the grid reaches; use kernel 'auto' or 'partition'"
            )
    return _partition.plan(prep)


class Exact(Method):
    name = "exact"
    equals_brute = True
    cost_rank = 10
    options = ("kernel",)

    def unavailable(self, adapter, request):
        return tree_unavailable(adapter, request)

    def compute(self, adapter, req: Request) -> MethodResult:
        from ._treekernels import LINK_CODES

        kernel_name = _kernel_option(req.options)
        tm = adapter.tree_model(req.response)
        ens = tm.ensemble
        threads = set_threads(req.n_jobs)
        n = len(req.X)
        prep = prepare(tm, req)
        kernel = choose_kernel(prep, kernel_name)
        outputs = np.asarray(req.outputs, dtype=np.int64)
        K = outputs.size
        M = int(ens.n_margins)
        G = prep.n_cells
        w = req.sample_weight
        total_w = float(n) if w is None else float(w.sum())
        row_w = np.ones(n) if w is None else np.ascontiguousarray(w, dtype=np.float64)
        linear = ens.is_linear and not req.needs_individual
        base = ens.base_score.reshape((M,) + (1,) * len(prep.grid_shape))

        # rows are encoded (and transposed by the partition kernel) in chunks within the budget
        chunk = int(max(1, min(n, req.memory_budget // (8 * req.X.shape[1] * 3))))
        starts = list(range(0, n, chunk))
        D = np.zeros(M * G)
        sums = np.zeros((K, G))
        ice = np.empty((K, n if req.needs_individual else 0, G))
        finish_args = (M, prep.grid_shape_array, ens.base_score, LINK_CODES[ens.link], float(ens.link_scale),
                       outputs, bool(req.needs_individual))
        with progress_bar(len(starts), progress=req.progress, desc="pdpx exact") as bar:
            for r0 in starts:
                r1 = min(n, r0 + chunk)
                Xc = _encoded_chunk(tm, req.X.iloc[r0:r1])
                if linear:
                    D += kernel.average_sum(Xc, row_w[r0:r1], w is None, threads)
                else:
                    sums += kernel.rows(Xc, row_w[r0:r1], threads, finish_args, ice, r0)
                bar.update(1)
        if linear:
            avg = integrate(D.reshape(M, G), prep.grid_shape) / total_w + base
            return MethodResult(average=avg[outputs], notes=list(tm.notes))
        individual = ice.reshape((K, n) + prep.grid_shape) if req.needs_individual else None
        return MethodResult(average=sums.reshape((K,) + prep.grid_shape) / total_w, individual=individual,
                            notes=list(tm.notes))


@hookimpl
def pdpx_register_methods(register):
    register(Exact())
