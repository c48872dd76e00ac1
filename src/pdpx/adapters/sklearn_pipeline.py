"""scikit-learn Pipelines (and ColumnTransformers inside them) in front of a tree model.

``exact`` runs on the user's original columns: the pipeline's column-wise steps
are traced (:mod:`pdpx.adapters.sklearn_transforms` holds one rule per
transformer) to learn which original column each model input comes from, and the
final model's trees are rewritten as trees on the original columns
(:mod:`pdpx.adapters.column_trees`; a column made into several columns, by a spline
basis, one-hot bins or sin and cos, or a date column made into its parts by a step
declared column-wise, is read as sets of its values:
:mod:`pdpx.adapters.column_values`; a FeatureUnion: :mod:`pdpx.adapters.sklearn_union`).
Any model pdpx reads trees from can be last:
scikit-learn's, XGBoost's and LightGBM's wrappers, a plugin's, or an ensemble.

A step that mixes columns (PCA, PolynomialFeatures with interaction terms, a
transformer without a rule) makes ``tree_model`` return None; the reason names the
step, and ``auto`` runs ``brute`` with that reason in the result's notes. So do a
map that is not monotone on a numeric column (an imputer with a sentinel
``missing_values=0``), a subclass that overrides ``transform``, and a sparse matrix
fed to a model pdpx does not know reads absent entries as zeros (scikit-learn's
trees, LightGBM) or as missing (XGBoost: modelled, absent entries are NaN).

:func:`prediction_path` lists every object whose method a prediction calls.
"""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd

from ..core.dates import count_dates, date_kind
from ..core.grid import held_dtype
from ..core.ir import model_cache
from . import column_trees, column_values, sklearn_union
from .column_trees import Column
from .sklearn_state import steps_digest
from .sklearn_transforms import column_map, rules_version

#: The value pdpx feeds an encoder to learn where categories it never saw go.
UNSEEN = "\x00pdpx-unseen-category"


def is_pipeline(model) -> bool:
    """True for a fitted scikit-learn Pipeline (recognised by class path, without importing scikit-learn)."""
    return any(f"{k.__module__}.{k.__name__}" == "sklearn.pipeline.Pipeline" for k in type(model).__mro__)


def _skip(step) -> bool:
    return step is None or (isinstance(step, str) and step in ("passthrough", "drop"))


def _own_method(obj, class_path: str, method: str) -> bool:
    """Whether ``obj``'s ``method`` is the one of its base class ``class_path`` (not overridden by a subclass)."""
    mro = type(obj).__mro__
    base = next((i for i, k in enumerate(mro) if f"{k.__module__}.{k.__name__}" == class_path), None)
    owner = next((i for i, k in enumerate(mro) if method in vars(k)), None)
    return base is not None and owner is not None and owner >= base


def _is_column_transformer(step) -> bool:
    return hasattr(step, "transformers_") and hasattr(step, "output_indices_")


def prediction_path(pipeline, response: str) -> list:
    """Every (object, method name) a fitted Pipeline's ``response`` method calls on the way to its prediction.

    The Pipeline itself with ``response``; each transforming step with ``"transform"``, and inside a
    nested Pipeline or ColumnTransformer each of its transformers with ``"transform"`` (``"drop"`` and
    ``"passthrough"`` call nothing); a final nested Pipeline with ``response`` and its own steps; the
    final estimator with ``response``. A FeatureUnion's transformers are listed like a ColumnTransformer's.
    """
    out: list = [(pipeline, response)]

    def transformer(step):
        if _skip(step):
            return
        out.append((step, "transform"))
        if is_pipeline(step):
            for _, s in step.steps:
                transformer(s)
        elif _is_column_transformer(step):
            for _, t, _cols in step.transformers_:
                transformer(t)
        elif sklearn_union.is_union_like(step):
            for t in sklearn_union.transformers(step):
                transformer(t)

    def walk(p):
        for _, step in p.steps[:-1]:
            transformer(step)
        last = p.steps[-1][1]
        if is_pipeline(last):
            out.append((last, response))
            walk(last)
        elif not _skip(last):
            out.append((last, response))

    walk(pipeline)
    return out


def split(model) -> tuple[list, object]:
    """(transforming steps as (path, step), final estimator) of a Pipeline, nested Pipelines flattened
    (a nested Pipeline whose ``transform`` is overridden stays one step, which the trace refuses)."""
    steps: list = []

    def walk(p, prefix):
        for name, step in p.steps[:-1]:
            add(step, prefix + [name])
        name, last = p.steps[-1]
        if is_pipeline(last):
            return walk(last, prefix + [name])
        return last

    def add(step, path):
        if is_pipeline(step) and _own_method(step, "sklearn.pipeline.Pipeline", "transform"):
            for name, s in step.steps:
                add(s, path + [name])
        else:
            steps.append((path, step))

    final = walk(model, [])
    return steps, final


def _first_fitted(model):
    """The object that first receives a Pipeline's X: its first step that is not ``"passthrough"`` or None (inside
    nested Pipelines), or the final estimator when every step before it is skipped."""
    steps, final = split(model)
    for _, step in steps:
        if not _skip(step):
            return step
    return final


def fitted_names(model) -> list[str] | None:
    """The column names a fitted Pipeline's X must have: those its first real step (or, every step skipped, its
    final estimator) was fitted on; None when it was fitted on an array.

    scikit-learn's ``Pipeline.feature_names_in_`` asks the first step only, so a first ``"passthrough"`` or None
    step (a grid search's way to switch a step off) leaves a pipeline fitted on a frame without names: X would
    then be handed over as an array and read by position."""
    first = _first_fitted(model)
    try:
        names = getattr(first, "feature_names_in_", None)
    except AttributeError:  # pragma: no cover - a property that fails
        names = None
    return [str(n) for n in names] if names is not None else None


def fitted_width(model) -> int | None:
    """The number of columns a fitted Pipeline's X must have (its first real step's ``n_features_in_``)."""
    try:
        n = getattr(_first_fitted(model), "n_features_in_", None)
    except AttributeError:  # pragma: no cover - a property that fails
        n = None
    return int(n) if n is not None else None


class NotColumnWise(Exception):
    """A step that does not transform each column on its own (the message names it)."""


def trace(steps: list, n_in: int, names=None) -> list:
    """For each column the final model receives: (original column, [(treatment, categories), ...]).

    ``names``: the columns of X; a first step fitted on a frame (a ColumnTransformer) picks its columns
    by name, so X's columns are matched to the names it was fitted on (a missing one gets ``n_in``).
    """
    cur = [(j, []) for j in range(n_in)]
    first = next((s for _, s in steps if not _skip(s)), None)
    fitted = getattr(first, "feature_names_in_", None)
    if names is not None and fitted is not None and [str(c) for c in names] != [str(c) for c in fitted]:
        pos = {str(c): j for j, c in enumerate(names)}
        cur = [(pos.get(str(c), n_in), []) for c in fitted]
    for path, step in steps:
        cur = _through(step, cur, path)
    return cur


def _through(step, cur, path):
    label = " > ".join(repr(p) for p in path)
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return cur
    if is_pipeline(step):
        if not _own_method(step, "sklearn.pipeline.Pipeline", "transform"):
            raise NotColumnWise(f"step {label} ({type(step).__name__}) overrides Pipeline.transform, so pdpx "
                                "cannot tell what it does to each column")
        for name, s in step.steps:
            cur = _through(s, cur, path + [name])
        return cur
    if _is_column_transformer(step):
        klass = type(step)
        if f"{klass.__module__}.{klass.__name__}" != "sklearn.compose._column_transformer.ColumnTransformer":
            raise NotColumnWise(f"step {label} ({klass.__name__}) is a subclass of ColumnTransformer; pdpx "
                                "follows scikit-learn's own ColumnTransformer only")
        weights = step.transformer_weights or {}
        inputs = getattr(step, "_transformer_to_input_indices", None)
        if inputs is None:  # pragma: no cover - older scikit-learn
            raise NotColumnWise(f"step {label}: this scikit-learn version does not say which columns it routes where")
        width = max((s.stop for s in step.output_indices_.values()), default=0)
        out: list = [None] * width
        for name, trans, _cols in step.transformers_:
            if isinstance(trans, str) and trans == "drop":
                continue
            sub = [cur[i] for i in inputs[name]]
            got = _through(trans, sub, path + [name])
            w = weights.get(name)
            if w is not None and w < 0:  # the outputs are multiplied by a negative weight: order reversed
                got = [(jj, p + [("decreasing", None)]) for jj, p in got]
            sl = step.output_indices_[name]
            if len(got) != sl.stop - sl.start:
                raise NotColumnWise(f"step {label} > {name!r}: makes {sl.stop - sl.start} columns, "
                                    f"its rule says {len(got)}")
            out[sl] = got
        return out
    if sklearn_union.is_union_like(step):
        try:
            return sklearn_union.through(step, cur, path, _through)
        except sklearn_union.UnionRefused as exc:
            raise NotColumnWise(f"step {label}: {exc}") from None
    cm = column_map(step, len(cur))
    if isinstance(cm, str):
        raise NotColumnWise(f"step {label} ({type(step).__name__}): {cm}")
    return [(cur[s][0], cur[s][1] + [(cm.treatment[s], cm.categories.get(s))]) for s in cm.source]


def transform(steps: list, X, absent: float = 0.0):
    """The fitted steps applied to X (as Pipeline.transform does), as a dense frame for the final model.

    A sparse result is densified with ``absent`` where it stores no entry: 0.0, or NaN for a model
    that reads absent entries as missing.
    """
    return densify(apply(steps, X), absent)


def apply(steps: list, X):
    """The fitted steps applied to X, as Pipeline.transform does (the result may be sparse)."""
    Z = X
    fitted = [s for _, s in steps if s is not None and not (isinstance(s, str) and s == "passthrough")]
    if isinstance(Z, pd.DataFrame) and fitted and hasattr(fitted[0], "n_features_in_") and getattr(
            fitted[0], "feature_names_in_", None) is None:
        # fitted on an array: pass an array, as the adapter's predict does (a frame would make scikit-learn warn)
        numeric = all(pd.api.types.is_numeric_dtype(t) for t in Z.dtypes)
        Z = Z.to_numpy() if numeric else Z.to_numpy(dtype=object)
    for _, step in steps:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        Z = step.transform(Z)
    return Z


def densify(Z, absent: float = 0.0):
    """A dense frame of the steps' result ``Z``; entries a sparse ``Z`` does not store become ``absent``."""
    if hasattr(Z, "tocoo"):
        Z = Z.tocsr(copy=True)
        Z.sum_duplicates()
        coo = Z.tocoo()
        dense = np.full(coo.shape, absent, dtype=np.float64)
        dense[coo.row, coo.col] = coo.data  # summed duplicates are not made by scikit-learn's transformers
        Z = dense
    if not isinstance(Z, pd.DataFrame):
        Z = pd.DataFrame(np.asarray(Z))
    return Z


def plan_columns(traced: list, ref: pd.DataFrame) -> list:
    """One :class:`Column` per original column, from the traced paths (raises NotColumnWise)."""
    plan = []
    for j, name in enumerate(ref.columns):
        outs = [c for c, (jj, _) in enumerate(traced) if jj == j]
        paths = [traced[c][1] for c in outs]
        col = Column(name=str(name), kind="dropped", outputs=outs)
        dtype = ref.dtypes.iloc[j]
        numeric_dtype = pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
        if outs and column_values.several(paths):
            # a date column: its dates go straight (passed on unchanged) into a step declared column-wise
            if date_kind(dtype) == "datetime" and all(next((t for t, _ in p if t != "preserve"), None) == "derived"
                                                      for p in paths):
                col.dates = dtype  # its dates read as exact numbers (pdpx.core.dates.date_counts), given back as dates
            elif not numeric_dtype:
                raise NotColumnWise(f"column {name!r} ({dtype}) is made into several columns; exact reads that for "
                                    "numeric columns only, and for datetime64 columns whose dates go straight to "
                                    "a step declared column-wise (pdpx.extend.declare_columnwise)")
            col.kind = "values"  # its splits: sets of its values (column_values)
        elif outs and any(t == "encoder" for p in paths for t, _ in p):
            cats, extra = None, []
            for p in paths:
                first = next((i for i, (t, _) in enumerate(p) if t == "encoder"), None)
                if first is None or any(t not in ("preserve", "sentinel") for t, _ in p[:first]):
                    raise NotColumnWise(f"column {name!r} is both encoded and used as a number")
                extra += [v for t, vs in p[:first] if t == "sentinel" for v in vs]
                c = list(p[first][1])
                if cats is not None and (len(c) != len(cats) or not pd.Index(c).equals(pd.Index(cats))):
                    raise NotColumnWise(f"column {name!r} is encoded twice with different categories")
                cats = c
            col.kind = "categorical"
            known = pd.Index(cats, dtype=object)
            # a value an imputer replaces (its own entry: evaluated through the steps like every category)
            cats += [v for i, v in enumerate(extra) if v not in extra[:i] and known.get_indexer([v])[0] < 0]
            _fill_table(col, cats, dtype, numeric_dtype)
        elif outs and any(t == "sentinel" for p in paths for t, _ in p):
            vs = [v for p in paths for t, vv in p if t == "sentinel" for v in vv]
            raise NotColumnWise(f"column {name!r} goes through an imputer that replaces the value {vs[0]!r} "
                                "(missing_values): not a monotone map of its values, so a split on it is not a "
                                "threshold on the original value; for exact, make that value NaN in X and impute "
                                "missing_values=np.nan")
        elif outs and numeric_dtype:
            col.kind = "numeric"
            col.direction = [int(np.prod([-1 if t == "decreasing" else 1 for t, _ in p])) for p in paths]
        elif outs and isinstance(dtype, pd.CategoricalDtype) and all(t == "preserve" for p in paths for t, _ in p):
            col.kind = "categorical"  # categories passed through to a model that reads them
            _fill_table(col, [], dtype, False)
        elif outs:
            raise NotColumnWise(f"column {name!r} ({dtype}) reaches the model without an encoder pdpx knows")
        plan.append(col)
    return plan


def _fill_table(col: Column, cats: list, dtype, numeric_dtype: bool) -> None:
    table = list(cats)
    known = pd.Index([c for c in table if not column_trees._isnan(c)], dtype=object)
    if isinstance(dtype, pd.CategoricalDtype):
        table += [c for c in dtype.categories if c not in set(known)]
    if not any(column_trees._isnan(c) and c is not None for c in table):
        table.append(np.nan)
    col.nan_code = next(i for i, c in enumerate(table) if column_trees._isnan(c) and c is not None)
    if not isinstance(dtype, pd.CategoricalDtype):
        if numeric_dtype:
            nums = [float(c) for c in table if not column_trees._isnan(c)]
            unseen = (max(nums) + 1.5) if nums else 0.5
        else:
            unseen = UNSEEN
        col.unseen_code = len(table)
        table.append(unseen)
    col.table = table


class PipelineTrees:
    """A pipeline's final trees on the original columns, built from a reference frame (one row of X)."""

    def __init__(self, model, ref: pd.DataFrame, response: str):
        from ..core.plugins import adapt

        self.model = model
        self.ref = ref.iloc[:1].reset_index(drop=True)
        self.steps, self.final = split(model)
        self.response = response
        raw = apply(self.steps, self.ref)
        self.absent, self.sparse_refusal = 0.0, ""
        if hasattr(raw, "tocoo"):
            self.absent, self.sparse_refusal = absent_entries(self.final)
        # scikit-learn's trees refuse NaN in a sparse matrix (they take it in a dense one): so must pdpx
        self.sparse_nan_refused = hasattr(raw, "tocoo") and type(self.final).__module__.startswith("sklearn.")
        Zref = densify(raw, self.absent)
        self.inner = adapt(self.final)
        self.inner.validate_columns(Zref)

    def evaluate(self, ask: dict) -> dict:
        """The final model's encoded inputs computed from each original column's values in ``ask``."""
        m = max(len(v) for v in ask.values())
        frame = self.ref.iloc[np.zeros(m, dtype=np.int64)].reset_index(drop=True)
        for j, vals in ask.items():
            vals = np.asarray(vals, dtype=object if not np.asarray(vals).dtype.kind == "f" else np.float64)
            padded = np.concatenate([vals, np.repeat(vals[:1], m - len(vals))]) if len(vals) < m else vals
            dates = self.plan[j].dates if j < len(vars(self).get("plan", ())) else None
            frame[frame.columns[j]] = (count_dates(padded, dates) if dates is not None
                                       else _as_column(padded, self.ref.dtypes.iloc[j]))
        import warnings

        with warnings.catch_warnings():  # e.g. "unknown categories": pdpx asks on purpose
            warnings.simplefilter("ignore")
            Z = transform(self.steps, frame, self.absent)
        if self.sparse_nan_refused and np.isnan(Z.to_numpy(dtype=np.float64)).any():
            raise ValueError(f"{type(self.final).__name__} does not accept NaN in a sparse matrix")
        E = np.asarray(self.tm_inner.encode(Z), dtype=np.float64)
        return {j: E[: len(ask[j])][:, self.plan[j].outputs] for j in ask}

    def build(self):
        """The TreeModel on the original columns, or the sentence saying why there is none."""
        tm = self.inner.tree_model(self.response)
        if tm is None:
            return f"its last step: {self.inner.tree_model_unavailable(self.response)}"
        if not hasattr(tm, "ensemble"):
            return f"its last step ({type(self.final).__name__}) is an ensemble of models, not one tree model"
        if self.sparse_refusal:
            return self.sparse_refusal
        self.tm_inner = tm
        try:
            traced = trace(self.steps, self.ref.shape[1], list(self.ref.columns))
            self.plan = plan_columns(traced, self.ref)
        except NotColumnWise as exc:
            return str(exc)
        if len(traced) != tm.ensemble.n_features:
            return f"its steps make {len(traced)} columns, the final model reads {tm.ensemble.n_features}"
        if np.isnan(self.absent):  # a number whose transformed value is 0 would be missing: not a threshold
            ens = tm.ensemble
            used = {traced[int(c)][0] for c in np.unique(ens.feature[ens.left >= 0])}
            num = [self.plan[j].name for j in sorted(used) if j < len(self.plan) and self.plan[j].kind == "numeric"]
            if num:
                return (f"its steps give {type(self.final).__name__} a sparse matrix, whose absent entries (zeros) it "
                        f"reads as missing, so a split on numeric column {num[0]!r} is not a threshold on its "
                        "values; for exact, make the output dense (ColumnTransformer(sparse_threshold=0) or "
                        "OneHotEncoder(sparse_output=False))")
        self._check_values()
        columns_of_output = [j for j, _ in traced]
        names = type(self.final).__name__
        note = f"exact through the pipeline: {names}'s splits read as rules on the original columns"
        out = column_trees.rewrite(tm, columns_of_output, self.plan, self.evaluate, notes=[note])
        if isinstance(out, str) or not any(c.kind == "values" for c in self.plan):
            return out
        # columns made into several: their splits are sets of the values each call meets (completed per call)
        return column_values.ValueTrees(out, tm.ensemble, self.plan, self.evaluate, self.encode_rows)

    def encode_rows(self, rows) -> np.ndarray:
        """The final model's encoded inputs the steps make of whole rows of X."""
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(self.tm_inner.encode(transform(self.steps, rows, self.absent)), dtype=np.float64)

    def _check_values(self) -> None:
        """Which columns' missing or unseen values the preprocessing refuses (tried once each)."""
        for j, col in enumerate(self.plan):
            if col.kind == "dropped":
                continue
            if col.kind in ("numeric", "values"):
                col.nan_invalid = not self._accepts(j, np.array([np.nan]))
                continue
            if col.nan_code >= 0:
                col.nan_invalid = not self._accepts(j, np.array([np.nan], dtype=object))
            if col.unseen_code >= 0:
                col.unseen_invalid = not self._accepts(j, np.array([col.table[col.unseen_code]], dtype=object))
            if pd.api.types.is_object_dtype(self.ref.dtypes.iloc[j]):
                self._split_none(j, col)
            invalid = {c for c, bad in ((col.nan_code, col.nan_invalid), (col.unseen_code, col.unseen_invalid),
                                        (col.none_code, col.none_invalid)) if bad and c >= 0}
            if invalid:  # the table is evaluated in one go: give them a valid value
                first = col.table[0] if col.table else np.nan
                col.reps = [first if i in invalid else v for i, v in enumerate(col.table)]

    def _split_none(self, j: int, col: Column) -> None:
        """An object column can hold None and NaN; where the steps treat them differently (an encoder fitted on
        both, an imputer of one of them), None gets its own code, evaluated (or refused) as None."""
        got = []
        for v in (None, np.nan):
            try:
                got.append(self.evaluate({j: np.array([v], dtype=object)})[j])
            except Exception:  # noqa: BLE001 - a refusal: compared below
                got.append(None)
        if got[0] is None and got[1] is None:
            return
        if got[0] is not None and got[1] is not None and np.array_equal(got[0], got[1], equal_nan=True):
            return
        at = [i for i, c in enumerate(col.table) if c is None]
        if not at:
            col.table.append(None)
            at = [len(col.table) - 1]
        col.none_code, col.none_invalid = at[0], got[0] is None

    def _accepts(self, j: int, values) -> bool:
        try:
            self.evaluate({j: values})
        except Exception:  # noqa: BLE001 - any refusal of the preprocessing counts
            return False
        return True


#: how the final models pdpx knows read a sparse matrix's absent entries, by the library class they derive from
_ZERO_ON_SPARSE = ("sklearn.tree._classes.BaseDecisionTree", "sklearn.ensemble._forest.BaseForest",
                   "sklearn.ensemble._gb.BaseGradientBoosting", "lightgbm.sklearn.LGBMModel")
_MISSING_ON_SPARSE = ("xgboost.sklearn.XGBModel",)


def absent_entries(final) -> tuple:
    """(the value a sparse matrix's absent entries are to ``final``, or why pdpx cannot say).

    scikit-learn's trees, forests and gradient boosting, and LightGBM, read them as 0; XGBoost
    reads them as missing (NaN). Any other model fed a sparse matrix makes the pipeline run brute.
    """
    paths = {f"{k.__module__}.{k.__name__}" for k in type(final).__mro__}
    if paths.intersection(_ZERO_ON_SPARSE):
        return 0.0, ""
    if paths.intersection(_MISSING_ON_SPARSE):
        return np.nan, ""
    return 0.0, (f"its steps give {type(final).__name__} a sparse matrix, and pdpx does not know how it reads the "
                 "absent entries; for exact, make the output dense (ColumnTransformer(sparse_threshold=0) or "
                 "OneHotEncoder(sparse_output=False))")


def _as_column(values: np.ndarray, dtype):
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.Categorical(values, dtype=dtype)
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        narrow = held_dtype(dtype)  # float16 / float32: the preprocessing computes in the column's own type
        if narrow is not None:  # (a number beyond the type's range: its largest, as no column of it holds more)
            v = np.asarray(values, dtype=np.float64)
            top = float(np.finfo(narrow).max)
            return pd.array(np.where(np.isfinite(v), np.clip(v, -top, top), v).astype(narrow), dtype=dtype)
        return np.asarray(values, dtype=np.float64)
    if pd.api.types.is_object_dtype(dtype):  # kept object: a frame would read strings with None as str, None as NaN
        return pd.Series(np.asarray(values, dtype=object), dtype=object)
    try:
        return pd.array(values, dtype=dtype)
    except (TypeError, ValueError):
        return values


def tree_model(adapter, response: str):
    """The pipeline's TreeModel for ``response``, or None (``unavailable_reason`` says why)."""
    out = _built(adapter, response)
    return out if not isinstance(out, str) else None


def unavailable_reason(adapter, response: str) -> str:
    """Why the pipeline runs ``brute``: the step or column, and the reason."""
    out = _built(adapter, response)
    return f"{type(adapter.model).__name__}: {out}" if isinstance(out, str) else ""


#: pipeline -> (the columns and dtypes of X, response, its steps, final model and the final model's adapter) of
#: its last lookup: a repeated call finds its trees without evaluating the steps on the reference row
_LOOKUPS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _fitted_state(steps: list, inner, response: str) -> tuple:
    """What identifies a pipeline's fitted state: the final model's trees and each step's fitted arrays (a refit
    makes new ones), the steps themselves and the version of the column rules (``"passthrough"`` and None steps
    stand for nothing)."""
    real = [s for _, s in steps if not _skip(s)]
    return (inner.tree_model(response),) + tuple(
        v for s in real for k, v in sorted(vars(s).items()) if k.endswith("_") and not k.startswith("_")
        and isinstance(v, (np.ndarray, list, dict))) + tuple(real) + (rules_version(),)


def _steps_fingerprint(steps: list, final=None) -> str:
    """:func:`pdpx.adapters.sklearn_state.steps_digest`: every step's parameters (by value, functions by identity
    and code) and learnt values, those of the estimators inside it, and the final model's parameters. A step edited
    in place or given new parameters changes it, where :func:`_fitted_state` sees only new objects. The final
    model's trees are in their own key."""
    return steps_digest(steps, final)


def model_fingerprint(model) -> str:
    """A fitted Pipeline's :func:`_steps_fingerprint`: its steps' parameters and learnt values, its final model's
    parameters."""
    steps, final = split(model)
    return _steps_fingerprint(steps, final)


def _known(model, signature: tuple, response: str):
    """The cached trees of ``model`` when its last lookup had the same columns, dtypes, steps and final model and
    nothing was refitted since; else None."""
    try:
        last = _LOOKUPS.get(model)
    except TypeError:  # not weak-referenceable or not hashable: always looked up in full
        return None
    if last is None or last[0] != signature:
        return None
    steps, final = split(model)
    if final is not last[2] or len(steps) != len(last[1]) or any(a[1] is not b[1] for a, b in zip(steps, last[1])):
        return None
    try:
        return model_cache.peek(model, response, _fitted_state(last[1], last[3], response),
                                state=_columns_state(signature), fingerprint=_steps_fingerprint(last[1], last[2]))
    except Exception:  # noqa: BLE001 - a refit the old adapter cannot read: the full lookup says what happens
        return None


def _columns_state(signature: tuple) -> str:
    """The cache state of a pipeline's trees: they are read through the steps on a frame of X's columns and
    dtypes (a float32 column is scaled in float32, the same values as pandas' Float32 in float64), so a frame
    of other dtypes reads them again rather than reusing the trees read for the first."""
    return f"columns {hash(signature):x}"


def _built(adapter, response: str):
    ref = getattr(adapter, "reference_rows", None)
    if ref is None:
        return "the pipeline's columns are not known yet"
    model = adapter.model
    signature = (tuple(ref.columns), tuple(ref.dtypes), response)
    known = _known(model, signature, response)
    if known is not None:
        return column_values.complete_for(known, adapter)
    try:
        pt = PipelineTrees(model, ref, response)
    except Exception as exc:  # noqa: BLE001 - the pipeline refuses its own reference row: brute will say why
        return f"its steps could not be evaluated on one row of X ({type(exc).__name__}: {exc})"
    out = model_cache.get(model, response, _fitted_state(pt.steps, pt.inner, response), pt.build,
                          state=_columns_state(signature), fingerprint=_steps_fingerprint(pt.steps, pt.final))
    try:
        _LOOKUPS[model] = (signature, pt.steps, pt.final, pt.inner)
    except TypeError:
        pass
    return column_values.complete_for(out, adapter)
