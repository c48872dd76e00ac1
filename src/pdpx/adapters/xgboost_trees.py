"""Reading XGBoost models into the common tree representation (:mod:`pdpx.core.ir`).

What the trees mean, as XGBoost's predict applies it:

* inputs are rounded to float32, then ``x < t`` goes left (ties go right);
* NaN (and the wrapper's ``missing`` value) goes to ``default_left``;
* categorical splits list the categories that go *right*; codes outside the set
  (unknown, negative) go left; pandas categories are re-coded to the positions of
  the categories stored with the model (XGBoost >= 3.1 does the same at predict
  time and rejects categories it has not seen);
* ``base_score`` (scalar before 3.1, a bracketed vector since) is in prediction
  space and mapped to the margin by the objective's inverse link;
* trees of round ``r`` are ``iteration_indptr[r]:iteration_indptr[r + 1]``
  (``num_parallel_tree x num_class`` trees), ``tree_info`` is the class of each;
  DART trees are scaled by ``weight_drop``;
* node weights are ``sum_hessian`` (cover): a hessian-weighted ``recursion``.

Nothing here imports xgboost: the model arrives as the parsed ``learner``
(:func:`read_booster`).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..core.booster import numeric_column
from ..core.errors import PdpxError
from ..core.ir import TreeEnsemble
from .ubjson import ubj_loads

#: The allow-lists: each objective's predict checked against XGBoost's (tests/adapters/test_objectives.py);
#: an objective on none of them (binary:hinge, a new one of a later XGBoost, ...) refuses the tree
#: engine and brute answers. Objectives whose prediction is the margin itself.
IDENTITY_OBJECTIVES = {
    "reg:squarederror", "reg:linear", "reg:squaredlogerror", "reg:pseudohubererror",
    "reg:absoluteerror", "reg:quantileerror", "binary:logitraw",
    "rank:pairwise", "rank:ndcg", "rank:map",
}
#: prediction = sigmoid(margin)
LOGISTIC_OBJECTIVES = {"binary:logistic", "reg:logistic"}
#: prediction = exp(margin)
EXP_OBJECTIVES = {"count:poisson", "reg:gamma", "reg:tweedie", "survival:cox", "survival:aft"}
#: class probabilities = softmax(margins)
SOFTMAX_OBJECTIVES = {"multi:softprob", "multi:softmax"}
CLASSIFIER_OBJECTIVES = {"binary:logistic", "binary:logitraw", "binary:hinge", "multi:softprob", "multi:softmax"}
#: base_score is stored in prediction space; its margin is logit(.) / log(.) here.
#: (binary:logitraw keeps base_score as the margin: checked against xgboost 3.2)
BASE_LOGIT_OBJECTIVES = {"binary:logistic", "reg:logistic"}
BASE_LOG_OBJECTIVES = {"count:poisson", "reg:gamma", "reg:tweedie", "survival:cox", "survival:aft"}


class XGBoostEncoder:
    """DataFrame -> the float matrix XGBoost's trees see (category columns -> codes).

    ``stored``: categories saved with the model (XGBoost >= 3.1), by position;
    XGBoost re-codes pandas categories to these by value. Columns without stored
    categories use the codes of the frame's own categories (``frame``: the
    categories of X's category columns, recorded by the adapter's
    ``validate_columns``; grid values of those columns are category labels).
    """

    def __init__(self, stored: dict[int, list], frame: dict[int, list], missing: float,
                 names: list[str] | None = None):
        self.stored = stored
        self.frame = frame
        self.missing = missing
        #: column names by position (for messages), as the adapter last saw X
        self.names = names if names is not None else []

    def _name(self, pos: int) -> str:
        return self.names[pos] if pos < len(self.names) else f"feature {pos}"

    def _labels_to_codes(self, pos: int, labels, name, strict: bool) -> np.ndarray:
        target = self.stored.get(pos)
        if target is None:
            target = self.frame.get(pos, [])
            strict = False
        labels = list(labels)
        if not labels:
            return np.zeros(0)
        idx = pd.Index(target).get_indexer(pd.Index(labels, dtype=object)) if len(target) else np.full(len(labels), -1)
        if strict and np.any(idx < 0):
            unseen = [labels[i] for i in np.flatnonzero(idx < 0)]
            raise PdpxError(
                f"column {name!r} has categories the XGBoost model was not trained on: "
                f"{sorted(map(str, unseen))[:10]}; XGBoost refuses them at predict time too. "
                f"Known categories: {list(target)[:20]}"
            )
        return np.where(idx >= 0, idx, np.nan).astype(np.float64)

    def _mask_missing(self, arr: np.ndarray) -> np.ndarray:
        if not np.isnan(self.missing):
            arr[arr.astype(np.float32) == np.float32(self.missing)] = np.nan
        return arr

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        n, p = X.shape
        out = np.empty((n, p), dtype=np.float64)
        for j in range(p):
            col = X.iloc[:, j]
            if isinstance(col.dtype, pd.CategoricalDtype):
                codes = col.cat.codes.to_numpy().astype(np.int64)
                if j in self.stored:
                    cats = col.cat.categories
                    used = np.zeros(len(cats), dtype=bool)
                    used[codes[codes >= 0]] = True
                    new = np.full(len(cats), np.nan)
                    if used.any():  # only categories that occur must be known (as in XGBoost)
                        new[used] = self._labels_to_codes(j, cats[used], X.columns[j], strict=True)
                    vals = np.full(n, np.nan)
                    ok = codes >= 0
                    vals[ok] = new[codes[ok]]
                else:
                    self.frame[j] = list(col.cat.categories)
                    vals = np.where(codes >= 0, codes, np.nan).astype(np.float64)
                out[:, j] = vals
            else:
                out[:, j] = _as_float(col, X.columns[j])
        return self._mask_missing(out)

    def encode_values(self, pos: int, values) -> np.ndarray:
        if pos in self.stored or pos in self.frame:
            out = self._labels_to_codes(pos, values, self._name(pos), strict=True)
        else:
            out = _as_float(pd.Series(np.asarray(values)), self._name(pos))
        return self._mask_missing(np.array(out, dtype=np.float64))


def _as_float(col, name) -> np.ndarray:
    return numeric_column(col, name, "XGBoost takes numbers or pandas 'category' columns (convert it with "
                                     "X[col].astype('category') as at fit time)")


def model_categories(learner: dict) -> dict[int, list]:
    """Categories stored with the model (XGBoost >= 3.1), by feature position."""
    gb = learner["gradient_booster"]
    model = gb["gbtree"]["model"] if gb.get("name") == "dart" else gb.get("model", {})
    cats = model.get("cats") if isinstance(model, dict) else None
    out: dict[int, list] = {}
    if not cats:
        return out
    for j, enc in enumerate(cats.get("enc", [])):
        values = enc.get("values")
        if values is None or len(values) == 0:
            continue
        offsets = enc.get("offsets")
        if offsets is not None and len(offsets) > 0:  # strings: utf-8 bytes + offsets
            raw = np.asarray(values).astype(np.uint8).tobytes()
            off = np.asarray(offsets, dtype=np.int64)
            out[j] = [raw[off[i]: off[i + 1]].decode("utf-8") for i in range(len(off) - 1)]
        else:
            arr = np.asarray(values)
            out[j] = arr.tolist()
    return out


def parse_base_score(text) -> np.ndarray:
    """``base_score`` as stored (a number, or a bracketed list since 3.1) -> float32 array."""
    if isinstance(text, (int, float)):
        return np.array([float(text)], dtype=np.float32)
    s = str(text).strip()
    if s.startswith("["):
        s = s[1:-1]
    return np.array([float(v) for v in s.split(",") if v.strip()], dtype=np.float32)


def _leaf_weights(tree: dict, left: np.ndarray, leaf_size: int, value: np.ndarray) -> None:
    """A vector-leaf tree's leaves from ``leaf_weights`` (one row per leaf, leaves in node order), in place.

    Where the objective recomputes the leaves after the tree is grown (absolute and quantile error), the
    prediction adds ``leaf_weights``, while ``base_weights`` keep the weights of the growing step; under other
    objectives the two agree. A tree whose ``leaf_weights`` do not match its leaves keeps ``base_weights``
    (the check against XGBoost's own prediction then refuses the trees)."""
    lw = tree.get("leaf_weights")
    if lw is None or not len(lw):
        return
    leaves = np.flatnonzero(left < 0)
    lw = np.asarray(lw, dtype=np.float32).astype(np.float64)
    if lw.size == len(leaves) * leaf_size:
        value[leaves] = lw.reshape(len(leaves), leaf_size)


def base_margin(objective: str, base: np.ndarray, n_margins: int) -> np.ndarray:
    """``base_score`` (prediction space, float32) -> the margin XGBoost starts from."""
    b = np.asarray(base, dtype=np.float32)
    if objective in BASE_LOGIT_OBJECTIVES:
        with np.errstate(divide="ignore"):
            m = -np.log(np.float32(1.0) / b - np.float32(1.0))
    elif objective in BASE_LOG_OBJECTIVES:
        m = np.log(b)
    else:
        m = b
    m = np.asarray(m, dtype=np.float64)
    if m.size == 1 and n_margins > 1:
        m = np.repeat(m, n_margins)
    if m.size != n_margins:
        raise PdpxError(f"XGBoost base_score has {m.size} values for {n_margins} outputs")
    return m


def read_booster(booster) -> dict:
    """The ``learner`` part of the booster's model, from UBJSON (JSON as a fallback)."""
    try:
        return ubj_loads(booster.save_raw("ubj"))["learner"]
    except Exception:  # pragma: no cover - a format this reader does not know
        return json.loads(bytes(booster.save_raw("json")))["learner"]


def extract_trees(learner: dict, rounds: int) -> dict:
    """Node and tree arrays (keyword arguments of TreeEnsemble) for the first ``rounds`` rounds."""
    gb = learner["gradient_booster"]
    weights = None
    if gb.get("name") == "dart":
        model = gb["gbtree"]["model"]
        weights = np.asarray(gb.get("weight_drop", []), dtype=np.float64)
    elif gb.get("name") == "gbtree":
        model = gb["model"]
    else:
        raise PdpxError(f"XGBoost booster {gb.get('name')!r} has no trees")
    trees = model["trees"]
    indptr = model.get("iteration_indptr")
    if indptr is not None and len(indptr) > rounds:
        n_used = int(indptr[rounds])
    else:  # older models: trees per round = num_parallel_tree * max(num_class, 1)
        npt = int(model["gbtree_model_param"].get("num_parallel_tree", "1"))
        k = max(1, int(learner["learner_model_param"].get("num_class", "0")))
        n_used = min(len(trees), rounds * npt * k)
    if n_used <= 0:
        raise PdpxError("the XGBoost model has no trees in the rounds it predicts with")
    trees = trees[:n_used]
    tree_info = np.asarray(model["tree_info"][:n_used], dtype=np.int64)

    lefts, rights, feats, conds, dleft, stypes, hess, vals = [], [], [], [], [], [], [], []
    cat_nodes = []  # (tree, node_in_tree, codes)
    vector = False
    for t, tree in enumerate(trees):
        left = np.asarray(tree["left_children"], dtype=np.int64)
        right = np.asarray(tree["right_children"], dtype=np.int64)
        split_idx = np.asarray(tree["split_indices"], dtype=np.int64)
        cond = np.asarray(tree["split_conditions"], dtype=np.float32)
        default_left = np.asarray(tree["default_left"], dtype=bool)
        stype = np.asarray(tree.get("split_type", np.zeros(len(left))), dtype=np.int64)
        sum_h = np.asarray(tree["sum_hessian"], dtype=np.float32).astype(np.float64)
        leaf_size = int(tree["tree_param"].get("size_leaf_vector", "1") or 1)
        if leaf_size > 1:
            vector = True
            value = np.asarray(tree["base_weights"], dtype=np.float32).astype(np.float64).reshape(len(left), leaf_size)
            _leaf_weights(tree, left, leaf_size, value)
        else:
            value = cond.astype(np.float64)[:, None]
        codes_of = {}
        if len(tree.get("categories_nodes", [])):
            cats = np.asarray(tree["categories"], dtype=np.int64)
            seg = np.asarray(tree["categories_segments"], dtype=np.int64)
            size = np.asarray(tree["categories_sizes"], dtype=np.int64)
            for node, s0, sz in zip(np.asarray(tree["categories_nodes"], dtype=np.int64), seg, size):
                codes_of[int(node)] = cats[s0: s0 + sz]
        if int(tree["tree_param"].get("num_deleted", "0") or 0) > 0:
            order = _reachable(left, right)
            remap = np.full(len(left), -1, dtype=np.int64)
            remap[order] = np.arange(len(order))
            left = np.where(left[order] >= 0, remap[np.maximum(left[order], 0)], -1)
            right = np.where(right[order] >= 0, remap[np.maximum(right[order], 0)], -1)
            split_idx, cond, default_left = split_idx[order], cond[order], default_left[order]
            stype, sum_h, value = stype[order], sum_h[order], value[order]
            codes_of = {int(remap[k]): v for k, v in codes_of.items() if remap[k] >= 0}
        for node, codes in codes_of.items():
            cat_nodes.append((t, node, codes))
        lefts.append(left)
        rights.append(right)
        feats.append(split_idx)
        conds.append(cond)
        dleft.append(default_left)
        stypes.append(stype)
        hess.append(sum_h)
        vals.append(value)

    sizes = np.array([len(a) for a in lefts], dtype=np.int64)
    tree_start = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum(sizes, out=tree_start[1:])
    offs = np.repeat(tree_start[:-1], sizes)
    left = np.concatenate(lefts)
    right = np.concatenate(rights)
    is_leaf = left < 0
    left = np.where(is_leaf, -1, left + offs)
    right = np.where(is_leaf, -1, right + offs)
    feature = np.where(is_leaf, 0, np.concatenate(feats))
    threshold = np.where(is_leaf, 0.0, np.concatenate(conds).astype(np.float64))
    if vector:
        width = max(v.shape[1] for v in vals)
        value = np.concatenate([np.pad(v, ((0, 0), (0, width - v.shape[1]))) for v in vals])
    else:
        value = np.concatenate(vals)
    n = len(left)
    cat_offset = np.full(n, -1, dtype=np.int64)
    cat_nwords = np.zeros(n, dtype=np.int64)
    words: list[np.ndarray] = []
    pos = 0
    for t, node, codes in cat_nodes:
        g = int(tree_start[t]) + node
        codes = codes[codes >= 0]
        nw = int(codes.max()) // 32 + 1 if len(codes) else 1
        w = np.zeros(nw, dtype=np.uint32)
        np.bitwise_or.at(w, codes // 32, (np.uint32(1) << (codes % 32).astype(np.uint32)))
        words.append(w)
        cat_offset[g] = pos
        cat_nwords[g] = nw
        pos += nw
    stype = np.concatenate(stypes)
    bad = (stype == 1) & ~is_leaf & (cat_offset < 0)
    if np.any(bad):  # a categorical split without a category set: nothing goes right
        for g in np.flatnonzero(bad):
            words.append(np.zeros(1, dtype=np.uint32))
            cat_offset[g] = pos
            cat_nwords[g] = 1
            pos += 1
    tree_weight = np.ones(len(trees))
    if weights is not None and len(weights) >= n_used:
        tree_weight = weights[:n_used].astype(np.float32).astype(np.float64)
    out = dict(
        left=left, right=right, feature=feature, threshold=threshold,
        missing_left=np.concatenate(dleft), value=value, tree_start=tree_start,
        tree_group=np.where(tree_info >= 0, tree_info, 0) if not vector else np.full(len(trees), -1),
        node_weight=np.concatenate(hess), tree_weight=tree_weight,
        cat_offset=cat_offset, cat_nwords=cat_nwords,
        cat_words=np.concatenate(words) if words else np.zeros(0, dtype=np.uint32),
    )
    return out


def _reachable(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Nodes reachable from the root, in pre-order (drops deleted nodes)."""
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if left[node] >= 0:
            stack.append(int(right[node]))
            stack.append(int(left[node]))
    return np.asarray(order, dtype=np.int64)


def build_ensemble(learner: dict, response: str, rounds: int, *, n_features: int,
                   description: str = "") -> TreeEnsemble:
    """The first ``rounds`` rounds of the model as a TreeEnsemble whose link gives ``response``."""
    obj = learner["objective"]["name"]
    parts = extract_trees(learner, rounds)
    param = learner["learner_model_param"]
    n_class = int(param.get("num_class", "0"))
    n_margins = n_class if n_class > 0 else max(1, int(param.get("num_target", "1")))
    base = base_margin(obj, parse_base_score(param["base_score"]), n_margins)
    link = "identity"
    if response == "predict_proba":
        link = "binary_logistic" if n_margins == 1 else "softmax"
    elif response == "predict":
        if obj in LOGISTIC_OBJECTIVES:
            link = "logistic"
        elif obj in EXP_OBJECTIVES:
            link = "exp"
    return TreeEnsemble(
        n_features=int(param.get("num_feature", n_features)),
        n_margins=n_margins,
        base_score=base,
        comparison="<",
        float32_input=True,
        categories_go_left=False,
        aggregation="sum",
        link=link,
        description=description,
        **parts,
    )
