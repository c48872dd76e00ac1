"""The bridge the R package calls (``py$bridge`` in ``r/pdpx/R/python.R``).

Everything crossing the language boundary is plain data, because reticulate 1.28
(Debian's) cannot convert NumPy arrays under NumPy 2: numbers travel as raw
little-endian float64 bytes, text as lists of str.

* :func:`frame_from_r`: the R package's data.frame payload -> DataFrame;
* :func:`frame_columns`: rows -> what an R predict closure reads;
* :func:`frame_for_r`: a result's tidy frame -> a payload R turns into a data.frame;
* :func:`r_adapter`: the adapter an R model spec describes (randomForest forest
  arrays plus a predict closure, or any R model's predict closure);
* :func:`r_partial_dependence`: one call of :func:`pdpx.partial_dependence`, whose
  keyword options the R side may pass by name (the set is read from the Python
  function's signature, so the two never drift apart);
* :func:`r_explain`: one call of :func:`pdpx.importance`, :func:`pdpx.h_statistic`, :func:`pdpx.heterogeneity`,
  :func:`pdpx.regions`, :func:`pdpx.explained_variance` or
  :func:`pdpx.ale`, with the same option handling.
"""

from __future__ import annotations

import inspect
import math
import warnings
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .adapters.gbm import GbmAdapter
from .adapters.randomforest import RandomForestAdapter
from .adapters.randomforest_trees import read_forest
from .adapters.ranger import RangerAdapter
from .adapters.rfunction import RFunctionAdapter, RSurvivalAdapter
from .api import partial_dependence
from .core.adapter import Adapter
from .core.errors import PdpxError, PdpxWarning
from .r_wire import as_array, as_list, epoch_seconds


def frame_columns(X: pd.DataFrame) -> dict:
    """A DataFrame as plain data an R function can read through reticulate.

    ``{"n": n_rows, "names": [...], "columns": {name: value}}`` where each value is
    raw little-endian float64 bytes (a ``bytearray``, R ``raw``; read it with
    ``readBin(x, "double", n)``): the numbers of numeric and bool columns, and the
    1-based codes of categorical columns (NaN for missing), and the seconds since
    1970-01-01 UTC of dates and times (R rebuilds its Date or POSIXct column from
    them). Other columns (text) are lists of str, None for missing.
    """
    cols = {}
    for name in X.columns:
        s = X[name]
        if pd.api.types.is_datetime64_any_dtype(s.dtype):
            arr = epoch_seconds(s)
        elif isinstance(s.dtype, pd.CategoricalDtype):
            codes = s.cat.codes.to_numpy().astype(np.float64)
            arr = np.where(codes < 0, np.nan, codes + 1.0)
        elif pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype):
            arr = s.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            cols[str(name)] = [None if _is_missing(v) else str(v) for v in s.to_numpy(dtype=object)]
            continue
        cols[str(name)] = bytearray(np.ascontiguousarray(arr, dtype="<f8").tobytes())
    return {"n": int(len(X)), "names": [str(c) for c in X.columns], "columns": cols}


def datetimes_from_r(seconds, tz: str | None, *, date: bool = False) -> pd.DatetimeIndex:
    """R's Date (days, ``date=True``) or POSIXct (seconds) values as pandas datetimes.

    A POSIXct with a time zone becomes tz-aware in that zone (the same instants); a Date,
    or a POSIXct without one, naive (R prints a Date as its UTC calendar day).
    """
    arr = as_array(seconds)
    if date:
        arr = arr * 86400.0
    out = pd.to_datetime(arr, unit="s")
    if tz and not date:
        out = out.tz_localize("UTC").tz_convert(str(tz))
    return pd.DatetimeIndex(out)


def _is_missing(v) -> bool:
    try:
        return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))
    except TypeError:  # pragma: no cover
        return False


def frame_from_r(payload: Mapping) -> pd.DataFrame:
    """The DataFrame the R package sends as plain data (R's ``.frame_payload``).

    ``{"n": n, "names": [...], "columns": {name: {"type": ..., ...}}}``; types:
    "double" and "integer" (``data``: float64 bytes, NaN for NA; integers without NA
    stay integers), "logical" (same; pandas' nullable boolean when NA occurs),
    "factor" (``codes``: 1-based float64 bytes, ``levels``, ``ordered``: a pandas
    Categorical with the R levels), "character" (``codes`` into ``levels``), "date"
    (``data``: R's days since 1970-01-01) and "datetime" (``data``: seconds, ``tz``:
    R's ``tzone``): datetime64 columns, tz-aware when R names a zone.
    R's NA becomes missing in every type (reticulate's own conversion reads an
    integer NA as -2147483648, a logical NA as True and a character NA as "NA").
    """
    n = int(payload["n"])
    names = [str(v) for v in as_list(payload["names"]) or []]
    columns = payload["columns"]
    if names and all(columns[name]["type"] == "double" for name in names):
        return _numeric_frame_from_r(columns, names, n)
    data = {}
    for name in names:
        col = columns[name]
        kind = col["type"]
        if kind in ("double", "integer", "logical"):
            arr = as_array(col["data"])
            if len(arr) != n:
                raise PdpxError(f"column {name!r} from R has {len(arr)} values, expected {n}")
            missing = np.isnan(arr)
            if kind == "integer" and not missing.any():
                data[name] = arr.astype(np.int64)
            elif kind == "logical":
                data[name] = arr.astype(bool) if not missing.any() else pd.array(
                    np.where(missing, None, arr != 0).tolist(), dtype="boolean")
            else:
                data[name] = arr
        elif kind in ("date", "datetime"):
            values = datetimes_from_r(col["data"], col.get("tz"), date=kind == "date")
            if len(values) != n:
                raise PdpxError(f"column {name!r} from R has {len(values)} values, expected {n}")
            data[name] = values
        elif kind in ("factor", "character"):
            codes = as_array(col["codes"])
            levels = [str(v) for v in as_list(col["levels"]) or []]
            idx = np.where(np.isnan(codes), -1, codes - 1).astype(np.int64)
            if kind == "factor":
                data[name] = pd.Categorical.from_codes(idx, categories=levels, ordered=bool(col.get("ordered")))
            else:
                values = np.array(levels + [None], dtype=object)[idx]  # -1 picks None
                data[name] = pd.Series(values, dtype="str")
        else:
            raise PdpxError(f"column {name!r} from R has an unknown type {kind!r}")
    return pd.DataFrame(data, columns=names)


def _numeric_frame_from_r(columns: Mapping, names: list, n: int) -> pd.DataFrame:
    """All columns double: one float64 block (one copy, and cheap to take back out as an array)."""
    block = np.empty((n, len(names)))
    for j, name in enumerate(names):
        arr = as_array(columns[name]["data"])
        if len(arr) != n:
            raise PdpxError(f"column {name!r} from R has {len(arr)} values, expected {n}")
        block[:, j] = arr
    return pd.DataFrame(block, columns=names, copy=False)


def frame_for_r(df: pd.DataFrame, *, one_based: Sequence[str] = ()) -> dict:
    """A DataFrame as plain data for R: numbers as raw float64 bytes, text as levels + codes.

    Returns ``{"n": n, "names": [...], "columns": {name: {"type": ..., ...}}}`` with
    ``type`` "double" (``data``: bytes, NaN for missing), "integer" (same, R
    converts), or "character" (``levels``: list of str, ``codes``: float64 bytes of
    1-based codes, NaN for missing), or "datetime" (``data``: seconds since 1970-01-01
    UTC, ``tz``: the zone, "" when naive). Columns named in ``one_based`` get 1 added
    (positions become R's 1-based ones).
    """
    out = {}
    for name in df.columns:
        s = df[name]
        if pd.api.types.is_datetime64_any_dtype(s.dtype):
            tz = getattr(s.dtype, "tz", None)
            out[str(name)] = {"type": "datetime", "tz": "" if tz is None else str(tz),
                              "data": bytearray(np.ascontiguousarray(epoch_seconds(s), dtype="<f8").tobytes())}
        elif pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype):
            arr = s.to_numpy(dtype=np.float64, na_value=np.nan)
            if name in one_based:
                arr = arr + 1.0
            kind = "integer" if pd.api.types.is_integer_dtype(s.dtype) else "double"
            out[str(name)] = {"type": kind, "data": bytearray(np.ascontiguousarray(arr, dtype="<f8").tobytes())}
        else:
            codes, uniques = pd.factorize(s, use_na_sentinel=True)
            c = np.where(codes < 0, np.nan, codes + 1.0)
            out[str(name)] = {
                "type": "character",
                "levels": [str(u) for u in uniques],
                "codes": bytearray(np.ascontiguousarray(c, dtype="<f8").tobytes()),
            }
    return {"n": int(len(df)), "names": [str(c) for c in df.columns], "columns": out}


def r_adapter(spec: Mapping) -> Adapter:
    """Build the adapter the R package describes in ``spec`` (a named R list).

    ``spec$type`` is "randomForest" (``forest``: the forest arrays, ``feature_names``,
    ``classes``, ``coefs``, ``predict``: an R closure reading :func:`frame_columns`,
    optional ``input_names``, ``training_data`` and ``time_units``) or "function" (``predict``, ``output_names``,
    ``classes``, ``feature_names``, ``model_name``), "survival_function" (``survival``, ``cumulative_hazard``,
    ``risk``, ``raw``: closures, ``times``: the curves' step times; see
    :class:`~pdpx.adapters.rfunction.RSurvivalAdapter`), or "ranger" / "gbm" (``forest``: the
    flattened trees, see :mod:`pdpx.adapters.ranger_trees` and :mod:`pdpx.adapters.gbm_trees`,
    ``predict``; a ranger's ``time_units`` too). ``time_units``: per input, ``"days"`` or ``"seconds"`` for a
    column R holds as a ``Date`` or ``POSIXct`` (its dates become the numbers the trees split on), ``""`` otherwise
    (gbm refuses such columns when it is fitted).
    """
    kind = spec.get("type")
    if kind == "randomForest":
        fd = read_forest(spec["forest"], feature_names=spec.get("feature_names"), classes=spec.get("classes"),
                         coefs=spec.get("coefs"), input_names=spec.get("input_names"))
        return RandomForestAdapter(
            fd, _takes_columns(spec.get("predict")),
            training_data=spec.get("training_data"), training_weight=spec.get("training_weight"),
            time_units=spec.get("time_units"), inbag=spec.get("inbag"),
        )
    if kind == "ranger":
        return RangerAdapter(spec["forest"], _takes_columns(spec.get("predict")), time_units=spec.get("time_units"))
    if kind == "gbm":
        return GbmAdapter(spec["forest"], _takes_columns(spec.get("predict")))
    if kind == "survival_function":
        return RSurvivalAdapter(
            {r: _takes_columns(spec[r]) for r in ("survival", "cumulative_hazard", "risk", "raw")}, spec["times"],
            feature_names=spec.get("feature_names"), model_name=str(spec.get("model_name") or "R survival model"))
    if kind == "function":
        return RFunctionAdapter(
            _takes_columns(spec["predict"]), output_names=spec.get("output_names"), classes=spec.get("classes"),
            feature_names=spec.get("feature_names"), model_name=str(spec.get("model_name") or "R model"),
        )
    raise PdpxError(f"unknown R model spec type {kind!r}")


def _keyword_options(fn) -> frozenset:
    """The keyword-only parameters of ``fn``: what the R package may pass as options."""
    return frozenset(name for name, p in inspect.signature(fn).parameters.items() if p.kind is p.KEYWORD_ONLY)


def _takes_columns(closure):
    """An R predict closure, which reads :func:`frame_columns`, as a function of a DataFrame."""
    if closure is None:
        return None

    def predict(X: pd.DataFrame):
        return closure(frame_columns(X))

    return predict


def _options_from_r(opts: Mapping, known: frozenset) -> dict:
    """Keyword options as R sends them, as the Python functions take them (None: left out)."""
    opts = dict(opts or {})
    unknown = sorted(set(opts) - known)
    if unknown:
        raise PdpxError(f"unknown option(s) {unknown}; known: {sorted(known)}")
    if "percentiles" in opts and opts["percentiles"] is not None:
        opts["percentiles"] = tuple(as_list(opts["percentiles"]))
    if opts.get("custom_values") is not None:
        opts["custom_values"] = {str(k): _custom_from_r(v) for k, v in dict(opts["custom_values"]).items()}
    for key in ("categorical_features", "target", "order"):
        if opts.get(key) is not None and not isinstance(opts[key], (list, tuple)):
            opts[key] = as_list(opts[key])
    if opts.get("pairs") is not None:
        opts["pairs"] = [tuple(as_list(p)) for p in as_list(opts["pairs"])]
    if opts.get("sample_weight") is not None:
        opts["sample_weight"] = as_array(opts["sample_weight"])
    for key in ("grid_resolution", "n_jobs", "by_bins", "n_boot", "random_state", "sample"):
        if isinstance(opts.get(key), float) and float(opts[key]).is_integer():
            opts[key] = int(opts[key])
    return {k: v for k, v in opts.items() if v is not None}


def _custom_from_r(values):
    """One feature's custom grid from R: a list of values, or R's dates and times as datetimes."""
    if isinstance(values, Mapping) and values.get("type") in ("date", "datetime"):
        return list(datetimes_from_r(values["data"], values.get("tz"), date=values["type"] == "date"))
    return as_list(values)


def _grid_for_r(g):
    """A numeric feature's grid values for R: numbers, or ``{"seconds": [...], "tz": ...}`` for datetimes."""
    if pd.api.types.is_datetime64_any_dtype(getattr(g, "dtype", None)) or (
            len(g) and all(isinstance(v, (pd.Timestamp, np.datetime64)) for v in g)):
        idx = pd.DatetimeIndex(g)
        return {"seconds": epoch_seconds(idx).tolist(), "tz": "" if idx.tz is None else str(idx.tz)}
    return np.asarray(g, dtype=np.float64).tolist()


def _pdpx_warnings(caught) -> list[str]:
    """pdpx's warnings, as text: R raises them with warning() (Python's do not cross reticulate)."""
    return [str(w.message) for w in caught if issubclass(w.category, PdpxWarning)]


def r_partial_dependence(adapter: Adapter, X: pd.DataFrame, features, options: Mapping | None = None) -> dict:
    """Compute a partial dependence for the R package; everything returned is plain data.

    Returns ``{"frame": frame_for_r(result.to_frame()), "meta": {...}}``; in the
    frame, ``row`` and the ``x_j`` of categorical features are 1-based (R positions).
    """
    if isinstance(X, Mapping):  # columns as plain data (R's .frame_payload)
        X = frame_from_r(X)
    opts = _options_from_r(options, _keyword_options(partial_dependence))
    feats = as_list(features)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = partial_dependence(adapter, X, feats if len(feats) > 1 else feats[0], **opts)
        df = res.to_frame()
    return _result_for_r(res, df, _pdpx_warnings(caught))


def _result_for_r(res, df: pd.DataFrame, warned: list[str]) -> dict:
    """A result (and its tidy frame) as the R package's ``pdpx_pd`` reads it: frame and meta."""
    base = res.results[0] if hasattr(res, "results") else res  # a StackedResult: models or groups
    one_based = ["row"] + [f"x_{j + 1}" for j, c in enumerate(res.categorical) if c]
    grid = []
    for j, (g, c) in enumerate(zip(res.grid_values, res.categorical)):
        if not c:
            grid.append(_grid_for_r(g))
        elif len(g) and all(isinstance(v, (bool, np.bool_)) for v in g):  # R spells logicals TRUE / FALSE
            grid.append(["TRUE" if v else "FALSE" for v in g])
            df[f"label_{j + 1}"] = df[f"label_{j + 1}"].map({"True": "TRUE", "False": "FALSE"}).astype("string")
        else:
            grid.append([str(v) for v in g])
    meta = {
        "features": list(res.features),
        "categorical": [bool(c) for c in res.categorical],
        "grid_values": grid,
        "outputs": list(res.outputs),
        "response": base.response,
        "response_label": base.response_label,
        "method": ", ".join(f"{k}: {v}" for k, v in res.method.items()) if base is not res else res.method,
        "kind": res.kind,
        "centered": bool(base.centered),
        "n_rows": int(base.n_rows),
        "elapsed": float(base.elapsed),
        "notes": list(base.notes),
        "stacked_by": getattr(res, "column", None),
        "interval": base.interval,
        "warnings": warned,
        # grid="thresholds": feature -> the trees' comparison ("<=" or "<"), which says how its steps are drawn
        "steps": dict(getattr(base, "steps", None) or {}),
        "band": getattr(res, "band", None),  # interval="members" / "quantiles": what the band is, and each member
        "members": _members_for_r(res),
    }
    return {"frame": frame_for_r(df, one_based=one_based), "meta": meta}


def _members_for_r(res) -> dict | None:
    """Each member's curve of an ``interval="members"`` / ``"quantiles"`` result (None otherwise): labels, weights
    (None: the quantile models) and the curves as float64 bytes in (member, output, grid point) C order."""
    if getattr(res, "members", None) is None:
        return None
    weights = None if res.member_weights is None else bytearray(np.asarray(res.member_weights, "<f8").tobytes())
    return {"labels": list(res.member_labels), "weights": weights,
            "yhat": bytearray(np.ascontiguousarray(res.members, "<f8").tobytes())}


def r_explain(what: str, adapter: Adapter, X, features, options: Mapping | None = None) -> dict:
    """One call of :func:`pdpx.importance`, :func:`pdpx.h_statistic` or :func:`pdpx.ale` for the R package.

    Returns plain data: ``{"frame": ..., "warnings": [...]}`` for importance, ``{"pairwise": ...,
    "overall": ..., "warnings": [...]}`` for H, and what :func:`r_partial_dependence` returns for ALE.
    """
    from . import explain

    if what in _SPREAD:
        return _spread_for_r(what, adapter, X, features, options)
    if what not in ("importance", "h_statistic", "ale"):
        raise PdpxError(f"unknown measure {what!r}; the R package asks for 'importance', 'h_statistic', 'ale', "
                        f"{', '.join(map(repr, _SPREAD))}")
    fn = explain.resolve(what)
    if isinstance(X, Mapping):
        X = frame_from_r(X)
    opts = _options_from_r(options, _keyword_options(fn) | _keyword_options(partial_dependence))
    feats = None if features is None else as_list(features)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if what == "ale":
            res = fn(adapter, X, feats if len(feats) > 1 else feats[0], **opts)
            return _result_for_r(res, res.to_frame(), _pdpx_warnings(caught))
        res = fn(adapter, X, feats, **opts)
    if what == "importance":
        return {"frame": frame_for_r(res), "warnings": _pdpx_warnings(caught)}
    return {"pairwise": frame_for_r(res.pairwise), "overall": frame_for_r(res.overall),
            "warnings": _pdpx_warnings(caught)}


#: The measures of what the average hides (docs/heterogeneity.md), for the R package's heterogeneity(), regions()
#: and explained_variance().
_SPREAD = ("heterogeneity", "regions", "explained_variance")
#: Their whole-number arguments (R sends numbers as doubles).
_COUNTS = ("pairs", "max_depth", "min_rows", "n_thresholds", "region_features", "threeway")


def _spread_for_r(what: str, adapter: Adapter, X, features, options: Mapping | None) -> dict:
    """:func:`pdpx.heterogeneity` (``{"table", "curves"}``), :func:`pdpx.regions` (``{"regions", "splits",
    "curves", "membership"}``: each row's region; for several features or None ``{"features", "each"}``, each
    feature's as one, its ``meta`` inside) or :func:`pdpx.explained_variance` (``{"ledger", "threeway"}``) as
    plain data for R, with ``meta`` (method, rows, notes, what regions removed) and the warnings raised."""
    from . import explain

    fn = explain.resolve(what)
    if isinstance(X, Mapping):
        X = frame_from_r(X)
    opts = dict(options or {})
    known = set(inspect.signature(fn).parameters) - {"model", "X", "feature", "features", "pd_options"}
    counts = {k: opts.pop(k) for k in _COUNTS if k in known and opts.get(k) is not None}  # pairs: a number here
    counts = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in counts.items()}  # R's doubles
    opts = {**_options_from_r(opts, frozenset(known) | _keyword_options(partial_dependence)), **counts}
    feats = None if features is None else as_list(features)
    one = what == "regions" and feats is not None and len(feats) == 1  # one feature: a RegionsResult
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = fn(adapter, X, feats[0] if one else feats, **opts)
    if what == "regions" and not one:  # several features (or every one): a RegionsSet, each feature as R reads one
        each = [_regions_for_r(r) for r in res.values()]
        out = {"features": list(res), "each": [{**o, "meta": m} for o, m in each]}
        meta = {key: each[0][1][key] for key in ("method", "n_rows", "notes")} | {"feature": list(res)}
        return {**out, "meta": meta, "warnings": _pdpx_warnings(caught)}
    meta = {"method": res.method, "n_rows": int(res.n_rows), "notes": list(res.notes)}
    if what == "heterogeneity":
        out = {"table": frame_for_r(res.table), "curves": frame_for_r(res.to_frame())}
    elif what == "regions":
        out, meta = _regions_for_r(res)
    else:
        out = {"ledger": frame_for_r(res.ledger), "threeway": frame_for_r(res.threeway)}
    return {**out, "meta": meta, "warnings": _pdpx_warnings(caught)}


def _regions_for_r(res) -> tuple[dict, dict]:
    """(``{"regions", "splits", "curves", "membership"}``, meta) of one feature's :class:`RegionsResult` for R."""
    table = pd.DataFrame([(r.region, o, r.rule, r.n_rows, float(r.heterogeneity[k]), r.stopped)
                          for r in res.regions for k, o in enumerate(res.outputs)],
                         columns=["region", "output", "rule", "n_rows", "heterogeneity", "stopped"])
    membership = np.zeros(res.n_rows)
    for r in res.regions:
        membership[r.rows] = r.region
    splits = res.splits_frame()[["depth", "feature", "kind", "op", "threshold", "gain", "left", "right"]]
    curves = res.to_frame(kind="average").drop(columns=["kind", "row"])
    out = {"regions": frame_for_r(table), "splits": frame_for_r(splits), "curves": frame_for_r(curves),
           "membership": frame_for_r(pd.DataFrame({"region": membership.astype(np.int64)}))}
    meta = {"method": res.method, "n_rows": int(res.n_rows), "notes": list(res.notes), "feature": res.feature,
            "removed": float(res.removed)}
    return out, meta
