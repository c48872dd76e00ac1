"""Exceptions and warnings raised by pdpx."""


class PdpxError(ValueError):
    """Bad input or a request pdpx cannot honour. The message says what to do."""


class NotFittedError(PdpxError):
    """The model has not been fitted."""


class PdpxWarning(UserWarning):
    """Something the user should know about; never raised on the happy path."""
