"""Rows of a DataFrame in the ensemble's input space: numbers as they are, categories as codes.

A categorical feature's code is the position of its hash among the hashes the model's
one-hot splits test (:attr:`pdpx_catboost.trees.CatBoostTrees.one_hot_values`), or ``K``
(one past the last) for a category matching none of them. CatBoost does not export the
category strings of its hashes, and its hash function is not part of its Python API, so
the encoder asks CatBoost itself: ``probe(position, labels)`` (the adapter's, through
``calc_leaf_indexes``) says which hash each label has. Answers are kept per label.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd


class CatBoostEncoder:
    """``encode`` / ``encode_values`` of the :class:`pdpx.extend.TreeModel` of a CatBoost model."""

    def __init__(self, one_hot_values: dict, cat_positions: set, probe: Callable):
        self.one_hot_values = one_hot_values
        self.cat_positions = set(cat_positions)
        self.probe = probe
        self._codes: dict[int, dict] = {pos: {} for pos in one_hot_values}

    def codes(self, pos: int, labels) -> np.ndarray:
        """Codes of ``labels`` of categorical feature ``pos`` (float64; NaN for missing labels)."""
        labels = list(labels)
        if pos not in self.one_hot_values:  # no split reads it: any code will do
            return np.zeros(len(labels))
        known = self._codes[pos]
        new = [lab for lab in dict.fromkeys(labels) if not _missing(lab) and lab not in known]
        if new:
            known.update(zip(new, self.probe(pos, new)))
        return np.array([np.nan if _missing(lab) else known[lab] for lab in labels], dtype=np.float64)

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        """The DataFrame as float64 in the ensemble's input space."""
        n, p = X.shape
        if not self.cat_positions:  # numeric only: one conversion
            return X.to_numpy(dtype=np.float64, na_value=np.nan)
        out = np.empty((n, p), dtype=np.float64)
        numeric = [j for j in range(p) if j not in self.cat_positions]
        if numeric:  # all numeric columns in one conversion
            out[:, numeric] = X.iloc[:, numeric].to_numpy(dtype=np.float64, na_value=np.nan)
        for j in range(p):
            col = X.iloc[:, j]
            if j not in self.cat_positions:
                continue
            if isinstance(col.dtype, pd.CategoricalDtype):
                table = np.append(self.codes(j, col.cat.categories), np.nan)
                out[:, j] = table[col.cat.codes.to_numpy()]  # code -1 (missing) reads the NaN at the end
            else:
                inverse, uniq = pd.factorize(col, use_na_sentinel=False)
                out[:, j] = self.codes(j, list(uniq))[inverse]
        return out

    def encode_values(self, pos: int, values) -> np.ndarray:
        """Grid values of column ``pos`` in the same space."""
        if pos in self.cat_positions:
            return self.codes(pos, list(values))
        return np.asarray(values, dtype=np.float64)


def _missing(label) -> bool:
    return label is None or (isinstance(label, float) and np.isnan(label))
