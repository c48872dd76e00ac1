"""What one partition's task runs, for Dask and Spark alike: the method on the partition's rows, their sums.

:func:`partition_sums` runs one method on one partition's rows (columns in the model's order) with an adapter
made where the task runs; the partitions' weighted sums then add up to the average over all rows.
:class:`Rebuilt` carries a view of the model (``interval='members'``: each member's trees) to the tasks, which
make it again over the model's adapter there (:func:`adapter_of`). :func:`ice_here` is the other half of a source
whose rows are elsewhere: the ICE curves of some rows, brought here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..core.adapter import Adapter
from ..core.method import MethodResult, Request


def partition_sums(adapter: Adapter, part: pd.DataFrame, weights, request: Request, method_name: str):
    """One method on one partition's rows (columns in the model's order), for Dask and Spark tasks: (its
    average curves, its weight, ICE or None)."""
    from ..core.plugins import get_methods

    # a fresh adapter learns the columns' encodings (category codes) from the rows it will see, as the
    # head's adapter did: without it a category column's grid labels reach the encoder as "not numeric"
    part = adapter.validate_columns(part)
    req = replace(request, X=part, sample_weight=weights)  # one partition: the method alone, no plan
    out = get_methods()[method_name].compute(adapter, req)
    W = float(len(part)) if weights is None else float(np.sum(weights))
    return out.average, W, out.individual


def ice_here(rows, method, adapter: Adapter, req: Request, full: MethodResult, positions) -> MethodResult:
    """The average ``full`` (over every row, where the rows are) and the ICE curves of the rows of ``rows`` at
    ``positions``, brought here (``rows.take``) and computed here: what a pandas X gives for the same rows."""
    local, w = rows.take(positions)
    sub = replace(req, X=local, kind="individual", sample_weight=w)
    if w is not None and w.sum() <= 0:  # as for a pandas X: the curves do not depend on the weights
        sub = replace(sub, sample_weight=None)
    part = method.compute(adapter, sub)
    note = f"ICE curves of {len(positions):,} rows, brought here from {rows.label} by their positions"
    return MethodResult(average=full.average, individual=part.individual, notes=list(full.notes) + [note])


class Rebuilt:
    """A view of the model (an adapter over the model's own: ``interval='members'`` reads each member's trees) as
    a task receives it (Spark's, Dask's): the model (or its stand-in) and ``build(adapter, *args)``, the view made
    again over the model's adapter there (adapters do not travel). The view is built once per worker (Spark keeps
    the model by its digest, Dask scatters it once)."""

    def __init__(self, model, build, args: tuple):
        self.model, self.build, self.args = model, build, tuple(args)
        self.view = None

    def __reduce__(self):
        return (Rebuilt, (self.model, self.build, self.args))

    def adapter(self):
        """The view, over the model's adapter made here."""
        if self.view is None:
            from ..core.plugins import adapt

            self.view = self.build(adapt(self.model), *self.args)
        return self.view


def adapter_of(model) -> Adapter:
    """The adapter a task uses for ``model``: the view a :class:`Rebuilt` makes again, or the model's own."""
    if isinstance(model, Rebuilt):
        return model.adapter()
    from ..core.plugins import adapt

    return adapt(model)
