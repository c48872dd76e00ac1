"""The categories a saved model stores for its categorical columns, and DATA read with them.

A CSV file has no dtypes: a column the model was fit on as a pandas ``category`` reads
back as strings (or numbers). The command line gives such a column the model's own
categories, in the model's order, so that each value gets the code the model was fit
with:

* LightGBM stores ``pandas_categorical`` (one list per category column, in the order of
  ``categorical_feature``) in its text model;
* XGBoost (3.1 and later) stores the categories of a model fit with
  ``enable_categorical=True`` (``Booster.get_categories``);
* an R model exported with ``pdpx::export_model()`` stores its factors' levels.

When the model has a categorical feature but stores no categories, pdpx cannot know which
code a string means: :func:`apply_categories` then says to pass DATA as Parquet, which
keeps the ``category`` dtype.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

PARQUET_HINT = ("save DATA as Parquet with the column's dtype as at fit time (in Python: "
                "X.to_parquet('data.parquet'), X as passed to fit) and pass that file instead")


@dataclass
class ModelCategories:
    """A model's categorical features: ``known`` names -> stored categories; ``unknown`` names store none."""

    known: dict = field(default_factory=dict)
    unknown: list = field(default_factory=list)
    library: str = ""

    def csv_dtypes(self) -> dict:
        """Columns to read from CSV as text: those whose stored categories are all strings."""
        return {name: str for name, cats in self.known.items() if cats and all(isinstance(c, str) for c in cats)}


def _library(model) -> str:
    return (type(model).__module__ or "").split(".")[0]


def model_categories(model) -> ModelCategories:
    """The categories ``model`` stores for its categorical features (LightGBM, XGBoost, an R model's export:
    its ``stored_categories()``; else none)."""
    stored = getattr(model, "stored_categories", None)
    if callable(stored):  # an adapter that keeps its model's factor levels (an R model's export)
        return ModelCategories(known=stored(), library="R")
    lib = _library(model)
    try:
        if lib == "lightgbm":
            return _lightgbm(getattr(model, "booster_", model))
        if lib == "xgboost":
            return _xgboost(model.get_booster() if hasattr(model, "get_booster") else model)
    except Exception:  # noqa: BLE001 - an unfitted or unusual model: the library says so later
        return ModelCategories()
    return ModelCategories()


def _lightgbm(booster) -> ModelCategories:
    stored = getattr(booster, "pandas_categorical", None)
    if not stored:
        return ModelCategories(library="LightGBM")
    names = booster.feature_name()
    idx = (getattr(booster, "params", None) or {}).get("categorical_feature")
    if isinstance(idx, str):
        idx = [int(i) for i in idx.replace(" ", "").split(",") if i]
    if isinstance(idx, int):
        idx = [idx]
    try:
        idx = [int(i) for i in idx or ()]
    except (TypeError, ValueError):  # names, not positions
        idx = [names.index(i) for i in idx if i in names]
    if len(idx) != len(stored) or any(not 0 <= i < len(names) for i in idx):
        return ModelCategories(unknown=[f"{len(stored)} category column(s)"], library="LightGBM")
    return ModelCategories(known={names[i]: list(c) for i, c in zip(sorted(idx), stored)}, library="LightGBM")


def _xgboost(booster) -> ModelCategories:
    types = list(booster.feature_types or [])
    names = list(booster.feature_names or [f"f{i}" for i in range(len(types))])
    cat = [n for n, t in zip(names, types) if t == "c"]
    if not cat:
        return ModelCategories(library="XGBoost")
    known: dict = {}
    try:
        cats = booster.get_categories(export_to_arrow=True)
        if not cats.empty():
            known = {n: arr.to_pylist() for n, arr in cats.to_arrow() if arr is not None and n in cat}
    except (AttributeError, TypeError):  # XGBoost before 3.1 stores no categories
        pass
    return ModelCategories(known=known, unknown=[n for n in cat if n not in known], library="XGBoost")


def _column(frame: pd.DataFrame, name: str):
    if name in frame.columns:
        return name
    same = [c for c in frame.columns if str(c).replace(" ", "_") == name]
    return same[0] if len(same) == 1 else None


def apply_categories(frame: pd.DataFrame, cats: ModelCategories, data_name: str, note=None) -> pd.DataFrame:
    """``frame`` with the model's categorical columns as ``category`` dtype of the model's categories.

    Columns already of ``category`` dtype (from Parquet) are left as they are. A value the
    model was not fit with is read as missing, as the model reads it (``note`` is told).
    A categorical feature whose categories the model does not store, given as text, is an
    error that says to use Parquet.
    """
    frame = frame.copy()
    for name, categories in cats.known.items():
        col = _column(frame, name)
        if col is None or isinstance(frame[col].dtype, pd.CategoricalDtype):
            continue
        values = frame[col]
        if all(isinstance(c, str) for c in categories):
            values = values.where(values.isna(), values.astype(str))
        unseen = sorted({str(v) for v in values.dropna()} - {str(c) for c in categories})
        if unseen and note is not None:
            shown = ", ".join(repr(v) for v in unseen[:5]) + (" ..." if len(unseen) > 5 else "")
            note(f"column {col!r} of {data_name} has values the model was not fit with ({shown}); "
                 "the model reads them as missing")
        frame[col] = pd.Categorical(values.where(values.isin(categories)), categories=categories)
    has_category = any(isinstance(t, pd.CategoricalDtype) for t in frame.dtypes)
    for name in cats.unknown:
        col = _column(frame, name)
        if col is None:  # LightGBM: which columns are categorical is not known
            bad, what = not has_category and cats.library == "LightGBM", f"its {name}"
        else:
            bad = not pd.api.types.is_numeric_dtype(frame[col]) and not isinstance(frame[col].dtype,
                                                                                      pd.CategoricalDtype)
            what = f"column {col!r}"
        if bad:
            raise ValueError(
                f"the {cats.library} model does not store the categories of {what}, so pdpx cannot tell which "
                f"code each value in {data_name} stands for: {PARQUET_HINT}")
    return frame
