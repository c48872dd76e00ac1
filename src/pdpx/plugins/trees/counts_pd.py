"""Partial dependence of one or two features from pattern counts (:mod:`.counts`), without the rows.

For features S (one or two) and leaf ``L``, ``W[L, S]`` is the summed count of
the failing sets ``F`` within S: the weight of the rows that pass every
condition of ``L`` on the other features. Those rows reach ``L`` exactly at the
grid points that pass ``L``'s conditions on S, which is ``L``'s grid region as
``exact`` computes it (:func:`.prep.prepare`: intervals on sorted grids, masks
otherwise, category sets, the missing-value point). So

    PD_S(g) = base + sum_L tree_weight * value[L] * W[L, S] * [g in region(L)] / total_weight

and each leaf adds ``tree_weight * value * W`` to its region in a difference
array (:func:`.kernels.scatter_boxes`): a feature set costs O(leaves + grid).

Only responses that are sums of leaf values qualify (identity link: regression,
margins, forest probabilities as means of leaf class fractions), only averages,
and only sets of at most ``order`` features; :func:`unavailable` says why
otherwise, and :func:`partial_dependence` refuses with that reason rather than
compute anything else.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.errors import PdpxError
from ...core.method import MethodResult, Request
from ...core.treesum import TreeSum
from .counts import PatternCounts, SumCounts, count_layout
from .plan import counts_unavailable
from .prep import integrate, prepare
from .registry import ran


def unavailable(tm, req: Request, counts=None) -> str | None:
    """Why the counts cannot give ``req``'s answer on ``tm`` (and ``counts``, when given), or None: the
    planner's :func:`.plan.counts_unavailable`."""
    return counts_unavailable(tm, req, counts)


def partial_dependence(tm, counts, req: Request) -> MethodResult:
    """What ``brute`` returns for ``req`` (average only), from ``counts`` of the same rows and weights.

    Only ``req.features``, ``req.grid_values`` and ``req.outputs`` are read: the
    rows and weights are those the counts were gathered from.
    """
    why = unavailable(tm, req, counts)
    if why:
        raise PdpxError(f"pattern counts cannot compute this: {why}")
    if counts.total_weight <= 0:
        raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
    ran("counts")
    avg = _average(tm, counts, req)
    notes = list(tm.notes)
    return MethodResult(average=avg, notes=notes)


def _average(tm, counts, req: Request) -> np.ndarray:
    """(len(outputs), *grid_shape)."""
    if isinstance(tm, TreeSum):
        return _average_sum(tm, counts, req)
    if not isinstance(counts, PatternCounts):
        raise PdpxError("these counts were gathered on an ensemble of models; pass the counts of this tree model")
    ens = tm.ensemble
    layout = count_layout(ens, counts.order)
    if layout.key != counts.key:
        raise PdpxError("these pattern counts were gathered on another model; gather them on this one")
    from .counts_kernels import subset_weights
    from .kernels import scatter_boxes

    prep = prepare(tm, req)
    fa = int(req.features[0])
    fb = int(req.features[1]) if len(req.features) > 1 else -1
    W = subset_weights(layout.slot_base, layout.n_pf, layout.pf_ptr, layout.pf, counts.counts, fa, fb)
    W[~prep.reach] = 0.0  # leaves no grid point reaches have no region
    M = int(ens.n_margins)
    D = scatter_boxes(W, *prep.box_args()).reshape(M, prep.n_cells)
    avg = integrate(D, prep.grid_shape) / counts.total_weight
    avg += ens.base_score.reshape((M,) + (1,) * len(prep.grid_shape))
    return avg[np.asarray(req.outputs, dtype=np.int64)]


def mean_prediction(tm, counts) -> np.ndarray:
    """The weighted mean over the counted rows of each output of ``tm`` (its margins), shape (n_outputs,).

    The rows' own leaves are the slots of the empty failing set.
    """
    if isinstance(tm, TreeSum):
        total = np.array(tm.offset, dtype=np.float64)
        for term, tc in zip(tm.terms, counts.terms):
            total = total + np.asarray(term.weights, dtype=np.float64) @ mean_prediction(term.model, tc)
        return total
    ens = tm.ensemble
    layout = count_layout(ens, counts.order)
    if layout.key != counts.key:
        raise PdpxError("these pattern counts were gathered on another model; gather them on this one")
    leaves = np.flatnonzero(layout.slot_base >= 0)
    c0 = counts.counts[layout.slot_base[leaves]]
    tree_of = np.repeat(np.arange(ens.n_trees), np.diff(ens.tree_start))[leaves]
    scale = ens.effective_tree_weight()[tree_of] * c0
    group = ens.tree_group[tree_of]
    M = int(ens.n_margins)
    out = ens.base_score.astype(np.float64) * counts.total_weight
    vec = group < 0
    if np.any(vec):
        out += scale[vec] @ ens.value[leaves[vec], :M]
    np.add.at(out, group[~vec], scale[~vec] * ens.value[leaves[~vec], 0])
    return out / counts.total_weight


def _average_sum(ts: TreeSum, counts, req: Request) -> np.ndarray:
    """``offset + sum_m W_m @ PD(member_m)``, each member from its own counts (as ``combine.exact_sum``)."""
    if not isinstance(counts, SumCounts) or len(counts.terms) != len(ts.terms):
        raise PdpxError("these pattern counts were not gathered on this ensemble of models; gather them on it")
    outputs = np.asarray(req.outputs, dtype=np.int64)
    shape = req.grid_shape
    avg = np.broadcast_to(ts.offset[outputs].reshape((-1,) + (1,) * len(shape)), (len(outputs),) + shape).copy()
    for term, tc in zip(ts.terms, counts.terms):
        Wt = np.asarray(term.weights, dtype=np.float64)[outputs]
        used = np.flatnonzero(np.any(Wt != 0, axis=0))
        if not used.size:
            continue
        cols = term.columns
        present = [k for k, f in enumerate(req.features) if cols is None or f in cols]
        if present:
            feats = [req.features[k] if cols is None else cols.index(req.features[k]) for k in present]
            sub = replace(req, features=feats, grid_values=[req.grid_values[k] for k in present],
                          categorical=[req.categorical[k] for k in present], outputs=[int(u) for u in used])
            a = _average(term.model, tc, sub)
            a = a.reshape(a.shape[:1] + tuple(shape[k] if k in present else 1 for k in range(len(shape))))
        else:  # the member reads none of the target features: its mean prediction at every grid point
            a = mean_prediction(term.model, tc)[used].reshape((-1,) + (1,) * len(shape))
        avg += np.tensordot(Wt[:, used], np.broadcast_to(a, (len(used),) + shape), axes=1)
    return avg
