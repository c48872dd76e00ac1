"""Learner uncertainty: how far the PD would move if the model were trained again on other data.

Every other band of pdpx is about the rows the PD averages over (``interval="bootstrap"``) or the
members of one fitted model (``interval="members"``). The PD of a *learner* (Molnar et al. 2023, "Relating
the partial dependence plot and permutation feature importance to the data generating process") is the
mean of the PDs of models refitted on ``K`` resamples or folds of the data::

    PD_bar(z) = 1/K sum_k PD_k(z)
    S2(z)     = 1/(K-1) sum_k (PD_k(z) - PD_bar(z))^2
    V(z)      = (1/K + n_test/n_train) * S2(z)          (Nadeau and Bengio's correction)
    band      = PD_bar(z) +- t_{K-1, (1+level)/2} * sqrt(V(z))

The models share most of their training rows, so their PDs vary less than PDs of models trained on
independent data sets would: ``S2 / K`` alone is too small. Nadeau and Bengio's factor
``1/K + n_test/n_train`` (``n_train`` the rows each model was trained on, ``n_test`` the rows left out)
widens it. It is a heuristic (no unbiased estimator of this variance exists for K-fold splits, Bengio and
Grandvalet 2004): ``benchmarks/coverage_study.py`` measures how often the band covers (``docs/uncertainty.md``).

Two entries:

* ``partial_dependence(Refits(models, train_fraction=...), X, features, interval="learner")``: each model's
  PD on the same ``X`` (:func:`learner_interval`); :class:`Refits` is a dict of models that knows the share
  of rows each was trained on (given, or read from the folds' index arrays);
* :func:`cross_fitted`: ``K`` folds, each fold's model fitted on the other folds and its PD computed on the
  fold's own held-out rows, on one grid built from all of ``X``; the curve is the mean of the ``K`` PDs.

Models are fitted through their own ``fit``: an estimator is copied unfitted (scikit-learn's
``__sklearn_clone__`` where it has one, else a deep copy that ``fit`` then overwrites), a function is called
for a new model (:func:`new_model`); no model library is imported here.
"""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from ..core.compute import compute
from ..core.errors import PdpxError
from ..core.grid import feature_grid, is_categorical_dtype
from ..core.members import DEFAULT_LEVEL, MemberResult
from ..core.options import PDOptions
from ..core.progress import progress_bar
from ..core.result import PartialDependenceResult
from ..core.stacked import stacked_partial_dependence

#: Options of partial_dependence that cross_fitted sets itself.
_REFUSED = ("kind", "interval", "n_boot", "by", "by_bins", "ice_sample", "level")


class Refits(dict):
    """A dict of models refitted on resamples or folds, with the share of the rows each was trained on.

    ``partial_dependence(Refits(...), X, features, interval="learner")`` draws the learner band
    (:mod:`pdpx.explain.learner`); anywhere else it is the dict of models it holds.

    Parameters
    ----------
    models : dict
        ``{"fold1": model1, ...}``, at least two fitted models of one learner.
    train_fraction : float, optional
        The share of the data each model was trained on (e.g. 0.8 for 5-fold splits); the rest is the
        held-out share, so ``n_test / n_train = (1 - train_fraction) / train_fraction``.
    folds : list of (train, test) index arrays, optional
        Each model's training and held-out rows, in the dict's order (what a scikit-learn splitter's
        ``split`` yields); ``n_test / n_train`` is the mean of ``len(test) / len(train)`` over the folds.
        A bootstrap resample's ``train`` may repeat rows (its length is its size).

    Give exactly one of ``train_fraction`` and ``folds``.
    """

    def __init__(self, models, *, train_fraction: float | None = None, folds=None):
        super().__init__(models)
        self.test_train_ratio = test_train_ratio(len(self), train_fraction, folds)
        self.train_fraction = 1.0 / (1.0 + self.test_train_ratio)


def test_train_ratio(n_models: int, train_fraction, folds) -> float:
    """``n_test / n_train`` from ``train_fraction`` or ``folds`` (see :class:`Refits`)."""
    if (train_fraction is None) == (folds is None):
        raise PdpxError("Refits: pass the share of rows each model was trained on, either train_fraction= (e.g. "
                        "0.8 for 5-fold splits) or folds= (each model's (train, test) index arrays), one of them")
    if train_fraction is not None:
        if isinstance(train_fraction, bool) or not isinstance(train_fraction, numbers.Real) \
                or not 0 < train_fraction < 1:
            raise PdpxError(f"Refits: train_fraction is the share of rows each model was trained on, a number "
                            f"strictly between 0 and 1; got {train_fraction!r}")
        return (1.0 - float(train_fraction)) / float(train_fraction)
    pairs = list(folds)
    if len(pairs) != n_models:
        raise PdpxError(f"Refits: folds= has {len(pairs)} (train, test) pairs for {n_models} models; give one "
                        "pair per model, in the dict's order")
    ratios = []
    for k, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise PdpxError(f"Refits: folds[{k}] must be a (train, test) pair of index arrays; got {pair!r}")
        n_train, n_test = (len(np.asarray(p).reshape(-1)) for p in pair)
        if n_train == 0 or n_test == 0:
            raise PdpxError(f"Refits: folds[{k}] has {n_train} training and {n_test} held-out rows; both must be "
                            "at least one")
        ratios.append(n_test / n_train)
    return float(np.mean(ratios))


@dataclass
class LearnerResult(MemberResult):
    """A learner-PD (:mod:`pdpx.explain.learner`): the mean of refitted models' PDs with its corrected band.

    Attributes (besides :class:`~pdpx.core.members.MemberResult`'s: ``members`` holds each model's PD)
    ----------
    se : ndarray of shape (n_outputs, *grid_shape)
        The corrected standard error ``sqrt((1/K + n_test/n_train) * S2)``.
    correction : float
        ``1/K + n_test/n_train``.
    test_train_ratio : float
        ``n_test / n_train``.
    models : dict or None
        :func:`cross_fitted`: the fold models, fitted (``{"fold1": model, ...}``).
    folds : list or None
        :func:`cross_fitted`: each fold's ``(train, test)`` row positions.
    """

    se: np.ndarray | None = field(default=None, repr=False)
    correction: float = float("nan")
    test_train_ratio: float = float("nan")
    models: dict | None = field(default=None, repr=False)
    folds: list | None = field(default=None, repr=False)


def learner_band(curves: np.ndarray, ratio: float, level: float) -> tuple:
    """``(mean, se, lower, upper, correction)`` of the learner-PD of ``curves`` (n_models, ...), see the module
    docstring."""
    from scipy import stats

    K = len(curves)
    if K < 2:
        raise PdpxError(f"the learner band needs at least two models; got {K}")
    mean = curves.mean(axis=0)
    correction = 1.0 / K + ratio
    se = np.sqrt(correction * curves.var(axis=0, ddof=1))
    t = float(stats.t.ppf((1.0 + level) / 2.0, K - 1))
    return mean, se, mean - t * se, mean + t * se, correction


def _learner_result(base: PartialDependenceResult, curves, labels, ratio: float, level: float, what: str,
                    **extra) -> LearnerResult:
    """``base`` as a :class:`LearnerResult` with the learner band of ``curves``."""
    mean, se, lower, upper, correction = learner_band(curves, ratio, level)
    K = len(curves)
    values = {f.name: getattr(base, f.name) for f in fields(PartialDependenceResult) if f.init}
    values.update(average=mean, lower=lower, upper=upper, interval=level, individual=None, kind="average")
    label = f"learner: {100 * level:g}% t-interval over {K} {what}, Nadeau-Bengio factor {correction:.3g}"
    return LearnerResult(**values, band=label, members=curves, member_labels=[str(x) for x in labels],
                         member_weights=np.full(K, 1.0 / K), se=se, correction=correction, test_train_ratio=ratio,
                         **extra)


def learner_interval(model, X, features, options: PDOptions) -> LearnerResult:
    """``partial_dependence(Refits(...), X, features, interval="learner")``: each model's PD on ``X``, their mean
    and the corrected band (module docstring)."""
    if not isinstance(model, Refits):
        raise PdpxError("interval='learner' needs to know the share of the rows each model was trained on (the "
                        "band's correction for overlapping training sets): pass pdpx.Refits(models, "
                        "train_fraction=0.8) or pdpx.Refits(models, folds=[(train, test), ...]); or let "
                        "pdpx.cross_fitted() fit the folds")
    if len(model) < 2:
        raise PdpxError(f"interval='learner' needs at least two refitted models; got {len(model)}")
    if options.by is not None:
        raise PdpxError("interval='learner' and by= cannot be combined; compute each group's rows in a call of "
                        "its own")
    if options.kind != "average":
        raise PdpxError(f"interval='learner' draws a band around one PD; kind={options.kind!r} asks for ICE "
                        "curves, which are each model's own: leave kind out")
    stacked = stacked_partial_dependence(dict(model), X, features, options.but(interval=None, level=None))
    results, labels = stacked.results, stacked.labels
    same_grids(results, labels)
    curves = np.stack([np.asarray(r.average, dtype=np.float64) for r in results])
    level = DEFAULT_LEVEL if options.level is None else options.level
    base = replace(results[0], method=_methods(results), notes=_notes(results),
                   model_name=f"{len(results)} refitted models")
    return _learner_result(base, curves, labels, model.test_train_ratio, level, "refits")


def same_grids(results, labels) -> None:
    """Refuse results whose grids differ (the curves could not be averaged point by point)."""
    first = results[0]
    for lab, r in zip(labels, results):
        for a, b in zip(r.grid_values, first.grid_values):
            a, b = pd.Index(np.asarray(a)), pd.Index(np.asarray(b))
            if not a.equals(b):
                raise PdpxError(f"model {lab!r} has another grid than model {labels[0]!r}; pass custom_values (one "
                                "grid for all), or grid='uniform' (grid='thresholds' reads each model's own splits)")


def _methods(results) -> str:
    names = list(dict.fromkeys(r.method for r in results))
    return names[0] if len(names) == 1 else ", ".join(names)


def _notes(results) -> list:
    return list(dict.fromkeys(n for r in results for n in r.notes))


# ---------------------------------------------------------------- fitting models
def new_model(factory, what: str = "cross_fitted()"):
    """A new unfitted model from ``factory``: a copy of an estimator (scikit-learn's ``__sklearn_clone__`` where
    it has one, else a deep copy whose ``fit`` starts again), or what a function of no arguments returns."""
    if hasattr(factory, "fit"):
        clone = getattr(factory, "__sklearn_clone__", None)
        return clone() if callable(clone) else copy.deepcopy(factory)
    if callable(factory):
        model = factory()
        if not hasattr(model, "fit"):
            raise PdpxError(f"{what}: the factory returned a {type(model).__name__}, which has no fit method; pass "
                            "an estimator (copied unfitted for each fit) or a function returning a new one")
        return model
    raise PdpxError(f"{what}: pass an estimator with a fit method (copied unfitted for each fit) or a function "
                    f"returning a new one; got a {type(factory).__name__}")


def rows_of(X, idx: np.ndarray):
    """The rows ``idx`` (positions) of a frame, an array or a vector."""
    return X.iloc[idx] if isinstance(X, (pd.DataFrame, pd.Series)) else np.asarray(X)[idx]


def fold_pairs(folds, X, y, random_state) -> list:
    """``[(train, test), ...]`` position arrays: ``folds`` a number of shuffled folds (seeded by
    ``random_state``), an iterable of pairs, or a splitter with ``split(X, y)``."""
    n = len(X)
    if isinstance(folds, numbers.Integral) and not isinstance(folds, bool):
        if not 2 <= folds <= n:
            raise PdpxError(f"cross_fitted(): folds={folds}, but X has {n} rows; pass a number of folds from 2 "
                            f"to {n}")
        order = np.random.default_rng(random_state).permutation(n)
        tests = [np.sort(t) for t in np.array_split(order, int(folds))]
        return [(np.setdiff1d(np.arange(n), t), t) for t in tests]
    pairs = list(folds.split(X, y)) if hasattr(folds, "split") else list(folds)
    if len(pairs) < 2:
        raise PdpxError(f"cross_fitted(): folds gave {len(pairs)} (train, test) pair(s); at least two are needed")
    out = []
    for k, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise PdpxError(f"cross_fitted(): folds[{k}] must be a (train, test) pair of row positions; got {pair!r}")
        train, test = (np.asarray(p).reshape(-1) for p in pair)
        if train.dtype == bool or test.dtype == bool or train.dtype.kind not in "iu" or test.dtype.kind not in "iu":
            raise PdpxError(f"cross_fitted(): folds[{k}] must hold row positions (integers)")
        if len(train) == 0 or len(test) == 0 or min(train.min(), test.min()) < 0 or max(train.max(), test.max()) >= n:
            raise PdpxError(f"cross_fitted(): folds[{k}] has {len(train)} training and {len(test)} held-out rows, "
                            f"all positions from 0 to {n - 1}; both must be non-empty")
        if np.intersect1d(train, test).size:
            raise PdpxError(f"cross_fitted(): folds[{k}]'s held-out rows include rows it trains on; each fold's "
                            "PD is computed on rows its model did not see")
        out.append((train, test))
    return out


def _shared_grid(X, features, options: PDOptions) -> dict:
    """One grid per feature from all of ``X`` (the folds' PDs are computed on it), as ``custom_values``."""
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    feats = [features] if isinstance(features, (str, numbers.Integral)) else list(features)
    custom = dict(options.custom_values or {})
    given = options.categorical_features
    out = {}
    for f in feats:
        if isinstance(f, numbers.Integral) and not isinstance(f, bool) and f not in frame.columns:
            column = frame.iloc[:, int(f)]
        elif f in frame.columns:
            column = frame[f]
        else:
            raise PdpxError(f"cross_fitted(): feature {f!r} is not a column of X")
        if f in custom or column.name in custom:
            out[f] = custom.get(f, custom.get(column.name))
            continue
        named = given is not None and not isinstance(given, str) and (f in list(given) or column.name in list(given))
        categorical = (is_categorical_dtype(column) or column.dtype == object or column.dtype == bool
                       or named or given == column.name)
        out[f] = feature_grid(column, categorical=bool(categorical), grid_resolution=options.grid_resolution,
                              percentiles=options.percentiles)
    return out


def cross_fitted(factory, X, y, features, *, folds=5, level: float | None = None, random_state=0,
                 fit_params: dict | None = None, progress: bool | None = None, **pd_options) -> LearnerResult:
    """The cross-fitted PD: each fold's model, fitted on the other folds, averaged over its own held-out rows.

    Parameters
    ----------
    factory : estimator, or function returning one
        The learner. An estimator is copied unfitted for each fold (``__sklearn_clone__``, else a deep copy);
        a function of no arguments is called for each fold.
    X, y
        The data: X a DataFrame or array, y one target per row.
    features : str, int, or list of them
        As in :func:`pdpx.partial_dependence`.
    folds : int, iterable of (train, test), or splitter, default 5
        A number of shuffled folds (seeded by ``random_state``); each model's (train, test) row positions; or an
        object with ``split(X, y)`` (a scikit-learn splitter). Held-out rows must not be trained on.
    level : float, optional
        The band's level (default 0.95): ``mean +- t_{K-1} * se``, ``se`` with the Nadeau-Bengio correction
        ``1/K + n_test/n_train`` (:mod:`pdpx.explain.learner`).
    random_state : int, optional
        Seed of the folds (when ``folds`` is a number) and of the PDs' options.
    fit_params : dict, optional
        Keyword arguments of each ``fit``.
    progress : bool, optional
        A bar over the folds (as :func:`pdpx.partial_dependence`'s ``progress``).
    **pd_options
        Options of :func:`pdpx.partial_dependence` for each fold's PD (``grid_resolution``, ``percentiles``,
        ``custom_values``, ``method``, ``response``, ``target``, ``categorical_features``, ``centered``,
        ``sample_weight`` (one weight per row of X) ...). One grid, built from all of X, serves every fold.

    Returns
    -------
    LearnerResult
        ``average`` the mean of the folds' PDs, ``lower`` / ``upper`` the band, ``se``, ``members`` each fold's
        PD, ``models`` the fitted fold models, ``folds`` their rows.
    """
    options = PDOptions.checked("cross_fitted", pd_options)
    refused = sorted(options.given & set(_REFUSED))
    if refused:
        raise PdpxError(f"cross_fitted(): option(s) {refused} do not apply (it computes each fold's PD and draws the "
                        "learner band); leave them out")
    if options.grid == "thresholds":
        raise PdpxError("cross_fitted(): grid='thresholds' reads each model's own splits, but the folds' PDs share "
                        "one grid; use grid='uniform' or custom_values")
    if level is not None and (isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1):
        raise PdpxError(f"cross_fitted(): level is the band's level, a number strictly between 0 and 1; got {level!r}")
    n = len(X)
    if y is None or len(y) != n:
        raise PdpxError(f"cross_fitted(): y must hold one target per row of X ({n} rows); got "
                        f"{'None' if y is None else len(y)}")
    pairs = fold_pairs(folds, X, y, random_state)
    weights = None if options.sample_weight is None else np.asarray(options.sample_weight, dtype=np.float64)
    if weights is not None and weights.shape != (n,):
        raise PdpxError(f"cross_fitted(): sample_weight must hold one weight per row of X ({n}); got shape "
                        f"{weights.shape}")
    opts = options.but(custom_values=_shared_grid(X, features, options), progress=False)
    models, results = {}, []
    bar = progress_bar(len(pairs), progress=progress, desc="cross_fitted: folds")
    try:
        for k, (train, test) in enumerate(pairs):
            model = new_model(factory)
            try:
                model.fit(rows_of(X, train), rows_of(y, train), **(fit_params or {}))
            except PdpxError:
                raise
            except Exception as exc:
                raise PdpxError(f"cross_fitted(): fitting fold {k + 1}'s model failed: {type(exc).__name__}: "
                                f"{exc}") from exc
            fold = opts.but(sample_weight=None if weights is None else weights[test])
            results.append(compute(model, rows_of(X, test), features, fold))
            models[f"fold{k + 1}"] = model
            bar.update(1)
    finally:
        bar.close()
    labels = list(models)
    same_grids(results, labels)
    curves = np.stack([np.asarray(r.average, dtype=np.float64) for r in results])
    ratio = float(np.mean([len(te) / len(tr) for tr, te in pairs]))
    base = replace(results[0], method=_methods(results), n_rows=n, model_name=f"{len(pairs)} fold models",
                   notes=_notes(results) + [f"cross-fitted: each of {len(pairs)} fold models' PD on its own "
                                            "held-out rows, one grid built from all rows"])
    return _learner_result(base, curves, labels, ratio, DEFAULT_LEVEL if level is None else float(level),
                           "folds (held-out rows)", models=models, folds=pairs)
