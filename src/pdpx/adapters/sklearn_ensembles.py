"""scikit-learn ensembles whose prediction is linear in their members' predictions.

Each is handed to ``exact`` as a :class:`~pdpx.core.treesum.TreeSum`: the members'
own tree models (any model pdpx reads trees from: scikit-learn trees, XGBoost,
LightGBM, pipelines of them) with the weights of the combination.

==============================  ==================================================
ensemble                        response as a weighted sum
==============================  ==================================================
VotingRegressor                 ``sum w_m predict_m / sum w``
VotingClassifier (soft)         ``sum w_m predict_proba_m / sum w``
BaggingRegressor / Classifier   mean of the members on their columns (classes aligned)
MultiOutputRegressor            output ``k`` is member ``k``
TransformedTargetRegressor      ``a * predict + b`` when the target transform is affine
StackingRegressor               ``coef @ predictions + intercept`` (linear final, no passthrough)
==============================  ==================================================
"""

from __future__ import annotations

import numpy as np

from ..core.ir import TreeModel, numeric_encoder, numeric_values
from ..core.treesum import TreeSum, TreeTerm

_CLASSES = {
    "VotingRegressor": "voting", "VotingClassifier": "voting", "BaggingRegressor": "bagging",
    "BaggingClassifier": "bagging", "MultiOutputRegressor": "multioutput", "TransformedTargetRegressor": "ttr",
    "StackingRegressor": "stacking",
}
#: Target transforms of TransformedTargetRegressor whose inverse is affine.
AFFINE_TRANSFORMERS = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler")


class NotLinear(Exception):
    """The ensemble (as fitted) is not a weighted sum of members pdpx reads trees from."""


def kind(model) -> str | None:
    """Which reader of this module handles ``model`` (by class path, without importing scikit-learn), or None."""
    for k in type(model).__mro__:
        if k.__module__.startswith(("sklearn.ensemble", "sklearn.multioutput", "sklearn.compose")):
            found = _CLASSES.get(k.__name__)
            if found:
                return found
    return None


def tree_model(adapter, response):
    """The ensemble as a TreeSum of its members, or None (:func:`unavailable_reason` says why)."""
    out = _build(adapter, response)
    return None if isinstance(out, str) else out


def unavailable_reason(adapter, response) -> str:
    """Why :func:`tree_model` returned None."""
    out = _build(adapter, response)
    return out if isinstance(out, str) else ""


def _build(adapter, response):
    model = adapter.model
    ref = getattr(adapter, "reference_rows", None)
    if ref is None:
        return f"{type(model).__name__}: its columns are not known yet"
    try:
        return _READERS[kind(model)](model, ref, response)
    except NotLinear as exc:
        return f"{type(model).__name__}: {exc}"


def member_tree_model(est, ref, response: str, label: str):
    """A member's tree model for ``response`` (its adapter sees the reference rows first)."""
    from ..core.plugins import adapt

    ad = adapt(est)
    ad.validate_columns(ref)
    if response not in ad.responses():
        raise NotLinear(f"{label} ({type(est).__name__}) has no {response}")
    tm = ad.tree_model(response)
    if tm is None:
        raise NotLinear(f"{label} ({type(est).__name__}): {ad.tree_model_unavailable(response)}")
    return tm, len(ad.output_names(response))


def _voting(model, ref, response):
    est = list(model.estimators_)
    names = [n for n, e in model.estimators if not (isinstance(e, str) and e == "drop")]
    weights = model.weights
    if weights is None:
        w = np.ones(len(est))
    else:
        kept = [wt for (_, e), wt in zip(model.estimators, weights) if not (isinstance(e, str) and e == "drop")]
        w = np.asarray(kept, dtype=np.float64)
    w = w / w.sum()
    classifier = hasattr(model, "classes_")
    if classifier:
        if model.voting != "soft":
            raise NotLinear("hard voting is a majority vote, not a weighted sum (soft voting runs exact)")
        if response != "predict_proba":
            raise NotLinear(f"response {response!r}: only predict_proba is a weighted sum of the members")
        k = len(model.classes_)
    elif response != "predict":
        raise NotLinear(f"response {response!r} is not a weighted sum of the members")
    terms = []
    for name, e, wm in zip(names, est, w):
        tm, n_out = member_tree_model(e, ref, response, f"member {name!r}")
        if classifier and n_out != k:  # pragma: no cover - members are fitted on all classes
            raise NotLinear(f"member {name!r} has {n_out} classes, the ensemble {k}")
        terms.append(TreeTerm(tm, wm * np.eye(n_out)))
    n_out = terms[0].weights.shape[0]
    return TreeSum(terms, np.zeros(n_out), [f"exact: {type(model).__name__}, the weighted sum of "
                                            f"{len(terms)} members each computed exactly"])


def _bagging(model, ref, response):
    classifier = hasattr(model, "classes_")
    if classifier and response != "predict_proba":
        raise NotLinear(f"response {response!r} is not the members' average")
    if not classifier and response != "predict":
        raise NotLinear(f"response {response!r} is not the members' average")
    if classifier and not hasattr(model.estimators_[0], "predict_proba"):
        raise NotLinear("its members have no predict_proba: BaggingClassifier then counts votes")
    n_est = len(model.estimators_)
    n_in = ref.shape[1]
    K = len(model.classes_) if classifier else None
    terms = []
    for m, (e, feats) in enumerate(zip(model.estimators_, model.estimators_features_)):
        cols = [int(f) for f in feats]
        sub = ref.iloc[:, cols].set_axis(list(range(len(cols))), axis=1)  # a column may be drawn twice
        tm, n_out = member_tree_model(e, sub, response, f"member {m}")
        if tm.encode is numeric_encoder and tm.encode_values is numeric_values and isinstance(tm, TreeModel):
            tm, cols = _on_all_columns(tm, cols, n_in), None  # split features read as X's own columns
        elif len(set(cols)) != len(cols):
            raise NotLinear("bootstrap_features drew a column twice for a member that is not a plain tree model")
        if classifier:
            W = np.zeros((K, n_out))
            W[np.asarray(e.classes_, dtype=np.int64), np.arange(n_out)] = 1.0 / n_est
        else:
            W = np.eye(n_out) / n_est
        terms.append(TreeTerm(tm, W, cols))
    return TreeSum(terms, np.zeros(terms[0].weights.shape[0]),
                   [f"exact: {type(model).__name__}, the mean of {n_est} members each computed exactly"])


def _on_all_columns(tm: TreeModel, cols: list, n_in: int) -> TreeModel:
    """A member fitted on columns ``cols`` of X, as a tree model reading all of X."""
    from dataclasses import replace

    ens = tm.ensemble
    cols_arr = np.asarray(cols, dtype=np.int64)
    feature = np.where(ens.left >= 0, cols_arr[np.maximum(ens.feature, 0)], ens.feature)
    return replace(tm, ensemble=replace(ens, feature=feature, n_features=n_in))


def _multioutput(model, ref, response):
    if response != "predict":
        raise NotLinear(f"response {response!r}")
    est = model.estimators_
    terms = []
    for k, e in enumerate(est):
        tm, n_out = member_tree_model(e, ref, response, f"output {k}")
        W = np.zeros((len(est), n_out))
        W[k, 0] = 1.0
        terms.append(TreeTerm(tm, W))
    return TreeSum(terms, np.zeros(len(est)), [f"exact: {type(model).__name__}, one tree model per output"])


def affine(fn, n_in: int):
    """(A, b) with ``fn(P) == P @ A.T + b`` for rows P, or None when probing shows ``fn`` is not affine."""
    probe = np.vstack([np.zeros(n_in), np.eye(n_in)])
    out = np.asarray(fn(probe), dtype=np.float64).reshape(len(probe), -1)
    b = out[0]
    A = (out[1:] - b).T
    rng = np.random.default_rng(0)
    check = rng.normal(scale=10.0, size=(3, n_in))
    got = np.asarray(fn(check), dtype=np.float64).reshape(3, -1)
    want = check @ A.T + b
    if not np.allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(want).max()))):
        return None
    return A, b


def _ttr(model, ref, response):
    if response != "predict":
        raise NotLinear(f"response {response!r}")
    tr = model.transformer_
    name = type(tr).__name__
    identity = name == "FunctionTransformer" and tr.func is None and tr.inverse_func is None
    if not identity and name not in AFFINE_TRANSFORMERS:
        what = getattr(tr, "inverse_func", None)
        what = getattr(what, "__name__", name) if what is not None else name
        raise NotLinear(f"its inverse target transform ({what}) is not known to be linear, so the average of "
                        "the back-transformed predictions is not the back-transformed average (brute computes it)")
    tm, n_out = member_tree_model(model.regressor_, ref, response, "its regressor")
    fitted = affine(lambda P: tr.inverse_transform(P), n_out)
    if fitted is None:  # pragma: no cover - the transforms above are affine
        raise NotLinear(f"its target transform {name} is not affine")
    A, b = fitted
    return TreeSum([TreeTerm(tm, A)], b, [f"exact: {type(model).__name__}, an affine map of its regressor"])


def _stacking(model, ref, response):
    if response != "predict":
        raise NotLinear(f"response {response!r}")
    if model.passthrough:
        raise NotLinear("passthrough=True gives the final estimator X itself, which exact does not follow")
    final = model.final_estimator_
    if getattr(final, "coef_", None) is None:
        raise NotLinear(f"its final estimator {type(final).__name__} is not a linear model")
    members = list(model.estimators_)
    fitted = affine(lambda P: final.predict(P), len(members))
    if fitted is None:
        raise NotLinear(f"its final estimator {type(final).__name__} does not predict linearly (a link function)")
    A, b = fitted
    terms = []
    for m, e in enumerate(members):
        tm, n_out = member_tree_model(e, ref, response, f"member {m}")
        if n_out != 1:
            raise NotLinear(f"member {m} has {n_out} outputs")
        terms.append(TreeTerm(tm, A[:, m: m + 1]))
    return TreeSum(terms, b, [f"exact: {type(model).__name__}, its linear final estimator over "
                              f"{len(members)} members each computed exactly"])


_READERS = {"voting": _voting, "bagging": _bagging, "multioutput": _multioutput, "ttr": _ttr,
            "stacking": _stacking}
