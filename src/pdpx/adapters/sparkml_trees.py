"""Reading Spark ML's tree models (``pyspark.ml``) into the common tree representation, from their text.

A fitted Spark ML tree model prints its trees (``model.toDebugString``): one line per node,
depth-first, the left child first. A split reads ``If (feature i <= t)`` (then ``Else (feature i
> t)``) on a number, or ``If (feature i in {c1,c2})`` on a categorical slot (category indices, the
set going left); a leaf reads ``Predict: v``; a forest or boosted model starts each tree with
``Tree k (weight w):``. Spark prints each double as Java's ``Double.toString`` does, which reads back
to the same double, so thresholds and leaf values are exact. The text is what a classic session and
Spark Connect both give (no JVM object is walked), and nothing here imports pyspark.

Facts checked against ``transform`` (tests/adapters/test_sparkml.py):

* a numeric split sends ``x <= t`` left; Spark's trees have no missing-value branch (its
  ``VectorAssembler`` refuses NaN unless told to keep it), so missing values go right;
* a random forest's regression is the mean of its trees; a boosted model's margin is the sum of
  each tree's leaf times the tree's weight; a boosted classifier's probability of class 1 is
  ``1 / (1 + exp(-2 margin))``;
* a decision tree or random forest *classifier* stores each leaf's class counts, which the text does
  not show: those trees are read from the model's saved form (:mod:`pdpx.adapters.sparkml_saved`),
  into the same node lists, and given to :func:`spark_ensemble` as well;
* a ``OneHotEncoder``'s slots are read as splits on the column it encodes (:func:`onto_columns`).
"""

from __future__ import annotations

import re

import numpy as np

from ..core.errors import PdpxError
from ..core.ir import MalformedTreeError, TreeEnsemble

_NUM = re.compile(r"^If \(feature (\d+) <= (\S+)\)$")
_CAT = re.compile(r"^If \(feature (\d+) in \{([^}]*)\}\)$")
_LEAF = re.compile(r"^Predict: (\S+)$")
_TREE = re.compile(r"^Tree (\d+) \(weight (\S+)\):$")


def parse(text: str) -> list[tuple[float, dict]]:
    """The trees of a debug string: ``[(weight, nodes)]``, ``nodes`` a dict of lists (``feature``,
    ``threshold``, ``left``, ``right``, ``value``, ``cats``), nodes in depth-first order, children tree-local."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines and not (_TREE.match(lines[0]) or _NUM.match(lines[0]) or _CAT.match(lines[0])
                      or _LEAF.match(lines[0])):
        lines = lines[1:]  # the model's header line
    trees, pos = [], 0
    while pos < len(lines):
        weight = 1.0
        m = _TREE.match(lines[pos])
        if m:
            weight, pos = float(m.group(2)), pos + 1
        nodes: dict = {k: [] for k in ("feature", "threshold", "left", "right", "value", "cats")}
        pos = _node(lines, pos, nodes)
        trees.append((weight, nodes))
    if not trees:
        raise PdpxError("the Spark ML model's debug string holds no tree")
    return trees


def _node(lines: list[str], pos: int, nodes: dict) -> int:
    """Read the node at ``lines[pos]`` and its subtree into ``nodes``; the position after it."""
    if pos >= len(lines):
        raise MalformedTreeError("the Spark ML debug string ends inside a tree")
    i = len(nodes["feature"])
    for k, v in (("feature", -1), ("threshold", 0.0), ("left", -1), ("right", -1), ("value", 0.0), ("cats", None)):
        nodes[k].append(v)
    line = lines[pos]
    leaf = _LEAF.match(line)
    if leaf:
        nodes["value"][i] = float(leaf.group(1))
        return pos + 1
    num, cat = _NUM.match(line), _CAT.match(line)
    if num:
        nodes["feature"][i], nodes["threshold"][i] = int(num.group(1)), float(num.group(2))
    elif cat:
        nodes["feature"][i] = int(cat.group(1))
        nodes["cats"][i] = [int(float(c)) for c in cat.group(2).split(",") if c.strip()]
    else:
        raise MalformedTreeError(f"unexpected line in the Spark ML debug string: {line!r}")
    nodes["left"][i] = len(nodes["feature"])
    pos = _node(lines, pos + 1, nodes)
    if pos >= len(lines) or not lines[pos].startswith("Else ("):
        raise MalformedTreeError("a split of the Spark ML debug string has no Else branch")
    nodes["right"][i] = len(nodes["feature"])
    return _node(lines, pos + 1, nodes)


def onto_columns(trees: list, slots: list) -> list:
    """``trees`` (as :func:`parse` gives them) with each split on a slot of the model's feature vector moved onto
    X's column. ``slots[i]`` is ``(column, values, missing)``: ``values`` None for a slot holding the column's
    value (or its StringIndexer code), else a one-hot slot's value at each of the column's codes; ``missing`` the
    code a missing value of the column stands for (None: a missing value goes right, as NaN does in Spark's
    comparisons). A split on a one-hot slot becomes a categorical split on the column: the codes whose slot
    value goes left."""
    out = []
    for weight, nodes in trees:
        new = {k: list(v) for k, v in nodes.items()}
        new["missing"] = [False] * len(nodes["feature"])
        for i, f in enumerate(nodes["feature"]):
            if f < 0:
                continue
            column, values, missing = slots[f]
            new["feature"][i] = column
            cats = nodes["cats"][i]
            at = np.asarray(values if values is not None else [float(missing or 0)], dtype=np.float64)
            left = np.isin(at, cats) if cats is not None else at <= nodes["threshold"][i]
            if missing is not None:
                new["missing"][i] = bool(left[missing] if values is not None else left[0])
            if values is not None:
                new["cats"][i], new["threshold"][i] = [int(k) for k in np.flatnonzero(left)], 0.0
        out.append((weight, new))
    return out


def spark_ensemble(trees: list, n_features: int, *, aggregation: str, link: str = "identity",
                   link_scale: float = 1.0, description: str = "") -> TreeEnsemble:
    """``trees`` (``[(weight, nodes)]``, as :func:`parse` gives them) as a TreeEnsemble: ``aggregation`` "mean" (a
    forest) or "sum" (boosting: each leaf times its tree's weight; a single tree either way). Leaves holding
    vectors (a classifier's class probabilities) add to every output."""
    sizes = [len(t[1]["feature"]) for t in trees]
    start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    feature = np.concatenate([t[1]["feature"] for t in trees]).astype(np.int64)
    if np.any(feature >= n_features):
        raise MalformedTreeError(f"a Spark ML split reads feature {int(feature.max())} of {n_features}")
    left = np.concatenate([np.where(np.asarray(t[1]["left"]) < 0, -1, np.asarray(t[1]["left"]) + s)
                           for t, s in zip(trees, start)]).astype(np.int64)
    right = np.concatenate([np.where(np.asarray(t[1]["right"]) < 0, -1, np.asarray(t[1]["right"]) + s)
                            for t, s in zip(trees, start)]).astype(np.int64)
    scale = [w if aggregation == "sum" else 1.0 for w, _ in trees]
    value = np.concatenate([np.asarray(t[1]["value"], dtype=np.float64) * w for t, w in zip(trees, scale)])
    n_margins = value.shape[1] if value.ndim == 2 else 1
    cats = [c for t in trees for c in t[1]["cats"]]
    cat_offset = np.full(len(cats), -1, dtype=np.int64)
    cat_nwords = np.zeros(len(cats), dtype=np.int64)
    words: list = []
    for i, c in enumerate(cats):
        if c is None:
            continue
        n = max(c, default=0) // 32 + 1
        w = np.zeros(n, dtype=np.uint32)
        for code in c:
            w[code // 32] |= np.uint32(1 << (code % 32))
        cat_offset[i], cat_nwords[i] = len(words), n
        words.extend(w.tolist())
    threshold = np.concatenate([t[1]["threshold"] for t in trees]).astype(np.float64)
    return TreeEnsemble(
        left=left, right=right, feature=feature, threshold=threshold,
        missing_left=np.concatenate([t[1].get("missing", [False] * n) for t, n in zip(trees, sizes)]).astype(bool),
        value=value, tree_start=start,
        tree_group=np.full(len(trees), -1 if value.ndim == 2 else 0, dtype=np.int64), n_features=n_features,
        n_margins=n_margins,
        cat_offset=cat_offset, cat_nwords=cat_nwords, cat_words=np.asarray(words, dtype=np.uint32),
        comparison="<=", float32_input=False, categories_go_left=True, aggregation=aggregation, link=link,
        link_scale=link_scale, description=description or f"Spark ML ({len(trees)} trees)",
    )
