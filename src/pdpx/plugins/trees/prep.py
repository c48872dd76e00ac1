"""Shared preparation for the tree methods: whether they can run, the routing arrays, target nodes, leaf boxes.

:func:`tree_unavailable` says why a tree method cannot run (no numba, no readable trees);
:class:`Routing` carries a model's routing arrays as one tuple and :func:`static_layout` its
per-ensemble tables; :func:`prepare` gives a request's target nodes, grid codes and leaf boxes
(:class:`Prepared`); :func:`integrate` turns difference arrays into values on the grid. The
threads are counted by :func:`pdpx.core.threads.thread_count`, not here.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...core.dates import is_date_type
from ...core.ir import NAN_AS_ZERO, ZERO_OR_NAN_MISSING, TreeEnsemble, TreeModel
from ...core.method import Request


def numba_missing() -> str | None:
    """Why the tree methods cannot run without numba, or None when it is installed.

    Looked up without importing numba (a third of a second): a model whose trees
    cannot be read never loads it.
    """
    if "numba" in sys.modules or importlib.util.find_spec("numba") is not None:
        return None
    return "numba is not installed (it is a dependency of pdpx: pip install --force-reinstall pdpx)"


def tree_unavailable(adapter, request: Request) -> str | None:
    """Why a tree method cannot run for ``request`` (no numba, no readable trees), or None."""
    missing = numba_missing()
    if missing:
        return missing
    dtypes = request.X.dtypes
    dated = [j for j in request.features if is_date_type(dtypes.iloc[j])]
    tm = adapter.tree_model(request.response) if not dated else _tree_model_or_none(adapter, request.response)
    for j in dated:  # trees split on numbers; the model reads dates through its own code, unless the trees read them
        if tm is None or j not in getattr(tm, "dated", ()):
            why = _unavailable_or_empty(adapter, request.response) if tm is None else ""
            return (f"feature {str(request.X.columns[j])!r} holds dates ({dtypes.iloc[j]}), which the tree engine "
                    "does not read: method='brute' (what 'auto' chooses) calls the model with them"
                    + (f" (the trees cannot be read: {why})" if why else ""))
    if tm is None:
        return adapter.tree_model_unavailable(request.response)
    return None


def _unavailable_or_empty(adapter, response) -> str:
    """Why the adapter has no tree model for ``response`` (a pipeline names the step or column), or ``""``."""
    try:
        return str(adapter.tree_model_unavailable(response) or "")
    except Exception:  # noqa: BLE001 - the date feature's own reason stands alone
        return ""


def _tree_model_or_none(adapter, response):
    """The adapter's tree model for ``response``, or None when it has none or cannot give one."""
    try:
        return adapter.tree_model(response)
    except Exception:  # noqa: BLE001 - the date feature's own reason is the one to give
        return None


class Routing(NamedTuple):
    """How a row goes down the trees of one ensemble: what every kernel routes with, as one argument.

    Built once per ensemble (:attr:`Static.routing`). A numba kernel takes it whole and unpacks the fields its
    loops read at its entry; the rule at one node is :func:`.routing.goes_left`. ``nodes`` packs left, right,
    feature and flags per node (:func:`pack_nodes`); ``thr_lt`` / ``miss_eff`` express a plain numeric split as
    ``x < thr_lt`` with NaN left when ``miss_eff``; ``thr`` and the category sets (``cat_offset``,
    ``cat_nwords``, ``cat_words``) serve the nodes flagged special; ``le``: the ensemble compares ``x <= thr``;
    ``cats_left``: the rows in a category set go left.
    """

    nodes: np.ndarray
    thr_lt: np.ndarray
    miss_eff: np.ndarray
    thr: np.ndarray
    cat_offset: np.ndarray
    cat_nwords: np.ndarray
    cat_words: np.ndarray
    le: bool
    cats_left: bool


@dataclass
class Static:
    """What the row kernels need from an ensemble whatever the request; built once per ensemble.

    ``nodes`` packs left, right, feature and flags per node (one node in 32
    bytes); ``thr_lt`` and ``miss_eff`` express each plain numeric split as
    ``x < thr_lt`` with NaN going left when ``miss_eff`` (nodes flagged special are
    routed with the general rule, ``routing.go_left_packed``); ``routing`` holds them with the rest of what
    routing reads (:class:`Routing`).
    """

    nodes: np.ndarray
    thr_lt: np.ndarray
    miss_eff: np.ndarray
    leaves_per_tree: np.ndarray
    max_tree_nodes: int
    routing: Routing


def static_layout(ens: TreeEnsemble) -> Static:
    """The request-independent node layout of ``ens`` (built once, kept with the ensemble)."""
    return ens.derived("pdpx.plugins.trees.prep.static_layout", lambda: _build_static(ens))


def _build_static(ens: TreeEnsemble) -> Static:
    thr_lt = np.nextafter(ens.threshold, np.inf) if ens.comparison == "<=" else ens.threshold.copy()
    miss_eff = np.where(ens.nan_mode == NAN_AS_ZERO, 0.0 < thr_lt, ens.missing_left)
    leaves = np.add.reduceat((ens.left < 0).astype(np.int64), ens.tree_start[:-1])
    nodes = pack_nodes(ens)
    routing = Routing(nodes, thr_lt, miss_eff, ens.threshold, ens.cat_offset, ens.cat_nwords, ens.cat_words,
                      bool(ens.comparison == "<="), bool(ens.categories_go_left))
    return Static(nodes=nodes, thr_lt=thr_lt, miss_eff=miss_eff, leaves_per_tree=leaves,
                  max_tree_nodes=int(np.max(np.diff(ens.tree_start))), routing=routing)


class Prepared:
    """A tree model prepared for one feature set and grid (see :mod:`.kernels`).

    ``tgt[node]``: the grid dimension a node splits on, or -1. When every target
    node sends a leading run of its dimension's grid values left (numeric splits
    on a sorted numeric grid: ``intervals`` is True), ``n_left[node]`` is the length
    of that run and every leaf's region is a box that kernels can carry down as
    intervals. The regions as the kernels' tables -- ``reach[node]`` (some grid cell
    reaches it), ``leaf_mask[leaf]`` and the boxes ``box_ptr[m]:box_ptr[m + 1]`` of
    ``box_lo`` / ``box_hi`` (half-open index ranges) -- are built on first use.
    """

    def __init__(self, ens, static, tgt, grid_shape, intervals, n_left, masks):
        self.ens = ens
        self.static = static
        self.tgt = tgt
        self.grid_shape = grid_shape
        self.n_cells = int(np.prod(grid_shape))
        self.intervals = intervals
        self.n_left = n_left
        self._masks = masks  # (left_grid, row_of, offsets, sizes) for grid masks
        self._regions = None
        self._corners = {}

    def regions(self) -> tuple:
        if self._regions is None:
            from .kernels import leaf_boxes_sorted, leaf_regions

            ens, st = self.ens, self.static
            sizes = self.grid_shape_array
            if self.intervals:
                self._regions = leaf_boxes_sorted(ens.tree_start, ens.left, ens.right, self.tgt, self.n_left, sizes,
                                                  st.max_tree_nodes)
            else:
                left_grid, row_of, offsets, sizes = self._masks
                self._regions = leaf_regions(ens.tree_start, ens.left, ens.right, self.tgt, left_grid, row_of,
                                             offsets, sizes, st.max_tree_nodes)
        return self._regions

    reach = property(lambda self: self.regions()[0])
    leaf_mask = property(lambda self: self.regions()[1])
    box_ptr = property(lambda self: self.regions()[2])
    box_lo = property(lambda self: self.regions()[3])
    box_hi = property(lambda self: self.regions()[4])

    @property
    def grid_shape_array(self) -> np.ndarray:
        return np.asarray(self.grid_shape, dtype=np.int64)

    @property
    def nodes(self) -> np.ndarray:
        return self.static.nodes

    @property
    def max_tree_nodes(self) -> int:
        return self.static.max_tree_nodes

    @property
    def routing(self) -> Routing:
        """What every row kernel routes with (:class:`Routing`)."""
        return self.static.routing

    def leaf_corners(self, leaf_node: np.ndarray, leaf_tree: np.ndarray) -> tuple:
        """(cptr, cpos, cval): difference-array updates of leaf id ``i`` = node ``leaf_node[i]``
        of tree ``leaf_tree[i]`` (see :func:`.kernels.leaf_corners`)."""
        from .kernels import leaf_corners

        ens = self.ens
        return leaf_corners(leaf_node, leaf_tree, ens.tree_group, ens.effective_tree_weight(), ens.value,
                            int(ens.n_margins), self.leaf_mask, self.box_ptr, self.box_lo, self.box_hi,
                            self.grid_shape_array)

    def scaled_corners(self, key: str, leaves, factor: float) -> tuple:
        """:meth:`leaf_corners` of ``leaves() -> (leaf_node, leaf_tree)``, values times ``factor``; kept by
        ``key`` (the kernel's numbering of leaves) and factor."""
        if (key, factor) not in self._corners:
            cptr, cpos, cval = self.leaf_corners(*leaves())
            self._corners[key, factor] = (cptr, cpos, cval * factor if factor != 1.0 else cval)
        return self._corners[key, factor]

    def box_args(self) -> tuple:
        """Everything :func:`.kernels.scatter_boxes` needs after the per-node weights."""
        ens = self.ens
        return (ens.tree_start, ens.tree_group, ens.effective_tree_weight(), ens.value, int(ens.n_margins),
                self.leaf_mask, self.box_ptr, self.box_lo, self.box_hi, self.grid_shape_array)


def _targets(tm: TreeModel, req: Request):
    """The grid values as the trees compare them, and the internal nodes splitting on each target feature."""
    ens = tm.ensemble
    grid_codes = [np.asarray(tm.encode_values(j, g), dtype=np.float64) for j, g in zip(req.features, req.grid_values)]
    if ens.float32_input:
        with np.errstate(over="ignore"):  # beyond float32's range is inf, as for the model itself
            grid_codes = [g.astype(np.float32).astype(np.float64) for g in grid_codes]
    internal = ens.left >= 0
    per_dim = [np.flatnonzero(internal & (ens.feature == j)) for j in req.features]
    return grid_codes, per_dim


def uses_intervals(tm: TreeModel, req: Request, grid_codes=None, per_dim=None) -> bool:
    """Whether every leaf's region is a box the kernels carry down as intervals: sorted numeric grids and plain
    numeric splits on the target features (the values going left are those below ``thr_lt``). numpy only."""
    from .routing import F_SPECIAL

    if grid_codes is None:
        grid_codes, per_dim = _targets(tm, req)
    nodes = static_layout(tm.ensemble).nodes
    return all(
        not np.any(nodes[nd, 3] & F_SPECIAL) and not np.any(np.isnan(g)) and bool(np.all(g[1:] >= g[:-1]))
        for nd, g in zip(per_dim, grid_codes)
    )


def prepare(tm: TreeModel, req: Request) -> Prepared:
    """``tm`` prepared for ``req``: target nodes, and the grid regions of the leaves (see :class:`Prepared`)."""
    from .kernels import grid_left

    ens = tm.ensemble
    st = static_layout(ens)
    grid_codes, per_dim = _targets(tm, req)
    sizes = np.array([len(g) for g in grid_codes], dtype=np.int64)
    tgt = np.full(ens.n_nodes, -1, dtype=np.int64)
    for k, nd in enumerate(per_dim):
        tgt[nd] = k

    def route(nd, k):
        return grid_left(nd, grid_codes[k], st.routing)  # grid values already rounded (float32)

    intervals = uses_intervals(tm, req, grid_codes, per_dim)
    if intervals:
        n_left = np.zeros(ens.n_nodes, dtype=np.int64)
        for k, nd in enumerate(per_dim):
            n_left[nd] = np.searchsorted(grid_codes[k], st.thr_lt[nd], side="left")
        return Prepared(ens, st, tgt, tuple(int(s) for s in sizes), True, n_left, None)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    target_nodes = np.flatnonzero(tgt >= 0)
    left_grid = np.zeros((max(1, len(target_nodes)), int(sizes.sum())), dtype=bool)
    row_of = np.full(ens.n_nodes, -1, dtype=np.int64)
    row_of[target_nodes] = np.arange(len(target_nodes))
    for k, nd in enumerate(per_dim):
        if nd.size:
            left_grid[row_of[nd], offsets[k]: offsets[k] + sizes[k]] = route(nd, k)
    return Prepared(ens, st, tgt, tuple(int(s) for s in sizes), False, None, (left_grid, row_of, offsets, sizes))


def pack_nodes(ens: TreeEnsemble) -> np.ndarray:
    """(n_nodes, 4) int64: left, right, feature, flags -- one node per 32 bytes for the row kernels.

    flags: bit 0 missing goes left, bits 1-2 nan_mode, bit 3 categorical split,
    bit 6 special (categorical or zero-as-missing: routed with the general rule).
    """
    from .routing import F_CATEGORICAL, F_MISSING_LEFT, F_NAN_SHIFT, F_SPECIAL

    cat = ens.cat_offset >= 0
    special = cat | (ens.nan_mode == ZERO_OR_NAN_MISSING)
    flags = (
        np.where(ens.missing_left, F_MISSING_LEFT, 0)
        | (ens.nan_mode.astype(np.int64) << F_NAN_SHIFT)
        | np.where(cat, F_CATEGORICAL, 0)
        | np.where(special, F_SPECIAL, 0)
    ).astype(np.int64)
    return np.ascontiguousarray(np.stack([ens.left, ens.right, np.maximum(ens.feature, 0), flags], axis=1))


def integrate(D: np.ndarray, grid_shape: tuple) -> np.ndarray:
    """Difference arrays (..., n_cells) on the grid's own shape -> values on the grid (..., *grid_shape)."""
    lead = D.shape[:-1]
    arr = D.reshape(lead + tuple(grid_shape))
    for axis in range(len(lead), arr.ndim):
        arr = np.cumsum(arr, axis=axis)
    return arr
