"""The plugin manager: hook specs, built-in plugins, entry points of group ``pdpx``."""

from __future__ import annotations

import importlib
import os
import sys
import weakref

import pluggy

from . import hookspecs
from .errors import PdpxError, warn

#: Packages whose ``BUILTINS`` list the built-in plugin modules (adapters, methods, the figure
#: backend). They are registered through the same hooks third parties use; their modules
#: import their model library (or plotnine) only when they meet a model of it (or draw).
BUILTIN_PACKAGES = ("pdpx.adapters", "pdpx.plugins", "pdpx.outputs")
#: Method hooks pdpx called before the curve reducers (:mod:`.curves`) and no longer calls
RETIRED_HOOKS = ("curve_means", "curve_moments", "curve_rows")


def builtin_plugins() -> list[str]:
    """Names of the built-in plugin modules, in registration order."""
    return [name for pkg in BUILTIN_PACKAGES for name in importlib.import_module(pkg).BUILTINS]


_pm: pluggy.PluginManager | None = None


def get_plugin_manager(*, load_entry_points: bool | None = None) -> pluggy.PluginManager:
    """Build a fresh plugin manager: specs, built-in plugins, then installed plugins.

    Parameters
    ----------
    load_entry_points : bool, optional
        Load plugins declared by installed distributions under entry-point group
        ``pdpx``. Default: yes, unless the environment variable
        ``PDPX_DISABLE_PLUGINS=1`` is set (the test suite sets it).
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in builtin_plugins():
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a built-in not written yet is fine; a broken import is not
            if exc.name == name:
                continue
            raise
        pm.register(module, name=name)
    if load_entry_points is None:
        load_entry_points = os.environ.get("PDPX_DISABLE_PLUGINS", "") not in ("1", "true", "yes")
    if load_entry_points:
        pm.load_setuptools_entrypoints(hookspecs.PROJECT)
    if os.environ.get("PDPX_TRACE_HOOKS"):
        pm.trace.root.setwriter(sys.stderr.write)
        pm.enable_tracing()
    return pm


def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager (built on first use)."""
    global _pm
    if _pm is None:
        _pm = get_plugin_manager()
    return _pm


def reset_plugin_manager() -> None:
    """Forget the process-wide manager so the next call rebuilds it (after installing a plugin)."""
    global _pm
    _pm = None


#: Per plugin manager: the plugins registered when its methods were last asked for (ids, the plugins), and the methods.
_methods_seen: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def get_methods(pm: pluggy.PluginManager | None = None) -> dict:
    """All registered methods by name. Two plugins registering the same name is an error.

    Asked once per set of registered plugins (every call of a public function needs them).
    """
    pm = pm or plugin_manager()
    plugins = list(pm.get_plugins())
    ids = frozenset(map(id, plugins))
    seen = _methods_seen.get(pm)
    if seen is not None and seen[0] == ids:
        return dict(seen[2])
    methods = _ask_methods(pm)
    _methods_seen[pm] = (ids, plugins, methods)  # the plugins held: their ids stay theirs
    return dict(methods)


def _ask_methods(pm: pluggy.PluginManager) -> dict:
    methods: dict = {}

    def register(method):
        from .method import Method

        if not isinstance(method, Method) or not method.name:
            raise PdpxError(f"pdpx_register_methods: {method!r} is not a named pdpx.core.method.Method")
        if method.name in methods and type(methods[method.name]) is not type(method):
            raise PdpxError(
                f"two plugins register a method named {method.name!r}: "
                f"{type(methods[method.name]).__module__} and {type(method).__module__}"
            )
        retired = [h for h in RETIRED_HOOKS if callable(getattr(method, h, None))]
        if retired:  # the numbers stay right (the session computes the curves), only slower: said, not refused
            warn(DeprecationWarning(
                f"method {method.name!r} defines {', '.join(retired)}, which pdpx no longer calls: the fast "
                "measures' one pass is now Method.reduce_curves(adapter, requests, reducer) (docs/plugins.md)"))
        methods[method.name] = method

    pm.hook.pdpx_register_methods(register=register)
    return methods


def adapt(model, pm: pluggy.PluginManager | None = None):
    """The adapter of the first plugin that recognises ``model``, guarded: its trees answer only where every
    step of its prediction path is the library's own code (:func:`pdpx.core.trust.guard`)."""
    from .adapter import Adapter
    from .trust import guard

    pm = pm or plugin_manager()
    if isinstance(model, Adapter):
        return guard(model)
    adapter = pm.hook.pdpx_adapt_model(model=model)
    if adapter is None:
        raise PdpxError(
            f"pdpx does not know how to use a {type(model).__module__}.{type(model).__name__}: "
            "it has no predict method. Pass a fitted model with predict / predict_proba, "
            "a plain function f(X) -> predictions, or install a pdpx plugin for its library."
        )
    return guard(adapter)


from .oldpaths import watch as _watch  # noqa: E402 - last: the names above moved to pdpx.extend (core/oldpaths.py)

_watch(__name__)
