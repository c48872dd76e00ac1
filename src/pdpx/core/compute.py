"""The public compute functions: validation first, then one method call per feature set."""

from __future__ import annotations

import difflib
import numbers
import time
from dataclasses import replace
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from . import config as _config
from .adapter import RESPONSES, Adapter
from .errors import PdpxError
from .grid import check_percentiles, feature_grid, is_categorical_dtype
from . import cluster
from .method import MethodResult, Request
from .plugins import adapt, get_methods, plugin_manager
from .result import PartialDependenceCollection, PartialDependenceResult

KINDS = ("average", "individual", "both")


def partial_dependence(
    model: Any,
    X,
    features,
    *,
    kind: str = "average",
    method: str = "auto",
    response: str = "auto",
    target=None,
    grid_resolution: int = 100,
    percentiles: tuple[float, float] = (0.05, 0.95),
    custom_values: dict | None = None,
    categorical_features=None,
    sample_weight=None,
    centered: bool = False,
    n_jobs: int | None = None,
    progress: bool | None = None,
    memory_budget: int | str | None = None,
    ice_sample: int | None = None,
    random_state: int | None = 0,
    method_options: dict | None = None,
) -> PartialDependenceResult:
    """Partial dependence of ``model`` on one set of features (one joint grid).

    Parameters
    ----------
    model : fitted model
        Any model pdpx has an adapter for (scikit-learn, XGBoost, LightGBM,
        R randomForest via rpy2), anything with a ``predict`` method, or a
        function ``f(X) -> predictions``.
    X : DataFrame or ndarray of shape (n_rows, n_features)
        Background rows to average over, with the columns the model was fitted on.
    features : str, int, or list of str / int
        The target features. Several features form one joint grid (a 2-way PD
        for two features). Names refer to X's columns, integers to positions.
    kind : {"average", "individual", "both"}
        The PD curve, the ICE curves (one per row), or both.
    method : {"auto", "brute", "exact", "recursion", ...}
        ``auto`` runs the fastest method that returns exactly what ``brute``
        returns (``exact`` for tree models, else ``brute``); ``res.method`` says
        which ran.
    response : {"auto", "predict", "predict_proba", "decision_function", "raw"}
        What to average. ``auto``: ``predict`` for regressors, ``predict_proba``
        (else ``decision_function``) for classifiers. ``raw`` is the margin
        (log-odds...) of boosted models.
    target : label, int, or list, optional
        Which classes / outputs to report. Default: all, except only the positive
        class of a binary classifier's probabilities.
    grid_resolution : int, default 100
        Grid points per numeric feature (fewer if it has fewer unique values).
    percentiles : (float, float), default (0.05, 0.95)
        The grid of a numeric feature spans these percentiles of its values.
    custom_values : dict, optional
        ``{feature: values}``: use these values as that feature's grid.
    categorical_features : list of str / int, or boolean mask, optional
        Features to treat as categorical, in addition to pandas ``category``,
        ``bool``, object and string columns (always categorical).
    sample_weight : array of shape (n_rows,), optional
        Weights of the rows in the average. ICE curves are not weighted.
    centered : bool, default False
        Subtract each curve's value at the first grid point (centered ICE / PD).
    n_jobs : int, optional
        Threads for the computation (``-1``: all cores).
    progress : bool, optional
        Show a progress bar. Default: only for runs longer than a few seconds in
        an interactive terminal.
    memory_budget : int or str, optional
        Bytes intermediate arrays may use (default from :func:`pdpx.set_config`, 256 MiB).
    ice_sample : int, optional
        Compute ICE curves for this many randomly chosen rows only (seeded by
        ``random_state``); the PD curve still averages over every row.
        ``res.ice_rows`` holds the chosen row positions.
    random_state : int, optional
        Seed for ``ice_sample``.
    method_options : dict, optional
        Options for the chosen method.

    Returns
    -------
    PartialDependenceResult
        ``grid_values``, ``average`` (n_outputs, *grid_shape), ``individual``
        (n_outputs, n_rows, *grid_shape) or None, ``method``, ``to_frame()``.
    """
    session = Session(
        model, X, kind=kind, method=method, response=response, target=target,
        grid_resolution=grid_resolution, percentiles=percentiles, custom_values=custom_values,
        categorical_features=categorical_features, sample_weight=sample_weight, centered=centered,
        n_jobs=n_jobs, progress=progress, memory_budget=memory_budget, ice_sample=ice_sample,
        random_state=random_state, method_options=method_options,
    )
    return session.compute(session.resolve_features(features))


def partial_dependence_many(
    model: Any,
    X,
    feature_sets: Iterable | None = None,
    **options,
) -> PartialDependenceCollection:
    """Partial dependence for several feature sets in one call.

    Parameters
    ----------
    model, X
        As in :func:`partial_dependence`.
    feature_sets : iterable, optional
        Each item is what :func:`partial_dependence` takes as ``features``: a
        name (1-way) or a list of names (a joint grid), e.g.
        ``["age", "fare", ("age", "fare")]``. Default: every column, 1-way;
        constant and all-missing columns are then left out and listed in
        ``collection.skipped``.
    **options
        Every keyword option of :func:`partial_dependence`.

    Returns
    -------
    PartialDependenceCollection
        A sequence of results, indexable by feature names, with ``to_frame()``.
    """
    session = Session(model, X, **options)
    skipped = {}
    if feature_sets is None:
        sets = []
        for j, name in enumerate(session.names):
            try:
                session.grid_for(j)
            except PdpxError as exc:
                skipped[(name,)] = str(exc)
                continue
            sets.append([j])
        if not sets:
            raise PdpxError("no column of X has a grid (all are constant or missing): " + "; ".join(skipped.values()))
    else:
        if isinstance(feature_sets, (str, numbers.Integral)):
            raise PdpxError(
                "feature_sets must be a list of feature sets, e.g. ['age', ('age', 'fare')]; "
                "for a single feature set use pdpx.partial_dependence"
            )
        sets = [session.resolve_features(f) for f in feature_sets]
        if not sets:
            raise PdpxError("feature_sets is empty; pass at least one feature, or None for every column")
    return PartialDependenceCollection([session.compute(s) for s in sets], skipped=skipped)


class Session:
    """Validated inputs shared by the feature sets of one call."""

    def __init__(
        self, model, X, *, kind="average", method="auto", response="auto", target=None,
        grid_resolution=100, percentiles=(0.05, 0.95), custom_values=None,
        categorical_features=None, sample_weight=None, centered=False, n_jobs=None,
        progress=None, memory_budget=None, ice_sample=None, random_state=0, method_options=None,
    ):
        if kind not in KINDS:
            raise PdpxError(f"kind must be one of {KINDS}, got {kind!r}")
        if not isinstance(grid_resolution, numbers.Integral) or isinstance(grid_resolution, bool) or grid_resolution < 2:
            raise PdpxError(f"grid_resolution must be an integer of at least 2, got {grid_resolution!r}")
        self.kind = kind
        self.grid_resolution = int(grid_resolution)
        self.percentiles = check_percentiles(percentiles)
        self.centered = bool(centered)
        self.n_jobs = n_jobs
        self.progress = progress
        self.method_options = dict(method_options or {})
        self.memory_budget = (
            _config.parse_bytes(memory_budget) if memory_budget is not None else _config.get_config()["memory_budget"]
        )

        self.pm = plugin_manager()
        self.model = model
        self.adapter: Adapter = adapt(model, self.pm)
        self.adapter.check_fitted()
        self.dask = None
        if cluster.is_dask_collection(X):
            self.dask = cluster.DaskData(X, self.adapter.feature_names())
            self.X = self.adapter.validate_columns(_as_frame(self.dask.head, self.adapter))
            self.n_rows = self.dask.n_rows
            if sample_weight is not None and hasattr(sample_weight, "compute"):
                sample_weight = sample_weight.compute()
        else:
            self.X = self.adapter.validate_columns(_as_frame(X, self.adapter))
            self.n_rows = len(self.X)
        self.names = [str(c) for c in self.X.columns]
        self.response = self._resolve_response(response)
        self.outputs = self._resolve_target(target)
        self.sample_weight = _check_weights(sample_weight, self.n_rows)
        self.ice_rows = self._resolve_ice_sample(ice_sample, random_state)
        self.categorical = self._resolve_categorical(categorical_features)
        self.custom_values = self._resolve_custom(custom_values)
        self.methods = get_methods(self.pm)
        self.method = method
        if method != "auto" and method not in self.methods:
            raise PdpxError(f"unknown method {method!r}; available: {['auto'] + sorted(self.methods)}")
        self._grids: dict[int, np.ndarray] = {}

    # ---------------------------------------------------------- validation
    def _resolve_response(self, response: str) -> str:
        available = self.adapter.responses()
        if response == "auto":
            if not available:
                raise PdpxError(f"{type(self.adapter.model).__name__} has no response pdpx can average")
            chosen = available[0]
        elif response not in available:
            if response not in RESPONSES:
                raise PdpxError(f"response must be 'auto' or one of {list(RESPONSES)}, got {response!r}")
            extra = ""
            if response == "predict" and self.adapter.is_classifier():
                extra = " (a classifier's predicted labels are not numbers to average)"
            raise PdpxError(
                f"{type(self.adapter.model).__name__} has no response {response!r}{extra}; "
                f"use one of {available}"
            )
        else:
            chosen = response
        probe = getattr(self.adapter, "probe", None)
        if probe is not None and len(self.X):
            probe(self.X, chosen)
        return chosen

    def _resolve_target(self, target) -> list[int]:
        names = self.adapter.output_names(self.response)
        if target is None:
            return self.adapter.default_outputs(self.response)
        wanted = list(target) if isinstance(target, (list, tuple, np.ndarray)) else [target]
        if not wanted:
            raise PdpxError("target is empty; leave it out to get every output")
        classes = self.adapter.classes() if self.adapter.is_classifier() else None
        if classes is not None:  # plain Python values, so messages read 1, not np.int64(1)
            classes = [c.item() if isinstance(c, np.generic) else c for c in classes]
        out = []
        for t in wanted:
            idx = None
            if classes is not None:
                single = self.response in ("decision_function", "raw") and len(classes) == 2 and len(names) == 1
                if single:
                    lookup = {str(classes[1]): 0}
                else:
                    lookup = {str(c): i for i, c in enumerate(classes)}
                idx = lookup.get(str(t))
                if idx is None:
                    hint = ""
                    if single:
                        hint = f" (a binary {self.response} has one output, for class {classes[1]!r})"
                    raise PdpxError(
                        f"target {t!r} is not a class of this model{hint}; its classes are {list(classes)!r}"
                    )
            else:
                if isinstance(t, numbers.Integral) and not isinstance(t, bool) and 0 <= t < len(names):
                    idx = int(t)
                elif str(t) in names:
                    idx = names.index(str(t))
                else:
                    raise PdpxError(
                        f"target {t!r} is not an output of this model; its outputs are {names!r} "
                        f"(or their positions 0..{len(names) - 1})"
                    )
            if idx in out:
                raise PdpxError(f"target {t!r} is given twice")
            out.append(idx)
        return out

    def _resolve_ice_sample(self, ice_sample, random_state) -> np.ndarray | None:
        if ice_sample is None:
            return None
        if self.kind == "average":
            raise PdpxError("ice_sample chooses rows for ICE curves; use it with kind='individual' or 'both'")
        if self.dask is not None:
            raise PdpxError("ice_sample is not supported for Dask input; pass X.sample(frac=...).compute() "
                            "for ICE curves and the full Dask X for the average")
        if not isinstance(ice_sample, numbers.Integral) or isinstance(ice_sample, bool) or ice_sample < 1:
            raise PdpxError(f"ice_sample must be a positive number of rows, got {ice_sample!r}")
        if ice_sample >= self.n_rows:
            return None
        rng = np.random.default_rng(random_state)
        return np.sort(rng.choice(self.n_rows, size=int(ice_sample), replace=False))

    def _column_index(self, f, what: str = "feature") -> int:
        if isinstance(f, (numbers.Integral, np.integer)) and not isinstance(f, bool):
            if not 0 <= f < len(self.names):
                raise PdpxError(
                    f"{what} index {f} is out of range: X has {len(self.names)} columns, "
                    f"indices 0 to {len(self.names) - 1}"
                )
            return int(f)
        if isinstance(f, str):
            if f in self.names:
                return self.names.index(f)
            close = difflib.get_close_matches(f, self.names, n=3)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise PdpxError(f"unknown {what} {f!r}: X has no such column.{hint} Columns: {_short(self.names)}")
        raise PdpxError(f"a {what} must be a column name or an integer position, got {f!r}")

    def resolve_features(self, features) -> list[int]:
        if isinstance(features, (str, numbers.Integral, np.integer)):
            features = [features]
        try:
            feats = list(features)
        except TypeError:
            raise PdpxError(f"features must be a name, a position, or a list of them; got {features!r}") from None
        if not feats:
            raise PdpxError("features is empty; name at least one column of X")
        idx = [self._column_index(f) for f in feats]
        dupes = sorted({self.names[i] for i in idx if idx.count(i) > 1})
        if dupes:
            raise PdpxError(f"features lists {dupes} more than once; name each feature once")
        return idx

    def _resolve_categorical(self, categorical_features) -> list[bool]:
        flags = [is_categorical_dtype(self.X.iloc[:, j]) for j in range(len(self.names))]
        if categorical_features is None:
            return flags
        cats = list(categorical_features)
        if cats and all(isinstance(c, (bool, np.bool_)) for c in cats):
            if len(cats) != len(self.names):
                raise PdpxError(
                    f"categorical_features as a boolean mask needs one entry per column of X "
                    f"({len(self.names)}), got {len(cats)}"
                )
            return [a or bool(b) for a, b in zip(flags, cats)]
        for c in cats:
            flags[self._column_index(c, "categorical feature")] = True
        return flags

    def _resolve_custom(self, custom_values) -> dict[int, Any]:
        if custom_values is None:
            return {}
        if not isinstance(custom_values, dict):
            raise PdpxError("custom_values must be a dict {feature: values}, e.g. {'age': [20, 40, 60]}")
        return {self._column_index(k, "custom_values key"): v for k, v in custom_values.items()}

    def grid_for(self, j: int) -> np.ndarray:
        if j not in self._grids:
            column = self.X.iloc[:, j] if self.dask is None else self.dask.column(self.X.columns[j])
            self._grids[j] = feature_grid(
                column, categorical=self.categorical[j], grid_resolution=self.grid_resolution,
                percentiles=self.percentiles, custom=self.custom_values.get(j),
            )
        return self._grids[j]

    # -------------------------------------------------------------- compute
    def request(self, features: list[int]) -> Request:
        grids = [self.grid_for(j) for j in features]
        req = Request(
            X=self.X, features=features, grid_values=grids, categorical=[self.categorical[j] for j in features],
            response=self.response, outputs=self.outputs, kind=self.kind, sample_weight=self.sample_weight,
            memory_budget=self.memory_budget, n_jobs=self.n_jobs, progress=self.progress,
            options=self.method_options,
        )
        self._check_result_size(req)
        return req

    def _check_result_size(self, req: Request) -> None:
        """Refuse results over the budget; leave methods the budget minus the result's size."""
        n = self.n_rows if self.ice_rows is None else len(self.ice_rows)
        K, G = len(req.outputs), req.n_grid
        need = K * G * 8 * (n if req.needs_individual else 1)
        req.memory_budget = max(req.memory_budget - need, req.memory_budget // 8)
        if need > self.memory_budget:
            what = "ICE curves" if req.needs_individual else "the partial dependence grid"
            shape = " x ".join(str(s) for s in req.grid_shape)
            advice = (
                "use kind='average', ICE for a sample of rows (ice_sample=1000: the average still uses "
                "every row), " if req.needs_individual else ""
            )
            raise PdpxError(
                f"{what} for {n:,} rows, a {shape} grid and {K} output(s) would take "
                f"{_config.format_bytes(need)}, over the memory budget of {_config.format_bytes(self.memory_budget)}. "
                f"To fit: {advice}lower grid_resolution, or raise memory_budget (e.g. memory_budget='4GB')."
            )

    def choose_method(self, req: Request):
        if self.method != "auto":
            m = self.methods[self.method]
            reason = m.unavailable(self.adapter, req)
            if reason:
                raise PdpxError(f"method {self.method!r} cannot run here: {reason}")
            return self._check_options(m)
        candidates = sorted((m for m in self.methods.values() if m.equals_brute), key=lambda m: m.cost_rank)
        for m in candidates:
            if m.unavailable(self.adapter, req) is None:
                return self._check_options(m)
        raise PdpxError("no method can compute this request")  # pragma: no cover - brute always can

    def _check_options(self, m):
        unknown = sorted(set(self.method_options) - set(m.options))
        if unknown:
            chosen = " (chosen by method='auto')" if self.method == "auto" else ""
            raise PdpxError(
                f"method_options {unknown} are not options of method {m.name!r}{chosen}; "
                f"its options: {list(m.options) or 'none'}"
            )
        return m

    def _run(self, method, req: Request):
        if self.dask is not None:
            return cluster.run(self.model, self.dask, req, method, self.sample_weight,
                               progress=self.progress, columns=list(self.X.columns))
        if self.ice_rows is None or not req.needs_individual:
            return method.compute(self.adapter, req)
        # PD over every row, ICE over the sample
        full = method.compute(self.adapter, replace(req, kind="average"))
        rows = self.ice_rows
        sub = replace(req, X=self.X.iloc[rows], kind="individual",
                      sample_weight=None if req.sample_weight is None else req.sample_weight[rows])
        if sub.sample_weight is not None and sub.sample_weight.sum() <= 0:
            sub = replace(sub, sample_weight=None)
        part = method.compute(self.adapter, sub)
        return MethodResult(average=full.average, individual=part.individual, notes=full.notes)

    def compute(self, features: list[int]) -> PartialDependenceResult:
        req = self.request(features)
        method = self.choose_method(req)
        t0 = time.perf_counter()
        out = self._run(method, req)
        elapsed = time.perf_counter() - t0
        average, individual = out.average, out.individual
        if not req.needs_individual:
            individual = None
        if self.centered:
            average = average - average.reshape(average.shape[0], -1)[:, :1].reshape(
                (average.shape[0],) + (1,) * (average.ndim - 1)
            )
            if individual is not None:
                first = individual.reshape(individual.shape[0], individual.shape[1], -1)[:, :, :1]
                individual = individual - first.reshape(first.shape[:2] + (1,) * (individual.ndim - 2))
        notes = list(out.notes)
        if self.method == "auto":
            for m in sorted(self.methods.values(), key=lambda m: m.cost_rank):
                if m.equals_brute and m.cost_rank < method.cost_rank:
                    reason = m.unavailable(self.adapter, req)
                    if reason:
                        notes.append(f"{m.name} not used: {reason}")
        names = self.adapter.output_names(self.response)
        return PartialDependenceResult(
            features=[self.names[j] for j in features],
            grid_values=req.grid_values,
            categorical=req.categorical,
            average=average,
            individual=individual,
            outputs=[names[k] for k in self.outputs],
            response=self.response,
            response_label=self.adapter.response_label(self.response),
            method=method.name,
            kind=self.kind,
            centered=self.centered,
            n_rows=self.n_rows,
            ice_rows=self.ice_rows if individual is not None else None,
            elapsed=elapsed,
            notes=notes,
            feature_data={self.names[j]: self._feature_data(j) for j in features},
            model_name=type(self.adapter.model).__name__,
        )


    def _feature_data(self, j: int) -> np.ndarray:
        if self.dask is not None:
            return self.dask.column(self.X.columns[j]).to_numpy()
        return self.X.iloc[:, j].to_numpy()


def _short(items: Sequence, limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in list(items)[:limit])
    return "[" + shown + (", ...]" if len(items) > limit else "]")


def _as_frame(X, adapter: Adapter) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        frame = X
    elif isinstance(X, pd.Series):
        raise PdpxError("X is a Series; pass a DataFrame (X.to_frame() for a single column)")
    else:
        if hasattr(X, "toarray") and hasattr(X, "nnz"):
            raise PdpxError("X is a sparse matrix; pass a dense array or DataFrame (X.toarray())")
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise PdpxError(f"X must be 2-D (rows x features), got an array of shape {arr.shape}")
        names = adapter.feature_names()
        if names is not None and len(names) == arr.shape[1]:
            columns = names
        elif names is not None:
            raise PdpxError(
                f"X has {arr.shape[1]} columns but {type(adapter.model).__name__} was fitted on {len(names)}: "
                f"{_short(names)}. Pass a DataFrame with these columns"
            )
        else:
            columns = [f"x{i}" for i in range(arr.shape[1])]
        frame = pd.DataFrame(arr, columns=columns)
    if frame.shape[0] == 0:
        raise PdpxError("X has no rows; partial dependence averages over rows, so pass at least one")
    if frame.shape[1] == 0:
        raise PdpxError("X has no columns")
    if len(set(map(str, frame.columns))) != frame.shape[1]:
        raise PdpxError("X has repeated column names; give each column a distinct name")
    return frame


def _check_weights(sample_weight, n: int) -> np.ndarray | None:
    if sample_weight is None:
        return None
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise PdpxError("sample_weight must be numbers, one per row of X") from None
    if w.ndim != 1 or w.shape[0] != n:
        raise PdpxError(f"sample_weight must have one weight per row of X ({n}), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise PdpxError("sample_weight contains NaN or infinite values; give every row a finite weight")
    if (w < 0).any():
        raise PdpxError(
            f"sample_weight has {(w < 0).sum()} negative value(s); weights must be >= 0 (0 leaves a row out)"
        )
    if w.sum() <= 0:
        raise PdpxError("sample_weight is zero for every row; at least one row needs a positive weight")
    return np.ascontiguousarray(w)
