"""Drop-ins for scikit-learn's partial dependence: change one import.

>>> from pdpx.sklearn import partial_dependence, PartialDependenceDisplay   # doctest: +SKIP
>>> PartialDependenceDisplay.from_estimator(model, X, [0, 1, (0, 1)])      # doctest: +SKIP

* :func:`partial_dependence` (``function.py``) takes what
  :func:`sklearn.inspection.partial_dependence` takes and returns the same ``Bunch``.
* :class:`PartialDependenceDisplay` (``display.py``) is scikit-learn's display with
  pdpx's numbers: ``from_estimator`` computes every feature set in one pdpx session,
  then scikit-learn's own ``plot`` draws them.
* ``checks.py`` refuses the arguments scikit-learn refuses, with its error types and wording.

What differs on purpose is in ``docs/sklearn.md``; the main point: ``method="auto"``
always gives brute's numbers (computed by ``exact`` for tree models), where
scikit-learn's switches to ``recursion``. The display is imported on first use
(it needs scikit-learn's display class).
"""

from .checks import InvalidParameterError
from .function import partial_dependence

__all__ = ["partial_dependence", "PartialDependenceDisplay", "InvalidParameterError"]


def __getattr__(name):  # the display subclasses scikit-learn's: import it only when asked for
    if name == "PartialDependenceDisplay":
        from .display import PartialDependenceDisplay

        return PartialDependenceDisplay
    raise AttributeError(f"module 'pdpx.sklearn' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), "PartialDependenceDisplay"])
