"""LightGBM: ``LGBMRegressor``, ``LGBMClassifier``, ``LGBMRanker`` and a raw
``lightgbm.Booster``; the plugin that recognises them.

Prediction goes through LightGBM's own predict (what ``brute`` uses). The trees
are read by :mod:`pdpx.adapters.lightgbm_trees` from the model text, which
documents the semantics carried into the IR. Two facts of prediction belong
here: the number of iterations used is the booster's ``best_iteration`` when set
(early stopping), else all of them, as LightGBM's predict does; in random-forest
mode (``average_output``) predictions average the trees, while
``raw_score=True`` returns their sum.

LightGBM is imported only when a model of it is met.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..core.adapter import as_2d
from ..core.booster import (
    BoosterAdapter,
    Extracted,
    Unavailable,
    library_classes,
    link_problem,
    self_check,
)
from ..core.errors import PdpxError
from ..core.hookspecs import hookimpl
from ..core.ir import fingerprint
from .lightgbm_trees import (
    CLASSIFIER_OBJECTIVES,
    EXP_OBJECTIVES,
    IDENTITY_OBJECTIVES,
    LightGBMEncoder,
    frame_categories,
    parse_header,
    parse_model_string,
    parse_objective,
)

_DEFAULT_NAMES = re.compile(r"Column_\d+$")


def is_lightgbm_model(model) -> bool:
    """True for LightGBM scikit-learn estimators and Boosters (without importing lightgbm)."""
    names = library_classes(model, "lightgbm", excluded=("lightgbm.dask",))
    return "Booster" in names or "LGBMModel" in names



class LightGBMAdapter(BoosterAdapter):
    """A LightGBM scikit-learn estimator or Booster: LightGBM's predict, and its trees read from the model text."""
    library = "lightgbm"
    library_roots = ("lightgbm",)
    library_name = "LightGBM"

    def __init__(self, model: Any):
        super().__init__(model)
        #: categories LightGBM codes X's pandas category columns by, by position
        #: (recorded by validate_columns, used for grid values)
        self._frame_categories: dict[int, list] = {}
        #: the model text and its fingerprint, as last read (by :meth:`fingerprint`)
        self._text: tuple | None = None

    # --------------------------------------------------------------- facts
    def booster(self):
        if self.raw:
            return self.model
        return self.model.booster_

    def check_fitted(self):
        try:
            booster = self.booster()
        except Exception as exc:  # LGBMNotFittedError
            raise self.not_fitted() from exc
        if booster.num_trees() == 0:
            raise self.not_fitted(f"this LightGBM {type(self.model).__name__} has no trees; train it first")

    def _header(self) -> dict:
        booster = self.booster()
        key = (id(booster), booster.current_iteration(), self._text[3] if self._text is not None else None)
        if getattr(self, "_header_key", None) != key:
            text = booster.model_to_string(num_iteration=1)
            self._header_cache = parse_header(text[: text.find("\nTree=")] if "\nTree=" in text else text)
            self._header_key = key
        return self._header_cache

    def objective(self) -> tuple[str, dict]:
        return parse_objective(self._header().get("objective", "none"))

    def feature_names(self):
        if not self.raw:
            names = getattr(self.model, "feature_names_in_", None) if self._fitted_on_frame() else None
            return [str(n) for n in names] if names is not None else None
        names = self.booster().feature_name()
        if all(_DEFAULT_NAMES.match(n) for n in names):
            return None
        return list(names)

    def _fitted_on_frame(self) -> bool:
        try:
            return getattr(self.model, "feature_names_in_", None) is not None
        except AttributeError:
            return False

    def n_features(self) -> int:
        return int(self.booster().num_feature())

    def column_key(self, name):
        """LightGBM stores column names with spaces replaced by underscores."""
        return name.replace(" ", "_")

    def validate_columns(self, X):
        X = super().validate_columns(X)
        self._frame_categories.clear()
        self._frame_categories.update(frame_categories(X, self.booster().pandas_categorical))
        return X

    def is_classifier(self):
        if self.raw:
            return self.objective()[0] in CLASSIFIER_OBJECTIVES
        return any(k.__name__ == "LGBMClassifier" for k in type(self.model).__mro__)

    def n_classes(self) -> int:
        k = int(self._header().get("num_class", "1"))
        return 2 if k == 1 else k

    def n_outputs(self) -> int:
        return int(self._header().get("num_tree_per_iteration", "1"))

    def _custom_classifier(self) -> bool:
        """A classifier trained with a custom (callable) objective: LightGBM stores no objective
        and its ``predict_proba`` returns the raw scores, not probabilities."""
        return self.is_classifier() and self.objective()[0] in ("none", "custom")

    def responses(self):
        if self._custom_classifier():
            return ["raw"]
        return super().responses()

    # ---------------------------------------------------------- prediction
    def predict(self, X, response):
        data = self.model_input(X)
        if response not in self.responses():
            why = ""
            if self._custom_classifier():
                why = (" (it was trained with a custom objective, so LightGBM's predict_proba returns raw scores,"
                       " not probabilities)")
            raise PdpxError(
                f"this LightGBM {type(self.model).__name__} has no response {response!r}{why}; "
                f"use one of {self.responses()}"
            )
        if not self.raw:
            return self.wrapper_predict(data, response, {"raw_score": True})
        pred = as_2d(self.model.predict(data, raw_score=response == "raw"))
        if response == "predict_proba" and pred.shape[1] == 1:
            return np.hstack([1.0 - pred, pred])
        return pred

    # ------------------------------------------------------ tree structure
    def _iterations(self) -> int:
        """Iterations LightGBM predicts with: ``best_iteration`` if set, else all."""
        booster = self.booster()
        best = int(getattr(booster, "best_iteration", 0) or 0)
        total = int(booster.current_iteration())
        return min(best, total) if best > 0 else total

    def _link(self, response: str) -> tuple[str, float, str, str | None]:
        """(link, link_scale, aggregation, reason-if-unavailable) for ``response``."""
        header = self._header()
        name, params = self.objective()
        rf = "average_output" in header
        if response == "raw":
            return "identity", 1.0, "sum", None
        agg = "mean" if rf else "sum"
        scale = float(params.get("sigmoid", 1.0))
        if name == "binary":
            return ("binary_logistic" if response == "predict_proba" else "logistic"), scale, agg, None
        if name == "multiclass":
            return "softmax", 1.0, agg, None
        if name == "multiclassova":
            return "logistic", scale, agg, None
        if name in ("cross_entropy", "xentropy"):  # p = sigmoid(score), no sigmoid parameter
            return ("binary_logistic" if response == "predict_proba" else "logistic"), 1.0, agg, None
        # an allow-list: only objectives whose predict pdpx has checked against LightGBM's
        known = name in EXP_OBJECTIVES or name in IDENTITY_OBJECTIVES
        if known and "sqrt" not in params and response == "predict" and not self.is_classifier():
            return ("exp" if name in EXP_OBJECTIVES else "identity"), 1.0, agg, None
        what = f"{name} {' '.join(k for k in params)}".strip()
        return "identity", 1.0, agg, (
            f"LightGBM objective {what!r} with response {response!r} is not one pdpx knows how LightGBM's "
            "predict transforms from the tree margins, so the tree engine cannot reproduce it; method='brute' "
            "(what method='auto' uses) calls the model's own predict, or use response='raw'"
        )

    def link_unavailable(self, response) -> str | None:
        if response not in self.responses():
            return f"no response {response!r}"
        return self._link(response)[3]

    def tree_state(self, response):
        return f"iterations={self._iterations()}"

    def fingerprint(self) -> str:
        """A digest of the model text of the iterations LightGBM predicts with (``model_to_string``): a model
        loaded into the same Booster (``model_from_string``) or a leaf changed in place (``set_leaf_output``)
        changes it. The text costs about one ``predict`` of 1,000 rows (200 trees of 31 leaves); it is kept for
        :meth:`build_trees` when the trees must be read again."""
        booster = self.booster()
        n_iter = self._iterations()
        text = booster.model_to_string(num_iteration=n_iter)
        self._text = (id(booster), n_iter, text, fingerprint(text))
        return self._text[3]

    def key_objects(self):
        return (self.booster(),)

    def encoder(self, entry):
        return LightGBMEncoder(self.booster().pandas_categorical, self._frame_categories, entry.encoding)

    def build_trees(self, response: str):
        from ..core.ir import TreeEnsemble

        booster = self.booster()
        n_iter = self._iterations()
        last = self._text  # the text the fingerprint was read from, when it is this booster's
        text = last[2] if last is not None and last[:2] == (id(booster), n_iter) else \
            booster.model_to_string(num_iteration=n_iter)
        header, parts = parse_model_string(text)
        if parts is None:
            return Unavailable(
                "this LightGBM model has linear trees (linear_tree=True): its leaves are linear models, "
                "not constants, so only method='brute' can compute its partial dependence"
            )
        link, scale, agg, _ = self._link(response)
        K = int(header.get("num_tree_per_iteration", "1"))
        n_trees = len(parts["tree_start"]) - 1
        ens = TreeEnsemble(
            n_features=int(header.get("max_feature_idx", self.n_features() - 1)) + 1,
            n_margins=K,
            tree_group=np.arange(n_trees) % K,
            comparison="<=",
            float32_input=False,
            categories_go_left=True,
            aggregation=agg,
            link=link,
            link_scale=scale,
            description=f"LightGBM {type(self.model).__name__} ({header.get('objective', '')}, {n_iter} iterations)",
            **parts,
        )
        try:
            row = np.full((1, ens.n_features), np.nan)
            # one thread: LightGBM's OpenMP pool, once started, deadlocks a forked child that uses it
            reference = np.asarray(booster.predict(row, raw_score=True, num_iteration=n_iter, num_threads=1),
                                   dtype=np.float64)
            if agg == "mean":  # raw_score sums the trees; the IR averages them
                reference = reference / n_iter
        except Exception:  # pragma: no cover - no check possible
            reference = None
        problem = self_check(ens, reference, rel=1e-12)
        if problem:
            return self.unreproduced(problem)
        if response != "raw":
            problem = self._link_problem(ens, booster, row, n_iter)
            if problem:
                return self.unreproduced(problem)
        cat_features = np.unique(ens.feature[(ens.left >= 0) & (ens.cat_offset >= 0)])
        return Extracted(
            ensemble=ens,
            encoding={int(j) for j in cat_features},
            recursion_weights="hessian sums (LightGBM internal_weight / leaf_weight; these equal training row "
                              "counts only for squared error without sample weights)",
        )

    @staticmethod
    def _link_problem(ens, booster, row, n_iter) -> str | None:
        """Compare the IR's link on an all-NaN row with LightGBM's own (transformed) predict."""
        try:
            theirs = as_2d(np.asarray(booster.predict(row, num_iteration=n_iter, num_threads=1), dtype=np.float64))
        except Exception:  # pragma: no cover - no check possible
            return None
        return link_problem(ens, theirs, rtol=1e-9, atol=1e-12, theirs_are="LightGBM's predict gives")


@hookimpl(tryfirst=True)
def pdpx_adapt_model(model):
    """The LightGBM adapter for LightGBM models (recognised without importing lightgbm)."""
    if is_lightgbm_model(model):
        return LightGBMAdapter(model)
    return None

