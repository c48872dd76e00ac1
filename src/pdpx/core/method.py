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
    planned : tuple of tuple of int
        Every feature set the same session will compute with these rows, weights,
        response and options, this one included (:meth:`~pdpx.core.session.Session.plan`);
        empty when the session knows of no other. A method may do once, for all of
        them, work that does not depend on the feature set (``exact``'s pattern counts).
    memo : dict
        Kept by the session and shared by its requests: what a method computed for one
        feature set and may reuse for the next (keyed by the method's own names).
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
    planned: tuple = ()
    memo: dict = field(default_factory=dict, repr=False, compare=False)

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

    def deferred(self, adapter: "Adapter", request: Request) -> str | None:
        """Why ``method="auto"`` should not run this method now although it can (it would first have to
        prepare, e.g. compile, for longer than a slower method that returns the same takes), or None.

        Only ``auto`` asks, after :meth:`unavailable`; an explicit ``method=`` always runs.
        """
        return None

    def whole(self, adapter: "Adapter", request: Request, data) -> MethodResult | None:
        """The result over rows held elsewhere (a Dask frame: ``data`` is its ``DaskData``) computed as a whole,
        e.g. from sums each partition gathers, or None: run :meth:`compute` on every partition and combine.

        Only asked for data that is not held in this process.
        """
        return None

    def runs_beside(self, adapter: "Adapter", request: Request) -> bool:
        """Whether the call's other work (its extrapolation check) may run on another thread while this method
        computes ``request``: True only when the method spends that time in compiled code that releases the
        GIL; beside Python work the two would take turns and both be slower. Default False."""
        return False

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
        raise NotImplementedError
