"""Is this interaction real? Friedman and Popescu's (2008, section 8.3) null distribution of H.

A fitted model shows some interaction (H above 0) even where the data have none: the learner puts it there
(a tree splits on one feature inside a split on another), and noise does. :func:`h_test` asks how large H
would be if the data were additive, by refitting the learner on additive data of the same kind:

1. ``f`` the fitted model, ``f_A`` its additive part (2.) and ``r_i`` the residuals resampled into the null
   data: ``y_i - f_A(x_i)`` (``residuals="additive"``, the default), ``y_i - f(x_i)`` (``"in_sample"``, Friedman
   and Popescu's own choice, suited to their regularized rule ensembles) or ``y_i`` minus the prediction of a
   copy fitted on the other four of five folds (``"out_of_fold"``, five more fits). On Friedman-1 with a
   gradient boosting learner (``benchmarks/coverage_study.py``, ``docs/uncertainty.md``) the test at 5% rejected
   an additive pair in 6% of 100 replications with ``"additive"`` (power 0.85 on a real pair), in 73% with
   ``"in_sample"`` (a flexible learner fits part of the noise, so its null models see too little noise and show
   too little spurious interaction) and in none with ``"out_of_fold"`` (noise plus the model's error: too much
   noise, power 0.28);
2. its additive part ``f_A(x) = mean_i f(x_i) + sum_j PD_j(x_j)``, every 1-way PD centered to mean 0 over the
   rows (each PD computed by :func:`pdpx.partial_dependence` at the distinct values of its column, so
   ``f_A(x_i)`` is exact at every row);
3. ``n_null`` times: ``y*_i = f_A(x_i) + r_{b(i)}`` (residuals drawn with replacement), the estimator copied
   unfitted and fitted on ``(X, y*)``, and the H statistics of the asked features and pairs computed exactly on
   it (:func:`pdpx.h_statistic`, the same rows and options as the observed H);
4. each p-value ``(1 + #{null H >= observed H}) / (1 + n_null)``, adjusted across the pairs (and, separately,
   across the features' overall H) by Holm's step-down method or Benjamini-Hochberg's false discovery rate.

The smallest p-value is ``1 / (1 + n_null)``: 19 refits cannot go below 0.05. Refits cost time, so the first
null refit is timed and the test refused, before the others run, when ``n_null`` of them would take longer
than ``max_seconds``. Regression only: the residuals of a classifier's labels have no additive part to add
back to.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.errors import PdpxError
from ..core.options import PDOptions
from ..core.progress import progress_bar
from .interaction import h_statistic_of
from .learner import fold_pairs, new_model, rows_of

#: Options of partial_dependence that h_test passes on to each H and each additive PD.
PASSED = ("method", "n_jobs", "memory_budget", "method_options", "categorical_features", "sample_weight")
#: Adjustments across pairs.
ADJUST = ("holm", "fdr", None)
#: Where the residuals come from.
RESIDUALS = ("additive", "in_sample", "out_of_fold")
#: Folds of the out-of-fold residuals.
RESIDUAL_FOLDS = 5
#: Seconds the null refits may take when max_seconds is not given.
MAX_SECONDS = 600.0


@dataclass
class HTestResult:
    """The result of :func:`h_test`.

    Attributes
    ----------
    table : DataFrame
        One row per feature (overall H) and pair asked, in the order asked: ``feature_1``, ``feature_2`` (None
        for a feature's overall H), ``h`` (observed), ``h_null_mean``, ``h_null_q95`` (the null distribution's
        mean and 95% quantile), ``p_value``, ``p_adjusted``.
    null : ndarray of shape (n_null, n_rows_of_table)
        H of each null model, in the table's row order.
    observed : HStatistic
        The H statistics of the fitted model.
    n_null : int
    adjust : str or None
    notes : list of str
    elapsed : float
        Seconds.
    """

    table: pd.DataFrame
    null: np.ndarray = field(repr=False)
    observed: object = field(repr=False)
    n_null: int = 0
    adjust: str | None = "holm"
    notes: list = field(default_factory=list)
    elapsed: float = 0.0

    def to_frame(self) -> pd.DataFrame:
        """The table (a copy): one row per feature or pair asked, in the order asked."""
        return self.table.copy()

    def __repr__(self) -> str:
        rows = ", ".join(f"{a}{'' if b is None else ' x ' + str(b)}: h={h:.3f} p={p:.3g}"
                         for a, b, h, p in zip(self.table.feature_1, self.table.feature_2, self.table.h,
                                               self.table.p_adjusted))
        return f"HTestResult(n_null={self.n_null}, adjust={self.adjust!r}; {rows})"


def adjusted(p: np.ndarray, how: str | None) -> np.ndarray:
    """``p`` adjusted for multiple tests: Holm's step-down family-wise method, Benjamini-Hochberg's false discovery
    rate (``"fdr"``), or unchanged (None)."""
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if how is None or m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if how == "holm":
        step = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:
        step = np.minimum.accumulate((m / np.arange(m, 0, -1) * ranked[::-1]))[::-1]
    out = np.empty(m)
    out[order] = np.minimum(step, 1.0)
    return out


def h_test(estimator, X, y, pairs=None, *, features=None, n_null: int = 99, adjust: str | None = "holm",
           residuals: str = "additive", random_state=0, sample=None, fit_params: dict | None = None,
           max_seconds: float | None = MAX_SECONDS, progress: bool | None = None, **pd_options) -> HTestResult:
    """Friedman and Popescu's test of H: p-values from refits on the model's additive part plus resampled residuals.

    Parameters
    ----------
    estimator : fitted regressor
        The model whose interactions are tested, fitted on ``(X, y)``; copied unfitted for each null refit
        (``__sklearn_clone__``, else a deep copy whose ``fit`` starts again).
    X, y
        The data the estimator was fitted on (a DataFrame or array; one target per row).
    pairs : list of pairs of features, optional
        The pairs to test, e.g. ``[("x0", "x1")]``. Default: every pair of ``features``.
    features : list of features, optional
        Features whose overall H (interaction with any other feature) is tested. Default: the features named in
        ``pairs`` when pairs are given, else every column; ``[]``: none.
    n_null : int, default 99
        Null refits. The smallest p-value is ``1 / (1 + n_null)``.
    adjust : {"holm", "fdr", None}, default "holm"
        The adjustment across the pairs (and, separately, across the features): Holm's family-wise error, or
        Benjamini-Hochberg's false discovery rate.
    residuals : {"additive", "in_sample", "out_of_fold"}, default "additive"
        The residuals resampled into the null data: ``y`` minus the model's additive part, minus the fitted
        model's own predictions (Friedman and Popescu's choice; too small for flexible learners: the test rejects
        too often), or minus out-of-fold predictions (5 folds; too large: a conservative test). See
        :mod:`pdpx.explain.h_null` for what each gave in the coverage study.
    random_state : int, optional
        Seed of the resampled residuals, the residuals' folds and H's sample of rows.
    sample : int, optional
        As :func:`pdpx.h_statistic`'s (the rows H is computed on, the same for every model).
    fit_params : dict, optional
        Keyword arguments of each ``fit``.
    max_seconds : float or None, default 600
        Refuse the test when the first null refit (fit and H) times ``n_null`` would exceed this; None: no limit.
    progress : bool, optional
        A bar over the null refits (as :func:`pdpx.partial_dependence`'s ``progress``).
    **pd_options
        ``method``, ``n_jobs``, ``memory_budget``, ``method_options``, ``categorical_features``,
        ``sample_weight`` (weights of H's and the PDs' means; pass the fit's weights in ``fit_params``).

    Returns
    -------
    HTestResult
        ``to_frame()``: ``feature_1``, ``feature_2``, ``h``, ``h_null_mean``, ``h_null_q95``, ``p_value``,
        ``p_adjusted``, one row per feature and pair asked, in the order asked.
    """
    t0 = time.perf_counter()
    options = _checked(pd_options, n_null, adjust, max_seconds, y, X)
    if residuals not in RESIDUALS:
        raise PdpxError(f"h_test(): residuals must be 'additive', 'in_sample' or 'out_of_fold'; got {residuals!r}")
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if hasattr(estimator, "classes_") or getattr(estimator, "_estimator_type", None) == "classifier":
        raise PdpxError("h_test(): the test refits on the model's additive part plus its residuals, which needs "
                        "a regressor (a classifier's labels have no additive part to add back to)")
    feats, pair_list = _asked(X, features, pairs)
    notes = []
    observed = _h(estimator, X, feats, pair_list, sample, random_state, options)
    h_obs = _column(observed, feats, pair_list)
    fitted = np.asarray(estimator.predict(X), dtype=np.float64).reshape(-1)
    if fitted.shape != y.shape:
        raise PdpxError(f"h_test(): the estimator predicts {fitted.size} values for {y.size} rows; it must be a "
                        "single-output regressor")
    additive = additive_part(estimator, X, fitted, options)
    if residuals == "out_of_fold":
        resid = y - _out_of_fold(estimator, X, y, fit_params, random_state)
    else:
        resid = y - (fitted if residuals == "in_sample" else additive)
    rng = np.random.default_rng(random_state)
    null = np.empty((n_null, len(h_obs)))
    bar = progress_bar(n_null, progress=progress, desc="h_test: null refits")
    try:
        for b in range(n_null):
            tb = time.perf_counter()
            y_null = additive + resid[rng.integers(0, len(y), len(y))]
            model = new_model(estimator, "h_test()")
            try:
                model.fit(X, y_null, **(fit_params or {}))
            except Exception as exc:
                raise PdpxError(f"h_test(): null refit {b + 1} failed: {type(exc).__name__}: {exc}") from exc
            null[b] = _column(_h(model, X, feats, pair_list, sample, random_state, options), feats, pair_list)
            if b == 0:
                _check_time(time.perf_counter() - tb, n_null, max_seconds)
            bar.update(1)
    finally:
        bar.close()
    if n_null < 19:
        notes.append(f"n_null={n_null}: no p-value can be below 1/(1 + n_null) = {1 / (1 + n_null):.3g}")
    notes.append(f"null models: the estimator refitted on its additive part (mean plus centered 1-way PDs) plus "
                 f"{residuals.replace('_', '-')} residuals drawn with replacement (Friedman and Popescu 2008, "
                 "section 8.3)")
    table = _table(feats, pair_list, h_obs, null, adjust)
    return HTestResult(table=table, null=null, observed=observed, n_null=n_null, adjust=adjust, notes=notes,
                       elapsed=time.perf_counter() - t0)


def _checked(pd_options, n_null, adjust, max_seconds, y, X) -> PDOptions:
    """The options of :func:`h_test`, checked."""
    extra = sorted(set(pd_options) - set(PASSED))
    if extra:
        raise PdpxError(f"h_test(): option(s) {extra} do not apply; it passes on {list(PASSED)}")
    if isinstance(n_null, bool) or not isinstance(n_null, numbers.Integral) or n_null < 1:
        raise PdpxError(f"h_test(): n_null is the number of null refits, an integer of at least 1 (99 gives "
                        f"p-values down to 0.01); got {n_null!r}")
    if adjust not in ADJUST:
        raise PdpxError(f"h_test(): adjust must be 'holm', 'fdr' (Benjamini-Hochberg) or None; got {adjust!r}")
    if max_seconds is not None and (isinstance(max_seconds, bool) or not isinstance(max_seconds, numbers.Real)
                                    or not max_seconds > 0):
        raise PdpxError(f"h_test(): max_seconds must be a positive number of seconds, or None; got {max_seconds!r}")
    if y is None or len(y) != len(X):
        raise PdpxError(f"h_test(): y must hold one target per row of X ({len(X)} rows); got "
                        f"{'None' if y is None else len(y)}")
    return PDOptions.checked("h_test", pd_options)


def _out_of_fold(estimator, X, y, fit_params, random_state) -> np.ndarray:
    """Each row's prediction by a copy of the estimator fitted on the other folds (:data:`RESIDUAL_FOLDS`)."""
    out = np.empty(len(y))
    for train, test in fold_pairs(min(RESIDUAL_FOLDS, len(y)), X, y, random_state):
        model = new_model(estimator, "h_test()")
        model.fit(rows_of(X, train), y[train], **(fit_params or {}))
        out[test] = np.asarray(model.predict(rows_of(X, test)), dtype=np.float64).reshape(-1)
    return out


def _check_time(seconds: float, n_null: int, max_seconds) -> None:
    """Refuse when ``n_null`` refits of ``seconds`` each would exceed ``max_seconds``."""
    if max_seconds is not None and seconds * n_null > max_seconds:
        raise PdpxError(f"h_test(): the first null refit (fit and H) took {seconds:.3g} s, so n_null={n_null} of "
                        f"them would take about {seconds * n_null:,.0f} s, over max_seconds={max_seconds:g}. Lower "
                        "n_null, compute H on fewer rows (sample=), test fewer pairs, or raise max_seconds (None: "
                        "no limit)")


def _names(X) -> list:
    return list(X.columns) if isinstance(X, pd.DataFrame) else list(range(np.asarray(X).shape[1]))


def _asked(X, features, pairs) -> tuple[list, list]:
    """The features (overall H) and pairs asked, as the user named them, in the order asked."""
    names = _names(X)
    if pairs is not None:
        if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
            raise PdpxError(f"h_test(): pairs must be a list of pairs of features, e.g. [('a', 'b')]; got {pairs!r}")
        pairs = [tuple(p) if hasattr(p, "__len__") and not isinstance(p, (str, bytes)) else p for p in pairs]
        bad = [p for p in pairs if not isinstance(p, tuple) or len(p) != 2]
        if bad:
            raise PdpxError(f"h_test(): each pair must name two features, e.g. ('a', 'b'); got {bad[0]!r}")
    if features is None:
        features = list(dict.fromkeys(f for p in pairs for f in p)) if pairs is not None else names
    elif isinstance(features, (str, numbers.Integral)):
        features = [features]
    features = list(features)
    if pairs is None:
        pairs = [(a, b) for i, a in enumerate(features) for b in features[i + 1:]]
    if not features and not pairs:
        raise PdpxError("h_test(): nothing to test (no features and no pairs)")
    return features, pairs


def _h(model, X, feats, pairs, sample, random_state, options):
    """H of ``model`` on the asked features and pairs (the same rows for every model)."""
    return h_statistic_of(model, X, feats or None, pairs, sample, random_state, options.but(progress=False))


def _column(res, feats, pairs) -> np.ndarray:
    """The observed H of each asked feature, then each asked pair, from an :class:`HStatistic`."""
    over = dict(zip(res.overall.feature.astype(str), res.overall.h))
    pair = {}
    for a, b, h in zip(res.pairwise.feature_1.astype(str), res.pairwise.feature_2.astype(str), res.pairwise.h):
        pair[(a, b)] = pair[(b, a)] = h
    try:
        values = [over[_key(res, f)] for f in feats] + [pair[(_key(res, a), _key(res, b))] for a, b in pairs]
    except KeyError as exc:
        raise PdpxError(f"h_test(): H has no row for {exc.args[0]!r}") from None
    return np.asarray(values, dtype=np.float64)


def _key(res, f) -> str:
    """How an HStatistic names feature ``f`` (a position names the column ``x<j>`` for an array X)."""
    known = set(res.overall.feature.astype(str)) | set(res.pairwise.feature_1.astype(str)) \
        | set(res.pairwise.feature_2.astype(str))
    if str(f) in known:
        return str(f)
    if isinstance(f, numbers.Integral) and f"x{f}" in known:
        return f"x{f}"
    return str(f)


def additive_part(model, X, fitted: np.ndarray, options: PDOptions) -> np.ndarray:
    """``f_A(x_i)`` at every row: the mean prediction plus each column's 1-way PD at the row's value, centered."""
    from ..core.compute import compute

    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    w = None if options.sample_weight is None else np.asarray(options.sample_weight, dtype=np.float64)
    mean = float(np.average(fitted, weights=w))
    out = np.full(len(frame), mean)
    for j, name in enumerate(frame.columns):
        column = frame.iloc[:, j]
        values = pd.unique(column.dropna())
        if len(values) < 2:
            continue  # a constant column: its PD is flat, centered 0
        key = name if isinstance(X, pd.DataFrame) else j
        opts = options.but(custom_values={key: np.sort(values) if column.dtype.kind in "biuf" else values},
                           include_missing=bool(column.isna().any()), progress=False)
        res = compute(model, X, [key], opts)
        grid = pd.Index(np.asarray(res.grid_values[0]))
        at = grid.get_indexer(column.to_numpy())
        if np.any(at < 0):
            raise PdpxError(f"h_test(): the PD of {name!r} has no value at some of its rows' values; cannot build "
                            "the additive part")
        pd_rows = np.asarray(res.average, dtype=np.float64).reshape(-1)[at]
        out += pd_rows - np.average(pd_rows, weights=w)
    return out


def _table(feats, pairs, h_obs, null, adjust) -> pd.DataFrame:
    """The result's table (see :class:`HTestResult`)."""
    n_null = len(null)
    p = (1.0 + (null >= h_obs[None, :] - 1e-12).sum(axis=0)) / (1.0 + n_null)
    nf = len(feats)
    p_adj = np.concatenate([adjusted(p[:nf], adjust), adjusted(p[nf:], adjust)])
    return pd.DataFrame({
        "feature_1": pd.Series(list(feats) + [a for a, _ in pairs], dtype=object),
        "feature_2": pd.Series([None] * nf + [b for _, b in pairs], dtype=object),
        "h": h_obs,
        "h_null_mean": null.mean(axis=0),
        "h_null_q95": np.quantile(null, 0.95, axis=0),
        "p_value": p,
        "p_adjusted": p_adj,
    })
