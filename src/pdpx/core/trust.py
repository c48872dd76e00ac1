"""When a tree method may answer for a model, and the check that stands behind it.

``exact`` is an optimisation of ``brute``: it may answer only where pdpx knows the
model's whole prediction path. Two parts, both decided here for every adapter:

* **the path** (:func:`guard`): every adapter handed out by
  :func:`pdpx.core.plugins.adapt` answers ``tree_model(response)`` only when each
  method on the way from X to the response (:meth:`~pdpx.core.adapter.Adapter.prediction_path`)
  is the model library's own code: not replaced on the instance, not overridden by a
  subclass (checked on the function that is actually called, decorators and wrappers
  unwrapped), and no subclass overrides one of the library's private methods (the
  internals a prediction goes through). Anything else: the trees are not read, the
  reason is :meth:`~pdpx.core.adapter.Adapter.tree_model_unavailable`, and ``auto``
  runs ``brute``. Which steps are modelled exactly (pipeline transformers, the link
  of a loss) is each adapter's reading; an adapter that cannot read a step returns no
  trees.
* **the check** (:func:`verdict`): the first time a fitted model answers through such a
  method for a response, the columns' dtypes and a feature, the method's ICE values on
  a few rows are compared with ``brute``'s (the model's own predict) at the grid
  points where the method's curves change (both sides of each split threshold the
  grid crosses), at the ends, the missing-value point and the category levels. The
  verdict is kept with the model (:data:`pdpx.core.ir.model_cache`, read anew when the
  model changes), so later calls pay nothing. A disagreement is answered by ``brute``
  with a :class:`~pdpx.core.errors.TreeMismatchWarning`, never returned. The setting
  ``check_trees`` (:func:`pdpx.set_config`) turns the check off, for benchmarks.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import replace
from typing import Any

import numpy as np

from .errors import PdpxError, model_cause, model_failure, reraisable
from .ir import model_cache

#: Private names a subclass may define without changing what a prediction computes (tags, display).
HARMLESS = frozenset({"_more_tags", "_get_tags", "_repr_html_", "_repr_html_inner", "_repr_mimebundle_",
                      "_get_param_names", "_get_doc_link", "_doc_link_module", "_doc_link_template",
                      "_doc_link_url_param_generator"})

#: Most rows and grid points of one feature the check compares (a few predictions' cost).
CHECK_ROWS = 8
CHECK_POINTS = 16
#: Relative tolerance of the check, on the scale of the compared values: libraries that sum in float32
#: (some boosters) differ from float64 sums by about 1e-6 of the scale; a misread split moves a leaf's worth.
RTOL = 2e-5


def _root(module: str | None) -> str:
    return (module or "").split(".")[0]


def _function(raw: Any) -> Any:
    """The function a class attribute stands for: descriptors opened, decorators' wrappers unwrapped."""
    if isinstance(raw, (staticmethod, classmethod)):
        raw = raw.__func__
    elif isinstance(raw, property):
        raw = raw.fget
    inner = getattr(raw, "fn", None)  # a descriptor that makes a method available on a condition
    if callable(inner) and not inspect.isfunction(raw):
        raw = inner
    try:
        return inspect.unwrap(raw)
    except ValueError:  # pragma: no cover - a wrapper chain that loops
        return raw


def _module_of(raw: Any, definer: type) -> str:
    fn = _function(raw)
    return getattr(fn, "__module__", None) or definer.__module__


@functools.lru_cache(maxsize=512)
def _class_refusal(cls: type, method: str, roots: tuple[str, ...]) -> str | None:
    """Why ``cls``'s ``method`` (or an internal it may go through) is not the library's own code, or None."""
    definer = next((k for k in cls.__mro__ if method in vars(k)), None)
    if definer is None:
        return f"{cls.__name__} has no {method}"
    module = _module_of(vars(definer)[method], definer)
    if _root(module) not in roots:
        return (f"{cls.__name__}.{method} is your own code (defined in {module}), not the model library's, "
                "so pdpx cannot compute it from the trees; it calls it (brute)")
    library = [k for k in cls.__mro__ if _root(k.__module__) in roots]
    for k in cls.__mro__:
        if _root(k.__module__) in roots or k is object:
            continue
        for name, raw in vars(k).items():
            if name in HARMLESS or (name.startswith("__") and name.endswith("__")) or not name.startswith("_"):
                continue
            if not any(name in vars(base) for base in library):  # a new name, not an override
                continue
            if not callable(_function(raw)) or _root(_module_of(raw, k)) in roots:
                continue
            return (f"{cls.__name__} overrides {name}, an internal of {library[0].__name__} that a prediction may "
                    "go through, so pdpx cannot compute it from the trees; it calls the model (brute)")
    return None


def step_refusal(obj: Any, method: str, roots: tuple[str, ...]) -> str | None:
    """Why calling ``obj.method`` is not exactly the model library's own code (``roots``: its top-level
    package names), or None."""
    own = getattr(obj, "__dict__", None)
    if isinstance(own, dict) and method in own:
        return (f"this {type(obj).__name__}'s {method} is replaced on the object itself, so pdpx cannot compute "
                "it from the trees; it calls it (brute)")
    return _class_refusal(type(obj), method, tuple(roots))


def path_refusal(adapter, response: str) -> str | None:
    """Why the trees may not answer ``response`` for this adapter's model (a step of its prediction path is not
    the library's own code), or None. An adapter without ``library_roots`` declares no path to check."""
    roots = tuple(getattr(adapter, "library_roots", ()) or ())
    if not roots:
        return None
    for obj, method, *own in adapter.prediction_path(response):
        why = step_refusal(obj, method, tuple(own[0]) if own else roots)
        if why is not None:
            return why
    return None


def guard(adapter):
    """Make ``adapter.tree_model`` answer only where :func:`path_refusal` finds nothing (idempotent).

    The refusal is decided once per response for this adapter; ``tree_model_unavailable`` then gives it.
    The adapter's class becomes a subclass of its own (:func:`_guarded_class`) whose two methods ask the refusal
    first: nothing stored on the adapter refers back to it, so dropping the adapter frees it and what it holds at
    once (no cycle waits for the garbage collector), and a method taken from a temporary adapter keeps it alive.
    An adapter whose instance overrides either method is wrapped in place instead (that wrapper holds it).
    """
    if vars(adapter).get("_pdpx_guarded"):
        return adapter
    adapter._pdpx_refusals = {}
    own = [n for n in _GUARDED_METHODS if n in vars(adapter)]
    if own:  # an instance-level method (a view, a patched adapter): wrapped where it is
        read, unavailable = adapter.tree_model, adapter.tree_model_unavailable

        def tree_model(response):
            return None if _refusal(adapter, response) is not None else read(response)

        def tree_model_unavailable(response):
            return _refusal(adapter, response) or unavailable(response)

        tree_model.__doc__ = read.__doc__
        adapter.tree_model = tree_model
        adapter.tree_model_unavailable = tree_model_unavailable
    else:
        adapter.__class__ = _guarded_class(type(adapter))
    adapter._pdpx_guarded = True
    return adapter


_GUARDED_METHODS = ("tree_model", "tree_model_unavailable")


def _refusal(adapter, response):
    """:func:`path_refusal` of ``adapter`` for ``response``, decided once (kept on the adapter)."""
    refusals = adapter._pdpx_refusals
    if response not in refusals:
        refusals[response] = path_refusal(adapter, response)
    return refusals[response]


@functools.lru_cache(maxsize=None)
def _guarded_class(cls: type) -> type:
    """``cls`` with ``tree_model`` and ``tree_model_unavailable`` asking :func:`_refusal` first (same name)."""

    def tree_model(self, response):
        return None if _refusal(self, response) is not None else cls.tree_model(self, response)

    def tree_model_unavailable(self, response):
        return _refusal(self, response) or cls.tree_model_unavailable(self, response)

    tree_model.__doc__ = cls.tree_model.__doc__
    return type(cls.__name__, (cls,), {"tree_model": tree_model, "tree_model_unavailable": tree_model_unavailable,
                                       "__module__": cls.__module__, "__qualname__": cls.__qualname__})


# ------------------------------------------------------------------------------------------------- the check
def dtype_key(dtypes) -> tuple:
    """The columns' dtypes as a key: the dtype objects themselves (numpy's and pandas' hash by what they hold, a
    categorical one by its categories and order), or their text where one cannot be hashed."""
    key = tuple(dtypes)
    try:
        hash(key)
    except TypeError:  # pragma: no cover - an extension dtype without a hash
        key = tuple((str(d), tuple(map(str, getattr(d, "categories", ()) or ()))) for d in dtypes)
    return key


def _verdicts(adapter, response: str) -> dict:
    """The check's verdicts kept with the model (forgotten with it, and when its trees are read anew).

    Kept with the trees the adapter reads for ``response`` (asked once per call), which follow the model's
    fingerprint: a model changed in place is checked again. Trees without one ensemble (a sum of models): kept
    in the model's entry under the adapter's fingerprint."""
    ensemble = getattr(adapter.tree_model(response), "ensemble", None)
    if ensemble is not None:
        return ensemble.derived("pdpx.core.trust", dict)
    return model_cache.get(adapter.model, "pdpx.core.trust", (), dict, fingerprint=adapter.fingerprint())


def check_rows(X, j: int, limit: int = CHECK_ROWS) -> np.ndarray:
    """Up to ``limit`` rows of X spread over it, with a row missing feature ``j`` among them if there is one."""
    n = len(X)
    if n <= limit:
        return np.arange(n)
    picks = np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))
    col = X.iloc[:, j]
    try:
        miss = np.flatnonzero(col.isna().to_numpy())
    except (TypeError, ValueError):  # pragma: no cover - a column without isna
        miss = np.array([], dtype=np.int64)
    if miss.size and not np.isin(miss[0], picks):
        picks[-1] = miss[0]
    return np.sort(picks)


def check_points(curves: np.ndarray, grid, limit: int = CHECK_POINTS) -> np.ndarray:
    """Grid positions to compare: where the method's curves (``(..., n_grid)``) change (both sides of each
    step), the ends, and a missing-value point (NaN) of the grid, at most ``limit`` spread over them."""
    G = curves.shape[-1]
    flat = curves.reshape(-1, G)
    with np.errstate(invalid="ignore"):
        steps = np.flatnonzero(np.any(flat[:, 1:] != flat[:, :-1], axis=0))
    keep = {0, G - 1}
    values = np.asarray(grid)
    if values.dtype.kind == "f":
        keep.update(np.flatnonzero(np.isnan(values)).tolist())
    sides = np.unique(np.concatenate([steps, steps + 1])) if steps.size else np.array([], dtype=np.int64)
    sides = sides[~np.isin(sides, list(keep))]
    room = max(limit - len(keep), 0)
    if sides.size > room:
        sides = sides[np.unique(np.linspace(0, sides.size - 1, room).round().astype(np.int64))] if room else sides[:0]
    keep.update(int(s) for s in sides)
    return np.array(sorted(keep), dtype=np.int64)


def compare(mine: np.ndarray, reference: np.ndarray) -> tuple[str, tuple[int, int, int]] | None:
    """Where two arrays of ICE values (outputs, rows, points) differ beyond :data:`RTOL` of their scale: (what,
    position of the largest difference), or None when they agree."""
    mine = np.asarray(mine, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    both = np.isfinite(mine) & np.isfinite(reference)
    scale = float(np.max(np.abs(reference[both]), initial=0.0))
    tol = RTOL * max(scale, 1e-12) + 1e-12
    with np.errstate(invalid="ignore"):
        bad = ~((np.abs(mine - reference) <= tol) | (np.isnan(mine) & np.isnan(reference))
                | (mine == reference))
    if not bad.any():
        return None
    k, i, g = np.unravel_index(int(np.argmax(np.where(bad, np.abs(np.nan_to_num(mine - reference, nan=np.inf)), -1))),
                               bad.shape)
    return (f"{int(bad.sum())} of {bad.size} values differ; e.g. {float(mine[k, i, g]):.9g} against the model's "
            f"{float(reference[k, i, g]):.9g}", (int(k), int(i), int(g)))


def verdict(adapter, method, brute, req, j: int, n_outputs: int, dtypes) -> str | None:
    """None when ``method`` agrees with ``brute`` (the model's own predict) on a sample of feature ``j``'s cells
    for ``req``'s response and these column dtypes, else what differed. Kept with the model: asked once."""
    store = _verdicts(adapter, req.response)
    key = (method.name, req.response, j, dtype_key(dtypes))
    if key not in store:
        with model_cache.lock(adapter.model).exclusive():  # concurrent calls: one checks, the others wait for it
            if key not in store:
                store[key] = _check(adapter, method, brute, req, j, n_outputs)
    return store[key]


class _ModelFailed(Exception):
    """The model's own prediction failed on the sample: the call cannot succeed either way (re-raised as is)."""


def _check(adapter, method, brute, req, j: int, n_outputs: int) -> str | None:
    """:func:`_compare_on_sample`'s verdict. The method's own refusal (a :class:`PdpxError`, e.g. a category the
    model was not trained on) and the model's failure on the sample propagate as they are: brute would meet them
    too. Any other failure of the method is a verdict: it is not trusted, and brute answers."""
    try:
        return _compare_on_sample(adapter, method, brute, req, j, n_outputs)
    except _ModelFailed as failed:
        exc = failed.__cause__
        if not reraisable(exc):
            raise exc from None
        rows = min(len(req.X), CHECK_ROWS)
        context = (f"while pdpx checked its {method.name} method against the model's own {req.response} on "
                   f"{rows:,} rows of X for {str(req.X.columns[j])!r}")
        raise model_failure(exc, context, "the model fails there on its own, so the call would fail with any "
                            "method: fix the model or the rows") from model_cause(exc)
    except PdpxError:
        raise
    except Exception as exc:  # noqa: BLE001 - the method failed where the model did not: brute then answers
        return f"{method.name} failed on the sample: {type(exc).__name__}: {exc}"


def _compare_on_sample(adapter, method, brute, req, j: int, n_outputs: int) -> str | None:
    at = req.features.index(j)
    grid = np.asarray(req.grid_values[at])
    rows = req.X.iloc[check_rows(req.X, j)]
    # the sample's ICE curves where the call wants them, else its average: the method runs the kernels the call
    # runs (no others to compile first)
    kind = "average" if req.kind == "average" else "individual"
    small = replace(req, X=rows, features=[j], grid_values=[grid], categorical=[req.categorical[at]],
                    outputs=list(range(n_outputs)), kind=kind, sample_weight=None, n_jobs=1,
                    progress=False)
    mine = _curves(method.plan(adapter, [(j,)]).compute(adapter, small), kind)  # (K, rows or 1, G), planned alone
    points = check_points(mine, grid)
    at_points = replace(small, grid_values=[grid[points]])
    try:
        with adapter.one_thread():  # no thread pool started behind the user's back: it would hang a forked child
            reference = _curves(brute.compute(adapter, at_points), kind)
    except Exception as exc:  # noqa: BLE001 - raised again by _check, whatever the model raised
        raise _ModelFailed() from exc
    found = compare(mine[..., points], reference)
    if found is None:
        return None
    text, (k, i, g) = found
    value = grid[points][g]
    shown = f"{float(value):.9g}" if isinstance(value, (float, np.floating)) else repr(value)
    if kind == "average":
        where = f"averaged over {len(rows)} rows of X"
    else:
        label = rows.index[i]
        where = f"row {int(label) if isinstance(label, (int, np.integer)) else repr(label)} of X"
    return f"{text} at {str(req.X.columns[j])!r} = {shown}, {where}, output {k}"


def _curves(result, kind: str) -> np.ndarray:
    """A method's values on a 1-way grid as (outputs, curves, grid points): ICE curves, or the average as one."""
    if kind == "individual":
        return np.asarray(result.individual, dtype=np.float64)
    return np.asarray(result.average, dtype=np.float64)[:, None, :]
