"""scikit-learn ensembles whose prediction is linear in their members' predictions."""

from __future__ import annotations


def kind(model) -> str | None:
    """Which ensemble reader handles ``model``, or None."""
    return None


def tree_model(adapter, response):
    """The ensemble as a TreeSum of its members, or None."""
    return None


def unavailable_reason(adapter, response) -> str:
    """Why :func:`tree_model` returned None."""
    return f"{type(adapter.model).__name__} is not an ensemble pdpx reads"
