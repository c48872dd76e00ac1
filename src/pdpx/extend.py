"""The public extension API: everything an adapter or method plugin imports from pdpx, in one module.

A plugin (``docs/plugins.md``) writes ``from pdpx.extend import ...`` and nothing else of pdpx
besides the public functions of :mod:`pdpx` itself:

* **hooks and registration**: :data:`hookimpl` (the marker of hook implementations),
  :func:`get_plugin_manager` (a fresh manager: specs, built-ins, entry points),
  :func:`plugin_manager` (the process's), :func:`reset_plugin_manager`, :func:`adapt` (the adapter
  the hooks give a model) and :func:`get_methods` (the registered methods);
* **adapters**: :class:`Adapter` (the base class), :func:`as_2d` (predictions as a float
  (n_rows, n_outputs) array), :class:`BoosterAdapter` (the base of a gradient-boosting library's
  adapter) with :class:`Extracted` / :class:`Unavailable` (what its ``build_trees`` returns),
  :func:`self_check` and :func:`library_classes`;
* **the tree representation**: :class:`TreeEnsemble`, :class:`TreeModel`, the missing-value
  conventions :data:`NAN_MISSING`, :data:`NAN_AS_ZERO`, :data:`ZERO_OR_NAN_MISSING`,
  :data:`model_cache` (what is kept with a fitted model), :func:`numeric_encoder`,
  :func:`numeric_values` and :func:`fingerprint` (a digest of arrays, for ``Adapter.fingerprint``);
* **methods**: :class:`Method`, :class:`Batch`, :class:`MethodResult`, :class:`Request`,
  :class:`MethodOptions` with :func:`option`, and :func:`grid_points` (a request's grid points);
* **curve reducers** (what a fast measure keeps of every row's ICE curves, and what a method's
  ``reduce_curves`` fills): :class:`CurveReducer` (the protocol), :class:`CurvePart` (the rows a state
  covers), the reducers :class:`CurveMeans`, :class:`CurveMoments`, :class:`CenteredCurves`, and
  :func:`reduce_ice` (a reducer over a model's curves on X);
* **column rules of pipelines**: :class:`ColumnMap`, :func:`register_rule`,
  :func:`declare_elementwise`;
* **survival models** (``docs/survival.md``): :data:`TIME_RESPONSES` (the responses with one output per time),
  :func:`time_names` (the outputs' names), :func:`step_columns` (the step-function rule: which step each time
  reads), :func:`aft_curves` (an accelerated failure time model's survival or cumulative hazard from its
  margins); an adapter offering them implements ``Adapter.training_times`` (and reads ``self.times``);
* **errors and warnings** a plugin raises or catches: :class:`PdpxError`, :class:`PdpxTypeError`,
  :class:`NotFittedError`, :class:`ModelOutputError`, :class:`ModelPredictError`,
  :class:`PdpxWarning`, :class:`NonFiniteWarning`, :class:`TreeMismatchWarning`.

These are the objects pdpx itself uses, so a plugin's adapter and pdpx's own are one kind. The
modules they are defined in (``pdpx.core.*``, ``pdpx.plugins.*``, ``pdpx.adapters.*``) are pdpx's
implementation: importing from them still works, but they may change without notice; this module's
names do not (``tests/test_extend.py`` keeps it and ``docs/plugins.md`` in step).

This module sits on the top floor beside :mod:`pdpx.api` (``docs/architecture.md``): it imports from
the core, the methods and the adapters, and nothing of pdpx imports it.
"""

from .adapters.sklearn_transforms import ColumnMap, declare_columnwise, declare_elementwise, register_rule
from .core.adapter import TIME_RESPONSES, Adapter, as_2d
from .core.booster import BoosterAdapter, Extracted, Unavailable, library_classes, self_check
from .core.curves import CenteredCurves, CurveMeans, CurveMoments, CurvePart, CurveReducer, reduce_ice
from .core.errors import (
    ModelOutputError,
    ModelPredictError,
    NonFiniteWarning,
    NotFittedError,
    PdpxError,
    PdpxTypeError,
    PdpxWarning,
    TreeMismatchWarning,
)
from .core.hookspecs import hookimpl
from .core.ir import (
    NAN_AS_ZERO,
    NAN_MISSING,
    ZERO_OR_NAN_MISSING,
    TreeEnsemble,
    TreeModel,
    fingerprint,
    model_cache,
    numeric_encoder,
    numeric_values,
)
from .core.method import Batch, Method, MethodOptions, MethodResult, Request, option
from .core.plugins import adapt, get_methods, get_plugin_manager, plugin_manager, reset_plugin_manager
from .core.times import aft_curves, step_columns, time_names
from .plugins.brute import grid_points

__all__ = [
    # hooks and registration
    "hookimpl",
    "get_plugin_manager",
    "plugin_manager",
    "reset_plugin_manager",
    "adapt",
    "get_methods",
    # adapters
    "Adapter",
    "as_2d",
    "BoosterAdapter",
    "Extracted",
    "Unavailable",
    "self_check",
    "library_classes",
    # the tree representation
    "TreeEnsemble",
    "TreeModel",
    "NAN_MISSING",
    "NAN_AS_ZERO",
    "ZERO_OR_NAN_MISSING",
    "model_cache",
    "numeric_encoder",
    "numeric_values",
    "fingerprint",
    # methods
    "Method",
    "Batch",
    "MethodResult",
    "Request",
    "MethodOptions",
    "option",
    "grid_points",
    # curve reducers
    "CurveReducer",
    "CurvePart",
    "CurveMeans",
    "CurveMoments",
    "CenteredCurves",
    "reduce_ice",
    # column rules of pipelines
    "ColumnMap",
    "register_rule",
    "declare_columnwise",
    "declare_elementwise",
    # errors and warnings
    "PdpxError",
    "PdpxTypeError",
    "NotFittedError",
    "ModelOutputError",
    "ModelPredictError",
    "PdpxWarning",
    "NonFiniteWarning",
    "TreeMismatchWarning",
    # survival models
    "TIME_RESPONSES",
    "time_names",
    "step_columns",
    "aft_curves",
]
