"""The adapter of CatBoost models: ``CatBoostRegressor``, ``CatBoostClassifier``, ``CatBoostRanker``
and plain ``catboost.CatBoost``.

Prediction is CatBoost's own ``predict`` (what ``brute`` uses). The trees are read from
the model's binary format (or its JSON export) by :mod:`pdpx_catboost.cbm` and
:mod:`pdpx_catboost.trees` into pdpx's tree representation, once per fitted state, and
checked against CatBoost's own margin before use. What every boosting library shares
(responses, output names, the column check, the tree cache and its reasons) comes from
pdpx's public :class:`pdpx.extend.BoosterAdapter`.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile

import numpy as np
import pandas as pd

from pdpx.extend import (
    BoosterAdapter,
    Extracted,
    PdpxError,
    Unavailable,
    aft_curves,
    as_2d,
    library_classes,
    model_cache,
    time_names,
)

from .cbm import read_cbm
from .encoder import CatBoostEncoder
from .trees import Unreadable, read_arrays, read_model

#: Losses whose probabilities are the logistic of one margin, a softmax of several,
#: or a logistic per class (one-vs-all).
BINARY_LOSSES = {"Logloss", "CrossEntropy"}
SOFTMAX_LOSSES = {"MultiClass"}
ONE_VS_ALL_LOSSES = {"MultiClassOneVsAll"}
CLASSIFIER_LOSSES = BINARY_LOSSES | SOFTMAX_LOSSES | ONE_VS_ALL_LOSSES
#: The allow-list of regression losses, by what ``CatBoostRegressor.predict`` (its default
#: prediction type) does to the margins, each checked against CatBoost 1.2 (tests/test_catboost_losses.py).
#: Identity: the prediction is the margin.
IDENTITY_LOSSES = {
    "RMSE", "MAE", "Quantile", "MAPE", "Huber", "Expectile", "LogLinQuantile", "Lq", "LogCosh",
    "MultiQuantile", "MultiRMSE", "Cox", "SurvivalAft",
}
#: exp of the margin (CatBoost's ``Exponent``).
EXPONENT_LOSSES = {"Poisson", "Tweedie"}
#: Losses of CatBoostRanker, whose predict has no prediction type: it returns the margin.
RANKING_LOSSES = {
    "YetiRank", "YetiRankPairwise", "PairLogit", "PairLogitPairwise", "QueryRMSE", "QuerySoftMax",
    "LambdaMart", "StochasticFilter", "StochasticRank", "QueryCrossEntropy",
}
#: A survival model's responses with one output per time (``times=``, docs/survival.md).
TIME_RESPONSES = ("survival", "cumulative_hazard")
#: CatBoost's names of the SurvivalAft distributions, as pdpx's :func:`aft_curves` names them.
AFT_DISTRIBUTIONS = {"normal": "normal", "logistic": "logistic", "extreme": "extreme"}
#: Losses whose predict pdpx knows not to reproduce from the trees, and why.
REFUSED_LOSSES = {
    "RMSEWithUncertainty": "its predict returns two columns per row, the mean (the first margin) and the "
                           "variance (exp of twice the second margin), two links the tree engine does not combine",
}



def clear_cache() -> None:
    """Forget every tree model read so far, of every library (pdpx's cache; the next call reads the trees again)."""
    model_cache.clear()


def catboost_classes(model) -> set[str]:
    """Names of the catboost classes of ``model``'s type (without importing catboost)."""
    return library_classes(model, "catboost")


def is_catboost_model(model) -> bool:
    """True for CatBoost models: instances of ``catboost.CatBoost`` and its subclasses."""
    return "CatBoost" in catboost_classes(model)


class CatBoostAdapter(BoosterAdapter):
    """A CatBoost model: CatBoost's predict, and its trees read from its binary model or JSON export."""

    library = "catboost"
    library_roots = ("catboost",)
    #: a plain CatBoost model answers every response through predict (its prediction_type)
    response_methods = {"predict": "predict", "predict_proba": "predict_proba", "raw": "predict"}

    def prediction_path(self, response):
        """The model's method ``response`` calls: ``predict`` for a plain CatBoost model (it has no other)."""
        method = self.response_methods.get(response)
        if method is not None and not hasattr(self.model, method):
            method = "predict"
        return [(self.model, method)] if method else []
    library_name = "CatBoost"

    def __init__(self, model):
        super().__init__(model)
        self._columns: list = []
        self._templates: dict[int, object] = {}

    # --------------------------------------------------------------- facts
    def check_fitted(self):
        """A CatBoost model must be fitted (``is_fitted()``) and have trees."""
        if not self.model.is_fitted():
            raise self.not_fitted()

    def loss(self) -> str:
        """The loss function's name, without its parameters (``"Tweedie:variance_power=1.5"`` -> ``"Tweedie"``).

        Read once per adapter (once per call): CatBoost assembles every parameter to answer.
        """
        if "_loss" not in vars(self):
            params = self.model.get_all_params() if self.model.is_fitted() else self.model.get_params()
            self._loss = str(params.get("loss_function", "RMSE")).split(":")[0]
        return self._loss

    def _kind(self) -> str:
        names = catboost_classes(self.model)
        for kind in ("CatBoostClassifier", "CatBoostRegressor", "CatBoostRanker"):
            if kind in names:
                return kind
        return "CatBoost"

    def feature_names(self):
        """The model's feature names, or None when it was fitted without names ("0", "1", ...)."""
        names = [str(n) for n in (self.model.feature_names_ or [])]
        if names == [str(i) for i in range(len(names))]:
            return None
        return names

    def n_features(self) -> int:
        """The number of columns the model was fitted on (``n_features_in_`` is 0 on a model read by
        ``load_model`` or unpickled: its feature names tell then)."""
        return int(self.model.n_features_in_) or len(self.model.feature_names_ or [])

    def cat_positions(self) -> set[int]:
        """Positions of the categorical features."""
        return set(int(i) for i in self.model.get_cat_feature_indices())

    def loss_params(self) -> dict[str, str]:
        """The loss function's parameters (``"SurvivalAft:dist=Extreme;scale=1.5"`` -> ``{"dist": "Extreme",
        "scale": "1.5"}``)."""
        params = self.model.get_all_params() if self.model.is_fitted() else self.model.get_params()
        text = str(params.get("loss_function", "RMSE"))
        pairs = [p.split("=", 1) for p in text.split(":", 1)[1].split(";")] if ":" in text else []
        return {k.strip(): v.strip() for k, v in (p for p in pairs if len(p) == 2)}

    def aft(self) -> tuple[str, float] | None:
        """``(distribution, scale)`` of a ``SurvivalAft`` model (CatBoost's defaults: ``Normal``, 1), else None:
        ``log T = margin + scale * Z``, ``Z`` of that distribution."""
        if self.loss() != "SurvivalAft":
            return None
        if "_aft" not in vars(self):
            params = self.loss_params()
            dist = params.get("dist", "Normal")
            if dist.lower() not in AFT_DISTRIBUTIONS:
                raise PdpxError(f"CatBoost SurvivalAft distribution {dist!r} is not one pdpx knows "
                                "(Normal, Logistic, Extreme)")
            self._aft = (AFT_DISTRIBUTIONS[dist.lower()], float(params.get("scale", 1.0)))
        return self._aft

    def responses(self):
        """The booster's responses; a ``Cox`` model's ``risk`` too (its margin, the log hazard ratio), a
        ``SurvivalAft`` model's survival and cumulative hazard at the call's times."""
        base = super().responses()
        if self.is_classifier():
            return base
        if self.loss() == "Cox":
            return [*base, "risk"]
        if self.aft() is not None:
            return [*base, *TIME_RESPONSES]
        return base

    def response_refused(self, response):
        """A ``Cox`` model keeps no baseline hazard: it has no survival curve."""
        if self.loss() == "Cox" and response in TIME_RESPONSES:
            return ("CatBoost's Cox loss keeps no baseline hazard, so the model has no survival curve or cumulative "
                    "hazard; response='risk' is its margin, the log hazard ratio (CatBoost's predict)")
        return None

    def output_names(self, response):
        if response in TIME_RESPONSES:
            return time_names(self.times)
        if response == "risk":
            return [self.response_label(response)]
        return super().output_names(response)

    def is_classifier(self):
        """Classifiers, and plain CatBoost models trained with a classification loss."""
        return self._kind() == "CatBoostClassifier" or self.loss() in CLASSIFIER_LOSSES

    def n_outputs(self) -> int:
        """Targets of a multi-target regressor (the dimension of the model's bias)."""
        return len(np.atleast_1d(self.model.get_scale_and_bias()[1]))

    # ---------------------------------------------------------- prediction
    def validate_columns(self, X):
        """Columns as at fit time; categorical columns must have no missing values (CatBoost refuses them)."""
        X = super().validate_columns(X)
        self._columns = list(X.columns)
        self._templates.clear()
        for j in sorted(self.cat_positions()):
            col = X.iloc[:, j]
            if col.isna().any():
                raise PdpxError(
                    f"categorical feature {X.columns[j]!r} has missing values, which CatBoost does not accept; "
                    "fill them with a category of their own (e.g. 'NA') before fitting and before pdpx"
                )
            if len(col):
                self._templates[j] = col.iloc[0]
        return X

    def model_input(self, X: pd.DataFrame):
        """A float (or, with categorical features, object) array for models fitted without names, else X."""
        if self.feature_names() is None:
            return X.to_numpy(dtype=object) if self.cat_positions() else X.to_numpy(dtype=np.float64, na_value=np.nan)
        return X

    def predict(self, X, response):
        """CatBoost's predict: ``Probability``, ``RawFormulaVal`` or the model's default prediction."""
        data = self.model_input(X)
        if response == "predict_proba" and hasattr(self.model, "predict_proba"):  # a subclass's own, if it has one
            return as_2d(self.model.predict_proba(data))
        if response == "predict_proba":  # a plain CatBoost model
            return as_2d(self.model.predict(data, prediction_type="Probability"))
        if response == "raw" and self._kind() != "CatBoostRanker":  # a ranker predicts its raw margin
            return as_2d(self.model.predict(data, prediction_type="RawFormulaVal"))
        if response == "raw":
            return as_2d(self.model.predict(data))
        if response == "risk" and self.loss() == "Cox":  # the margin: the log hazard ratio
            return as_2d(self.model.predict(data, prediction_type="RawFormulaVal"))
        if response in TIME_RESPONSES and self.aft() is not None:
            margin = as_2d(self.model.predict(data, prediction_type="RawFormulaVal"))[:, 0]
            return aft_curves(margin, self.times, *self.aft(), response)
        if response == "predict":
            return as_2d(self.model.predict(data))
        raise PdpxError(f"{type(self.model).__name__} has no response {response!r}; use one of {self.responses()}")

    # ------------------------------------------------------ tree structure
    def link(self, response: str) -> str | None:
        """The map from margins to ``response``, or None when pdpx does not know it."""
        loss = self.loss()
        if response == "raw" or (response == "risk" and loss == "Cox"):
            return "identity"
        if response == "predict_proba":
            if loss in BINARY_LOSSES:
                return "binary_logistic"
            if loss in SOFTMAX_LOSSES:
                return "softmax"
            if loss in ONE_VS_ALL_LOSSES:
                return "logistic"
            return None
        if self._kind() == "CatBoost":  # a plain model's predict is RawFormulaVal: its margins
            return "identity"
        if self._kind() == "CatBoostRegressor":
            if loss in EXPONENT_LOSSES:
                return "exp"
            return "identity" if loss in IDENTITY_LOSSES else None
        if self._kind() == "CatBoostRanker" and loss in RANKING_LOSSES | IDENTITY_LOSSES:
            return "identity"
        return None

    def _state(self) -> str:
        """A digest of the fitted state: leaf values, scale and bias (a refit changes them)."""
        h = hashlib.blake2b(digest_size=16)
        h.update(np.ascontiguousarray(self.model.get_leaf_values(), dtype=np.float64).tobytes())
        h.update(repr(self.model.get_scale_and_bias()).encode())
        h.update(repr(self.model.tree_count_).encode())
        return h.hexdigest()

    def link_unavailable(self, response):
        """Why ``response`` cannot come from the trees: pdpx does not know the loss's map from margins."""
        if response in TIME_RESPONSES:
            return ("CatBoost's SurvivalAft survival 1 - F((log t - f) / scale) is a per-row transform of the margin "
                    "f, not a sum of leaves: brute computes it from the model's margins")
        if self.link(response) is None:
            loss = self.loss()
            why = REFUSED_LOSSES.get(loss, "it is not one pdpx knows how CatBoost's predict transforms")
            return (f"loss {loss!r} ({type(self.model).__name__}, response {response!r}): {why}; the tree "
                    "engine cannot reproduce it, so brute is used (method='auto'), or use response='raw'")
        return None

    def tree_state(self, response):
        """A digest of the fitted trees (CatBoost models are not hashable, and a refit keeps the object)."""
        return self._state()

    def encoder(self, entry):
        """The encoder of the rows: one-hot categories through CatBoost's own hashes (probed)."""
        facts = entry.encoding
        return CatBoostEncoder(facts.one_hot_values, self.cat_positions(),
                               lambda pos, labels: self._probe(facts, pos, labels))

    def export(self) -> dict:
        """The model's JSON export, parsed."""
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            self.model.save_model(path, format="json")
            with open(path, "rb") as fh:
                return json.load(fh)
        finally:
            os.unlink(path)

    def binary_model(self) -> bytes:
        """The model in CatBoost's binary format (``.cbm``): from memory when this catboost can
        (``_serialize_model``, what pickling a model uses), else through a temporary file."""
        serialize = getattr(self.model, "_serialize_model", None)
        if serialize is not None:
            try:
                buf = serialize()
                if isinstance(buf, bytes | bytearray) and buf[:4] == b"CBM1":
                    return bytes(buf)
            except Exception:  # noqa: BLE001 - a catboost without it: the documented route
                pass
        fd, path = tempfile.mkstemp(suffix=".cbm")
        os.close(fd)
        try:
            self.model.save_model(path, format="cbm")
            with open(path, "rb") as fh:
                return fh.read()
        finally:
            os.unlink(path)

    def read_trees(self, description: str = "", link: str = "identity"):
        """The ensemble and its facts: from the binary model when :func:`.cbm.read_cbm` reads it, else
        from the JSON export (models with CTRs, text or embedding features, non-symmetric trees)."""
        arrays = None
        try:
            arrays = read_cbm(self.binary_model())
        except (ValueError, struct.error, IndexError):  # not a buffer this reader knows: the JSON export
            arrays = None
        if arrays is not None:
            scale, bias = self.model.get_scale_and_bias()
            return read_arrays(arrays, scale=float(scale), bias=bias, n_features=self.n_features(),
                               description=description, link=link)
        return read_model(self.export(), n_features=self.n_features(), description=description, link=link)

    def build_trees(self, response: str):
        """The trees for ``response``, read and checked against CatBoost's own margin (else the reason)."""
        reason = self._estimated_features()
        if reason:
            return Unavailable(reason)
        description = f"CatBoost {type(self.model).__name__} ({self.loss()}, {self.model.tree_count_} trees)"
        try:
            ens, facts = self.read_trees(description, self.link(response))  # checked (link included) as built
        except Unreadable as exc:
            return Unavailable(str(exc))
        if facts.one_hot_values and not facts.symmetric:
            return Unavailable("pdpx reads one-hot categorical splits of symmetric trees only "
                               "(grow_policy='SymmetricTree'); this model's trees are not symmetric; using brute")
        problem = self._self_check(ens, facts)
        if problem:
            return self.unreproduced(problem)
        return Extracted(ens, encoding=facts,
                         recursion_weights="training weights of the leaves (CatBoost leaf_weights)")

    def _estimated_features(self) -> str | None:
        """Why text or embedding features keep the trees out of reach (CatBoost turns them into
        estimated features, and exports such models in its binary format only)."""
        names = self._columns or self.feature_names() or [str(i) for i in range(self.n_features())]
        for kind, indices in (("text features", self.model.get_text_feature_indices()),
                              ("embedding features", self.model.get_embedding_feature_indices())):
            if len(indices):
                cols = ", ".join(repr(str(names[i])) for i in indices)
                return (f"the model uses {kind} ({cols}), which CatBoost turns into estimated features "
                        "pdpx cannot write as tree splits; using brute")
        return None

    def _probe_frame(self, rows: int, numeric=None) -> pd.DataFrame:
        """``rows`` rows the model accepts: a known category in each categorical column, and ``numeric``
        (zeros by default) in each numeric one."""
        n = self.n_features()
        names = self._columns or self.feature_names() or [str(i) for i in range(n)]
        cats = self.cat_positions()
        numeric = np.zeros(rows) if numeric is None else np.asarray(numeric, dtype=np.float64)
        data = {}
        for j, name in enumerate(names):
            if j in cats:
                data[name] = pd.Series([self._templates.get(j, "0")] * rows, dtype=object)
            else:
                data[name] = numeric
        return pd.DataFrame(data)

    def _self_check(self, ens, facts) -> str | None:
        """The IR's margins against CatBoost's on two rows: zeros, and NaN in every numeric column."""
        frame = self._probe_frame(2, numeric=[0.0, np.nan])
        cats = self.cat_positions()
        encoder = CatBoostEncoder(facts.one_hot_values, cats, lambda pos, labels: self._probe(facts, pos, labels))
        ref = self.predict(frame, "raw")
        mine = _margins(ens, encoder.encode(frame))
        scale = float(np.abs(ens.value).sum() * np.max(np.abs(ens.tree_weight)) + np.abs(ens.base_score).sum())
        err = float(np.max(np.abs(ref - mine)))
        if not err <= 1e-6 * (1.0 + scale):
            return f"margins {mine.ravel().tolist()} against {ref.ravel().tolist()}"
        return None

    def _probe(self, facts, pos: int, labels: list) -> list[int]:
        """Codes of the categories ``labels`` of feature ``pos``: CatBoost's leaf indexes say which hash each has."""
        values = facts.one_hot_values.get(pos, [])
        frame = self._probe_frame(len(labels))
        name = frame.columns[pos]
        frame[name] = pd.Series(labels, dtype=object)
        leaves = np.asarray(self.model.calc_leaf_indexes(self.model_input(frame)), dtype=np.int64)
        codes = np.full(len(labels), len(values), dtype=np.int64)
        for code, value in enumerate(values):
            where = facts.locations.get((pos, value))
            if where is None:  # no split tests this hash: a category with it behaves as unseen
                continue
            tree, depth = where
            hit = ((leaves[:, tree] >> depth) & 1).astype(bool)
            codes[hit] = code
        return codes.tolist()


def _margins(ens, X: np.ndarray) -> np.ndarray:
    """(n_rows, n_margins): the ensemble's margins of a few rows by its own routing rule
    (``TreeEnsemble.goes_left_many``, all nodes of a feature and all rows in one call; as
    ``predict_raw_row``, for several rows at once)."""
    internal = np.flatnonzero(ens.left >= 0)
    feats = ens.feature[internal]
    go = np.zeros((ens.n_nodes, len(X)), dtype=bool)
    for f in np.unique(feats):
        nodes = internal[feats == f]
        go[nodes] = ens.goes_left_many(nodes, X[:, f])
    w = ens.effective_tree_weight()
    out = np.tile(ens.base_score, (len(X), 1)).astype(np.float64)
    vec = ens.tree_group < 0
    for r in range(len(X)):
        node = ens.tree_start[:-1].copy()
        inner = ens.left[node] >= 0
        while np.any(inner):
            nd = node[inner]
            node[inner] = np.where(go[nd, r], ens.left[nd], ens.right[nd])
            inner = ens.left[node] >= 0
        if np.any(vec):
            out[r] += (w[vec, None] * ens.value[node[vec], : ens.n_margins]).sum(axis=0)
        np.add.at(out[r], ens.tree_group[~vec], w[~vec] * ens.value[node[~vec], 0])
    return out
