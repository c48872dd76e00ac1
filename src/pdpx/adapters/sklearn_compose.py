"""scikit-learn models made of other models: which reader handles each.

Pipelines (:mod:`.sklearn_pipeline`) and ensembles linear in their members
(:mod:`.sklearn_ensembles`) give ``exact`` their trees through these two functions;
:class:`pdpx.adapters.sklearn.SklearnAdapter` asks :func:`handles` first.
"""

from __future__ import annotations

from . import sklearn_ensembles, sklearn_pipeline


def handles(model) -> bool:
    """True for Pipelines and the ensembles :mod:`.sklearn_ensembles` reads."""
    return sklearn_pipeline.is_pipeline(model) or sklearn_ensembles.kind(model) is not None


def tree_model(adapter, response: str):
    """The composite model's trees (a TreeModel or TreeSum), or None."""
    if sklearn_pipeline.is_pipeline(adapter.model):
        return sklearn_pipeline.tree_model(adapter, response)
    return sklearn_ensembles.tree_model(adapter, response)


def unavailable_reason(adapter, response: str) -> str:
    """Why :func:`tree_model` returned None."""
    if sklearn_pipeline.is_pipeline(adapter.model):
        return sklearn_pipeline.unavailable_reason(adapter, response)
    return sklearn_ensembles.unavailable_reason(adapter, response)
