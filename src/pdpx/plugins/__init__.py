"""The built-in methods, registered through the public ``pdpx_register_methods`` hook.

* :mod:`.brute`: set the feature, predict, average (any model), stacking grid points into one call where
  :mod:`pdpx.core.stacking` finds the model's predictions independent of the other rows;
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
