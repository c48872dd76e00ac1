"""Whether ``brute`` may stack grid points into one predict call: checked once per model whose prediction path
holds the user's own code.

``brute`` stacks several grid points into each predict call, which is right for a model that
predicts each row on its own (every library's model). A user's function on the way (a
FunctionTransformer's ``func``, a model that is a plain function or a class of the user's
own: :meth:`pdpx.core.adapter.Adapter.user_code`) may instead depend on the other rows of
the call (it standardises or ranks within ``predict``). For such a model, the first call
compares, on a small sample (:data:`ROWS` rows of X, :data:`POINTS` grid points of the
feature), one stacked call with one call per grid point. When they differ, ``brute`` calls
the model once per grid point with all the rows (``method_options={"stack": False}``), says
so in the result's notes and warns (a :class:`~pdpx.core.errors.StackingWarning`, once per
model). The verdict is kept with the model (:data:`pdpx.core.ir.model_cache`, under its
fingerprint) for each feature set: a statistic over the call's rows of one column leaves
the PD of another column as it is. Given
``method_options={"stack": ...}``, pdpx does as told and checks nothing.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from .adapter import checked_predict
from .errors import StackingWarning, warn
from .ir import model_cache
from .trust import check_rows

#: Rows of X and grid points the check predicts on (one stacked call of ROWS x POINTS rows, POINTS calls of ROWS).
ROWS = 8
POINTS = 3
#: Relative difference (on the scale of the predictions) beyond which stacked and separate calls differ: a model
#: of each row alone gives the same numbers; one that standardises within the call moves them by far more.
RTOL = 1e-7


def stacked_frame(base: pd.DataFrame, features: list[int], values: list[np.ndarray],
                  dtypes: list | None = None) -> pd.DataFrame:
    """``len(values[0])`` copies of ``base``, copy ``b`` with feature ``features[j]`` set to ``values[j][b]``.

    ``dtypes[j]``: the dtype of target column j (default: the column's own; see
    :func:`pdpx.core.grid.column_dtype` for grids that do not fit it).
    """
    n, B = len(base), len(values[0])
    out = base.take(np.tile(np.arange(n), B))
    out.index = pd.RangeIndex(n * B)
    for j, (pos, vals) in enumerate(zip(features, values)):
        col = vals.repeat(n) if isinstance(vals, pd.api.extensions.ExtensionArray) else np.repeat(vals, n)
        dtype = base.dtypes.iloc[pos] if dtypes is None else dtypes[j]
        try:
            col = pd.array(col, dtype=dtype)
        except (TypeError, ValueError):
            pass  # e.g. 2.5 in an integer column: keep the values, let the column widen
        out.isetitem(pos, col)
    return out


def verdict(adapter, req, frame) -> str | None:
    """Why grid points must not be stacked for this model (a sentence for the result's notes), or None: asked
    once per model and response whose prediction path holds the user's code. ``frame(rows, values)``: the rows
    stacked once per grid point, ``values[j]`` the grid values of feature ``j`` of ``req``, as ``brute`` builds
    its frames."""
    what = adapter.user_code(req.response)
    if what is None:
        return None
    key = f"pdpx.core.stacking {req.response} {tuple(req.features)}"  # a row-wide statistic may spare a feature
    try:
        contents = adapter.fingerprint()
    except Exception:  # noqa: BLE001 - an adapter that cannot say: the model object alone keys the verdict
        contents = ""
    found = model_cache.get(adapter.model, key, (), lambda: _check(adapter, req, frame, what),
                            fingerprint=contents)
    return found or None


def _check(adapter, req, frame, what: str) -> str:
    """"" when one stacked call gives the same rows as one call per grid point, else the note (warned here, once
    per model)."""
    j = req.features[0]
    rows = req.X.iloc[check_rows(req.X, j, ROWS)]
    grid = req.grid_values[0]
    picks = np.unique(np.linspace(0, len(grid) - 1, min(POINTS, len(grid))).round().astype(np.int64))
    if len(rows) < 2 or len(picks) < 2:
        return ""
    # the first feature at a few grid points, the others (a 2-way) at their first
    idx = [picks] + [np.zeros(len(picks), dtype=np.int64)] * (len(req.grid_values) - 1)
    values = [g.take(i) if isinstance(g, pd.api.extensions.ExtensionArray) else np.asarray(g)[i]
              for g, i in zip(req.grid_values, idx)]
    try:  # on one thread: a few rows need no thread pool (nor one started behind the user's back)
        with adapter.one_thread():
            together = checked_predict(adapter, frame(rows, values), req.response)
            apart = np.concatenate([checked_predict(adapter, frame(rows, [v[p:p + 1] for v in values]),
                                                    req.response) for p in range(len(picks))])
    except Exception:  # noqa: BLE001 - the model fails on the sample: brute's own call will say how
        return ""
    scale = float(np.max(np.abs(apart[np.isfinite(apart)]), initial=0.0))
    with np.errstate(invalid="ignore"):
        same = (np.abs(together - apart) <= RTOL * max(scale, 1e-300)) | (np.isnan(together) & np.isnan(apart)) \
            | (together == apart)
    if same.all():
        return ""
    note = (f"pdpx called the model once per point with all the rows: its prediction goes through your own "
            f"code ({what}), and on a sample of {len(rows)} rows and {len(picks)} grid points one call of the grid "
            f"points stacked gave other predictions than one call per grid point (largest difference "
            f"{float(np.nanmax(np.abs(together - apart))):.3g}), so each row's prediction depends on the other rows "
            "of the call; method_options={'stack': True} stacks them anyway")
    warned = model_cache.get(adapter.model, "pdpx.core.stacking warned", (), dict)
    if warned:  # once per model
        return note
    warned[True] = True
    warn(StackingWarning(f"this {type(adapter.model).__name__}'s predictions depend on the other rows of the call "
                         f"({what}): pdpx calls it once per grid point (slower; the definition for such a model)"))
    return note


def apart(adapter, response: str, X: pd.DataFrame, features: list[int], values: list) -> str | None:
    """:func:`verdict` for a measure's own predict calls (ALE's edges, H's pairs at the rows): why the measure must
    call the model once per point (a note; also warned, once per model), or None when it may stack points, as
    ``brute`` asks it. ``values[j]``: a few of the values feature ``features[j]`` takes (at least two)."""
    req = SimpleNamespace(X=X, features=list(features), response=response,
                          grid_values=[v if isinstance(v, pd.api.extensions.ExtensionArray) else np.asarray(v)
                                       for v in values])
    return verdict(adapter, req, lambda rows, vals: stacked_frame(rows, req.features, vals))
