"""Hook specifications: the whole plugin interface of pdpx.

Every built-in adapter and method is registered through these same hooks. A
third-party package declares an entry point in group ``pdpx`` that points to a
module (or object) implementing one or more of them. ``docs/plugins.md``
documents each hook; a test fails when one is undocumented.
"""

from __future__ import annotations

import pluggy

PROJECT = "pdpx"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec(firstresult=True)
def pdpx_adapt_model(model):
    """Return an :class:`~pdpx.core.adapter.Adapter` for ``model``, or None if this plugin does not recognise it."""


@hookspec
def pdpx_register_methods(register):
    """Register methods that compute partial dependence.

    Call ``register(method)`` with each :class:`~pdpx.core.method.Method`.
    """


@hookspec(firstresult=True)
def pdpx_figure_backend():
    """Return the figure backend, an object with ``draw(result, **options)`` (an undrawn figure) and
    ``save(result, path, *, width, height, dpi, **options)`` (the path written); None to leave it to others.

    ``res.plot()`` and ``res.save()`` of every result go through it (:mod:`pdpx.core.drawing`);
    pdpx's own is :mod:`pdpx.outputs.draw` (plotnine).
    """


from .oldpaths import watch as _watch  # noqa: E402 - last: the names above moved to pdpx.extend (core/oldpaths.py)

_watch(__name__)
