"""The definitions' copies of X, one per grid value, predicted in one call.

A definition calls the model's own method on a copy of X per grid value. The models the tests compare with predict
each row from that row alone, so one call on the copies stacked gives the same numbers as a call per copy, without
a pipeline's (or an OpenMP pool's) fixed cost per call, which was most of several tests' time (issue 50, point 5).
Where stacking would change a column's dtype (a categorical column's categories differ between copies, an integer
column gets a float), each copy is predicted on its own, as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: At most this many rows per call (the copies of a large X are predicted in several calls).
MAX_ROWS = 400_000


def predict_copies(method, copies: list) -> list[np.ndarray]:
    """``[np.asarray(method(Z)) for Z in copies]``, each copy a frame (or an array) with the same rows as the
    others, computed with as few calls as the dtypes allow."""
    if not copies:
        return []
    first = copies[0]
    if isinstance(first, pd.DataFrame):
        if not all(Z.dtypes.equals(first.dtypes) for Z in copies):
            return [np.asarray(method(Z)) for Z in copies]
        join = _join_frames
    elif isinstance(first, np.ndarray) and all(isinstance(Z, np.ndarray) and Z.dtype == first.dtype for Z in copies):
        join = np.concatenate
    else:
        return [np.asarray(method(Z)) for Z in copies]
    n = len(first)
    per_call = max(1, MAX_ROWS // max(n, 1))
    out = []
    for start in range(0, len(copies), per_call):
        part = copies[start:start + per_call]
        stacked = join(part)
        if stacked is None:
            return [np.asarray(method(Z)) for Z in copies]
        pred = np.asarray(method(stacked))
        out.extend(pred[i * n:(i + 1) * n] for i in range(len(part)))
    return out


def _join_frames(frames):
    stacked = pd.concat(frames, ignore_index=True)
    return stacked if stacked.dtypes.equals(frames[0].dtypes) else None
