"""Exceptions and warnings raised by pdpx.

Every error a user can cause is a :class:`PdpxError` (a ``ValueError``); a value of
the wrong type is a :class:`PdpxTypeError`, which is also a ``TypeError``. Messages
name the argument, the value given and what is accepted.
"""


class PdpxError(ValueError):
    """Bad input or a request pdpx cannot honour. The message says what to do."""


class PdpxTypeError(PdpxError, TypeError):
    """An argument of the wrong type (also a ``TypeError``)."""


class NotFittedError(PdpxError):
    """The model has not been fitted."""


class ModelOutputError(PdpxError):
    """The model's predict returned something pdpx cannot average (wrong shape, length or type)."""


class PdpxWarning(UserWarning):
    """Something the user should know about; never raised on the happy path."""


class NonFiniteWarning(PdpxWarning):
    """The model's predictions, and so the result, contain NaN or infinite values."""


class TreeMismatchWarning(PdpxWarning):
    """pdpx's reading of a model's trees disagreed with the model's own predict on a sample of grid points,
    so the result was computed by calling the model (``brute``) instead.

    This is a gap in pdpx, not in your model: please report it with the model's type and settings.
    """


class StackingWarning(PdpxWarning):
    """The model's predictions on a row depend on the other rows of the call (checked on a sample: its prediction
    goes through the user's own code), so ``brute`` called it once per grid point instead of stacking grid points
    into one call (:mod:`pdpx.core.stacking`)."""


class ExtrapolationWarning(PdpxWarning):
    """A large share of the partial dependence rests on feature combinations absent from the data.

    The rule is in :mod:`pdpx.core.extrapolation`; accumulated local effects (``pdpx.ale``)
    are the alternative that stays within the data.

    Attributes
    ----------
    features : tuple of str
        The result's feature set.
    share : float
        The share (0 to 1) of the partial dependence on absent combinations.
    partner : str or None
        For one feature: the other feature it is most dependent on; None for two.
    """

    def __init__(self, message: str = "", features=(), share: float = float("nan"), partner: str | None = None):
        super().__init__(message)
        self.features = tuple(features)
        self.share = share
        self.partner = partner


class IncompleteReportWarning(PdpxWarning):
    """:func:`pdpx.report` wrote its page without some of the parts it was asked for: a measure or a figure that
    failed (the page says so in its place). Raised before the page is written, so that
    ``warnings.simplefilter("error", IncompleteReportWarning)`` keeps a file already at that path as it was.

    Attributes
    ----------
    missing : tuple of (str, str)
        Each missing part (``"the regions of age"``) and why (the error it raised).
    path : str
        The file the report is written to.
    """

    def __init__(self, message: str = "", missing=(), path: str = ""):
        super().__init__(message)
        self.missing = tuple((str(part), str(why)) for part, why in missing)
        self.path = str(path)


class UnreadValueError(PdpxError):
    """A value the method met while it ran lies outside what it read of the model (a raw value of a column the
    model reads as several derived ones, met in a partition that was not there when the trees were read). Under
    ``method="auto"`` the session answers with ``brute`` instead, saying so in the result's notes."""


class ModelPredictError(PdpxError):
    """The model's own prediction raised, and its exception cannot be raised again with pdpx's context as its own
    type (a constructor that takes more than a message). The model's exception is ``__cause__``."""


#: Modules whose frames are pdpx's own, or machinery between pdpx's frames: a warning is attributed past them.
_INTERNAL = ("pdpx", "pluggy", "contextlib")


def _internal(frame) -> bool:
    name = frame.f_globals.get("__name__", "") or ""
    return any(name == top or name.startswith(top + ".") for top in _INTERNAL)


def user_stacklevel() -> int:
    """The ``stacklevel`` that :func:`warnings.warn`, called in the function that calls this one, needs to point at
    the first frame outside pdpx (the user's line; the R bridge is pdpx's too). The outermost frame when every frame
    is pdpx's (a call from R through the bridge)."""
    import sys

    frame = sys._getframe(1)  # the frame that calls warnings.warn: its stacklevel 1
    level = 1
    while frame.f_back is not None and _internal(frame):
        frame = frame.f_back
        level += 1
    return level


def warn(message, category: type[Warning] | None = None) -> None:
    """``warnings.warn`` attributed to the user's line: the first frame outside pdpx (:func:`user_stacklevel`).

    ``message`` is a text (then ``category``, default :class:`PdpxWarning`, is its class) or a warning instance.
    """
    import warnings

    if isinstance(message, Warning):
        warnings.warn(message, stacklevel=user_stacklevel())
    else:
        warnings.warn(message, category or PdpxWarning, stacklevel=user_stacklevel())


#: Attribute set on an exception that pdpx raised for the model's own failure (its ``__cause__``).
CONTEXT = "pdpx_context"


def model_failure(exc: BaseException, context: str, advice: str = "") -> BaseException:
    """The exception to raise, ``from`` the model's own ``exc``, when the model's prediction failed inside pdpx.

    Its message says pdpx's ``context`` (which call, feature, grid value or rows), the model's exception type and
    message, and ``advice``. Its type is ``exc``'s own where that type is built from a message alone, so an
    ``except`` clause the user wrote for the model's errors still catches it; otherwise a
    :class:`ModelPredictError`. When ``exc`` is itself such an exception (pdpx's context on an inner call), the
    new one replaces it: the outer context is prepended and the model's exception stays the direct cause.
    Raise it with ``raise model_failure(exc, ...) from model_cause(exc)``.
    """
    inner = getattr(exc, CONTEXT, None)
    cause = model_cause(exc)
    if inner is not None:
        context = f"{context}; {inner}"
        advice = advice or getattr(exc, "pdpx_advice", "")
    own = str(cause).strip() or "(no message)"
    text = f"{context}: the model raised {type(cause).__name__}: {own}"
    if advice:
        text += f". {advice}"
    new = None
    if type(cause).__module__ != __name__:  # pdpx's own errors are never re-raised with model context
        try:
            candidate = type(cause)(text)
            if text in str(candidate) or str(candidate) == repr(text):
                new = candidate
        except Exception:  # noqa: BLE001 - a constructor that wants more than a message
            new = None
    for candidate in (new, ModelPredictError(text)):
        if candidate is None:
            continue
        try:
            setattr(candidate, CONTEXT, context)
            candidate.pdpx_advice = advice
        except (AttributeError, TypeError):  # an exception type that takes no attributes
            continue
        return candidate
    raise AssertionError("unreachable: ModelPredictError takes attributes")  # pragma: no cover


def model_cause(exc: BaseException) -> BaseException:
    """The model's own exception behind ``exc`` (``exc`` itself unless pdpx raised it with context)."""
    while getattr(exc, CONTEXT, None) is not None and exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def from_model(exc: BaseException) -> bool:
    """Whether ``exc`` is a model's failure that pdpx raised again with its context (:func:`model_failure`)."""
    return getattr(exc, CONTEXT, None) is not None


def reraisable(exc: BaseException) -> bool:
    """Whether pdpx adds its context to ``exc`` raised by a model's prediction: not pdpx's own errors (they say
    what to do already), not interrupts, exits or memory exhaustion (they pass as they are)."""
    return isinstance(exc, Exception) and not isinstance(exc, (PdpxError, MemoryError))
