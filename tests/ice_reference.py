"""The definitions the measures of what the average hides are tested against, written out plainly: ICE curves by
brute force (the column set to each grid value keeping its dtype, the model's own predict) and the weighted
variance across rows of the curves centered on each row's own mean."""

from __future__ import annotations

import numpy as np
import pandas as pd
from stacked import predict_copies


def ice_by_brute(predict, X, feature, grid):
    """(n, G), or (n, K, G) for a predict of K columns: row i's prediction with ``feature`` set to each grid value,
    the column keeping its dtype."""
    copies = []
    for v in grid:
        Z = X.copy()
        if isinstance(X[feature].dtype, pd.CategoricalDtype):
            Z[feature] = pd.Categorical([v] * len(X), categories=X[feature].cat.categories)
        else:
            Z[feature] = np.full(len(X), v, dtype=X[feature].dtype)
        copies.append(Z)
    return np.stack([np.asarray(p, dtype=float) for p in predict_copies(predict, copies)], axis=-1)


def variance_by_hand(ice, w):
    """The weighted variance across rows (axis 0) of the curves (last axis) centered on each row's own mean."""
    c = ice - ice.mean(axis=-1, keepdims=True)
    mean = np.average(c, axis=0, weights=w)
    return np.average((c - mean) ** 2, axis=0, weights=w)
