"""R tree models exported to a data-only file (``pdpx::export_model()`` in R, ``.pdpx.json``), read without R.

The file is JSON: ``{"format": "pdpx-trees", "version": 1, "library": ..., "trees": {...}}``,
where ``trees`` holds the trees exactly as pdpx's R package hands them to Python (the fields
:mod:`pdpx.adapters.randomforest_trees`, :mod:`pdpx.adapters.ranger_trees` and
:mod:`pdpx.adapters.gbm_trees` read; numbers written with 17 significant digits, so each
reads back as the same double). Nothing in it is code, and nothing here evaluates it:
:func:`read_export` checks every field's type against :data:`FIELDS` (an unknown or
missing field, a string where numbers belong, ``NaN``, a duplicate key are refused), the
file's size against the memory budget, and builds the trees, whose structure
:class:`~pdpx.core.ir.TreeEnsemble` validates. The adapters predict from the trees
themselves (:func:`tree_predict`), so no R is needed, and they are safe to call from
threads.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..core.config import format_bytes, get_config
from ..core.errors import PdpxError
from ..core.ir import NAN_AS_ZERO, ZERO_OR_NAN_MISSING, TreeEnsemble
from .gbm import GbmAdapter
from .randomforest import RandomForestAdapter
from .randomforest_trees import read_forest
from .ranger import RangerAdapter

FORMAT = "pdpx-trees"
VERSION = 1
#: the file name's ending the command line reads as an export (``model.pdpx.json``)
SUFFIX = ".pdpx.json"
#: what an export's first bytes are (R's export_model writes the format first, with no spaces)
PREFIX = b'{"format":"pdpx-trees"'
#: per library, each field of ``trees``: its type, and whether it may be null
FIELDS = {
    "randomForest": {"ndbigtree": "ints", "nodestatus": "ints", "bestvar": "ints", "xbestsplit": "numbers",
                     "nodepred": "numbers", "leftDaughter": "ints", "rightDaughter": "ints", "ncat": "ints",
                     "xlevels": "levels", "feature_names": "strings", "classes": "strings?", "coefs": "numbers?"},
    "ranger": {"n_nodes": "ints", "split_var": "ints", "split_value": "numbers", "left": "ints", "right": "ints",
               "is_ordered": "bools", "treetype": "string", "class_values": "ints?", "response_levels": "strings?",
               "class_counts": "numbers?", "feature_names": "strings", "levels": "levels"},
    "gbm": {"n_nodes": "ints", "split_var": "ints", "split_code": "numbers", "left": "ints", "right": "ints",
            "missing": "ints", "weight": "numbers", "c_splits": "ints", "c_split_len": "ints", "var_type": "ints",
            "init_f": "numbers", "distribution": "string", "feature_names": "strings", "levels": "levels",
            "n_trees": "int", "n_trees_fitted": "int"},
}
#: fields whose numbers size arrays: at most what the libraries allow (randomForest: factors of 53 levels; gbm: 1024)
CAPS = {"ncat": 64, "var_type": 1024, "c_split_len": 1024}
#: Python's objects for a JSON file take about this many times its size (the check before reading it)
MEMORY_PER_BYTE = 8
#: (rows x trees) routed at once by :func:`tree_predict`
_CHUNK = 1 << 20


class ExportError(PdpxError):
    """A file that is not a pdpx export pdpx can read; the message says why."""


def looks_like_export(head: bytes) -> bool:
    """True when a file's first bytes are those of an export."""
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(PREFIX)


def read_export(path, *, budget: int | None = None):
    """The adapter of the model exported to ``path`` (see the module docstring); :class:`ExportError` if it is
    not a well-formed export. ``budget``: bytes reading it may take (default: the ``memory_budget`` setting)."""
    p = Path(path)
    budget = int(get_config()["memory_budget"] if budget is None else budget)
    size = p.stat().st_size
    if size * MEMORY_PER_BYTE > budget:
        raise ExportError(f"{p.name} is {format_bytes(size)}: reading it takes about "
                          f"{format_bytes(size * MEMORY_PER_BYTE)}, more than the memory budget "
                          f"({format_bytes(budget)}; the memory_budget setting: pdpx.set_config(memory_budget=...), "
                          "or --memory-budget on the command line)")
    with open(p, "rb") as fh:
        return export_adapter(parse_export(fh.read()))


def parse_export(data: bytes) -> dict:
    """The document of an export's bytes, every field checked (:data:`FIELDS`), numbers as arrays."""
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constant, object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError, or an integer of 4,300+ digits
        raise ExportError(f"it is not valid JSON ({exc})") from None
    except RecursionError:
        raise ExportError("it nests deeper than an export does") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ExportError(f"it is not a pdpx export (its format is not {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise ExportError(f"it is an export of version {doc.get('version')!r}; this pdpx reads version {VERSION}: "
                          "export the model again with this pdpx's R package")
    extra = sorted(set(doc) - {"format", "version", "library", "written_by", "trees"})
    library = doc.get("library")
    if extra or library not in FIELDS or not isinstance(doc.get("trees"), dict) or \
            not isinstance(doc.get("written_by", ""), str):
        raise ExportError(f"its header is not an export's (library {library!r}"
                          f"{', unknown fields ' + ', '.join(extra) if extra else ''})")
    return {"library": library, "trees": _fields(doc["trees"], FIELDS[library])}


def _no_constant(name):
    raise ExportError(f"it holds {name}, which no export holds")


def _no_duplicates(pairs):
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ExportError("a key appears twice in one of its objects")
    return out


def _fields(trees: dict, spec: dict) -> dict:
    """Each field of ``trees`` checked against ``spec`` and converted (numbers to float64 arrays)."""
    unknown = sorted(set(trees) - set(spec))
    if unknown:
        raise ExportError(f"its trees have fields no export has: {', '.join(unknown)}")
    out = {}
    for name, kind in spec.items():
        value = trees.get(name)
        if name not in trees or value is None:
            if not kind.endswith("?"):
                raise ExportError(f"its trees lack the field {name!r}")
            out[name] = None
            continue
        out[name] = _field(name, value, kind.rstrip("?"))
    return out


def _field(name: str, value, kind: str):
    bad = ExportError(f"its field {name!r} is not {_WORDS[kind]}")
    if kind in ("string", "int"):
        ok = isinstance(value, str) if kind == "string" else type(value) is int
        if not ok:
            raise bad
        return value
    if not isinstance(value, list):
        raise bad
    if kind == "strings":
        if not all(isinstance(v, str) for v in value):
            raise bad
        return value
    if kind == "levels":
        if not all(v is None or (isinstance(v, list) and all(isinstance(s, str) for s in v)) for v in value):
            raise bad
        return value
    if kind == "bools":
        if not all(type(v) is bool for v in value):
            raise bad
        return value
    if not all(type(v) is int or type(v) is float for v in value):
        raise bad
    arr = np.array(value, dtype=np.float64)
    if not np.all(np.isfinite(arr)) or (kind == "ints" and (np.any(arr != np.round(arr)) or
                                                            np.any(np.abs(arr) > CAPS.get(name, 2**31)))):
        raise bad if name not in CAPS else ExportError(f"its field {name!r} holds a number above {CAPS[name]}")
    return arr


_WORDS = {"string": "a string", "int": "a whole number", "strings": "a list of strings",
          "levels": "a list of factor levels (lists of strings, or null)", "bools": "a list of true / false",
          "numbers": "a list of finite numbers", "ints": "a list of whole numbers"}


def export_adapter(doc: dict):
    """The adapter of a parsed export (:func:`parse_export`), its trees read and validated."""
    library, t = doc["library"], doc["trees"]
    try:
        if library == "randomForest":
            forest = read_forest({k: t[k] for k in ("ndbigtree", "nodestatus", "bestvar", "xbestsplit", "nodepred",
                                                    "leftDaughter", "rightDaughter", "ncat", "xlevels")},
                                 feature_names=t["feature_names"], classes=t["classes"], coefs=t["coefs"])
            adapter = ExportedRandomForest(forest)
        elif library == "ranger":
            adapter = ExportedRanger(t)
        else:
            adapter = ExportedGbm(t)
        for response in adapter.responses():  # the trees are read now: a malformed file is refused here
            adapter.tree_model(response)
    except (PdpxError, ValueError, IndexError, KeyError, TypeError) as exc:
        raise ExportError(f"its {library} trees are not well formed: {exc}") from None
    return adapter


class _TreesPredict:
    """Predictions from the trees themselves (the exported model has no other predict); no R, so threads may call
    it."""

    thread_safe = True

    def predict(self, X, response):
        tm = self.tree_model(response)
        if tm is None:
            raise PdpxError(self.tree_model_unavailable(response))
        return tree_predict(tm.ensemble, tm.encode(X))

    def stored_categories(self) -> dict:
        """Each factor input's levels, in the model's order (the categories a CSV column is read with)."""
        names = self.feature_names()
        return {names[j]: list(lv) for j, lv in enumerate(self._levels()) if lv is not None}


class ExportedRandomForest(_TreesPredict, RandomForestAdapter):
    """A randomForest read from an export."""

    def _levels(self):
        return self.forest.xlevels

    def __repr__(self):
        return "<exported " + super().__repr__()[1:]


class ExportedRanger(_TreesPredict, RangerAdapter):
    """A ranger forest read from an export."""

    def _levels(self):
        return self.spec["levels"]

    def __repr__(self):
        return "<exported " + super().__repr__()[1:]


class ExportedGbm(_TreesPredict, GbmAdapter):
    """A gbm model read from an export: the first ``n_trees`` trees (those ``predict()`` used when exported)."""

    def __init__(self, spec):
        super().__init__(spec)
        self.n_trees, self.n_trees_fitted = spec.get("n_trees"), spec.get("n_trees_fitted")

    def _levels(self):
        return self.levels

    def __repr__(self):
        return "<exported " + super().__repr__()[1:]

    def tree_model(self, response):
        tm = super().tree_model(response)
        note = (f"gbm: the first {self.n_trees} of the model's {self.n_trees_fitted} trees, as predict() used them "
                "when the model was exported (export_model's n.trees)")
        if tm is not None and self.n_trees != self.n_trees_fitted and note not in tm.notes:
            tm.notes.append(note)
        return tm


def tree_predict(ens: TreeEnsemble, X: np.ndarray) -> np.ndarray:
    """The ensemble's response for each row of the encoded ``X`` (n_rows, n_outputs): every (row, tree) walked
    down at once, one level per step, by the routing rule of :mod:`pdpx.core.ir` (checked against
    :meth:`~pdpx.core.ir.TreeEnsemble.predict` in the tests)."""
    X = np.asarray(X, dtype=np.float64)
    if ens.float32_input:
        X = X.astype(np.float32).astype(np.float64)
    n, trees = X.shape[0], ens.n_trees
    step = max(1, _CHUNK // max(trees, 1))
    margins = np.empty((n, ens.n_margins))
    for lo in range(0, n, step):
        margins[lo:lo + step] = _margins(ens, X[lo:lo + step])
    return ens.apply_link(margins)


def _margins(ens: TreeEnsemble, X: np.ndarray) -> np.ndarray:
    n, trees = X.shape[0], ens.n_trees
    node = np.tile(ens.tree_start[:-1], n)  # (row, tree) pairs, row-major
    row = np.repeat(np.arange(n), trees)
    active = np.flatnonzero(ens.left[node] >= 0)
    while active.size:
        nd = node[active]
        left = _goes_left(ens, nd, X[row[active], ens.feature[nd]])
        node[active] = np.where(left, ens.left[nd], ens.right[nd])
        active = active[ens.left[node[active]] >= 0]
    leaves = node.reshape(n, trees)
    weight = ens.effective_tree_weight()
    out = np.tile(ens.base_score, (n, 1))
    vector = ens.tree_group < 0
    if np.any(vector):
        out += np.einsum("t,ntk->nk", weight[vector], ens.value[leaves[:, vector], : ens.n_margins])
    for g in np.unique(ens.tree_group[~vector]):
        sel = ens.tree_group == g
        out[:, g] += ens.value[leaves[:, sel], 0] @ weight[sel]
    return out


def _goes_left(ens: TreeEnsemble, nodes: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Where value ``x[i]`` goes at internal node ``nodes[i]``: True = left (pairwise, not every pair)."""
    out = np.empty(len(nodes), dtype=bool)
    nan = np.isnan(x)
    cat = ens.cat_offset[nodes] >= 0
    num = ~cat
    if np.any(num):
        nd, xx = nodes[num], x[num]
        mode = ens.nan_mode[nd]
        xx = np.where(nan[num] & (mode == NAN_AS_ZERO), 0.0, xx)
        missing = np.isnan(xx) | ((mode == ZERO_OR_NAN_MISSING) & (np.abs(xx) <= 1e-35))
        with np.errstate(invalid="ignore"):
            left = (xx <= ens.threshold[nd]) if ens.comparison == "<=" else (xx < ens.threshold[nd])
        out[num] = np.where(missing, ens.missing_left[nd], left)
    if np.any(cat):
        nd, xx = nodes[cat], x[cat]
        words = ens.cat_nwords[nd]
        outside = nan[cat] | (xx < 0) | (xx >= 32 * words)
        code = np.where(outside, 0, np.nan_to_num(xx, nan=0.0)).astype(np.int64)
        bit = ((ens.cat_words[ens.cat_offset[nd] + code // 32] >> (code % 32).astype(np.uint32)) & 1).astype(bool)
        inside = bit & ~outside
        left = inside if ens.categories_go_left else ~inside
        out[cat] = np.where(nan[cat], ens.missing_left[nd], left)
    return out

