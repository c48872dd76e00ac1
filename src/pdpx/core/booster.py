"""What every gradient-boosting library's adapter shares: :class:`BoosterAdapter` (public, from :mod:`pdpx.extend`).

A boosting library's models have the same facts to tell pdpx: predicted probabilities
(classifiers) or values, then the raw margin; one output per class or target; a number
of columns fixed at fit time; trees read once per fitted state, checked against the
library's own margin, or a reason why they cannot be used. A subclass says what is
particular to its library:

* ``library`` (the package name) and ``library_name`` (as messages write it);
* :meth:`~BoosterAdapter.n_features`, :meth:`~BoosterAdapter.n_outputs` (a regressor's targets);
* :meth:`~BoosterAdapter.link_unavailable`: why ``response`` cannot come from the trees,
  known without reading them (None when it can);
* :meth:`~BoosterAdapter.tree_state`: which part of the model a prediction uses (rounds...);
  :meth:`~BoosterAdapter.key_objects`: objects a refit replaces; :meth:`~BoosterAdapter.fingerprint`:
  a digest of the model's contents (its serialisation), which a change in place does not keep;
* :meth:`~BoosterAdapter.build_trees`: an :class:`Extracted` (checked with :func:`self_check`,
  or the library's own check), or :class:`Unavailable` with the reason;
* :meth:`~BoosterAdapter.encoder`: the encoder of the rows for an :class:`Extracted`.

:meth:`BoosterAdapter.tree_model` does the rest: the cache (:data:`pdpx.core.ir.model_cache`,
one entry per fitted state, contents and response), the reasons kept for
:meth:`~BoosterAdapter.tree_model_unavailable`. Nothing here imports a model library.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import numpy as np
import pandas as pd

from .adapter import Adapter, as_2d
from .errors import NotFittedError, PdpxError
from .ir import NAN_AS_ZERO, TreeModel, model_cache


def library_classes(model, package: str, excluded: tuple[str, ...] = ()) -> set[str]:
    """Names of the classes of ``model``'s type and its bases defined in ``package`` (without importing it).

    Empty for classes themselves and for objects of ``excluded`` submodules (e.g. the
    distributed wrappers, which pdpx does not read).
    """
    if isinstance(model, type):
        return set()
    ours = [k for k in type(model).__mro__ if (k.__module__ or "").startswith(package)]
    if not ours or (excluded and ours[0].__module__.startswith(excluded)):
        return set()
    # a user's subclass counts as the library's model: whether its trees may answer is decided on the methods it
    # calls (pdpx.core.trust), not on its ancestry
    return {k.__name__ for k in ours}


class Extracted:
    """What the tree cache holds for a readable model: the ensemble, what its encoder needs, notes.

    Attributes
    ----------
    ensemble : pdpx.core.ir.TreeEnsemble
    encoding : object
        What :meth:`BoosterAdapter.encoder` needs besides the adapter (categories, missing value...).
    notes : list of str
    recursion_weights : str
        What the node weights ``recursion`` uses are.
    """

    def __init__(self, ensemble, encoding=None, notes=(), recursion_weights: str = ""):
        self.ensemble = ensemble
        self.encoding = encoding
        self.notes = list(notes)
        self.recursion_weights = recursion_weights

    def tree_model(self, encoder) -> TreeModel:
        """The :class:`~pdpx.core.ir.TreeModel` of this ensemble with ``encoder`` for the rows."""
        return TreeModel(
            ensemble=self.ensemble, encode=encoder.encode, encode_values=encoder.encode_values,
            notes=list(self.notes), recursion_weights=self.recursion_weights,
        )


class Unavailable:
    """Cached in place of the trees: why they cannot be used (the sentence shown to the user)."""

    def __init__(self, reason: str):
        self.reason = reason


class BoosterAdapter(Adapter):
    """Base of the gradient-boosting library adapters (see the module docstring for what a subclass writes)."""

    #: The library's package (its classes' module path starts with it; ``library_version`` imports it).
    library = ""
    #: The library's name as messages write it.
    library_name = ""

    def __init__(self, model: Any):
        super().__init__(model)
        #: the library's own model object (a ``Booster``), not its estimator-style wrapper
        self.raw = "Booster" in library_classes(model, self.library)
        self.reasons: dict[str, str] = {}

    # --------------------------------------------------------------- facts
    def not_fitted(self, detail: str | None = None) -> NotFittedError:
        """The error for a model without trees (``detail`` replaces the usual sentence)."""
        return NotFittedError(detail or f"this {type(self.model).__name__} is not fitted yet: call .fit(X, y) "
                              "before computing partial dependence")

    def n_features(self) -> int:  # pragma: no cover - every subclass says
        """Columns the model was fitted on."""
        raise NotImplementedError

    def n_outputs(self) -> int:
        """Outputs of a regressor (targets); subclasses with multi-output models override."""
        return 1

    def n_classes(self) -> int:
        """Classes of a classifier given as the library's own model (which keeps no labels)."""
        return 2

    def classes(self):
        """The wrapper's ``classes_`` (labels in the order of the probabilities), else ``0 .. n_classes - 1``."""
        if not self.is_classifier():
            return None
        if not self.raw:
            classes = getattr(self.model, "classes_", None)
            if classes is not None:
                return list(classes)
        return list(range(self.n_classes()))

    def responses(self):
        """``predict_proba`` (classifiers) or ``predict``, then the raw margin."""
        if self.is_classifier():
            return ["predict_proba", "raw"]
        return ["predict", "raw"]

    def output_names(self, response):
        """Class labels (the positive class only for a binary raw margin), else one name per target."""
        if self.is_classifier():
            classes = [str(c) for c in self.classes()]
            if response == "raw" and len(classes) == 2:
                return [classes[1]]
            return classes
        n = self.n_outputs()
        base = "prediction" if response == "predict" else "raw margin"
        return [base] if n == 1 else [f"target {i}" for i in range(n)]

    def validate_columns(self, X):
        """X's columns as at fit time (by name when the model has names), and as many as at fit time."""
        X = super().validate_columns(X)
        n = self.n_features()
        if X.shape[1] != n:
            raise PdpxError(
                f"X has {X.shape[1]} columns but this {type(self.model).__name__} was fitted on {n}; "
                f"pass X with the {n} columns used for fitting, in the same order"
            )
        return X

    def model_input(self, X: pd.DataFrame):
        """A float array for models fitted without column names (they refuse a DataFrame), else X."""
        if self.feature_names() is None and all(
            pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t) for t in X.dtypes
        ):
            return X.to_numpy(dtype=np.float64, na_value=np.nan)
        return X

    def wrapper_predict(self, data, response: str, margin: dict):
        """The prediction of a model of the library's estimator classes (those with ``fit``, ``predict`` and
        ``predict_proba``): ``predict_proba``, the raw margin (``predict`` with ``margin``, the keyword by which the
        library asks for it) or ``predict``."""
        m = self.model
        if response == "predict_proba":
            return as_2d(m.predict_proba(data))
        if response == "raw":
            return as_2d(m.predict(data, **margin))
        if response == "predict":
            return as_2d(m.predict(data))
        raise PdpxError(f"{type(m).__name__} has no response {response!r}")

    def library_version(self) -> str:
        """The installed library's version (for messages; imports the library, which is loaded by then)."""
        return str(getattr(import_module(self.library), "__version__", "?"))

    def unreproduced(self, problem: str) -> Unavailable:
        """The reason kept when pdpx's reading of the trees does not reproduce the library's own margin."""
        return Unavailable(
            f"pdpx's reading of this {self.library_name} {self.library_version()} model does not reproduce its "
            f"own prediction ({problem}); using brute. Please report this with your {self.library} version."
        )

    #: The wrapper's method each response calls; a raw booster calls :attr:`booster_methods`.
    response_methods = {"predict": "predict", "predict_proba": "predict_proba", "raw": "predict",
                        "decision_function": "decision_function"}
    booster_methods: tuple = ("predict",)

    def prediction_path(self, response: str) -> list:
        """The model's method that ``response`` calls (:mod:`pdpx.core.trust` checks it is the library's own)."""
        if self.raw:
            return [(self.model, m) for m in self.booster_methods]
        method = self.response_methods.get(response)
        return [(self.model, method)] if method else []

    # ------------------------------------------------------ tree structure
    def link_unavailable(self, response: str) -> str | None:
        """Why ``response`` cannot be computed from the trees, known without reading them; None when it can."""
        return None

    def tree_state(self, response: str) -> str:
        """Which part of the model a prediction of ``response`` uses (rounds, the wrapper's missing value...),
        beyond :meth:`key_objects` and :meth:`fingerprint`."""
        return ""

    def fingerprint(self) -> str:
        """A digest of the booster's contents (:func:`pdpx.core.ir.fingerprint` of the library's own
        serialisation): a model loaded into the same object or a leaf changed in place has another one.
        Subclasses say how; "" (the default) keys the cache on :meth:`key_objects` and :meth:`tree_state` only."""
        return ""

    def key_objects(self) -> tuple:
        """Objects a refit replaces (the cache holds them, so their ids stay theirs)."""
        return ()

    def build_trees(self, response: str) -> Extracted | Unavailable:  # pragma: no cover - every subclass says
        """Read the trees for ``response`` (once per fitted state)."""
        raise NotImplementedError

    def encoder(self, entry: Extracted):  # pragma: no cover - every subclass says
        """The encoder (``encode(X)``, ``encode_values(j, values)``) of the rows for ``entry``."""
        raise NotImplementedError

    def tree_model(self, response):
        """The trees for ``response``, read once per fitted state (None, with a reason kept, when unusable)."""
        contents = self.fingerprint()  # first: what the adapter knows of the model follows its contents
        reason = self.link_unavailable(response)
        if reason is not None:
            self.reasons[response] = reason
            return None
        entry = model_cache.get(self.model, response, self.key_objects(), lambda: self.build_trees(response),
                                state=self.tree_state(response), fingerprint=contents)
        if isinstance(entry, Unavailable):
            self.reasons[response] = entry.reason
            return None
        return entry.tree_model(self.encoder(entry))

    def tree_model_unavailable(self, response):
        """Why :meth:`tree_model` returned None for ``response``."""
        if response not in self.reasons:
            self.tree_model(response)  # reading the trees may find a reason (self-check, linear trees)
        return self.reasons.get(response) or super().tree_model_unavailable(response)



def numeric_column(col: pd.Series, name, takes: str) -> np.ndarray:
    """A column of the rows as float64, missing values as NaN, for an encoder of a booster's rows; a column that is
    not numeric is refused, the message naming it and saying what the library takes (``takes``)."""
    try:
        return np.array(col.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
    except (TypeError, ValueError):
        raise PdpxError(f"column {name!r} is not numeric; {takes}") from None


def nan_row_margin(ens) -> tuple[np.ndarray, float]:
    """The ensemble's margins for one row whose every value is NaN, and a float32 error scale.

    Vectorised over trees: each tree is followed along the side NaN goes to.
    Returns (margins of shape (n_margins,), sum of |contributions| + |base|).
    """
    internal = ens.left >= 0
    numeric_zero = internal & (ens.cat_offset < 0) & (ens.nan_mode == NAN_AS_ZERO)
    zero_left = (0.0 <= ens.threshold) if ens.comparison == "<=" else (0.0 < ens.threshold)
    go_left = np.where(numeric_zero, zero_left, ens.missing_left)
    nxt = np.where(go_left, ens.left, ens.right)
    node = ens.tree_start[:-1].copy()
    for _ in range(ens.n_nodes):
        leaf = ens.left[node] < 0
        if leaf.all():
            break
        node = np.where(leaf, node, nxt[node])
    w = ens.effective_tree_weight()
    out = ens.base_score.astype(np.float64).copy()
    scale = float(np.abs(out).sum())
    for t in range(ens.n_trees):
        g = ens.tree_group[t]
        v = w[t] * (ens.value[node[t], : ens.n_margins] if g < 0 else ens.value[node[t], 0])
        if g < 0:
            out += v
        else:
            out[g] += v
        scale += float(np.abs(v).sum())
    return out, scale



def link_problem(ens, theirs, *, rtol: float, atol: float, theirs_are: str) -> str | None:
    """What differs between the IR's link on a row of missing values and ``theirs``, the library's own transformed
    prediction of that row (``theirs_are``: how the message names it), or None when they agree."""
    theirs = as_2d(np.asarray(theirs, dtype=np.float64))
    mine = ens.apply_link(nan_row_margin(ens)[0][None, :])
    if ens.link == "binary_logistic" and theirs.shape[1] == 1:
        mine = mine[:, 1:]
    if mine.shape != theirs.shape or not np.allclose(mine, theirs, rtol=rtol, atol=atol):
        return f"link {ens.link!r} gives {mine.ravel()[:3]} where {theirs_are} {theirs.ravel()[:3]}"
    return None

def self_check(ens, reference: np.ndarray | None, rel: float = 1e-7) -> str | None:
    """Compare the IR's margins on an all-NaN row with the library's; a message if they differ."""
    if reference is None:
        return None
    mine, scale = nan_row_margin(ens)
    reference = np.asarray(reference, dtype=np.float64).reshape(-1)
    if reference.shape != mine.shape:
        return f"{mine.size} margins against {reference.size}"
    tol = 1e-6 + rel * (ens.n_trees + 1) * scale
    err = float(np.abs(mine - reference).max())
    if not err <= tol:
        return f"margin {mine.tolist()} against {reference.tolist()} on a row of missing values"
    return None


from .oldpaths import watch as _watch  # noqa: E402 - last: the names above moved to pdpx.extend (core/oldpaths.py)

_watch(__name__)
