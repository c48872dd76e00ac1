"""How results look in Jupyter: the HTML behind ``_repr_html_`` of every result that draws.

:class:`pdpx.core.drawing.Drawable` (the base of pdpx's results) asks the figure backend
for this page (:meth:`pdpx.outputs.draw.PlotnineBackend.html`), so the core imports
nothing from here. A result shows:

* a short header: what it is, its features, method, kind, grid size, outputs, and its
  notes if any;
* the first :data:`TABLE_ROWS` rows of ``to_frame()`` (built only where that is cheap:
  the average rows, which come first, or a frame under :data:`TABLE_BYTES`);
* its figure as an inline PNG where drawing it is cheap (plotnine installed, at most
  :data:`FIGURE_POINTS` values drawn, at most :data:`FIGURE_PANELS` panels), else a line saying to
  call ``.plot()``.

Nothing here raises: a part that fails is replaced by a line saying so, and the result's
own ``repr`` is shown where the whole page fails (``_repr_html_`` returns None then).
"""

from __future__ import annotations

import base64
import html as _html
import io
import warnings
from importlib.util import find_spec

import numpy as np

#: Rows of ``to_frame()`` the table shows.
TABLE_ROWS = 10
#: A frame estimated over this many bytes is not built for the table.
TABLE_BYTES = 8 * 2**20
#: The figure is drawn inline only for at most this many values (grid points x curves x outputs)...
FIGURE_POINTS = 50_000
#: ... and at most this many panels (outputs, feature sets, models or groups).
FIGURE_PANELS = 8
#: Resolution of the inline figure.
FIGURE_DPI = 96
#: Notes, outputs, labels and feature sets listed in the header at most.
LIST_ITEMS = 8

_STYLE = ("<style>.pdpx-result{font-size:0.92em}.pdpx-result ul.pdpx-notes{margin:2px 0}"
          ".pdpx-result table.pdpx-table{border-collapse:collapse;margin:4px 0}"
          ".pdpx-result table.pdpx-table td,.pdpx-result table.pdpx-table th{padding:1px 6px;text-align:right}"
          ".pdpx-result .pdpx-muted{color:#666}</style>")


def html(result) -> str:
    """The HTML page of ``result`` for a notebook: header, the head of its table, its figure (or a line)."""
    parts = [_STYLE, '<div class="pdpx-result">']
    for section in (_header, _table, _figure):
        try:
            parts.append(section(result))
        except Exception as exc:  # noqa: BLE001 - a display never raises; it says what it could not show
            parts.append(_muted(f"({section.__name__.strip('_')} not shown: {type(exc).__name__}: {exc})"))
    parts.append("</div>")
    return "".join(parts)


# ------------------------------------------------------------------ header
def _header(result) -> str:
    name = type(result).__name__
    facts, notes = _facts(result)
    line = " · ".join(f"<b>{_e(k)}</b> {_e(v)}" for k, v in facts)
    out = f"<p><b>{_e(name)}</b><br/>{line}</p>"
    if notes:
        shown = "".join(f"<li>{_e(n)}</li>" for n in notes[:LIST_ITEMS])
        more = f"<li>... and {len(notes) - LIST_ITEMS} more (res.notes)</li>" if len(notes) > LIST_ITEMS else ""
        out += f"<ul class='pdpx-notes'>{shown}{more}</ul>"
    return out


def _facts(result) -> tuple[list[tuple[str, str]], list[str]]:
    """(label, value) rows of the header, and the notes."""
    from ..core.result import PartialDependenceCollection, PartialDependenceResult
    from ..core.stacked import StackedResult

    if isinstance(result, PartialDependenceResult):
        return _curve_facts(result), list(result.notes)
    if isinstance(result, StackedResult):
        first = result.results[0]
        facts = [("features", _features(first)), (result.column, _listed(result.labels)),
                 ("method", _listed(sorted(set(result.method.values())))), ("kind", first.kind),
                 ("grid", _grid(first)), ("outputs", _listed(first.outputs))]
        notes = [f"{lab}: {n}" for lab, r in zip(result.labels, result.results) for n in r.notes]
        return facts, notes
    if isinstance(result, PartialDependenceCollection):
        facts = [("feature sets", str(len(result)))]
        for r in result.results[:LIST_ITEMS]:
            facts.append((r.feature_set, f"({r.method}, {r.kind}, grid {_grid(r)})"))
        if len(result) > LIST_ITEMS:
            facts.append(("...", f"and {len(result) - LIST_ITEMS} more"))
        notes = [f"{r.feature_set}: {n}" for r in result.results for n in r.notes]
        notes += [f"{', '.join(map(str, k)) if isinstance(k, tuple) else k} left out: {why}"
                  for k, why in result.skipped.items()]
        return facts, notes
    if hasattr(result, "pairwise") and hasattr(result, "overall"):  # HStatistic
        top = result.pairwise.head(3)
        strongest = ", ".join(f"{a} × {b}: {h:.3g}" for a, b, h in zip(top.feature_1, top.feature_2, top.h))
        facts = [("method", result.method), ("rows", f"{result.n_rows:,}"), ("outputs", _listed(result.outputs)),
                 ("pairs", f"{len(result.pairwise)} row(s)"), ("features", f"{len(result.overall)} row(s)"),
                 ("strongest pairs", strongest or "none")]
        return facts, list(result.notes)
    if hasattr(result, "exact") and hasattr(result, "recursion"):  # MethodComparison
        worst = float(np.nanmax(np.abs(result.difference))) if np.size(result.difference) else 0.0
        facts = [("features", _features(result.exact)), ("methods", f"{result.exact.method} and recursion"),
                 ("grid", _grid(result.exact)), ("max |recursion − exact|", f"{worst:.6g}")]
        return facts, list(result.exact.notes) + list(result.recursion.notes)
    return [], []


def _curve_facts(res) -> list[tuple[str, str]]:
    facts = [("features", _features(res)), ("method", res.method), ("kind", res.kind + (", centered" if
                                                                                      res.centered else "")),
             ("grid", _grid(res)), ("outputs", _listed(res.outputs)), ("response", res.response),
             ("rows", f"{res.n_rows:,}")]
    if res.individual is not None:
        facts.append(("ICE curves", f"{res.individual.shape[1]:,}"))
    if res.lower is not None:  # a band: its own label (pdpx.core.members), else the rows' bootstrap
        facts.append(("interval", getattr(res, "band", "") or f"{res.interval:.0%} bootstrap interval of the PD"))
    if getattr(res, "model_name", ""):
        facts.insert(0, ("model", res.model_name))
    return facts


def _features(res) -> str:
    return ", ".join(f"{f} (categorical)" if c else str(f) for f, c in zip(res.features, res.categorical))


def _grid(res) -> str:
    shape = " × ".join(str(s) for s in res.grid_shape)
    return f"{shape} point(s)" + (" (one per step)" if getattr(res, "steps", None) else "")


def _listed(values) -> str:
    values = [str(v) for v in values]
    more = f", ... ({len(values)} in all)" if len(values) > LIST_ITEMS else ""
    return ", ".join(values[:LIST_ITEMS]) + more


# ------------------------------------------------------------------ table
def _table(result) -> str:
    found = _head(result)
    if found is None:
        return _muted("res.to_frame() gives the table.")
    head, n_rows = found
    caption = (f"to_frame(): the first {len(head)} of {n_rows:,} rows" if n_rows > len(head)
               else f"to_frame(): {n_rows:,} rows")
    table = head.to_html(index=False, border=0, classes="pdpx-table", na_rep="NA",
                         float_format=lambda v: f"{v:.6g}")
    return f"<p class='pdpx-muted'>{_e(caption)}</p>{table}"


def _head(result):
    """(the first rows of ``result.to_frame()``, its number of rows), built cheaply; None where it is not cheap."""
    from ..core.result import PartialDependenceCollection, PartialDependenceResult
    from ..core.stacked import StackedResult

    if isinstance(result, PartialDependenceResult):
        pieces = _heads([result], lambda r, need, kind: r.to_frame(kind=kind).head(need))
        return None if pieces is None else (pieces[0], _frame_rows(result))
    if isinstance(result, StackedResult):  # its frame: each label's frame in turn, with the label's column
        labels = dict(zip(map(id, result.results), result.labels))

        def labelled(r, need, kind):
            df = r.to_frame(kind=kind).head(need)
            df.insert(1, result.column, labels[id(r)])
            return df
        pieces = _heads(result.results, labelled)
    elif isinstance(result, PartialDependenceCollection):  # its frame: each result's frame in turn
        width = max((len(r.features) for r in result.results), default=1)
        pieces = _heads(result.results, lambda r, need, kind: r.to_frame(kind=kind, n_features=width).head(need))
    elif hasattr(result, "pairwise") or hasattr(result, "exact") or getattr(result, "small", False):
        frame = _small_frame(result)  # HStatistic, MethodComparison, the measures of heterogeneity: small frames
        return frame.head(TABLE_ROWS), len(frame)
    else:
        return None
    if not pieces:
        return None
    import pandas as pd

    return pd.concat(pieces, ignore_index=True), sum(_frame_rows(r) for r in result.results)


def _small_frame(result):
    """``result.to_frame()``, its averages only where it can also hold curves (a regions result's ICE)."""
    import inspect

    takes_kind = "kind" in inspect.signature(result.to_frame).parameters
    return result.to_frame(kind="average") if takes_kind else result.to_frame()


def _heads(results, head_of) -> list | None:
    """The first :data:`TABLE_ROWS` rows of the results' frames one after the other (``head_of(r, need, kind)``:
    the first ``need`` rows of ``r``'s frame of ``kind``); None where a frame to build is over :data:`TABLE_BYTES`."""
    pieces, need = [], TABLE_ROWS
    for r in results:
        if need <= 0:
            break
        averages = len(r.outputs) * int(np.prod(r.grid_shape)) if r.kind in ("average", "both") else 0
        if averages >= need:  # a frame starts with its average rows: they are enough
            pieces.append(head_of(r, need, "average"))
        elif r.frame_nbytes() <= TABLE_BYTES:
            pieces.append(head_of(r, need, None))
        else:
            return None
        need -= len(pieces[-1])
    return pieces


def _frame_rows(res) -> int:
    curves = (1 if res.kind in ("average", "both") else 0)
    curves += 0 if res.individual is None else res.individual.shape[1]
    return len(res.outputs) * int(np.prod(res.grid_shape)) * curves


# ------------------------------------------------------------------ figure
def _figure(result) -> str:
    if find_spec("plotnine") is None:
        return _muted("Install plotnine (pip install 'pdpx[plot]') for the figure; res.plot() draws it.")
    why = _too_big(result)
    if why:
        return _muted(f"The figure is not drawn here ({why}): call res.plot() to draw it.")
    png = _png(result.plot())
    return (f"<img alt='{_e(type(result).__name__)} figure' "
            f"src='data:image/png;base64,{base64.b64encode(png).decode('ascii')}'/>")


def _too_big(result) -> str:
    """Why drawing ``result`` here would be slow ("" when it is cheap)."""
    from ..core.result import PartialDependenceCollection, PartialDependenceResult
    from ..core.stacked import StackedResult

    if isinstance(result, PartialDependenceResult):
        curves = [result]
    elif isinstance(result, (StackedResult, PartialDependenceCollection)):
        curves = list(result.results)
    elif hasattr(result, "exact"):
        curves = [result.exact, result.recursion]
    elif hasattr(result, "pairwise"):
        n = len(result.pairwise) + len(result.overall)
        return f"{n:,} rows of statistics" if n > FIGURE_POINTS // 100 else ""
    elif getattr(result, "small", False):
        return ""
    else:
        return "a result pdpx has no inline figure for"
    points = sum(_frame_rows(r) for r in curves)
    panels = max(len(curves), max((len(r.outputs) for r in curves), default=1))
    if points > FIGURE_POINTS:
        return f"{points:,} values to draw"
    if panels > FIGURE_PANELS:
        return f"{panels} panels"
    if any(len(r.features) > 2 for r in curves):
        return "more than two features"
    return ""


def _png(plot) -> bytes:
    """``plot`` drawn to PNG bytes, warnings kept out of the notebook, the figure closed (no second copy)."""
    import matplotlib.pyplot as plt

    from .plot_style import literal_text

    with warnings.catch_warnings(), plt.ioff(), literal_text():
        warnings.simplefilter("ignore")
        figure = plot.draw()
        try:
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=FIGURE_DPI)
            return buffer.getvalue()
        finally:
            plt.close(figure)


def _muted(text: str) -> str:
    return f"<p class='pdpx-muted'>{_e(text)}</p>"


def _e(text) -> str:
    return _html.escape(str(text), quote=True)
