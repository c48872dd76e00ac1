"""The measures floor: the questions users ask after a PD curve (which features matter, which interact, what ALE says).

* :mod:`.pd_importance`: :func:`importance` (PD / ICE based variable importance; its :class:`ImportanceResult`);
* :mod:`.interaction`: :func:`h_statistic` (Friedman and Popescu's H), on the ``exact``
  engine for tree models (:mod:`.evaluate` evaluates PD functions at the rows of X; :mod:`.interaction_spark`:
  the sums over rows held elsewhere, a Spark DataFrame or a Dask collection, partition by partition, a curve
  reducer);
* :mod:`.accumulated`: :func:`ale` (accumulated local effects);
* :mod:`.derivative`: :func:`derivative_ice` (derivative ICE, ``kind="derivative"``);
* :mod:`.compare`: :func:`compare_methods` (``exact`` against ``recursion``);
* :mod:`.ice_spread`: :func:`heterogeneity` (how far the centered ICE curves spread);
* :mod:`.subgroups`: :func:`regions` (splits of the rows that make a feature's ICE curves agree; several features:
  :class:`RegionsSet`);
* :mod:`.split_search`: the regions' split search (candidates coded once, the best split of a node);
* :mod:`.split_sums`: the regions' split statistics per candidate code, in one compiled pass;
* :mod:`.explained`: :func:`explained_variance` (the share of the model the curves keep) and 3-way H;
* :mod:`.survival`: :func:`survival_profile` (a survival model's PD over time, the time-varying share);
* :mod:`.learner`: learner uncertainty over refits (``interval="learner"`` on :class:`Refits`, :func:`cross_fitted`);
* :mod:`.h_null`: :func:`h_test` (Friedman and Popescu's null distributions of H, from refits on the additive part).

The fast measures (H's overall statistic, heterogeneity, regions) are curve reducers run by
:func:`pdpx.core.curves.reduce_curves` (a method's fused walk, ICE chunks or per partition): each module holds
its reducer's settings and its presentation (:mod:`.interaction_spark` the one reducer of its own).

This floor sits on the core (it computes through :mod:`pdpx.core.compute` and
:class:`~pdpx.core.session.Session`) and below the figures: its results draw themselves
through the figure backend (:class:`pdpx.core.drawing.Drawable`), never by importing
:mod:`pdpx.outputs`.
"""

from __future__ import annotations

from importlib import import_module

#: public name -> the module that defines it
_WHERE = {
    "importance": ".pd_importance",
    "ImportanceResult": ".pd_importance",
    "h_statistic": ".interaction",
    "HStatistic": ".interaction",
    "ale": ".accumulated",
    "ALEResult": ".accumulated",
    "derivative_ice": ".derivative",
    "DerivativeResult": ".derivative",
    "compare_methods": ".compare",
    "MethodComparison": ".compare",
    "heterogeneity": ".ice_spread",
    "HeterogeneityResult": ".ice_spread",
    "regions": ".subgroups",
    "RegionsResult": ".subgroups",
    "RegionsSet": ".subgroups",
    "explained_variance": ".explained",
    "ExplainedVariance": ".explained",
    "survival_profile": ".survival",
    "SurvivalProfile": ".survival",
    "cross_fitted": ".learner",
    "Refits": ".learner",
    "LearnerResult": ".learner",
    "h_test": ".h_null",
    "HTestResult": ".h_null",
}

__all__ = sorted(_WHERE)


def resolve(name: str):
    """The public object ``name`` (a function or class), imported on first use.

    ``pdpx.<name>`` goes through here. No submodule is named like a public function
    (``pd_importance.py`` holds ``importance``, ``accumulated.py`` holds ``ale``): an imported
    submodule would shadow the lazy attribute of the same name.
    """
    return getattr(import_module(_WHERE[name], __name__), name)


def __getattr__(name):  # lazy: each measure imports what it needs
    if name in _WHERE:
        return resolve(name)
    raise AttributeError(f"module 'pdpx.explain' has no attribute {name!r}")
