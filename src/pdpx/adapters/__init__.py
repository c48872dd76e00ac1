"""Adapters: how pdpx talks to each model library.

Per library, ``<lib>.py`` holds the adapter (predict, facts about the model) and
the plugin hook that recognises its models; ``<lib>_trees.py`` reads its trees
into the common representation (:mod:`pdpx.core.ir`) for ``exact`` and
``recursion``, without importing the library.

=====================  ===========================================  ==========================
library                plugin (adapter + ``pdpx_adapt_model``)      tree reader
=====================  ===========================================  ==========================
scikit-learn           :mod:`.sklearn`                              :mod:`.sklearn_trees`
scikit-survival        :mod:`.sksurv` (asked before scikit-learn)   :mod:`.sksurv_trees`
XGBoost                :mod:`.xgboost`                              :mod:`.xgboost_trees`
                                                                    (+ :mod:`.ubjson`)
LightGBM               :mod:`.lightgbm`                             :mod:`.lightgbm_trees`
R randomForest (rpy2)  :mod:`.rpy2` (adapter in :mod:`.randomforest`) :mod:`.randomforest_trees`
R ranger (R package)   (adapter in :mod:`.ranger`, built by the R bridge) :mod:`.ranger_trees`
R gbm (R package)      (adapter in :mod:`.gbm`, built by the R bridge)    :mod:`.gbm_trees`
R export (.pdpx.json)  :mod:`.rexport` (read by the command line)   the three R readers above
Spark ML (pyspark.ml)  :mod:`.sparkml` (pipelines:                 :mod:`.sparkml_trees`
                       :mod:`.sparkml_pipeline`; brute in Spark:   (+ :mod:`.sparkml_saved`)
                       :mod:`.sparkml_brute`)
anything with predict  :mod:`.generic` (asked last)                 --
=====================  ===========================================  ==========================

scikit-learn models made of models go through :mod:`.sklearn_compose`: Pipelines
(:mod:`.sklearn_pipeline`, its fingerprint of every step's parameters in :mod:`.sklearn_state`,
one column rule per transformer in :mod:`.sklearn_transforms`,
the trees rewritten onto the original columns by :mod:`.column_trees`; a column made into
several read as sets of its values by :mod:`.column_values`; FeatureUnion by :mod:`.sklearn_union`) and ensembles
linear in their members (:mod:`.sklearn_ensembles`); the in-bag counts of bagged forests, for the jackknife and
out-of-bag PD, are :mod:`.sklearn_inbag` (R forests fitted with ``keep.inbag = TRUE``: :mod:`.rinbag`).
The XGBoost and LightGBM adapters (and
the CatBoost plugin's) share :class:`pdpx.core.booster.BoosterAdapter` (public as ``pdpx.extend.BoosterAdapter``).

The plugins floor (``docs/architecture.md``): adapters import the core only, never a method,
a measure or a figure.

Helpers that register nothing: :mod:`.randomforest` (the randomForest adapter the R bridge and
the rpy2 plugin build) and :mod:`.rfunction` (calling R: the lock, and any R
model as a predict function; what R sends is decoded by :mod:`pdpx.r_wire`), :mod:`.ranger` and :mod:`.gbm` (built by
the R bridge) and :mod:`.rlevels` (the factor-level encoding ranger and gbm share).
"""

#: The plugin modules of this package, registered by default (in this order) by
#: :func:`pdpx.core.plugins.get_plugin_manager`.
BUILTINS = (
    "pdpx.adapters.sksurv",
    "pdpx.adapters.sklearn",
    "pdpx.adapters.xgboost",
    "pdpx.adapters.lightgbm",
    "pdpx.adapters.rpy2",
    "pdpx.adapters.sparkml",
    "pdpx.adapters.generic",
)
