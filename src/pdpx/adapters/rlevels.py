"""Input encoding shared by the R forest readers that key factors by level (ranger, gbm), and their dates.

R's tree libraries code a factor by its level's position in a list of levels the
model (or the data) fixes; numbers stay numbers. :class:`LevelEncoder` maps a
DataFrame to that space: a factor column becomes the 0-based position of each
value's label in the model's levels (matched by label, so a pandas Categorical may
list its categories in any order), a numeric column its float values. Missing
values are NaN when the library accepts them (gbm), an error otherwise (ranger).
A column R sent as a ``Date`` or ``POSIXct`` (``datetime64`` here) becomes the days or seconds
R's ``data.matrix`` gives (:func:`dated_numbers`, which the randomForest reader uses too).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from ..r_wire import r_time_numbers
from ..r_wire import time_units as time_units_of


class LevelEncoder:
    """DataFrame columns -> the numeric input space of an R forest keyed by factor levels.

    Parameters
    ----------
    feature_names : list of str
        The model's inputs, in order.
    levels : list of (list of str or None)
        Per input: the levels of a factor (its code is the 0-based position of the
        label), or None for a numeric input.
    library : str
        Shown in errors ("ranger", "gbm").
    allow_missing : bool
        Whether NaN passes through (the library routes missing values) or is an error.
    unknown_as_missing : bool
        Whether a value that is not a level of the factor is read as missing (gbm's
        ``predict`` does so) rather than refused.
    time_units : list of (str or None), optional
        Per input: ``"days"`` (a ``Date`` column in R) or ``"seconds"`` (a ``POSIXct``), whose dates
        (``datetime64``) become the numbers R's ``data.matrix`` gives; None: numbers only.
    """

    def __init__(self, feature_names: Sequence[str], levels: Sequence, library: str, allow_missing: bool,
                 unknown_as_missing: bool = False, time_units=None):
        self.feature_names = [str(n) for n in feature_names]
        self.levels = [None if lv is None else [str(v) for v in lv] for lv in levels]
        if len(self.levels) != len(self.feature_names):
            raise PdpxError(f"{len(self.levels)} level lists for {len(self.feature_names)} {library} inputs")
        self.library = library
        self.allow_missing = allow_missing
        self.unknown_as_missing = unknown_as_missing
        self.time_units = time_units_of(time_units, len(self.feature_names))
        self._index = [None if lv is None else {v: i for i, v in enumerate(lv)} for lv in self.levels]

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    def is_factor(self, j: int) -> bool:
        return self.levels[j] is not None

    def _missing(self, j: int, n_missing: int, what: str) -> None:
        if n_missing and not self.allow_missing:
            raise PdpxError(
                f"{what} {self.feature_names[j]!r} has {n_missing} missing value(s); {self.library} cannot predict "
                "rows with missing values: drop or impute them first"
            )

    def factor_codes(self, j: int, values, *, what: str = "column") -> np.ndarray:
        """0-based level positions of ``values`` (labels) for factor input ``j``; NaN for missing."""
        index = self._index[j]
        s = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values, dtype=object))
        if isinstance(s.dtype, pd.CategoricalDtype):
            cats = [str(c) for c in s.cat.categories]
            lookup = np.array([index.get(c, -1) for c in cats] + [-2], dtype=np.int64)
            codes = lookup[s.cat.codes.to_numpy()]  # code -1 (missing) picks the trailing -2
        elif pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype) and not s.isna().all():
            raise PdpxError(
                f"{what} {self.feature_names[j]!r} is a factor in the {self.library} model but holds numbers; pass "
                f"it as a factor with the model's levels {self.levels[j][:6]!r}"
                f"{'...' if len(self.levels[j]) > 6 else ''}"
            )
        else:
            na = s.isna().to_numpy()
            labels = s.astype(object).where(~s.isna(), "").astype(str).to_numpy()
            codes = np.array([index.get(v, -1) for v in labels], dtype=np.int64)
            codes[na] = -2
        if self.unknown_as_missing:
            codes = np.where(codes == -1, -2, codes)
        self._missing(j, int((codes == -2).sum()), what)
        if np.any(codes == -1):
            bad = sorted({str(v) for v, c in zip(s.to_numpy(), codes) if c == -1})
            raise PdpxError(
                f"{what} {self.feature_names[j]!r} has values that are not levels of the factor in the "
                f"{self.library} model: {bad[:8]!r}; its levels are {self.levels[j]!r}"
            )
        return np.where(codes < 0, np.nan, codes.astype(np.float64))

    def numeric(self, j: int, values, *, what: str = "column") -> np.ndarray:
        s = values if isinstance(values, pd.Series) else pd.Series(values)
        if isinstance(s.dtype, pd.CategoricalDtype):
            raise PdpxError(
                f"{what} {self.feature_names[j]!r} is numeric in the {self.library} model but holds categories "
                "(a factor); pass numbers"
            )
        if pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype):
            out = s.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            out = dated_numbers(s, self.time_units[j], self.feature_names[j], self.library, what)
        self._missing(j, int(np.isnan(out).sum()), what)
        return out

    def column(self, j: int, values, *, what: str = "column") -> np.ndarray:
        if self.is_factor(j):
            return self.factor_codes(j, values, what=what)
        return self.numeric(j, values, what=what)

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        """(n_rows, n_features) float64, columns in model order."""
        if X.shape[1] != self.n_features:
            raise PdpxError(f"X has {X.shape[1]} columns; the {self.library} model has {self.n_features} inputs")
        out = np.empty((len(X), self.n_features))
        numeric = [j for j in range(self.n_features) if not self.is_factor(j)]
        dtypes = list(X.dtypes)
        if numeric and all(pd.api.types.is_float_dtype(dtypes[j]) for j in numeric):
            # one block copy for the plain float columns instead of one Series per column
            block = (X if len(numeric) == X.shape[1] else X.iloc[:, numeric]).to_numpy(dtype=np.float64,
                                                                                       na_value=np.nan)
            out[:, numeric] = block
            for j, n_missing in zip(numeric, np.isnan(block).sum(axis=0)):
                self._missing(j, int(n_missing), "column")
            numeric = []
        for j in range(self.n_features):
            if self.is_factor(j) or j in numeric:
                out[:, j] = self.column(j, X.iloc[:, j])
        return out

    def encode_values(self, position: int, values) -> np.ndarray:
        """Grid values of input ``position`` in the same space."""
        return self.column(position, pd.Series(list(values)) if self.is_factor(position) else values,
                           what="grid of")

    def model_frame(self, X: pd.DataFrame) -> pd.DataFrame:
        """X with factor inputs as pandas Categoricals in the model's levels (validated), for R's predict."""
        out = {}
        for j, name in enumerate(self.feature_names):
            col = X.iloc[:, j]
            if self.is_factor(j):
                codes = self.factor_codes(j, col)
                out[name] = pd.Categorical.from_codes(np.where(np.isnan(codes), -1, codes).astype(np.int64),
                                                      categories=self.levels[j])
            else:
                self.numeric(j, col)
                out[name] = col.array  # a time zone kept
        return pd.DataFrame(out, index=X.index)


def dated_numbers(s: pd.Series, unit: str | None, name: str, library: str, what: str) -> np.ndarray:
    """A column given for a numeric input that holds no numbers: the days or seconds R's ``data.matrix`` makes of
    dates or times (``unit``: the input was a ``Date`` or ``POSIXct`` column in R), else an error saying what the
    column holds, in words an R user reads."""
    dated = pd.api.types.is_datetime64_any_dtype(s.dtype)
    if dated and unit is not None:
        return r_time_numbers(s, unit)
    held = ("dates or times" if dated else "text" if pd.api.types.is_string_dtype(s.dtype) or s.dtype == object
            else f"values of type {s.dtype}")
    raise PdpxError(f"{what} {name!r} is numeric in the {library} model but holds {held}; pass numbers")
