"""Several results on one grid: one per model (a dict of models) or one per group (``by=``).

:func:`stacked_partial_dependence` computes them; :class:`StackedResult` holds
them, stacks their tidy frames with one extra column (``model``, or the ``by``
column's name) and draws them overlaid (:mod:`pdpx.outputs.plot_overlay`).
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pandas as pd

from .dates import day_labels, day_numbers, is_date_type
from .errors import ExtrapolationWarning, PdpxError, from_model, model_cause, model_failure
from .options import PDOptions
from .result import SCHEMA_HEAD, CurveResult, PartialDependenceResult
from .rows import require
from .session import Session

#: Columns a ``by`` column's name must not take (the tidy frame has them already).
RESERVED = set(SCHEMA_HEAD) | {"yhat", "lower", "upper", "model"}


@dataclass
class StackedResult(CurveResult):
    """Results of several models or groups, computed on one grid (a :class:`~pdpx.core.result.CurveResult`).

    Attributes
    ----------
    column : str
        ``"model"`` for a dict of models, else the name of the ``by`` column.
    labels : list of str
        The model names, or the groups' labels (levels; ranges for binned numeric columns).
    results : list of PartialDependenceResult
        One per label, in order. For groups, ``ice_rows`` are row positions in the full X.
    """

    figure = "stacked"

    column: str
    labels: list[str]
    results: list[PartialDependenceResult]

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[PartialDependenceResult]:
        return iter(self.results)

    def __getitem__(self, label) -> PartialDependenceResult:
        if isinstance(label, (int, np.integer)):
            return self.results[label]
        if str(label) in self.labels:
            return self.results[self.labels.index(str(label))]
        raise KeyError(f"no {self.column} {label!r}; have {self.labels}")

    def __repr__(self) -> str:
        return (f"<StackedResult by {self.column!r}: {self.labels} features={self.features} "
                f"methods={list(self.method.values())}>")

    features = property(lambda self: self.results[0].features)
    feature_set = property(lambda self: self.results[0].feature_set)
    grid_values = property(lambda self: self.results[0].grid_values)
    categorical = property(lambda self: self.results[0].categorical)
    outputs = property(lambda self: self.results[0].outputs)
    kind = property(lambda self: self.results[0].kind)

    @property
    def method(self) -> dict[str, str]:
        """The method that ran for each label."""
        return {lab: r.method for lab, r in zip(self.labels, self.results)}

    def to_frame(self, *, kind: str | None = None, n_features: int | None = None, memory_budget=None):
        """The results' tidy frames stacked, with the column :attr:`column` (after ``feature_set``)."""
        frames = []
        for lab, r in zip(self.labels, self.results):
            df = r.to_frame(kind=kind, n_features=n_features, memory_budget=memory_budget)
            df.insert(1, self.column, pd.array([lab] * len(df), dtype="string"))
            frames.append(df)
        out = pd.concat(frames, ignore_index=True)
        out[self.column] = pd.Categorical(out[self.column].astype(str), categories=self.labels)
        out.attrs.update(frames[0].attrs, stacked_by=self.column)
        return out


def stacked_partial_dependence(model, X, features, options: PDOptions) -> StackedResult:
    """``partial_dependence`` of a dict of models, or by groups of rows (``options.by``; see
    :func:`pdpx.partial_dependence`)."""
    by, by_bins = options.by, options.by_bins
    options = options.but(by=None)
    if isinstance(model, dict):
        if by is not None:
            raise PdpxError("by= and a dict of models cannot be combined; compare the models per group yourself "
                            "(one call per group's rows) or the groups per model")
        if not model:
            raise PdpxError("the dict of models is empty; pass {'name': model, ...}")
        labels, results = [], []
        with one_extrapolation_warning():
            for name, m in model.items():
                try:
                    session = Session(m, X, options)
                    results.append(session.compute(session.resolve_features(features)))
                except PdpxError as exc:
                    raise PdpxError(f"model {name!r}: {exc}") from None
                except Exception as exc:
                    if not from_model(exc):  # the model's failure, with pdpx's context: name the model too
                        raise
                    raise model_failure(exc, f"model {name!r}") from model_cause(exc)
                labels.append(str(name))
        if len(set(labels)) != len(labels):
            raise PdpxError(f"the dict of models has names that are equal as text: {labels}")
        return StackedResult("model", labels, results)
    with one_extrapolation_warning():
        return _by_groups(model, X, features, options, by, by_bins)


@contextmanager
def one_extrapolation_warning():
    """Pass on the warnings raised inside, but only the first
    :class:`~pdpx.core.errors.ExtrapolationWarning` (one per call, not one per model or group)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    seen = False
    for w in caught:
        if issubclass(w.category, ExtrapolationWarning):
            if seen:
                continue
            seen = True
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def _by_groups(model, X, features, options: PDOptions, by, by_bins) -> StackedResult:
    """One result per group of rows of the ``by`` column, each on the full data's grids (the groups' sessions
    share the main session's :class:`~pdpx.core.grids.Grids`) and inputs validated once."""
    main = Session(model, X, options)
    require(main.data, "by", "partial_dependence")
    feats = main.resolve_features(features)
    jb = main.resolve_features([by])[0]
    name = main.names[jb]
    if jb in feats:
        raise PdpxError(f"by={name!r} is also a target feature; group by another column")
    if name in RESERVED:
        raise PdpxError(f"by={name!r} would clash with a column of the tidy frame ({sorted(RESERVED)}); "
                        "rename that column of X")
    labels, codes = group_codes(main.X.iloc[:, jb], by_bins, categorical=main.categorical[jb])
    for j in feats:  # every grid from the full data, before any group
        main.grid_for(j)
    results = []
    for i, lab in enumerate(labels):  # each group's support counts its own rows
        rows = np.flatnonzero(codes == i)
        weights = None
        if main.sample_weight is not None:
            weights = main.sample_weight[rows]
            if weights.sum() <= 0:
                raise PdpxError(f"by={name!r}: every row of group {lab!r} has sample_weight 0")
        session = Session.of(main.inputs.group(rows, weights), main.grids)
        try:
            results.append(session.compute(feats))
        except Exception as exc:
            if not from_model(exc):  # the model's failure, with pdpx's context: name the group too
                raise
            raise model_failure(exc, f"by={name!r}, group {lab!r} ({len(rows):,} rows)") from model_cause(exc)
    return StackedResult(name, labels, results)


def group_codes(column: pd.Series, by_bins: int, *, categorical: bool) -> tuple[list[str], np.ndarray]:
    """The groups of a ``by`` column: (labels, code of each row; rows whose value is missing get the last code).

    Categorical columns: their levels that occur (category order, else sorted). Numeric
    columns with at most ``by_bins`` distinct values: those values; otherwise
    ``by_bins`` quantile bins (fewer when quantiles coincide), labelled by their ranges.
    """
    isna = column.isna().to_numpy()
    present = column[~isna]
    if present.empty:
        raise PdpxError(f"by={column.name!r} has only missing values; there is nothing to group by")
    if not categorical:
        dated = is_date_type(column.dtype)  # dates: grouped in days, labelled as dates
        values = day_numbers(present, wall=True) if dated else pd.to_numeric(present, errors="coerce").to_numpy(
            dtype=float)
        uniques = np.unique(values)
        if uniques.size > by_bins:
            edges = np.unique(np.quantile(values, np.linspace(0, 1, by_bins + 1),  # dates: edges the column holds
                                          method="inverted_cdf" if dated else "linear"))
            # bins (e_b, e_b+1], the first one closed on the left, as pandas.qcut
            bins = np.clip(np.searchsorted(edges, values, side="left") - 1, 0, len(edges) - 2)
            used = np.unique(bins)
            text = day_labels(edges) if dated else [f"{e:.4g}" for e in edges]
            labels = [f"{'[' if b == 0 else '('}{text[b]}, {text[b + 1]}]" for b in used]
            inner = np.searchsorted(used, bins)
        else:
            labels = day_labels(uniques) if dated else [f"{u:.6g}" for u in uniques]
            inner = np.searchsorted(uniques, values)
    else:
        if isinstance(column.dtype, pd.CategoricalDtype):
            seen = set(present.unique())
            levels = [c for c in column.cat.categories if c in seen]
        else:
            try:
                levels = sorted(present.unique())
            except TypeError:
                levels = list(dict.fromkeys(present))
        labels = [str(v) for v in levels]
        lookup = {v: i for i, v in enumerate(levels)}
        inner = np.array([lookup[v] for v in present], dtype=np.int64)
    codes = np.empty(len(column), dtype=np.int64)
    codes[~isna] = inner
    if isna.any():
        labels = labels + ["missing"]
        codes[isna] = len(labels) - 1
    if len(set(labels)) != len(labels):
        raise PdpxError(f"by={column.name!r}: levels {labels} are not distinct as text; recode the column")
    return labels, codes
