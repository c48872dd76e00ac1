"""Trees fitted on transformed columns, rewritten as trees on the user's own columns.

A model behind column-wise preprocessing splits on transformed columns (a scaled
number, one indicator of a one-hot encoding, a target-encoded mean). When every
transformed column is computed from one input column, each split is a rule on
that input column's original value:

* for a monotone map of numbers, a threshold: the largest original value that
  goes left (found by bisection over all float64 values, evaluating the fitted
  preprocessing itself, so the float rounding of scalers and the float32 cast of
  some models are reproduced, not inverted);
* for an encoder, the set of categories that go left (each category, missing
  values and "unseen" evaluated once through the preprocessing).
* for a column the preprocessing turns into several (``kind="values"``: a spline
  basis, one-hot bins, sin and cos), the set of its values that go left, as codes
  of the classes of values every split routes alike
  (:mod:`pdpx.adapters.column_values`).

The rewritten ensemble reads the original columns directly: numbers as float64,
categories as positions in a table; background rows are never transformed. This
module is library-free: :mod:`pdpx.adapters.sklearn_pipeline` supplies the column
plan and the evaluation of the fitted steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from ..core.ir import NAN_AS_ZERO, NAN_MISSING, ZERO_OR_NAN_MISSING, TreeEnsemble, TreeModel

_SIGN = np.int64(-0x8000000000000000)
_MAG = np.int64(0x7FFFFFFFFFFFFFFF)


@dataclass
class Column:
    """How one original column reaches the model.

    kind : ``"numeric"`` (monotone maps), ``"categorical"`` (a table of values), ``"values"`` (a numeric column
        made into several: ``value_set`` gives its codes, ``table`` one value per code) or ``"dropped"``.
    outputs : the model input columns computed from it.
    direction : per output, +1 (non-decreasing map) or -1 (non-increasing); numeric columns only.
    table : categorical columns: the values, each a code (its position); missing values and
        unseen values have their own codes (``nan_code``, ``unseen_code``; -1 when they cannot occur).
    """

    name: str
    kind: str
    outputs: list = field(default_factory=list)
    direction: list = field(default_factory=list)
    table: list = field(default_factory=list)
    nan_code: int = -1
    unseen_code: int = -1
    nan_invalid: bool = False
    unseen_invalid: bool = False
    none_code: int = -1  # None's own code, where the steps treat None and NaN differently (else None is missing)
    none_invalid: bool = False
    reps: list | None = None  # values evaluated per code, when a code's own value is refused
    value_set: object = None  # kind "values": its pdpx.adapters.column_values.ValueSet
    dates: object = None  # kind "values" of a datetime64 column: its dtype (its dates read as pdpx.core.dates counts)

    def codes(self, values) -> np.ndarray:
        """Positions in ``table`` of ``values`` (float64; unseen values get ``unseen_code``)."""
        if self.value_set is not None:
            return self.value_set.codes(values)
        known, positions = self._known()
        if isinstance(values, pd.Series):  # a column of X: looked up as it is (no object copy of every value)
            missing = values.isna().to_numpy()
            idx = known.get_indexer(values)
        else:
            vals = pd.Series(np.asarray(values, dtype=object))
            missing = vals.isna().to_numpy()
            idx = known.get_indexer(vals.where(~missing, None).to_numpy(dtype=object))
        idx[missing] = -1  # a missing value is never a known one (its code is nan_code)
        out = np.where(idx >= 0, positions[np.maximum(idx, 0)] if len(positions) else 0, self.unseen_code)
        out = np.where(missing, self.nan_code, out).astype(np.float64)
        if self.none_code >= 0:
            arr = values.to_numpy(dtype=object) if isinstance(values, pd.Series) else np.asarray(values, dtype=object)
            out[np.fromiter((v is None for v in arr.reshape(-1)), dtype=bool, count=arr.size)] = self.none_code
        return out

    def _known(self) -> tuple:
        """(the table's values that are not missing, as an object Index; their positions in ``table``), built once."""
        cached = vars(self).get("_known_index")
        if cached is None or cached[0] is not self.table or cached[1] != len(self.table):
            keep = [i for i, v in enumerate(self.table) if not _isnan(v)]
            cached = (self.table, len(self.table), pd.Index([self.table[i] for i in keep], dtype=object),
                      np.array(keep, dtype=np.int64))
            self._known_index = cached
        return cached[2], cached[3]


def _isnan(v) -> bool:
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def float_key(x: np.ndarray) -> np.ndarray:
    """An int64 key ordered like the float64 values (-0.0 and 0.0 share key 0)."""
    i = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    return np.where(i < 0, -(i & _MAG), i)


def key_float(k: np.ndarray) -> np.ndarray:
    """The float64 value of an int64 key of :func:`float_key`."""
    k = np.asarray(k, dtype=np.int64)
    bits = np.where(k >= 0, k, (-k) | _SIGN)
    return bits.view(np.float64)


def route_pairs(ens: TreeEnsemble, nodes: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Whether value ``x[i]`` goes left at numeric node ``nodes[i]`` (the IR's routing rule, pairwise)."""
    x = np.asarray(x, dtype=np.float64)
    if ens.float32_input:
        with np.errstate(over="ignore"):
            x = x.astype(np.float32).astype(np.float64)
    mode = ens.nan_mode[nodes]
    xx = np.where(np.isnan(x) & (mode == NAN_AS_ZERO), 0.0, x)
    missing = np.isnan(xx)
    thr = ens.threshold[nodes]
    with np.errstate(invalid="ignore"):
        left = (xx <= thr) if ens.comparison == "<=" else (xx < thr)
    return np.where(missing, ens.missing_left[nodes], left)


Evaluate = Callable[[dict], dict]
"""``evaluate({column: values}) -> {column: matrix}``: the model input columns computed from each
original column (rows follow ``values``; columns follow ``Column.outputs``), after the model's encoder."""


class NotFollowable(Exception):
    """A column whose preprocessing gives no number (NaN) for some number: its splits are not thresholds."""


_EXTREMES = float_key(np.array([-np.finfo(np.float64).max, np.finfo(np.float64).max]))
_STARTS = float_key(np.array([0.0, 1.0, -1.0]))  # where an accepted interval is looked for from


def _accepts(evaluate: Evaluate, j: int, key) -> bool:
    try:
        evaluate({j: key_float(np.array([key]))})
    except Exception:  # noqa: BLE001 - the steps refuse the number (an overflow their own checks catch)
        return False
    return True


def accepted_range(evaluate: Evaluate, j: int) -> tuple[int, int]:
    """The keys of the smallest and largest numbers column ``j``'s steps accept: every float, or for steps that
    refuse numbers far out (a standardized Yeo-Johnson overflows to infinity and its scaler then refuses it) or on
    one side (Box-Cox takes positive numbers), the interval around 0, 1 or -1 they accept, found by bisection on
    the keys. A split is then read within it: beyond it the model itself refuses the value."""
    if _accepts(evaluate, j, _EXTREMES[0]) and _accepts(evaluate, j, _EXTREMES[1]):
        return int(_EXTREMES[0]), int(_EXTREMES[1])
    start = next((int(k) for k in _STARTS if _accepts(evaluate, j, k)), None)
    if start is None:  # nothing near 0 or 1 is accepted: let the first evaluation say what the steps refuse
        return int(_EXTREMES[0]), int(_EXTREMES[1])
    out = []
    for far in _EXTREMES:
        good, bad = start, int(far)
        if _accepts(evaluate, j, bad):
            out.append(bad)
            continue
        while abs(bad - good) > 1:
            mid = good // 2 + bad // 2 + ((good % 2 + bad % 2) // 2)
            good, bad = (mid, bad) if _accepts(evaluate, j, mid) else (good, mid)
        out.append(good)
    return out[0], out[1]


def _bisect(ens, nodes, outs, columns, direction, evaluate, n_in) -> tuple[np.ndarray, np.ndarray]:
    """Per node (numeric, on a monotone output), the threshold on the original value and whether to swap sides.

    Non-decreasing map: the values going left are a down-set, ``x <= t`` with ``t`` the largest
    value going left. Non-increasing: an up-set; its complement ``x <= t`` goes to the node's
    right child, so the children are swapped.
    """
    col_of = np.array([columns[o] for o in outs], dtype=np.int64)
    pos_of = np.array([0] * len(outs), dtype=np.int64)
    groups = {j: np.flatnonzero(col_of == j) for j in np.unique(col_of)}
    lo = np.zeros(len(nodes), dtype=np.int64)
    hi = np.zeros(len(nodes), dtype=np.int64)
    for j, idx in groups.items():
        lo[idx], hi[idx] = accepted_range(evaluate, int(j))

    def goes(keys):
        values = key_float(keys)
        ask = {int(j): values[idx] for j, idx in groups.items()}
        got = evaluate(ask)
        z = np.empty(len(nodes))
        for j, idx in groups.items():
            mat = got[int(j)]
            z[idx] = mat[np.arange(len(idx)), pos_of[idx]]
        if np.any(np.isnan(z)):  # a "monotone" map undefined somewhere (sqrt, log): not a threshold
            raise NotFollowable(int(col_of[np.flatnonzero(np.isnan(z))[0]]))
        return route_pairs(ens, nodes, z)

    for j, idx in groups.items():
        outs_j = n_in[int(j)]
        pos_of[idx] = [outs_j.index(o) for o in np.asarray(outs)[idx]]
    up = direction > 0
    at_lo, at_hi = goes(lo), goes(hi)
    # the side that holds the smallest values: left for non-decreasing maps, right for non-increasing
    low_side_lo = np.where(up, at_lo, ~at_lo)
    low_side_hi = np.where(up, at_hi, ~at_hi)
    thr = np.full(len(nodes), np.nan)
    thr[~low_side_lo] = -np.inf
    thr[low_side_hi & low_side_lo] = np.inf
    todo = low_side_lo & ~low_side_hi
    while np.any(todo):
        mid = np.where(todo, lo // 2 + hi // 2 + ((lo % 2 + hi % 2) // 2), lo)
        g = goes(mid)
        low = np.where(up, g, ~g)
        lo = np.where(todo & low, mid, lo)
        hi = np.where(todo & ~low, mid, hi)
        todo = todo & (hi > lo + 1)
    rest = np.isnan(thr)
    thr[rest] = key_float(lo[rest])
    return thr, ~up


def rewrite(tm: TreeModel, columns_of_output: list, plan: list, evaluate: Evaluate, notes=()) -> TreeModel | str:
    """``tm`` (a model on transformed columns) as a TreeModel on the original columns of ``plan``.

    ``columns_of_output[c]``: the original column model input ``c`` is computed from.
    Returns a sentence instead when a split cannot be expressed on its original column.
    """
    ens = tm.ensemble
    n = ens.n_nodes
    internal = np.flatnonzero(ens.left >= 0)
    feat = ens.feature[internal]
    cols = np.array([columns_of_output[c] for c in feat], dtype=np.int64)
    kinds = np.array([plan[j].kind for j in cols], dtype=object)
    cat_inner = ens.cat_offset[internal] >= 0
    numeric = kinds == "numeric"
    if np.any(numeric & cat_inner):
        j = int(cols[np.flatnonzero(numeric & cat_inner)[0]])
        return f"the model makes categorical splits on column {plan[j].name!r}, which reaches it as numbers"
    if np.any(numeric & (ens.nan_mode[internal] == ZERO_OR_NAN_MISSING)):
        j = int(cols[np.flatnonzero(numeric & (ens.nan_mode[internal] == ZERO_OR_NAN_MISSING))[0]])
        return f"the model treats zero as missing on transformed column {plan[j].name!r}"
    outs_of = [p.outputs for p in plan]

    left, right = ens.left.copy(), ens.right.copy()
    feature = ens.feature.copy()
    threshold = np.zeros(n)
    missing_left = ens.missing_left.copy()
    cat_offset = np.full(n, -1, dtype=np.int64)
    cat_nwords = np.zeros(n, dtype=np.int64)
    words = []
    feature[internal] = cols

    # numeric: thresholds by bisection, once per (output column, threshold, rule)
    num_nodes = internal[numeric]
    if num_nodes.size:
        out_c = ens.feature[num_nodes]
        direction = np.array([plan[columns_of_output[c]].direction[outs_of[columns_of_output[c]].index(c)]
                              for c in out_c], dtype=np.int64)
        key = np.stack([out_c, ens.threshold[num_nodes].view(np.int64), ens.nan_mode[num_nodes].astype(np.int64),
                        ens.missing_left[num_nodes].astype(np.int64)], axis=1)
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        rep = num_nodes[first]
        try:
            thr_u, swap_u = _bisect(ens, rep, out_c[first], columns_of_output, direction[first], evaluate, outs_of)
        except NotFollowable as exc:
            return (f"the preprocessing of column {plan[exc.args[0]].name!r} gives NaN for some numbers, so a split "
                    "on it is not a threshold on the original value")
        except Exception as exc:  # noqa: BLE001 - the steps refuse some number (e.g. an overflow to inf)
            return (f"the preprocessing or model refuses some values of the numeric columns "
                    f"({type(exc).__name__}: {exc}); exact needs a map defined for every number")
        thr, swap = thr_u[inverse], swap_u[inverse]
        threshold[num_nodes] = thr
        left[num_nodes] = np.where(swap, ens.right[num_nodes], ens.left[num_nodes])
        right[num_nodes] = np.where(swap, ens.left[num_nodes], ens.right[num_nodes])
        # missing values: where the preprocessing sends NaN
        nan_cols = sorted({int(columns_of_output[c]) for c in out_c if not plan[columns_of_output[c]].nan_invalid})
        got = evaluate({j: np.array([np.nan]) for j in nan_cols}) if nan_cols else {}
        z = np.array([got[columns_of_output[c]][0, outs_of[columns_of_output[c]].index(c)]
                      if columns_of_output[c] in got else np.nan for c in out_c])
        went = route_pairs(ens, num_nodes, z)
        missing_left[num_nodes] = np.where(swap, ~went, went)

    # categorical: the set of table codes that go left
    cat_nodes = internal[kinds == "categorical"]
    n_words = 0
    if cat_nodes.size:
        cat_cols = sorted({int(columns_of_output[c]) for c in ens.feature[cat_nodes]})
        got = evaluate({j: _representatives(plan[j]) for j in cat_cols})
        for c in np.unique(ens.feature[cat_nodes]):
            j = int(columns_of_output[c])
            nd = cat_nodes[ens.feature[cat_nodes] == c]
            z = got[j][:, outs_of[j].index(int(c))]
            goes = ens.goes_left_many(nd, z)  # (nodes, codes)
            size = len(plan[j].table)
            nw = (size + 31) // 32
            bits = np.zeros((len(nd), nw * 32), dtype=bool)
            bits[:, :size] = goes
            words.append(pack(bits))
            cat_offset[nd] = n_words + np.arange(len(nd)) * nw
            cat_nwords[nd] = nw
            n_words += len(nd) * nw
            missing_left[nd] = False  # codes are never missing
    # sets of values (columns made into several): left as placeholders, completed by column_values.value_splits
    missing_left[internal[kinds == "values"]] = False
    cat_words = np.concatenate(words) if words else np.zeros(0, np.uint32)
    new = replace(
        ens, left=left, right=right, feature=feature, threshold=threshold, missing_left=missing_left,
        nan_mode=np.full(n, NAN_MISSING, dtype=np.int8), cat_offset=cat_offset, cat_nwords=cat_nwords,
        cat_words=cat_words, n_features=len(plan), comparison="<=", float32_input=False, categories_go_left=True,
    )
    new.validate()
    encode, encode_values = encoders(plan)
    sets = {j: t for j, t in ((j, number_table(p)) for j, p in enumerate(plan)) if t is not None}
    return TreeModel(ensemble=new, encode=encode, encode_values=encode_values,
                     notes=list(tm.notes) + list(notes), recursion_weights=tm.recursion_weights, value_sets=sets)


def number_table(col: Column):
    """A categorical column whose categories are numbers (an hour one-hot or target encoded): (its categories,
    increasing, as float64; their codes), the points of ``grid="thresholds"``; None for any other column."""
    if col.kind != "categorical":
        return None
    special = {col.unseen_code, col.nan_code, col.none_code}
    known = [(v, i) for i, v in enumerate(col.table) if i not in special]
    if not known or not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                            and not _isnan(v) for v, _ in known):
        return None
    known.sort()
    return np.array([float(v) for v, _ in known]), np.array([i for _, i in known], dtype=np.int64)


def pack(bits: np.ndarray) -> np.ndarray:
    """Rows of set membership (bool, a multiple of 32 wide) as the IR's uint32 words, one row after the other."""
    n, width = bits.shape
    packed = (bits.reshape(n, width // 32, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=2)
    return packed.astype(np.uint32).reshape(-1)


def _representatives(col: Column) -> np.ndarray:
    """One value per code of a categorical column (unseen: a value the encoder never saw)."""
    return np.array(col.reps if col.reps is not None else col.table, dtype=object)


def encoders(plan: list):
    """(``encode``, ``encode_values``) of a TreeModel on the original columns of ``plan``."""
    numeric = [j for j, p in enumerate(plan) if p.kind == "numeric"]
    categorical = [j for j, p in enumerate(plan) if p.kind in ("categorical", "values")]

    def encode(X):
        out = np.zeros((len(X), len(plan)))
        for j in numeric:
            out[:, j] = X.iloc[:, j].to_numpy(dtype=np.float64, na_value=np.nan)
        for j in categorical:
            out[:, j] = plan[j].codes(X.iloc[:, j])
        check_valid(plan, out, X)
        return out

    def encode_values(j, values):
        if plan[j].kind in ("categorical", "values"):
            return plan[j].codes(values)
        if plan[j].kind == "numeric":
            return np.asarray(values, dtype=np.float64)
        return np.zeros(len(values))

    return encode, encode_values


def check_valid(plan: list, encoded: np.ndarray, X) -> None:
    """Refuse, like the preprocessing itself would, values it does not accept (missing, unseen)."""
    for j, p in enumerate(plan):
        bad = np.zeros(len(encoded), dtype=bool)
        if p.kind == "numeric" and p.nan_invalid:
            bad |= np.isnan(encoded[:, j])
        if p.kind == "values":
            bad |= encoded[:, j] < 0  # a missing value the steps refuse
        if p.kind == "categorical":
            if p.nan_invalid and p.nan_code >= 0:
                bad |= encoded[:, j] == p.nan_code
            if p.none_invalid and p.none_code >= 0:
                bad |= encoded[:, j] == p.none_code
            if p.unseen_invalid and p.unseen_code >= 0:
                bad |= encoded[:, j] == p.unseen_code
            bad |= encoded[:, j] < 0
        if bad.any():
            what = X.iloc[:, j].to_numpy()[bad][:3].tolist()
            raise PdpxError(
                f"column {p.name!r} holds value(s) {what} that the pipeline's preprocessing refuses "
                "(missing, or a category not seen at fit time); brute would fail on them too"
            )
