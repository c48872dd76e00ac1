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
