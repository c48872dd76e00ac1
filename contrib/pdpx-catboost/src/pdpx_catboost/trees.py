"""Reading a CatBoost model into pdpx's tree representation: from its JSON export
(``save_model(format="json")``, :func:`read_model`) or from the arrays of its binary model
(:mod:`pdpx_catboost.cbm`, :func:`read_arrays`, ten times faster; both give the same ensemble).

What the trees mean, as CatBoost's own predict applies them (each point is pinned by a
fidelity test against ``predict``):

* **Oblivious trees** (the default ``SymmetricTree`` policy): a list of splits, one per
  depth and shared by the whole level, and ``2**depth`` leaf values. Split ``d`` gives
  bit ``d`` of the leaf index. pdpx writes each tree out as a full binary tree whose
  root tests the last split, so a leaf's position among the leaves is its index.
  Non-symmetric trees (``Depthwise``, ``Lossguide``) are nested ``split`` / ``left`` /
  ``right`` nodes and are read as they are.
* **Numeric splits**: a value goes right when ``float32(x) > border`` (the border is a
  float32), so in pdpx's terms ``x <= t`` goes left, inputs rounded to float32.
* **Missing values** by the feature's ``nan_value_treatment``: ``AsFalse`` (``nan_mode``
  ``Min``) and ``AsIs`` (``Forbidden``: NaN compares false) send NaN left, ``AsTrue``
  (``Max``) sends it right.
* **One-hot categorical splits**: right when the category's hash equals the split's
  ``value``. Each categorical feature's hashes become codes ``0..K-1`` (the position in
  :attr:`CatBoostTrees.one_hot_values`); categories whose hash is none of them take code
  ``K``, which is in no set, so they go left everywhere, as in CatBoost.
* **Leaf values** are ``dimension`` values per leaf (leaf-major); the margins are
  ``scale * sum(leaves) + bias``.
* CTR splits (``OnlineCtr``: target statistics of categories and of feature combinations)
  and estimated features (text, embeddings) are not read: the model's trees are then
  :class:`Unreadable`, with the reason naming the features.

Nothing here imports catboost.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pdpx.extend import NAN_MISSING, TreeEnsemble

#: CatBoost's NaN treatments and where NaN goes (True = left, the "false" side).
NAN_GOES_LEFT = {"AsFalse": True, "AsIs": True, "AsTrue": False}


class Unreadable(Exception):
    """The model's trees cannot be written in pdpx's representation; the message says why."""


@dataclass
class CatBoostTrees:
    """What :func:`read_model` learns from the export besides the ensemble.

    Attributes
    ----------
    one_hot_values : dict
        Per flat feature position of a categorical feature, the category hashes its
        one-hot splits test, in code order.
    locations : dict
        Per (flat feature position, hash), one (tree, depth) where a symmetric tree
        tests it, or (tree, node) for non-symmetric trees: where CatBoost's own leaf
        indexes can tell whether a category has that hash.
    symmetric : bool
        Oblivious trees (leaf indexes are bit patterns of the splits).
    """

    one_hot_values: dict = field(default_factory=dict)
    locations: dict = field(default_factory=dict)
    symmetric: bool = True
    n_trees: int = 0


def _flat_positions(features_info: dict) -> tuple[dict, dict]:
    floats = {f["feature_index"]: f for f in features_info.get("float_features", [])}
    cats = {f["feature_index"]: f for f in features_info.get("categorical_features", [])}
    return floats, cats


def _feature_name(info: dict) -> str:
    return str(info.get("feature_id") or info.get("feature_name") or f"#{info.get('flat_feature_index')}")


def ctr_combinations(features_info: dict) -> list[str]:
    """The feature combinations the model's CTRs read, e.g. ``["'c'", "'c' x 'd'"]``."""
    floats, cats = _flat_positions(features_info)
    out: list[str] = []
    for ctr in features_info.get("ctrs", []):
        names = []
        for el in ctr.get("elements", []):
            if "cat_feature_index" in el and el["cat_feature_index"] in cats:
                names.append(repr(_feature_name(cats[el["cat_feature_index"]])))
            elif "float_feature_index" in el and el["float_feature_index"] in floats:
                names.append(repr(_feature_name(floats[el["float_feature_index"]])))
        combo = " x ".join(dict.fromkeys(names)) or "a categorical feature"
        if combo not in out:
            out.append(combo)
    return out


def check_readable(model_json: dict) -> None:
    """Raise :class:`Unreadable` naming the features when the model has text or embedding features."""
    info = model_json.get("features_info", {})
    for kind in ("text_features", "embedding_features"):
        feats = info.get(kind) or []
        if feats:
            names = ", ".join(repr(_feature_name(f)) for f in feats)
            raise Unreadable(
                f"the model uses {kind.replace('_', ' ')} ({names}), which CatBoost turns into estimated "
                "features pdpx cannot write as tree splits; using brute"
            )


def read_model(model_json: dict, *, n_features: int, description: str = "",
               link: str = "identity") -> tuple[TreeEnsemble, CatBoostTrees]:
    """The ensemble of a CatBoost JSON export (margins mapped by ``link``), and its categorical facts."""
    check_readable(model_json)
    floats, cats = _flat_positions(model_json.get("features_info", {}))
    scale, bias = model_json.get("scale_and_bias", [1.0, [0.0]])
    bias = np.atleast_1d(np.asarray(bias, dtype=np.float64))
    facts = CatBoostTrees()
    symmetric = "oblivious_trees" in model_json
    trees = model_json["oblivious_trees"] if symmetric else model_json.get("trees", [])
    facts.symmetric = symmetric
    facts.n_trees = len(trees)
    if not trees:
        raise Unreadable("the model has no trees")
    dim = max(len(bias), 1)
    for f in cats.values():  # hashes known from the export, then those met in splits
        if f.get("values"):
            facts.one_hot_values[int(f["flat_feature_index"])] = [int(v) for v in f["values"]]

    def split_of(split: dict, where: tuple) -> tuple[int, float, bool, int]:
        """(flat feature, threshold, missing goes left, one-hot code or -1)."""
        kind = split.get("split_type")
        if kind == "FloatFeature":
            f = floats[split["float_feature_index"]]
            border = float(np.float32(split["border"]))
            nan_left = NAN_GOES_LEFT.get(f.get("nan_value_treatment", "AsIs"), True)
            return int(f["flat_feature_index"]), border, nan_left, -1
        if kind == "OneHotFeature":
            f = cats[split["cat_feature_index"]]
            pos = int(f["flat_feature_index"])
            values = facts.one_hot_values.setdefault(pos, [])
            value = int(split["value"])
            if value not in values:
                values.append(value)
            facts.locations.setdefault((pos, value), where)
            return pos, np.nan, True, values.index(value)
        if kind == "OnlineCtr":
            combos = ctr_combinations(model_json.get("features_info", {}))
            raise Unreadable(
                f"the model splits on CTRs (target statistics) of {', '.join(combos)}: a CTR is a "
                "number CatBoost computes from the category (or a combination of features), not a split "
                "pdpx can write on one column; using brute. Train with one_hot_max_size above the "
                "number of categories for one-hot splits, which exact reads")
        raise Unreadable(f"the model has a split of type {kind!r} (an estimated feature); using brute")

    if symmetric:
        parsed = [split_of(sp, (t, d)) for t, tree in enumerate(trees) for d, sp in enumerate(tree.get("splits") or [])]
        depths = np.array([len(tree.get("splits") or []) for tree in trees], dtype=np.int64)
        splits = tuple(np.array([p[c] for p in parsed], dtype=dt)
                       for c, dt in enumerate((np.int64, np.float64, bool, np.int64)))
        values = np.concatenate([np.asarray(tree["leaf_values"], dtype=np.float64).ravel() for tree in trees])
        weights = None
        if all(tree.get("leaf_weights") for tree in trees):
            weights = np.concatenate([np.asarray(tree["leaf_weights"], dtype=np.float64) for tree in trees])
        arrays = _symmetric_nodes(depths, splits, values, weights, dim)
    else:
        nodes: list[tuple] = []  # (left, right, feature, threshold, missing_left, code, weight, value vector)
        tree_start = [0]
        for t, tree in enumerate(trees):
            _walk(tree, nodes, len(nodes), t, split_of, dim)
            tree_start.append(len(nodes))
        arrays = _node_arrays(nodes, tree_start, dim)
    return _ensemble(arrays, len(trees), dim, scale, bias, n_features, description, link), facts


def read_arrays(arrays: dict, *, scale: float, bias, n_features: int, description: str = "",
                link: str = "identity") -> tuple[TreeEnsemble, CatBoostTrees]:
    """The ensemble of the trees :func:`pdpx_catboost.cbm.read_cbm` read from the binary model, and its facts."""
    bias = np.atleast_1d(np.asarray(bias, dtype=np.float64))
    dim = arrays["dim"]
    depths = arrays["depths"]
    if not len(depths):
        raise Unreadable("the model has no trees")
    facts = CatBoostTrees(one_hot_values={k: list(v) for k, v in arrays["one_hot_values"].items()},
                          symmetric=True, n_trees=len(depths))
    is_cat = arrays["split_is_cat"]
    # one-hot code of each binary feature: its position among its feature's values
    code = np.full(len(is_cat), -1, dtype=np.int64)
    for pos in facts.one_hot_values:
        sel = np.flatnonzero(is_cat & (arrays["split_feature"] == pos))
        code[sel] = np.arange(len(sel))
    used = arrays["tree_splits"]
    tree_of = np.repeat(np.arange(len(depths)), depths)
    depth_of = np.arange(len(used)) - np.repeat(np.concatenate([[0], np.cumsum(depths)[:-1]]), depths)
    for k in np.flatnonzero(is_cat[used])[::-1]:  # the first place that tests each hash wins
        b = used[k]
        facts.locations[(int(arrays["split_feature"][b]), int(arrays["split_value"][b]))] = (
            int(tree_of[k]), int(depth_of[k]))
    splits = (arrays["split_feature"][used], arrays["split_threshold"][used], arrays["split_nan_left"][used],
              code[used])
    nodes = _symmetric_nodes(depths, splits, arrays["leaf_values"], arrays["leaf_weights"], dim)
    return _ensemble(nodes, len(depths), dim, scale, bias, n_features, description, link), facts


def _ensemble(arrays: tuple, n_trees: int, dim: int, scale: float, bias: np.ndarray, n_features: int,
              description: str, link: str) -> TreeEnsemble:
    """The TreeEnsemble of node arrays (as :func:`_symmetric_nodes` returns them)."""
    left, right, feature, threshold, missing_left, code, weight, value, tree_start = arrays
    n = len(left)
    cat_offset = np.full(n, -1, dtype=np.int64)
    cat_nwords = np.zeros(n, dtype=np.int64)
    # one-hot splits: a one-bit set per node, bit ``code`` of words ``code // 32 + 1`` long
    cat = np.flatnonzero(code >= 0)
    nw = code[cat] // 32 + 1
    cat_nwords[cat] = nw
    cat_offset[cat] = np.cumsum(nw) - nw
    cat_words = np.zeros(int(nw.sum()), dtype=np.uint32)
    cat_words[cat_offset[cat] + code[cat] // 32] = (np.uint32(1) << (code[cat] % 32).astype(np.uint32))
    ens = TreeEnsemble(
        left=left, right=right, feature=feature, threshold=np.where(code >= 0, 0.0, threshold),
        missing_left=missing_left, value=value, tree_start=tree_start,
        tree_group=np.full(n_trees, 0 if dim == 1 else -1), n_features=n_features, n_margins=dim,
        node_weight=weight, nan_mode=np.full(n, NAN_MISSING, dtype=np.int8),
        cat_offset=cat_offset, cat_nwords=cat_nwords, cat_words=cat_words,
        tree_weight=np.full(n_trees, float(scale)), base_score=bias if dim > 1 else bias[:1],
        comparison="<=", float32_input=True, categories_go_left=False, description=description, link=link,
    )
    return ens


def _symmetric_nodes(depths: np.ndarray, splits: tuple, leaf_values: np.ndarray, leaf_weights, dim: int) -> tuple:
    """Node arrays of oblivious trees written as full binary trees, built per depth for all trees at once.

    ``splits`` is (feature, threshold, missing goes left, one-hot code) per tree and depth,
    flat in tree order; ``leaf_values`` flat, ``dim`` per leaf, leaf-major; ``leaf_weights``
    one per leaf (or None). Heap order within a tree: node ``i`` has children ``2i+1``
    (false, left) and ``2i+2`` (true, right); level ``l`` tests split ``depth-1-l``, so the
    leaves, left to right, are in CatBoost's leaf-index order.
    """
    depths = np.asarray(depths, dtype=np.int64)
    sizes = 2 ** (depths + 1) - 1
    tree_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    split_start = np.concatenate([[0], np.cumsum(depths)]).astype(np.int64)
    leaf_start = np.concatenate([[0], np.cumsum(2**depths)]).astype(np.int64)
    n = int(tree_start[-1])
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.zeros(n)
    missing_left = np.ones(n, dtype=bool)
    code = np.full(n, -1, dtype=np.int64)
    weight = np.zeros(n)
    value = np.zeros((n, dim))
    leaf_values = np.asarray(leaf_values, dtype=np.float64).reshape(-1, dim)
    if leaf_weights is None:
        leaf_weights = np.full(len(leaf_values), np.nan)
    for d in np.unique(depths):
        d = int(d)
        ts = np.flatnonzero(depths == d)
        k, n_int, n_leaf = len(ts), 2**d - 1, 2**d
        base = tree_start[ts][:, None]
        leaves_of = (leaf_start[ts][:, None] + np.arange(n_leaf)).ravel()
        wts = leaf_weights[leaves_of].reshape(k, n_leaf)
        leaf_idx = (base + n_int + np.arange(n_leaf)).ravel()
        value[leaf_idx] = leaf_values[leaves_of]
        weight[leaf_idx] = wts.ravel()
        for lvl in range(d):  # level lvl: nodes 2**lvl - 1 .. 2**(lvl + 1) - 2, summing 2**(d - lvl) leaves each
            i = np.arange(2**lvl - 1, 2 ** (lvl + 1) - 1)
            idx = (base + i).ravel()
            left[idx] = (base + 2 * i + 1).ravel()
            right[idx] = (base + 2 * i + 2).ravel()
            which = split_start[ts] + (d - 1 - lvl)
            for dst, src in zip((feature, threshold, missing_left, code), splits):
                dst[idx] = np.repeat(np.asarray(src)[which], len(i))
            weight[idx] = wts.reshape(k, 2**lvl, 2 ** (d - lvl)).sum(axis=2).ravel()
    return left, right, feature, threshold, missing_left, code, weight, value, tree_start


def _node_arrays(nodes: list, tree_start: list, dim: int) -> tuple:
    """Node arrays from the per-node tuples of non-symmetric trees."""
    n = len(nodes)
    value = np.zeros((n, dim))
    for i, x in enumerate(nodes):
        if x[7] is not None:
            value[i] = x[7]
    return (np.array([x[0] for x in nodes], dtype=np.int64), np.array([x[1] for x in nodes], dtype=np.int64),
            np.array([x[2] for x in nodes], dtype=np.int64), np.array([x[3] for x in nodes], dtype=np.float64),
            np.array([x[4] for x in nodes], dtype=bool), np.array([x[5] for x in nodes], dtype=np.int64),
            np.array([x[6] for x in nodes], dtype=np.float64), value, np.array(tree_start, dtype=np.int64))


def _walk(tree: dict, nodes: list, base: int, t: int, split_of, dim: int) -> None:
    """Append a non-symmetric tree's nodes in depth-first order (children after their parent)."""
    stack = [(tree, None, False)]
    while stack:
        node, parent, is_right = stack.pop()
        me = len(nodes)
        if parent is not None:
            p = list(nodes[parent])
            p[1 if is_right else 0] = me
            nodes[parent] = tuple(p)
        if "split" in node:
            feat, thr, mleft, code = split_of(node["split"], (t, me - base))
            nodes.append((-2, -2, feat, thr, mleft, code, np.nan, None))
            stack.append((node["right"], me, True))
            stack.append((node["left"], me, False))
        else:
            val = np.atleast_1d(np.asarray(node["value"], dtype=np.float64)).reshape(dim)
            nodes.append((-1, -1, -1, 0.0, True, -1, float(node.get("weight", np.nan)), val))
    _sum_weights(nodes, base)


def _sum_weights(nodes: list, base: int) -> None:
    """Internal node weights of one tree: the sums of their leaves' weights."""
    for i in range(len(nodes) - 1, base - 1, -1):
        x = nodes[i]
        if x[0] >= 0:
            nodes[i] = x[:6] + (nodes[x[0]][6] + nodes[x[1]][6],) + x[7:]
