"""Reading scikit-learn tree models into the common representation.

Covers DecisionTree*/ExtraTree*, RandomForest*/ExtraTrees*, GradientBoosting*
(constant ``init`` only) and HistGradientBoosting* (numeric, categorical, missing
values): regression, binary, multiclass and multi-output. ``docs/adapters.md``
(scikit-learn) lists the facts relied on; each is pinned by a fidelity test
against the estimator's own prediction.
"""

from __future__ import annotations

import numpy as np

from ..core.forksafe import single_threaded
from ..core.ir import TreeEnsemble, TreeModel, fingerprint, model_cache, numeric_encoder, numeric_values

_TREE_FAMILY = ("DecisionTree", "ExtraTree")
_FOREST_FAMILY = ("RandomForest", "ExtraTrees")


def _kind(model) -> str | None:
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.tree import BaseDecisionTree

    if isinstance(model, BaseDecisionTree):
        return "tree"
    if isinstance(model, (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier, ExtraTreesRegressor)):
        return "forest"
    if isinstance(model, (GradientBoostingClassifier, GradientBoostingRegressor)):
        return "gb"
    if isinstance(model, (HistGradientBoostingClassifier, HistGradientBoostingRegressor)):
        return "hgb"
    return None


def casts_to_float32(model) -> bool:
    """Whether the estimator casts its input to float32 (trees, forests, GradientBoosting)."""
    return _kind(model) in ("tree", "forest", "gb")


def unavailable_reason(adapter, response: str) -> str:
    """Why ``tree_model(adapter, response)`` returned None: the sentence shown to the user."""
    model = adapter.model
    kind = _kind(model)
    name = type(model).__name__
    if kind is None:
        return f"{name} is not a tree model pdpx can read (use method='brute')"
    if kind == "gb":
        init = getattr(model, "init_", None)
        if not _constant_init(init):
            return (
                f"{name} was fitted with a non-constant init estimator ({type(init).__name__}); "
                "only constant inits (the default, a Dummy estimator, or 'zero') can be read as trees. "
                "Use method='brute'"
            )
    return f"{name}: response {response!r} cannot be computed from the trees (use method='brute')"


def _constant_init(init) -> bool:
    if isinstance(init, str):
        return init == "zero"
    from sklearn.dummy import DummyClassifier, DummyRegressor

    return isinstance(init, (DummyClassifier, DummyRegressor))


def tree_model(adapter, response: str) -> TreeModel | None:
    """The model's trees for ``response`` (cached per fitted model), or None when they cannot give it exactly."""
    model = adapter.model
    kind = _kind(model)
    if kind is None:
        return None
    if kind == "gb" and not _constant_init(getattr(model, "init_", None)):
        return None
    if kind in ("tree", "forest"):
        if response not in ("predict", "predict_proba"):
            return None
        if adapter.is_classifier() and response != "predict_proba":
            return None
        trees = [model] if kind == "tree" else list(model.estimators_)
        key = tuple(t.tree_ for t in trees)
        return model_cache.get(model, response, key, lambda: _forest_model(model, trees, kind, adapter),
                               fingerprint=model_fingerprint(model))
    if kind == "gb":
        key = tuple(model.estimators_.ravel())
        return model_cache.get(model, response, key, lambda: _gb_model(model, response, adapter),
                               fingerprint=model_fingerprint(model))
    if kind == "hgb":
        key = tuple(p for it in model._predictors for p in it)
        return model_cache.get(model, response, key, lambda: _hgb_model(model, response, adapter),
                               fingerprint=model_fingerprint(model))
    return None  # pragma: no cover


def model_fingerprint(model) -> str:
    """A digest of what the tree model's predictions depend on (:func:`pdpx.core.ir.fingerprint`), "" for
    another kind of model.

    Trees and forests: every ``tree_``'s node records (children, feature, threshold, missing-value side, node
    weights) and values; GradientBoosting: those of every stage, the learning rate and the init's constant;
    HistGradientBoosting: every predictor's nodes and category bitsets, and the baseline. Read where they lie:
    an edit in place (``tree_.value[...] = ...``, ``tree_.threshold[...] = ...``), a refit reusing the objects
    or a warm start changes the digest. Costs about 0.3 of one ``predict`` of 1,000 rows for a forest of 100
    deep trees (its nodes are most of the bytes read), 0.02 for HistGradientBoosting (100 iterations), 0.4 for
    GradientBoosting (200 stages of depth 3, whose predict is cheap); tens of microseconds for a small model.
    """
    kind = _kind(model)
    if kind in ("tree", "forest"):
        trees = [model] if kind == "tree" else list(model.estimators_)
        return fingerprint(*[a for t in trees for a in _tree_arrays(t.tree_)])
    if kind == "gb":
        init = getattr(model, "init_", None)
        stages = model.estimators_
        constants = [np.asarray(v) for v in (getattr(init, "constant_", None), getattr(init, "class_prior_", None))
                     if v is not None]
        return fingerprint(f"{stages.shape}{float(model.learning_rate)!r}{init if isinstance(init, str) else ''}",
                           *constants, *[a for t in stages.ravel() for a in _tree_arrays(t.tree_)])
    if kind == "hgb":
        parts = [np.asarray(model._baseline_prediction), getattr(model, "is_categorical_", None)]
        for it in model._predictors:
            for p in it:
                parts += [p.nodes, p.raw_left_cat_bitsets]
        return fingerprint(*parts)
    return ""


def _tree_arrays(tree) -> tuple:
    """A scikit-learn ``Tree``'s arrays a prediction depends on: its node records whole (the array its
    ``threshold`` is a view of: no copy), and its values; the public arrays one by one if that is not so."""
    base = getattr(tree.threshold, "base", None)
    if isinstance(base, np.ndarray) and base.dtype.names and "threshold" in base.dtype.names \
            and len(base) == tree.node_count and base.flags.c_contiguous:
        return base, tree.value
    return (tree.value, tree.threshold, tree.feature, tree.children_left, tree.children_right,
            getattr(tree, "missing_go_to_left", None), tree.weighted_n_node_samples)


# ------------------------------------------------------------------ trees
def _sk_trees_arrays(trees: list, classifier: bool, scale: float = 1.0) -> dict:
    """The IR's node arrays of scikit-learn ``Tree`` objects (``estimator.tree_``), one tree after another.

    Each tree's arrays are read once and joined; the conversions run once over every node
    (children become global positions, -1 stays a leaf's mark).
    """
    sizes = np.array([t.node_count for t in trees], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    offset = np.repeat(starts[:-1], sizes)

    def joined(name):
        return np.concatenate([getattr(t, name) for t in trees])

    value = joined("value")  # (nodes, n_outputs, n_classes)
    if classifier:
        v = value[:, 0, :].astype(np.float64)
        total = v.sum(axis=1, keepdims=True)
        v = np.divide(v, total, out=np.zeros_like(v), where=total > 0)  # counts (old) or fractions (new)
    else:
        v = value[:, :, 0].astype(np.float64) * scale
    left = joined("children_left").astype(np.int64)
    right = joined("children_right").astype(np.int64)
    internal = left >= 0
    if all(getattr(t, "missing_go_to_left", None) is not None for t in trees):
        missing = joined("missing_go_to_left").astype(bool)
    else:  # scikit-learn before 1.3: no missing-value routing
        missing = np.zeros(len(left), dtype=bool)
    return {
        "left": np.where(internal, left + offset, -1),
        "right": np.where(right >= 0, right + offset, -1),
        "feature": np.where(internal, joined("feature"), -1).astype(np.int64),
        "threshold": np.where(internal, joined("threshold"), 0.0),
        "missing_left": missing,
        "value": v,
        "node_weight": joined("weighted_n_node_samples").astype(np.float64),
        "tree_start": starts,
    }


def _forest_model(model, trees, kind, adapter) -> TreeModel:
    classifier = adapter.is_classifier()
    arrays = _sk_trees_arrays([t.tree_ for t in trees], classifier)
    n_values = arrays["value"].shape[1]
    vector = classifier or n_values > 1
    ens = TreeEnsemble(
        **arrays,
        tree_group=np.full(len(trees), -1 if vector else 0),
        n_features=model.n_features_in_,
        n_margins=n_values,
        comparison="<=",
        float32_input=True,
        aggregation="mean",
        link="identity",
        description=type(model).__name__,
    )
    return TreeModel(
        ensemble=ens,
        encode=numeric_encoder,
        encode_values=numeric_values,
        recursion_weights="weighted training row counts per node (weighted_n_node_samples; "
        "bootstrap multiplicity included for forests)",
    )


# ------------------------------------------------------- gradient boosting
def _gb_model(model, response, adapter) -> TreeModel | None:
    classifier = adapter.is_classifier()
    stages = model.estimators_  # (n_stages, K)
    n_stages, K = stages.shape
    lr = float(model.learning_rate)
    arrays = _sk_trees_arrays([stages[i, k].tree_ for i in range(n_stages) for k in range(K)], False, lr)
    groups = [k for _ in range(n_stages) for k in range(K)]
    loss = type(getattr(model, "_loss", None)).__name__
    link = "identity"
    scale = 1.0
    if classifier:
        if response == "decision_function":
            link = "identity"
        elif response == "predict_proba":
            if K == 1:
                link = "binary_logistic"
                scale = 2.0 if loss == "ExponentialLoss" else 1.0
            else:
                link = "softmax"
        else:
            return None
    elif response != "predict":
        return None
    ens = TreeEnsemble(
        **arrays, tree_group=np.array(groups), n_features=model.n_features_in_, n_margins=K,
        comparison="<=", float32_input=True, link=link, link_scale=scale, description=type(model).__name__,
    )
    # the init constant, version-proof: raw prediction minus the trees, on one row
    x0 = np.zeros((1, model.n_features_in_), dtype=np.float32)
    with single_threaded():  # an OpenMP pool started here would hang a forked child
        raw = np.asarray(model._raw_predict(x0), dtype=np.float64).reshape(1, K)
    ens.base_score = raw[0] - ens.predict_raw_row(x0[0])
    return TreeModel(
        ensemble=ens, encode=numeric_encoder, encode_values=numeric_values,
        recursion_weights="weighted training row counts per node (weighted_n_node_samples)",
    )


def _hgb_model(model, response, adapter) -> TreeModel | None:
    classifier = adapter.is_classifier()
    K = model.n_trees_per_iteration_
    link_name = type(model._loss.link).__name__
    if classifier:
        if response == "decision_function":
            link = "identity"
        elif response == "predict_proba":
            link = "binary_logistic" if K == 1 else "softmax"
        else:
            return None
    else:
        if response != "predict":
            return None
        link = {"IdentityLink": "identity", "LogLink": "exp"}.get(link_name)
        if link is None:
            return None
    n_features = model.n_features_in_
    is_cat = np.asarray(model.is_categorical_ if model.is_categorical_ is not None else np.zeros(n_features, bool))
    pre = getattr(model, "_preprocessor", None)
    if pre is not None:
        orig_of_pre = np.concatenate([np.flatnonzero(is_cat), np.flatnonzero(~is_cat)])
    else:
        orig_of_pre = np.arange(n_features)

    arrays, groups, words_all = _hgb_arrays(model, orig_of_pre)
    cat_words = np.concatenate(words_all) if words_all else np.zeros(0, np.uint32)
    base = np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)
    ens = TreeEnsemble(
        **arrays, cat_words=cat_words, tree_group=groups, n_features=n_features, n_margins=K,
        base_score=base, comparison="<=", float32_input=False, categories_go_left=True, link=link,
        description=type(model).__name__,
    )
    encode, encode_values = _hgb_encoders(model, is_cat, pre, orig_of_pre)
    return TreeModel(
        ensemble=ens, encode=encode, encode_values=encode_values,
        recursion_weights="unweighted training row counts per node (HistGradientBoosting's `count`; "
        "sample weights, if the model was fitted with them, are not reflected)",
    )


def _hgb_arrays(model, orig_of_pre: np.ndarray) -> tuple[dict, np.ndarray, list]:
    """Every predictor's nodes as the IR's arrays, all trees at once (one pass over the concatenated nodes).

    Returns (arrays, the output group of each tree, the categorical bitset words of the trees that have them).
    """
    preds = [(k, pred) for it in model._predictors for k, pred in enumerate(it)]
    sizes = np.array([len(pred.nodes) for _, pred in preds], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    nodes = np.empty(starts[-1], dtype=preds[0][1].nodes.dtype)  # filled by slices: np.concatenate of
    for (_, pred), a, b in zip(preds, starts[:-1], starts[1:]):   # record arrays promotes every field per tree
        nodes[a:b] = pred.nodes
    shift = np.repeat(starts[:-1], sizes)  # each node's tree offset: children become global indices
    leaf = nodes["is_leaf"].astype(bool)
    catn = nodes["is_categorical"].astype(bool) & ~leaf
    offset = np.full(len(nodes), -1, dtype=np.int64)
    nwords = np.zeros(len(nodes), dtype=np.int64)
    words_all, n_words = [], 0
    for t in np.flatnonzero(np.add.reduceat(catn, starts[:-1]) > 0):  # trees with categorical splits
        bits = preds[t][1].raw_left_cat_bitsets  # (n_bitsets, 8) uint32
        where = np.arange(starts[t], starts[t + 1])[catn[starts[t]: starts[t + 1]]]
        offset[where] = n_words + nodes["bitset_idx"][where].astype(np.int64) * bits.shape[1]
        nwords[where] = bits.shape[1] if bits.size else 0
        words_all.append(bits.reshape(-1))
        n_words += bits.size
    arrays = {
        "left": np.where(leaf, -1, nodes["left"].astype(np.int64) + shift),
        "right": np.where(leaf, -1, nodes["right"].astype(np.int64) + shift),
        "feature": np.where(leaf, -1, orig_of_pre[nodes["feature_idx"]]),
        "threshold": np.where(leaf | catn, 0.0, nodes["num_threshold"]),
        "missing_left": nodes["missing_go_to_left"].astype(bool),
        "value": nodes["value"].astype(np.float64),
        "node_weight": nodes["count"].astype(np.float64),
        "cat_offset": offset,
        "cat_nwords": nwords,
        "tree_start": starts,
    }
    return arrays, np.array([k for k, _ in preds]), words_all


def _hgb_encoders(model, is_cat, pre, orig_of_pre):
    """HGB's input space: numeric columns as floats, categories as the codes it bins."""
    n_features = len(is_cat)
    known_bits, f_idx_map = model._bin_mapper.make_known_categories_bitsets()

    def known_codes(j_pre: int, codes: np.ndarray) -> np.ndarray:
        """Codes HGB did not see in training are treated as missing (NaN)."""
        out = codes.astype(np.float64).copy()
        ok = ~np.isnan(out) & (out >= 0)
        c = np.where(ok, out, 0).astype(np.int64)
        row = known_bits[f_idx_map[j_pre]]
        inside = ok & (c < 32 * row.shape[0])
        word = row[np.minimum(c // 32, row.shape[0] - 1)]
        bit = inside & (((word >> (c % 32).astype(np.uint32)) & 1) == 1)
        out[ok & ~bit] = np.nan
        return out

    cat_pre = {int(orig_of_pre[k]): k for k in range(n_features) if is_cat[orig_of_pre[k]]}

    if pre is None:
        def encode(X):
            arr = numeric_encoder(X)
            for j, k in cat_pre.items():
                arr[:, j] = known_codes(k, arr[:, j])
            return arr

        def encode_values(j, values):
            v = np.asarray(values, dtype=np.float64)
            return known_codes(cat_pre[j], v) if j in cat_pre else v

        return encode, encode_values

    encoder = pre.named_transformers_["encoder"]
    cat_cols = list(np.flatnonzero(is_cat))
    categories = {j: list(encoder.categories_[i]) for i, j in enumerate(cat_cols)}

    def encode(X):
        transformed = np.asarray(pre.transform(X), dtype=np.float64)
        out = np.empty_like(transformed)
        out[:, orig_of_pre] = transformed
        for j, k in cat_pre.items():
            out[:, j] = known_codes(k, out[:, j])
        return np.ascontiguousarray(out)

    def encode_values(j, values):
        if j not in categories:
            return np.asarray(values, dtype=np.float64)
        lookup = {c: i for i, c in enumerate(categories[j])}
        codes = np.array([lookup.get(v, np.nan) for v in values], dtype=np.float64)
        return known_codes(cat_pre[j], codes)

    return encode, encode_values
