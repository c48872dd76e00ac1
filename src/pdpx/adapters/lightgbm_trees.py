"""Reading LightGBM models into the common tree representation (:mod:`pdpx.core.ir`).

The trees are parsed from ``booster.model_to_string()``, LightGBM's text model:
about 14x faster than ``dump_model()`` (which builds a JSON string and then
Python objects), and it carries categorical sets as ready bitsets; see
``docs/xgboost_lightgbm.md``. What the trees mean, as LightGBM's predict applies it:

* ``x <= t`` goes left, no cast (LightGBM compares doubles);
* LightGBM's predictor reads any |x| <= 1e-35f as exactly 0.0 (it keeps only
  values above its zero threshold); the encoder does the same;
* numeric missing values by ``missing_type``: None reads NaN as 0.0; Zero sends
  zero (|x| <= 1e-35) and NaN to the default side; NaN sends NaN there;
* categorical splits: codes in the set go *left*; NaN, negative codes and codes
  outside the bitset go right; LightGBM truncates a code toward zero
  (``static_cast<int>``), so pdpx does too;
* pandas ``category`` columns are re-coded like LightGBM does: the i-th category
  column of X takes the categories stored with the model (``pandas_categorical``)
  and values it does not know become missing;
* boost-from-average is already folded into the first tree of each class;
* node weights are ``internal_weight`` / ``leaf_weight`` (sums of hessians), so
  ``recursion`` is hessian weighted; they equal row counts only for squared error;
* ``linear_tree`` leaves are linear models: no IR, ``brute`` only.

Nothing here imports lightgbm.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.booster import numeric_column
from ..core.errors import PdpxError
from ..core.ir import NAN_AS_ZERO, NAN_MISSING, ZERO_OR_NAN_MISSING

IDENTITY_OBJECTIVES = {
    "regression", "regression_l1", "huber", "fair", "quantile", "mape",
    "lambdarank", "rank_xendcg", "custom", "none",
}
EXP_OBJECTIVES = {"poisson", "gamma", "tweedie"}
CLASSIFIER_OBJECTIVES = {"binary", "multiclass", "multiclassova"}


def parse_objective(text: str) -> tuple[str, dict]:
    """``"binary sigmoid:1"`` -> ``("binary", {"sigmoid": "1"})``; flags map to True."""
    tokens = str(text).split()
    if not tokens:
        return "none", {}
    params: dict = {}
    for tok in tokens[1:]:
        if ":" in tok:
            k, v = tok.split(":", 1)
            params[k] = v
        else:
            params[tok] = True
    return tokens[0], params


def frame_categories(X: pd.DataFrame, stored) -> dict[int, list]:
    """Categories LightGBM codes each pandas category column of X by, by position.

    The i-th category column takes the i-th list of ``pandas_categorical`` (the
    model's), or its own categories when the model stores none.
    """
    cat_cols = [j for j in range(X.shape[1]) if isinstance(X.dtypes.iloc[j], pd.CategoricalDtype)]
    if stored is not None and len(stored) != len(cat_cols):
        raise PdpxError(
            f"X has {len(cat_cols)} pandas 'category' column(s) but the LightGBM model was trained "
            f"with {len(stored)}; give X the dtypes it had at fit time"
        )
    return {
        j: (list(stored[i]) if stored is not None else list(X.iloc[:, j].cat.categories))
        for i, j in enumerate(cat_cols)
    }


class LightGBMEncoder:
    """DataFrame -> the float matrix LightGBM's trees see (category columns -> codes).

    ``frame``: the categories of X's category columns as LightGBM codes them
    (recorded by the adapter's ``validate_columns``); grid values of those
    columns are category labels. ``cat_features``: features with categorical
    splits, whose values LightGBM truncates to integers.
    """

    def __init__(self, stored, frame: dict[int, list], cat_features: set[int]):
        self.stored = stored
        self.frame = frame
        self.cat_features = cat_features

    @staticmethod
    def _codes(target: list, labels) -> np.ndarray:
        labels = list(labels)
        if not labels:
            return np.zeros(0)
        if not len(target):
            return np.full(len(labels), np.nan)
        idx = pd.Index(target).get_indexer(pd.Index(labels, dtype=object))
        return np.where(idx >= 0, idx, np.nan).astype(np.float64)

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        n, p = X.shape
        out = np.empty((n, p), dtype=np.float64)
        cats_of = frame_categories(X, self.stored)
        self.frame.clear()
        self.frame.update(cats_of)
        for j in range(p):
            col = X.iloc[:, j]
            if j in cats_of:
                # what LightGBM does: set_categories(stored) then codes, -1 -> NaN
                new = self._codes(cats_of[j], col.cat.categories)
                codes = col.cat.codes.to_numpy().astype(np.int64)
                vals = np.full(n, np.nan)
                ok = codes >= 0
                vals[ok] = new[codes[ok]]
                out[:, j] = vals
            else:
                out[:, j] = _as_float(col, X.columns[j])
        _lightgbm_zeros(out)
        for j in self.cat_features:
            if j < p:
                out[:, j] = np.trunc(out[:, j])
        return out

    def encode_values(self, pos: int, values) -> np.ndarray:
        if pos in self.frame:
            out = self._codes(self.frame[pos], values)
        else:
            out = _as_float(pd.Series(np.asarray(values)), f"column {pos}")
        _lightgbm_zeros(out)
        if pos in self.cat_features:
            out = np.trunc(out)
        return out


#: LightGBM's kZeroThreshold, 1e-35f, as a double. Its predictor keeps only values
#: with |x| > kZeroThreshold (or NaN) and reads every other value as exactly 0.0.
ZERO_THRESHOLD = float(np.float32(1e-35))


def _lightgbm_zeros(arr: np.ndarray) -> None:
    """In place: |x| <= 1e-35f becomes 0.0, as LightGBM's predictor does for every feature."""
    with np.errstate(invalid="ignore"):
        arr[np.abs(arr) <= ZERO_THRESHOLD] = 0.0


def _as_float(col, name) -> np.ndarray:
    return numeric_column(col, name, "LightGBM takes numbers, booleans or pandas 'category' columns")


def parse_header(text: str) -> dict:
    """``key=value`` lines of the model text's header (flags such as ``average_output`` map to '')."""
    out = {}
    for line in text.split("\n"):
        if not line or line == "tree":
            continue
        k, _, v = line.partition("=")
        out[k] = v
    return out


_NODE_KEYS = ("split_feature", "threshold", "decision_type", "left_child", "right_child",
              "internal_weight")
_LEAF_KEYS = ("leaf_value", "leaf_weight")


def _numbers(strings: list[str], dtype) -> np.ndarray:
    """Space-separated numbers of several trees as one array.

    Integers: numpy's C text parser. Floats: pyarrow's CSV reader when pyarrow is
    installed (it converts with fast_float, correctly rounded like Python's
    ``float``, and about 4x faster than numpy here), else numpy's parser.
    """
    text = " ".join(s for s in strings if s)
    if not text:
        return np.zeros(0, dtype=dtype)
    expected = text.count(" ") + 1
    out = None
    if np.dtype(dtype).kind == "f" and expected > _ARROW_MIN:
        out = _arrow_floats(text)
    try:
        if out is None:
            out = np.fromstring(text, dtype=dtype, sep=" ")
    except ValueError:
        out = None
    if out is None or out.size != expected:
        raise PdpxError("could not parse the LightGBM model text (a number field is malformed)")
    return out


_ARROW_MIN = 2000  # below this, numpy's parser is as fast


def _arrow_floats(text: str) -> np.ndarray | None:
    try:
        import pyarrow as pa
        from pyarrow import csv
    except ImportError:
        return None
    data = text.replace(" ", "\n").encode()
    try:
        table = csv.read_csv(
            pa.py_buffer(data), read_options=csv.ReadOptions(column_names=["v"]),
            convert_options=csv.ConvertOptions(column_types={"v": pa.float64()}),
        )
    except pa.ArrowInvalid as exc:
        raise PdpxError(f"could not parse the LightGBM model text ({exc})") from None
    return table.column(0).to_numpy()


def parse_model_string(text: str) -> tuple[dict, dict | None]:
    """Parse ``Booster.model_to_string()`` into (header, TreeEnsemble node/tree arrays).

    The arrays are None when the model has linear trees.
    """
    end = text.find("\nend of trees")
    body = text if end < 0 else text[:end]
    blocks = body.split("\nTree=")
    header = parse_header(blocks[0])
    trees = []
    for block in blocks[1:]:
        d = {}
        for line in block.split("\n")[1:]:
            if line:
                k, _, v = line.partition("=")
                d[k] = v
        trees.append(d)
    if not trees:
        raise PdpxError("the LightGBM model has no trees")
    if any(t.get("is_linear", "0") == "1" for t in trees):
        return header, None
    L = np.array([int(t["num_leaves"]) for t in trees], dtype=np.int64)
    n_int = L - 1
    sizes = 2 * L - 1
    tree_start = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum(sizes, out=tree_start[1:])
    multi = [t for t in trees if int(t["num_leaves"]) > 1]
    split_feature = _numbers([t["split_feature"] for t in multi], np.int64)
    threshold = _numbers([t["threshold"] for t in multi], np.float64)
    decision = _numbers([t["decision_type"] for t in multi], np.int64)
    lchild = _numbers([t["left_child"] for t in multi], np.int64)
    rchild = _numbers([t["right_child"] for t in multi], np.int64)
    iweight = _numbers([t["internal_weight"] for t in multi], np.float64)
    leaf_value = _numbers([t["leaf_value"] for t in trees], np.float64)
    # leaf weights: single-leaf trees write none
    has_lw = np.array([bool(t.get("leaf_weight")) for t in trees])
    leaf_weight = np.full(int(L.sum()), np.nan)
    leaf_weight[np.repeat(has_lw, L)] = _numbers([t["leaf_weight"] for t in trees if t.get("leaf_weight")], np.float64)
    if len(leaf_value) != L.sum() or len(split_feature) != n_int.sum():
        raise PdpxError("could not parse the LightGBM model text (node counts do not add up)")

    n = int(tree_start[-1])
    # positions: internal node i of tree t -> start_t + i; leaf j -> start_t + n_int_t + j
    int_pos = np.repeat(tree_start[:-1], n_int) + _ranges(n_int)
    leaf_pos = np.repeat(tree_start[:-1] + n_int, L) + _ranges(L)
    start_of_int = np.repeat(tree_start[:-1], n_int)
    nint_of_int = np.repeat(n_int, n_int)

    def child(c):
        return np.where(c >= 0, start_of_int + c, start_of_int + nint_of_int + (~c))

    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    left[int_pos] = child(lchild)
    right[int_pos] = child(rchild)
    feature = np.zeros(n, dtype=np.int64)
    feature[int_pos] = split_feature
    thr = np.zeros(n)
    is_cat = (decision & 1) > 0
    default_left = (decision & 2) > 0
    missing_type = (decision >> 2) & 3
    thr[int_pos] = np.where(is_cat, 0.0, threshold)
    missing_left = np.zeros(n, dtype=bool)
    missing_left[int_pos] = default_left & ~is_cat
    nan_mode = np.zeros(n, dtype=np.int8)
    nan_mode[int_pos] = np.select(
        [missing_type == 0, missing_type == 1], [NAN_AS_ZERO, ZERO_OR_NAN_MISSING], NAN_MISSING
    )
    value = np.zeros(n)
    value[leaf_pos] = leaf_value
    node_weight = np.full(n, np.nan)
    node_weight[int_pos] = iweight
    node_weight[leaf_pos] = leaf_weight

    cat_offset = np.full(n, -1, dtype=np.int64)
    cat_nwords = np.zeros(n, dtype=np.int64)
    words = []
    word_pos = 0
    if np.any(is_cat):
        k = 0
        for t, tr in enumerate(trees):
            ni = int(n_int[t])
            if int(tr.get("num_cat", "0")) > 0:
                bounds = np.array(tr["cat_boundaries"].split(), dtype=np.int64)
                w = np.array(tr["cat_threshold"].split(), dtype=np.uint64).astype(np.uint32)
                for i in np.flatnonzero(is_cat[k: k + ni]):
                    idx = int(threshold[k + i])
                    g = int(tree_start[t]) + int(i)
                    cat_offset[g] = word_pos + bounds[idx]
                    cat_nwords[g] = bounds[idx + 1] - bounds[idx]
                words.append(w)
                word_pos += len(w)
            k += ni
    parts = dict(
        left=left, right=right, feature=feature, threshold=thr, missing_left=missing_left, value=value,
        tree_start=tree_start, node_weight=node_weight, nan_mode=nan_mode,
        cat_offset=cat_offset, cat_nwords=cat_nwords,
        cat_words=np.concatenate(words) if words else np.zeros(0, dtype=np.uint32),
    )
    return header, parts


def _ranges(counts: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(c)`` for each c in counts."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total, dtype=np.int64) - starts
