"""One pass of the rows through the trees: pattern counts for every 1-way and 2-way partial dependence.

For a response that is a sum of leaf values (regression, margins, forest
probabilities), the rows enter the average over rows at grid point ``g`` of
features S only through, per leaf ``L``, the weight of the rows whose *failing
set* at ``L`` (the distinct features whose condition on ``L``'s path the row
does not satisfy) lies within S: exactly those rows reach ``L`` when their S
columns are set to ``g`` and ``g`` passes ``L``'s conditions on S. So one pass
that adds each row's weight to ``count[L, F]`` for every leaf whose failing set
``F`` has at most two features gives the average of every feature and every pair
(:mod:`.counts_pd`), whatever the grids, without touching the rows again.

* :func:`gather` makes a :class:`PatternCounts` (or a :class:`SumCounts` for a
  :class:`~pdpx.core.treesum.TreeSum`), at ``order`` 1 (failing sets of at most
  one feature: much cheaper, enough for 1-way) or 2;
* counts add: ``a + b`` of the counts of two sets of rows is the counts of their
  union, so partitions of the data (Dask) each gather theirs and only counts
  travel (:func:`gather_task` is what a partition's task runs);
* :func:`counts_nbytes` says how large the counts are before gathering them.

The kernels are in :mod:`.counts_kernels`; rows are encoded exactly as for
``exact`` (:func:`.engine.encoded_chunk`: the adapter's encoder, float32 rounding
once) and routed by the same rule (:mod:`.kernels`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ...core.errors import PdpxError
from ...core.ir import TreeModel
from ...core.threads import in_threads, thread_count
from ...core.treesum import TreeSum
from .engine import encoded_chunk
from .plan import COUNTS_KERNELS as KERNELS
from .plan import counts_kernel, plan_counts
from .prep import static_layout
from .rows import spans

#: The planner's choice of the gather kernel (:func:`.plan.counts_kernel`), under its older name.
choose_kernel = counts_kernel
#: Orders a gather can be made at: the largest feature sets it answers.
ORDERS = (1, 2)
#: Rows the partition kernel takes at a time (their columns stay in cache while rows are partitioned).
PARTITION_ROWS = 1 << 15


@dataclass(frozen=True)
class CountLayout:
    """Where each (leaf, failing set) slot lives in a counts array, for one ensemble and order.

    See :mod:`.counts_kernels` for the slot numbering. ``key`` identifies the
    ensemble's structure and the order: counts with different keys cannot be added.
    """

    order: int
    ford: np.ndarray
    n_pf: np.ndarray
    pf_ptr: np.ndarray
    pf: np.ndarray
    slot_base: np.ndarray
    n_slots: int
    max_depth: int
    key: str


def count_layout(ens, order: int) -> CountLayout:
    """The slot layout of ensemble ``ens`` at ``order`` (built once, kept with the ensemble)."""
    return ens.derived(f"pdpx.plugins.trees.counts.layout{order}", lambda: _build_layout(ens, order))


def _build_layout(ens, order: int) -> CountLayout:
    from .counts_kernels import count_layout as kernel

    st = static_layout(ens)
    ford, n_pf, pf_ptr, pf, slot_base, n_slots, max_depth = kernel(ens.tree_start, ens.left, ens.right, ens.feature,
                                                                   int(st.max_tree_nodes), int(order))
    digest = hashlib.blake2b(digest_size=16)
    for arr in (ens.left, ens.right, ens.feature, ens.threshold, ens.tree_start):
        digest.update(np.ascontiguousarray(arr).tobytes())
    key = f"order{order}:nodes{ens.n_nodes}:slots{n_slots}:{digest.hexdigest()}"
    return CountLayout(int(order), ford, n_pf, pf_ptr, pf, slot_base, int(n_slots), int(max_depth), key)


def check_order(order) -> int:
    """``order`` checked: 1 or 2."""
    if order not in ORDERS:
        raise PdpxError(f"order={order!r}: pattern counts are gathered for feature sets of size 1 or 2; pass 1 or 2")
    return int(order)


@dataclass
class PatternCounts:
    """The pattern counts of some rows on one tree model (see the module docstring).

    Attributes
    ----------
    order : int
        The largest failing sets counted (1 or 2): the largest feature sets answered.
    counts : ndarray of shape (n_slots,)
        Weighted counts per (leaf, failing set) slot of :func:`count_layout`.
    total_weight : float
        The rows' total weight (their number when unweighted).
    n_rows : int
    key : str
        The layout's key (the ensemble's structure and the order).
    pairs : frozenset of (int, int) or None
        At order 2, the feature pairs (columns, smaller first) whose failing sets were counted; None: every
        pair. The slots of the other pairs hold 0, so those pairs are not answered (:meth:`answers`).
    """

    order: int
    counts: np.ndarray
    total_weight: float
    n_rows: int
    key: str
    pairs: frozenset | None = None

    def answers(self, features) -> bool:
        """Whether these counts give the average of ``features`` (one or two columns)."""
        return answers(self.order, self.pairs, features)

    def __add__(self, other: "PatternCounts") -> "PatternCounts":
        if not isinstance(other, PatternCounts):
            return NotImplemented
        if other.key != self.key:
            raise PdpxError("these pattern counts were gathered on different models (or at different orders); "
                            "add only counts of the same model and order")
        if other.pairs != self.pairs:
            raise PdpxError("these pattern counts were gathered for other pairs; add only counts of the same pairs")
        return PatternCounts(self.order, self.counts + other.counts, self.total_weight + other.total_weight,
                             self.n_rows + other.n_rows, self.key, self.pairs)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    @property
    def nbytes(self) -> int:
        return int(self.counts.nbytes)


@dataclass
class SumCounts:
    """Pattern counts of a :class:`~pdpx.core.treesum.TreeSum`: one entry per term, in the terms' order."""

    terms: list
    total_weight: float
    n_rows: int
    pairs: frozenset | None = None  # as PatternCounts.pairs, in the sum's columns

    @property
    def order(self) -> int:
        return min(t.order for t in self.terms)

    def answers(self, features) -> bool:
        """Whether these counts give the average of ``features`` (one or two columns)."""
        return answers(self.order, self.pairs, features)

    @property
    def nbytes(self) -> int:
        return int(sum(t.nbytes for t in self.terms))

    def __add__(self, other: "SumCounts") -> "SumCounts":
        if not isinstance(other, SumCounts):
            return NotImplemented
        if len(other.terms) != len(self.terms):
            raise PdpxError("these pattern counts were gathered on different models; add only counts of one model")
        if other.pairs != self.pairs:
            raise PdpxError("these pattern counts were gathered for other pairs; add only counts of the same pairs")
        return SumCounts([a + b for a, b in zip(self.terms, other.terms)], self.total_weight + other.total_weight,
                         self.n_rows + other.n_rows, self.pairs)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented


def answers(order: int, pairs, features) -> bool:
    """Whether counts of ``order`` counting ``pairs`` (None: every pair) answer ``features``."""
    d = len(features)
    if d == 1:
        return True
    if d != 2 or order < 2:
        return False
    return pairs is None or pair_key(features) in pairs


def pair_key(features) -> tuple[int, int]:
    """Two columns as a pair of :attr:`PatternCounts.pairs`."""
    a, b = int(features[0]), int(features[1])
    return (a, b) if a < b else (b, a)


def check_pairs(pairs, order: int):
    """``pairs`` of :func:`gather` as a frozenset of column pairs (None: every pair); only at order 2."""
    if pairs is None:
        return None
    if order < 2:
        raise PdpxError("pairs= chooses the pairs counted at order 2; at order 1 no pair is counted, leave it out")
    out = set()
    for p in pairs:
        try:
            a, b = (int(v) for v in p)
        except (TypeError, ValueError):
            a = b = -1
        if a == b or min(a, b) < 0:
            raise PdpxError(f"pairs={pairs!r}: expected pairs of two distinct non-negative column positions")
        out.add(pair_key((a, b)))
    return frozenset(out)


def counts_nbytes(tm, order: int = 2) -> int:
    """Bytes of the counts of ``tm`` (a TreeModel or TreeSum) at ``order``, whatever the rows."""
    order = check_order(order)
    if isinstance(tm, TreeSum):
        return int(sum(counts_nbytes(t.model, order) for t in tm.terms))
    return 8 * count_layout(tm.ensemble, order).n_slots


def gather(tm, X, sample_weight=None, *, order: int = 2, memory_budget: int = 256 << 20, n_jobs=None,
           kernel: str = "auto", pairs=None, plan=None):
    """The pattern counts of the rows of ``X`` on ``tm``, in one pass.

    Parameters
    ----------
    tm : TreeModel or TreeSum
        What an adapter's ``tree_model(response)`` returns.
    X : DataFrame of shape (n_rows, n_features)
        Background rows, columns in the model's order (as ``Request.X``).
    sample_weight : ndarray of shape (n_rows,) or None
    order : {1, 2}
        Count failing sets of at most this many features (2 answers pairs too).
    memory_budget : int
        Bytes for the counts and the encoded rows; counts larger than it are refused.
    n_jobs : int or None
        Threads, counted by :func:`pdpx.core.threads.thread_count` (None: every core this process may run on).
    kernel : {"auto", "patterns", "leafsets", "partition"}
        ``patterns`` needs shallow trees (at most ``counts_patterns.MAX_BINS`` histogram bins each),
        ``leafsets`` trees of at most 64 leaves; ``auto`` takes the first that fits.
    pairs : iterable of (int, int), optional
        At order 2, the pairs of columns whose averages are wanted: the ``leafsets`` kernel then counts only
        their failing sets (much less work than every pair); None counts every pair. The counts say which
        pairs they answer (``counts.answers``); the other kernels count every pair.
    plan : Plan, optional
        The planner's plan of this gather (:func:`.plan.plan_counts` at ``order`` within ``memory_budget``);
        None: planned here from ``kernel``. The gather runs the plan's kernels and chooses none.

    Returns
    -------
    PatternCounts or SumCounts
    """
    order = check_order(order)
    pairs = check_pairs(pairs, order)
    if kernel not in KERNELS:
        raise PdpxError(f"kernel={kernel!r}: expected one of {list(KERNELS)}")
    n = len(X)
    w = None if sample_weight is None else np.ascontiguousarray(sample_weight, dtype=np.float64).reshape(-1)
    if w is not None and len(w) != n:
        raise PdpxError(f"sample_weight has {len(w)} entries but X has {n} rows; pass one weight per row")
    need = counts_nbytes(tm, order)
    if need > memory_budget:
        from ...core.config import format_bytes

        raise PdpxError(
            f"the pattern counts of this model at order {order} take {format_bytes(need)}, more than the memory "
            f"budget of {format_bytes(memory_budget)}; raise memory_budget, gather order=1 for 1-way only, or "
            "compute one feature set at a time (method='exact')"
        )
    if plan is None:
        plan = plan_counts(tm, order, kernel, memory_budget)
    return _gather(tm, X, w, plan, memory_budget, n_jobs, pairs)


def _gather(tm, X, w, plan, budget, n_jobs, pairs=None):
    if isinstance(tm, TreeSum):
        terms = []
        for term, own_plan in zip(tm.terms, plan.members):
            Xm = X if term.columns is None else X.iloc[:, term.columns]
            own = pairs
            if pairs is not None and term.columns is not None:  # the pairs in the member's columns
                cols = list(term.columns)
                own = frozenset(pair_key((cols.index(a), cols.index(b))) for a, b in pairs
                                if a in cols and b in cols)
            terms.append(_gather(term.model, Xm, w, own_plan, budget, n_jobs, own))
        total = float(len(X)) if w is None else float(w.sum())
        # a member counting every pair answers them all; the sum answers the pairs every member answers
        return SumCounts(terms, total, len(X), pairs if any(t.pairs is not None for t in terms) else None)
    if not isinstance(tm, TreeModel):
        raise PdpxError(f"pattern counts need a TreeModel or TreeSum, got {type(tm).__name__}")
    return _gather_one(tm, X, w, plan, budget, n_jobs, pairs)


def _gather_one(tm: TreeModel, X, w, plan, budget, n_jobs, pairs=None) -> PatternCounts:
    from .registry import ran

    ens = tm.ensemble
    order = plan.order
    layout = count_layout(ens, order)
    st = static_layout(ens)
    name = plan.kernel  # the planner's, within what the counts leave of the budget
    if name != "leafsets":
        pairs = None  # the other kernels count every pair
    n = len(X)
    unit = w is None
    row_w = np.ones(n) if unit else w
    # rows are encoded (and transposed) in chunks within what the counts (and histograms) leave of the budget
    reserved = 8 * layout.n_slots + (8 * _patterns(ens, st)[3] if name == "patterns" else 0)
    left = max(budget - reserved, budget // 4)
    chunk = int(max(1, min(n, left // (8 * max(1, X.shape[1]) * 3))))
    if name == "partition":  # its rows are read in a data-dependent order: keep a chunk's columns in cache
        chunk = min(chunk, PARTITION_ROWS)
    threads = thread_count(n_jobs)
    acc = None
    for r0 in range(0, n, chunk):
        r1 = min(n, r0 + chunk)
        Xc = encoded_chunk(tm, X.iloc[r0:r1])
        if name == "patterns":
            ran("counts.patterns")
            n_tg, n_rg = thread_parts(ens.n_trees, threads, r1 - r0, _patterns(ens, st)[3], left)
            part = _pattern_hist(ens, st, Xc, row_w[r0:r1], n_tg, n_rg)
        else:
            n_tg, n_rg = thread_parts(ens.n_trees, threads, r1 - r0, layout.n_slots, left)
            if name == "leafsets":
                ran("counts.leafsets")
                part = _leafsets(ens, st, layout, Xc, row_w[r0:r1], order, n_tg, n_rg, pairs)
            else:
                ran("counts.partition")
                part = _partition(ens, st, layout, Xc, row_w[r0:r1], unit, order, n_tg, n_rg)
        acc = part if acc is None else acc + part
    if name == "patterns":
        from .counts_patterns import patterns_to_counts

        pat = _patterns(ens, st)
        total = patterns_to_counts(acc, ens.tree_start, ens.left, ens.right, layout.ford, pat[4], pat[5],
                                   layout.slot_base, layout.n_pf, int(order), int(layout.n_slots),
                                   int(st.max_tree_nodes))
    else:
        total = acc
    tw = float(n) if unit else float(w.sum())
    return PatternCounts(order, total, tw, n, layout.key, pairs if order >= 2 else None)


def kernel_shape(ens) -> tuple[int, int, int]:
    """(most histogram bins of a tree, total bins, most leaves of a tree): :func:`.counts_kernels.kernel_shape`,
    what the gather kernels' records read to tell which fits (numpy only)."""
    from .counts_kernels import kernel_shape as shape

    return shape(ens)


def _patterns(ens, st):
    """(hist_base, topo, bins per tree, total bins, read_base, read_flip) of the patterns kernel (see
    :func:`.counts_patterns.pattern_layout`), kept with the ensemble."""
    def build():
        from .counts_patterns import parents_first, pattern_layout

        topo = parents_first(ens.tree_start, ens.left, ens.right, int(st.max_tree_nodes))
        hist_base, read_base, read_flip, _, bins, total = pattern_layout(ens.tree_start, ens.left, ens.right, topo)
        return hist_base, topo, bins, int(total), read_base, read_flip

    return ens.derived("pdpx.plugins.trees.counts.patterns", build)


def _pattern_hist(ens, st, Xc, row_w, n_tg, n_rg) -> np.ndarray:
    from .counts_patterns import gather_patterns

    hist_base, topo, _, total = _patterns(ens, st)[:4]
    w = np.ascontiguousarray(row_w)

    def part(r0, r1, tg, out):
        gather_patterns(Xc, w, r0, r1, tg, n_tg, ens.tree_start, topo, st.routing, hist_base, int(st.max_tree_nodes),
                        out)

    return run_parts(part, len(Xc), n_tg, n_rg, int(total))


def run_parts(fn, n_rows: int, n_tg: int, n_rg: int, size: int) -> np.ndarray:
    """The counts (``size``,) of ``n_rows`` rows from a serial kernel run on parts, in threads.

    ``fn(r0, r1, tg, out)`` adds to ``out`` the counts of rows ``r0:r1`` on trees ``tg, tg + n_tg, ...``
    (without holding the GIL). Rows are split into ``n_rg`` spans of whole blocks (:func:`.rows.spans`), each
    with its own counts, summed in span order at the end; the ``n_tg`` tree groups of a span write disjoint
    slots of its counts. So the counts are the same whatever the threads for unit weights (sums of integers
    in float64 are exact), and equal within rounding for weights (only the split of rows changes the order).
    """
    row_spans = spans(n_rows, n_rg) if n_rg > 1 else [(0, n_rows)]
    outs = [np.zeros(size) for _ in row_spans]
    tasks = [(r0, r1, tg, outs[i]) for i, (r0, r1) in enumerate(row_spans) for tg in range(n_tg)]
    in_threads(lambda task: fn(*task), tasks)
    total = outs[0]
    for out in outs[1:]:
        total += out
    return total


def thread_parts(n_trees: int, threads: int, n_rows: int, n_slots: int, budget: int) -> tuple[int, int]:
    """(tree groups, row groups): trees are shared among threads when there are enough of them (no copies
    of the counts); otherwise rows are, each row group with its own counts, as many as the budget allows."""
    if threads <= 1:
        return 1, 1
    if n_trees >= 4 * threads:
        return threads, 1
    n_rg = max(1, min(threads, n_rows // 256, budget // max(1, 8 * n_slots)))
    return max(1, min(n_trees, threads // n_rg)), n_rg


def leafset_layout(ens, st):
    """The leaf-set node masks with no target feature and every leaf reached, with tree-local feature numbers."""
    def build():
        from .counts_kernels import leafset_locals
        from .leafsets import leafset_layout as node_masks

        n = ens.n_nodes
        ls = node_masks(ens.tree_start, ens.left, ens.right, ens.feature, np.ascontiguousarray(st.nodes[:, 3]),
                        st.thr_lt, st.miss_eff, np.full(n, -1, dtype=np.int64), np.ones(n, dtype=np.bool_))
        (_, init, slot_node, num_ptr, num_feat, _thr, _miss, _kl, _kr, spec_ptr, spec_node, _skl, _skr) = ls
        lay = count_layout(ens, 1)
        locals_ = leafset_locals(ens.n_trees, num_ptr, num_feat, spec_ptr, spec_node, ens.feature, slot_node,
                                 lay.n_pf, lay.pf_ptr, lay.pf, int(ens.n_features))
        return ls, locals_

    return ens.derived("pdpx.plugins.trees.counts.leafsets", build)


def leafset_features(ens, st) -> tuple[np.ndarray, np.ndarray]:
    """(``q``, ``lfeat``): the number of distinct features of each tree and the column of its tree-local feature
    ``a`` at ``lfeat[t, a]`` (-1 past ``q[t]``), for the leaf-set kernels; kept with the ensemble."""
    def build():
        ls, (num_lf, spec_lf, q, lord) = leafset_layout(ens, st)
        num_ptr, num_feat, spec_ptr, spec_node = ls[3], ls[4], ls[9], ls[10]
        lfeat = np.full((ens.n_trees, lord.shape[1]), -1, dtype=np.int64)
        lfeat[np.repeat(np.arange(ens.n_trees), np.diff(num_ptr)), num_lf] = num_feat
        lfeat[np.repeat(np.arange(ens.n_trees), np.diff(spec_ptr)), spec_lf] = ens.feature[spec_node]
        return q, lfeat

    return ens.derived("pdpx.plugins.trees.counts.leafset_features", build)


def _leafset_pairs(ens, st, pairs):
    """The pair arguments of :func:`.counts_kernels.gather_leafsets` for ``pairs`` (None: every pair)."""
    from .counts_kernels import leafset_pairs

    q, lfeat = leafset_features(ens, st)
    if pairs is None:
        return ens.derived("pdpx.plugins.trees.counts.leafset_pairs", lambda: leafset_pairs(q, lfeat, None))
    return leafset_pairs(q, lfeat, sorted(pairs))


def _leafsets(ens, st, layout, Xc, row_w, order, n_tg, n_rg, pairs=None) -> np.ndarray:
    from .counts_kernels import gather_leafsets, leafset_slots
    from .leafsets import node_masks

    ls, (num_lf, spec_lf, q, lord) = leafset_layout(ens, st)
    pair_last, pair_ok = _leafset_pairs(ens, st, pairs)
    leaf_base, leaf_p, s1 = ens.derived(f"pdpx.plugins.trees.counts.leafset_slots{order}", lambda: leafset_slots(
        ls[2], layout.slot_base, layout.n_pf, lord))
    masks = node_masks(ls)
    w = np.ascontiguousarray(row_w)

    def part(r0, r1, tg, out):
        gather_leafsets(Xc, w, int(order), r0, r1, tg, n_tg, masks, num_lf, spec_lf, q, leaf_base, leaf_p, s1, lord,
                        st.routing, pair_last, pair_ok, out)

    return run_parts(part, len(Xc), n_tg, n_rg, int(layout.n_slots))


def _partition(ens, st, layout, Xc, row_w, unit, order, n_tg, n_rg) -> np.ndarray:
    from .counts_kernels import gather_partition
    from .partition import nan_columns

    Xt = np.ascontiguousarray(Xc.T)
    has_nan = nan_columns(Xt)
    w = np.ascontiguousarray(row_w)

    def part(r0, r1, tg, out):
        gather_partition(Xt, has_nan, w, 1.0 if unit else 0.0, int(order), r0, r1, tg, n_tg, ens.tree_start,
                         int(layout.max_depth), layout.ford, layout.slot_base, layout.n_pf, st.routing, out)

    return run_parts(part, Xt.shape[1], n_tg, n_rg, int(layout.n_slots))


def gather_task(model, part, weights, response: str, columns, order: int = 2, memory_budget: int = 256 << 20,
                n_jobs=1):
    """What one partition's task runs (Dask, ``DaskData.gather_counts``): the counts of the partition's rows on
    ``model``'s trees.

    ``columns``: the model's columns in order (``DaskData.columns``); ``n_jobs``: threads (1 on a cluster,
    whose workers are the parallelism). The results of every partition add up (``sum(...)``) to the counts
    of all rows.
    """
    from ...core.plugins import adapt

    adapter = adapt(model)
    part = part[columns] if list(part.columns) != list(columns) else part
    X = adapter.validate_columns(part)
    tm = adapter.tree_model(response)
    if tm is None:
        raise PdpxError(f"pattern counts need readable trees: {adapter.tree_model_unavailable(response)}")
    return gather(tm, X, weights, order=order, memory_budget=memory_budget, n_jobs=n_jobs)
