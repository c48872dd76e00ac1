"""The grids of one call's features, built once from the full data and shared.

:class:`Grids` builds each feature's grid on first request (:mod:`pdpx.core.grid`;
``grid="thresholds"``: :mod:`pdpx.core.steps`), appends the missing-value point where
``include_missing`` puts it (:mod:`pdpx.core.missing`; whether the model accepts a missing
value is asked once per feature), and keeps the notes and step comparisons that go with
each grid. The sessions of ``by=`` groups take the full data's :class:`Grids`, so every
group is computed on the same grid, exactly.
"""

from __future__ import annotations

import numpy as np

from . import missing, steps
from .data import has_missing
from .errors import PdpxError
from .grid import feature_grid
from .inputs import Inputs
from .threads import in_threads, thread_count


class Grids:
    """Each feature's grid for the rows of ``inputs`` (see the module docstring).

    Attributes
    ----------
    steps : dict
        ``grid="thresholds"``: feature position -> its trees' comparison (``"<="`` or ``"<"``).
    notes : dict
        Feature position -> notes on its grid (e.g. custom values rounded).
    """

    def __init__(self, inputs: Inputs):
        self.inputs = inputs
        self.values: dict[int, np.ndarray] = {}
        self.steps: dict[int, str] = {}
        self.notes: dict[int, list[str]] = {}
        self._accepts_missing: dict[int, str | None] = {}
        self._raw: dict[int, tuple] = {}  # prefetch's (grid, notes) or (None, the error), taken by grid_for

    def prefetch(self, js) -> None:
        """Build the percentile grids of the columns ``js`` (those not built yet) on every core (numpy's
        partition leaves the GIL free), for :meth:`grid_for` to take, in its order, with its notes and errors."""
        inp, options = self.inputs, self.inputs.options
        if not inp.data.here or options.grid == "thresholds":  # a source elsewhere may build grids where its rows are
            return
        todo = [j for j in js if j not in self.values and j not in self._raw and j not in inp.custom_values]
        if len(todo) < 2:
            return

        def build(j):
            notes: list = []
            try:
                return j, (feature_grid(inp.data.column(j), categorical=inp.categorical[j],
                                        grid_resolution=options.grid_resolution, percentiles=options.percentiles,
                                        notes=notes), notes)
            except PdpxError as err:
                return j, (None, err)

        threads = min(thread_count(None), len(todo))
        for part in in_threads(lambda js_: [build(j) for j in js_], [todo[i::threads] for i in range(threads)]):
            self._raw.update(part)

    def grid_for(self, j: int) -> np.ndarray:
        """Feature ``j``'s grid (built on first request)."""
        if j not in self.values:
            inp, options = self.inputs, self.inputs.options
            column = inp.data.column(j)
            if options.grid == "thresholds" and not inp.categorical[j] and j not in inp.custom_values:
                grid, self.steps[j], self.notes[j] = steps.feature_steps(
                    inp.adapter, inp.response, j, inp.names[j], column)
            elif j in self._raw:  # built by prefetch
                grid, got = self._raw.pop(j)
                if grid is None:
                    raise got
                self.notes.setdefault(j, []).extend(got)
            else:
                # a narrow float column's grid: the values it holds (notes: custom rounded); a Spark X builds the
                # grid of a column too large to bring here from Spark's aggregations (SparkData.feature_grid)
                grid = inp.data.feature_grid(
                    column, categorical=inp.categorical[j], grid_resolution=options.grid_resolution,
                    percentiles=options.percentiles, custom=inp.custom_values.get(j),
                    notes=self.notes.setdefault(j, []),
                )
            inp.adapter.check_grid(inp.names[j], grid)
            if self.missing_point(j):
                grid = missing.with_missing(grid)
            self.values[j] = grid
        return self.values[j]

    def missing_point(self, j: int) -> bool:
        """Whether feature ``j``'s grid ends with the missing-value point (``include_missing``)."""
        inp = self.inputs
        include = inp.options.include_missing
        if include is False or inp.categorical[j]:
            if include is True and inp.categorical[j]:
                raise PdpxError(
                    f"include_missing=True: feature {inp.names[j]!r} is categorical; the missing-value grid "
                    "point is for numeric features (a categorical feature's missing values are a level of their own "
                    "only if you make them one, e.g. X[col].cat.add_categories('missing').fillna('missing'))"
                )
            return False
        if include == "auto" and not has_missing(inp.data.column(j)):
            return False
        if j not in self._accepts_missing:
            self._accepts_missing[j] = missing.refusal(inp.adapter, inp.X, j, inp.response)
        reason = self._accepts_missing[j]
        if reason is not None and include is True:
            raise PdpxError(f"include_missing=True: the model does not accept a missing value of feature "
                            f"{inp.names[j]!r}: {reason}. Use include_missing='auto' or False")
        return reason is None

    def notes_of(self, features) -> list[str]:
        """The notes on the grids of ``features``."""
        return [n for j in features for n in self.notes.get(j, [])]

    def steps_of(self, features) -> dict[str, str]:
        """``grid="thresholds"``: feature name -> its trees' comparison, for those of ``features`` on steps."""
        return {self.inputs.names[j]: self.steps[j] for j in features if j in self.steps}
