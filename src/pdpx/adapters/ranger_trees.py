"""Reading R ranger forests, given as plain data, into the common tree representation.

Nothing here imports R. The R package (``r/pdpx/R/ranger.R``) flattens
``model$forest`` into vectors, trees one after another:

* ``n_nodes`` (nodes per tree); per node ``split_var`` (0-based position in
  ``independent.variable.names``), ``split_value``, ``left`` and ``right`` (the
  tree-local 0-based ``child.nodeIDs``; both 0 at a leaf);
* ``is_ordered`` per input (FALSE: an unordered factor split by partitions,
  ``respect.unordered.factors = "partition"`` and extratrees' default);
* ``treetype``: "Regression", "Classification", "Probability estimation" or "Survival";
  ``class_values`` (codes into ``response_levels``) and, for probability forests,
  ``class_counts``: each leaf's class fractions (``terminal.class.counts``, in
  ``class_values`` order), leaves in node order, ``len(class_values)`` values each;
* for survival forests, ``death_times`` (``unique.death.times``) and ``chf``: each leaf's cumulative hazard
  at every death time (``forest$chf``, whose internal nodes hold empty vectors), leaves in node order,
  ``len(death_times)`` values each.

Facts checked against ranger 0.14's ``predict`` (the tests in
``r/pdpx/tests/testthat/test-ranger.R``):

* inputs are what ``data.matrix`` makes of the data once ranger has re-levelled its
  factors to ``covariate.levels`` (when stored): a factor is its 1-based level
  position. The encoder (:class:`~pdpx.adapters.rlevels.LevelEncoder`) gives the
  0-based position, so thresholds of splits on factors are lowered by one;
* an ordered split sends ``x <= split_value`` left;
* a partition split's ``split_value`` is an integer bitmask: level ``k`` (1-based)
  goes *right* when bit ``k - 1`` is set (the IR's set goes right);
* regression averages the trees' leaf values; a probability forest averages the
  leaves' class fractions (columns in ``response_levels`` order, as ``predict``
  returns them, while each leaf stores them in ``class_values`` order); a
  classification forest's leaf holds a class code, and pdpx reports the fraction
  of trees voting for each class (ranger's own prediction is the majority vote,
  with ties broken at random: a label, not a number to average);
* a survival forest's ``predict`` averages the trees' leaf cumulative hazards (``$chf``, one column per
  death time) and returns ``$survival = exp(-$chf)`` (the IR's link ``exp`` with scale -1 on the averaged
  hazard: a per-row transform, which the exact method applies to each row's margin); its curves are step
  functions of the death times, read at a time t at the largest death time <= t
  (:func:`pdpx.core.times.step_columns`).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..core.errors import PdpxError
from ..core.ir import MalformedTreeError, TreeEnsemble
from ..r_wire import as_array, as_list

TREETYPES = ("Regression", "Classification", "Probability estimation", "Survival")


def ranger_outputs(spec: Mapping) -> list[str] | None:
    """Class labels of the output columns (None for regression)."""
    treetype = str(spec["treetype"])
    if treetype in ("Regression", "Survival"):
        return None
    return [str(v) for v in as_list(spec["response_levels"])]


def death_times(spec: Mapping) -> np.ndarray:
    """A survival forest's unique death times (increasing), where its curves step."""
    return as_array(spec["death_times"]).ravel().astype(np.float64)


def _survival_values(spec: Mapping, leaves: np.ndarray, total: int, times) -> np.ndarray:
    """(nodes, asked times): each leaf's cumulative hazard at the death time each asked time reads."""
    from ..core.times import step_columns

    steps = death_times(spec)
    chf = as_array(spec["chf"]).ravel()
    if chf.size != leaves.size * steps.size:
        raise PdpxError(f"ranger chf has {chf.size} values; expected {leaves.size} leaves x {steps.size} death "
                        "times")
    cols = step_columns(steps, np.asarray(times, dtype=np.float64))
    value = np.zeros((total, cols.size))
    value[leaves] = chf.reshape(leaves.size, steps.size)[:, cols]
    return value


def ranger_ensemble(spec: Mapping, times=None, survival: bool = False) -> TreeEnsemble:
    """The forest of ``spec`` (see the module docstring) as a TreeEnsemble; a survival forest's at ``times``
    (its leaves' cumulative hazards there, one margin per time; ``survival``: with the link ``exp(-margin)``,
    ranger's ``$survival`` of each row's averaged cumulative hazard)."""
    treetype = str(spec.get("treetype"))
    if treetype not in TREETYPES:
        raise PdpxError(f"ranger forests of type {treetype!r} are not supported; supported: {list(TREETYPES)}")
    sizes = as_array(spec["n_nodes"], np.int64).ravel()
    if sizes.size == 0 or np.any(sizes <= 0):
        raise PdpxError("the ranger forest has no trees; was it fitted with write.forest = TRUE?")
    total = int(sizes.sum())
    var = as_array(spec["split_var"], np.int64).ravel()
    val = as_array(spec["split_value"]).ravel()
    lc = as_array(spec["left"], np.int64).ravel()
    rc = as_array(spec["right"], np.int64).ravel()
    if not (var.size == val.size == lc.size == rc.size == total):
        raise PdpxError("ranger node vectors disagree with n_nodes")
    is_ordered = np.array([bool(v) for v in as_list(spec["is_ordered"])], dtype=bool)
    factor = np.array([lv is not None for lv in spec["levels"]], dtype=bool)
    n_features = len(is_ordered)

    start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    tree_of = np.repeat(np.arange(sizes.size), sizes)
    leaf = (lc == 0) & (rc == 0)
    left = np.where(leaf, -1, start[tree_of] + lc)
    right = np.where(leaf, -1, start[tree_of] + rc)
    if np.any(~leaf & ((var < 0) | (var >= n_features))):
        node = int(np.flatnonzero(~leaf & ((var < 0) | (var >= n_features)))[0])
        raise MalformedTreeError(f"ranger tree {int(tree_of[node])}: split variable {int(var[node])} out of range")
    feature = np.where(leaf, -1, var)
    f = np.where(leaf, 0, var)
    partition = ~leaf & ~is_ordered[f]
    # factor inputs arrive 0-based (ranger compares the 1-based level position)
    threshold = np.where(leaf | partition, 0.0, val - np.where(factor[f], 1.0, 0.0))

    cat_nodes = np.flatnonzero(partition)
    cat_offset = np.full(total, -1, dtype=np.int64)
    cat_offset[cat_nodes] = 2 * np.arange(cat_nodes.size)
    cat_nwords = np.where(partition, 2, 0)
    masks = val[cat_nodes]
    if np.any(~np.isfinite(masks)) or np.any(masks < 0) or np.any(masks >= 2.0**53):
        raise MalformedTreeError("a ranger partition split's bitmask is not an integer between 0 and 2^53")
    m64 = np.floor(masks).astype(np.uint64)
    cat_words = np.stack([(m64 & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                          (m64 >> np.uint64(32)).astype(np.uint32)], axis=1).ravel()

    leaves = np.flatnonzero(leaf)
    if treetype == "Regression":
        value = np.where(leaf, val, 0.0)
        tree_group = np.zeros(sizes.size, dtype=np.int64)
        n_margins = 1
    elif treetype == "Survival":
        if times is None:
            raise PdpxError("a ranger survival forest's trees are read at chosen times (times=)")
        value = _survival_values(spec, leaves, total, times)
        n_margins = value.shape[1]
        tree_group = np.full(sizes.size, -1 if n_margins > 1 else 0, dtype=np.int64)
    else:
        outputs = ranger_outputs(spec)
        K = len(outputs)
        value = np.zeros((total, K))
        if treetype == "Probability estimation":
            counts = as_array(spec["class_counts"]).ravel()
            cv = as_array(spec["class_values"], np.int64).ravel()
            if counts.size != leaves.size * cv.size or np.any((cv < 1) | (cv > K)):
                raise PdpxError(f"ranger class_counts has {counts.size} values; expected {leaves.size} leaves x "
                                f"{cv.size} classes")
            value[np.ix_(leaves, cv - 1)] = counts.reshape(leaves.size, cv.size)
        else:
            code = val[leaves].astype(np.int64)
            if np.any((code < 1) | (code > K)):
                raise MalformedTreeError("a ranger classification leaf holds no class code")
            value[leaves, code - 1] = 1.0
        tree_group = np.full(sizes.size, -1, dtype=np.int64)
        n_margins = K
    return TreeEnsemble(
        left=left, right=right, feature=feature, threshold=threshold, missing_left=np.zeros(total, dtype=bool),
        value=value, tree_start=start, tree_group=tree_group, n_features=n_features, n_margins=n_margins,
        cat_offset=cat_offset, cat_nwords=cat_nwords, cat_words=cat_words, comparison="<=",
        float32_input=False, categories_go_left=False, aggregation="mean", link="exp" if survival else "identity",
        link_scale=-1.0 if survival else 1.0,
        description=f"ranger ({treetype.lower()}, {sizes.size} trees)",
    )
