"""Strategies for random fitted models, one per family, each returning a :class:`generated.Case`.

Families: ``sklearn`` (scikit-learn's tree ensembles), ``xgboost``, ``lightgbm``, ``catboost``
(through the pdpx-catboost plugin) and ``pipeline`` (Pipelines and ColumnTransformers of random
steps in front of any of them). Each family may wrap its model's class in a user's subclass
(:func:`generated.subclass`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from generated import KINDS, NUMERIC, Case, draw_weights, fit, frames, grid_options, subclass, targets
from hypothesis import strategies as st

CLASSIFY = ("binary", "multi")


def _maybe_subclass(draw, cls: type, y) -> tuple[type, str]:
    # a user's subclass, with or without overrides (issue 35)
    if draw(st.integers(0, 3)) == 0:
        return subclass(draw, cls, y)
    return cls, cls.__name__


@st.composite
def _finish(draw, model, X: pd.DataFrame, label: str, library: str, weights=None, tags=()):
    """The Case: a target feature and the grid options of the call."""
    feature = draw(st.sampled_from(list(X.columns)))
    options = draw(grid_options(model, X, feature))
    return Case(model, X, feature, options, label, library, weights, list(tags))


# ----------------------------------------------------------------------------------------- scikit-learn

def sklearn_estimator(draw, task: str, *, categories: bool, nan: bool, sparse: bool = False):
    """A scikit-learn tree model's class and parameters that fit ``task`` and the input's kinds."""
    names = ["DecisionTree", "RandomForest", "ExtraTrees"]
    if not nan:
        names.append("GradientBoosting")
    if not sparse:
        names.append("HistGradientBoosting")
    if categories:
        names = ["HistGradientBoosting"]
    name = draw(st.sampled_from(names))
    clf = task in CLASSIFY
    from sklearn import ensemble, tree

    params: dict = {"random_state": 0}
    if name == "HistGradientBoosting":
        cls = getattr(ensemble, f"HistGradientBoosting{'Classifier' if clf else 'Regressor'}")
        params.update(max_iter=draw(st.integers(1, 12)), max_depth=draw(st.sampled_from([None, 1, 2, 4])),
                      min_samples_leaf=draw(st.integers(1, 20)), max_leaf_nodes=draw(st.sampled_from([4, 15, 31])),
                      learning_rate=draw(st.sampled_from([0.1, 0.5, 1.0])), early_stopping=False)
        if not clf:
            losses = {"reg": ["squared_error", "absolute_error", "quantile"], "positive": ["poisson", "gamma"],
                      "count": ["poisson"]}[task]
            params["loss"] = draw(st.sampled_from(losses))
            if params["loss"] == "quantile":
                params["quantile"] = 0.3
        if categories:
            params["categorical_features"] = "from_dtype"
    elif name == "GradientBoosting":
        cls = getattr(ensemble, f"GradientBoosting{'Classifier' if clf else 'Regressor'}")
        losses = (["log_loss", "exponential"] if task == "binary" else ["log_loss"]) if clf else \
            ["squared_error", "absolute_error", "huber", "quantile"]
        params.update(loss=draw(st.sampled_from(losses)), n_estimators=draw(st.integers(1, 12)),
                      max_depth=draw(st.integers(1, 4)), learning_rate=draw(st.sampled_from([0.1, 0.5])),
                      subsample=draw(st.sampled_from([1.0, 0.7])), init=draw(st.sampled_from([None, "zero"])))
    else:
        if name == "DecisionTree":
            cls = getattr(tree, f"DecisionTree{'Classifier' if clf else 'Regressor'}")
        else:
            cls = getattr(ensemble, f"{name}{'Classifier' if clf else 'Regressor'}")
            params.update(n_estimators=draw(st.integers(1, 8)), bootstrap=draw(st.booleans()))
        criteria = ["gini", "entropy"] if clf else (["squared_error", "absolute_error"]
                                                    + (["poisson"] if task in ("positive", "count") else []))
        params.update(criterion=draw(st.sampled_from(criteria)), max_depth=draw(st.sampled_from([None, 1, 2, 5])),
                      min_samples_leaf=draw(st.integers(1, 10)), max_features=draw(st.sampled_from([None, "sqrt"])))
    return cls, params


@st.composite
def sklearn_cases(draw):
    """A scikit-learn tree model fitted on a frame of the kinds it takes (categories only for HGB)."""
    categories = draw(st.booleans())
    X = draw(frames(KINDS if categories else NUMERIC))
    categories = any(isinstance(t, pd.CategoricalDtype) for t in X.dtypes)
    nan = bool(X.isna().any().any())
    task = draw(st.sampled_from(["reg", "positive", "binary", "multi"]))
    cls, params = sklearn_estimator(draw, task, categories=categories, nan=nan)
    y = targets(draw, X, task)
    cls, label = _maybe_subclass(draw, cls, y)
    weights = draw_weights(draw, len(X))
    model = fit(cls(**params), X, y, weights)
    return draw(_finish(model, X, f"{label}({params}) task {task}", "sklearn", weights))


# ----------------------------------------------------------------------------------------- XGBoost

XGB_OBJECTIVES = {
    "reg": ["reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror", "reg:quantileerror"],
    "positive": ["reg:gamma", "reg:tweedie", "count:poisson"],
    "count": ["count:poisson", "reg:tweedie"],
    "unit": ["reg:logistic", "binary:logistic"],
    "binary": ["binary:logistic", "binary:logitraw", "binary:hinge"],
    "multi": ["multi:softprob", "multi:softmax"],
}


def xgboost_estimator(draw, task: str, *, categories: bool):
    """An XGBoost model's class and parameters for ``task``."""
    import xgboost as xgb

    objective = draw(st.sampled_from(XGB_OBJECTIVES[task]))
    clf = task in CLASSIFY
    params = dict(objective=objective, n_estimators=draw(st.integers(1, 12)), max_depth=draw(st.integers(1, 5)),
                  learning_rate=draw(st.sampled_from([0.1, 0.3, 1.0])), n_jobs=1, random_state=0,
                  tree_method=draw(st.sampled_from(["hist", "approx"] if categories else ["hist", "approx", "exact"])),
                  booster=draw(st.sampled_from(["gbtree", "gbtree", "dart"])))
    if params["booster"] == "dart":
        params.update(rate_drop=draw(st.sampled_from([0.1, 0.5])))
    if objective == "reg:quantileerror":
        params["quantile_alpha"] = 0.3
    if categories:
        params.update(enable_categorical=True, max_cat_to_onehot=draw(st.sampled_from([1, 8])))
    if draw(st.integers(0, 4)) == 0:
        params["base_score"] = draw(st.sampled_from([0.3, 0.5])) if task in ("unit", "binary") else 1.5
    if draw(st.integers(0, 5)) == 0:  # a value XGBoost treats as missing (besides NaN)
        params["missing"] = draw(st.sampled_from([0.0, -1.0]))
    if draw(st.integers(0, 5)) == 0:
        params["num_parallel_tree"] = 3
        params["subsample"] = 0.7
    cls = xgb.XGBClassifier if clf else xgb.XGBRegressor
    return cls, params


@st.composite
def xgboost_cases(draw):
    """An XGBoost model (objectives, gbtree / dart, categories, missing values) on a random frame."""
    X = draw(frames(KINDS))
    categories = any(isinstance(t, pd.CategoricalDtype) for t in X.dtypes)
    task = draw(st.sampled_from(["reg", "positive", "count", "unit", "binary", "multi"]))
    cls, params = xgboost_estimator(draw, task, categories=categories)
    y = targets(draw, X, task, string_labels=False)
    cls, label = _maybe_subclass(draw, cls, y)
    weights = draw_weights(draw, len(X))
    model = fit(cls(**params), X, y, weights)
    return draw(_finish(model, X, f"{label}({params}) task {task}", "xgboost", weights))


# ----------------------------------------------------------------------------------------- LightGBM

LGBM_OBJECTIVES = {
    "reg": ["regression", "regression_l1", "huber", "fair", "quantile"],
    "positive": ["poisson", "gamma", "tweedie", "mape"],
    "count": ["poisson", "tweedie"],
    "unit": ["cross_entropy", "cross_entropy_lambda"],
    "binary": ["binary"],
    "multi": ["multiclass", "multiclassova"],
}


def lightgbm_estimator(draw, task: str):
    """A LightGBM model's class and parameters for ``task``."""
    import lightgbm as lgb

    objective = draw(st.sampled_from(LGBM_OBJECTIVES[task]))
    params = dict(objective=objective, n_estimators=draw(st.integers(1, 12)), num_leaves=draw(st.integers(2, 15)),
                  min_child_samples=draw(st.integers(1, 20)), max_depth=draw(st.sampled_from([-1, 2, 4])),
                  learning_rate=draw(st.sampled_from([0.1, 0.5])), n_jobs=1, random_state=0, verbose=-1,
                  min_data_in_bin=1, min_data_per_group=draw(st.sampled_from([1, 5])), cat_smooth=1.0,
                  max_cat_to_onehot=draw(st.sampled_from([1, 4])),
                  zero_as_missing=draw(st.booleans()), use_missing=draw(st.sampled_from([True, True, False])),
                  linear_tree=draw(st.sampled_from([False, False, False, True])),
                  boosting_type=draw(st.sampled_from(["gbdt", "gbdt", "dart", "rf"])))
    if params["linear_tree"]:
        params["zero_as_missing"] = False  # LightGBM refuses both
    if params["boosting_type"] == "rf":
        params.update(subsample=0.7, subsample_freq=1)
    if objective == "quantile":
        params["alpha"] = 0.3
    cls = lgb.LGBMClassifier if task in CLASSIFY else lgb.LGBMRegressor
    return cls, params


@st.composite
def lightgbm_cases(draw):
    """A LightGBM model (objectives, categories, zero_as_missing, linear_tree, dart / rf) on a random frame."""
    X = draw(frames(KINDS))
    task = draw(st.sampled_from(["reg", "positive", "count", "unit", "binary", "multi"]))
    cls, params = lightgbm_estimator(draw, task)
    y = targets(draw, X, task)
    cls, label = _maybe_subclass(draw, cls, y)
    weights = draw_weights(draw, len(X))
    model = fit(cls(**params), X, y, weights)
    return draw(_finish(model, X, f"{label}({params}) task {task}", "lightgbm", weights))


# ----------------------------------------------------------------------------------------- CatBoost

CATBOOST_LOSSES = {
    "reg": ["RMSE", "MAE", "Quantile:alpha=0.3", "Huber:delta=1.0"],
    "positive": ["Poisson", "Tweedie:variance_power=1.5", "RMSE"],
    "unit": ["CrossEntropy"],
    "binary": ["Logloss", "CrossEntropy"],
    "multi": ["MultiClass", "MultiClassOneVsAll"],
}


@st.composite
def catboost_cases(draw):
    """A CatBoost model (losses, category columns, NaN in numeric columns, grow policies)."""
    import catboost as cb

    X = draw(frames(KINDS))
    cats = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    for c in cats:  # CatBoost refuses a missing category: a label of its own instead
        X[c] = X[c].cat.add_categories(["missing"]).fillna("missing")
    task = draw(st.sampled_from(sorted(CATBOOST_LOSSES)))
    loss = draw(st.sampled_from(CATBOOST_LOSSES[task]))
    params = dict(loss_function=loss, iterations=draw(st.integers(1, 12)), depth=draw(st.integers(1, 4)),
                  learning_rate=draw(st.sampled_from([0.1, 0.5])), thread_count=1, verbose=0, random_seed=0,
                  allow_writing_files=False, nan_mode=draw(st.sampled_from(["Min", "Max"])),
                  grow_policy=draw(st.sampled_from(["SymmetricTree", "SymmetricTree", "Depthwise", "Lossguide"])))
    if params["grow_policy"] == "Lossguide":
        params["max_leaves"] = 8
    if cats:
        params["cat_features"] = cats
    if loss == "Poisson":
        task = "count"
    clf = task in CLASSIFY or task == "unit"  # CrossEntropy: a classifier on probabilities
    y = targets(draw, X, task)
    cls = cb.CatBoostClassifier if clf else cb.CatBoostRegressor
    weights = draw_weights(draw, len(X))
    model = fit(cls(**params), X, y, weights)
    return draw(_finish(model, X, f"{cls.__name__}({params}) task {task}", "catboost", weights))


# ----------------------------------------------------------------------------------------- pipelines

def _numeric_step(draw, has_nan: bool, nullable: bool = False):
    """A transformer for one numeric column, and whether its output may still hold NaN."""
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, StandardScaler

    # scikit-learn refuses to pass pandas.NA of a nullable column through to a numpy array
    choices = ([] if has_nan and nullable else ["passthrough"]) + ["standard", "minmax", "log1p", "sqrt", "impute_nan"]
    if not has_nan:
        # SimpleImputer with a numeric sentinel (0, -1) in pipelines (issue 35)
        choices += ["impute_sentinel", "impute_sentinel"]
    kind = draw(st.sampled_from(choices))
    strategy = draw(st.sampled_from(["mean", "median", "most_frequent", "constant"]))
    if kind == "impute_nan":
        step = SimpleImputer(strategy=strategy, fill_value=-5)
        if draw(st.booleans()):
            step = make_pipeline(step, StandardScaler())
        return step, False
    if kind == "impute_sentinel":
        sentinel = draw(st.sampled_from([0, -1]))
        return SimpleImputer(missing_values=sentinel, strategy=strategy, fill_value=3), False
    step = {"passthrough": lambda: "passthrough", "standard": StandardScaler, "minmax": MinMaxScaler,
            "log1p": lambda: FunctionTransformer(lambda a: np.log1p(np.abs(a)), feature_names_out="one-to-one"),
            "sqrt": lambda: FunctionTransformer(np.sqrt)}[kind]()
    if kind == "sqrt":  # np.sqrt of negative values is NaN: an abs first
        step = make_pipeline(FunctionTransformer(np.abs), step)
        return step, True
    return step, has_nan


def _category_step(draw, has_nan: bool):
    """A transformer for one category column, its sparseness, and whether its output may hold NaN."""
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

    if draw(st.booleans()):
        sparse = draw(st.booleans())
        return OneHotEncoder(handle_unknown="ignore", sparse_output=sparse), sparse, False
    missing = draw(st.sampled_from([np.nan, -2]))
    return (OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=missing),
            False, has_nan and not isinstance(missing, int))


@st.composite
def pipeline_cases(draw):
    """A Pipeline: a ColumnTransformer of random steps per column (or imputer and scaler), then a tree model."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X = draw(frames(KINDS))
    categories = any(isinstance(t, pd.CategoricalDtype) for t in X.dtypes)
    if categories or draw(st.booleans()):
        steps, any_sparse, nan_out = [], False, False
        for name in X.columns:
            col_nan = bool(X[name].isna().any())
            if isinstance(X[name].dtype, pd.CategoricalDtype):
                step, sparse, nan = _category_step(draw, col_nan)
                any_sparse |= sparse
            else:
                step, nan = _numeric_step(draw, col_nan, str(X[name].dtype) in ("Int64", "Float32"))
            nan_out |= nan
            steps.append((f"t_{name}", step, [name]))
        threshold = draw(st.sampled_from([0.0, 0.3, 1.0]))
        front = ColumnTransformer(steps, sparse_threshold=threshold)
        sparse_out = any_sparse and threshold > 0
    else:
        front = Pipeline([("impute", SimpleImputer(strategy=draw(st.sampled_from(["mean", "median"])))),
                          ("scale", StandardScaler())])
        nan_out, sparse_out = False, False
    task = draw(st.sampled_from(["reg", "binary", "multi"]))
    lib = draw(st.sampled_from(["sklearn", "sklearn", "xgboost", "lightgbm"]))
    if lib == "sklearn":
        cls, params = sklearn_estimator(draw, task, categories=False, nan=nan_out, sparse=sparse_out)
    elif lib == "xgboost":
        # XGBoost behind a sparse ColumnTransformer (issue 35)
        cls, params = xgboost_estimator(draw, task, categories=False)
    else:
        cls, params = lightgbm_estimator(draw, task)
    y = targets(draw, X, task, string_labels=lib == "sklearn")
    cls, label = _maybe_subclass(draw, cls, y)
    model = Pipeline([("front", front), ("model", cls(**params))])
    weights = draw_weights(draw, len(X))
    model = fit(model, X, y, weights)
    tags = ["sparse"] if sparse_out else []
    return draw(_finish(model, X, f"Pipeline({front!r} -> {label}({params})) task {task}", lib, weights, tags))


FAMILIES = {"sklearn": sklearn_cases, "xgboost": xgboost_cases, "lightgbm": lightgbm_cases,
            "catboost": catboost_cases, "pipeline": pipeline_cases}
#: The library each family needs.
NEEDS = {"sklearn": "sklearn", "xgboost": "xgboost", "lightgbm": "lightgbm", "catboost": "pdpx_catboost",
         "pipeline": "sklearn"}
