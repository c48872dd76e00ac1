"""Every kernel's routing, checked once against the reference interpreter (``TreeEnsemble.goes_left_many``).

The kernels share one routing rule (:mod:`pdpx.plugins.trees.routing`: the vectorised numeric test and the
general rule for special nodes), each applying it in its own loop. Here one parametrised test runs every kernel
on ensembles of one-split trees (stumps) on column ``f0``, one ensemble per rule (``<=`` or ``<``, NaN to either
side, NaN read as zero, zero-or-NaN missing, category sets going left or right), over values where routing is
delicate (thresholds and one ulp either side, signed zeros and values that read as zero, NaN, infinities, category
codes outside the set or the words). Stump ``k`` adds ``0`` on its left and ``2**k * UNIT`` on its right, so a
row's prediction spells where it went at every stump, and a kernel's output is decoded into routes:

* the row kernels of ``exact`` (``leafsets``, ``partition``, ``oblivious``): each row's ICE value;
* the ``products`` of an oblivious logistic average: each row's response, one row weighted at a time;
* the counts' gathers (``patterns``, ``leafsets``, ``partition``): the rows reaching each left leaf, weighted
  ``2**i`` (row ``i``);
* the averaged curves (``means``): the response the kernel sums for every row;
* where the grid values go (``grid masks``: an unsorted grid, ``grid intervals``: a sorted numeric one): the
  partial dependence at each grid value.

Each case also checks that the kernel it names ran (a spy on its compiled function).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from treetools import IRAdapter

import pdpx
from pdpx.core.ir import NAN_AS_ZERO, NAN_MISSING, ZERO_OR_NAN_MISSING, TreeEnsemble
from pdpx.plugins.trees import counts as _counts
from pdpx.plugins.trees import counts_kernels as _counts_kernels
from pdpx.plugins.trees import counts_patterns as _counts_patterns
from pdpx.plugins.trees import curve_means as _curve_means
from pdpx.plugins.trees import kernels as _kernels
from pdpx.plugins.trees import leafsets as _leafsets
from pdpx.plugins.trees import oblivious as _oblivious
from pdpx.plugins.trees import partition as _partition
from pdpx.plugins.trees import products as _products

#: a stump's right leaf adds 2**k * UNIT: small enough that a logistic response can be inverted exactly enough
UNIT = 0.01
THRESHOLDS = [-0.5, 0.0, 1e-36, 0.5, 1.0]
CATEGORY_WORDS = [np.array([0b101010], dtype=np.uint32), np.array([0b1, 0b10], dtype=np.uint32)]


def stumps(rule: str, link: str = "identity") -> TreeEnsemble:
    """One stump on ``f0`` per threshold (or category set) under ``rule``, and a last stump on ``f1`` adding 0
    on both sides (so that a partial dependence on ``f1`` has a tree to read)."""
    cat = rule.startswith("category")
    k = len(CATEGORY_WORDS) if cat else len(THRESHOLDS)
    n = 3 * (k + 1)
    idx = np.arange(k + 1)
    left, right = np.full(n, -1), np.full(n, -1)
    left[3 * idx], right[3 * idx] = 3 * idx + 1, 3 * idx + 2
    feature = np.full(n, -1)
    feature[3 * idx] = [0] * k + [1]
    threshold = np.zeros(n)
    threshold[3 * idx[:k]] = 0.0 if cat else THRESHOLDS
    missing_left = np.zeros(n, dtype=bool)
    missing_left[3 * idx] = idx % 2 == 0 if rule != "numeric, NaN right" else False
    nan_mode = np.full(n, NAN_MISSING, dtype=np.int8)
    nan_mode[3 * idx[:k]] = {"NaN as zero": NAN_AS_ZERO, "zero or NaN missing": ZERO_OR_NAN_MISSING}.get(
        rule, NAN_MISSING)
    value = np.zeros(n)
    value[3 * idx[:k] + 2] = UNIT * 2.0 ** idx[:k]
    kw = {}
    if cat:
        cat_offset, cat_nwords = np.full(n, -1), np.zeros(n, dtype=np.int64)
        cat_offset[3 * idx[:k]] = np.cumsum([0] + [len(w) for w in CATEGORY_WORDS[:-1]])
        cat_nwords[3 * idx[:k]] = [len(w) for w in CATEGORY_WORDS]
        kw = dict(cat_offset=cat_offset, cat_nwords=cat_nwords, cat_words=np.concatenate(CATEGORY_WORDS),
                  categories_go_left=rule == "category set, left")
    return TreeEnsemble(left=left, right=right, feature=feature, threshold=threshold, missing_left=missing_left,
                        nan_mode=nan_mode, value=value, tree_start=np.arange(0, n + 1, 3),
                        tree_group=np.zeros(k + 1, dtype=np.int64), n_features=2,
                        comparison="<" if rule == "numeric <" else "<=", link=link, **kw)


def values(rule: str) -> np.ndarray:
    """Column ``f0``'s delicate values under ``rule``."""
    if rule.startswith("category"):
        return np.array([0.0, 1.0, 2.0, 3.0, 5.0, 2.5, 31.0, 32.0, 33.0, 40.0, 64.0, -1.0, -0.5, np.nan])
    t = np.array(THRESHOLDS)
    near = np.concatenate([t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)])
    return np.concatenate([near, [-0.0, 1e-35, -1e-35, 1e-34, np.nan, np.inf, -np.inf, 7.0, -3.0]])


def frame(x: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"f0": x, "f1": np.linspace(-1.0, 1.0, len(x))})


def expected(ens: TreeEnsemble, x: np.ndarray) -> np.ndarray:
    """(stumps on f0, len(x)): the reference interpreter's routes."""
    roots = ens.tree_start[:-1][ens.feature[ens.tree_start[:-1]] == 0]
    return ens.goes_left_many(roots, x)


def decode(sums: np.ndarray, n_stumps: int) -> np.ndarray:
    """(n_stumps, len(sums)): True where a value's sum of right leaves does not hold stump k's bit (went left)."""
    bits = np.rint(np.asarray(sums, dtype=np.float64) / UNIT).astype(np.int64)
    return ((bits[None, :] >> np.arange(n_stumps)[:, None]) & 1) == 0


def spy(monkeypatch, module, name, seen: list, keep=None):
    """Record in ``seen`` each call of ``module.name`` (``keep(args)``, or True)."""
    real = getattr(module, name)

    def wrapped(*a, **k):
        out = real(*a, **k)
        seen.append(keep(a) if keep else True)
        return out

    monkeypatch.setattr(module, name, wrapped)


def rows_kernel(kernel, module, name):
    def run(ens, x, monkeypatch):
        seen = []
        spy(monkeypatch, module, name, seen)
        r = pdpx.partial_dependence(IRAdapter(ens), frame(x), "f1", kind="individual", method="exact",
                                    custom_values={"f1": [0.0]}, method_options={"kernel": kernel})
        assert seen, f"{name} did not run"
        return np.asarray(r.individual, dtype=np.float64).reshape(len(x), -1)[:, 0], x
    return run


def products(ens, x, monkeypatch):
    seen = []
    spy(monkeypatch, _products, "bytes_walk", seen, keep=lambda a: a[18])  # its ``products`` flag
    out = []
    for i in range(len(x)):
        w = np.zeros(len(x))
        w[i] = 1.0
        r = pdpx.partial_dependence(IRAdapter(ens), frame(x), "f1", method="exact", custom_values={"f1": [0.0]},
                                    sample_weight=w)
        p = float(np.asarray(r.average, dtype=np.float64).reshape(-1)[0])
        out.append(np.log(p / (1.0 - p)))
    assert seen and all(seen), "the products of bytes_walk did not run"
    return np.array(out), x


def gather(kernel, module, name):
    def run(ens, x, monkeypatch):
        seen = []
        spy(monkeypatch, module, name, seen)
        w = 2.0 ** np.arange(len(x))
        c = _counts.gather(IRAdapter(ens).tree_model("predict"), frame(x), w, order=1, kernel=kernel, n_jobs=1)
        assert seen, f"{name} did not run"
        base = _counts.count_layout(ens, 1).slot_base
        lefts = ens.left[ens.tree_start[:-1]][ens.feature[ens.tree_start[:-1]] == 0]
        reached = np.rint(c.counts[base[lefts]]).astype(np.int64)  # sum of 2**i over the rows reaching the leaf
        went = (reached[:, None] >> np.arange(len(x))[None, :]) & 1
        # as sums of right leaves, so that decode() reads them as the other kernels' outputs
        return UNIT * ((1 - went) * (2 ** np.arange(len(lefts)))[:, None]).sum(axis=0), x
    return run


def means(ens, x, monkeypatch):
    seen = []
    spy(monkeypatch, _curve_means, "means_walk", seen, keep=lambda a: (a[0], a[-2]))  # rows and F, as it saw them
    pdpx.h_statistic(IRAdapter(ens), frame(x), features=["f0", "f1"])
    assert seen, "means_walk did not run"
    Xc, F = seen[-1]
    assert len(Xc) == len(x)
    return F[0], Xc[:, 0]  # the response the kernel summed for each row, and the row's f0 as it read it


def grid(sort: bool):
    def run(ens, x, monkeypatch):
        seen = []
        spy(monkeypatch, _kernels, "grid_left", seen)
        g = np.unique(x[np.isfinite(x)])
        g = g if sort else g[::-1]  # descending: not a sorted grid
        r = pdpx.partial_dependence(IRAdapter(ens), frame(x), "f0", method="exact", custom_values={"f0": list(g)},
                                    include_missing=False)
        assert bool(seen) != sort, "grid_left ran for a sorted grid" if sort else "grid_left did not run"
        return np.asarray(r.average, dtype=np.float64).reshape(-1), g
    return run


KERNELS = {
    "exact leafsets": rows_kernel("leafsets", _leafsets, "leafset_walk"),
    "exact partition": rows_kernel("partition", _partition, "partition_walk"),
    "exact oblivious": rows_kernel("oblivious", _oblivious, "oblivious_walk"),
    "exact products": products,
    "counts patterns": gather("patterns", _counts_patterns, "gather_patterns"),
    "counts leafsets": gather("leafsets", _counts_kernels, "gather_leafsets"),
    "counts partition": gather("partition", _counts_kernels, "gather_partition"),
    "means": means,
    "grid masks": grid(False),
    "grid intervals": grid(True),
}
RULES = ["numeric <=", "numeric <", "numeric, NaN right", "NaN as zero", "zero or NaN missing",
         "category set, left", "category set, right"]
#: special splits (category sets, zero-or-NaN missing) take grid masks, never intervals (``prep.uses_intervals``)
SPECIAL = ("zero or NaN missing", "category set, left", "category set, right")
CASES = [(k, r) for k in KERNELS for r in RULES if not (k == "grid intervals" and r in SPECIAL)]


@pytest.mark.parametrize("kernel, rule", CASES)
def test_every_kernel_routes_as_the_reference(monkeypatch, kernel, rule):
    ens = stumps(rule, link="logistic" if kernel == "exact products" else "identity")
    got, where = KERNELS[kernel](ens, values(rule), monkeypatch)
    want = expected(ens, where)
    np.testing.assert_array_equal(decode(got, want.shape[0]), want, err_msg=f"{kernel}, {rule}")
