"""The method interface, its options and the request a method receives.

A method declares its ``method_options`` as a frozen dataclass (:class:`MethodOptions`, fields
made with :func:`option`: a default and the values or types accepted), or, as before, a tuple
of key names (:func:`options_class` wraps it: any value). :func:`checked_options` checks what
the user gave once, when the session is built, and every :class:`Request` carries the
method's frozen object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from .errors import PdpxError

if TYPE_CHECKING:  # pragma: no cover
    from .adapter import Adapter


def option(default, *, choices=None, types=None, describe: str | None = None):
    """A field of a :class:`MethodOptions` subclass: its ``default`` and what it accepts (``choices``: the values
    allowed; ``types``: a type or tuple of types; neither: anything); ``describe`` says it in a message."""
    return field(default=default, metadata={"choices": None if choices is None else tuple(choices),
                                            "types": types, "describe": describe})


def _accepted(f: dataclasses.Field, value) -> tuple[bool, Any]:
    """(whether field ``f`` accepts ``value``, the value as the field holds it)."""
    choices, types = f.metadata.get("choices"), f.metadata.get("types")
    if choices is not None:
        if all(isinstance(c, bool) for c in choices):  # True/False only: 1 and "yes" are not booleans
            ok = isinstance(value, (bool, np.bool_)) and bool(value) in choices
            return ok, bool(value) if ok else value
        ok = not isinstance(value, (bool, np.bool_)) and any(value == c for c in choices if type(c) is not bool)
        return ok, value
    if types is not None:
        return isinstance(value, types), value
    return True, value


def _expected(f: dataclasses.Field) -> str:
    """What field ``f`` accepts, in words."""
    if f.metadata.get("describe"):
        return f.metadata["describe"]
    if f.metadata.get("choices") is not None:
        return f"one of {list(f.metadata['choices'])}"
    types = f.metadata.get("types")
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(t.__name__ for t in types if t is not None) or "anything"


@dataclass(frozen=True)
class MethodOptions(Mapping):
    """A method's ``method_options``, checked (subclass it: a frozen dataclass whose fields, made with
    :func:`option`, are the keys the method understands).

    Read them as attributes (``request.options.kernel``: the value given, else the default). The
    object is also a read-only mapping of the keys the user gave (``request.options.get("kernel",
    "auto")``, ``dict(request.options)``), as the plain dict methods received before.
    """

    #: the keys the user gave (set by :meth:`checked`)
    _given: ClassVar[frozenset] = frozenset()

    @classmethod
    def keys_declared(cls) -> list[str]:
        """The option names, in the order the class declares them."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def checked(cls, given: Mapping, method: str, label: str | None = None) -> MethodOptions:
        """``given`` (the user's ``method_options``) checked for method ``method``: an unknown key or a value its
        option does not accept raises :class:`~pdpx.core.errors.PdpxError` naming the key, the method (as
        ``label`` says it, default its quoted name) and what is allowed."""
        names = cls.keys_declared()
        label = repr(method) if label is None else label
        unknown = sorted(set(given) - set(names), key=str)
        if unknown:
            raise PdpxError(f"method_options {unknown} are not options of method {label}; "
                            f"its options: {names or 'none'}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values = {}
        for key, value in given.items():
            ok, values[key] = _accepted(fields[key], value)
            if not ok:
                raise PdpxError(f"method_options={{{key!r}: {value!r}}} of method {label}: expected "
                                f"{_expected(fields[key])}")
        out = cls(**values)
        object.__setattr__(out, "_given", frozenset(given))
        return out

    def __getitem__(self, key):
        if key not in self._given:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter([k for k in self.keys_declared() if k in self._given])

    def __len__(self) -> int:
        return len(self._given)


_WRAPPED: dict = {}


def options_class(method: Method) -> type[MethodOptions]:
    """The :class:`MethodOptions` subclass of ``method``: its own, or its tuple of key names wrapped (any value,
    default None)."""
    declared = getattr(method, "options", ())
    if isinstance(declared, type) and issubclass(declared, MethodOptions):
        return declared
    return _declared_class(tuple(str(k) for k in declared))


def _declared_class(names: tuple) -> type[MethodOptions]:
    """The options class of a method declaring the key names ``names`` (made once per tuple of names)."""
    if names not in _WRAPPED:
        def reduce(self):  # a made class cannot be pickled by name (Dask sends requests to its workers)
            return _declared, (names, {n: getattr(self, n) for n in names}, tuple(self._given))

        _WRAPPED[names] = dataclasses.make_dataclass(
            "DeclaredOptions", [(n, Any, option(None)) for n in names], bases=(MethodOptions,), frozen=True,
            namespace={"__reduce__": reduce})
    return _WRAPPED[names]


def _declared(names: tuple, values: dict, given: tuple) -> MethodOptions:
    """A pickled :func:`_declared_class` object, rebuilt."""
    out = _declared_class(names)(**values)
    object.__setattr__(out, "_given", frozenset(given))
    return out


def checked_options(method: Method, given: Mapping | None) -> MethodOptions:
    """``given`` checked for ``method`` (:meth:`MethodOptions.checked`); None: the method's defaults."""
    return options_class(method).checked(dict(given or {}), method.name)


@dataclass
class Request:
    """Everything a method needs to compute one partial dependence.

    Attributes
    ----------
    X : DataFrame of shape (n_rows, n_features)
        Background rows, columns in the model's order.
    features : list of int
        Positions in ``X.columns`` of the target features (the joint grid).
    grid_values : list of ndarray
        One 1-D array per target feature, the values to set the feature to.
    categorical : list of bool
        Whether each target feature is categorical.
    response : str
        The response to compute (``predict``, ``predict_proba``, ...).
    outputs : list of int
        Columns of the adapter's prediction to report.
    kind : str
        ``average``, ``individual`` or ``both``.
    sample_weight : ndarray of shape (n_rows,) or None
    memory_budget : int
        Bytes a method may use for intermediate arrays.
    n_jobs : int or None
    progress : bool or None
        True: show a bar; False: never; None: only for long runs in a terminal.
    options : MethodOptions
        The method's options (``method_options=`` of the public call), checked: a frozen
        :class:`MethodOptions`, which reads like the dict of the keys given as well.
    rows : object or None
        The validated rows ``X`` is the frame of (a :class:`~pdpx.rows.local.LocalData` that
        several sessions may share), or None: what depends only on ``X``'s values may be kept
        there once for all of them (``rows.once(X, key, compute)``). A source of rows elsewhere
        (``rows.here`` False: Dask, Spark) when it asks a :class:`Batch` for the result as a whole.
    """

    X: pd.DataFrame
    features: list[int]
    grid_values: list[np.ndarray]
    categorical: list[bool]
    response: str
    outputs: list[int]
    kind: str
    sample_weight: np.ndarray | None
    memory_budget: int
    n_jobs: int | None = None
    progress: bool | None = None
    options: Mapping = field(default_factory=MethodOptions)
    rows: Any = None

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(len(g) for g in self.grid_values)

    @property
    def n_grid(self) -> int:
        return int(np.prod(self.grid_shape))

    @property
    def needs_individual(self) -> bool:
        return self.kind in ("individual", "both")


@dataclass
class MethodResult:
    """What a method returns.

    average : ndarray of shape (n_outputs, *grid_shape)
    individual : ndarray of shape (n_outputs, n_rows, *grid_shape) or None
    notes : list of str, shown to the user with the result (e.g. which weights were used)
    """

    average: np.ndarray
    individual: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)


class Method:
    """Base class for methods.

    Attributes
    ----------
    name : str
        What users pass as ``method=``.
    equals_brute : bool
        True if the method always returns what ``brute`` returns on the given rows.
        Only such methods may be chosen by ``method="auto"``.
    cost_rank : int
        Among methods ``auto`` may choose, the lowest rank that is available runs.
    options : type or tuple of str
        The ``method_options`` the method understands: a frozen :class:`MethodOptions` subclass
        (each key's type, allowed values and default), or a tuple of key names (any value); any
        other key is an error, raised when the session is built.
    """

    name: str = ""
    equals_brute: bool = False
    cost_rank: int = 100
    options: type[MethodOptions] | tuple[str, ...] = ()

    def unavailable(self, adapter: "Adapter", request: Request) -> str | None:
        """Return None if the method can compute ``request``, else the reason it cannot."""
        return None

    def plan(self, adapter: "Adapter", feature_sets) -> "Batch":
        """What the method does for the feature sets (tuples of column positions) one session computes on the
        same rows, weights, response and options; empty when the session knows of no other than each request's
        own. The session asks once, at its first request, and runs every request through the answer.

        The default, :class:`Batch`, runs :meth:`compute` once per request; a method that can do once, for all
        the sets, work that does not depend on the set returns its own :class:`Batch`.
        """
        return Batch(self, adapter, feature_sets)

    def reduce_curves(self, adapter: "Adapter", requests: list[Request], reducer):
        """Fill ``reducer`` (a started :class:`~pdpx.core.curves.CurveReducer`) with every row's ICE curves of several
        1-way requests on the same rows, from one pass that never forms the curves, and return it; or None when
        the method has no such pass for ``reducer.walk`` (the default): the session then computes the curves a
        chunk of rows at a time (:func:`pdpx.core.curves.reduce_curves`). The fast measures ask for it (Friedman's
        H: ``walk == "means"``, heterogeneity: ``"moments"``, regions: ``"centered"``); what each walk hands the
        reducer (:meth:`~pdpx.core.curves.CurveReducer.walked`) is in ``docs/plugins.md``.
        """
        return None

    def compute(self, adapter: "Adapter", request: Request) -> MethodResult:
        """The partial dependence of ``request`` (the only member a method must define)."""
        raise NotImplementedError


class Batch:
    """A method's plan for the feature sets of one session (:meth:`Method.plan`).

    This default runs the method's :meth:`~Method.compute` once per request. A method that shares work among the
    sets (``exact``: pattern counts gathered once for all of them) subclasses it, and may also say why
    ``method="auto"`` should pass it by for now (:meth:`deferred`), that its run leaves the GIL free for the
    call's other work (:meth:`beside`), or answer rows held elsewhere as a whole (:meth:`compute` of a request
    whose ``rows`` are a source elsewhere).
    """

    def __init__(self, method: Method, adapter: "Adapter", feature_sets=()):
        self.method = method
        self.name = method.name
        self.adapter = adapter
        self.feature_sets = tuple(tuple(int(j) for j in s) for s in feature_sets)

    def compute(self, adapter: "Adapter", request: Request) -> MethodResult | None:
        """The result of one request of the session. Rows held here: the method's :meth:`~Method.compute`. Rows
        held elsewhere (``request.rows`` a Dask or Spark source, which asks before its partitions run, ``X`` its
        head): the result over all of them computed as a whole, e.g. from sums each partition gathers, or None (the
        default): then :meth:`Method.compute` runs on every partition and the source combines them."""
        if request.rows is not None and not request.rows.here:
            return None
        return self.method.compute(adapter, request)

    def deferred(self, request: Request) -> str | None:
        """Why ``method="auto"`` should not run the method now although it can (it would first have to prepare,
        e.g. compile, for longer than a slower method that returns the same takes), or None (the default).
        Only ``auto`` asks, after :meth:`Method.unavailable`, and only for rows held here."""
        return None

    def beside(self, request: Request) -> bool:
        """Whether the call's other work (its extrapolation check) may run on another thread while the method
        computes ``request``: True only when it spends that time in compiled code that releases the GIL; beside
        Python work the two would take turns and both be slower. Default False."""
        return False


from .oldpaths import watch as _watch  # noqa: E402 - last: the names above moved to pdpx.extend (core/oldpaths.py)

_watch(__name__)
