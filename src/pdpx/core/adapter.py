"""The adapter interface: how pdpx talks to one fitted model.

An adapter wraps a model object of one library. It must be able to predict; it
may also hand over the model's trees in the common representation
(:class:`pdpx.core.ir.TreeEnsemble`), which lets the ``exact`` and
``recursion`` methods run.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np
import pandas as pd

from .errors import ModelOutputError, PdpxError

if TYPE_CHECKING:  # pragma: no cover
    from .ir import TreeModel

#: Responses pdpx knows by name. ``raw`` is the model's margin (log-odds, ...)
#: for models that have one distinct from ``decision_function``. A survival model's ``survival`` and
#: ``cumulative_hazard`` have one output per asked time (:data:`TIME_RESPONSES`, ``times=``); its ``risk``
#: is its ``predict`` (the risk score).
RESPONSES = ("predict", "predict_proba", "decision_function", "raw", "survival", "cumulative_hazard", "risk")

#: Responses with one output per time (``times=``, :mod:`pdpx.core.times`).
TIME_RESPONSES = ("survival", "cumulative_hazard")

RESPONSE_LABELS = {
    "predict": "prediction",
    "predict_proba": "probability",
    "decision_function": "decision function",
    "raw": "raw margin",
    "survival": "survival probability",
    "cumulative_hazard": "cumulative hazard",
    "risk": "risk score",
}


class Adapter:
    """Base class for adapters. Subclasses override what their library needs.

    Attributes
    ----------
    model : object
        The wrapped, fitted model.
    library : str
        Short name of the model library, shown in errors and reports.
    """

    library = "generic"
    #: False when ``predict`` must not be called from several threads at once
    #: (e.g. a model living in an embedded R); methods then run its predictions one at a time.
    thread_safe = True

    def __init__(self, model: Any):
        self.model = model

    # ------------------------------------------------------------------ facts
    def check_fitted(self) -> None:
        """Raise :class:`pdpx.core.errors.NotFittedError` if the model is not fitted."""

    def feature_names(self) -> list[str] | None:
        """Names of the columns the model was fitted on, in order, or None if unknown."""
        return None

    def is_classifier(self) -> bool:
        return False

    def classes(self) -> list | None:
        """Class labels of a classifier, in the order of ``predict_proba`` columns."""
        return None

    def responses(self) -> list[str]:
        """Responses this model supports, the first being what ``response="auto"`` picks."""
        return ["predict"]

    def output_names(self, response: str) -> list[str]:
        """One label per column returned by :meth:`predict` for ``response``."""
        return [RESPONSE_LABELS.get(response, response)]

    def default_outputs(self, response: str) -> list[int]:
        """Columns reported when the user gives no ``target``.

        All of them, except the positive class only for binary probabilities.
        """
        names = self.output_names(response)
        if response == "predict_proba" and len(names) == 2:
            return [1]
        return list(range(len(names)))

    def response_refused(self, response: str) -> str | None:
        """Why the model has no ``response`` (one it does not list in :meth:`responses`), when the adapter knows
        better than the generic sentence (a Cox model without a baseline hazard has no survival curve); None
        otherwise."""
        return None

    def response_label(self, response: str) -> str:
        return RESPONSE_LABELS.get(response, response)

    # ------------------------------------------------------ survival models
    #: The times a survival model's :data:`TIME_RESPONSES` are read at (set by :func:`pdpx.core.times.resolve`,
    #: once per call, before any prediction): one output per time.
    times: np.ndarray | None = None

    def training_times(self) -> np.ndarray | None:
        """A survival model's distinct training times, increasing: where its survival and cumulative hazard step
        functions step (the default ``times=`` are quantiles of them; the last one ends the model's domain).
        None for a model without survival functions."""
        return None

    def time_bytes(self, response: str) -> int:
        """Bytes the model's trees take per asked time of ``response`` once read for the tree methods (a survival
        forest's leaves hold one value per time): above the memory budget the times are computed a block at a
        time (:func:`pdpx.core.times.in_blocks`); 0 when they do not grow with the times."""
        return 0

    def set_times(self, times: np.ndarray) -> None:
        """Read the time responses at ``times`` (checked: finite, non-negative, increasing, in the model's
        domain) from now on."""
        self.times = np.asarray(times, dtype=np.float64)

    # ------------------------------------------------------------ prediction
    def column_key(self, name: str) -> str:
        """The name the library stores for a column named ``name`` (some rewrite names at fit time)."""
        return name

    def validate_columns(self, X: pd.DataFrame) -> pd.DataFrame:
        """Check ``X`` has the columns the model was fitted on; return it in model order.

        Columns are matched by :meth:`column_key`, so a library that stored
        ``"sepal_length_(cm)"`` for ``"sepal length (cm)"`` still matches the X it
        was fitted on; X keeps its own names.
        """
        names = self.feature_names()
        if names is None:
            return X
        cols = [str(c) for c in X.columns.tolist()]
        if cols == list(names):
            return X
        keyed = {self.column_key(c): c for c in cols}
        if len(keyed) == len(cols) and set(keyed) == set(names):
            order = [keyed[n] for n in names]
            return X if order == cols else X[order]
        missing = [c for c in names if c not in cols]
        extra = [c for c in cols if c not in names]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing {_short(missing)}")
            if extra:
                parts.append(f"not seen at fit time {_short(extra)}")
            raise PdpxError(
                "X does not have the columns the model was fitted on: "
                + "; ".join(parts)
                + f". Pass X with exactly these columns: {_short(list(names))}."
            )
        return X[list(names)]

    def check_grid(self, name: str, values: np.ndarray) -> None:
        """Refuse grid values the model would refuse as input (raise a PdpxError saying why).

        Called for every grid before any work, so that all methods refuse alike.
        """

    def predict(self, X: pd.DataFrame, response: str) -> np.ndarray:
        """Predict ``response`` for the rows of ``X``.

        Parameters
        ----------
        X : DataFrame of shape (n_rows, n_features)
            Columns in the model's order, dtypes as the user passed them.
        response : str
            One of :meth:`responses`.

        Returns
        -------
        ndarray of shape (n_rows, n_outputs), float64
        """
        raise NotImplementedError

    # ----------------------------------------------------------- tree access
    #: Top-level package names of the model library (``("mylib",)``). With them, pdpx checks that every method on
    #: :meth:`prediction_path` is the library's own code before the trees may answer (:mod:`pdpx.core.trust`);
    #: empty: no check (the adapter itself vouches for what it reads).
    library_roots: tuple = ()

    def prediction_path(self, response: str) -> list:
        """``(object, method name)`` of every call on the way from X to ``response`` whose code the trees stand
        for: by default the model's own method of that name. Composite models (pipelines, forests whose
        members' predict is called) list their parts too; a part of another library is listed as
        ``(object, method name, that library's roots)``."""
        return [(self.model, response)] if response in ("predict", "predict_proba", "decision_function") else []

    def user_code(self, response: str) -> str | None:
        """The part of the prediction path that is the user's own code rather than a model library's (a subclass's
        or the instance's own ``predict``; an adapter may name more, e.g. a function in a pipeline), as ``Class.
        method``; None when every part is a library's. Such code may depend on the other rows of a call, which
        ``brute`` checks before it stacks grid points (:mod:`pdpx.core.stacking`)."""
        from .trust import step_refusal

        roots = tuple(self.library_roots or ())
        if not roots:
            return None
        for obj, method, *own in self.prediction_path(response):
            if step_refusal(obj, method, tuple(own[0]) if own else roots) is not None:
                return f"{type(obj).__name__}.{method}"
        return None

    def one_thread(self):
        """A context in which the model's own calls made by pdpx (its checks) run on one thread and start no thread
        pool, restoring every setting afterwards: OpenMP's, by default (:func:`pdpx.core.forksafe.single_threaded`).
        An adapter whose library keeps its own thread count overrides it."""
        from .forksafe import single_threaded

        return single_threaded()

    def tree_model(self, response: str) -> "TreeModel | None":
        """The model's trees in the common representation, for ``response``.

        Return None when the model has no trees, or when the response cannot be
        computed from them exactly; :meth:`tree_model_unavailable` then says why.
        """
        return None

    def tree_model_unavailable(self, response: str) -> str:
        return f"{type(self.model).__name__} does not expose tree structure to pdpx"

    def fingerprint(self) -> str:
        """A digest of what the model's predictions depend on (its trees' arrays, or the library's serialisation),
        made with :func:`pdpx.core.ir.fingerprint`: what is kept with the model in :data:`pdpx.core.ir.model_cache`
        is keyed on it, so a model changed in place is read again. Cheap enough to compute once per call; "" when
        the adapter cannot tell (then only the objects a refit replaces key the cache)."""
        return ""


@contextmanager
def trees_read_once(adapter: Adapter) -> Iterator[None]:
    """Within the block, ``adapter.tree_model(response)`` reads the trees once per response.

    A call asks for the trees more than once (is a tree method available? then the method
    itself): the first answer is kept for the others. The adapter is back to normal after.
    """
    if vars(adapter).get("_pdpx_read_once"):  # already inside such a block
        yield
        return
    own = vars(adapter).get("tree_model")  # the guard of pdpx.core.trust, if the adapter has one
    read = adapter.tree_model
    seen: dict = {}

    def tree_model(response: str):
        if response not in seen:
            seen[response] = read(response)
        return seen[response]

    adapter.tree_model = tree_model
    adapter._pdpx_read_once = True
    try:
        yield
    finally:
        del adapter._pdpx_read_once
        if own is None:
            del adapter.tree_model
        else:
            adapter.tree_model = own


def _short(items: Sequence, limit: int = 8) -> str:
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:limit])
    if len(items) > limit:
        shown += f", ... ({len(items)} in all)"
    return "[" + shown + "]"


def checked_predict(adapter: "Adapter", X: pd.DataFrame, response: str) -> np.ndarray:
    """``adapter.predict(X, response)``, checked: float64 of shape (len(X), number of outputs).

    A prediction of the wrong length, shape or type (strings, a dict, objects) is
    the model's fault and raises :class:`~pdpx.core.errors.ModelOutputError` saying
    what was returned and what was expected.
    """
    where = f"the model's {response} ({type(adapter.model).__name__}, through pdpx's {adapter.library} adapter)"
    arr = as_2d(adapter.predict(X, response), where=where)
    n = len(X)
    if arr.shape[0] != n:
        raise ModelOutputError(
            f"{where} returned {arr.shape[0]:,} predictions for {n:,} rows; expected one per row"
        )
    names = adapter.output_names(response)
    if arr.shape[1] != len(names):
        raise ModelOutputError(
            f"{where} returned {arr.shape[1]} column(s) per row; expected {len(names)} ({names!r})"
        )
    return arr


def as_2d(pred: Any, *, where: str = "the model's predict") -> np.ndarray:
    """Predictions as float64 (n_rows, n_outputs); anything else is a :class:`ModelOutputError`.

    Text is not a number even when it reads as one: an array of strings or bytes
    (``np.array(['1.5', '2.0'])``), or of objects any of which is a string, is refused,
    never parsed.
    """
    if isinstance(pred, (dict, str, bytes)):
        raise ModelOutputError(f"{where} returned a {type(pred).__name__}; expected an array of predictions")
    try:
        raw = np.asarray(pred)
    except (TypeError, ValueError):
        raise ModelOutputError(f"{where} returned {type(pred).__name__} that is not an array") from None
    text = raw.dtype.kind in "SU" or (raw.dtype == object and any(isinstance(v, (str, bytes)) for v in raw.ravel()))
    if text:
        first = next(v for v in raw.ravel() if isinstance(v, (str, bytes)))
        first = first.item() if isinstance(first, np.generic) else first
        raise ModelOutputError(
            f"{where} returned text ({type(first).__name__} values such as {first!r}), not numbers; pdpx averages "
            "numbers and does not parse text: make the model return numeric predictions (e.g. .astype(float))")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        found = sorted({type(v).__name__ for v in raw.ravel()[:100]}) if raw.dtype == object else [str(raw.dtype)]
        raise ModelOutputError(
            f"{where} returned values that are not numbers ({', '.join(found)}); expected numbers to average"
        ) from None
    if arr.ndim == 1:
        arr = arr[:, None]
    elif arr.ndim != 2:
        raise ModelOutputError(
            f"{where} returned an array of shape {arr.shape}; expected (n_rows,) or (n_rows, n_outputs)"
        )
    return arr


from .oldpaths import watch as _watch  # noqa: E402 - last: the names above moved to pdpx.extend (core/oldpaths.py)

_watch(__name__)
