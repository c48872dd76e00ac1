"""``exact`` of a :class:`~pdpx.core.treesum.TreeSum`: each member by its own kernel, then the weighted sum."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.ir import TreeModel
from ...core.method import MethodResult, Request
from ...core.treesum import TreeSum


def exact_sum(ts: TreeSum, req: Request, exact_one, plan) -> MethodResult:
    """What ``brute`` returns for ``req`` on ``offset + sum_m W_m @ member_m`` (``exact_one(model, request,
    plan)``: one member, as its plan in ``plan.members`` says: one per member reading a target feature)."""
    outputs = np.asarray(req.outputs, dtype=np.int64)
    shape = req.grid_shape
    n = len(req.X)
    avg = np.broadcast_to(ts.offset[outputs].reshape((-1,) + (1,) * len(shape)), (len(outputs),) + shape).copy()
    ind = None
    if req.needs_individual:
        ind = np.broadcast_to(ts.offset[outputs].reshape((-1,) + (1,) * (len(shape) + 1)),
                              (len(outputs), n) + shape).copy()
    notes = list(ts.notes)
    plans = iter(plan.members)
    for term in ts.terms:
        reads = term.columns is None or any(f in term.columns for f in req.features)
        own = next(plans) if reads else None
        W = np.asarray(term.weights, dtype=np.float64)[outputs]
        used = np.flatnonzero(np.any(W != 0, axis=0))
        if not used.size:
            continue
        a, i, more = _member(term, req, used, lambda model, sub, own=own: exact_one(model, sub, own))
        avg += np.tensordot(W[:, used], a, axes=1)
        if ind is not None:
            ind += np.tensordot(W[:, used], i, axes=1)
        notes += [m for m in more if m not in notes]
    return MethodResult(average=avg, individual=ind, notes=notes)


def member_request(term, req: Request, used=None) -> tuple[Request | None, list[int]]:
    """A member's own request (its columns, the target features it reads, outputs ``used``) and the
    positions in ``req.features`` of those features; None when it reads none of them."""
    cols = term.columns
    present = [k for k, f in enumerate(req.features) if cols is None or f in cols]
    if not present:
        return None, present
    feats = [req.features[k] if cols is None else cols.index(req.features[k]) for k in present]
    return replace(req, X=req.X if cols is None else req.X.iloc[:, cols], features=feats,
                   grid_values=[req.grid_values[k] for k in present],
                   categorical=[req.categorical[k] for k in present],
                   outputs=req.outputs if used is None else [int(u) for u in used]), present


def _member(term, req: Request, used, exact_one):
    """A member's average and ICE on the full grid, for its outputs ``used``."""
    cols = term.columns
    X = req.X if cols is None else req.X.iloc[:, cols]
    full = (len(used),) + req.grid_shape
    sub, present = member_request(term, req, used)
    if sub is not None:
        res = exact_one(term.model, sub)
        a = _spread(res.average, 1, present, req.grid_shape)
        i = _spread(res.individual, 2, present, req.grid_shape) if req.needs_individual else None
        return a, i, res.notes
    # the member reads none of the target features: its prediction is the same at every grid point
    pred = _predict(term.model, X)[:, used]  # (n, len(used))
    w = req.sample_weight
    share = np.full(len(X), 1.0 / len(X)) if w is None else np.asarray(w, dtype=np.float64) / float(np.sum(w))
    mean = share @ pred  # a weighted mean: within the range of the predictions, whatever their size
    a = np.broadcast_to(mean.reshape((-1,) + (1,) * len(req.grid_shape)), full)
    i = None
    if req.needs_individual:
        i = np.broadcast_to(pred.T.reshape(pred.T.shape + (1,) * len(req.grid_shape)),
                            (len(used), len(X)) + req.grid_shape)
    return a, i, []


def _spread(arr, lead: int, present: list, grid_shape: tuple):
    """Values on the grid of the ``present`` features, repeated along the other features' axes."""
    shape = arr.shape[:lead] + tuple(grid_shape[k] if k in present else 1 for k in range(len(grid_shape)))
    return np.broadcast_to(arr.reshape(shape), arr.shape[:lead] + tuple(grid_shape))


def _predict(model, X) -> np.ndarray:
    if isinstance(model, TreeModel):
        return model.ensemble.predict(model.encode(X))
    total = np.tile(model.offset, (len(X), 1))
    for term in model.terms:
        Xm = X if term.columns is None else X.iloc[:, term.columns]
        total += _predict(term.model, Xm) @ np.asarray(term.weights, dtype=np.float64).T
    return total
