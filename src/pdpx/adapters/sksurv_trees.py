"""Reading scikit-survival tree models into the common representation (:mod:`pdpx.core.ir`).

* ``RandomSurvivalForest``, ``ExtraSurvivalTrees``, ``SurvivalTree``, ``ExtraSurvivalTree``: each tree is a
  scikit-learn ``Tree`` whose ``value`` is (nodes, training times, 2): per node the Nelson-Aalen cumulative
  hazard (``[..., 0]``) and the Kaplan-Meier survival (``[..., 1]``) at every distinct training time; the
  forest averages its trees' values. So the survival and the cumulative hazard at any time are linear in the
  leaves: the IR's leaves are vectors, one value per asked time, the column the model's step-function rule
  reads for it (:func:`pdpx.core.times.step_columns`), taken from the tree's array by index, only those
  columns. The risk score (``predict``) is each leaf's cumulative hazard summed over the event times (a
  ``low_memory`` forest stores that sum alone). Inputs are cast to float32, as the model does.
* ``GradientBoostingSurvivalAnalysis`` fitted with the Cox loss (no dropout): the margin is the log hazard
  ratio ``f`` (scikit-learn's regression trees, times the learning rate, plus the init's constant), the risk
  is ``f``; the cumulative hazard is ``H0(t) exp(f)``, the exp link with ``log H0(t)`` added to each time's
  margin (a time before the first event, where ``H0`` is 0, gets a margin of ``-1e300``, whose exp is 0).
  The survival ``S0(t) ** exp(f)`` is not linear in anything the trees sum: ``brute``.
"""

from __future__ import annotations

import numpy as np

from ..core.forksafe import single_threaded
from ..core.ir import TreeEnsemble, TreeModel, fingerprint, model_cache, numeric_encoder, numeric_values
from ..core.times import step_columns

_FORESTS = ("RandomSurvivalForest", "ExtraSurvivalTrees")
_TREES = ("SurvivalTree", "ExtraSurvivalTree")
#: The margin of a time before the first event on the cumulative-hazard scale (exp of it is 0).
NO_HAZARD = -1e300


def _kind(model) -> str | None:
    name = type(model).__name__
    module = type(model).__module__
    if not module.startswith("sksurv."):
        return None
    if name in _FORESTS:
        return "forest"
    if name in _TREES:
        return "tree"
    if name == "GradientBoostingSurvivalAnalysis":
        return "gb"
    return None


def _members(model) -> list:
    return [model] if _kind(model) == "tree" else list(model.estimators_)


def _gb_readable(model) -> str | None:
    """Why a GradientBoostingSurvivalAnalysis cannot be read as trees, or None."""
    loss = getattr(model, "loss", None)
    if loss != "coxph":
        return f"it was fitted with loss={loss!r}; pdpx reads the Cox loss's trees only"
    if hasattr(model, "_scale"):
        return "it was fitted with dropout (each tree scaled by its own factor)"
    init = getattr(model, "init_", None)
    if not (init == "zero" or type(init).__name__ in ("DummyRegressor", "DummyClassifier")):
        return f"its init estimator ({type(init).__name__}) is not a constant"
    return None


def unavailable_reason(adapter, response: str) -> str:
    """Why :func:`tree_model` gave no trees: the sentence shown to the user."""
    model = adapter.model
    name = type(model).__name__
    kind = _kind(model)
    if kind is None:
        return f"{name} is not a tree model pdpx can read: brute calls its own functions"
    if kind == "gb":
        why = _gb_readable(model)
        if why is not None:
            return f"{name}: {why}; brute calls its own functions"
        return (f"{name}: its survival S0(t) ** exp(f) is not a sum of leaves; brute calls its own "
                "predict_survival_function (the risk and the cumulative hazard are exact)")
    budget = vars(adapter).get("_budget_reason")
    if budget is not None and response in ("survival", "cumulative_hazard"):
        return f"{name}: {budget}"
    return f"{name}: response {response!r} cannot be computed from the trees (use method='brute')"


def model_fingerprint(model) -> str:
    """A digest of what the tree model's predictions depend on: every tree's node records and values (and the
    learning rate and the baseline hazard for boosting); "" for another model.

    A survival tree's values are a curve per node (nodes x training times x 2: most of the model's bytes, a
    digest of them all costs half a prediction of 2,000 rows); they enter as one checksum per node, the sum of
    the row's 64-bit words modulo 2**64 (any one value changed in place changes it; read at memory speed)."""
    kind = _kind(model)
    if kind in ("forest", "tree"):
        parts = [model.unique_times_]
        for t in _members(model):
            tree = t.tree_
            parts += [_row_sums(tree.value), *_tree_arrays(tree)[1:]]
        return fingerprint(*parts)
    if kind == "gb":
        parts = [a for t in model.estimators_.ravel() for a in _tree_arrays(t.tree_)]
        base = getattr(model, "_baseline_model", None)
        if base is not None:
            parts += [base.cum_baseline_hazard_.x, base.cum_baseline_hazard_.y]
        return fingerprint(repr(float(model.learning_rate)), *parts)
    return ""


def _row_sums(value: np.ndarray) -> np.ndarray:
    """Each node's values' 64-bit words summed modulo 2**64: a checksum per node, at memory speed."""
    rows = np.ascontiguousarray(value, dtype=np.float64).reshape(len(value), -1)
    return np.add.reduce(rows.view(np.uint64), axis=1, dtype=np.uint64)


def _tree_arrays(tree) -> tuple:
    return (tree.value, tree.threshold, tree.feature, tree.children_left, tree.children_right,
            getattr(tree, "missing_go_to_left", None), tree.weighted_n_node_samples)


def tree_model(adapter, response: str) -> TreeModel | None:
    """The model's trees for ``response`` at the adapter's times (cached per fitted model and times), or None."""
    model = adapter.model
    kind = _kind(model)
    if kind is None:
        return None
    times = getattr(adapter, "times", None)
    timed = response in ("survival", "cumulative_hazard")
    state = "" if not timed else fingerprint(np.asarray(times, dtype=np.float64))
    if kind in ("forest", "tree"):
        if getattr(model, "low_memory", False) and response not in ("predict", "risk"):
            return None
        trees = _members(model)
        if timed and _over_budget(adapter, trees, len(times)):
            return None
        key = tuple(t.tree_ for t in trees)
        return model_cache.get(model, response, key, lambda: _forest_model(model, trees, response, times),
                               state=state, fingerprint=adapter.fingerprint())
    if _gb_readable(model) is not None or response == "survival":
        return None
    key = tuple(model.estimators_.ravel())
    return model_cache.get(model, response, key, lambda: _gb_model(model, response, times),
                           state=state, fingerprint=adapter.fingerprint())


def time_bytes(model, response: str) -> int:
    """Bytes per asked time of the trees read for ``response``: one float64 per node (0 for the risk, or a model
    pdpx does not read)."""
    kind = _kind(model)
    if response not in ("survival", "cumulative_hazard") or kind is None:
        return 0
    if kind == "gb":
        return 8 * sum(est.tree_.node_count for est in model.estimators_.ravel())
    return 8 * sum(t.tree_.node_count for t in _members(model))


def _over_budget(adapter, trees: list, n_times: int) -> bool:
    """Whether the leaves at ``n_times`` times (one float64 per node and time, and the check of the finished
    representation) would pass half the memory budget; the reason is kept for :func:`unavailable_reason`."""
    from ..core.config import format_bytes, get_config

    need = 2 * 8 * n_times * sum(t.tree_.node_count for t in trees)
    budget = get_config()["memory_budget"]
    if need <= budget // 2:
        return False
    adapter._budget_reason = (
        f"its leaves at {n_times:,} times would take about {format_bytes(need)}, over half the memory budget "
        f"({format_bytes(budget)}): ask for fewer times per call or raise the budget (pdpx.set_config(memory_budget="
        "...)); brute calls the model's own functions")
    return True


def _structure(trees: list) -> dict:
    """The IR's node arrays (all but ``value``) of scikit-learn ``Tree`` objects, one tree after another."""
    sizes = np.array([t.node_count for t in trees], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    offset = np.repeat(starts[:-1], sizes)

    def joined(name):
        return np.concatenate([getattr(t, name) for t in trees])

    left = joined("children_left").astype(np.int64)
    right = joined("children_right").astype(np.int64)
    internal = left >= 0
    if all(getattr(t, "missing_go_to_left", None) is not None for t in trees):
        missing = joined("missing_go_to_left").astype(bool)
    else:  # pragma: no cover - scikit-learn before 1.3
        missing = np.zeros(len(left), dtype=bool)
    return {
        "left": np.where(internal, left + offset, -1),
        "right": np.where(right >= 0, right + offset, -1),
        "feature": np.where(internal, joined("feature"), -1).astype(np.int64),
        "threshold": np.where(internal, joined("threshold"), 0.0),
        "missing_left": missing,
        "node_weight": joined("weighted_n_node_samples").astype(np.float64),
        "tree_start": starts,
    }


def _leaf_values(model, trees: list, response: str, times) -> np.ndarray:
    """The trees' node values for ``response``, one tree after another: (nodes, asked times), each leaf's row read
    from the columns of its tree's ``value`` the step-function rule picks (only the leaves' rows and those columns
    are read: internal nodes, which no tree method reads, stay 0, and their pages are never written), or
    (nodes, 1) for the risk."""
    sizes = [t.node_count for t in trees]
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    risk = response in ("predict", "risk")
    cols = None if risk else step_columns(np.asarray(model.unique_times_, dtype=np.float64),
                                          np.asarray(times, dtype=np.float64))
    every = cols is not None and len(cols) == len(model.unique_times_) and np.array_equal(cols, np.arange(len(cols)))
    out = np.zeros((int(starts[-1]), 1 if risk else len(cols)))  # zeroed lazily: untouched pages cost nothing
    side = 1 if response == "survival" else 0
    events = np.flatnonzero(model.is_event_time_) if risk and not getattr(model, "low_memory", False) else None
    for start, tree in zip(starts[:-1], trees):
        leaves = np.flatnonzero(tree.children_left < 0)
        value = tree.value  # (nodes, training times, 2), or (nodes, 1, 1) for a low_memory forest
        if risk:
            out[start + leaves, 0] = value[leaves, 0, 0] if events is None else value[leaves][:, events, 0].sum(1)
        elif every:  # np.take of the rows, then a scatter of whole rows: the fastest of numpy's gathers here
            out[start + leaves] = np.take(value[:, :, side], leaves, axis=0)
        else:
            out[start + leaves] = np.take(value[:, :, side], cols, axis=1).take(leaves, axis=0)
    return out


def _forest_model(model, trees, response: str, times) -> TreeModel:
    tree_objects = [t.tree_ for t in trees]
    value = _leaf_values(model, tree_objects, response, times)
    n_values = value.shape[1]
    ens = TreeEnsemble(
        **_structure(tree_objects), value=value,
        tree_group=np.full(len(trees), -1 if n_values > 1 else 0),
        n_features=model.n_features_in_, n_margins=n_values, comparison="<=", float32_input=True,
        aggregation="mean", link="identity", description=type(model).__name__,
    )
    return TreeModel(ensemble=ens, encode=numeric_encoder, encode_values=numeric_values,
                     recursion_weights="weighted training row counts per node (weighted_n_node_samples; "
                     "bootstrap multiplicity included)")


def _gb_model(model, response: str, times) -> TreeModel:
    stages = [est.tree_ for est in model.estimators_[:, 0]]
    lr = float(model.learning_rate)
    structure = _structure(stages)
    leaf = np.concatenate([np.asarray(t.value[:, 0, 0], dtype=np.float64) for t in stages]) * lr
    n_trees = len(stages)
    x0 = np.zeros((1, model.n_features_in_), dtype=np.float32)
    one = TreeEnsemble(**structure, value=leaf, tree_group=np.zeros(n_trees, dtype=np.int64),
                       n_features=model.n_features_in_, comparison="<=", float32_input=True)
    with single_threaded():
        raw = float(np.asarray(model._raw_predict(x0), dtype=np.float64).ravel()[0])
    base = raw - float(one.predict_raw_row(x0[0])[0])
    if response in ("predict", "risk"):
        one.base_score = np.array([base])
        one.description = type(model).__name__
        return TreeModel(ensemble=one, encode=numeric_encoder, encode_values=numeric_values)
    hazard = model._baseline_model.cum_baseline_hazard_
    h0 = np.asarray(hazard.y, dtype=np.float64)[step_columns(np.asarray(hazard.x, dtype=np.float64),
                                                             np.asarray(times, dtype=np.float64))]
    with np.errstate(divide="ignore"):
        shift = np.where(h0 > 0, np.log(np.where(h0 > 0, h0, 1.0)), NO_HAZARD)
    ens = TreeEnsemble(
        **structure, value=np.repeat(leaf[:, None], len(h0), axis=1), tree_group=np.full(n_trees, -1),
        n_features=model.n_features_in_, n_margins=len(h0), base_score=base + shift, comparison="<=",
        float32_input=True, link="exp", description=type(model).__name__,
    )
    return TreeModel(ensemble=ens, encode=numeric_encoder, encode_values=numeric_values,
                     notes=["the cumulative hazard H0(t) exp(f) is computed as exp(f + log H0(t)): equal to the "
                            "model's product to a few units in the last place"])
