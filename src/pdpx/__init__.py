"""pdpx: partial dependence, ICE and centered ICE for any fitted model.

>>> import pdpx
>>> res = pdpx.partial_dependence(model, X, ["age"])          # doctest: +SKIP
>>> res.to_frame()                                           # doctest: +SKIP
"""

from .core.compute import partial_dependence, partial_dependence_many
from .core.config import config_context, get_config, set_config
from .core.errors import NotFittedError, PdpxError, PdpxWarning
from .core.hookspecs import hookimpl
from .core.plugins import get_plugin_manager
from .core.result import PartialDependenceCollection, PartialDependenceResult
from .core.version import __version__

__all__ = [
    "__version__",
    "report",
    "partial_dependence",
    "partial_dependence_many",
    "PartialDependenceResult",
    "PartialDependenceCollection",
    "PdpxError",
    "PdpxWarning",
    "NotFittedError",
    "get_plugin_manager",
    "hookimpl",
    "set_config",
    "get_config",
    "config_context",
    "importance",
    "h_statistic",
    "ale",
    "derivative_ice",
    "compare_methods",
    "plot_importance",
]

#: measures beyond the curves (:mod:`pdpx.explain`), imported on first use
_EXPLAIN = ("importance", "h_statistic", "ale", "derivative_ice", "compare_methods", "plot_importance")


def __getattr__(name):  # lazy: plotting and reports need plotnine
    if name == "report":
        from .outputs.report import report

        return report
    if name in _EXPLAIN:
        from .explain import resolve

        return resolve(name)
    raise AttributeError(f"module 'pdpx' has no attribute {name!r}")
