"""XGBoost: the scikit-learn wrappers (``XGBRegressor``, ``XGBClassifier``, ``XGBRF*``,
``XGBRanker``) and a raw ``xgboost.Booster``; the plugin that recognises them.

Prediction goes through XGBoost's own predict (what ``brute`` uses). The trees
are read by :mod:`pdpx.adapters.xgboost_trees` from ``booster.save_raw("ubj")``
(:mod:`pdpx.adapters.ubjson`), which documents the semantics carried into the IR.
The scikit-learn wrapper predicts with ``best_iteration + 1`` rounds after early
stopping, a raw Booster with all of them: the IR follows the object given.

XGBoost is imported only when a model of it is met.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import numpy as np
import pandas as pd

from ..core.adapter import TIME_RESPONSES, as_2d
from ..core.booster import BoosterAdapter, Extracted, library_classes, link_problem, self_check
from ..core.errors import PdpxError
from ..core.forksafe import single_threaded
from ..core.hookspecs import hookimpl
from ..core.ir import fingerprint, model_cache
from ..core.times import aft_curves, time_names
from .ubjson import ubj_loads
from .xgboost_trees import (
    CLASSIFIER_OBJECTIVES,
    EXP_OBJECTIVES,
    IDENTITY_OBJECTIVES,
    LOGISTIC_OBJECTIVES,
    SOFTMAX_OBJECTIVES,
    XGBoostEncoder,
    build_ensemble,
    model_categories,
    read_booster,
)


def is_xgboost_model(model) -> bool:
    """True for XGBoost scikit-learn wrappers and Boosters (without importing xgboost)."""
    names = library_classes(model, "xgboost", excluded=("xgboost.dask", "xgboost.spark"))
    return "Booster" in names or "XGBModel" in names



class XGBoostAdapter(BoosterAdapter):
    """An XGBoost scikit-learn wrapper or Booster: XGBoost's predict, and its trees read from the UBJSON model."""
    library = "xgboost"
    library_roots = ("xgboost",)
    booster_methods = ("inplace_predict", "predict")
    library_name = "XGBoost"

    def __init__(self, model: Any):
        super().__init__(model)
        self._learner: dict | None = None
        self._learner_key: tuple | None = None
        #: the booster's serialised model and its fingerprint, as last read (by :meth:`fingerprint`)
        self._serialised: tuple | None = None
        #: categories of X's pandas category columns, by position (recorded by
        #: validate_columns; used for models that carry no categories of their own)
        self._frame_categories: dict[int, list] = {}
        self._columns: list[str] = []

    @property
    def thread_safe(self) -> bool:  # XGBoost's predict is thread safe for gbtree and dart only
        try:
            return self._booster_name() != "gblinear"
        except Exception:
            return False

    # --------------------------------------------------------------- facts
    def booster(self):
        if self.raw:
            return self.model
        return self.model.get_booster()

    def check_fitted(self):
        try:
            booster = self.booster()
        except Exception as exc:  # xgboost raises sklearn's NotFittedError
            raise self.not_fitted() from exc
        if self._boosted_rounds(booster) == 0 and self._booster_name() != "gblinear":
            raise self.not_fitted(f"this XGBoost {type(self.model).__name__} has no boosting rounds; train it first")

    def _contents_key(self) -> tuple:
        """What the per-adapter caches (config, parsed model) are keyed on: the booster, its rounds and the last
        fingerprint read (a model loaded in place changes it)."""
        booster = self.booster()
        key = (id(booster), self._boosted_rounds(booster))
        last = self._serialised
        return key + (last[3] if last is not None and last[:2] == key else None,)

    def _lock(self):
        """The booster's lock (:meth:`pdpx.core.ir.ModelCache.lock`): XGBoost refuses to save a booster whose
        setting another thread has just changed (``Call Configure before saving model``), and a setting changed
        while another thread predicts races with it. So pdpx saves the booster and changes its thread count
        holding the lock alone, and predicts holding it shared."""
        return model_cache.lock(self.booster())

    def _boosted_rounds(self, booster) -> int:
        """The booster's rounds (XGBoost refuses to count them while another thread changes a setting)."""
        with self._lock().shared():
            return booster.num_boosted_rounds()

    def _config(self) -> dict:
        booster = self.booster()
        key = self._contents_key()
        if getattr(self, "_config_key", None) != key:
            with self._lock().exclusive(), single_threaded():
                self._config_cache = json.loads(booster.save_config())["learner"]
            self._config_key = key
        return self._config_cache

    def _booster_name(self) -> str:
        if not self.raw:
            name = getattr(self.model, "booster", None)
            if isinstance(name, str):
                return name
        return self._config()["gradient_booster"]["name"]

    def objective(self) -> str:
        """The objective's name as the booster records it (e.g. ``binary:logistic``)."""
        return self._config()["objective"]["name"]

    def feature_names(self):
        booster = self.booster()
        with self._lock().shared():  # the wrapper's names are the booster's
            if not self.raw:
                names = getattr(self.model, "feature_names_in_", None)
                if names is not None:
                    return [str(n) for n in names]
            names = booster.feature_names
        return list(names) if names is not None else None

    def n_features(self) -> int:
        booster = self.booster()
        with self._lock().shared():
            return int(booster.num_features())

    def validate_columns(self, X):
        X = super().validate_columns(X)
        self._columns = [str(c) for c in X.columns]
        self._frame_categories.clear()
        for j in range(X.shape[1]):
            if isinstance(X.dtypes.iloc[j], pd.CategoricalDtype):
                self._frame_categories[j] = list(X.iloc[:, j].cat.categories)
        return X

    def is_classifier(self):
        if self.raw:
            return self.objective() in CLASSIFIER_OBJECTIVES
        return any(k.__name__ == "XGBClassifier" for k in type(self.model).__mro__)

    def n_classes(self) -> int:
        if not self.raw:
            n = getattr(self.model, "n_classes_", None)
            if n is not None:
                return int(n)
        k = int(self._config()["learner_model_param"].get("num_class", "0"))
        return max(k, 2)

    def n_outputs(self) -> int:
        param = self._config()["learner_model_param"]
        return max(1, int(param.get("num_target", "1")))

    def responses(self):
        if self.is_classifier() and self.objective() == "binary:logitraw":
            return ["raw"]
        if self.aft() is not None:  # an AFT model's survival curves, from the margin (docs/survival.md)
            return super().responses() + list(TIME_RESPONSES)
        if self.objective() == "survival:cox":  # its predict is the hazard ratio exp(f): the risk
            return super().responses() + ["risk"]
        return super().responses()

    def output_names(self, response):
        if response in TIME_RESPONSES:
            return time_names(self.times)
        return super().output_names("predict" if response == "risk" else response)

    def prediction_path(self, response):
        return super().prediction_path("predict" if response == "risk" else response)

    def tree_model(self, response):
        """The trees of ``response`` (a Cox model's risk: its predict's)."""
        return super().tree_model("predict" if response == "risk" else response)

    def aft(self) -> tuple[str, float] | None:
        """``(distribution, scale)`` of a ``survival:aft`` model (``normal``, ``logistic`` or ``extreme``), else
        None."""
        if self.objective() != "survival:aft":
            return None
        param = self._config()["objective"].get("aft_loss_param", {})
        return (str(param.get("aft_loss_distribution", "normal")),
                float(np.float32(param.get("aft_loss_distribution_scale", 1.0))))  # the float32 XGBoost holds

    # ---------------------------------------------------------- prediction
    def stored_categories(self) -> dict[int, list]:
        """Categories saved with the model (XGBoost >= 3.1), by feature position."""
        learner = self.learner()
        if getattr(self, "_stored_key", None) != self._learner_key:
            self._stored = model_categories(learner)
            self._stored_key = self._learner_key
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
        if response == "risk":
            return self.predict(X, "predict")
        if response in TIME_RESPONSES:
            return aft_curves(self.predict(X, "raw")[:, 0], self.times, *self.aft(), response)
        self._check_categories(X)
        data = self.model_input(X)
        if not self.raw:
            with self._lock().shared():  # never while pdpx changes the booster's thread count (:meth:`_lock`)
                return self.wrapper_predict(data, response, {"output_margin": True})
        b = self.model
        if response not in self.responses():
            raise PdpxError(f"this XGBoost Booster has no response {response!r}; use one of {self.responses()}")
        softmax = self.objective() == "multi:softmax"  # read before the lock is held shared (it may save the config)
        margin = response == "raw" or (response == "predict_proba" and softmax)
        with self._lock().shared():
            try:
                pred = b.inplace_predict(data, predict_type="margin" if margin else "value")
            except TypeError:  # data types inplace_predict does not take
                import xgboost

                pred = b.predict(xgboost.DMatrix(data, enable_categorical=True), output_margin=margin)
        pred = as_2d(pred)
        if response == "predict_proba":
            if softmax:
                z = pred - pred.max(axis=1, keepdims=True)
                e = np.exp(z)
                return e / e.sum(axis=1, keepdims=True)
            if pred.shape[1] == 1:
                return np.hstack([1.0 - pred, pred])
        return pred

    # ------------------------------------------------------ tree structure
    def _rounds(self) -> int:
        """Boosting rounds the model predicts with."""
        total = self._boosted_rounds(self.booster())
        if not self.raw:
            try:
                with self._lock().shared():  # an attribute of the booster
                    best = self.model.best_iteration
            except AttributeError:
                best = None
            if best is not None:
                return min(total, int(best) + 1)
        return total

    def learner(self) -> dict:
        """The booster's model, parsed (cached per booster, rounds and fingerprint)."""
        booster = self.booster()
        key = self._contents_key()
        if self._learner is None or self._learner_key != key:
            last = self._serialised
            try:  # the bytes the fingerprint was read from, when they are this booster's
                self._learner = ubj_loads(last[2])["learner"] if key[2] is not None else self._read(booster)
            except Exception:  # noqa: BLE001 - a format this reader does not know: read_booster's fallback
                self._learner = self._read(booster)
            self._learner_key = key
        return self._learner

    def _read(self, booster) -> dict:
        with self._lock().exclusive():
            return read_booster(booster)

    def link_unavailable(self, response) -> str | None:
        name = self._booster_name()
        if name == "gblinear":
            return "an XGBoost gblinear model is linear, it has no trees; use method='brute'"
        if not self.raw and callable(getattr(self.model, "objective", None)) and response != "raw":
            return (
                "the model was trained with a custom objective, so pdpx does not know its link; "
                "use response='raw' or method='brute'"
            )
        obj = self.objective()
        if response in TIME_RESPONSES:
            return ("XGBoost's AFT survival 1 - F((log t - f) / scale) is a per-row transform of the margin f, not "
                    "a sum of leaves: brute computes it from the model's margins")
        if response == "raw":
            return None
        if response == "predict_proba":
            if obj == "binary:logistic" or obj in SOFTMAX_OBJECTIVES:
                return None
            return f"predict_proba of objective {obj!r} is not a function of the tree margins pdpx can reproduce"
        if obj in IDENTITY_OBJECTIVES or obj in LOGISTIC_OBJECTIVES or obj in EXP_OBJECTIVES:
            return None
        return (
            f"pdpx does not know how XGBoost objective {obj!r} maps margins to predictions; "
            "use response='raw' or method='brute'"
        )

    def tree_state(self, response):
        # what can change without a refit: the rounds used, the wrapper's missing value
        return f"rounds={self._rounds()}#missing={getattr(self.model, 'missing', None)}"

    @contextlib.contextmanager
    def one_thread(self):
        """The booster's own thread count set to one for the block and restored after (XGBoost takes it from the
        booster, not from OpenMP; xgboost.config_context(nthread=1) would leave the process on one thread)."""
        booster = self.booster()
        with self._lock().exclusive():  # no other thread saves or predicts with the booster meanwhile
            with single_threaded():
                before = json.loads(booster.save_config())["learner"]["generic_param"].get("nthread", "0")
            booster.set_param({"nthread": 1})
            try:
                with single_threaded():
                    yield
            finally:
                booster.set_param({"nthread": int(before)})

    def fingerprint(self) -> str:
        """A digest of the booster's UBJSON model (``save_raw("ubj")``: trees, objective, base score): a model
        loaded into the same object (``load_model``, ``load_config``) or trees refreshed in place change it.
        It costs 0.2 to 0.45 of one ``predict`` of 1,000 rows (200 trees of depth 6); the bytes are
        kept for :meth:`learner` when the trees must be read again."""
        booster = self.booster()
        # serialising may enter an OpenMP region: no pool started behind the user's back; never while another
        # thread changes a setting of the booster (:meth:`_lock`)
        with self._lock().exclusive(), single_threaded():
            raw = booster.save_raw("ubj")
            self._serialised = (id(booster), booster.num_boosted_rounds(), raw, fingerprint(raw))
        return self._serialised[3]

    def key_objects(self):
        return (self.booster(),)

    def encoder(self, entry):
        categories, missing = entry.encoding
        return XGBoostEncoder(categories, self._frame_categories, missing, self._columns)

    def build_trees(self, response: str):
        rounds = self._rounds()
        learner = self.learner()
        ens = build_ensemble(learner, response, rounds, n_features=self.n_features(),
                             description=f"XGBoost {type(self.model).__name__} ({self.objective()}, {rounds} rounds)")
        problem = self_check(ens, self._reference_nan_margin(rounds, ens.n_features))
        if problem is None and response != "raw":
            problem = self._link_problem(ens, rounds)
        if problem:
            return self.unreproduced(problem)
        missing = np.nan
        if not self.raw:
            m = getattr(self.model, "missing", np.nan)
            missing = np.nan if m is None else float(m)
        return Extracted(
            ensemble=ens,
            encoding=(model_categories(learner), missing),
            # said by recursion only (exact's answers do not depend on it)
            recursion_weights="hessian sums (XGBoost's cover, sum_hessian), equal to training row counts only "
                              "for squared error",
        )

    def forest_members(self, response: str, tm):
        """For ``interval="members"``: the trees of a random forest trained as one round of ``num_parallel_tree``
        trees (``XGBRFRegressor``, ``XGBRFClassifier``, or ``num_boost_round=1``) read as a forest. XGBoost sums
        them, each leaf value scaled by ``1 / num_parallel_tree``, so a tree's own prediction is the base score
        plus its leaf value times the number of trees, and the model's is their mean. None when each round has
        one tree (boosted trees); an error for several rounds of forests (each corrects the rounds before it)."""
        from dataclasses import replace

        gb = self.learner()["gradient_booster"]
        parallel = int(gb.get("model", {}).get("gbtree_model_param", {}).get("num_parallel_tree", "1") or 1) \
            if gb.get("name") == "gbtree" else 1
        if parallel < 2:
            return None
        rounds = self._rounds()
        if rounds > 1:
            raise PdpxError(
                f"interval='members' cannot draw the members of this XGBoost {type(self.model).__name__}: it has "
                f"{rounds} boosting rounds of {parallel} parallel trees, and each round's trees correct the rounds "
                "before them, so no tree is a predictor on its own. Its trees are members when the forest is one "
                "round (XGBRFRegressor, XGBRFClassifier, or num_parallel_tree with num_boost_round=1). Use "
                "interval='bootstrap' (the spread over the rows), or pass refit models as a dict "
                "{'fold1': model1, ...} with interval='members'")
        ens = tm.ensemble
        forest = ens.derived("forest_members", lambda: replace(ens, value=ens.value * parallel, aggregation="mean"))
        return replace(tm, ensemble=forest)

    def _link_problem(self, ens, rounds: int) -> str | None:
        """Compare the IR's link on an all-NaN row with XGBoost's own transformed prediction."""
        if self.objective() == "multi:softmax":  # XGBoost's value is the class; predict_proba is softmax
            return None
        row = np.full((1, ens.n_features), np.nan)
        try:  # on one thread, as _reference_nan_margin (a forked child deadlocks on a started OpenMP pool)
            with self.one_thread():
                theirs = self.booster().inplace_predict(
                    row, predict_type="value", iteration_range=(0, rounds), validate_features=False
                )
        except Exception:  # pragma: no cover - no check possible
            return None
        return link_problem(ens, theirs, rtol=1e-5, atol=1e-7, theirs_are="XGBoost's prediction is")

    def _reference_nan_margin(self, rounds: int, n_features: int) -> np.ndarray | None:
        """XGBoost's own margin for one row of missing values (None if it cannot say)."""
        # on one thread: XGBoost's OpenMP pool, once started, deadlocks a forked child that uses it. (Not
        # xgboost.config_context(nthread=1): leaving it leaves the whole process's OpenMP on one thread.)
        row = np.full((1, n_features), np.nan)
        try:
            with self.one_thread():
                pred = self.booster().inplace_predict(
                    row, predict_type="margin", iteration_range=(0, rounds), validate_features=False
                )
        except Exception:  # pragma: no cover - no check possible
            return None
        return np.asarray(pred, dtype=np.float64).reshape(-1)


@hookimpl(tryfirst=True)
def pdpx_adapt_model(model):
    """The XGBoost adapter for XGBoost models (recognised without importing xgboost)."""
    if is_xgboost_model(model):
        return XGBoostAdapter(model)
    return None

