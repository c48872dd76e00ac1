"""pdpx-catboost: CatBoost models in pdpx, with ``exact`` partial dependence from their trees.

Installed, it registers itself with pdpx through the entry point ``pdpx: catboost``
(:mod:`pdpx_catboost.plugin`); nothing needs importing. It uses pdpx's public plugin API only.
"""

__version__ = "0.1.0"
