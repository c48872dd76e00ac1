"""The whole curve (``grid="thresholds"``): one grid point on every step of a tree model's partial dependence.

The partial dependence of a tree model on a numeric feature is a step function:
it changes only where some split on the feature sends values another way. Its
steps are the maximal intervals of values that every split on the feature
routes alike. :func:`threshold_grid` returns one value inside each step, from the
model alone (no data), so a partial dependence on that grid *is* the exact curve:

* a model comparing ``x <= t`` (most libraries): each step but the last ends at
  a threshold, and the threshold itself (as the model compares it) is the point;
  the last step is represented by the next value above the largest threshold;
* a model comparing ``x < t``: each step but the first starts at a threshold, and
  the threshold is the point; the first step is represented by the value just
  below the smallest threshold.

"As the model compares it": a model that rounds its inputs to float32 compares
float32 values with its thresholds, so the points are float32 values (for
``<=``, the largest float32 that still goes left). Likewise a column that holds
narrower floats than float64 (float32, pandas ``Float32``, float16) gives the model
only values of its type, so the points are values of that type, chosen on each side
of every threshold as the model compares them (the largest such value that still
goes left, for ``<=``); a step that holds no value of the type is not on the curve. Zero is its own step where a
split treats zero as missing (a library's zero-as-missing mode): its point is 0
itself, and it stands for every value the model reads as zero (``|x| <= 1e-35``),
the one exception to the rule above. The missing-value
point is not part of this grid (``include_missing`` adds it).

Steps are found by routing candidate values (each threshold and its neighbours
one float either side) through every split on the feature with the model's own
routing rule (:meth:`pdpx.core.ir.TreeEnsemble.goes_left_many`), so ``<`` vs
``<=``, float32 rounding and NaN modes are those the model uses.

:func:`feature_steps` is what a :class:`~pdpx.core.session.Session` calls for
``grid="thresholds"``: it asks the adapter for the model's trees
(``tree_model(response)``), builds the grid of one feature and says, in notes,
what the user should know about it (a feature no tree splits on, points outside
the data). ``docs/getting-started.md`` ("The whole curve") documents the option.
"""

from __future__ import annotations

import numpy as np

from .errors import PdpxError
from .grid import held_dtype
from .ir import ZERO_OR_NAN_MISSING, TreeModel
from .treesum import TreeSum

#: Cells of the routing signature (splits x candidate values) held at once: thousands of thresholds stay small.
SIGNATURE_CELLS = 1 << 22


def threshold_grid(tm, position: int, dtype=None) -> np.ndarray:
    """One value per step of the partial dependence of ``tm`` on the feature at column ``position``.

    Parameters
    ----------
    tm : TreeModel or TreeSum
        What an adapter's ``tree_model(response)`` returns.
    position : int
        The feature's position among the model's columns (as ``Request.features``).
    dtype : numpy float dtype, optional
        The type the column holds its values in when narrower than float64
        (:func:`pdpx.core.grid.held_dtype`): every point is then a value of that type.

    Returns
    -------
    ndarray of shape (n_steps,), float64, increasing
        Empty when no tree splits on the feature (its partial dependence is flat).

    Raises
    ------
    PdpxError
        When the model splits on the feature by category sets: its categories
        are then the exact grid already.
    """
    members = list(_members(tm, int(position)))
    if not members:
        return np.empty(0)
    cand = []
    for ens, j in members:
        nodes = np.flatnonzero((ens.left >= 0) & (ens.feature == j))
        if np.any(ens.cat_offset[nodes] >= 0):
            raise PdpxError(f"the model splits on feature {position} by category sets; its grid of categories is "
                            "already the exact curve: use the default grid for it")
        cand.append(_candidates(ens, nodes, dtype))
    values = np.unique(np.concatenate(cand)) if cand else np.empty(0)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return values
    change = np.zeros(values.size - 1, dtype=bool)  # a new step starts at value i + 1
    seen = False
    for ens, j in members:
        nodes = np.flatnonzero((ens.left >= 0) & (ens.feature == j))
        if nodes.size == 0:
            continue
        # nodes routing alike (same threshold and rules) need one row of the signature
        keys = np.stack([ens.threshold[nodes], ens.nan_mode[nodes].astype(np.float64),
                         ens.missing_left[nodes].astype(np.float64)], axis=1)
        _, first = np.unique(keys, axis=0, return_index=True)
        nodes = nodes[np.sort(first)]
        per = max(1, SIGNATURE_CELLS // max(values.size, 1))  # rows of the signature at a time: bounded memory
        for start in range(0, nodes.size, per):
            S = ens.goes_left_many(nodes[start:start + per], values)
            change |= np.any(S[:, 1:] != S[:, :-1], axis=0)
        seen = True
    if not seen:
        return np.empty(0)
    upper_end = members[0][0].comparison == "<="
    if upper_end:  # the last value of each run of equal signatures
        keep = np.append(change, True)
    else:  # the first value of each run
        keep = np.insert(change, 0, True)
    return values[keep]


def _members(tm, position: int):
    """(ensemble, column in its own input) of every tree model in ``tm`` reading column ``position``."""
    if isinstance(tm, TreeSum):
        for term in tm.terms:
            cols = term.columns
            if cols is None:
                yield from _members(term.model, position)
            elif position in cols:
                yield from _members(term.model, cols.index(position))
        return
    if not isinstance(tm, TreeModel):
        raise PdpxError(f"a threshold grid needs a TreeModel or TreeSum, got {type(tm).__name__}")
    if 0 <= position < tm.ensemble.n_features:
        yield tm.ensemble, position


def _candidates(ens, nodes, dtype=None) -> np.ndarray:
    """Each threshold and its neighbours one representable value either side, and zero's neighbourhood where zero
    is missing. Representable in ``dtype`` (the column's narrow float type, or its integer type: then the integers
    around each threshold) when given, else in float32 when the model rounds its inputs to float32, else in
    float64."""
    t = ens.threshold[nodes]
    t = np.unique(t[np.isfinite(t)])
    zero_missing = bool(np.any(ens.nan_mode[nodes] == ZERO_OR_NAN_MISSING))
    if dtype is None and ens.float32_input:
        dtype = np.dtype(np.float32)
    if dtype is not None and np.dtype(dtype).kind in "iu":  # an integer column: the integers around each threshold
        info = np.iinfo(dtype)
        base = np.floor(t)
        out = [np.clip(base + k, info.min, info.max) for k in (-1.0, 0.0, 1.0)]
        if zero_missing:
            out.append(np.array([-1.0, 0.0, 1.0]))
        return np.concatenate(out)
    if dtype is not None:
        dtype = np.dtype(dtype)
        up, down = dtype.type(np.inf), dtype.type(-np.inf)
        with np.errstate(over="ignore"):
            tn = t.astype(dtype)
        # the values on both sides of each threshold: tn may have rounded up or down
        near = [tn, np.nextafter(tn, up), np.nextafter(tn, down)]
        out = [a.astype(np.float64) for a in near]
        if zero_missing:
            z = np.nextafter(dtype.type(1e-35), up)
            out.append(np.array([0.0, z, -z], dtype=np.float64))
    else:
        out = [t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)]
        if zero_missing:
            out.append(np.array([0.0, np.nextafter(1e-35, np.inf), -np.nextafter(1e-35, np.inf)]))
    return np.concatenate(out) if out else np.empty(0)


def integer_dtype(dtype) -> np.dtype | None:
    """The numpy integer type of an integer column (numpy's, or pandas' nullable one), or None (booleans too)."""
    base = getattr(dtype, "numpy_dtype", dtype)
    try:
        base = np.dtype(base)
    except TypeError:
        return None
    return base if base.kind in "iu" else None


def comparison(tm) -> str:
    """``"<="`` or ``"<"``: how the trees of ``tm`` (a TreeModel or TreeSum) compare a value with a threshold."""
    if isinstance(tm, TreeSum):
        for term in tm.terms:
            return comparison(term.model)
        return "<="
    return tm.ensemble.comparison


def readable_trees(adapter, response: str):
    """The trees ``grid="thresholds"`` reads: those of ``response``, else those of any response of the model.

    Every response of a tree model is a function of the leaves a row reaches, so
    all of them step at the same values. Raises a :class:`PdpxError` saying what
    to use instead when the model has no trees pdpx can read.
    """
    tm = adapter.tree_model(response)
    if tm is not None:
        return tm
    reason = adapter.tree_model_unavailable(response)
    for other in adapter.responses():
        if other != response:
            tm = adapter.tree_model(other)
            if tm is not None:
                return tm
    raise PdpxError(
        f"grid='thresholds' reads the split thresholds of a tree model, and pdpx cannot read trees here: {reason}. "
        "Use the default grid (grid='uniform', with grid_resolution for more points) or custom_values for the "
        "values you want")


def feature_steps(adapter, response: str, position: int, name: str, column) -> tuple[np.ndarray, str, list[str]]:
    """``grid="thresholds"`` for one numeric feature: (grid, comparison, notes).

    Parameters
    ----------
    adapter : Adapter
        The session's adapter (its ``tree_model`` gives the trees).
    response : str
        The response computed (its trees, else any response's: :func:`readable_trees`).
    position : int
        The feature's position among the model's columns.
    name : str
        The feature's name, for messages.
    column : Series
        The feature's values in X: the grid of a feature no tree splits on is its
        smallest and largest value (the curve is flat), and points outside its range
        are counted in a note. A column of a float type narrower than float64 gets
        points of that type (:func:`threshold_grid`'s ``dtype``).

    Returns
    -------
    grid : ndarray, float64, increasing
        One point per step (:func:`threshold_grid`).
    comparison : str
        ``"<="`` (each point stands for the step ending at it) or ``"<"`` (the step starting at it).
    notes : list of str
    """
    tm = readable_trees(adapter, response)
    try:
        grid = threshold_grid(tm, position, held_dtype(column.dtype) or integer_dtype(column.dtype))
    except PdpxError:
        raise PdpxError(
            f"grid='thresholds': the model splits on feature {name!r} by category sets, so its steps are its "
            f"categories: mark it categorical (categorical_features=[{name!r}]) or pass custom_values for it"
        ) from None
    data = column.to_numpy(dtype=np.float64, na_value=np.nan)
    finite = data[np.isfinite(data)]
    notes = []
    if grid.size == 0:
        if finite.size == 0:
            raise PdpxError(f"feature {name!r} has no finite values (only missing or infinite ones); it has no grid")
        grid = np.unique([finite.min(), finite.max()])
        notes.append(f"grid='thresholds': no tree splits on {name!r}, so its partial dependence is flat; its grid "
                     "is its smallest and largest value in X")
    elif finite.size:
        lo, hi = float(finite.min()), float(finite.max())
        outside = int(np.sum((grid < lo) | (grid > hi)))
        if outside:
            notes.append(f"grid='thresholds': {outside} of the {grid.size} steps of {name!r} are represented by "
                         f"points outside its range in X ({lo:g} to {hi:g}); every step is kept (the support "
                         "check counts the rows on each)")
    return grid, comparison(tm), notes
