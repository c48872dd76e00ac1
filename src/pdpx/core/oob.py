"""``oob=True``: the out-of-bag PD of a bagged forest, each training row through the members that never saw it.

A bagged forest's members each drew a bootstrap sample of the training rows; member ``b`` drew row ``i``
``N[i, b]`` times (the in-bag counts, rebuilt by the model's adapter from its library's own sampling rule:
:mod:`pdpx.adapters.sklearn_inbag`). The out-of-bag ICE curve of training row ``i`` averages only the
members that did not draw it::

    ice_oob[i, g] = sum_b w_b [N[i, b] == 0] f_b(x_i with the features set to g) / sum_b w_b [N[i, b] == 0]

(``w_b`` the members' weights, equal in a forest), and the out-of-bag PD is the (``sample_weight``-weighted)
mean of those curves over the rows. A row every member drew has no out-of-bag curve: it is left out of the
PD, and the rows left out are counted in ``res.notes`` (with ``kind="individual"`` / ``"both"``, ``res.ice_rows``
names the rows kept). Each member's ICE curves come from the method that computes the model's own
(``exact`` over each tree as an output of its own, as ``interval="members"`` does, or the members' own predict),
a block of rows at a time within the memory budget.

X must be the rows the model was trained on, in the order it saw them: the in-bag counts are per training row.
pdpx checks their number (``len(X)`` against the training size the model records); it cannot check their
values, so the caller vouches for them.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from .errors import PdpxError
from .jackknife import inbag_of
from .members import BruteMembersView, MembersSession, MembersView, member_curves, model_name
from .method import MethodResult
from .options import PDOptions
from .result import PartialDependenceResult

#: The share of the memory budget one block of rows' member curves may take.
BLOCK_SHARE = 8


def oob_partial_dependence(model, X, features, options: PDOptions) -> PartialDependenceResult:
    """``partial_dependence`` with ``oob=True`` (see the module docstring)."""
    if isinstance(model, dict):
        raise PdpxError("oob=True reads one bagged forest's members and in-bag counts; pass one model")
    for name, given in (("interval", options.interval is not None), ("by", options.by is not None),
                        ("ice_sample", options.ice_sample is not None)):
        if given:
            raise PdpxError(f"oob=True and {name}= cannot be combined: the out-of-bag PD is computed on every "
                            f"training row, through the members that did not draw it; leave {name} out")

    def read_counts(session):
        inp = session.inputs
        N = inbag_of(inp, "oob=True")
        if N.shape[0] != inp.n_rows:
            raise PdpxError(f"oob=True needs X to be the rows this {model_name(inp)} was trained on, in the order it "
                            f"saw them (pdpx checks their number): X has {inp.n_rows:,} rows, the model was trained "
                            f"on {N.shape[0]:,}")
        session.counts = N

    res, *_ = member_curves(model, X, features, options.but(oob=False), session_class=OOBSession,
                                             prepare=read_counts)
    return res


class OOBSession(MembersSession):
    """A members' session (:class:`~pdpx.core.members.MembersSession`) whose run returns the out-of-bag curves
    (module docstring) instead of the model's: ``counts`` are the in-bag counts, set before the run."""

    counts = None

    def compute(self, features: list[int]) -> PartialDependenceResult:
        """The out-of-bag result of one feature set, with its notes."""
        res = super().compute(features)
        kept = (self.counts == 0).any(axis=1)  # rows some member did not draw
        B, n_kept, n = self.counts.shape[1], int(kept.sum()), len(kept)
        per_row = (self.counts == 0).sum(axis=1)[kept]
        res.notes.append(f"out-of-bag: each row's ICE curve averages only the members that did not draw it ({B} "
                         f"members; {per_row.mean():.1f} per row on average, {per_row.min()} at least); the PD is "
                         f"their mean over {n_kept:,} of the {n:,} training rows")
        if n_kept < n:
            res.notes.append(f"out-of-bag: {n - n_kept:,} row(s) drawn by every member have no out-of-bag curve and "
                             "are left out of the PD")
            if res.individual is not None:
                res.ice_rows = np.flatnonzero(kept)
        return res

    def _run(self, batch, req):
        inp = self.inputs
        K, B, n = len(req.outputs), len(self.weights), inp.n_rows
        if self.counts.shape[1] != B:
            raise PdpxError(f"oob=True: this {model_name(inp)} has {self.counts.shape[1]} bagged members and pdpx "
                            f"read {B}, so the in-bag counts are not its members'")
        if self.split is not None and batch.name != self.exact.name:
            raise PdpxError(f"oob=True: the trees of this {model_name(inp)} did not answer for it (method "
                            f"{batch.name!r} was chosen), so its members cannot be read from them")
        if self.split is not None:
            view, method = MembersView(inp.adapter, self.split), self.exact
        else:
            view, method = BruteMembersView(inp.adapter, self.predicts, K), inp.methods["brute"]
        t0 = time.perf_counter()
        out = self.weights[None, :] * (self.counts == 0)
        total = out.sum(axis=1)
        kept = total > 0
        W = np.divide(out, total[:, None], out=np.zeros_like(out), where=kept[:, None])
        G = req.n_grid
        ice = np.empty((K, n, G))
        block = max(1, min(n, inp.memory_budget // BLOCK_SHARE // (B * K * G * 8)))
        plan = method.plan(view, [tuple(req.features)])
        sub = replace(req, kind="individual", outputs=list(range(B * K)), sample_weight=None,
                      options=inp.options_for(method), rows=None)
        notes = []
        for s in range(0, n, block):
            e = min(n, s + block)
            got = plan.compute(view, replace(sub, X=req.X.iloc[s:e]))
            members = np.asarray(got.individual, dtype=np.float64).reshape(B, K, e - s, G)
            # each row's members' curves, weighted by the row's out-of-bag weights
            ice[:, s:e] = np.einsum("ib,bkig->kig", W[s:e], members, optimize=True)
            notes = got.notes
        ice = ice[:, kept]
        if not kept.any():
            raise PdpxError("oob=True: every member drew every row, so no row has an out-of-bag curve")
        w = None if req.sample_weight is None else np.asarray(req.sample_weight, dtype=np.float64)[kept]
        if w is not None and not w.sum() > 0:
            raise PdpxError("oob=True: the rows with an out-of-bag curve all have sample_weight 0")
        average = np.average(ice, axis=1, weights=w).reshape((K,) + tuple(req.grid_shape))
        individual = ice.reshape((K, ice.shape[1]) + tuple(req.grid_shape)) if req.needs_individual else None
        return MethodResult(average=average, individual=individual, notes=list(notes)), time.perf_counter() - t0
