"""What the XGBoost and LightGBM adapters share: responses and output names, the
model input, the extraction cache entry, the reason kept in place of trees that
cannot be used, a self-check of the reading against the library's own margin, and
the cached tree lookup. A helper module: it registers no hook.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from ..core.adapter import Adapter


def library_classes(model, package: str, excluded: tuple[str, ...] = ()) -> set[str]:
    """Names of the classes of ``model``'s type defined in ``package`` (without importing it).

    Empty for classes themselves and for objects of ``excluded`` submodules (e.g. the
    distributed wrappers, which pdpx does not read).
    """
    if isinstance(model, type):
        return set()
    module = type(model).__module__ or ""
    if not module.startswith(package) or (excluded and module.startswith(excluded)):
        return set()
    return {k.__name__ for k in type(model).__mro__ if (k.__module__ or "").startswith(package)}


class BoosterAdapter(Adapter):
    """Base of the gradient-boosting library adapters.

    Subclasses implement ``_unavailable(response)`` (a reason known without reading
    the trees, or None) and build ``Extracted`` or ``Unavailable`` entries.
    """

    def __init__(self, model):
        super().__init__(model)
        self._reasons: dict[str, str] = {}

    def _unavailable(self, response) -> str | None:  # pragma: no cover - subclasses override
        return None

    def _n_outputs(self) -> int:
        """Outputs of a regressor (targets); subclasses with multi-output models override."""
        return 1

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
        n = self._n_outputs()
        base = "prediction" if response == "predict" else "raw margin"
        return [base] if n == 1 else [f"target {i}" for i in range(n)]

    def _model_input(self, X: pd.DataFrame):
        """A float array for models fitted without column names (they refuse a DataFrame), else X."""
        if self.feature_names() is None and all(
            pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t) for t in X.dtypes
        ):
            return X.to_numpy(dtype=np.float64, na_value=np.nan)
        return X

    def tree_model_unavailable(self, response):
        reason = self._unavailable(response)
        if reason is None:
            self.tree_model(response)  # reading the trees may find a reason (self-check, linear trees)
            reason = self._reasons.get(response)
        return reason or super().tree_model_unavailable(response)

    def _cached_tree_model(self, response: str, key: str, booster, build: Callable, make_encoder: Callable):
        """The TreeModel for ``response``, extracted once per booster and ``key``."""
        from ..core.ir import model_cache

        entry = model_cache.get(self.model, key, (booster,), build)
        if isinstance(entry, Unavailable):
            self._reasons[response] = entry.reason
            return None
        return entry.tree_model(make_encoder(entry))


class Extracted:
    """What the extraction cache holds: the ensemble plus what encoding needs."""

    def __init__(self, ensemble, categories, missing, notes, recursion_weights):
        self.ensemble = ensemble
        self.categories = categories
        self.missing = missing
        self.notes = notes
        self.recursion_weights = recursion_weights

    def tree_model(self, encoder):
        from ..core.ir import TreeModel

        return TreeModel(
            ensemble=self.ensemble, encode=encoder.encode, encode_values=encoder.encode_values,
            notes=list(self.notes), recursion_weights=self.recursion_weights,
        )


class Unavailable:
    """Cached in place of a TreeModel: why the trees cannot be used."""

    def __init__(self, reason: str):
        self.reason = reason


def nan_row_margin(ens) -> tuple[np.ndarray, float]:
    """The ensemble's margins for one row whose every value is NaN, and a float32 error scale.

    Vectorised over trees: each tree is followed along the side NaN goes to.
    Returns (margins of shape (n_margins,), sum of |contributions| + |base|).
    """
    from ..core.ir import NAN_AS_ZERO

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
