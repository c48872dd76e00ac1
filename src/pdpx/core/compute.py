"""Partial dependence of one model, for one feature set or several: what the public functions build on.

:func:`compute` and :func:`compute_many` take a :class:`~pdpx.core.options.PDOptions`
(checked once, by whoever built it), build a :class:`~pdpx.core.session.Session` and
compute one result per feature set. The public functions (:mod:`pdpx.api`) and the
measures of :mod:`pdpx.explain` call them.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable

from .adapter import trees_read_once
from .budget import BudgetError, check_sets
from .errors import PdpxError
from .options import PDOptions
from .result import PartialDependenceCollection, PartialDependenceResult
from .session import Session
from .times import in_blocks, needs_blocks


def compute(model: Any, X, features, options: PDOptions) -> PartialDependenceResult:
    """Partial dependence of ``model`` on one feature set (``features`` as :func:`pdpx.partial_dependence` takes it)."""
    session = Session(model, X, options)
    features = session.resolve_features(features)
    blocked = in_blocks(session, features)  # a survival model's times, a block at a time when its trees are large
    return blocked if blocked is not None else session.compute(features)


def compute_many(model: Any, X, feature_sets: Iterable | None, options: PDOptions) -> PartialDependenceCollection:
    """Partial dependence of ``model`` on each feature set (None: every column with a grid, 1-way)."""
    session = Session(model, X, options)
    skipped = {}
    if feature_sets is None:
        sets = []
        for j, name in enumerate(session.names):
            try:
                check_sets(session, [[j]])  # each column's estimate before its grid is built
                session.grid_for(j)
            except BudgetError:
                raise  # refused, not skipped
            except PdpxError as exc:
                skipped[(name,)] = str(exc)
                continue
            sets.append([j])
        if not sets:
            raise PdpxError("no column of X has a grid (all are constant or missing): " + "; ".join(skipped.values()))
    else:
        if isinstance(feature_sets, (str, numbers.Integral)):
            raise PdpxError(
                "feature_sets must be a list of feature sets, e.g. ['age', ('age', 'fare')]; "
                "for a single feature set use pdpx.partial_dependence"
            )
        sets = [session.resolve_features(f) for f in feature_sets]
        if not sets:
            raise PdpxError("feature_sets is empty; pass at least one feature, or None for every column")
    check_sets(session, sets)  # the results are returned together: their sum, before any grid is built
    session.plan(sets)  # methods may share work among the sets (exact's pattern counts)
    if needs_blocks(session):  # a survival model's times a block at a time: each block's trees read anew
        results = [in_blocks(session, s) for s in sets]
    else:
        with trees_read_once(session.adapter):  # one lookup of the trees for every feature set
            results = [session.compute(s) for s in sets]
    return PartialDependenceCollection(results, skipped=skipped)
