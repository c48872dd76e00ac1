"""scikit-learn's FeatureUnion inside a Pipeline, followed column by column.

A FeatureUnion hands every input column to each of its transformers and places their outputs
side by side (each multiplied by its ``transformer_weights`` entry). When each transformer is
column-wise, so is the union: an output column comes from the input column its transformer's
rule says, through that transformer's treatments (a negative weight reverses a monotone map).
:mod:`pdpx.adapters.sklearn_pipeline` calls :func:`through` for a union step.
"""

from __future__ import annotations

from typing import Callable


class UnionRefused(Exception):
    """A FeatureUnion pdpx does not follow (the message says why)."""


def is_union(step) -> bool:
    """True for scikit-learn's own FeatureUnion (a subclass may transform otherwise: not followed)."""
    k = type(step)
    return f"{k.__module__}.{k.__name__}" == "sklearn.pipeline.FeatureUnion"


def is_union_like(step) -> bool:
    """True for FeatureUnion and its subclasses (the latter are refused by :func:`through`)."""
    return any(f"{k.__module__}.{k.__name__}" == "sklearn.pipeline.FeatureUnion" for k in type(step).__mro__)


def transformers(step) -> list:
    """The transformers a FeatureUnion's ``transform`` calls (``"drop"`` skipped, ``"passthrough"`` kept)."""
    return [t for _, t in step.transformer_list if not (isinstance(t, str) and t == "drop")]


def through(step, cur: list, path: list, follow: Callable) -> list:
    """The traced columns after a FeatureUnion: ``cur`` (one (original column, treatments) per input column)
    through each transformer (``follow(transformer, cur, path)``), concatenated in the union's order."""
    if not is_union(step):
        raise UnionRefused(f"{type(step).__name__} is a subclass of FeatureUnion; pdpx follows scikit-learn's own "
                           "FeatureUnion only")
    weights = step.transformer_weights or {}
    out: list = []
    for name, trans in step.transformer_list:
        if isinstance(trans, str) and trans == "drop":
            continue
        if trans is None:
            raise UnionRefused(f"transformer {name!r} is None (FeatureUnion drops a transformer given as 'drop')")
        got = cur if isinstance(trans, str) and trans == "passthrough" else follow(trans, list(cur), path + [name])
        w = weights.get(name)
        if w is not None and w < 0:  # the outputs are multiplied by a negative weight: order reversed
            got = [(j, p + [("decreasing", None)]) for j, p in got]
        out.extend(got)
    return out
