"""Reading R randomForest forests, given as plain data, into the common tree representation.

Nothing here imports rpy2 or reticulate. The forest arrives as plain data (numpy
arrays, Python lists, or raw little-endian float64 bytes), exactly as R stores
it in ``model$forest``:

* ``ndbigtree`` (nodes per tree), ``nrnodes`` (rows of the padded matrices);
* ``nodestatus``: -1 at leaves, 1 (classification) or -3 (regression) inside;
* ``treemap`` (nrnodes x 2 x ntree, classification) or ``leftDaughter`` /
  ``rightDaughter`` (nrnodes x ntree, regression): 1-based child rows, 0 at leaves;
* ``bestvar`` (1-based split variable), ``xbestsplit`` (threshold, or the
  integer bitmask of an unordered factor: bit j-1 set means level j goes left),
  ``nodepred`` (leaf mean, or 1-based class index);
* ``ncat`` (1 for numeric and ordered predictors, the number of levels for
  unordered factors) and ``xlevels`` (the factor levels).

Node arrays may come padded (``nrnodes * ntree`` values in R's column-major
order, or shaped (nrnodes, ntree)) or compact (each tree's first ``ndbigtree``
nodes, trees one after another).

The translation to the common representation (:mod:`pdpx.core.ir`):

* numeric splits go left when ``x <= xbestsplit``, no float32 cast;
* factor splits become bitset words (one per 32 levels, so two for factors of 33
  to 53 levels), category code = level - 1, the set goes left: bit j-1 of the
  integer ``xbestsplit`` set means level j goes left (checked against R's
  ``predict`` with a 40-level factor);
* regression: mean of the trees' leaf values (``corr.bias`` forests: the
  stored ``coefs`` intercept and slope become ``base_score`` and tree weights);
* classification: each tree's leaf is a one-hot vector over the classes
  (``tree_group == -1``), averaged: the vote fractions of ``predict(type = "prob")``.

randomForest stores no node counts, so ``recursion`` needs training rows routed
through the trees (:func:`route_counts`, the ``training_data`` argument of the
adapters in :mod:`pdpx.adapters.randomforest`); ``exact`` needs none of that.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from ..core.ir import MalformedTreeError, TreeEnsemble, TreeModel
from ..r_wire import as_array, as_list
from ..r_wire import time_units as time_units_of
from .rlevels import dated_numbers


# ---------------------------------------------------------------------------
# plain-data helpers
# ---------------------------------------------------------------------------
def r_levels(v: Any) -> list[str] | None:
    """One entry of ``xlevels``: a list of level names, or None (numeric predictor)."""
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    if isinstance(v, numbers.Number):
        return None
    items = as_list(v)
    if not items or not all(isinstance(i, str) for i in items):
        return None
    return [str(i) for i in items]


# ---------------------------------------------------------------------------
# the forest
# ---------------------------------------------------------------------------
@dataclass
class ForestData:
    """A randomForest forest, normalised: compact node arrays, 0-based, global indices.

    Attributes
    ----------
    left, right : int64 (n_nodes,)
        Global child indices, -1 at leaves.
    feature : int64 (n_nodes,)
        0-based split variable, -1 at leaves.
    split : float64 (n_nodes,)
        ``xbestsplit``: threshold, or factor bitmask.
    pred : float64 (n_nodes,)
        ``nodepred``: leaf mean (regression) or 1-based class (classification).
    tree_start : int64 (n_trees + 1,)
    ncat : int64 (n_features,)
    xlevels : list of (list of str or None)
    feature_names : list of str
    classes : list of str or None
        Class labels of a classification forest, in R's order (``model$classes``).
    coefs : float64 (2,) or None
        Bias correction of regression forests fitted with ``corr.bias = TRUE``.
    unused : frozenset of int
        Input columns no tree splits on (variables a formula needs that are not
        predictors, e.g. ``x2`` of ``y ~ . - x2``): numeric placeholders in the IR.
    """

    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    split: np.ndarray
    pred: np.ndarray
    tree_start: np.ndarray
    ncat: np.ndarray
    xlevels: list
    feature_names: list
    classes: list | None = None
    coefs: np.ndarray | None = None
    unused: frozenset = frozenset()

    @property
    def is_classification(self) -> bool:
        return self.classes is not None

    @property
    def n_trees(self) -> int:
        return len(self.tree_start) - 1

    @property
    def n_features(self) -> int:
        return len(self.ncat)

    def is_factor(self, j: int) -> bool:
        return bool(self.ncat[j] > 1)


def read_forest(
    forest: Mapping,
    *,
    feature_names: Sequence[str] | None = None,
    classes: Sequence | None = None,
    coefs: Sequence[float] | None = None,
    input_names: Sequence[str] | None = None,
) -> ForestData:
    """Normalise the arrays of ``model$forest`` (see the module docstring).

    Parameters
    ----------
    forest : mapping
        R's names: ``ndbigtree``, ``nodestatus``, ``bestvar``, ``xbestsplit``,
        ``nodepred``, ``ncat``, ``xlevels``, ``treemap`` or
        ``leftDaughter``/``rightDaughter``, and ``nrnodes`` for padded arrays.
    feature_names : list of str, optional
        Predictor names in model order (default: the names of ``xlevels`` when it
        is a dict).
    classes : list, optional
        Class labels: given for classification forests, None for regression.
    coefs : (intercept, slope), optional
        ``model$coefs`` of a bias-corrected regression forest.
    input_names : list of str, optional
        The columns the model's ``predict`` needs, when they are more than the
        predictors (a formula's variables): the IR's inputs are then these
        columns, in this order, and the others are unused by the trees.
    """
    ndbig = as_array(_component(forest, "ndbigtree"), np.int64).ravel()
    if ndbig.size == 0 or np.any(ndbig <= 0):
        raise PdpxError("the randomForest forest has no trees (ndbigtree is empty or zero)")
    nrnodes = forest.get("nrnodes")
    nrnodes = int(as_array(nrnodes).ravel()[0]) if nrnodes is not None else None

    def nodes(name: str, dtype):
        return _compact_nodes(_component(forest, name), dtype, ndbig, nrnodes)

    ld, rd = (_compact_nodes(d, np.int64, ndbig, nrnodes) for d in _daughters(forest, ndbig.size, nrnodes))
    status, bestvar = nodes("nodestatus", np.int64), nodes("bestvar", np.int64)
    split, pred = nodes("xbestsplit", np.float64), nodes("nodepred", np.float64)
    ncat = as_array(_component(forest, "ncat"), np.int64).ravel()
    xlevels, names = _levels_and_names(forest.get("xlevels"), ncat, feature_names)

    start = np.concatenate([[0], np.cumsum(ndbig)]).astype(np.int64)
    tree_of = np.repeat(np.arange(ndbig.size), ndbig)
    leaf = status == -1
    left = np.where(leaf, -1, start[tree_of] + ld - 1)
    right = np.where(leaf, -1, start[tree_of] + rd - 1)
    feature = np.where(leaf, -1, bestvar - 1)
    unused: frozenset = frozenset()
    if input_names is not None:
        feature, ncat, xlevels, names, unused = _onto_inputs(input_names, names, feature, leaf, ncat, xlevels)
    class_list = [str(c) for c in as_list(classes)] if classes is not None else None
    if class_list is not None:
        _check_class_leaves(pred, leaf, len(class_list), tree_of, start)
    return ForestData(
        left=left, right=right, feature=feature, split=split, pred=pred, tree_start=start, ncat=ncat,
        xlevels=xlevels, feature_names=names, classes=class_list, coefs=_bias_correction(coefs), unused=unused,
    )


def _component(forest: Mapping, name: str):
    """``forest[name]``, or an error saying the forest lacks it."""
    if name in forest and forest[name] is not None:
        return forest[name]
    raise PdpxError(f"the randomForest forest has no {name!r} component; was it fitted with keep.forest = TRUE?")


def _compact_nodes(x, dtype, ndbig: np.ndarray, nrnodes: int | None) -> np.ndarray:
    """A node array as each tree's first ``ndbigtree`` nodes, trees one after another: from a compact array, a padded
    one in R's column-major order (``nrnodes * ntree`` values) or a (nrnodes, ntree) matrix."""
    ntree, total = ndbig.size, int(ndbig.sum())
    a = np.asarray(x) if isinstance(x, np.ndarray) else as_array(x)
    if a.ndim == 2:  # (nrnodes, ntree)
        a = np.ascontiguousarray(a.T)
    elif a.size == total:
        return as_array(a, dtype)
    else:
        if nrnodes is None or a.size != nrnodes * ntree:
            raise PdpxError(
                f"a forest node array has {a.size} values; expected {total} (compact) or "
                f"nrnodes x ntree{'' if nrnodes is None else f' = {nrnodes * ntree}'} (padded)"
            )
        a = a.reshape(ntree, nrnodes)
    if a.shape[1] < ndbig.max():
        raise PdpxError("forest node arrays are shorter than ndbigtree says")
    mask = np.arange(a.shape[1])[None, :] < ndbig[:, None]
    return as_array(a[mask], dtype)


def _daughters(forest: Mapping, ntree: int, nrnodes: int | None) -> tuple:
    """The left and right child arrays as R stores them: ``treemap`` (classification; nrnodes x 2 x ntree) or
    ``leftDaughter`` / ``rightDaughter`` (regression), not yet compact."""
    treemap = forest.get("treemap")
    if treemap is None:
        return _component(forest, "leftDaughter"), _component(forest, "rightDaughter")
    tm = np.asarray(treemap) if isinstance(treemap, np.ndarray) else as_array(treemap)
    if tm.ndim == 3:  # (nrnodes, 2, ntree)
        return tm[:, 0, :], tm[:, 1, :]
    if nrnodes is None or tm.size != 2 * nrnodes * ntree:
        raise PdpxError("treemap must be nrnodes x 2 x ntree")
    tm = tm.reshape(ntree, 2, nrnodes)
    return tm[:, 0, :].T, tm[:, 1, :].T


def _levels_and_names(raw_levels, ncat: np.ndarray, feature_names) -> tuple[list, list[str]]:
    """Each predictor's factor levels (None for a numeric one), checked against ``ncat``, and the predictors' names:
    ``feature_names``, else the names of ``xlevels`` when it is a dict, else ``X1``, ``X2``..."""
    if isinstance(raw_levels, Mapping):
        level_names = [str(k) for k in raw_levels.keys()]
        xlevels = [r_levels(v) for v in raw_levels.values()]
    elif raw_levels is None:
        level_names, xlevels = None, [None] * len(ncat)
    else:
        level_names, xlevels = None, [r_levels(v) for v in as_list(raw_levels)]
    if len(xlevels) != len(ncat):
        raise PdpxError(f"xlevels has {len(xlevels)} entries but ncat has {len(ncat)}")
    for j, (k, lv) in enumerate(zip(ncat, xlevels)):
        if k > 1 and (lv is None or len(lv) != k):
            raise PdpxError(f"predictor {j + 1} is a factor with {k} levels but xlevels gives {lv!r}")
    names = as_list(feature_names) if feature_names is not None else level_names
    if names is None:
        names = [f"X{j + 1}" for j in range(len(ncat))]
    names = [str(n) for n in names]
    if len(names) != len(ncat):
        raise PdpxError(f"{len(names)} feature names for a forest of {len(ncat)} predictors")
    return xlevels, names


def _onto_inputs(input_names, names: list[str], feature: np.ndarray, leaf: np.ndarray, ncat: np.ndarray,
                 xlevels: list):
    """The forest's predictors placed among the columns ``predict`` needs (``input_names``): split variables,
    ``ncat`` and levels by input position, the inputs no tree splits on returned as unused. Returns (feature, ncat,
    xlevels, names, unused)."""
    inputs = [str(n) for n in as_list(input_names)]
    absent = [n for n in names if n not in inputs]
    if absent:
        raise PdpxError(f"input_names lacks the forest's predictors {absent}")
    pos = np.array([inputs.index(n) for n in names], dtype=np.int64)
    bad = ~leaf & ((feature < 0) | (feature >= len(names)))
    feature = np.where(leaf | bad, feature, pos[np.clip(feature, 0, len(names) - 1)])
    new_ncat = np.ones(len(inputs), dtype=np.int64)
    new_levels: list = [None] * len(inputs)
    for j, p in enumerate(pos):
        new_ncat[p] = ncat[j]
        new_levels[p] = xlevels[j]
    unused = frozenset(set(range(len(inputs))) - set(pos.tolist()))
    return feature, new_ncat, new_levels, inputs, unused


def _check_class_leaves(pred: np.ndarray, leaf: np.ndarray, n_classes: int, tree_of: np.ndarray,
                        start: np.ndarray) -> None:
    """Every leaf of a classification forest predicts a class index 1..n_classes (else the tree is malformed)."""
    bad = leaf & ((pred < 1) | (pred > n_classes) | (pred != np.round(pred)))
    if np.any(bad):
        node = int(np.flatnonzero(bad)[0])
        t = int(tree_of[node])
        raise MalformedTreeError(
            f"tree {t}, node {node - start[t]}: leaf prediction {pred[node]!r} is not a class index 1..{n_classes}"
        )


def _bias_correction(coefs) -> np.ndarray | None:
    """``model$coefs`` of a bias-corrected regression forest as (intercept, slope), or None."""
    if coefs is None:
        return None
    coef_arr = as_array(coefs).ravel()
    if coef_arr.size == 0:
        return None
    if coef_arr.size != 2 or not np.all(np.isfinite(coef_arr)):
        raise PdpxError(f"coefs must be (intercept, slope), got {coef_arr!r}")
    return coef_arr


def forest_ensemble(fd: ForestData, node_weight: np.ndarray | None = None) -> TreeEnsemble:
    """The forest in the common representation (see the module docstring)."""
    n = len(fd.left)
    internal = fd.left >= 0
    feat = np.where(internal, fd.feature, 0)
    if np.any(internal & ((fd.feature < 0) | (fd.feature >= fd.n_features))):
        feat = np.clip(feat, 0, fd.n_features - 1)  # let validation below name the node
    is_cat = internal & (fd.ncat[feat] > 1)
    nw = max(1, -(-int(fd.ncat.max()) // 32))  # words per factor split (ncat <= 53: at most 2)
    cat_offset = np.full(n, -1, dtype=np.int64)
    cat_nodes = np.flatnonzero(is_cat)
    cat_offset[cat_nodes] = nw * np.arange(cat_nodes.size)
    cat_nwords = np.where(is_cat, nw, 0)
    masks = fd.split[cat_nodes]
    if np.any(~np.isfinite(masks)) or np.any(masks < 0) or np.any(masks != np.round(masks)) or np.any(masks >= 2.0**53):
        raise MalformedTreeError("a factor split's bitmask is not an integer between 0 and 2^53")
    m64 = masks.astype(np.uint64)
    cat_words = np.stack(
        [((m64 >> np.uint64(32 * k)) & np.uint64(0xFFFFFFFF)).astype(np.uint32) for k in range(nw)], axis=1
    ).ravel()
    threshold = np.where(internal & ~is_cat, fd.split, 0.0)

    if fd.is_classification:
        K = len(fd.classes)
        value = np.zeros((n, K))
        leaves = np.flatnonzero(~internal)
        value[leaves, fd.pred[leaves].astype(np.int64) - 1] = 1.0
        tree_group = np.full(fd.n_trees, -1)
        n_margins = K
        tree_weight = None
        base = None
        what = f"classification, {K} classes"
    else:
        value = np.where(internal, 0.0, fd.pred)
        tree_group = np.zeros(fd.n_trees, dtype=np.int64)
        n_margins = 1
        tree_weight = None if fd.coefs is None else np.full(fd.n_trees, fd.coefs[1])
        base = None if fd.coefs is None else np.array([fd.coefs[0]])
        what = "regression" + (", bias-corrected" if fd.coefs is not None else "")
    return TreeEnsemble(
        left=fd.left, right=fd.right, feature=fd.feature, threshold=threshold,
        missing_left=np.zeros(n, dtype=bool), value=value, tree_start=fd.tree_start, tree_group=tree_group,
        n_features=fd.n_features, n_margins=n_margins, node_weight=node_weight,
        cat_offset=cat_offset, cat_nwords=cat_nwords, cat_words=cat_words, tree_weight=tree_weight,
        base_score=base, comparison="<=", float32_input=False, categories_go_left=True,
        aggregation="mean", link="identity", description=f"randomForest ({what}, {fd.n_trees} trees)",
    )


# ---------------------------------------------------------------------------
# input encoding (DataFrame -> the forest's numeric input space)
# ---------------------------------------------------------------------------
class ForestEncoder:
    """Maps DataFrame columns to what R's ``data.matrix`` gives randomForest.

    * unordered factors (``ncat > 1``): 0-based level index in the model's levels
      (the IR's category code; R sees index + 1). Values are matched by label, so
      a pandas Categorical may list its categories in any order; a value that is
      not a level is an error.
    * numeric predictors: the numbers; ``bool`` as 0/1; an (ordered) pandas
      Categorical as its 1-based category position, as R codes an ordered factor.
    * dates and times (``datetime64``) of a predictor R sent as a ``Date`` or ``POSIXct`` column
      (``time_units``: per predictor ``"days"``, ``"seconds"`` or None): the days or seconds since
      1970-01-01 UTC that ``data.matrix`` gives (:func:`pdpx.r_wire.r_time_numbers`);
    * missing values are an error: randomForest cannot predict them.
    """

    def __init__(self, fd: ForestData, time_units=None):
        self.fd = fd
        self.time_units = time_units_of(time_units, fd.n_features)
        self._index = [
            {lv: i for i, lv in enumerate(levels)} if fd.is_factor(j) else None
            for j, levels in enumerate(fd.xlevels)
        ]
        #: categories of categorical columns given for numeric predictors (ordered factors)
        self.ordered_categories: dict[int, list] = {}

    def _name(self, j):
        return self.fd.feature_names[j]

    def factor_codes(self, j: int, values, *, what: str = "column") -> np.ndarray:
        """0-based level indices of ``values`` (labels) for factor predictor ``j``."""
        index = self._index[j]
        s = pd.Series(values)
        if s.isna().any():
            raise PdpxError(
                f"{what} {self._name(j)!r} has {int(s.isna().sum())} missing value(s); randomForest cannot "
                "predict rows with missing values: drop or impute them first (e.g. X.dropna())"
            )
        if isinstance(s.dtype, pd.CategoricalDtype):
            cats = [str(c) for c in s.cat.categories]
            lookup = np.array([index.get(c, -1) for c in cats], dtype=np.int64)
            codes = lookup[s.cat.codes.to_numpy()]
        elif pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            raise PdpxError(
                f"{what} {self._name(j)!r} is a factor in the randomForest model but holds numbers; pass it as "
                f"a pandas Categorical with the model's levels, e.g. "
                f"pd.Categorical(values, categories={self.fd.xlevels[j][:6]!r}"
                f"{'...' if len(self.fd.xlevels[j]) > 6 else ''})"
            )
        else:
            uniq, inv = np.unique(s.astype(str).to_numpy(), return_inverse=True)
            lookup = np.array([index.get(u, -1) for u in uniq], dtype=np.int64)
            codes = lookup[inv]
        if np.any(codes < 0):
            bad = sorted({str(v) for v, c in zip(s.to_numpy(), codes) if c < 0})
            raise PdpxError(
                f"{what} {self._name(j)!r} has values that are not levels of the factor in the randomForest "
                f"model: {bad[:8]!r}; its levels are {self.fd.xlevels[j]!r}"
            )
        return codes.astype(np.int64)

    def numeric(self, j: int, values, *, what: str = "column") -> np.ndarray:
        s = values if isinstance(values, pd.Series) else pd.Series(values)
        if isinstance(s.dtype, pd.CategoricalDtype):
            if not s.cat.ordered:
                raise PdpxError(
                    f"{what} {self._name(j)!r} is categorical but the randomForest model treats it as numeric "
                    "(a number or an ordered factor); pass numbers, or an ordered Categorical for an ordered factor"
                )
            # R codes an ordered factor by its position in the levels
            self.ordered_categories[j] = list(s.cat.categories)
            codes = s.cat.codes.to_numpy().astype(np.float64)
            out = np.where(codes < 0, np.nan, codes + 1.0)
        elif pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype):
            out = s.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            out = dated_numbers(s, self.time_units[j], self._name(j), "randomForest", what)
        if np.isnan(out).any():
            raise PdpxError(
                f"{what} {self._name(j)!r} has {int(np.isnan(out).sum())} missing value(s); randomForest cannot "
                "predict rows with missing values: drop or impute them first"
            )
        return out

    def column(self, j: int, values, *, what: str = "column") -> np.ndarray:
        if j in self.fd.unused:  # no tree reads it (R's predict still gets the column)
            return np.zeros(len(values))
        if self.fd.is_factor(j):
            return self.factor_codes(j, values, what=what).astype(np.float64)
        return self.numeric(j, values, what=what)

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        """(n_rows, n_features) float64, columns in model order."""
        if X.shape[1] != self.fd.n_features:
            raise PdpxError(f"X has {X.shape[1]} columns; the forest has {self.fd.n_features} predictors")
        out = np.empty((len(X), self.fd.n_features))
        for j in range(self.fd.n_features):
            out[:, j] = self.column(j, X.iloc[:, j])
        return out

    def encode_values(self, position: int, values) -> np.ndarray:
        """Grid values of column ``position`` in the forest's input space."""
        j = position
        if j in self.fd.unused:
            return np.zeros(len(values))
        if self.fd.is_factor(j):
            return self.factor_codes(j, np.asarray(values, dtype=object), what="grid of").astype(np.float64)
        if j in self.ordered_categories:  # grid of an ordered factor: its categories
            index = {c: i + 1.0 for i, c in enumerate(self.ordered_categories[j])}
            out = np.array([index.get(v, np.nan) for v in np.asarray(values, dtype=object)], dtype=np.float64)
            if np.isnan(out).any():
                raise PdpxError(f"grid values of {self._name(j)!r} are not among its categories")
            return out
        return self.numeric(j, values, what="grid of")


# ---------------------------------------------------------------------------
# node counts for `recursion`
# ---------------------------------------------------------------------------
def route_counts(ensemble: TreeEnsemble, X: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Node weights from routing rows through every tree: how many rows (or how much weight) reach each node.

    Parameters
    ----------
    ensemble : TreeEnsemble
    X : ndarray of shape (n_rows, n_features)
        Rows already encoded in the ensemble's input space (``TreeModel.encode``).
    sample_weight : ndarray of shape (n_rows,), optional

    Returns
    -------
    ndarray of shape (n_nodes,), float64
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != ensemble.n_features:
        raise PdpxError(f"rows to route must be (n_rows, {ensemble.n_features}); got shape {X.shape}")
    w = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (len(X),):
        raise PdpxError("sample_weight needs one weight per routed row")
    counts = np.zeros(ensemble.n_nodes)
    left, right, feature = ensemble.left, ensemble.right, ensemble.feature
    for t in range(ensemble.n_trees):
        root = int(ensemble.tree_start[t])
        node = np.full(len(X), root, dtype=np.int64)
        counts[root] += w.sum()
        active = np.flatnonzero(left[node] >= 0)
        while active.size:
            cur = node[active]
            nxt = np.empty_like(cur)
            for nd in np.unique(cur):
                sel = cur == nd
                go = ensemble.goes_left(int(nd), X[active[sel], feature[nd]])
                nxt[sel] = np.where(go, left[nd], right[nd])
            node[active] = nxt
            np.add.at(counts, nxt, w[active])
            active = active[left[nxt] >= 0]
    return counts


def with_node_weights(tree_model: TreeModel, node_weight: np.ndarray, source: str) -> TreeModel:
    """A copy of ``tree_model`` whose ensemble carries ``node_weight``."""
    ens = replace(tree_model.ensemble, node_weight=np.asarray(node_weight, dtype=np.float64), _effective_weight=None)
    return replace(tree_model, ensemble=ens, recursion_weights=source)
