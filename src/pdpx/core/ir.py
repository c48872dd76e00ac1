"""The common tree representation ("IR") that adapters produce and tree methods consume.

Flat arrays over all nodes of all trees (a struct of arrays). The nodes of tree
``t`` are ``tree_start[t] : tree_start[t + 1]``; child indices are global (into
the node arrays). No method knows which library a
model came from.

Routing rule of an internal node with feature ``f`` and input value ``x``
(``x`` first rounded to float32 when ``float32_input``):

* numeric split (``cat_offset == -1``), by ``nan_mode``:

  - ``NAN_MISSING`` (0): NaN goes to the missing side (``missing_left``);
  - ``NAN_AS_ZERO`` (1): NaN is read as 0.0, then compared;
  - ``ZERO_OR_NAN_MISSING`` (2): NaN and zero (``|x| <= 1e-35``) go to the missing side;

  otherwise ``x <= threshold`` (``comparison == "<="``) or ``x < threshold``
  (``"<"``) goes left.
* categorical split: NaN goes to the missing side. Otherwise the category code
  ``c = int(x)`` is *in the set* when ``0 <= c < 32 * cat_nwords`` and bit
  ``c % 32`` of word ``cat_words[cat_offset + c // 32]`` is set. Values in the set
  go left when ``categories_go_left``, right otherwise (libraries differ;
  ``docs/adapters.md`` lists which does what).

Leaves (``left == -1``) hold ``value[node]``: a scalar in column 0 added to
margin ``tree_group[t]``, or, when ``tree_group[t] == -1``, a vector of
``n_margins`` values added to every margin. Tree ``t`` contributes
``tree_weight[t] * value``; with ``aggregation == "mean"`` the sum over the
trees of a group is divided by their number. Then ``base_score`` is added and the
``link`` maps the margins to the model's response.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .errors import PdpxError

NAN_MISSING = 0
NAN_AS_ZERO = 1
ZERO_OR_NAN_MISSING = 2

LINKS = ("identity", "logistic", "binary_logistic", "softmax", "exp")


class MalformedTreeError(PdpxError):
    """An adapter produced a tree that is not well formed (names the tree and node)."""


@dataclass
class TreeEnsemble:
    """A tree ensemble in the common representation (see the module docstring).

    Node arrays have shape (n_nodes,) except ``value`` (n_nodes, n_values); tree
    arrays have shape (n_trees,) except ``tree_start`` (n_trees + 1,).
    """

    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    value: np.ndarray
    tree_start: np.ndarray
    tree_group: np.ndarray
    n_features: int
    n_margins: int = 1
    node_weight: np.ndarray | None = None
    nan_mode: np.ndarray | None = None
    cat_offset: np.ndarray | None = None
    cat_nwords: np.ndarray | None = None
    cat_words: np.ndarray | None = None
    tree_weight: np.ndarray | None = None
    base_score: np.ndarray | None = None
    comparison: str = "<="
    float32_input: bool = False
    categories_go_left: bool = True
    aggregation: str = "sum"
    link: str = "identity"
    link_scale: float = 1.0
    description: str = ""
    _effective_weight: np.ndarray | None = field(default=None, repr=False)
    _has_weights: bool | None = field(default=None, repr=False)
    _derived: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        # derived caches: always recomputed (dataclasses.replace would otherwise copy stale ones)
        self._effective_weight = None
        self._has_weights = None
        self._derived = {}
        n = len(self.left)
        self.left = np.ascontiguousarray(self.left, dtype=np.int64)
        self.right = np.ascontiguousarray(self.right, dtype=np.int64)
        self.feature = np.ascontiguousarray(self.feature, dtype=np.int64)
        self.threshold = np.ascontiguousarray(self.threshold, dtype=np.float64)
        self.missing_left = np.ascontiguousarray(self.missing_left, dtype=np.bool_)
        value = np.asarray(self.value, dtype=np.float64)
        self.value = np.ascontiguousarray(value.reshape(n, -1) if value.ndim == 1 else value)
        self.tree_start = np.ascontiguousarray(self.tree_start, dtype=np.int64)
        self.tree_group = np.ascontiguousarray(self.tree_group, dtype=np.int64)
        n_trees = len(self.tree_group)
        if self.node_weight is None:
            self.node_weight = np.full(n, np.nan)
        self.node_weight = np.ascontiguousarray(self.node_weight, dtype=np.float64)
        if self.nan_mode is None:
            self.nan_mode = np.zeros(n, dtype=np.int8)
        self.nan_mode = np.ascontiguousarray(self.nan_mode, dtype=np.int8)
        if self.cat_offset is None:
            self.cat_offset = np.full(n, -1, dtype=np.int64)
            self.cat_nwords = np.zeros(n, dtype=np.int64)
            self.cat_words = np.zeros(0, dtype=np.uint32)
        self.cat_offset = np.ascontiguousarray(self.cat_offset, dtype=np.int64)
        self.cat_nwords = np.ascontiguousarray(self.cat_nwords, dtype=np.int64)
        self.cat_words = np.ascontiguousarray(self.cat_words, dtype=np.uint32)
        if self.tree_weight is None:
            self.tree_weight = np.ones(n_trees)
        self.tree_weight = np.ascontiguousarray(self.tree_weight, dtype=np.float64)
        if self.base_score is None:
            self.base_score = np.zeros(self.n_margins)
        self.base_score = np.array(np.broadcast_to(self.base_score, (self.n_margins,)), dtype=np.float64)
        self.validate()

    # ------------------------------------------------------------ validation
    def validate(self) -> None:
        """Check the structure; a malformed tree is an error naming the tree and node."""
        n = len(self.left)
        for name in ("right", "feature", "threshold", "missing_left", "node_weight", "nan_mode",
                     "cat_offset", "cat_nwords"):
            if len(getattr(self, name)) != n:
                raise MalformedTreeError(f"node array {name!r} has {len(getattr(self, name))} entries, expected {n}")
        if self.value.shape[0] != n:
            raise MalformedTreeError(f"value has {self.value.shape[0]} rows, expected one per node ({n})")
        if self.comparison not in ("<=", "<"):
            raise MalformedTreeError(f"comparison must be '<=' or '<', got {self.comparison!r}")
        if self.link not in LINKS:
            raise MalformedTreeError(f"unknown link {self.link!r}; known: {LINKS}")
        if self.aggregation not in ("sum", "mean"):
            raise MalformedTreeError(f"aggregation must be 'sum' or 'mean', got {self.aggregation!r}")
        if self.link == "binary_logistic" and self.n_margins != 1:
            raise MalformedTreeError("link 'binary_logistic' needs exactly one margin")
        n_trees = len(self.tree_group)
        if n_trees == 0:
            raise MalformedTreeError("the ensemble has no trees")
        if len(self.tree_start) != n_trees + 1 or self.tree_start[0] != 0 or self.tree_start[-1] != n:
            raise MalformedTreeError("tree_start must have n_trees + 1 entries running from 0 to n_nodes")
        if np.any(np.diff(self.tree_start) <= 0):
            t = int(np.argmax(np.diff(self.tree_start) <= 0))
            raise MalformedTreeError(f"tree {t} has no nodes")
        if len(self.tree_weight) != n_trees:
            raise MalformedTreeError("tree_weight needs one entry per tree")
        vector = self.tree_group < 0
        if np.any(vector) and self.value.shape[1] != self.n_margins:
            raise MalformedTreeError(
                f"trees with vector leaves need value of width n_margins={self.n_margins}, got {self.value.shape[1]}"
            )
        if np.any(self.tree_group >= self.n_margins):
            t = int(np.argmax(self.tree_group >= self.n_margins))
            raise MalformedTreeError(f"tree {t}: output group {self.tree_group[t]} >= n_margins {self.n_margins}")
        if not np.all(np.isfinite(self.base_score)):
            raise MalformedTreeError("base_score must be finite")
        if not np.all(np.isfinite(self.tree_weight)):
            raise MalformedTreeError("tree weights must be finite")
        tree_of = np.repeat(np.arange(n_trees), np.diff(self.tree_start))
        leaf = self.left < 0
        internal = ~leaf

        def fail(mask, what):
            node = int(np.flatnonzero(mask)[0])
            t = int(tree_of[node])
            raise MalformedTreeError(
                f"tree {t}, node {node - self.tree_start[t]} (global {node}): {what}"
                + (f" [{self.description}]" if self.description else "")
            )

        if np.any(leaf & (self.right >= 0)):
            fail(leaf & (self.right >= 0), "a leaf (left == -1) has a right child")
        lo = self.tree_start[tree_of]
        hi = self.tree_start[tree_of + 1]
        for child in (self.left, self.right):
            bad = internal & ((child < lo) | (child >= hi))
            if np.any(bad):
                fail(bad, "a child index points outside its tree")
            bad = internal & (child == np.arange(n))
            if np.any(bad):
                fail(bad, "a node is its own child")
        bad = internal & ((self.feature < 0) | (self.feature >= self.n_features))
        if np.any(bad):
            fail(bad, f"split feature outside 0..{self.n_features - 1}")
        numeric = internal & (self.cat_offset < 0)
        if np.any(numeric & np.isnan(self.threshold)):
            fail(numeric & np.isnan(self.threshold), "threshold is NaN")
        if np.any(internal & ((self.nan_mode < 0) | (self.nan_mode > 2))):
            fail(internal & ((self.nan_mode < 0) | (self.nan_mode > 2)), "unknown nan_mode")
        cat = internal & (self.cat_offset >= 0)
        bad = cat & ((self.cat_nwords <= 0) | (self.cat_offset + self.cat_nwords > len(self.cat_words)))
        if np.any(bad):
            fail(bad, "categorical split set lies outside cat_words")
        used_values = self.value  # every value finite (no copy of the leaves' rows), else the leaves' checked
        if not np.isfinite(used_values).all():
            used_values = self.value[leaf][:, : (self.n_margins if np.any(vector) else 1)]
        if not np.all(np.isfinite(used_values)):
            node = int(np.flatnonzero(leaf)[np.flatnonzero(~np.all(np.isfinite(used_values), axis=1))[0]])
            fail(np.arange(n) == node, "leaf value is not finite")
        # each tree must be a tree: no node has two parents, no root has one (so no cycle
        # can be reached from a root); nodes no root reaches are never visited
        children = np.concatenate([self.left[internal], self.right[internal]])
        parents = np.bincount(children, minlength=n)
        if np.any(parents > 1):
            fail(parents > 1, "node reached twice (the tree has a cycle or shared child)")
        roots = np.zeros(n, dtype=bool)
        roots[self.tree_start[:-1]] = True
        if np.any(roots & (parents > 0)):
            fail(roots & (parents > 0), "the root is a child of another node (a cycle)")

    # -------------------------------------------------------------- facts
    @property
    def n_trees(self) -> int:
        return len(self.tree_group)

    @property
    def n_nodes(self) -> int:
        return len(self.left)

    @property
    def n_outputs(self) -> int:
        return 2 if self.link == "binary_logistic" else self.n_margins

    @property
    def is_leaf(self) -> np.ndarray:
        return self.left < 0

    @property
    def has_node_weights(self) -> bool:
        if self._has_weights is None:
            internal = self.left >= 0
            w = self.node_weight
            self._has_weights = bool(np.all(np.isfinite(w[internal]) & (w[internal] >= 0)))
        return self._has_weights

    @property
    def is_linear(self) -> bool:
        """True when the response is linear in the margins (PD can be summed directly)."""
        return self.link == "identity"

    def derived(self, key: str, build: Callable[[], Any]) -> Any:
        """A value computed from this ensemble once and kept with it (e.g. a method's node layout).

        Treat ensembles as immutable: a changed copy (``dataclasses.replace``) starts
        with no derived values.
        """
        if key not in self._derived:
            self._derived[key] = build()
        return self._derived[key]

    def effective_tree_weight(self) -> np.ndarray:
        """Per-tree multiplier including the 1/n of ``aggregation == "mean"``."""
        if self._effective_weight is None:
            w = self.tree_weight.copy()
            if self.aggregation == "mean":
                groups = self.tree_group
                if np.all(groups < 0):
                    w /= self.n_trees
                else:
                    counts = np.bincount(groups[groups >= 0], minlength=self.n_margins)
                    w[groups >= 0] /= counts[groups[groups >= 0]]
                    if np.any(groups < 0):
                        w[groups < 0] /= np.sum(groups < 0)
            self._effective_weight = w
        return self._effective_weight

    # --------------------------------------------------------------- routing
    def goes_left(self, node: int, x: np.ndarray) -> np.ndarray:
        """Where values ``x`` (float64, any shape) go at internal ``node``: True = left."""
        x = np.asarray(x, dtype=np.float64)
        return self.goes_left_many(np.array([node]), x.reshape(-1))[0].reshape(x.shape)

    def goes_left_many(self, nodes: np.ndarray, x: np.ndarray) -> np.ndarray:
        """(len(nodes), len(x)) bool: where the values ``x`` of one feature go at internal ``nodes``.

        The routing rule of the module docstring, vectorised over nodes and values;
        the reference every fast path (the numba kernels) is tested against.
        """
        nodes = np.asarray(nodes, dtype=np.int64)
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        if self.float32_input:
            x = x.astype(np.float32).astype(np.float64)
        out = np.empty((len(nodes), len(x)), dtype=bool)
        nan = np.isnan(x)
        cat = self.cat_offset[nodes] >= 0
        num = np.flatnonzero(~cat)
        if num.size:
            nd = nodes[num]
            mode = self.nan_mode[nd][:, None]
            xx = np.where(nan[None, :] & (mode == NAN_AS_ZERO), 0.0, x[None, :])
            missing = np.isnan(xx) | ((mode == ZERO_OR_NAN_MISSING) & (np.abs(xx) <= 1e-35))
            thr = self.threshold[nd][:, None]
            with np.errstate(invalid="ignore"):
                left = (xx <= thr) if self.comparison == "<=" else (xx < thr)
            out[num] = np.where(missing, self.missing_left[nd][:, None], left)
        for i in np.flatnonzero(cat):
            node = nodes[i]
            off, nw = self.cat_offset[node], int(self.cat_nwords[node])
            code = np.where(nan | (x < 0) | (x >= 32 * nw), -1, np.nan_to_num(x, nan=-1)).astype(np.int64)
            inside = code >= 0
            bit = np.zeros(x.shape, dtype=bool)
            c = code[inside]
            words = self.cat_words[off: off + nw]
            bit[inside] = ((words[c // 32] >> (c % 32).astype(np.uint32)) & 1).astype(bool)
            left = bit if self.categories_go_left else ~bit
            out[i] = np.where(nan, bool(self.missing_left[node]), left)
        return out

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf reached by each row in each tree: int array of shape (n_rows, n_trees)."""
        X = np.asarray(X, dtype=np.float64)
        out = np.empty((X.shape[0], self.n_trees), dtype=np.int64)
        for t in range(self.n_trees):
            node = np.full(X.shape[0], self.tree_start[t], dtype=np.int64)
            active = self.left[node] >= 0
            while np.any(active):
                idx = np.flatnonzero(active)
                for nd in np.unique(node[idx]):
                    rows = idx[node[idx] == nd]
                    go = self.goes_left(nd, X[rows, self.feature[nd]])
                    node[rows] = np.where(go, self.left[nd], self.right[nd])
                active = self.left[node] >= 0
            out[:, t] = node
        return out

    def predict_raw_row(self, x: np.ndarray) -> np.ndarray:
        """Margins of one row, shape (n_margins,): every node's direction at once, then all trees walked together."""
        x = np.asarray(x, dtype=np.float64).ravel()
        internal = np.flatnonzero(self.left >= 0)
        feats = self.feature[internal]
        go = np.zeros(self.n_nodes, dtype=bool)
        for f in np.unique(feats):
            nodes = internal[feats == f]
            go[nodes] = self.goes_left_many(nodes, x[f: f + 1])[:, 0]
        node = self.tree_start[:-1].copy()
        inner = self.left[node] >= 0
        while np.any(inner):
            nd = node[inner]
            node[inner] = np.where(go[nd], self.left[nd], self.right[nd])
            inner = self.left[node] >= 0
        w = self.effective_tree_weight()
        out = self.base_score.copy()
        vec = self.tree_group < 0
        if np.any(vec):
            out += (w[vec, None] * self.value[node[vec], : self.n_margins]).sum(axis=0)
        grp = ~vec
        np.add.at(out, self.tree_group[grp], w[grp] * self.value[node[grp], 0])
        return out

    def predict_raw(self, X: np.ndarray) -> np.ndarray:
        """Margins of each row: ndarray of shape (n_rows, n_margins) (numpy only, for fidelity tests)."""
        leaves = self.apply(X)
        w = self.effective_tree_weight()
        out = np.tile(self.base_score, (leaves.shape[0], 1))
        for t in range(self.n_trees):
            g = self.tree_group[t]
            if g < 0:
                out += w[t] * self.value[leaves[:, t], : self.n_margins]
            else:
                out[:, g] += w[t] * self.value[leaves[:, t], 0]
        return out

    def apply_link(self, margins: np.ndarray, axis: int = -1) -> np.ndarray:
        """Map margins (margin axis ``axis``) to the response (output axis in the same place)."""
        return apply_link(self.link, margins, self.link_scale, axis=axis)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The response of each row: ndarray of shape (n_rows, n_outputs)."""
        return self.apply_link(self.predict_raw(X))


def apply_link(link: str, margins: np.ndarray, scale: float = 1.0, axis: int = -1) -> np.ndarray:
    """Map margins to the response with the named link (the margin axis is ``axis``)."""
    m = np.asarray(margins, dtype=np.float64)
    if link == "identity":
        return m
    if link == "exp":
        return np.exp(scale * m)
    if link == "logistic":
        return _sigmoid(scale * m)
    if link == "binary_logistic":
        p = _sigmoid(scale * m)
        return np.concatenate([1.0 - p, p], axis=axis)
    if link == "softmax":
        z = scale * m
        z = z - z.max(axis=axis, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=axis, keepdims=True)
    raise MalformedTreeError(f"unknown link {link!r}")  # pragma: no cover


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    e = np.exp(z[~pos])
    out[~pos] = e / (1.0 + e)
    return out


@dataclass
class TreeModel:
    """What an adapter hands to tree methods: the ensemble plus how to feed it.

    Attributes
    ----------
    ensemble : TreeEnsemble
        Its margins, after the link, give the adapter's prediction columns for
        ``response`` (in the same order).
    encode : callable
        ``encode(X) -> ndarray (n_rows, n_features)`` float64: the DataFrame in the
        ensemble's input space (category codes for categorical columns).
    encode_values : callable
        ``encode_values(column_position, values) -> ndarray`` float64: grid values
        of one column in the same space. Methods may call it before ``encode``;
        an adapter that needs X's dtypes to map categories learns them in
        ``Adapter.validate_columns``, which the core always calls first.
    notes : list of str
        Shown with results (e.g. which node weights ``recursion`` uses).
    recursion_weights : str
        What ``node_weight`` holds, for the docs and notes of ``recursion``.
    dated : frozenset of int
        Positions of the columns whose dates (``datetime64`` values and grids) ``encode`` and
        ``encode_values`` read as the numbers the trees split on (an R ``Date`` or ``POSIXct``
        column: its days or seconds; a pipeline's date column made into parts by a step declared
        column-wise: codes of its dates, also in ``value_sets``); the tree methods refuse any other
        date feature.
    value_sets : dict
        Numeric features the ensemble splits on by *sets of their values* (a column
        that reached the model as several derived columns): position -> ``(values,
        codes)``, the raw values (float64, increasing) the sets were evaluated on
        and the code ``encode`` gives each. Empty for every other model.
    """

    ensemble: TreeEnsemble
    encode: Callable
    encode_values: Callable
    notes: list = field(default_factory=list)
    recursion_weights: str = "training row counts"
    dated: frozenset = frozenset()
    value_sets: dict = field(default_factory=dict)


def numeric_encoder(X) -> np.ndarray:
    """Default ``encode``: every column as float64."""
    return np.ascontiguousarray(X.to_numpy(dtype=np.float64, na_value=np.nan))


def numeric_values(_position: int, values) -> np.ndarray:
    """Default ``encode_values``: grid values as float64."""
    return np.asarray(values, dtype=np.float64)


# the fingerprint and the cache of readings live in their own module; their old place keeps their names
from .modelcache import ModelCache, fingerprint, model_cache  # noqa: E402,F401
from .oldpaths import watch as _watch  # noqa: E402 - last: the names above moved to pdpx.extend (core/oldpaths.py)

_watch(__name__)
