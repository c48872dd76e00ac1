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
        there once for all of them (``rows.once(X, key, compute)``).
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

    def curve_means(self, adapter: "Adapter", requests: list[Request],
                    shares: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray] | None:
        """Every row's ICE curve averaged over its grid, for several 1-way requests on the same rows, computed
        without forming the curves; or None when the method has no faster way than the curves (the default).

        ``shares[k]`` (n_grid,): the weights of request ``k``'s grid points, summing to 1. Returns
        ``([means_k], f)``: ``means_k[o, i] = sum_g shares[k][g] f_o(g, x_i,-j)`` for output ``o`` of
        ``requests[0].outputs`` and row ``i``, shape (n_outputs, n_rows) each, and ``f`` (n_outputs, n_rows) the
        response at each row. Friedman's overall H needs these (:mod:`pdpx.explain.interaction`).
        """
        return None

    def curve_moments(self, adapter: "Adapter", requests: list[Request]) -> list[tuple] | None:
        """The weighted moments over the rows of every row's ICE curve, for several 1-way requests on the same
        rows, computed without holding the curves; or None when the method has no faster way than the curves
        (the default).

        Returns, per request, ``(W, mean_f, mean_c, m2_c)``: the rows' total weight, and arrays
        (n_outputs, n_grid) of the weighted mean of the curves ``f_o(z_g, x_i,-j)``, the weighted mean of the
        curves centered on their own means over the grid (``c_ig = f(z_g) - mean_h f(z_h)``), and the weighted
        sum of squared deviations of ``c`` from that mean. :func:`pdpx.heterogeneity` needs these.
        """
        return None

    def curve_rows(self, adapter: "Adapter", requests: list[Request], keep: tuple) -> list[tuple] | None:
        """:meth:`curve_moments`, and every row's centered ICE curve written into ``keep``; or None when the method
        has no faster way than computing the curves request by request (the default).

        ``keep``: ``(curves, row_stats)``, float64 arrays (n_requests, n_rows, n_outputs * G_max) and
        (n_requests, n_outputs + 1, n_rows): request ``k``'s curve of row ``i`` centered on its own mean, output
        ``o`` at grid point ``g``, goes to ``curves[k, i, o * G_k + g]`` (``G_k`` its grid's size), the mean to
        ``row_stats[k, o, i]``, the sum of the centered curve's squares to ``row_stats[k, n_outputs, i]``.
        :func:`pdpx.regions` of several features needs these.
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
    call's other work (:meth:`beside`), or answer rows held elsewhere as a whole (:meth:`whole`).
    """

    def __init__(self, method: Method, adapter: "Adapter", feature_sets=()):
        self.method = method
        self.name = method.name
        self.adapter = adapter
        self.feature_sets = tuple(tuple(int(j) for j in s) for s in feature_sets)

    def compute(self, adapter: "Adapter", request: Request) -> MethodResult:
        """The result of one request of the session (on rows held here)."""
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

    def whole(self, adapter: "Adapter", request: Request, data) -> MethodResult | None:
        """The result over rows held elsewhere (a Dask frame: ``data`` is its ``DaskData``) computed as a whole,
        e.g. from sums each partition gathers, or None (the default): :meth:`Method.compute` on every partition,
        combined."""
        return None


from .oldpaths import watch as _watch  # noqa: E402 - last: the names above moved to pdpx.extend (core/oldpaths.py)

_watch(__name__)
