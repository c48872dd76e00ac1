"""The built-in methods, registered through the public ``pdpx_register_methods`` hook.

* :mod:`.brute`: set the feature, predict, average (any model); :mod:`.stacking` checks, once per model
  whose prediction goes through the user's own code, that grid points may be stacked into one call;
* :mod:`.exact`: brute's answer from the tree structure;
* :mod:`.recursion`: Friedman's weighted tree traversal.

:mod:`.trees` is the numba machinery behind ``exact`` and ``recursion``; it
registers nothing.

The plugins floor (``docs/architecture.md``): methods import the core only, never an
adapter, a measure or a figure.
"""

#: The plugin modules of this package, registered by default by
#: :func:`pdpx.core.plugins.get_plugin_manager`.
BUILTINS = (
    "pdpx.plugins.brute",
    "pdpx.plugins.exact",
    "pdpx.plugins.recursion",
)
