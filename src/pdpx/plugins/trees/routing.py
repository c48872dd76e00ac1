"""The routing rule every kernel shares: where a row goes at a node, written once, and its block forms.

A tree model's routing travels as one argument, :class:`.prep.Routing` (the packed nodes,
the numeric thresholds as ``x < thr_lt`` with NaN's direction, the thresholds and category
sets of the special nodes, the comparison and the category direction), built once per
ensemble. A kernel unpacks the fields its loops read at its entry (reading tuple fields
inside a hot loop is slower) and routes with:

* :func:`numeric_left`, the branch-free test of a plain numeric split (vectorised over a
  block of rows);
* :func:`go_left_packed`, the rule of :mod:`pdpx.core.ir` on the packed node flags
  (categorical sets, NaN as zero, zero-as-missing), and :func:`goes_left`, the same on the
  routing tuple;
* their block forms: :func:`keep_block` and :func:`keep_special` (leaf words kept by the
  way each row goes), :func:`special_block` (the way each row goes at a special node), and
  the tables of numeric nodes the walks test (:func:`numeric_tables`, :func:`add_numeric`).

``tests/plugins/trees/test_routing.py`` checks every kernel's routing against the reference
interpreter (:meth:`pdpx.core.ir.TreeEnsemble.goes_left_many`).
"""

from __future__ import annotations

import numpy as np

from ...core.compiler import njit
from ...core.ir import NAN_AS_ZERO, ZERO_OR_NAN_MISSING

# bits of the packed node flags (see prep.pack_nodes)
F_MISSING_LEFT = 1
F_NAN_SHIFT = 1  # two bits: nan_mode
F_CATEGORICAL = 8
F_SPECIAL = 64  # a rule the vectorised numeric test does not express: categorical set, or zero-as-missing

#: rows per block: one column of a block is one vectorised compare per node
BLOCK = 64


@njit(cache=True, inline="always")
def numeric_left(x, thr_lt, nan_left):
    """Whether ``x`` goes left at a plain numeric split: the routing test of every row kernel, written once.

    ``x < thr_lt``, and NaN (which fails both comparisons) left when ``nan_left``
    (:class:`.prep.Static`'s ``thr_lt`` and ``miss_eff``). Branch-free, so that a loop of
    it over a block of rows vectorises; special splits take :func:`go_left_packed`.
    """
    return (x < thr_lt) | (nan_left & (not (x >= thr_lt)))


@njit(cache=True, inline="always")
def go_left_packed(x, node, flags, thr, cat_offset, cat_nwords, cat_words, le, float32_input, cats_left):
    """Where value ``x`` goes at ``node``: the routing rule of :mod:`pdpx.core.ir` on the packed node flags."""
    if float32_input:
        x = np.float64(np.float32(x))
    missing_left = (flags & F_MISSING_LEFT) != 0
    if flags & F_CATEGORICAL:
        if np.isnan(x):
            return missing_left
        if x < 0.0:
            inset = False
        else:
            c = np.int64(x)
            off = cat_offset[node]
            if c >= 32 * cat_nwords[node]:
                inset = False
            else:
                inset = ((cat_words[off + c // 32] >> np.uint32(c % 32)) & np.uint32(1)) == 1
        return inset if cats_left else not inset
    mode = (flags >> F_NAN_SHIFT) & 3
    if np.isnan(x):
        if mode == NAN_AS_ZERO:
            x = 0.0
        else:
            return missing_left
    elif mode == ZERO_OR_NAN_MISSING and abs(x) <= 1e-35:
        return missing_left
    if le:
        return x <= thr
    return x < thr


@njit(cache=True, inline="always")
def goes_left(x, node, routing):
    """Whether value ``x`` goes left at ``node`` of an ensemble's :class:`.prep.Routing`: the general routing
    rule (:func:`go_left_packed`) on the routing tuple, for values already rounded as the trees compare them.
    The row kernels take it at the nodes flagged special (categorical set, zero-as-missing) and the vectorised
    :func:`numeric_left` at the others."""
    return go_left_packed(x, node, routing.nodes[node, 3], routing.thr[node], routing.cat_offset,
                          routing.cat_nwords, routing.cat_words, routing.le, False, routing.cats_left)


@njit(cache=True, inline="always")
def keep_block(words, Xb, f, thr_lt, nan_left, keep_l, keep_r):
    """One plain numeric node over a block of rows (columns of ``Xb``, :func:`load_block`) as leaf words: each
    row's word keeps ``keep_l`` where the row goes left, ``keep_r`` where it goes right (vectorised)."""
    for r in range(BLOCK):
        x = Xb[f, r]
        go_left = numeric_left(x, thr_lt, nan_left)
        words[r] &= keep_l if go_left else keep_r


@njit(cache=True, inline="always")
def set_block(words, start, Xb, f, thr_lt, nan_left, keep_l, keep_r):
    """:func:`keep_block` into words that hold ``start`` (each row's word set, not read first)."""
    for r in range(BLOCK):
        x = Xb[f, r]
        words[r] = start & (keep_l if numeric_left(x, thr_lt, nan_left) else keep_r)


@njit(cache=True, inline="always")
def special_block(X, c0, nb, node, routing, go):
    """``go[r]`` = whether row ``c0 + r`` of X (``r < nb``) goes left at special ``node`` (the rule of
    :func:`goes_left`, the routing tuple read once, outside the loop over the rows)."""
    nodes, _, _, thr, cat_offset, cat_nwords, cat_words, le, cats_left = routing
    f = nodes[node, 2]
    flags = nodes[node, 3]
    th = thr[node]
    for r in range(nb):
        go[r] = go_left_packed(X[c0 + r, f], node, flags, th, cat_offset, cat_nwords, cat_words, le, False, cats_left)


@njit(cache=True, inline="always")
def keep_special(words, X, c0, nb, node, routing, keep_l, keep_r):
    """:func:`keep_block` at a special node, one row at a time (the rule of :func:`special_block`)."""
    nodes, _, _, thr, cat_offset, cat_nwords, cat_words, le, cats_left = routing
    f = nodes[node, 2]
    flags = nodes[node, 3]
    th = thr[node]
    for r in range(nb):
        left = go_left_packed(X[c0 + r, f], node, flags, th, cat_offset, cat_nwords, cat_words, le, False, cats_left)
        words[r] &= keep_l if left else keep_r


@njit(cache=True, inline="always")
def numeric_tables(n):
    """Room for ``n`` plain numeric nodes as the vectorised walks test them (:func:`numeric_left`): each one's
    feature, ``thr_lt`` and where NaN goes; filled by :func:`add_numeric`."""
    return np.empty(n, dtype=np.int64), np.empty(n, dtype=np.float64), np.empty(n, dtype=np.bool_)


@njit(cache=True, inline="always")
def add_numeric(i, node, feature, thr_lt, miss_eff, num_feat, num_thr, num_miss):
    """Entry ``i`` of :func:`numeric_tables`: the test of ``node``."""
    num_feat[i] = feature[node]
    num_thr[i] = thr_lt[node]
    num_miss[i] = miss_eff[node]
