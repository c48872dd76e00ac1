"""R models held in Python through rpy2: randomForest.

The adapter recognises rpy2 objects by the module of their class (no rpy2 import
needed for that), then checks R's class attribute. Prediction goes through R's
own ``predict`` (one call per chunk of the stacked grid that ``brute`` passes);
the forest is read once, in bulk, from ``model$forest`` and translated by
:mod:`pdpx.adapters.randomforest_trees`.

Data is a pandas DataFrame with the model's predictors as columns; factor
predictors are pandas Categoricals (or strings) whose values are levels of the
R factor. Values that are not levels raise :class:`~pdpx.PdpxError` (R would
return NA).

rpy2 3.5.17 is the version that works with Debian's R 4.2.2 (3.6.x fails to
load). R is called from one thread only: the adapter sets ``thread_safe =
False`` and serialises its R calls with a lock.

For ``recursion``, randomForest stores no node counts: build the adapter with
the training rows, ``RandomForestRpy2Adapter(model, training_data=X_train)``,
and pass it as the model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import NotFittedError, PdpxError
from ..core.hookspecs import hookimpl
from ..core.ir import fingerprint, model_cache
from .randomforest import RandomForestAdapter
from .randomforest_trees import read_forest
from .rfunction import R_LOCK

_FOREST_PARTS = (
    "ndbigtree", "nodestatus", "bestvar", "xbestsplit", "nodepred", "treemap", "leftDaughter",
    "rightDaughter", "ncat", "nrnodes",
)


def is_rpy2_object(model) -> bool:
    """True for objects of rpy2's classes, without importing rpy2."""
    if isinstance(model, type):
        return False
    return any(getattr(k, "__module__", "").startswith("rpy2.") for k in type(model).__mro__)


def r_class(obj) -> list[str]:
    """R's class attribute of an rpy2 object (empty if it has none)."""
    try:
        return [str(c) for c in obj.rclass]
    except AttributeError:
        pass
    try:
        return [str(c) for c in obj.do_slot("class")]
    except Exception:  # noqa: BLE001 - no class attribute
        return []


class _R:
    """R helper functions, created once per process (first use)."""

    _fns: dict | None = None

    @classmethod
    def get(cls) -> dict:
        if cls._fns is None:
            import rpy2.robjects as ro

            with R_LOCK:
                cls._fns = {
                    "frame": ro.r(
                        "function(cols, nms, n) { names(cols) <- nms; "
                        "attr(cols, 'row.names') <- .set_row_names(as.integer(n)); "
                        "class(cols) <- 'data.frame'; cols }"
                    ),
                    "factor": ro.r(
                        "function(codes, levels, ordered) structure(codes, levels = levels, "
                        "class = if (ordered) c('ordered', 'factor') else 'factor')"
                    ),
                    "predict": ro.r(
                        "function(m, d, type) { p <- predict(m, d, type = type); "
                        "if (is.factor(p)) stop('predict returned classes'); "
                        "matrix(as.double(p), nrow = nrow(d)) }"
                    ),
                    "vars": ro.r(
                        "function(m) if (inherits(m, 'randomForest.formula')) "
                        "all.vars(delete.response(m$terms)) else character(0)"
                    ),
                    "names": ro.r(
                        "function(m) { n <- names(m$forest$ncat); if (is.null(n)) "
                        "n <- if (is.null(dim(m$importance))) names(m$importance) else rownames(m$importance); "
                        "if (is.null(n)) paste0('X', seq_along(m$forest$ncat)) else n }"
                    ),
                }
        return cls._fns


def _np(x, dtype=np.float64) -> np.ndarray:
    """A copy of an R vector as numpy (np.asarray on rpy2 vectors is a view of R's memory)."""
    return np.array(np.asarray(x), dtype=dtype)


def _is_null(x) -> bool:
    import rpy2.rinterface as ri

    return x is ri.NULL or type(x).__name__ == "NULLType"


def _element(lst, name):
    names = list(lst.names) if not _is_null(lst.names) else []
    return lst.rx2(name) if name in names else None


def _read_r_forest(model):
    """Read a randomForest's forest from R in bulk (cached per rpy2 object by the caller)."""
    with R_LOCK:
        fns = _R.get()
        kind = str(model.rx2("type")[0])
        if kind == "unsupervised":
            raise PdpxError("an unsupervised randomForest has no predictions; partial dependence needs a "
                            "regression or classification forest")
        forest = _element(model, "forest")
        if forest is None or _is_null(forest):
            raise NotFittedError(
                "this randomForest has no forest (fitted with keep.forest = FALSE); refit with "
                "keep.forest = TRUE to compute partial dependence"
            )
        names = [str(n) for n in fns["names"](model)]
        formula_vars = [str(v) for v in fns["vars"](model)]
        data = {}
        fnames = list(forest.names)
        for part in _FOREST_PARTS:
            if part in fnames:
                data[part] = _np(forest.rx2(part))
        xl = forest.rx2("xlevels")
        data["xlevels"] = [
            [str(v) for v in lv] if type(lv).__name__ == "StrVector" or getattr(lv, "typeof", None) == 16
            else None
            for lv in xl
        ]
        cls_el = _element(model, "classes")
        class_labels = [str(c) for c in cls_el] if kind == "classification" and cls_el is not None else None
        coefs_el = _element(model, "coefs")
        coefs = _np(coefs_el) if coefs_el is not None and not _is_null(coefs_el) else None
    # a formula's predict needs all its variables (y ~ . - x2 needs x2); when every
    # predictor is one of them the trees read those columns directly. Otherwise the
    # trees split on transformed terms (offset(x), ...): brute only.
    transformed = bool(formula_vars) and not set(names) <= set(formula_vars)
    inputs = formula_vars if formula_vars and not transformed else None
    fd = read_forest(data, feature_names=names, classes=class_labels, coefs=coefs, input_names=inputs)
    return fd, kind, formula_vars, transformed


def forest_fingerprint(model) -> str:
    """A digest of the R forest's arrays as R holds them (read in place, no copy), its type and classes: an
    rpy2 object whose forest was replaced or edited in place (``model.rx2["forest"] = ...``) has another one.
    Reading R's vectors where they lie costs a few milliseconds for hundreds of trees."""
    with R_LOCK:
        forest = _element(model, "forest")
        if forest is None or _is_null(forest):
            return ""
        parts: list = [str(model.rx2("type")[0]), [str(c) for c in (_element(model, "classes") or [])]]
        fnames = list(forest.names)
        for part in _FOREST_PARTS + ("xlevels",):
            if part not in fnames:
                continue
            vec = forest.rx2(part)
            try:
                parts.append(memoryview(vec))
            except TypeError:  # not a numeric vector (xlevels: a list of level names)
                parts.append(repr([list(map(str, v)) if not _is_null(v) else None for v in vec])
                             if part == "xlevels" else _np(vec))
        coefs = _element(model, "coefs")
        if coefs is not None and not _is_null(coefs):
            parts.append(_np(coefs))
        return fingerprint(*parts)


class RandomForestRpy2Adapter(RandomForestAdapter):
    """An R ``randomForest`` object held through rpy2.

    Parameters
    ----------
    model : rpy2 object of R class "randomForest"
        Fitted with the formula or the x/y interface, regression or classification,
        with ``keep.forest = TRUE`` (the default).
    training_data : DataFrame, optional
        The training rows, routed through the trees to give ``recursion`` node
        counts (R stores none). ``exact`` and ``brute`` never need them.
    training_weight : array, optional
        Weights of those rows.
    """

    library = "randomForest (R, via rpy2)"

    def __init__(self, model, training_data: pd.DataFrame | None = None, training_weight=None):
        classes = r_class(model)
        if "randomForest" not in classes:
            raise PdpxError(f"expected an R randomForest object, got R class {classes}")
        self._fingerprint = forest_fingerprint(model)  # an R object changed in place is read again
        fd, kind, formula_vars, transformed = model_cache.get(
            model, "randomForest forest", (), lambda: _read_r_forest(model), fingerprint=self._fingerprint
        )
        self._transformed = transformed
        super().__init__(fd, None, training_data=None, model=model)
        self._r_type = kind
        self._input_names = formula_vars if self._transformed else fd.feature_names
        self.training_data = training_data
        self.training_weight = training_weight

    # facts
    def feature_names(self):
        return list(self._input_names)

    def validate_columns(self, X):
        if self._transformed:
            return super(RandomForestAdapter, self).validate_columns(X)
        return super().validate_columns(X)

    # prediction through R
    def _r_frame(self, X: pd.DataFrame):
        import rpy2.rinterface as ri

        fns = _R.get()
        cols = []
        for name in X.columns:
            s = X[name]
            if isinstance(s.dtype, pd.CategoricalDtype):
                codes = s.cat.codes.to_numpy().astype(np.int32)
                codes = np.where(codes < 0, ri.NA_Integer, codes + 1).astype(np.int32)
                levels = ri.StrSexpVector([str(c) for c in s.cat.categories])
                vec = fns["factor"](
                    ri.IntSexpVector.from_memoryview(memoryview(np.ascontiguousarray(codes))), levels,
                    ri.BoolSexpVector([bool(s.cat.ordered)]),
                )
            elif pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype):
                arr = np.ascontiguousarray(s.to_numpy(dtype=np.float64, na_value=np.nan))
                vec = ri.FloatSexpVector.from_memoryview(memoryview(arr))
            else:
                vec = ri.StrSexpVector([ri.NA_Character if v is None or v != v else str(v) for v in s.to_numpy(object)])
            cols.append(vec)
        return fns["frame"](ri.ListSexpVector(cols), ri.StrSexpVector([str(c) for c in X.columns]),
                            ri.IntSexpVector([len(X)]))

    def predict(self, X, response):
        X = X[self.feature_names()] if list(map(str, X.columns)) != self.feature_names() else X
        if self._transformed:
            frame = X
        else:
            frame = self.model_frame(X)
        with R_LOCK:
            fns = _R.get()
            rdf = self._r_frame(frame)
            out = fns["predict"](self.model, rdf, "prob" if self.forest.is_classification else "response")
            pred = np.array(np.asarray(out), dtype=np.float64)
        return self._check_prediction(pred.reshape(len(frame), -1), len(frame))

    # trees
    def _ensemble(self):
        # the IR outlives this adapter: kept with the rpy2 object, keyed on its contents as the adapter read them
        return model_cache.get(self.model, "randomForest IR", (), super()._ensemble, fingerprint=self._fingerprint)

    def fingerprint(self) -> str:
        """:func:`forest_fingerprint` of the R object, as read when this adapter was made."""
        return self._fingerprint

    def tree_model(self, response):
        if self._transformed:
            return None
        return super().tree_model(response)

    def tree_model_unavailable(self, response):
        if self._transformed:
            return ("the randomForest formula transforms its variables (e.g. offset(x)); the trees split on "
                    "the transformed terms, so only brute (R's predict) can run")
        return super().tree_model_unavailable(response)


@hookimpl
def pdpx_adapt_model(model):
    """The randomForest adapter for rpy2 objects of R class randomForest; other R objects are refused."""
    if not is_rpy2_object(model):
        return None
    classes = r_class(model)
    if "randomForest" in classes:
        return RandomForestRpy2Adapter(model)
    raise PdpxError(
        f"pdpx reads R models of class randomForest through rpy2; this R object has class {classes}. "
        "For another R model, pass a Python function f(X) -> predictions that calls R's predict "
        "(pdpx then uses brute)."
    )
