"""Hypothesis strategies that build random fitted models on random frames, and the definition to check them.

Used by tests/test_generated_models.py. A :class:`Case` is a fitted model, its background
frame X, a target feature and the grid options of one call. The strategies draw:

* frames: 20-200 rows, 2-5 columns of float64, float32, pandas Float32, nullable Int64,
  int64 or category, NaN in some of them (:func:`frames`);
* models: scikit-learn's DecisionTree / RandomForest / ExtraTrees / GradientBoosting /
  HistGradientBoosting, XGBoost, LightGBM, CatBoost (through the pdpx-catboost plugin),
  regressors and classifiers (binary, multiclass), varied losses and objectives; subclasses
  with and without overrides of predict / predict_proba that post-process; Pipelines and
  ColumnTransformers of imputers (NaN and numeric sentinels), encoders (dense and sparse),
  scalers and FunctionTransformers (:func:`cases` and the family strategies below);
* grids: a small ``grid_resolution``, ``grid="thresholds"``, or ``custom_values`` within one
  ulp of split thresholds (the model's, where it tells them, and the data's midpoints).

:func:`definition` is partial dependence from its definition, written plainly: the column
set to each grid value keeping its dtype, the model's own method called, rows averaged.

Every branch is drawn: subclasses that override predict, sentinel imputers, sparse input to XGBoost, integer
columns under ``grid="thresholds"``, float32 and NaN columns in the drop-in were each a bug this fuzzer found or
covers (issue 35), now fixed and kept here.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import assume
from hypothesis import strategies as st

KINDS = ("float64", "float32", "Float32", "Int64", "int64", "category")
NUMERIC = ("float64", "float32", "Float32", "Int64", "int64")


def has(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    return importlib.util.find_spec(module) is not None


@dataclass
class Case:
    """One drawn model, its data and the options of one call."""

    model: Any
    X: pd.DataFrame
    feature: str
    options: dict
    label: str
    library: str
    weights: np.ndarray | None = None
    tags: list[str] = field(default_factory=list)

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example
        dtypes = ", ".join(f"{c}: {t}" for c, t in self.X.dtypes.astype(str).items())
        nans = {c: int(n) for c, n in self.X.isna().sum().items() if n}
        return (f"Case({self.label}; X {self.X.shape} [{dtypes}] NaN {nans}; feature {self.feature!r}; "
                f"options {self.options}; weights {'yes' if self.weights is not None else 'no'}; tags {self.tags})")


# ----------------------------------------------------------------------------------------- frames

@st.composite
def frames(draw, kinds=KINDS, nan: bool = True, nullable: bool = True, n_range=(20, 200)):
    """A DataFrame of 2-5 columns drawn from ``kinds`` (at least one numeric), NaN in some if ``nan``."""
    if not nullable:
        kinds = tuple(k for k in kinds if k not in ("Float32", "Int64"))
    n = draw(st.integers(*n_range))
    p = draw(st.integers(2, 5))
    col_kinds = [draw(st.sampled_from([k for k in kinds if k in NUMERIC]))]
    col_kinds += [draw(st.sampled_from(kinds)) for _ in range(p - 1)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cols = {}
    for j, kind in enumerate(col_kinds):
        name = f"x{j}"
        shape = draw(st.sampled_from(["normal", "rounded", "few", "skewed"]))
        if kind == "category":
            k = draw(st.integers(2, 5))
            labels = ["a", "b", "c", "d", "e"][:k]
            values = rng.choice(labels, n)
            cats = labels + (["unused"] if draw(st.booleans()) else [])
            col = pd.Series(pd.Categorical(values, categories=cats))
        elif kind in ("Int64", "int64"):
            col = pd.Series(rng.integers(-3, 8, n), dtype=kind)
        else:
            v = {"normal": lambda: rng.normal(size=n),
                 "rounded": lambda: np.round(rng.normal(size=n), 1),  # ties: rows on every border
                 "few": lambda: rng.choice([-1.0, 0.0, 0.5, 2.0], n),  # zeros and -1: the sentinels
                 "skewed": lambda: rng.exponential(size=n) * 10}[shape]()
            col = pd.Series(v, dtype=kind)
        if nan and kind != "int64" and draw(st.booleans()):
            share = draw(st.sampled_from([0.05, 0.2]))
            mask = rng.random(n) < share
            mask[0] = True
            col = col.copy()
            col[mask] = None
        cols[name] = col
    X = pd.DataFrame(cols)
    for name in X.columns:  # at least two distinct values everywhere
        assume(X[name].nunique(dropna=True) >= 2)
    return X


def signal(X: pd.DataFrame, rng) -> np.ndarray:
    """A response that depends on every column (and on their missing values), plus noise."""
    y = np.zeros(len(X))
    for j, name in enumerate(X.columns):
        col = X[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            v = col.cat.codes.to_numpy().astype(float)  # NaN is -1
        else:
            v = col.astype("float64").to_numpy(na_value=np.nan)
            v = np.where(np.isnan(v), -2.0, v)
            v = (v - np.mean(v)) / (np.std(v) + 1e-9)
        y += (1.0 + j) * (np.sin(v) if j % 2 else v)
    return y + rng.normal(scale=0.3, size=len(X))


def targets(draw, X: pd.DataFrame, task: str, *, string_labels: bool = True):
    """y for ``task``: "reg", "positive" (> 0), "count" (>= 0 integers), "unit" (in [0, 1]), "binary", "multi"."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    s = signal(X, rng)
    if task == "reg":
        return s * draw(st.sampled_from([1.0, 100.0]))
    if task == "positive":
        return np.exp(s / (np.std(s) + 1e-9))
    if task == "count":
        return rng.poisson(np.exp(s / (np.std(s) + 1e-9))).astype(float)
    if task == "unit":
        return 1.0 / (1.0 + np.exp(-s))
    k = 2 if task == "binary" else draw(st.integers(3, 4))
    codes = np.digitize(s, np.quantile(s, np.linspace(0, 1, k + 1)[1:-1]))
    assume(len(np.unique(codes)) == k and np.bincount(codes).min() >= 3)
    if string_labels and draw(st.booleans()):
        return np.array(["no", "yes", "maybe", "other"])[codes]
    return codes


# ----------------------------------------------------------------------------------------- grids

def thresholds_of(model, X: pd.DataFrame, feature: str) -> np.ndarray:
    """Values where the model's prediction may step in ``feature``: the thresholds scikit-learn and
    XGBoost store (where the model is one of theirs, fed X's columns), else the data's midpoints."""
    j = list(X.columns).index(feature)
    found: list[float] = []
    try:
        trees = []
        est = model
        for attr in ("estimators_",):
            if hasattr(est, attr):
                trees = [e for e in np.ravel(getattr(est, attr))]
        if hasattr(est, "tree_"):
            trees = [est]
        for t in trees:
            tree = getattr(t, "tree_", None)
            if tree is not None:
                found += list(tree.threshold[tree.feature == j])
        if hasattr(est, "get_booster"):
            df = est.get_booster().trees_to_dataframe()
            found += list(df.loc[df["Feature"] == feature, "Split"].dropna().astype(float))
    except Exception:  # noqa: BLE001 - a model that does not tell: the data's midpoints only
        pass
    col = X[feature].astype("float64").to_numpy(na_value=np.nan)
    u = np.unique(col[~np.isnan(col)])
    found += list((u[1:] + u[:-1]) / 2) + list(u)
    return np.unique(np.asarray(found, dtype=np.float64))


@st.composite
def grid_options(draw, model, X: pd.DataFrame, feature: str) -> dict:
    """The grid options of one call: resolution, thresholds, or custom values one ulp around thresholds."""
    kind = draw(st.sampled_from(["resolution", "thresholds", "custom"]))
    dtype = X[feature].dtype
    if kind == "resolution" or (kind == "custom" and str(dtype) in ("int64", "Int64")):
        opts = {"grid_resolution": draw(st.integers(2, 8))}
        if draw(st.booleans()):
            opts["percentiles"] = (0.0, 1.0)
        return opts
    if kind == "thresholds" or isinstance(dtype, pd.CategoricalDtype):
        return {"grid": "thresholds", "grid_resolution": draw(st.integers(2, 12))}
    t = thresholds_of(model, X, feature)
    picks = draw(st.lists(st.sampled_from(list(t)), min_size=1, max_size=3, unique=True))
    narrow = np.float32 if str(dtype) in ("float32", "Float32") else np.float64
    values = []
    for v in picks:
        v = narrow(v)
        values += [np.nextafter(v, narrow(-np.inf)), v, np.nextafter(v, narrow(np.inf))]
        if narrow is np.float32:  # the same float32, a different float64
            values += [np.float64(v) - 1e-12, np.float64(v) + 1e-12]
    values = np.unique(np.asarray(values, dtype=np.float64))
    return {"custom_values": {feature: values}}


# ----------------------------------------------------------------------------------------- the definition

def many_features(X: pd.DataFrame, options: dict) -> list[str]:
    """The columns partial_dependence_many is asked for with ``options`` (known bugs left out if asked)."""
    return list(X.columns)


def column_at(col: pd.Series, value) -> pd.Series:
    """``col`` with every row set to ``value``, keeping the column's dtype (a category stays a category,
    a missing value is NaN, pd.NA or a missing category as the dtype has it)."""
    missing = value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and np.isnan(value))
    if missing:
        return pd.Series([None] * len(col), index=col.index, dtype=object).astype(col.dtype)
    if pd.api.types.is_integer_dtype(col.dtype) and float(value) != np.floor(float(value)):
        raise AssertionError(f"the grid value {value!r} cannot be held by the {col.dtype} column {col.name!r}: "
                             "partial dependence there is not defined by setting the column")
    return pd.Series([value] * len(col), index=col.index).astype(col.dtype)


def output_columns(model, response: str, outputs, width: int) -> list[int]:
    """The columns of ``model.<response>(X)`` that a result's ``outputs`` name."""
    if response in ("predict_proba",) or (response == "decision_function" and width > 1):
        classes = [str(c) for c in model.classes_]
        return [classes.index(str(o)) for o in outputs]
    if width == 1:
        return [0] * len(outputs)
    if len(outputs) == width:
        return list(range(width))
    raise AssertionError(f"cannot match outputs {outputs} to {width} columns of {response}")


def model_method(model, response: str):
    """The model's own method for ``response``; "raw" is the boosted margin, asked of the library's predict."""
    if response != "raw":
        return getattr(model, response)
    module = type(model).__module__.split(".")[0]
    if module == "xgboost" or any(k.__module__.startswith("xgboost") for k in type(model).__mro__):
        return lambda Z: model.predict(Z, output_margin=True)
    if any(k.__module__.startswith("lightgbm") for k in type(model).__mro__):
        return lambda Z: model.predict(Z, raw_score=True)
    if any(k.__module__.startswith("catboost") for k in type(model).__mro__):
        return lambda Z: model.predict(Z, prediction_type="RawFormulaVal")
    raise AssertionError(f"no reference for response 'raw' of {type(model).__name__}")


def definition(model, X: pd.DataFrame, feature: str, grid, response: str, outputs, weights=None):
    """ICE (n_outputs, n_rows, n_grid) and PD (n_outputs, n_grid) from the definition.

    The model's own method is called once, on the copies of X (one per grid value) stacked: every model drawn here
    predicts each row from that row alone, so this is the same as a call per copy, without a pipeline's fixed cost
    per call (most of this test's time). Where stacking would change a column's dtype, a call per copy."""
    method = model_method(model, response)
    copies = []
    for v in grid:
        Z = X.copy()
        Z[feature] = column_at(X[feature], v)
        copies.append(Z)
    stacked = pd.concat(copies, ignore_index=True) if copies else None
    if stacked is not None and all(Z.dtypes.equals(X.dtypes) for Z in copies) and stacked.dtypes.equals(X.dtypes):
        P = np.asarray(method(stacked), dtype=np.float64).reshape(len(copies), len(X), -1)
        ice = np.transpose(P, (1, 2, 0))  # rows, width, grid
    else:
        ice = np.stack([np.asarray(method(Z), dtype=np.float64).reshape(len(Z), -1) for Z in copies], axis=-1)
    cols = output_columns(model, response, outputs, ice.shape[1])
    ice = np.transpose(ice[:, cols, :], (1, 0, 2))
    return ice, np.average(ice, axis=1, weights=weights)


# ----------------------------------------------------------------------------------------- fitting

def fit(model, X: pd.DataFrame, y, weights=None):
    """``model`` fitted on X, y; an input the library refuses (not pdpx's concern) rejects the example."""
    try:
        if weights is None:
            return model.fit(X, y)
        if hasattr(model, "steps"):
            return model.fit(X, y, **{f"{model.steps[-1][0]}__sample_weight": weights})
        return model.fit(X, y, sample_weight=weights)
    except Exception as e:  # noqa: BLE001 - e.g. a loss that needs positive targets, a dtype it refuses
        from hypothesis import event

        event(f"fit refused: {type(model).__name__}: {str(e)[:60]}")
        assume(False)


def draw_weights(draw, n: int):
    """None, or positive row weights."""
    if not draw(st.booleans()):
        return None
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return rng.uniform(0.1, 3.0, n)


# subclasses that override predict / predict_proba must be answered by brute (issue 35).
POSTPROCESS = {
    "clip": lambda P, lo, hi: np.clip(P, lo, hi),
    "round": lambda P, lo, hi: np.round(P, 1),
    "floor": lambda P, lo, hi: np.floor(P * 4) / 4,
    "identity": lambda P, lo, hi: P,  # an override that changes nothing is still an override
}


def subclass(draw, base: type, y) -> tuple[type, str]:
    """A subclass of ``base``: plain, or overriding predict / predict_proba with a post-processing step."""
    kind = draw(st.sampled_from(["plain", "predict", "predict_proba"]))
    what = draw(st.sampled_from(sorted(POSTPROCESS)))
    ns: dict = {"__module__": __name__, "__doc__": "A user's subclass (generated)."}
    post = POSTPROCESS[what]
    if kind == "predict" or (kind == "predict_proba" and not hasattr(base, "predict_proba")):
        if np.asarray(y).dtype.kind in "fiu":
            lo, hi = np.quantile(np.asarray(y, dtype=float), [0.2, 0.8])
        else:
            lo, hi = -np.inf, np.inf
        base_predict = base.predict

        def predict(self, X, *args, **kwargs):
            P = base_predict(self, X, *args, **kwargs)
            return post(P, lo, hi) if np.asarray(P).dtype.kind == "f" else P

        ns["predict"] = predict
        kind = "predict"
    elif kind == "predict_proba":
        base_proba = base.predict_proba

        def predict_proba(self, X, *args, **kwargs):
            P = post(base_proba(self, X, *args, **kwargs), 0.1, 0.9)
            return P / P.sum(axis=1, keepdims=True)

        ns["predict_proba"] = predict_proba
    name = f"My{base.__name__}"
    return type(name, (base,), ns), (f"subclass of {base.__name__}" if kind == "plain"
                                      else f"subclass of {base.__name__} overriding {kind} ({what})")
