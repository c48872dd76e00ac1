"""The ground floor of pdpx: what every other floor builds on (``docs/architecture.md``).

Hooks and the plugin manager (:mod:`.hookspecs`, :mod:`.plugins`), the adapter and method
interfaces (:mod:`.adapter`, :mod:`.booster`, :mod:`.method`), the tree representation
(:mod:`.ir`, :mod:`.treesum`), the options of a call (:mod:`.options`), the session that
validates a call and computes each feature set (:mod:`.session`, :mod:`.compute`,
:mod:`.stacked`), grids (:mod:`.grid`, :mod:`.missing`), results and their drawing entry
point (:mod:`.result`, :mod:`.drawing`), the support diagnostics and the extrapolation check
(:mod:`.support`, :mod:`.extrapolation`), the data sources (:mod:`.data`, :mod:`.cluster`),
the bootstrap, settings, errors, and the old names of the public API (:mod:`.deprecation`).

The core imports nothing above it and names no model library; the built-in plugins
(adapters, methods, the figure backend) are registered by module name at run time.
"""
