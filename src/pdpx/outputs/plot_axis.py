"""The numeric axes of 1-way and 2-way figures: whole-number ticks for integer features, tick labels, and room for
the label of the missing-value point beside the numbers.

Used by :mod:`.plot_oneway` (its categorical axis) and :mod:`.plot_twoway` (its missing-value axes).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def integer_feature(res, j: int = 0) -> bool:
    """Whether feature ``j`` of ``res`` holds whole numbers only (an integer column, or floats that are all whole):
    its axis gets whole-number ticks (:func:`integer_breaks`)."""
    if res.categorical[j]:
        return False
    data = res.feature_data.get(res.features[j]) if res.feature_data else None
    values = np.asarray(data if data is not None else res.grid_values[j])
    if values.dtype.kind in "iub":
        return True
    if values.dtype.kind != "f":
        try:
            values = pd.to_numeric(pd.Series(values.ravel()), errors="coerce").to_numpy(dtype=float)
        except (TypeError, ValueError):
            return False
    values = values[np.isfinite(values)]
    return bool(values.size) and bool(np.all(values == np.round(values)))


def integer_breaks(limits, n: int = 5) -> list[float]:
    """Axis breaks within ``limits`` at whole numbers only: mizani's breaks when they are whole, else a whole step
    of 1, 2 or 5 times a power of ten with about ``n`` breaks."""
    from mizani.breaks import breaks_extended

    lo, hi = float(limits[0]), float(limits[1])
    found = [float(b) for b in breaks_extended(n=n)((lo, hi))]
    if found and all(b == round(b) for b in found):
        return found
    span = max(hi - lo, 1e-12)
    step = 1.0
    for power in range(0, 16):
        for q in (1, 2, 5):
            step = q * 10.0 ** power
            if span / step <= n:
                break
        else:
            continue
        break
    first = math.ceil(lo / step - 1e-9) * step
    return [float(b) for b in np.arange(first, hi + 1e-9 * max(1.0, abs(hi)), step)]


def text_width(text: str, font_size: float) -> float:
    """Rough width in inches of ``text`` in a font of ``font_size`` points (for spacing axis labels)."""
    return 0.6 * font_size / 72 * len(text)


def numeric_ticks(lo: float, hi: float, integer: bool) -> list[float]:
    """The ticks of a numeric axis within ``[lo, hi]``: mizani's, whole numbers only for an integer feature
    (:func:`integer_breaks`)."""
    from mizani.breaks import breaks_extended

    found = integer_breaks((lo, hi)) if integer else breaks_extended()((lo, hi))
    eps = 1e-9 * max(1.0, abs(lo), abs(hi))
    return [float(b) for b in found if lo - eps <= b <= hi + eps]


def tick_labels(values) -> list[str]:
    """Numeric ticks as the axes write them."""
    from mizani.labels import label_number

    return list(label_number()(list(values))) if len(values) else []


def clear_of_missing(ticks, texts, at: float, per_unit: float, font_size: float) -> list[int]:
    """Positions of the numeric ticks whose labels, side by side on an axis of ``per_unit`` inches per unit of x,
    stay clear of the ``missing`` label of the missing-value point at ``at`` (a gap of 0.08 inches between two)."""
    room = text_width("missing", font_size) / 2 + 0.08
    return [i for i, (b, t) in enumerate(zip(ticks, texts))
            if (at - b) * per_unit >= room + text_width(t, font_size) / 2]
