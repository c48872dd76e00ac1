"""scikit-learn's :class:`~sklearn.inspection.PartialDependenceDisplay` with pdpx's numbers.

>>> from pdpx.sklearn import PartialDependenceDisplay   # was: from sklearn.inspection import ...
>>> disp = PartialDependenceDisplay.from_estimator(model, X, ["age", ("age", "bmi")])  # doctest: +SKIP

The class subclasses scikit-learn's display: its constructor, ``plot`` and the
attributes set by drawing (``axes_``, ``lines_``, ``contours_``, ``bars_``,
``heatmaps_``, ``deciles_vlines_``...) are scikit-learn's own, so the figures are
the ones scikit-learn draws. ``from_estimator`` is pdpx's: it checks its arguments
as scikit-learn does (same errors for the same mistakes), then computes every
feature set in one pdpx session (:func:`pdpx.sklearn.function.run`) and hands the
``Bunch``es to ``plot``. ``method="auto"`` gives brute's numbers (``exact`` for tree
models) where scikit-learn's switches to ``recursion``; ``docs/sklearn.md`` lists
what else differs.
"""

from __future__ import annotations

import numbers
from itertools import chain

import numpy as np
import pandas as pd
from sklearn.inspection import PartialDependenceDisplay as _SklearnDisplay

from ..core.data import from_polars, is_polars
from ..core.grid import sorted_mquantiles
from ..core.plugins import adapt
from .checks import feature_names_of, is_sparse
from .function import plan, read_by_adapter, run

__all__ = ["PartialDependenceDisplay"]

DECILES = np.arange(0.1, 1.0, 0.1)
_ENTRY = "Each entry in features must be either an int, a string, or an iterable of size at most 2."


def _require_matplotlib(caller: str) -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{caller} requires matplotlib. You can install matplotlib with "
                          "`pip install matplotlib`") from exc


def _target_index(estimator, target) -> int:
    """The output to draw: the position of class ``target`` for a multi-class model, else 0."""
    classes = getattr(estimator, "classes_", None)
    searchable = classes is not None
    if classes is None and read_by_adapter(estimator):  # Boosters, R models: the adapter knows the classes
        adapter = adapt(estimator)
        classes = adapter.classes() if adapter.is_classifier() else None
    if classes is None or np.size(classes) <= 2:
        return 0
    if target is None:
        raise ValueError("target must be specified for multi-class")
    if searchable:  # scikit-learn's classes_ are sorted
        position = int(np.searchsorted(classes, target))
        found = 0 <= position < len(classes) and classes[position] == target
    else:
        matches = [i for i, c in enumerate(classes) if c == target]
        position, found = (matches[0], True) if matches else (-1, False)
    if not found:
        raise ValueError(f"target not in est.classes_, got {target}")
    return position


def _rows(X):
    """X as the display works on it: polars becomes pandas, a list of rows an object array."""
    if is_polars(X):
        return from_polars(X)
    if not (hasattr(X, "__array__") or is_sparse(X)):
        from sklearn.utils import check_array

        return check_array(X, ensure_all_finite="allow-nan", dtype=object)
    return X


def _column(X, j: int):
    return X.iloc[:, j] if isinstance(X, pd.DataFrame) else np.asarray(X)[:, j]


def _display_names(X, feature_names) -> list:
    columns = X.columns.tolist() if hasattr(X, "columns") and hasattr(X.columns, "tolist") else None
    return feature_names_of(columns, X.shape[1], feature_names)


def _position(fx, names: list):
    """A feature's position: a name is looked up in ``names``, anything else is taken as it is."""
    if not isinstance(fx, str):
        return fx
    if fx not in names:
        raise ValueError(f"Feature {fx!r} not in feature_names")
    return names.index(fx)


def _feature_sets(features, kinds, names: list) -> list[tuple]:
    """``features`` as tuples of positions; refuses ICE on a 2-way set, listing the kinds that would work."""
    sets, ice_on_pairs = [], []
    for kind, fxs in zip(kinds, features):
        if isinstance(fxs, (numbers.Integral, str)):
            fxs = (fxs,)
        try:
            fxs = tuple(_position(fx, names) for fx in fxs)
        except TypeError as exc:
            raise ValueError(_ENTRY) from exc
        if not 1 <= np.size(fxs) <= 2:
            raise ValueError(_ENTRY)
        ice_on_pairs.append(kind != "average" and np.size(fxs) > 1)
        sets.append(fxs)
    if any(ice_on_pairs):
        fixed = ["average" if pair else kind for pair, kind in zip(ice_on_pairs, kinds)]
        raise ValueError(
            "ICE plot cannot be rendered for 2-way feature interactions. 2-way feature interactions mandates PD "
            f"plots using the 'average' kind: features={features!r} should be configured to use kind={fixed!r} "
            "explicitly.")
    return sets


def _categorical_sets(X, sets, categorical_features, names, kinds, grid_resolution):
    """Whether each feature of each set is categorical (a tuple per set), with scikit-learn's checks."""
    if categorical_features is None:
        return [(False,) * len(fxs) for fxs in sets]
    cats = np.asarray(categorical_features)
    if cats.dtype.kind == "b":
        if cats.size != X.shape[1]:
            raise ValueError("When `categorical_features` is a boolean array-like, the array should be of shape "
                             f"(n_features,). Got {cats.size} elements while `X` contains {X.shape[1]} features.")
        flags = [tuple(cats[fx] for fx in fxs) for fxs in sets]
    elif cats.dtype.kind in ("i", "O", "U"):
        positions = [_position(c, names) for c in cats]
        flags = [tuple(fx in positions for fx in fxs) for fxs in sets]
    else:
        raise ValueError("Expected `categorical_features` to be an array-like of boolean, integer, or string. "
                         f"Got {cats.dtype} instead.")
    if any(len(f) == 2 and f[0] != f[1] for f in flags):
        raise ValueError("Two-way partial dependence plots are not supported for pairs of continuous and "
                         "categorical features.")
    targeted = {fx for fxs, f in zip(sets, flags) if any(f) for fx in fxs}
    if targeted:
        fewest = min(len(pd.unique(pd.Series(np.asarray(_column(X, j), dtype=object)))) for j in targeted)
        if grid_resolution < fewest:
            raise ValueError("The resolution of the computed grid is less than the minimum number of categories in "
                             f"the targeted categorical features. Expect the `grid_resolution` to be greater than "
                             f"{fewest}. Got {grid_resolution} instead.")
    if any(any(f) and kind != "average" for f, kind in zip(flags, kinds)):
        raise ValueError("It is not possible to display individual effects for categorical features.")
    return flags


def _check_subsample(subsample) -> None:
    if isinstance(subsample, numbers.Integral):
        if subsample <= 0:
            raise ValueError(f"When an integer, subsample={subsample} should be positive.")
    elif isinstance(subsample, numbers.Real) and (subsample <= 0 or subsample >= 1):
        raise ValueError(f"When a floating-point, subsample={subsample} should be in the (0, 1) range.")


def _kinds(kind, features) -> list:
    """One kind per entry of ``features``: ``kind``, or the list given (as long as ``features``, in scikit-learn's
    words)."""
    kinds = [kind] * len(features) if isinstance(kind, str) else kind
    if len(kinds) != len(features):
        raise ValueError(
            "When `kind` is provided as a list of strings, it should contain as many elements as `features`. "
            f"`kind` contains {len(kinds)} element(s) and `features` contains {len(features)} element(s).")
    return kinds


def _check_axes_and_positions(sets, names, ax) -> None:
    """One axes per plot when ``ax`` is several, and every position within the feature names (scikit-learn's
    checks and words)."""
    import matplotlib.pyplot as plt

    if ax is not None and not isinstance(ax, plt.Axes):
        n_axes = np.asarray(ax, dtype=object).size
        if n_axes != len(sets):
            raise ValueError(f"Expected ax to have {len(sets)} axes, got {n_axes}")
    for fx in chain.from_iterable(sets):
        if fx >= len(names):
            raise ValueError(f"All entries of features must be less than len(feature_names) = {len(names)}, "
                             f"got {fx}.")


def _n_tasks(result, kind: str) -> int:
    return (result.average if kind == "average" else result.individual).shape[0]


def _multi_output_regressor(first_plan, first_result, kind: str) -> bool:
    """Whether the model is a regressor of several outputs (known once its first result is computed)."""
    return not first_plan.classifier and _n_tasks(first_result, kind) > 1


def _regressor_target(target, first_result, kind: str) -> int:
    """``target`` of a multi-output regressor, checked as scikit-learn checks it."""
    n_tasks = _n_tasks(first_result, kind)
    if target is None:
        raise ValueError("target must be specified for multi-output regressors")
    if not 0 <= target <= n_tasks:
        raise ValueError(f"target must be in [0, n_tasks], got {target}.")
    return target


def _deciles(X, sets, is_categorical, memo: dict) -> dict:
    """The deciles of each numeric feature drawn (the ticks scikit-learn's figures show), from the column sorted
    for its grid when the computation kept it (``memo``)."""
    from scipy.stats.mstats import mquantiles

    deciles = {}
    for fxs, flags in zip(sets, is_categorical):
        for fx, cat in zip(fxs, flags):
            if not cat and fx not in deciles:
                known = memo.get(("sorted", fx))  # the float column sorted for its grid
                deciles[fx] = (mquantiles(_column(X, fx), prob=DECILES) if known is None
                               else sorted_mquantiles(known, DECILES))
    return deciles


class PartialDependenceDisplay(_SklearnDisplay):
    """Partial dependence (PD) and ICE plots: scikit-learn's display, with pdpx computing the curves.

    The constructor, :meth:`plot` and every attribute are scikit-learn's
    (:class:`sklearn.inspection.PartialDependenceDisplay`, whose documentation
    applies); :meth:`from_estimator` takes the same arguments and computes
    ``pd_results`` with pdpx. ``method="auto"`` gives brute's numbers (pdpx's ``exact``
    for tree models it reads); ``"brute"`` and ``"recursion"`` give what
    :func:`pdpx.sklearn.partial_dependence` gives. Models scikit-learn does not take
    (``xgboost.Booster``, ``lightgbm.Booster``, R models through rpy2, plugins') are
    drawn too.
    """

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        features,
        *,
        sample_weight=None,
        categorical_features=None,
        feature_names=None,
        target=None,
        response_method="auto",
        n_cols=3,
        grid_resolution=100,
        percentiles=(0.05, 0.95),
        custom_values=None,
        method="auto",
        n_jobs=None,
        verbose=0,
        line_kw=None,
        ice_lines_kw=None,
        pd_line_kw=None,
        contour_kw=None,
        ax=None,
        kind="average",
        centered=False,
        subsample=1000,
        random_state=None,
    ):
        """Compute partial dependence with pdpx and draw it as scikit-learn draws it.

        Parameters
        ----------
        estimator : fitted model
            A scikit-learn regressor or classifier, or any model a pdpx adapter reads.
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows to average over (pandas or polars DataFrame, array, list of rows).
        features : list of int, str, or pairs of them
            One plot per entry: a feature gives a 1-way plot, a pair a 2-way one.
        sample_weight : array-like of shape (n_samples,), default None
            Weights of the rows in the average.
        categorical_features : array-like of int, str or bool, default None
            Which features are categorical: positions, names, or a mask over all features.
        feature_names : array-like of str, default None
            Names of X's columns (default: a DataFrame's, else ``x0``, ``x1``...).
        target : int or class label, default None
            The class of a multi-class classifier, the output of a multi-output regressor.
        response_method : {"auto", "predict_proba", "decision_function"}, default "auto"
            For classifiers; regressors use ``predict``.
        n_cols : int, default 3
            Columns of the grid of plots when ``ax`` is one axes or None.
        grid_resolution : int, default 100
            Grid points per numeric feature.
        percentiles : tuple of float, default (0.05, 0.95)
            The numeric grids span these percentiles.
        custom_values : dict, default None
            ``{feature: values}``: that feature's grid.
        method : {"auto", "brute", "recursion"}, default "auto"
            ``auto`` and ``brute`` give brute's numbers, ``recursion`` scikit-learn's recursion numbers.
        n_jobs : int, default None
            Threads for pdpx's computation (``-1``: all cores).
        verbose : int, default 0
            Above 0, pdpx shows a progress bar.
        line_kw, ice_lines_kw, pd_line_kw, contour_kw : dict, default None
            Keywords for matplotlib's ``plot`` (all lines, ICE lines, PD lines) and ``contourf``.
        ax : matplotlib Axes or array-like of Axes, default None
            One axes to divide into a grid of plots, or one axes per plot.
        kind : {"average", "individual", "both"} or list of them, default "average"
            PD, ICE, or both; a list gives each plot its own.
        centered : bool, default False
            Start every curve at 0.
        subsample : float, int or None, default 1000
            ICE curves drawn: a share of the rows or a number of them.
        random_state : int, RandomState instance or None, default None
            Which rows' ICE curves are drawn.

        Returns
        -------
        PartialDependenceDisplay
            The drawn display (``pd_results`` holds pdpx's numbers).
        """
        _require_matplotlib(f"{cls.__name__}.from_estimator")
        target_idx = _target_index(estimator, target)
        X = _rows(X)
        names = _display_names(X, feature_names)
        kinds = _kinds(kind, features)
        sets = _feature_sets(features, kinds, names)
        if categorical_features is not None:
            categorical_features = np.asarray(categorical_features)
        is_categorical = _categorical_sets(X, sets, categorical_features, names, kinds, grid_resolution)
        _check_axes_and_positions(sets, names, ax)
        _check_subsample(subsample)
        if is_sparse(X):
            X = X.toarray()

        memo: dict = {}  # each column's grid and sort, shared by the sets and the deciles
        plans = [plan(estimator, X, fxs, sample_weight=sample_weight, categorical_features=categorical_features,
                      feature_names=names, response_method=response_method, percentiles=percentiles,
                      grid_resolution=grid_resolution, custom_values=custom_values, method=method, kind=k,
                      memo=memo)
                 for k, fxs in zip(kinds, sets)]
        pd_results = run(plans, n_jobs=n_jobs, progress=bool(verbose), caller=f"{cls.__name__}.from_estimator")

        if _multi_output_regressor(plans[0], pd_results[0], kinds[0]):  # known once computed
            target_idx = _regressor_target(target, pd_results[0], kinds[0])
        display = cls(pd_results=pd_results, features=sets, feature_names=names, target_idx=target_idx,
                      deciles=_deciles(X, sets, is_categorical, memo), kind=kind, subsample=subsample,
                      random_state=random_state, is_categorical=is_categorical)
        return display.plot(ax=ax, n_cols=n_cols, line_kw=line_kw, ice_lines_kw=ice_lines_kw,
                            pd_line_kw=pd_line_kw, contour_kw=contour_kw, centered=centered)
