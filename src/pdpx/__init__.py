"""pdpx: partial dependence, ICE and centered ICE for any fitted model.

>>> import pdpx
>>> res = pdpx.partial_dependence(model, X, ["age"])          # doctest: +SKIP
>>> res.to_frame()                                           # doctest: +SKIP

Every public function and every type it returns, and every warning and error class,
is importable from here, and ``__all__`` (which ``dir(pdpx)`` and tab completion show)
lists exactly those names. The measures of :mod:`pdpx.explain`, the report and
:func:`plot_importance` are imported on first use (the figures need plotnine); the
submodules (``pdpx.api``, ``pdpx.core``, ...) stay importable but are not public names.
Deprecated names and arguments (``docs/api.md``, "Deprecated names") work with a
:class:`DeprecationWarning` that names their replacement.

This package is the top floor (``docs/architecture.md``): :mod:`.api` (partial_dependence and
partial_dependence_many), :mod:`.reporting` (report; :mod:`.report_rows`: the rows each part rests on, a
Spark DataFrame's included; :mod:`.report_parts`: figures drawn on a side thread, parts that failed named in a
warning; :mod:`.report_sure`: the section "How sure is this curve?"), :mod:`.r_bridge` (what the R package
calls) and :mod:`.r_wire` (what R sends, decoded), and the ``pdpx`` command line, the package :mod:`.cli` (its
commands, data and model files, outputs). The floors below are the
packages ``core``, ``adapters``, ``plugins``, ``explain``, ``outputs``, ``sklearn`` and ``demo``.
Plugin authors import from :mod:`.extend`, the public extension API (``docs/plugins.md``).
"""

from .api import partial_dependence, partial_dependence_many
from .core.config import config_context, get_config, set_config
from .core.errors import (
    ExtrapolationWarning,
    IncompleteReportWarning,
    ModelOutputError,
    ModelPredictError,
    NonFiniteWarning,
    NotFittedError,
    PdpxError,
    PdpxTypeError,
    PdpxWarning,
    StackingWarning,
    TreeMismatchWarning,
    UnreadValueError,
)
from .core.extrapolation import Extrapolation
from .core.hookspecs import hookimpl
from .core.jackknife import JackknifeResult
from .core.members import MemberResult
from .core.plugins import get_plugin_manager
from .core.result import CurveResult, PartialDependenceCollection, PartialDependenceResult
from .core.stacked import StackedResult
from .core.version import __version__

__all__ = [
    "__version__",
    # functions
    "partial_dependence",
    "partial_dependence_many",
    "report",
    "importance",
    "h_statistic",
    "ale",
    "derivative_ice",
    "compare_methods",
    "heterogeneity",
    "regions",
    "explained_variance",
    "survival_profile",
    "cross_fitted",
    "h_test",
    "plot_importance",
    "set_config",
    "get_config",
    "config_context",
    "get_plugin_manager",
    "hookimpl",
    # what they return
    "CurveResult",
    "PartialDependenceResult",
    "StackedResult",
    "MemberResult",
    "JackknifeResult",
    "DerivativeResult",
    "ALEResult",
    "PartialDependenceCollection",
    "MethodComparison",
    "HStatistic",
    "ImportanceResult",
    "HeterogeneityResult",
    "RegionsResult",
    "RegionsSet",
    "ExplainedVariance",
    "SurvivalProfile",
    "Refits",
    "LearnerResult",
    "HTestResult",
    "Extrapolation",
    # errors and warnings
    "PdpxError",
    "PdpxTypeError",
    "NotFittedError",
    "ModelOutputError",
    "ModelPredictError",
    "PdpxWarning",
    "NonFiniteWarning",
    "ExtrapolationWarning",
    "TreeMismatchWarning",
    "UnreadValueError",
    "StackingWarning",
    "IncompleteReportWarning",
]

#: names of :mod:`pdpx.explain` (functions and the types they return), imported on first use
_EXPLAIN = ("importance", "h_statistic", "ale", "derivative_ice", "compare_methods",
            "HStatistic", "ALEResult", "DerivativeResult", "MethodComparison", "ImportanceResult",
            "heterogeneity", "HeterogeneityResult", "regions", "RegionsResult", "RegionsSet", "explained_variance",
            "ExplainedVariance", "survival_profile", "SurvivalProfile", "cross_fitted", "Refits", "LearnerResult",
            "h_test", "HTestResult")


def __getattr__(name):  # lazy: the measures, the report and figures import what they need on first use
    if name == "report":
        from .reporting import report

        return report
    if name == "plot_importance":
        from .outputs.plot_explain import plot_importance

        return plot_importance
    if name in _EXPLAIN:
        from .explain import resolve

        return resolve(name)
    raise AttributeError(f"module 'pdpx' has no attribute {name!r}")


def __dir__():  # the public names (lazy ones included) and the module's dunders; not the submodules
    return sorted(set(__all__) | {n for n in globals() if n.startswith("__") and n.endswith("__")})
