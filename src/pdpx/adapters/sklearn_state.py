"""What a fitted scikit-learn step's transform depends on, as one digest: its parameters and what it learnt.

A Pipeline's reading (its trees rewritten onto the original columns), the counts derived
from it and the trust check's verdict are kept with the model under this digest
(:func:`steps_digest`), so a step changed after a first call is read again:

* **parameters**: ``get_params(deep=False)`` of every step and of every estimator inside it
  (a ColumnTransformer's transformers, the fitted clones in its ``transformers_`` included),
  compared by value: ``set_params(scaler__with_mean=False)``, a ColumnTransformer's
  ``transformer_weights``, an imputer's ``missing_values``, an encoder's ``unknown_value``;
* **functions** (a FunctionTransformer's ``func``, a function in a parameter) by identity and
  by code: the object, its qualified name, its byte code and constants, its defaults, the
  values its closure holds, a ``functools.partial``'s arguments, a bound method's object;
* **learnt values**: every attribute ending in ``_`` (a scaler's ``mean_``, an encoder's
  ``categories_``), arrays by their bytes, estimators inside them walked the same way.

Values that are none of these are compared by their class and ``repr``. The walk stops at a
depth of 6 and at objects already seen (a cycle). It is cheap next to a predict: tens of
microseconds for a scaler, a few milliseconds for a ColumnTransformer of encoders.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from ..core.ir import fingerprint

#: How deep the walk goes into estimators inside estimators and containers inside containers.
DEPTH = 6


def steps_digest(steps: list, final=None) -> str:
    """The digest (:func:`pdpx.core.ir.fingerprint`) of ``steps`` (``(path, step)`` pairs; ``"passthrough"``, None
    and ``"drop"`` stand for themselves) and of ``final``'s parameters (its learnt trees are keyed by its own
    adapter)."""
    parts: list = []
    seen: set = set()
    for path, step in steps:
        parts.append(f"step {path!r}")
        _value(step, parts, 0, seen)
    if final is not None:
        parts.append("final")
        _params(final, parts, 0, seen)
    return fingerprint(*parts)


def _is_estimator(v) -> bool:
    return not isinstance(v, type) and callable(getattr(v, "get_params", None))


def _estimator(obj, parts: list, depth: int, seen: set) -> None:
    """An estimator's class, parameters and learnt attributes."""
    _params(obj, parts, depth, seen)
    try:
        own = vars(obj)
    except TypeError:  # no __dict__: its parameters are all there is
        return
    for k in sorted(own):
        if k.endswith("_") and not k.startswith("__"):
            parts.append(f"learnt {k}")
            _value(own[k], parts, depth + 1, seen)


def _params(obj, parts: list, depth: int, seen: set) -> None:
    klass = type(obj)
    parts.append(f"{klass.__module__}.{klass.__qualname__}")
    try:
        params = obj.get_params(deep=False)
    except Exception as exc:  # noqa: BLE001 - an estimator whose get_params fails: its failure stands for it
        parts.append(f"get_params failed: {type(exc).__name__}: {exc}")
        return
    for k in sorted(params):
        parts.append(f"param {k}")
        _value(params[k], parts, depth + 1, seen)


def _value(v, parts: list, depth: int, seen: set) -> None:  # noqa: C901 - one branch per kind of value
    """Append what ``v``'s value is made of to ``parts``."""
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, np.generic)):
        parts.append(f"{type(v).__name__}:{v!r}")
        return
    if isinstance(v, np.ndarray):
        parts.append(v)
        return
    if depth > DEPTH:
        parts.append(f"deep {type(v).__name__}")
        return
    if id(v) in seen:
        parts.append(f"seen {id(v):x}")
        return
    seen.add(id(v))
    if isinstance(v, (list, tuple)):
        parts.append(f"{type(v).__name__}[{len(v)}]")
        for item in v:
            _value(item, parts, depth + 1, seen)
    elif isinstance(v, dict):
        parts.append(f"dict[{len(v)}]")
        for k in sorted(v, key=repr):
            parts.append(repr(k))
            _value(v[k], parts, depth + 1, seen)
    elif isinstance(v, (set, frozenset)):
        parts.append(f"{type(v).__name__}{sorted(map(repr, v))}")
    elif _is_estimator(v):
        _estimator(v, parts, depth, seen)
    elif callable(v) and not isinstance(v, type):
        _callable(v, parts, depth, seen)
    elif callable(getattr(v, "to_numpy", None)) and hasattr(v, "shape"):  # a pandas Series, Index or frame
        parts.append(f"{type(v).__name__}{v.shape}")
        _value(getattr(v, "columns", None), parts, depth + 1, seen)
        _value(getattr(v, "index", None), parts, depth + 1, seen)
        parts.append(np.asarray(v.to_numpy()))
    else:
        _other(v, parts)


def _callable(fn, parts: list, depth: int, seen: set) -> None:
    """A function by identity and code: what it is, where its code lives, what it holds."""
    klass = type(fn)
    parts.append(f"callable {klass.__module__}.{klass.__qualname__} {id(fn):x} "
                 f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', getattr(fn, '__name__', ''))}")
    if isinstance(fn, functools.partial):
        _value(fn.func, parts, depth + 1, seen)
        _value(fn.args, parts, depth + 1, seen)
        _value(fn.keywords, parts, depth + 1, seen)
        return
    if isinstance(fn, types.MethodType):
        parts.append(f"bound to {id(fn.__self__):x}")
        _value(fn.__func__, parts, depth + 1, seen)
        return
    code = getattr(fn, "__code__", None)
    if isinstance(code, types.CodeType):
        _code(code, parts)
        _value(getattr(fn, "__defaults__", None), parts, depth + 1, seen)
        _value(getattr(fn, "__kwdefaults__", None), parts, depth + 1, seen)
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                held = cell.cell_contents
            except ValueError:  # an empty cell
                parts.append("empty cell")
                continue
            _value(held, parts, depth + 1, seen)
    elif not isinstance(fn, (types.BuiltinFunctionType, np.ufunc)):  # a callable object: its state
        try:
            own = vars(fn)
        except TypeError:
            own = {}
        _value(dict(own), parts, depth + 1, seen)


def _code(code: types.CodeType, parts: list) -> None:
    parts.append(code.co_code)
    parts.append(f"{code.co_names!r}{code.co_varnames!r}")
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # a function defined inside: its own code
            _code(const, parts)
        else:
            parts.append(f"{type(const).__name__}:{const!r}")


def _other(v, parts: list) -> None:
    klass = type(v)
    try:
        text = repr(v)
    except Exception:  # noqa: BLE001 - an object whose repr fails: its identity stands for it
        text = f"{id(v):x}"
    parts.append(f"{klass.__module__}.{klass.__qualname__}:{text}")
