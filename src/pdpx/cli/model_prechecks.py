"""Checks of XGBoost and LightGBM model files before their library's loader sees them.

The libraries' loaders trust their files: a deeply nested ``.json`` overflows XGBoost's stack
(SIGSEGV), a child index or split feature out of range makes XGBoost's ``predict`` read
outside its arrays, a LightGBM tree whose ``num_leaves`` is ``2e9`` or ``-5``, or whose
arrays are one number short, aborts the process (SIGABRT), and a cycle among a tree's
children makes ``predict`` loop forever. :func:`precheck_model_file` reads the file first,
within the memory budget, and refuses, in one line, anything but a well-formed model:

* size: the file's size times what its loader takes per byte (:data:`PER_BYTE`) must fit
  the memory budget;
* XGBoost (``.json``, ``.ubj``): at most :data:`MAX_DEPTH` levels of nesting (counted on
  the bytes, before anything is parsed), then every tree: arrays of ``num_nodes`` entries,
  children inside the tree and each node reached once from the root (a tree, no cycle),
  split features below ``num_feature``, category sets inside their arrays; counts
  (features, classes, targets, categories) within :data:`MAX_COUNT`;
* LightGBM (``.txt``): the header's counts, then every tree as LightGBM's parser reads it
  (``key=value`` lines, at most 22, each array exactly as long as ``num_leaves`` says,
  ``1 <= num_leaves <= 131072``), children forming a tree, split features and category
  bounds in range. The model is then loaded from its text without ``tree_sizes`` (so
  LightGBM parses the trees one after another, where an error it finds is an exception,
  not an abort: :func:`lightgbm_text`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ..core.config import format_bytes, get_config

#: nesting an XGBoost model file may have (XGBoost's own files nest 8 levels)
MAX_DEPTH = 64
#: features, classes, targets, category codes: more is not a model this machine could use
MAX_COUNT = 1 << 24
#: LightGBM's own limit on a tree's leaves
MAX_LEAVES = 131072
#: bytes each loader takes per byte of file (its parsed model and pdpx's check), for the size check
PER_BYTE = {"xgboost-json": 8, "xgboost-ubj": 4, "lightgbm": 6}
_CHUNK = 1 << 20
_BUDGET_HINT = "the memory_budget setting: pdpx.set_config(memory_budget=...), or --memory-budget on the command line"


class PrecheckError(ValueError):
    """A model file refused before its loader read it; the message says why."""


def precheck_model_file(path, kind: str, *, budget: int | None = None):
    """Refuse (:class:`PrecheckError`) an XGBoost or LightGBM file its loader could crash on. Returns what the
    loader should read: for LightGBM the model text without ``tree_sizes``, else None (the file itself)."""
    p = Path(path)
    budget = int(get_config()["memory_budget"] if budget is None else budget)
    size = p.stat().st_size
    if size * PER_BYTE[kind] > budget:
        raise PrecheckError(f"the file is {format_bytes(size)}: loading it takes about "
                            f"{format_bytes(size * PER_BYTE[kind])}, more than the memory budget "
                            f"({format_bytes(budget)}; {_BUDGET_HINT})")
    data = p.read_bytes()
    if kind == "lightgbm":
        return check_lightgbm(data)
    if kind == "xgboost-json":
        depth = json_depth(data)
        if depth > MAX_DEPTH:
            raise PrecheckError(f"it nests {depth} levels deep; an XGBoost model nests at most {MAX_DEPTH}")
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise PrecheckError(f"it is not valid JSON ({_first_line(exc)})") from None
    else:
        doc = _ubj(data)
    try:
        check_xgboost(doc)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        if isinstance(exc, PrecheckError):
            raise
        raise PrecheckError(f"it is not a well-formed XGBoost model ({_first_line(exc)})") from None
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# ----------------------------------------------------------------------------------------------- XGBoost
def json_depth(data: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings: strings removed (one regular expression, linear
    time), then the brackets summed a block at a time. An unterminated string leaves its brackets counted."""
    text = _STRING.sub(b"", data)
    depth = deepest = 0
    for start in range(0, len(text), _CHUNK):
        b = np.frombuffer(text, dtype=np.uint8, count=min(_CHUNK, len(text) - start), offset=start)
        step = (b == 91).astype(np.int32) + (b == 123) - (b == 93) - (b == 125)
        levels = depth + np.cumsum(step, dtype=np.int64)
        deepest = max(deepest, int(levels.max()))
        depth = int(levels[-1])
    return deepest


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _ubj(data: bytes):
    from ..adapters.ubjson import ubj_loads

    try:
        doc = ubj_loads(data)
    except RecursionError:
        raise PrecheckError(f"it nests deeper than an XGBoost model (at most {MAX_DEPTH} levels)") from None
    except (ValueError, IndexError, KeyError, TypeError, UnicodeDecodeError, OverflowError, MemoryError) as exc:
        raise PrecheckError(f"it is not valid UBJSON ({_first_line(exc)})") from None
    if _depth(doc) > MAX_DEPTH:
        raise PrecheckError(f"it nests deeper than an XGBoost model (at most {MAX_DEPTH} levels)")
    return doc


def _depth(value, limit: int = MAX_DEPTH + 1) -> int:
    """Nesting depth of parsed containers (numpy arrays are leaves), counted up to ``limit``."""
    deepest, level = 0, [value]
    while level and deepest <= limit:
        deepest += 1
        nxt = []
        for v in level:
            if isinstance(v, dict):
                nxt.extend(x for x in v.values() if isinstance(x, (dict, list)))
            elif isinstance(v, list):
                nxt.extend(x for x in v if isinstance(x, (dict, list)))
        level = nxt
    return deepest


def _count(value, what: str, low: int = 0, high: int = MAX_COUNT) -> int:
    try:
        n = int(str(value).strip() or "0")
    except (TypeError, ValueError):
        raise PrecheckError(f"its {what} is not a number ({str(value)[:40]!r})") from None
    if not low <= n <= high:
        raise PrecheckError(f"its {what} is {n:,}; a model file has between {low:,} and {high:,}")
    return n


def _ints(values, what: str, n: int | None = None) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise PrecheckError(f"its {what} are not numbers") from None
    if (n is not None and arr.size != n) or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise PrecheckError(f"its {what} are not {n if n is not None else 'whole'} whole numbers"
                            + (f" (found {arr.size})" if n is not None and arr.size != n else ""))
    return arr.astype(np.int64)


def check_xgboost(doc) -> None:
    """Every part of an XGBoost model its loader and ``predict`` index with (see the module docstring)."""
    learner = doc.get("learner") if isinstance(doc, dict) else None
    if not isinstance(learner, dict) or not isinstance(learner.get("gradient_booster"), dict):
        raise PrecheckError("it is not an XGBoost model (no learner / gradient_booster)")
    param = learner.get("learner_model_param") or {}
    n_features = _count(param.get("num_feature", 0), "num_feature")
    n_class = _count(param.get("num_class", 0), "num_class")
    n_target = _count(param.get("num_target", 1), "num_target")
    gb = learner["gradient_booster"]
    name = gb.get("name")
    if name == "gblinear":
        weights = np.asarray((gb.get("model") or {}).get("weights", []))
        if weights.size != (n_features + 1) * max(1, n_class, n_target):
            raise PrecheckError("its linear booster's weights do not match num_feature")
        return
    model = (gb.get("gbtree") or {}).get("model") if name == "dart" else gb.get("model")
    if name not in ("gbtree", "dart") or not isinstance(model, dict) or not isinstance(model.get("trees"), list):
        raise PrecheckError(f"its booster {name!r} is not one XGBoost writes (gbtree, dart, gblinear)")
    trees = model["trees"]
    declared = _count((model.get("gbtree_model_param") or {}).get("num_trees", len(trees)), "num_trees")
    info = _ints(model.get("tree_info", []), "tree_info entries", len(trees))
    if declared != len(trees) or np.any((info < 0) | (info >= max(1, n_class, n_target))):
        raise PrecheckError("its tree_info / num_trees do not match its trees")
    if "iteration_indptr" in model:
        ptr = _ints(model["iteration_indptr"], "iteration_indptr entries")
        if ptr.size == 0 or ptr[0] != 0 or ptr[-1] != len(trees) or np.any(np.diff(ptr) < 0):
            raise PrecheckError("its iteration_indptr does not run over its trees")
    if name == "dart" and len(gb.get("weight_drop", [])) != len(trees):
        raise PrecheckError("its weight_drop does not have one weight per tree")
    if trees:
        _check_xgboost_trees(trees, n_features, max(1, n_target))


#: per-node arrays of an XGBoost tree that must have ``num_nodes`` entries
_XGB_NODE_ARRAYS = ("left_children", "right_children", "split_indices", "split_conditions", "default_left",
                    "sum_hessian", "loss_changes", "parents")


def _check_xgboost_trees(trees: list, n_features: int, n_target: int) -> None:
    """The trees' arrays, all trees at once: lengths, children (a tree each), split features, category sets."""
    sizes, leaf_sizes = np.zeros(len(trees), dtype=np.int64), np.ones(len(trees), dtype=np.int64)
    for t, tree in enumerate(trees):
        if not isinstance(tree, dict) or not isinstance(tree.get("tree_param"), dict):
            raise PrecheckError(f"its tree {t} is not a tree")
        n = sizes[t] = _count(tree["tree_param"].get("num_nodes", 0), f"tree {t}'s num_nodes", 1)
        leaf_sizes[t] = _count(tree["tree_param"].get("size_leaf_vector", 1) or 1, f"tree {t}'s size_leaf_vector", 1)
        if leaf_sizes[t] > 1 and leaf_sizes[t] != n_target:
            raise PrecheckError(f"its tree {t} has leaf vectors of {leaf_sizes[t]}; the model has {n_target} targets")
        for key in _XGB_NODE_ARRAYS + (("split_type",) if "split_type" in tree else ()):
            if len(tree.get(key, ())) != n:
                raise PrecheckError(f"its tree {t}'s {key} does not have num_nodes = {n} entries")
        if len(tree.get("base_weights", ())) != n * leaf_sizes[t]:
            raise PrecheckError(f"its tree {t}'s base_weights are not num_nodes x size_leaf_vector numbers")
        if leaf_sizes[t] > 1:
            _check_leaf_vectors(tree, t, int(leaf_sizes[t]))
        if len(tree.get("categories_nodes", ())):
            _check_categories(tree, t, n)
    left, right, split = (_ints(np.concatenate([np.asarray(tree[key]) for tree in trees]), f"trees' {key}")
                          for key in ("left_children", "right_children", "split_indices"))
    vector = np.repeat(leaf_sizes > 1, sizes)
    right = np.where(vector & (left < 0), -1, right)  # a multi-target tree's leaf holds its leaf index there
    _check_children(left, right, "trees", sizes=sizes)
    if np.any((left >= 0) & ((split < 0) | (split >= max(n_features, 1)))):
        raise PrecheckError(f"a tree splits on a feature outside the model's {n_features}")
    stype = [np.asarray(tree["split_type"]) for tree in trees if "split_type" in tree]
    if stype and np.any((_ints(np.concatenate(stype), "split types") < 0) | (np.concatenate(stype) > 1)):
        raise PrecheckError("a tree has a split type XGBoost does not write")


def _check_leaf_vectors(tree: dict, t: int, leaf_size: int) -> None:
    """A multi-target tree: each leaf's index into ``leaf_weights`` (stored in ``right_children``) in range."""
    left = _ints(tree["left_children"], f"tree {t}'s left_children")
    right = _ints(tree["right_children"], f"tree {t}'s right_children")
    n_leaves = len(tree.get("leaf_weights", ())) // leaf_size
    if len(tree.get("leaf_weights", ())) % leaf_size or np.any((left < 0) & ((right < 0) | (right >= n_leaves))):
        raise PrecheckError(f"its tree {t}'s leaves point outside its leaf_weights")


def _check_categories(tree: dict, t: int, n: int) -> None:
    nodes = _ints(tree.get("categories_nodes", []), f"tree {t}'s categories_nodes")
    seg = _ints(tree.get("categories_segments", []), f"tree {t}'s categories_segments", nodes.size)
    size = _ints(tree.get("categories_sizes", []), f"tree {t}'s categories_sizes", nodes.size)
    cats = _ints(tree.get("categories", []), f"tree {t}'s categories")
    if np.any((nodes < 0) | (nodes >= n)) or np.any(seg < 0) or np.any(size < 0) or np.any(seg + size > cats.size) \
            or np.any((cats < 0) | (cats >= MAX_COUNT)):
        raise PrecheckError(f"its tree {t}'s categorical splits point outside their arrays")


def _check_children(left: np.ndarray, right: np.ndarray, where: str, *, sizes=None) -> None:
    """Each internal node's two children inside its tree, never the root, each node reached once: trees (one,
    or one per entry of ``sizes``, nodes one tree after another, children numbered within their tree)."""
    n = left.size
    sizes = np.array([n]) if sizes is None else np.asarray(sizes)
    start = np.repeat(np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
    size = np.repeat(sizes, sizes)
    internal = left >= 0
    if np.any(~internal & (right != -1)) or np.any(internal & ((left < 1) | (right < 1) | (left >= size) |
                                                              (right >= size))):
        raise PrecheckError(f"its {where} have a child index outside their tree")
    children = np.concatenate([(left + start)[internal], (right + start)[internal]])
    if np.any(np.bincount(children, minlength=n) > 1):
        raise PrecheckError(f"its {where} reach a node twice (children that form a cycle or a shared branch)")


# ----------------------------------------------------------------------------------------------- LightGBM
_KEY_VALUE = re.compile(r"[^=\r\n]+=[^\r\n]*")
#: arrays of a tree with a split (num_leaves > 1) and their lengths: L - 1 per split, L per leaf
_SPLIT_ARRAYS = ("split_feature", "threshold", "decision_type", "left_child", "right_child")
_OPTIONAL_SPLIT = ("split_gain", "internal_value", "internal_weight", "internal_count")
_OPTIONAL_LEAF = ("leaf_weight", "leaf_count")


def check_lightgbm(data: bytes) -> str:
    """The model text without ``tree_sizes``, once the header and every tree pass (see the module docstring)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PrecheckError("it is not text (a LightGBM model is written as UTF-8 text)") from None
    lines = text.replace("\r\n", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("Tree=")), len(lines))
    header = dict(line.split("=", 1) for line in lines[:first] if "=" in line)
    n_class = _count(header.get("num_class", ""), "num_class", 1, 1 << 16)
    per_iteration = _count(header.get("num_tree_per_iteration", ""), "num_tree_per_iteration", 1, 1 << 16)
    n_features = _count(header.get("max_feature_idx", ""), "max_feature_idx", 0, MAX_COUNT - 1) + 1
    if len(header.get("feature_names", "").split(" ")) != n_features:
        raise PrecheckError(f"its feature_names do not name max_feature_idx + 1 = {n_features} features")
    trees, i = 0, first
    while i < len(lines) and lines[i].startswith("Tree="):
        end = i + 1
        while end < len(lines) and lines[end]:
            end += 1
        _check_lightgbm_tree(lines[i + 1:end], trees, n_features)
        trees += 1
        i = end
        while i < len(lines) and not lines[i]:
            i += 1
    if trees % per_iteration or (trees and not any(x.startswith("end of trees") for x in lines[i:i + 1])):
        raise PrecheckError(f"its {trees} trees are not followed by 'end of trees', or are not a multiple of "
                            f"num_tree_per_iteration ({per_iteration})")
    if n_class > 1 and per_iteration != n_class:
        raise PrecheckError(f"its num_class ({n_class}) and num_tree_per_iteration ({per_iteration}) disagree")
    _check_objective(header.get("objective", ""), n_class)
    return re.sub(r"(?m)^tree_sizes=[^\n]*\n", "", text, count=1)


def _check_objective(text: str, n_class: int) -> None:
    """``objective=name key:value ...``: LightGBM builds the objective from it when loading, and a ``num_class``
    of 2e9 there crashes it: it must be the header's."""
    for part in text.split(" ")[1:]:
        key, _, value = part.partition(":")
        if key == "num_class" and value.strip() != str(n_class):
            raise PrecheckError(f"its objective's num_class:{value[:20]} is not the model's num_class ({n_class})")


def _check_lightgbm_tree(lines: list, t: int, n_features: int) -> None:
    if len(lines) > 22 or not all(_KEY_VALUE.fullmatch(x) for x in lines):
        raise PrecheckError(f"its tree {t} is not a block of at most 22 key=value lines")
    kv = dict(x.split("=", 1) for x in lines)
    n_leaves = _count(kv.get("num_leaves", ""), f"tree {t}'s num_leaves", 1, MAX_LEAVES)
    n_cat = _count(kv.get("num_cat", ""), f"tree {t}'s num_cat", 0, n_leaves - 1)

    def array(key, n, required=True):
        if key not in kv:
            if required:
                raise PrecheckError(f"its tree {t} lacks {key}")
            return None
        found = _tokens(kv[key])
        if found != n:
            raise PrecheckError(f"its tree {t}'s {key} has {found} values; num_leaves = {n_leaves} needs {n}")
        return kv[key]

    array("leaf_value", n_leaves)
    if kv.get("is_linear", "0") not in ("0", ""):
        _check_linear(kv, array, t, n_leaves, n_features)
    if n_leaves == 1:  # LightGBM writes the other arrays empty (a leaf's weight too)
        if any(kv.get(key) for key in _SPLIT_ARRAYS + _OPTIONAL_SPLIT) or \
                any(len(kv.get(key, "").split()) > 1 for key in _OPTIONAL_LEAF):
            raise PrecheckError(f"its tree {t} has one leaf but arrays of splits")
        return
    for key in _OPTIONAL_LEAF:
        array(key, n_leaves, required=False)
    for key in _OPTIONAL_SPLIT:
        array(key, n_leaves - 1, required=False)
    split = {key: array(key, n_leaves - 1) for key in _SPLIT_ARRAYS}
    left = _int_text(split["left_child"], f"tree {t}'s left_child")
    right = _int_text(split["right_child"], f"tree {t}'s right_child")
    # LightGBM's children: i >= 0 is split i, ~j (< 0) is leaf j; as one node list, leaves after the splits
    n_split = n_leaves - 1
    if np.any((left < -n_leaves) | (left >= n_split) | (right < -n_leaves) | (right >= n_split)):
        raise PrecheckError(f"its tree {t}'s nodes have a child index outside their tree")
    leaves = np.full(n_leaves, -1)
    _check_children(np.concatenate([np.where(left >= 0, left, n_split + ~left), leaves]),
                    np.concatenate([np.where(right >= 0, right, n_split + ~right), leaves]), f"tree {t}'s nodes")
    feature = _int_text(split["split_feature"], f"tree {t}'s split_feature")
    if np.any((feature < 0) | (feature >= n_features)):
        raise PrecheckError(f"its tree {t} splits on a feature outside max_feature_idx")
    decision = _int_text(split["decision_type"], f"tree {t}'s decision_type")
    if np.any((decision < 0) | (decision > 15) | (((decision >> 2) & 3) == 3)):
        raise PrecheckError(f"its tree {t} has a decision_type LightGBM does not write")
    categorical = (decision & 1) == 1
    if np.any(categorical) or n_cat:
        bounds = _int_text(array("cat_boundaries", n_cat + 1), f"tree {t}'s cat_boundaries")
        _int_text(array("cat_threshold", int(bounds[-1]) if bounds.size else 0), f"tree {t}'s cat_threshold")
        index = np.asarray([float(v) for v in _pieces(split["threshold"])])[categorical]
        if bounds[0] != 0 or np.any(np.diff(bounds) < 0) or np.any((index < 0) | (index >= n_cat) |
                                                                     (index != np.round(index))):
            raise PrecheckError(f"its tree {t}'s categorical splits point outside cat_boundaries")


def _pieces(text: str) -> list:
    """LightGBM's tokens of an array: the pieces between spaces, empty ones skipped (as its parser splits)."""
    return [x for x in text.split(" ") if x]


def _tokens(text: str) -> int:
    """How many tokens LightGBM's parser finds in ``text``."""
    if "  " not in text and not text.startswith(" ") and not text.endswith(" "):
        return text.count(" ") + 1 if text else 0
    return len(_pieces(text))


def _int_text(text: str, what: str) -> np.ndarray:
    """An array of whole numbers written as LightGBM writes it."""
    if not _INT_LIST.fullmatch(text):
        raise PrecheckError(f"its {what} are not whole numbers")
    if not text.strip():
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(text, dtype=np.int64, sep=" ")


_INT_LIST = re.compile(r" *(?:-?[0-9]{1,18}(?: +-?[0-9]{1,18})*)? *")


def _check_linear(kv: dict, array, t: int, n_leaves: int, n_features: int) -> None:
    array("leaf_const", n_leaves)
    counts = _int_text(array("num_features", n_leaves), f"tree {t}'s num_features")
    if np.any((counts < 0) | (counts > n_features)):
        raise PrecheckError(f"its tree {t}'s linear leaves use more features than the model has")
    features = _ints(kv.get("leaf_features", "").split(), f"tree {t}'s leaf_features", int(counts.sum()))
    _ints(np.zeros(len(kv.get("leaf_coeff", "").split())), f"tree {t}'s leaf_coeff", int(counts.sum()))
    if np.any((features < 0) | (features >= n_features)):
        raise PrecheckError(f"its tree {t}'s linear leaves use a feature outside max_feature_idx")
