"""The one validation layer at the public boundary: declared constraints, checked before any work.

Every public function declares what each argument accepts, as lists of the
constraints below. The options of :func:`pdpx.partial_dependence` (and of every
function that takes them) are the fields of :class:`pdpx.core.options.PDOptions`,
whose ``PDOptions.checked`` checks each with :func:`check_param`. Arguments of a
function's own are checked with :func:`check_param` where they are read, or declared
with :func:`validate_params`, which checks the bound arguments before the body runs
(:func:`pdpx.ale`, :func:`pdpx.report`, ``plot()``)::

    @validate_params({"grid_resolution": [Integral(low=1)],
                      "order": [InstanceOf(list, tuple, what="a list of the categories"), None]})
    def ale(model, X, features, *, grid_resolution=20, order=None, ...): ...

A value that satisfies none of an argument's constraints raises

* :class:`~pdpx.core.errors.PdpxTypeError` (also a ``TypeError``) when its *type*
  fits none of them (``n_jobs="2"``, ``centered="no"``, ``method=["exact"]``);
* :class:`~pdpx.core.errors.PdpxError` (a ``ValueError``) when the type fits but the
  value does not (``max_rows=-1``, ``memory_budget=float("inf")``),

with a message that names the function, the argument, the value given and what is
accepted. Checks that need the model or the data (a feature name, a class label)
come right after, in :class:`~pdpx.core.session.Session`, still before any work.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from typing import Any, Callable

import numpy as np

from .errors import PdpxError, PdpxTypeError


class Constraint:
    """One kind of accepted value. Subclasses say which types they take and which values of them."""

    def accepts_type(self, value) -> bool:
        """Whether the value's type is one this constraint takes."""
        raise NotImplementedError

    def accepts(self, value) -> bool:
        """Whether the value itself is acceptable (only asked when the type is)."""
        return True

    def describe(self) -> str:
        """What is accepted, for messages."""
        raise NotImplementedError

    def hint(self, value) -> str | None:
        """A suggestion for a refused value of an accepted type (e.g. a likely intended value)."""
        return None


class _NoneConstraint(Constraint):
    def accepts_type(self, value):
        return value is None

    def describe(self):
        return "None"


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


class Integral(Constraint):
    """An integer (Python or numpy; never a bool) within ``[low, high]``; ``nonzero`` excludes 0."""

    def __init__(self, low: int | None = None, high: int | None = None, *, nonzero: bool = False, what: str = ""):
        self.low, self.high, self.nonzero, self.what = low, high, nonzero, what

    def accepts_type(self, value):
        return _is_int(value)

    def accepts(self, value):
        v = int(value)
        return ((self.low is None or v >= self.low) and (self.high is None or v <= self.high)
                and not (self.nonzero and v == 0))

    def describe(self):
        if self.what:
            return self.what
        if self.low is not None and self.high is not None:
            return f"an integer from {self.low} to {self.high}"
        if self.low is not None:
            return f"an integer >= {self.low}"
        if self.high is not None:
            return f"an integer <= {self.high}"
        return "a nonzero integer" if self.nonzero else "an integer"


class Real(Constraint):
    """A finite number within ``[low, high]`` (``low_open`` / ``high_open`` exclude the ends)."""

    def __init__(self, low: float | None = None, high: float | None = None, *, low_open: bool = False,
                 high_open: bool = False):
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open

    def accepts_type(self, value):
        return _is_real(value)

    def accepts(self, value):
        v = float(value)
        if not math.isfinite(v):
            return False
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            return False
        return not (self.high is not None and (v > self.high or (self.high_open and v == self.high)))

    def describe(self):
        lo = "" if self.low is None else ("> " if self.low_open else ">= ") + f"{self.low:g}"
        hi = "" if self.high is None else ("< " if self.high_open else "<= ") + f"{self.high:g}"
        bounds = " and ".join(b for b in (lo, hi) if b)
        return "a finite number" + (f" {bounds}" if bounds else "")


class Boolean(Constraint):
    """``True`` or ``False`` (numpy bools too); ``"no"``, ``0`` and ``None`` are not booleans."""

    def accepts_type(self, value):
        return isinstance(value, (bool, np.bool_))

    def describe(self):
        return "True or False"


class Options(Constraint):
    """One of the given strings."""

    def __init__(self, *options: str):
        self.options = options

    def accepts_type(self, value):
        return isinstance(value, str)

    def accepts(self, value):
        return value in self.options

    def describe(self):
        return "one of " + ", ".join(repr(o) for o in self.options)


class String(Constraint):
    """Any string (``nonempty``: not empty)."""

    def __init__(self, what: str = "a string", *, nonempty: bool = True):
        self.what, self.nonempty = what, nonempty

    def accepts_type(self, value):
        return isinstance(value, str)

    def accepts(self, value):
        return bool(value) or not self.nonempty

    def describe(self):
        return self.what


class InstanceOf(Constraint):
    """An instance of the given types."""

    def __init__(self, *types: type, what: str):
        self.types, self.what = types, what

    def accepts_type(self, value):
        return isinstance(value, self.types)

    def describe(self):
        return self.what


class PathLike(Constraint):
    """A file path: a non-empty ``str`` or an ``os.PathLike``."""

    def accepts_type(self, value):
        return isinstance(value, (str, os.PathLike))

    def accepts(self, value):
        return bool(os.fspath(value))

    def describe(self):
        return "a file path (str or pathlib.Path)"


class Satisfies(Constraint):
    """Values of ``types`` for which ``check(value)`` holds (a custom rule, described by ``what``)."""

    def __init__(self, types: tuple, check: Callable[[Any], bool], what: str,
                 hint: Callable[[Any], str | None] | None = None):
        self.types, self.check, self.what, self._hint = types, check, what, hint

    def accepts_type(self, value):
        return isinstance(value, self.types)

    def accepts(self, value):
        try:
            return bool(self.check(value))
        except (TypeError, ValueError):
            return False

    def describe(self):
        return self.what

    def hint(self, value):
        if self._hint is None:
            return None
        try:
            return self._hint(value)
        except (TypeError, ValueError):
            return None


def _as_constraint(c) -> Constraint:
    if c is None:
        return _NoneConstraint()
    if isinstance(c, Constraint):
        return c
    raise TypeError(f"not a constraint: {c!r}")  # pragma: no cover - a programming error


def shown(value, limit: int = 60) -> str:
    """A value as messages show it: its repr (shortened) and, for non-numbers, its type."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - any object's repr may fail
        text = f"<{type(value).__name__}>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    if isinstance(value, (str, list, tuple, dict, set)) or not _is_real(value):
        return f"{text} (a {type(value).__name__})"
    return text


def check_param(function: str, name: str, value, constraints: list) -> None:
    """Raise the pdpx error for ``value`` of argument ``name`` of ``function`` unless a constraint accepts it."""
    cons = [_as_constraint(c) for c in constraints]
    typed = [c for c in cons if c.accepts_type(value)]
    if any(c.accepts(value) for c in typed):
        return
    accepted = ", or ".join(c.describe() for c in cons)
    message = f"{function}(): {name} must be {accepted}; got {shown(value)}"
    if not typed:
        raise PdpxTypeError(message)
    hints = [h for h in (c.hint(value) for c in typed) if h]
    raise PdpxError(message + "".join(f". {h}" for h in hints))


def validate_params(spec: dict[str, list], *, name: str | None = None):
    """Decorator: check the arguments named in ``spec`` before the function body runs.

    ``spec`` maps an argument name to its list of constraints (``None`` in the list
    accepts None). Arguments not in ``spec`` are left to the function.
    """

    def decorate(fn):
        sig = inspect.signature(fn)
        missing = set(spec) - set(sig.parameters)
        if missing:  # pragma: no cover - a programming error
            raise TypeError(f"{fn.__qualname__}: no parameters {sorted(missing)}")
        label = name or fn.__qualname__

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            for param, constraints in spec.items():
                if param in bound.arguments:
                    value = bound.arguments[param]
                    kind = sig.parameters[param].kind
                    if kind is inspect.Parameter.VAR_KEYWORD:
                        continue
                    check_param(label, param, value, constraints)
            return fn(*args, **kwargs)

        wrapper.__pdpx_params__ = spec
        return wrapper

    return decorate


# ----------------------------------------------------------- shared rules
#: ``n_jobs`` of every public function.
N_JOBS = [Integral(nonzero=True, what="a nonzero integer (-1: every core)"), None]
#: ``random_state`` / ``seed``.
SEED = [Integral(low=0, what="an integer >= 0"), InstanceOf(np.random.Generator, what="a numpy Generator"), None]
#: ``progress``.
PROGRESS = [Boolean(), None]


def is_percentile_pair(value) -> bool:
    """``(low, high)``: two finite numbers in [0, 1] with low < high."""
    if isinstance(value, (str, bytes, dict)):
        return False
    items = list(value)
    if len(items) != 2 or not all(_is_real(v) for v in items):
        return False
    lo, hi = (float(v) for v in items)
    return 0 <= lo < hi <= 1


def _percentile_hint(value) -> str | None:
    lo, hi = (float(v) for v in value)
    if 1 < max(lo, hi) <= 100 and min(lo, hi) >= 0:
        lo, hi = lo / 100, hi / 100
        if lo < hi:
            return f"Percentiles are fractions: did you mean {(lo, hi)!r}?"
    if 0 <= hi < lo <= 1:
        return f"They must be in increasing order (low < high): did you mean {(hi, lo)!r}?"
    return None


PERCENTILES = [Satisfies((tuple, list, np.ndarray), is_percentile_pair,
                         "a pair (low, high) of numbers in [0, 1] with low < high, e.g. (0.05, 0.95)",
                         hint=_percentile_hint)]
