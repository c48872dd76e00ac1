"""XGBoost: the scikit-learn wrappers (``XGBRegressor``, ``XGBClassifier``, ``XGBRF*``,
``XGBRanker``) and a raw ``xgboost.Booster``.

Prediction goes through XGBoost's own predict (what ``brute`` uses). Tree
extraction (for ``exact`` and ``recursion``) reads the model from
``booster.save_raw("ubj")`` with a small UBJSON reader that turns XGBoost's typed
arrays straight into numpy arrays (about 10x faster than ``json.loads`` of
``save_raw("json")``; see ``docs/xgboost_lightgbm.md``).

Semantics carried into the IR (``pdpx.core.ir``):

* inputs are rounded to float32, then ``x < t`` goes left (ties go right);
* NaN (and the wrapper's ``missing`` value) goes to ``default_left``;
* categorical splits list the categories that go *right*; codes outside the set
  (unknown, negative) go left; pandas categories are re-coded to the positions of
  the categories stored with the model (XGBoost >= 3.1 does the same at predict
  time and rejects categories it has not seen);
* ``base_score`` (scalar before 3.1, a bracketed vector since) is in prediction
  space and mapped to the margin by the objective's inverse link;
* trees of round ``r`` are ``iteration_indptr[r]:iteration_indptr[r + 1]``
  (``num_parallel_tree x num_class`` trees), ``tree_info`` is the class of each;
  DART trees are scaled by ``weight_drop``;
* the scikit-learn wrapper predicts with ``best_iteration + 1`` rounds after
  early stopping, a raw Booster with all of them: the IR follows the object given;
* node weights are ``sum_hessian`` (cover): a hessian-weighted ``recursion``.

XGBoost is imported only when a model of it is met.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np
import pandas as pd

from ..core.adapter import as_2d
from ..core.errors import NotFittedError, PdpxError
from ..core.hookspecs import hookimpl
from ._boosters import BoosterAdapter, Extracted, Unavailable, self_check

# ----------------------------------------------------------------- objectives
#: Objectives whose prediction is the margin itself.
_IDENTITY = {
    "reg:squarederror", "reg:linear", "reg:squaredlogerror", "reg:pseudohubererror",
    "reg:absoluteerror", "reg:quantileerror", "binary:logitraw",
    "rank:pairwise", "rank:ndcg", "rank:map",
}
#: prediction = sigmoid(margin)
_LOGISTIC = {"binary:logistic", "reg:logistic"}
#: prediction = exp(margin)
_EXP = {"count:poisson", "reg:gamma", "reg:tweedie", "survival:cox"}
#: class probabilities = softmax(margins)
_SOFTMAX = {"multi:softprob", "multi:softmax"}
_CLASSIFIER_OBJECTIVES = {"binary:logistic", "binary:logitraw", "binary:hinge", "multi:softprob", "multi:softmax"}
#: base_score is stored in prediction space; its margin is logit(.) / log(.) here.
#: (binary:logitraw keeps base_score as the margin: checked against xgboost 3.2)
_BASE_LOGIT = {"binary:logistic", "reg:logistic"}
_BASE_LOG = {"count:poisson", "reg:gamma", "reg:tweedie", "survival:cox"}


def is_xgboost_model(model) -> bool:
    """True for XGBoost scikit-learn wrappers and Boosters (without importing xgboost)."""
    if isinstance(model, type):
        return False
    module = type(model).__module__ or ""
    if not module.startswith("xgboost") or module.startswith(("xgboost.dask", "xgboost.spark")):
        return False
    names = {k.__name__ for k in type(model).__mro__ if (k.__module__ or "").startswith("xgboost")}
    return "Booster" in names or "XGBModel" in names


def _is_booster(model) -> bool:
    return any(k.__name__ == "Booster" and (k.__module__ or "").startswith("xgboost") for k in type(model).__mro__)


class XGBoostAdapter(BoosterAdapter):
    library = "xgboost"

    def __init__(self, model: Any):
        super().__init__(model)
        self._raw = _is_booster(model)
        self._learner: dict | None = None
        self._learner_key: tuple | None = None
        #: categories of X's pandas category columns, by position (recorded by
        #: validate_columns; used for models that carry no categories of their own)
        self._frame_categories: dict[int, list] = {}

    @property
    def thread_safe(self) -> bool:  # XGBoost's predict is thread safe for gbtree and dart only
        try:
            return self._booster_name() != "gblinear"
        except Exception:
            return False

    # --------------------------------------------------------------- facts
    def booster(self):
        if self._raw:
            return self.model
        return self.model.get_booster()

    def check_fitted(self):
        try:
            booster = self.booster()
        except Exception as exc:  # xgboost raises sklearn's NotFittedError
            raise NotFittedError(
                f"this {type(self.model).__name__} is not fitted yet: call .fit(X, y) before "
                "computing partial dependence"
            ) from exc
        if booster.num_boosted_rounds() == 0 and self._booster_name() != "gblinear":
            raise NotFittedError(f"this XGBoost {type(self.model).__name__} has no boosting rounds; train it first")

    def _config(self) -> dict:
        booster = self.booster()
        key = (id(booster), booster.num_boosted_rounds())
        if getattr(self, "_config_key", None) != key:
            self._config_cache = json.loads(booster.save_config())["learner"]
            self._config_key = key
        return self._config_cache

    def _booster_name(self) -> str:
        if not self._raw:
            name = getattr(self.model, "booster", None)
            if isinstance(name, str):
                return name
        return self._config()["gradient_booster"]["name"]

    def objective(self) -> str:
        """The objective's name as the booster records it (e.g. ``binary:logistic``)."""
        return self._config()["objective"]["name"]

    def feature_names(self):
        if not self._raw:
            names = getattr(self.model, "feature_names_in_", None)
            if names is not None:
                return [str(n) for n in names]
        names = self.booster().feature_names
        return list(names) if names is not None else None

    def n_features(self) -> int:
        return int(self.booster().num_features())

    def validate_columns(self, X):
        X = super().validate_columns(X)
        n = self.n_features()
        if X.shape[1] != n:
            raise PdpxError(
                f"X has {X.shape[1]} columns but this {type(self.model).__name__} was fitted on {n}; "
                f"pass X with the {n} columns used for fitting, in the same order"
            )
        self._frame_categories.clear()
        for j in range(X.shape[1]):
            if isinstance(X.dtypes.iloc[j], pd.CategoricalDtype):
                self._frame_categories[j] = list(X.iloc[:, j].cat.categories)
        return X

    def is_classifier(self):
        if self._raw:
            return self.objective() in _CLASSIFIER_OBJECTIVES
        return any(k.__name__ == "XGBClassifier" for k in type(self.model).__mro__)

    def _n_classes(self) -> int:
        if not self._raw:
            n = getattr(self.model, "n_classes_", None)
            if n is not None:
                return int(n)
        k = int(self._config()["learner_model_param"].get("num_class", "0"))
        return max(k, 2)

    def classes(self):
        if not self.is_classifier():
            return None
        if not self._raw:
            classes = getattr(self.model, "classes_", None)
            if classes is not None:
                return list(classes)
        return list(range(self._n_classes()))

    def _n_targets(self) -> int:
        param = self._config()["learner_model_param"]
        return max(1, int(param.get("num_target", "1")))

    def responses(self):
        if self.is_classifier():
            if self.objective() == "binary:logitraw":
                return ["raw"]
            return ["predict_proba", "raw"]
        return ["predict", "raw"]

    def output_names(self, response):
        if self.is_classifier():
            classes = [str(c) for c in self.classes()]
            if response == "raw" and len(classes) == 2:
                return [classes[1]]
            return classes
        T = self._n_targets()
        base = "prediction" if response == "predict" else "raw margin"
        return [base] if T == 1 else [f"target {i}" for i in range(T)]

    # ---------------------------------------------------------- prediction
    def _model_input(self, X: pd.DataFrame):
        if self.booster().feature_names is None and all(
            pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t) for t in X.dtypes
        ):
            return X.to_numpy(dtype=np.float64, na_value=np.nan)
        return X

    def stored_categories(self) -> dict[int, list]:
        """Categories saved with the model (XGBoost >= 3.1), by feature position."""
        booster = self.booster()
        key = (id(booster), booster.num_boosted_rounds())
        if getattr(self, "_stored_key", None) != key:
            self._stored = model_categories(self.learner())
            self._stored_key = key
        return self._stored

    def _check_categories(self, X: pd.DataFrame) -> None:
        """Refuse categories the model has not seen (xgboost 3.2 may silently re-code them
        to a neighbouring category; the intended behaviour is an error)."""
        cat_cols = [j for j in range(X.shape[1]) if isinstance(X.dtypes.iloc[j], pd.CategoricalDtype)]
        if not cat_cols:
            return
        stored = self.stored_categories()
        for j in cat_cols:
            if j not in stored:
                continue
            col = X.iloc[:, j]
            codes = np.unique(col.cat.codes.to_numpy())
            labels = col.cat.categories[codes[codes >= 0]]
            idx = pd.Index(stored[j]).get_indexer(pd.Index(list(labels), dtype=object))
            if np.any(idx < 0):
                unseen = sorted(map(str, labels[idx < 0]))[:10]
                raise PdpxError(
                    f"column {X.columns[j]!r} has categories the XGBoost model was not trained on: {unseen}. "
                    "XGBoost cannot score them (it raises, or in xgboost 3.2 may silently use another "
                    f"category). Known categories: {list(stored[j])[:20]}"
                )

    def predict(self, X, response):
        self._check_categories(X)
        data = self._model_input(X)
        if not self._raw:
            m = self.model
            if response == "predict_proba":
                return as_2d(m.predict_proba(data))
            if response == "raw":
                return as_2d(m.predict(data, output_margin=True))
            if response == "predict":
                return as_2d(m.predict(data))
            raise PdpxError(f"{type(m).__name__} has no response {response!r}")
        b = self.model
        if response not in self.responses():
            raise PdpxError(f"this XGBoost Booster has no response {response!r}; use one of {self.responses()}")
        margin = response == "raw" or (response == "predict_proba" and self.objective() == "multi:softmax")
        try:
            pred = b.inplace_predict(data, predict_type="margin" if margin else "value")
        except TypeError:  # data types inplace_predict does not take
            import xgboost

            pred = b.predict(xgboost.DMatrix(data, enable_categorical=True), output_margin=margin)
        pred = as_2d(pred)
        if response == "predict_proba":
            if self.objective() == "multi:softmax":
                z = pred - pred.max(axis=1, keepdims=True)
                e = np.exp(z)
                return e / e.sum(axis=1, keepdims=True)
            if pred.shape[1] == 1:
                return np.hstack([1.0 - pred, pred])
        return pred

    # ------------------------------------------------------ tree structure
    def _rounds(self) -> int:
        """Boosting rounds the model predicts with."""
        total = self.booster().num_boosted_rounds()
        if not self._raw:
            try:
                best = self.model.best_iteration
            except AttributeError:
                best = None
            if best is not None:
                return min(total, int(best) + 1)
        return total

    def learner(self) -> dict:
        """The booster's model, parsed (cached per booster)."""
        booster = self.booster()
        key = (id(booster), booster.num_boosted_rounds())
        if self._learner is None or self._learner_key != key:
            self._learner = read_booster(booster)
            self._learner_key = key
        return self._learner

    def _unavailable(self, response) -> str | None:
        name = self._booster_name()
        if name == "gblinear":
            return "an XGBoost gblinear model is linear, it has no trees; use method='brute'"
        if not self._raw and callable(getattr(self.model, "objective", None)) and response != "raw":
            return (
                "the model was trained with a custom objective, so pdpx does not know its link; "
                "use response='raw' or method='brute'"
            )
        obj = self.objective()
        if response == "raw":
            return None
        if response == "predict_proba":
            if obj == "binary:logistic" or obj in _SOFTMAX:
                return None
            return f"predict_proba of objective {obj!r} is not a function of the tree margins pdpx can reproduce"
        if obj in _IDENTITY or obj in _LOGISTIC or obj in _EXP:
            return None
        return (
            f"pdpx does not know how XGBoost objective {obj!r} maps margins to predictions; "
            "use response='raw' or method='brute'"
        )

    def tree_model(self, response):
        if self._unavailable(response) is not None:
            return None
        booster = self.booster()
        rounds = self._rounds()
        # the key holds what can change without a refit: rounds used, the wrapper's missing value
        key = f"{response}#rounds={rounds}#missing={getattr(self.model, 'missing', None)}"
        return self._cached_tree_model(
            response, key, booster, lambda: self._build(response, rounds),
            lambda entry: _Encoder(entry.categories, self._frame_categories, entry.missing),
        )

    def _build(self, response: str, rounds: int):
        from ..core.ir import TreeEnsemble

        learner = self.learner()
        obj = learner["objective"]["name"]
        parts = extract_trees(learner, rounds)
        param = learner["learner_model_param"]
        n_class = int(param.get("num_class", "0"))
        n_margins = n_class if n_class > 0 else max(1, int(param.get("num_target", "1")))
        base = base_margin(obj, _parse_base_score(param["base_score"]), n_margins)
        link = "identity"
        if response == "predict_proba":
            link = "binary_logistic" if n_margins == 1 else "softmax"
        elif response == "predict":
            if obj in _LOGISTIC:
                link = "logistic"
            elif obj in _EXP:
                link = "exp"
        ens = TreeEnsemble(
            n_features=int(param.get("num_feature", self.n_features())),
            n_margins=n_margins,
            base_score=base,
            comparison="<",
            float32_input=True,
            categories_go_left=False,
            aggregation="sum",
            link=link,
            description=f"XGBoost {type(self.model).__name__} ({obj}, {rounds} rounds)",
            **parts,
        )
        problem = self_check(ens, self._reference_nan_margin(rounds, ens.n_features))
        if problem:
            return Unavailable(
                f"pdpx's reading of this XGBoost {xgboost_version()} model does not reproduce its own "
                f"prediction ({problem}); using brute. Please report this with your xgboost version."
            )
        missing = np.nan
        if not self._raw:
            m = getattr(self.model, "missing", np.nan)
            missing = np.nan if m is None else float(m)
        return Extracted(
            ensemble=ens,
            categories=model_categories(learner),
            missing=missing,
            notes=[
                "recursion weights nodes by XGBoost's cover (sum of hessians); these equal training "
                "row counts only for squared error"
            ],
            recursion_weights="hessian sums (XGBoost cover, sum_hessian)",
        )

    def _reference_nan_margin(self, rounds: int, n_features: int) -> np.ndarray | None:
        """XGBoost's own margin for one row of missing values (None if it cannot say)."""
        row = np.full((1, n_features), np.nan)
        try:
            pred = self.booster().inplace_predict(
                row, predict_type="margin", iteration_range=(0, rounds), validate_features=False
            )
        except Exception:  # pragma: no cover - no check possible
            return None
        return np.asarray(pred, dtype=np.float64).reshape(-1)


def xgboost_version() -> str:
    import xgboost

    return xgboost.__version__


# ------------------------------------------------------------------ encoding
class _Encoder:
    """DataFrame -> the float matrix XGBoost's trees see (category columns -> codes).

    ``stored``: categories saved with the model (XGBoost >= 3.1), by position;
    XGBoost re-codes pandas categories to these by value. Columns without stored
    categories use the codes of the frame's own categories (``frame``: the
    categories of X's category columns, recorded by the adapter's
    ``validate_columns``; grid values of those columns are category labels).
    """

    def __init__(self, stored: dict[int, list], frame: dict[int, list], missing: float):
        self.stored = stored
        self.frame = frame
        self.missing = missing

    def _labels_to_codes(self, pos: int, labels, name, strict: bool) -> np.ndarray:
        target = self.stored.get(pos)
        if target is None:
            target = self.frame.get(pos, [])
            strict = False
        labels = list(labels)
        if not labels:
            return np.zeros(0)
        idx = pd.Index(target).get_indexer(pd.Index(labels, dtype=object)) if len(target) else np.full(len(labels), -1)
        if strict and np.any(idx < 0):
            unseen = [labels[i] for i in np.flatnonzero(idx < 0)]
            raise PdpxError(
                f"column {name!r} has categories the XGBoost model was not trained on: "
                f"{sorted(map(str, unseen))[:10]}; XGBoost refuses them at predict time too. "
                f"Known categories: {list(target)[:20]}"
            )
        return np.where(idx >= 0, idx, np.nan).astype(np.float64)

    def _mask_missing(self, arr: np.ndarray) -> np.ndarray:
        if not np.isnan(self.missing):
            arr[arr.astype(np.float32) == np.float32(self.missing)] = np.nan
        return arr

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        n, p = X.shape
        out = np.empty((n, p), dtype=np.float64)
        for j in range(p):
            col = X.iloc[:, j]
            if isinstance(col.dtype, pd.CategoricalDtype):
                codes = col.cat.codes.to_numpy().astype(np.int64)
                if j in self.stored:
                    cats = col.cat.categories
                    used = np.zeros(len(cats), dtype=bool)
                    used[codes[codes >= 0]] = True
                    new = np.full(len(cats), np.nan)
                    if used.any():  # only categories that occur must be known (as in XGBoost)
                        new[used] = self._labels_to_codes(j, cats[used], X.columns[j], strict=True)
                    vals = np.full(n, np.nan)
                    ok = codes >= 0
                    vals[ok] = new[codes[ok]]
                else:
                    self.frame[j] = list(col.cat.categories)
                    vals = np.where(codes >= 0, codes, np.nan).astype(np.float64)
                out[:, j] = vals
            else:
                out[:, j] = _as_float(col, X.columns[j])
        return self._mask_missing(out)

    def encode_values(self, pos: int, values) -> np.ndarray:
        if pos in self.stored or pos in self.frame:
            out = self._labels_to_codes(pos, values, f"feature {pos}", strict=True)
        else:
            out = _as_float(pd.Series(np.asarray(values)), f"feature {pos}")
        return self._mask_missing(np.array(out, dtype=np.float64))


def _as_float(col, name) -> np.ndarray:
    try:
        return np.array(col.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
    except (TypeError, ValueError):
        raise PdpxError(
            f"column {name!r} is not numeric; XGBoost takes numbers or pandas 'category' columns "
            "(convert it with X[col].astype('category') as at fit time)"
        ) from None


def model_categories(learner: dict) -> dict[int, list]:
    """Categories stored with the model (XGBoost >= 3.1), by feature position."""
    gb = learner["gradient_booster"]
    model = gb["gbtree"]["model"] if gb.get("name") == "dart" else gb.get("model", {})
    cats = model.get("cats") if isinstance(model, dict) else None
    out: dict[int, list] = {}
    if not cats:
        return out
    for j, enc in enumerate(cats.get("enc", [])):
        values = enc.get("values")
        if values is None or len(values) == 0:
            continue
        offsets = enc.get("offsets")
        if offsets is not None and len(offsets) > 0:  # strings: utf-8 bytes + offsets
            raw = np.asarray(values).astype(np.uint8).tobytes()
            off = np.asarray(offsets, dtype=np.int64)
            out[j] = [raw[off[i]: off[i + 1]].decode("utf-8") for i in range(len(off) - 1)]
        else:
            arr = np.asarray(values)
            out[j] = arr.tolist()
    return out


def _parse_base_score(text) -> np.ndarray:
    if isinstance(text, (int, float)):
        return np.array([float(text)], dtype=np.float32)
    s = str(text).strip()
    if s.startswith("["):
        s = s[1:-1]
    return np.array([float(v) for v in s.split(",") if v.strip()], dtype=np.float32)


def base_margin(objective: str, base: np.ndarray, n_margins: int) -> np.ndarray:
    """``base_score`` (prediction space, float32) -> the margin XGBoost starts from."""
    b = np.asarray(base, dtype=np.float32)
    if objective in _BASE_LOGIT:
        with np.errstate(divide="ignore"):
            m = -np.log(np.float32(1.0) / b - np.float32(1.0))
    elif objective in _BASE_LOG:
        m = np.log(b)
    else:
        m = b
    m = np.asarray(m, dtype=np.float64)
    if m.size == 1 and n_margins > 1:
        m = np.repeat(m, n_margins)
    if m.size != n_margins:
        raise PdpxError(f"XGBoost base_score has {m.size} values for {n_margins} outputs")
    return m


# ---------------------------------------------------------------- extraction
def read_booster(booster) -> dict:
    """The ``learner`` part of the booster's model, from UBJSON (JSON as a fallback)."""
    try:
        return ubj_loads(booster.save_raw("ubj"))["learner"]
    except Exception:  # pragma: no cover - a format this reader does not know
        return json.loads(bytes(booster.save_raw("json")))["learner"]


def extract_trees(learner: dict, rounds: int) -> dict:
    """Node and tree arrays (keyword arguments of TreeEnsemble) for the first ``rounds`` rounds."""
    gb = learner["gradient_booster"]
    weights = None
    if gb.get("name") == "dart":
        model = gb["gbtree"]["model"]
        weights = np.asarray(gb.get("weight_drop", []), dtype=np.float64)
    elif gb.get("name") == "gbtree":
        model = gb["model"]
    else:
        raise PdpxError(f"XGBoost booster {gb.get('name')!r} has no trees")
    trees = model["trees"]
    indptr = model.get("iteration_indptr")
    if indptr is not None and len(indptr) > rounds:
        n_used = int(indptr[rounds])
    else:  # older models: trees per round = num_parallel_tree * max(num_class, 1)
        npt = int(model["gbtree_model_param"].get("num_parallel_tree", "1"))
        k = max(1, int(learner["learner_model_param"].get("num_class", "0")))
        n_used = min(len(trees), rounds * npt * k)
    if n_used <= 0:
        raise PdpxError("the XGBoost model has no trees in the rounds it predicts with")
    trees = trees[:n_used]
    tree_info = np.asarray(model["tree_info"][:n_used], dtype=np.int64)

    lefts, rights, feats, conds, dleft, stypes, hess, vals = [], [], [], [], [], [], [], []
    cat_nodes = []  # (tree, node_in_tree, codes)
    vector = False
    for t, tree in enumerate(trees):
        left = np.asarray(tree["left_children"], dtype=np.int64)
        right = np.asarray(tree["right_children"], dtype=np.int64)
        split_idx = np.asarray(tree["split_indices"], dtype=np.int64)
        cond = np.asarray(tree["split_conditions"], dtype=np.float32)
        default_left = np.asarray(tree["default_left"], dtype=bool)
        stype = np.asarray(tree.get("split_type", np.zeros(len(left))), dtype=np.int64)
        sum_h = np.asarray(tree["sum_hessian"], dtype=np.float32).astype(np.float64)
        leaf_size = int(tree["tree_param"].get("size_leaf_vector", "1") or 1)
        if leaf_size > 1:
            vector = True
            value = np.asarray(tree["base_weights"], dtype=np.float32).astype(np.float64).reshape(len(left), leaf_size)
        else:
            value = cond.astype(np.float64)[:, None]
        codes_of = {}
        if len(tree.get("categories_nodes", [])):
            cats = np.asarray(tree["categories"], dtype=np.int64)
            seg = np.asarray(tree["categories_segments"], dtype=np.int64)
            size = np.asarray(tree["categories_sizes"], dtype=np.int64)
            for node, s0, sz in zip(np.asarray(tree["categories_nodes"], dtype=np.int64), seg, size):
                codes_of[int(node)] = cats[s0: s0 + sz]
        if int(tree["tree_param"].get("num_deleted", "0") or 0) > 0:
            order = _reachable(left, right)
            remap = np.full(len(left), -1, dtype=np.int64)
            remap[order] = np.arange(len(order))
            left = np.where(left[order] >= 0, remap[np.maximum(left[order], 0)], -1)
            right = np.where(right[order] >= 0, remap[np.maximum(right[order], 0)], -1)
            split_idx, cond, default_left = split_idx[order], cond[order], default_left[order]
            stype, sum_h, value = stype[order], sum_h[order], value[order]
            codes_of = {int(remap[k]): v for k, v in codes_of.items() if remap[k] >= 0}
        for node, codes in codes_of.items():
            cat_nodes.append((t, node, codes))
        lefts.append(left)
        rights.append(right)
        feats.append(split_idx)
        conds.append(cond)
        dleft.append(default_left)
        stypes.append(stype)
        hess.append(sum_h)
        vals.append(value)

    sizes = np.array([len(a) for a in lefts], dtype=np.int64)
    tree_start = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum(sizes, out=tree_start[1:])
    offs = np.repeat(tree_start[:-1], sizes)
    left = np.concatenate(lefts)
    right = np.concatenate(rights)
    is_leaf = left < 0
    left = np.where(is_leaf, -1, left + offs)
    right = np.where(is_leaf, -1, right + offs)
    feature = np.where(is_leaf, 0, np.concatenate(feats))
    threshold = np.where(is_leaf, 0.0, np.concatenate(conds).astype(np.float64))
    if vector:
        width = max(v.shape[1] for v in vals)
        value = np.concatenate([np.pad(v, ((0, 0), (0, width - v.shape[1]))) for v in vals])
    else:
        value = np.concatenate(vals)
    n = len(left)
    cat_offset = np.full(n, -1, dtype=np.int64)
    cat_nwords = np.zeros(n, dtype=np.int64)
    words: list[np.ndarray] = []
    pos = 0
    for t, node, codes in cat_nodes:
        g = int(tree_start[t]) + node
        codes = codes[codes >= 0]
        nw = int(codes.max()) // 32 + 1 if len(codes) else 1
        w = np.zeros(nw, dtype=np.uint32)
        np.bitwise_or.at(w, codes // 32, (np.uint32(1) << (codes % 32).astype(np.uint32)))
        words.append(w)
        cat_offset[g] = pos
        cat_nwords[g] = nw
        pos += nw
    stype = np.concatenate(stypes)
    bad = (stype == 1) & ~is_leaf & (cat_offset < 0)
    if np.any(bad):  # a categorical split without a category set: nothing goes right
        for g in np.flatnonzero(bad):
            words.append(np.zeros(1, dtype=np.uint32))
            cat_offset[g] = pos
            cat_nwords[g] = 1
            pos += 1
    tree_weight = np.ones(len(trees))
    if weights is not None and len(weights) >= n_used:
        tree_weight = weights[:n_used].astype(np.float32).astype(np.float64)
    out = dict(
        left=left, right=right, feature=feature, threshold=threshold,
        missing_left=np.concatenate(dleft), value=value, tree_start=tree_start,
        tree_group=np.where(tree_info >= 0, tree_info, 0) if not vector else np.full(len(trees), -1),
        node_weight=np.concatenate(hess), tree_weight=tree_weight,
        cat_offset=cat_offset, cat_nwords=cat_nwords,
        cat_words=np.concatenate(words) if words else np.zeros(0, dtype=np.uint32),
    )
    return out


def _reachable(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Nodes reachable from the root, in pre-order (drops deleted nodes)."""
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if left[node] >= 0:
            stack.append(int(right[node]))
            stack.append(int(left[node]))
    return np.asarray(order, dtype=np.int64)


# ------------------------------------------------------------------- UBJSON
# A small UBJSON (draft 12) reader for what XGBoost writes. Typed arrays
# (``[$d#L...``) come back as zero-copy big-endian numpy views of the buffer;
# lengths written as int64 ('L', XGBoost's choice) take an inlined fast path.
_UBJ_SCALAR = {
    ord("i"): struct.Struct(">b"), ord("U"): struct.Struct(">B"), ord("I"): struct.Struct(">h"),
    ord("l"): struct.Struct(">i"), ord("L"): struct.Struct(">q"), ord("d"): struct.Struct(">f"),
    ord("D"): struct.Struct(">d"),
}
_UBJ_DTYPE = {
    ord("i"): np.dtype(">i1"), ord("U"): np.dtype(">u1"), ord("I"): np.dtype(">i2"), ord("l"): np.dtype(">i4"),
    ord("L"): np.dtype(">i8"), ord("d"): np.dtype(">f4"), ord("D"): np.dtype(">f8"),
}
_OBJ, _OBJ_END, _ARR, _ARR_END = ord("{"), ord("}"), ord("["), ord("]")
_STR, _TYPE, _COUNT, _NOOP, _INT64 = ord("S"), ord("$"), ord("#"), ord("N"), ord("L")
_I64 = struct.Struct(">q").unpack_from


def ubj_loads(buf: bytes):
    """Decode UBJSON (as XGBoost writes it). Typed arrays become read-only numpy arrays."""
    buf = bytes(buf)
    value, _ = _ubj_value(buf, 1, buf[0])
    return value


def _ubj_int(buf, pos):
    if buf[pos] == _INT64:
        return _I64(buf, pos + 1)[0], pos + 9
    s = _UBJ_SCALAR[buf[pos]]
    return s.unpack_from(buf, pos + 1)[0], pos + 1 + s.size


def _ubj_value(buf, pos, marker):
    if marker == _OBJ:
        return _ubj_object(buf, pos)
    if marker == _ARR:
        return _ubj_array(buf, pos)
    if marker == _STR or marker == ord("H"):
        if buf[pos] == _INT64:
            n = _I64(buf, pos + 1)[0]
            pos += 9
        else:
            n, pos = _ubj_int(buf, pos)
        return buf[pos: pos + n].decode("utf-8"), pos + n
    s = _UBJ_SCALAR.get(marker)
    if s is not None:
        return s.unpack_from(buf, pos)[0], pos + s.size
    if marker == ord("T"):
        return True, pos
    if marker == ord("F"):
        return False, pos
    if marker == ord("Z"):
        return None, pos
    if marker == ord("C"):
        return chr(buf[pos]), pos + 1
    raise ValueError(f"UBJSON: unknown marker {chr(marker)!r} at byte {pos - 1}")


def _ubj_object(buf, pos):
    out = {}
    typ = count = None
    if buf[pos] == _TYPE:
        typ, pos = buf[pos + 1], pos + 2
    if buf[pos] == _COUNT:
        count, pos = _ubj_int(buf, pos + 1)
    i = 0
    while True:
        if count is not None:
            if i == count:
                return out, pos
            i += 1
        else:
            m = buf[pos]
            while m == _NOOP:
                pos += 1
                m = buf[pos]
            if m == _OBJ_END:
                return out, pos + 1
        if buf[pos] == _INT64:
            n = _I64(buf, pos + 1)[0]
            pos += 9
        else:
            n, pos = _ubj_int(buf, pos)
        key = buf[pos: pos + n].decode("utf-8")
        pos += n
        if typ is None:
            marker = buf[pos]
            pos += 1
        else:
            marker = typ
        out[key], pos = _ubj_value(buf, pos, marker)


def _ubj_array(buf, pos):
    typ = count = None
    if buf[pos] == _TYPE:
        typ, pos = buf[pos + 1], pos + 2
    if buf[pos] == _COUNT:
        if buf[pos + 1] == _INT64:
            count = _I64(buf, pos + 2)[0]
            pos += 10
        else:
            count, pos = _ubj_int(buf, pos + 1)
    if typ is not None and count is not None:
        dt = _UBJ_DTYPE.get(typ)
        if dt is not None:
            return np.frombuffer(buf, dtype=dt, count=count, offset=pos), pos + count * dt.itemsize
    out = []
    if count is not None:
        for _ in range(count):
            if typ is None:
                marker = buf[pos]
                pos += 1
            else:
                marker = typ
            v, pos = _ubj_value(buf, pos, marker)
            out.append(v)
        return out, pos
    while True:
        marker = buf[pos]
        pos += 1
        if marker == _ARR_END:
            return out, pos
        if marker == _NOOP:
            continue
        v, pos = _ubj_value(buf, pos, marker)
        out.append(v)


@hookimpl(tryfirst=True)
def pdpx_adapt_model(model):
    if is_xgboost_model(model):
        return XGBoostAdapter(model)
    return None
