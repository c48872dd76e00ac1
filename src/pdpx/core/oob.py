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
from .ir import TreeEnsemble, TreeModel
from .jackknife import inbag_of, members_of
from .members import BruteMembersView, MembersSession, MembersView, model_name
from .method import MethodResult
from .options import PDOptions
from .result import PartialDependenceResult

#: The share of the memory budget one block of rows' member curves may take.
BLOCK_SHARE = 8
#: The column of row positions the gated forest reads (:func:`gated_forest`).
ROW = "\x00pdpx-oob-row"


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
        if not inp.data.here:
            raise PdpxError("oob=True reads the training rows as a pandas frame here, in the order the model saw "
                            "them; bring X here (a Dask or Spark X's rows have no order pdpx can match)")
        N = inbag_of(inp, "oob=True")
        if N.shape[0] != inp.n_rows:
            raise PdpxError(f"oob=True needs X to be the rows this {model_name(inp)} was trained on, in the order it "
                            f"saw them (pdpx checks their number): X has {inp.n_rows:,} rows, the model was trained "
                            f"on {N.shape[0]:,}")
        session.counts = N

    res, *_ = members_of(model, X, features, options.but(oob=False), "oob=True", session_class=OOBSession,
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
        B = len(self.weights)
        if self.counts.shape[1] != B:
            raise PdpxError(f"oob=True: this {model_name(inp)} has {self.counts.shape[1]} bagged members and pdpx "
                            f"read {B}, so the in-bag counts are not its members'")
        if self.split is not None and batch.name != self.exact.name:
            raise PdpxError(f"oob=True: the trees of this {model_name(inp)} did not answer for it (method "
                            f"{batch.name!r} was chosen), so its members cannot be read from them")
        if not (self.counts == 0).any(axis=1).any():
            raise PdpxError("oob=True: every member drew every row, so no row has an out-of-bag curve")
        t0 = time.perf_counter()
        gated = self._gated()
        if gated is not None:
            average, individual, notes = self._run_gated(req, *gated)
        else:
            average, individual, notes = self._run_members(req)
        return MethodResult(average=average, individual=individual, notes=notes), time.perf_counter() - t0

    def _gated(self):
        """``(trees, share)``: the forest with each tree behind a split on the row's position that lets through only
        the rows the tree did not draw (:func:`gated_forest`), and each row's share of the trees' weight that is out
        of bag; None when the trees are no plain forest (a sum of models, a link) or the rows are too many."""
        tm = self.trees
        if not isinstance(tm, TreeModel) or tm.ensemble.link != "identity" or self.counts.shape[0] >= 2 ** 24:
            return None
        ens = tm.ensemble
        oob = self.counts == 0
        key = f"oob-gate:{oob.shape[0]}:{hash(np.packbits(oob).tobytes())}"
        gated = ens.derived(key, lambda: gated_forest(ens, oob))
        weight = ens.effective_tree_weight()
        # in blocks of rows: no n x B array of floats
        share = np.concatenate([oob[s:s + 8192] @ weight for s in range(0, len(oob), 8192)])

        def encode(X):
            return np.column_stack([tm.encode(X.drop(columns=[ROW])), X[ROW].to_numpy(np.float64)])

        return TreeModel(ensemble=gated, encode=encode, encode_values=tm.encode_values, notes=list(tm.notes),
                         recursion_weights=tm.recursion_weights, dated=tm.dated, value_sets=tm.value_sets), share

    def _run_gated(self, req, trees, share):
        """The out-of-bag curves from one pass of ``exact`` over the gated forest: its ICE at row ``i`` is ``base +
        share_i * (ice_oob_i - base)``, so the rows weighted by ``1 / share_i`` average to the out-of-bag PD."""
        inp = self.inputs
        kept = share > 0
        base = trees.ensemble.base_score[np.asarray(req.outputs)].reshape((-1,) + (1,) * len(req.grid_shape))
        s0 = np.ones(inp.n_rows) if req.sample_weight is None else np.asarray(req.sample_weight, dtype=np.float64)
        if not s0[kept].sum() > 0:
            raise PdpxError("oob=True: the rows with an out-of-bag curve all have sample_weight 0")
        u = np.divide(s0, share, out=np.zeros_like(s0), where=kept)
        X = req.X.assign(**{ROW: np.arange(inp.n_rows, dtype=np.float64)})
        view = MembersView(inp.adapter, trees)
        plan = self.exact.plan(view, [tuple(req.features)])
        got = plan.compute(view, replace(req, X=X, sample_weight=u, options=inp.options_for(self.exact), rows=None))
        average = base + (np.asarray(got.average, dtype=np.float64) - base) * (u.sum() / s0[kept].sum())
        individual = None
        if req.needs_individual:
            ice = np.asarray(got.individual, dtype=np.float64)[:, kept]
            scale = (1.0 / share[kept]).reshape((1, -1) + (1,) * len(req.grid_shape))
            individual = base[:, None] + (ice - base[:, None]) * scale
        return average, individual, list(got.notes)

    def _run_members(self, req):
        """The out-of-bag curves from every member's ICE curves (a block of rows at a time), weighted row by row."""
        inp = self.inputs
        K, B, n = len(req.outputs), len(self.weights), inp.n_rows
        if self.split is not None:
            view, method = MembersView(inp.adapter, self.split), self.exact
        else:
            view, method = BruteMembersView(inp.adapter, self.predicts, K), inp.methods["brute"]
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
        w = None if req.sample_weight is None else np.asarray(req.sample_weight, dtype=np.float64)[kept]
        if w is not None and not w.sum() > 0:
            raise PdpxError("oob=True: the rows with an out-of-bag curve all have sample_weight 0")
        average = np.average(ice, axis=1, weights=w).reshape((K,) + tuple(req.grid_shape))
        individual = ice.reshape((K, ice.shape[1]) + tuple(req.grid_shape)) if req.needs_individual else None
        return average, individual, list(notes)


def gated_forest(ens: TreeEnsemble, oob: np.ndarray) -> TreeEnsemble:
    """``ens`` with one more input (the row's position, its last column) and each tree ``t`` behind a new root: a
    categorical split on that input whose set is the rows ``oob[:, t]`` marks (rows the tree did not draw), which
    go on to the tree; every other row reaches a new leaf of 0. Its prediction for row ``i`` is the base score plus
    the weighted sum of the trees that did not draw ``i``."""
    n, T = oob.shape
    N = ens.n_nodes
    tree_of = np.repeat(np.arange(T), np.diff(ens.tree_start))
    shift = 2 * (tree_of + 1)
    old = np.arange(N) + shift  # each tree's nodes, after its gate and the gate's leaf of 0
    gate = ens.tree_start[:-1] + 2 * np.arange(T)
    zero = gate + 1
    root = ens.tree_start[:-1] + 2 * (np.arange(T) + 1)
    M = N + 2 * T

    def nodes(a, at_gate, at_zero):
        out = np.empty((M,) + a.shape[1:], dtype=a.dtype)
        out[old], out[gate], out[zero] = a, at_gate, at_zero
        return out

    def moved(child):
        return np.where(child >= 0, child + shift, child)

    nwords = (n + 31) // 32
    bits = np.zeros((T, nwords * 32), dtype=bool)
    bits[:, :n] = oob.T
    words = np.packbits(bits, axis=1, bitorder="little").view("<u4").reshape(-1)
    into, other = (root, zero) if ens.categories_go_left else (zero, root)
    return TreeEnsemble(
        left=nodes(moved(ens.left), into, -1), right=nodes(moved(ens.right), other, -1),
        feature=nodes(ens.feature, ens.n_features, 0), threshold=nodes(ens.threshold, 0.0, 0.0),
        missing_left=nodes(ens.missing_left, False, False), value=nodes(ens.value, 0.0, 0.0),
        tree_start=ens.tree_start + 2 * np.arange(T + 1), tree_group=ens.tree_group, n_features=ens.n_features + 1,
        n_margins=ens.n_margins, node_weight=nodes(ens.node_weight, np.nan, np.nan),
        nan_mode=nodes(ens.nan_mode, 0, 0),
        cat_offset=nodes(ens.cat_offset, len(ens.cat_words) + nwords * np.arange(T), -1),
        cat_nwords=nodes(ens.cat_nwords, nwords, 0), cat_words=np.concatenate([ens.cat_words, words]),
        tree_weight=ens.tree_weight, base_score=ens.base_score, comparison=ens.comparison,
        float32_input=ens.float32_input, categories_go_left=ens.categories_go_left, aggregation=ens.aggregation,
        link=ens.link, link_scale=ens.link_scale, description=ens.description + " (out-of-bag gates)",
    )
