"""Partial-dependence-based variable importance (Greenwell, Boehmke and McCarthy 2018).

A feature matters as much as its PD curve moves:

* numeric feature: the sample standard deviation (``ddof=1``) of the PD over its grid;
* categorical feature: the range of the PD over its levels divided by 4 (an
  estimate of the standard deviation from the range);
* ``kind="ice"``: the same measure of each row's ICE curve, averaged over the rows
  (weighted by ``sample_weight`` when given), which also credits features whose
  effects cancel in the average (interactions).

The missing-value grid point (``include_missing``) never enters the measure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.compute import compute_many
from ..core.dates import is_date_grid
from ..core.errors import PdpxError
from ..core.options import PDOptions

KINDS = ("pd", "ice")
#: The columns of :func:`importance`'s frame.
COLUMNS = ["feature", "output", "importance", "feature_type", "kind", "n_grid"]


def importance(model, X, features=None, *, kind: str = "pd", **pd_options) -> pd.DataFrame:
    """Variable importance from partial dependence (or ICE) curves, one row per feature and output.

    Parameters
    ----------
    model, X
        As in :func:`pdpx.partial_dependence`.
    features : list of str / int, optional
        Default: every column that has a grid (constant and all-missing columns
        are left out, as in :func:`pdpx.partial_dependence_many`).
    kind : {"pd", "ice"}, default "pd"
        ``"pd"``: the spread of the PD curve; ``"ice"``: the mean spread of the
        rows' ICE curves (Greenwell et al.'s ICE variant).
    **pd_options
        Options of :func:`pdpx.partial_dependence` (``grid_resolution``,
        ``response``, ``target``, ``sample_weight``, ``method``, ``ice_sample``, ...).
        ``include_missing`` defaults to False; a missing-value point is dropped
        from the measure anyway.

    Returns
    -------
    DataFrame
        ``feature, output, importance, feature_type, kind, n_grid``, most important
        first. Draw it with :func:`pdpx.plot_importance` (:mod:`pdpx.outputs.plot_explain`).
    """
    if kind not in KINDS:
        raise PdpxError(f"importance(): kind must be one of {list(KINDS)}, got {kind!r}")
    return importance_of(model, X, features, kind, PDOptions.checked("importance", pd_options))


def importance_of(model, X, features, kind: str, options: PDOptions) -> pd.DataFrame:
    """:func:`importance` with checked options (``options.given``: the options the caller passed)."""
    if "kind" in options.given or "centered" in options.given:
        raise PdpxError("importance(): pass kind='pd' or 'ice' (the curves' kind and centering are its own)")
    if kind == "pd" and options.ice_sample is not None:
        raise PdpxError("importance(): ice_sample applies to kind='ice' only")
    if "include_missing" not in options.given:
        options = options.but(include_missing=False)
    sets = None
    if features is not None:
        if isinstance(features, (str, int, np.integer)):
            features = [features]
        sets = [[f] for f in features]
        if not sets:
            raise PdpxError("importance(): features is empty; name at least one column, or None for every column")
    coll = compute_many(model, X, sets, options.but(kind="average" if kind == "pd" else "individual"))
    return importance_table(coll, kind, options.sample_weight, getattr(coll, "skipped", None))


def importance_table(results, kind: str, weights=None, skipped=None) -> pd.DataFrame:
    """The table :func:`importance` returns, from 1-way results already computed (their ``average`` for
    ``kind="pd"``, their ``individual`` curves for ``"ice"``); a missing-value grid point never enters it, and
    a centered curve has the spread of the uncentered one. ``skipped``: ``{feature: reason}`` of features left
    out, kept in ``frame.attrs["skipped"]``."""
    rows = []
    for res in results:
        grid = np.asarray(res.grid_values[0], dtype=object)
        keep = np.array([not _is_nan(v) for v in grid])
        if keep.sum() < 1:
            continue
        cat = bool(res.categorical[0])
        for o, out in enumerate(res.outputs):
            if kind == "pd":
                value = spread(np.asarray(res.average[o], dtype=float)[keep], cat)
            else:
                curves = np.asarray(res.individual[o], dtype=float)[:, keep]
                per_row = spread(curves, cat)
                w = None
                if weights is not None:
                    w = np.asarray(weights, dtype=float)
                    if res.ice_rows is not None:
                        w = w[np.asarray(res.ice_rows)]
                value = float(np.average(per_row, weights=w)) if w is None or w.sum() > 0 else float(per_row.mean())
            rows.append((res.features[0], out, float(value), feature_type(cat, res.grid_values[0]), kind,
                         int(keep.sum())))
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame = frame.sort_values("importance", ascending=False, kind="stable").reset_index(drop=True)
    skipped = skipped or {}
    frame.attrs["skipped"] = {(k[0] if isinstance(k, tuple) and len(k) == 1 else k): v for k, v in skipped.items()}
    return frame


def feature_type(categorical: bool, grid) -> str:
    """``feature_type`` of the table: ``"categorical"``, ``"date"`` or ``"numeric"``."""
    return "categorical" if categorical else "date" if is_date_grid(grid) else "numeric"


def spread(curves: np.ndarray, categorical: bool):
    """The importance of a curve (last axis): sd with ddof=1 (numeric) or range / 4 (categorical).

    A curve of one point has importance 0.
    """
    curves = np.asarray(curves, dtype=float)
    if curves.shape[-1] < 2:
        return np.zeros(curves.shape[:-1]) if curves.ndim > 1 else 0.0
    if categorical:
        return (curves.max(axis=-1) - curves.min(axis=-1)) / 4
    return curves.std(axis=-1, ddof=1)


def _is_nan(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False
