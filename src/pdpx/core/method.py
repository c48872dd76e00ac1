"""The method interface and the request a method receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from .adapter import Adapter


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
    options : dict
        Method-specific options (``method_options=`` of the public call).
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
    options: dict = field(default_factory=dict)

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
    options : tuple of str
        The ``method_options`` keys the method understands; any other key is an error.
    """

    name: str = ""
    equals_brute: bool = False
    cost_rank: int = 100
    options: tuple[str, ...] = ()

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
