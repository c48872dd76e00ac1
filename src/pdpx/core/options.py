"""The options of a partial dependence call, defined once: their names, defaults and what each accepts.

:class:`PDOptions` is a frozen dataclass whose fields are the keyword options of
:func:`pdpx.partial_dependence`; each field's metadata lists the constraints of
:mod:`pdpx.core.validation` its value must satisfy. :meth:`PDOptions.checked` is the
one place they are checked (with a message naming the public function that was
called) and parsed (``memory_budget`` to bytes, ``percentiles`` to floats).
:class:`~pdpx.core.session.Session` takes a :class:`PDOptions`, or keyword options it
checks itself, so public functions hand their options on and never check them first.
Checks that need the model or the data (a feature name, a class label, one weight
per row) come after, in the session.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .adapter import RESPONSES
from .config import parse_bytes
from .errors import PdpxError, PdpxTypeError
from .validation import (
    N_JOBS,
    PERCENTILES,
    PROGRESS,
    SEED,
    Boolean,
    Constraint,
    InstanceOf,
    Integral,
    Options,
    Real,
    String,
    check_param,
)

#: Values of ``kind`` a session computes (``partial_dependence`` also takes ``"derivative"``).
KINDS = ("average", "individual", "both")
#: Values of ``grid``: ``grid_resolution`` points between ``percentiles``, or one point per step of a tree model.
GRIDS = ("uniform", "thresholds")
#: Values of ``interval`` besides a level: the rows' bootstrap, the model's members, a dict of quantile models,
#: refitted models (``learner``: :mod:`pdpx.explain.learner`).
INTERVALS = ("bootstrap", "members", "quantiles", "learner")
#: What array-like arguments may be.
ARRAYS = (list, tuple, np.ndarray, pd.Series, pd.Index)
#: ``interval="jackknife"``: a bagged forest's infinitesimal jackknife band (:mod:`pdpx.core.jackknife`).
INTERVALS += ("jackknife",)


class Bytes(Constraint):
    """A memory budget: what :func:`pdpx.core.config.parse_bytes` reads."""

    def accepts_type(self, value):
        return isinstance(value, (numbers.Real, str)) and not isinstance(value, (bool, np.bool_))

    def accepts(self, value):
        try:
            parse_bytes(value)
        except PdpxError:
            return False
        return True

    def describe(self):
        return "a number of bytes from 1 MiB to 1 PiB, or a string like '512MB'"

    def hint(self, value):
        try:
            parse_bytes(value)
        except PdpxError as exc:
            return str(exc)
        return None


class ArrayLike(Constraint):
    """Anything array-like with a length (or a Dask collection); not text, not a mapping, not a scalar."""

    def __init__(self, what: str, name: bool = False):
        self.what = what
        self.name = name  # a column's name (text) is accepted too: X's column of weights in a Spark DataFrame

    def accepts_type(self, value):
        if self.name and isinstance(value, str):
            return True
        return (not isinstance(value, (str, bytes, dict, numbers.Number))
                and (hasattr(value, "__len__") or hasattr(value, "compute")))

    def describe(self):
        return self.what


class Features(Constraint):
    """A column name, an integer position (never a bool), or a list of them."""

    def accepts_type(self, value):
        if isinstance(value, (bool, np.bool_)):
            return False
        return isinstance(value, (str, numbers.Integral, *ARRAYS))

    def describe(self):
        return "a column name, an integer position, or a list of them"


#: What ``features`` of :func:`pdpx.partial_dependence` accepts.
FEATURES = [Features()]


def _option(default, *accepts):
    """A field of :class:`PDOptions`: its default and the constraints its value must satisfy (none: any value)."""
    return field(default=default, metadata={"accepts": list(accepts)})


@dataclass(frozen=True, eq=False)
class PDOptions:
    """The keyword options of :func:`pdpx.partial_dependence`, checked and parsed (see the module docstring).

    Build one with :meth:`checked`; derive one with :meth:`but`. The attributes are the
    options (``memory_budget`` in bytes or None, ``percentiles`` a pair of floats);
    ``given`` names the options the caller passed.
    """

    kind: str = _option("average", Options(*KINDS))
    method: str = _option("auto", String("a method name ('auto', 'brute', 'exact', 'recursion' or a plugin's)"))
    response: str = _option("auto", Options("auto", *RESPONSES))
    target: Any = _option(None)
    times: Any = _option(None, ArrayLike("an increasing list of times >= 0 (a survival model's outputs)"),
                         Real(0), None)
    grid_resolution: int = _option(100, Integral(low=2))
    percentiles: tuple = _option((0.05, 0.95), *PERCENTILES)
    grid: str = _option("uniform", Options(*GRIDS))
    custom_values: Any = _option(None, InstanceOf(dict, what="a dict {feature: values}"), None)
    categorical_features: Any = _option(
        None, String("a column name"),
        InstanceOf(*ARRAYS, what="a list of column names / positions, or a boolean mask"), None)
    sample_weight: Any = _option(None, ArrayLike("an array of one weight per row of X (for a Spark DataFrame X: "
                                                 "the name of its weight column)", name=True), None)
    centered: bool = _option(False, Boolean())
    n_jobs: Any = _option(None, *N_JOBS)
    progress: Any = _option(None, *PROGRESS)
    memory_budget: Any = _option(None, Bytes(), None)
    ice_sample: Any = _option(None, Integral(low=1), None)
    random_state: Any = _option(0, *SEED)
    method_options: Any = _option(None, InstanceOf(dict, what="a dict of the method's options"), None)
    include_missing: Any = _option("auto", Options("auto"), Boolean())
    by: Any = _option(None, String("a column name"), Integral(low=0, what="a column position"), None)
    by_bins: int = _option(4, Integral(low=2))
    interval: Any = _option(None, Real(0, 1, low_open=True, high_open=True), Options(*INTERVALS), None)
    n_boot: int = _option(200, Integral(low=2))
    level: Any = _option(None, Real(0, 1, low_open=True, high_open=True), None)
    oob: bool = _option(False, Boolean())
    #: the options the caller passed (the others hold their defaults)
    given: frozenset = field(default=frozenset(), repr=False)
    #: not an option: the validated rows (:class:`~pdpx.rows.local.LocalData`) the sessions built with these
    #: options share when they are built on the same X and model (one public call that builds several, such as
    #: the report); set by that call with ``but(rows=...)``, never by a user
    rows: Any = field(default=None, repr=False)

    @classmethod
    def checked(cls, function: str, given: Mapping[str, Any], *, kinds: tuple = KINDS) -> PDOptions:
        """Check and parse the options ``given`` to public function ``function``.

        Unknown names raise :class:`~pdpx.core.errors.PdpxTypeError`; a value its option
        does not accept raises the error of :func:`pdpx.core.validation.check_param`,
        both naming ``function``. ``kinds``: the values ``kind`` may take.
        """
        unknown = sorted(set(given) - OPTION_NAMES)
        if unknown:
            raise PdpxTypeError(
                f"{function}(): unknown option(s) {unknown}; the options of partial_dependence are "
                f"{sorted(OPTION_NAMES)}"
            )
        for name in OPTION_NAMES_IN_ORDER:  # in the signature's order, as the decorator checked them
            if name in given:
                accepts = [Options(*kinds)] if name == "kind" and kinds != KINDS else ACCEPTS[name]
                if accepts:
                    check_param(function, name, given[name], accepts)
        _check_level(function, given)
        return cls(**_parsed(given), given=frozenset(given))

    def but(self, **changes) -> PDOptions:
        """These options with ``changes`` (trusted values: internal callers derive options with it)."""
        return dataclasses.replace(self, **_parsed(changes), given=self.given | (frozenset(changes) - {"rows"}))

    def items(self) -> dict[str, Any]:
        """The options as keyword arguments of :func:`pdpx.partial_dependence`."""
        return {name: getattr(self, name) for name in OPTION_NAMES_IN_ORDER}

    def pick(self, names) -> dict[str, Any]:
        """The options among ``names`` that were given and are not None, as keyword arguments."""
        return {n: getattr(self, n) for n in names if n in self.given and getattr(self, n) is not None}


def _parsed(values: Mapping[str, Any]) -> dict[str, Any]:
    """Values in the form the fields hold (called once the constraints passed)."""
    out = dict(values)
    if out.get("memory_budget") is not None:
        out["memory_budget"] = parse_bytes(out["memory_budget"])
    if "percentiles" in out:
        out["percentiles"] = tuple(float(p) for p in out["percentiles"])
    if out.get("interval") == "bootstrap":  # the rows' bootstrap at a level: what a level alone asks for
        out["interval"] = float(out.get("level") or 0.95)
        out["level"] = None
    elif out.get("interval") is not None and not isinstance(out["interval"], str):
        out["interval"] = float(out["interval"])
    if out.get("level") is not None:
        out["level"] = float(out["level"])
    for name in ("grid_resolution", "by_bins", "n_boot"):
        if name in out:
            out[name] = int(out[name])
    return out


def _check_level(function: str, given: Mapping[str, Any]) -> None:
    """``level=`` goes with a named ``interval`` only (a number is a level already)."""
    if given.get("level") is None:
        return
    interval = given.get("interval")
    if interval is None:
        raise PdpxError(f"{function}(): level= is the share a band covers; pass interval='members' or "
                        "'bootstrap' with it (or 'jackknife')")
    if not isinstance(interval, str):
        raise PdpxError(f"{function}(): interval={interval!r} is a level already; give it once: interval={interval!r}"
                        f", or interval='bootstrap' with level={given['level']!r}")


_FIELDS = [f for f in dataclasses.fields(PDOptions) if f.name not in ("given", "rows")]
#: The option names, in the order of :func:`pdpx.partial_dependence`'s signature.
OPTION_NAMES_IN_ORDER = tuple(f.name for f in _FIELDS)
OPTION_NAMES = frozenset(OPTION_NAMES_IN_ORDER)
#: The default of each option.
DEFAULTS = {f.name: f.default for f in _FIELDS}
#: What each option accepts (a list of constraints; empty: anything).
ACCEPTS = {f.name: f.metadata["accepts"] for f in _FIELDS}
