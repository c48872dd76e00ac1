"""Partial-dependence-based variable importance (Greenwell, Boehmke and McCarthy 2018).

A feature matters as much as its PD curve moves:

* numeric feature: the sample standard deviation (``ddof=1``) of the PD over its grid;
* categorical feature: the range of the PD over its levels divided by 4 (an
  estimate of the standard deviation from the range);
* ``kind="ice"``: the same measure of each row's ICE curve, averaged over the rows
  (weighted by ``sample_weight`` when given), which also credits features whose
  effects cancel in the average (interactions).

The missing-value grid point (``include_missing``) never enters the measure.

:func:`importance` returns an :class:`ImportanceResult`: the table as a pandas DataFrame
(so every DataFrame operation on it works as it did when it was a plain frame) that also
draws itself (``res.plot()``, ``res.save()``), like every other measure's result.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.compute import compute_many
from ..core.dates import is_date_grid
from ..core.deprecation import deprecated
from ..core.drawing import Drawable
from ..core.errors import PdpxError
from ..core.options import PDOptions

KINDS = ("pd", "ice")
#: The columns of :func:`importance`'s frame.
COLUMNS = ["feature", "output", "importance", "feature_type", "kind", "n_grid"]
#: Keywords of ``ImportanceResult.plot()`` (those of :func:`pdpx.plot_importance`); any other is pandas' plotting.
PLOT_OPTIONS = ("top", "title", "base_size")


class ImportanceResult(pd.DataFrame, Drawable):
    """What :func:`importance` returns: its table, a pandas DataFrame that draws itself.

    Columns ``feature, output, importance, feature_type, kind, n_grid``, one row per feature and
    output, most important first. Being a DataFrame, it works wherever the plain frame
    ``importance`` returned before did (``.sort_values``, ``.to_csv``, ``pd.concat``, ...), and what
    pandas derives from it (``imp.head(5)``, ``imp[imp.output == "x"]``) is a plain DataFrame, as
    before (:func:`pdpx.plot_importance` draws those).

    * ``to_frame()``: the table as a plain DataFrame (a copy);
    * ``plot(top=None, title=None, base_size=11)``: pdpx's bar chart (:func:`pdpx.plot_importance`),
      ``save(path)`` writes it. pandas' own plotting (``res.plot.barh(...)``, ``res.plot(x=..., y=...)``)
      still works, deprecated (a :class:`DeprecationWarning`): write ``res.to_frame().plot...``;
    * ``skipped``: ``{feature: reason}`` of the features left out (also ``attrs["skipped"]``).
    """

    figure = "importance"

    @property
    def plot(self):
        """``res.plot(top=None, title=None, base_size=11)``: pdpx's bar chart (see :class:`ImportancePlot`).

        A table edited in place to lose its ``feature`` or ``importance`` column is no importance table any
        more: its ``plot`` is pandas', as for any DataFrame.
        """
        if not self._is_table():
            return self.to_frame().plot
        return ImportancePlot(self)

    @property
    def skipped(self) -> dict:
        """``{feature: reason}`` of the features left out (constant or all-missing columns)."""
        return dict(self.attrs.get("skipped", {}))

    def to_frame(self) -> pd.DataFrame:
        """The table as a plain DataFrame (a copy, with ``attrs["skipped"]``)."""
        frame = pd.DataFrame(self, copy=True)
        frame.attrs = {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.attrs.items()}
        return frame

    def _is_table(self) -> bool:
        return {"feature", "importance"} <= set(self.columns)

    def __repr__(self) -> str:
        if not self._is_table():
            return super().__repr__()
        parts = [_count(self["feature"].nunique(), "feature")]
        if "output" in self.columns:
            parts.append(_count(self["output"].nunique(), "output"))
        kinds = sorted(set(self["kind"].astype(str))) if "kind" in self.columns else []
        head = (f"ImportanceResult: {' x '.join(parts)}{', kind ' + '/'.join(kinds) if kinds else ''}"
                f"{f', {len(self.skipped)} skipped' if self.skipped else ''}; .plot(), .to_frame()")
        return head + "\n" + super().__repr__()


class ImportancePlot:
    """``res.plot`` of an :class:`ImportanceResult`.

    Called with no argument or with ``top``, ``title``, ``base_size``: pdpx's bar chart
    (:func:`pdpx.plot_importance`), like ``plot()`` of every other result. Called with pandas'
    arguments (``kind=``, ``x=``, ``y=``, ...) or used as pandas' accessor (``res.plot.barh()``):
    pandas' plotting of the table, as when ``importance`` returned a plain DataFrame, with a
    :class:`DeprecationWarning` (write ``res.to_frame().plot...``).
    """

    def __init__(self, result: ImportanceResult):
        self._result = result

    def __call__(self, *args, **options):
        """pdpx's figure (the keywords of :func:`pdpx.plot_importance`), or pandas' for pandas' arguments."""
        if args or set(options) - set(PLOT_OPTIONS):
            deprecated("importance(...).plot(...) with pandas' plotting arguments",
                       "importance(...).to_frame().plot(...)")
            return self._result.to_frame().plot(*args, **options)
        return Drawable.plot(self._result, **options)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        deprecated(f"importance(...).plot.{name}(...)", f"importance(...).to_frame().plot.{name}(...)")
        return getattr(self._result.to_frame().plot, name)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def importance(model, X, features=None, *, kind: str = "pd", **pd_options) -> ImportanceResult:
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
    ImportanceResult
        A DataFrame ``feature, output, importance, feature_type, kind, n_grid``, most
        important first, that draws itself: ``res.plot()`` (:func:`pdpx.plot_importance`),
        ``res.save(path)``, ``res.to_frame()`` (a plain DataFrame), ``res.skipped``.
    """
    if kind not in KINDS:
        raise PdpxError(f"importance(): kind must be one of {list(KINDS)}, got {kind!r}")
    return importance_of(model, X, features, kind, PDOptions.checked("importance", pd_options))


def importance_of(model, X, features, kind: str, options: PDOptions) -> ImportanceResult:
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


def importance_table(results, kind: str, weights=None, skipped=None) -> ImportanceResult:
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
    frame = ImportanceResult(frame.sort_values("importance", ascending=False, kind="stable").reset_index(drop=True))
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
