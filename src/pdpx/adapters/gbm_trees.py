"""Reading R gbm models, given as plain data, into the common tree representation.

Nothing here imports R. The R package (``r/pdpx/R/gbm.R``) flattens the first
``n.trees`` trees of ``model$trees`` (the columns of ``pretty.gbm.tree``), trees one
after another: ``n_nodes`` per tree; per node ``split_var`` (0-based, -1 at a leaf),
``split_code`` (threshold, index into ``c.splits``, or at a leaf the prediction,
shrinkage included), tree-local 0-based ``left``, ``right``, ``missing`` children and
``weight`` (the node's training weight); ``c_splits`` (all of ``model$c.splits``
concatenated) with ``c_split_len``; ``var_type`` (0 numeric or ordered, else the
number of levels) and ``init_f``.

Facts checked against gbm 2.1.8's ``predict.gbm`` (``r/pdpx/tests/testthat/test-gbm.R``):

* numeric split: ``x < split_code`` goes left, else right, and a missing value
  goes to the third child, ``missing``. Factors arrive as the 0-based position of
  the level in ``var.levels`` (ordered factors too, split as numbers);
* categorical split: ``c.splits[[split_code + 1]][level + 1]`` is -1 (left),
  1 (right) or 0 (a level the node never saw: the missing child);
* the prediction is ``init_f`` plus the sum of the trees' leaves (the link scale);
  the response scale applies the distribution's inverse link (bernoulli: logistic,
  poisson: exp; gaussian and laplace: identity).

The IR has two children per node, so a node whose missing child can be reached
becomes two: the split itself, whose left side (NaN included) leads to an added
node that sends NaN (and, for a categorical split, the unseen levels) to the
missing child and everything else on to the left child. Only the inputs listed in
``na_inputs`` keep that detour for numeric splits (the R package lists the columns
with missing values); the encoder then refuses NaN elsewhere.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..core.errors import PdpxError
from ..core.ir import MalformedTreeError, TreeEnsemble
from ..r_wire import as_array, as_list

#: gbm distributions pdpx reads, with the inverse link of ``type = "response"``.
LINKS = {"gaussian": "identity", "laplace": "identity", "bernoulli": "logistic", "poisson": "exp"}


def gbm_ensemble(spec: Mapping, na_inputs=None, response_scale: bool = True) -> TreeEnsemble:
    """The trees of ``spec`` as a TreeEnsemble, on the response (or link) scale."""
    dist = str(spec["distribution"])
    if dist not in LINKS:
        raise PdpxError(f"gbm distribution {dist!r} is not read by pdpx's tree methods; read: {sorted(LINKS)}")
    sizes = as_array(spec["n_nodes"], np.int64).ravel()
    if sizes.size == 0 or np.any(sizes <= 0):
        raise PdpxError("the gbm model has no trees to read (n.trees = 0?)")
    total = int(sizes.sum())
    var = as_array(spec["split_var"], np.int64).ravel()
    code = as_array(spec["split_code"]).ravel()
    lc, rc, mc = (as_array(spec[k], np.int64).ravel() for k in ("left", "right", "missing"))
    weight = as_array(spec["weight"]).ravel()
    if not all(a.size == total for a in (var, code, lc, rc, mc, weight)):
        raise PdpxError("gbm node vectors disagree with n_nodes")
    var_type = as_array(spec["var_type"], np.int64).ravel()
    n_features = var_type.size
    lens = as_array(spec.get("c_split_len"), np.int64).ravel()
    flat = as_array(spec.get("c_splits"), np.int64).ravel()
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    na = set(range(n_features)) if na_inputs is None else {int(j) for j in as_list(na_inputs) or []}

    leaf = var < 0
    if np.any(~leaf & (var >= n_features)):
        raise MalformedTreeError("a gbm split variable is out of range")
    tree_of = np.repeat(np.arange(sizes.size), sizes)
    start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    f = np.where(leaf, 0, var)
    categorical = ~leaf & (var_type[f] > 0)
    split_idx = np.where(categorical, code, 0).astype(np.int64)
    if np.any(categorical & ((split_idx < 0) | (split_idx >= lens.size))):
        raise MalformedTreeError("a gbm categorical split points outside c.splits")
    has_unseen = np.zeros(total, dtype=bool)
    for i in np.flatnonzero(categorical):
        s = flat[offsets[split_idx[i]]: offsets[split_idx[i] + 1]]
        has_unseen[i] = bool(np.any(s == 0))
    na_feature = np.array([j in na for j in range(n_features)], dtype=bool)
    expand = ~leaf & (na_feature[f] | has_unseen)

    # new layout: each tree's own nodes, then its added nodes
    extra = np.bincount(tree_of[expand], minlength=sizes.size)
    new_sizes = sizes + extra
    new_start = np.concatenate([[0], np.cumsum(new_sizes)]).astype(np.int64)
    pos = new_start[tree_of] + (np.arange(total) - start[tree_of])  # new index of each original node
    rank = np.zeros(total, dtype=np.int64)
    for t in range(sizes.size):
        sel = np.flatnonzero(expand[start[t]:start[t + 1]]) + start[t]
        rank[sel] = np.arange(sel.size)
    added = new_start[tree_of] + sizes[tree_of] + rank  # index of the added node (where expand)
    n = int(new_sizes.sum())

    def glob(local):
        return new_start[tree_of] + local

    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.zeros(n)
    missing_left = np.zeros(n, dtype=bool)
    value = np.zeros(n)
    node_weight = np.zeros(n)
    internal = np.flatnonzero(~leaf)
    left[pos[internal]] = np.where(expand[internal], added[internal], glob(lc)[internal])
    right[pos[internal]] = glob(rc)[internal]
    feature[pos[internal]] = var[internal]
    numeric = internal[~categorical[internal]]
    threshold[pos[numeric]] = code[numeric]
    missing_left[pos[internal]] = expand[internal]  # NaN: on to the added node; without it, nowhere to go
    value[pos[leaf]] = code[leaf]
    node_weight[pos] = weight
    ex = np.flatnonzero(expand)
    a = added[ex]
    left[a] = glob(mc)[ex]
    right[a] = glob(lc)[ex]
    feature[a] = var[ex]
    threshold[a] = -np.inf  # nothing is < -inf: numbers go right (the left child), NaN to the missing child
    missing_left[a] = True
    node_weight[a] = weight[glob(lc)[ex] - new_start[tree_of[ex]] + start[tree_of[ex]]]

    # categorical bitsets: the original node's set goes left (left + unseen levels), the added node's
    # set (unseen levels) goes left to the missing child
    n_levels = int(var_type.max()) if n_features else 1
    nw = max(1, -(-max(n_levels, int(lens.max()) if lens.size else 1) // 32))
    cat_offset = np.full(n, -1, dtype=np.int64)
    cat_nwords = np.zeros(n, dtype=np.int64)
    words: list[np.ndarray] = []

    def bitset(codes):
        w = np.zeros(nw, dtype=np.uint32)
        for c in codes:
            w[c // 32] |= np.uint32(1 << (c % 32))
        return w

    for i in np.flatnonzero(categorical):
        s = flat[offsets[split_idx[i]]: offsets[split_idx[i] + 1]]
        cat_offset[pos[i]] = nw * len(words)
        cat_nwords[pos[i]] = nw
        words.append(bitset(np.flatnonzero(s <= 0) if expand[i] else np.flatnonzero(s == -1)))
        if expand[i]:
            cat_offset[added[i]] = nw * len(words)
            cat_nwords[added[i]] = nw
            words.append(bitset(np.flatnonzero(s == 0)))
    cat_words = np.concatenate(words) if words else np.zeros(0, dtype=np.uint32)

    link = LINKS[dist] if response_scale else "identity"
    return TreeEnsemble(
        left=left, right=right, feature=feature, threshold=threshold, missing_left=missing_left,
        value=value, tree_start=new_start, tree_group=np.zeros(sizes.size, dtype=np.int64),
        n_features=n_features, n_margins=1, node_weight=node_weight, cat_offset=cat_offset,
        cat_nwords=cat_nwords, cat_words=cat_words, base_score=np.array([float(as_array(spec["init_f"])[0])]),
        comparison="<", float32_input=False, categories_go_left=True, aggregation="sum", link=link,
        description=f"gbm ({dist}, {sizes.size} trees)",
    )
