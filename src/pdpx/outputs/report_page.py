"""The HTML page of :func:`pdpx.report` (computed by :mod:`pdpx.reporting`): style sheet, sections, figures.

Everything the page shows is escaped (``html.escape``); figures are embedded as
base64 PNG or inline SVG, so the file has no external assets.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core.dates import date_labels, is_date_grid, is_date_type
from ..core.errors import PdpxError
from ..core.files import check_writable
from ..core.grid import is_categorical_dtype
from ..core.result import grid_label
from ..core.support import support_summary
from ..core.version import __version__
from .plot_style import literal_text

#: the extensions of the report's file: it is one HTML page (a browser prints it to PDF)
REPORT_SUFFIXES = (".html", ".htm")


def check_report_path(path, what: str = "path") -> Path:
    """The report's file, checked before any work (:func:`pdpx.report` and ``pdpx report`` share this check): an
    HTML name (:data:`REPORT_SUFFIXES`) that can be written (:func:`pdpx.core.files.check_writable`)."""
    checked = check_writable(path, what=what)  # a folder is named as such, whatever its name
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix not in REPORT_SUFFIXES:
        raise PdpxError(f"{what} {str(path)!r}: the report is written as {', '.join(REPORT_SUFFIXES)} (not "
                        f"{suffix or 'a file without extension'}); pdpx writes the report as one HTML file (open it "
                        "in a browser and print it to PDF if you need one)")
    return checked


@dataclass
class Figure:
    """A drawn figure as HTML, and its width in inches."""

    html: str
    width_in: float


def embed(plot, image_format: str, dpi: int) -> Figure:
    """Draw a plot into an ``<img>`` (base64 PNG) or an inline ``<svg>``."""
    import matplotlib.pyplot as plt

    width, height = plot.theme.getp("figure_size")
    with literal_text():
        fig = plot.draw()
        buf = io.BytesIO()
        try:
            fig.savefig(buf, format=image_format, dpi=dpi)
        finally:
            plt.close(fig)
    data = buf.getvalue()
    if image_format == "png":
        src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        tag = (f'<img src="{src}" alt="" style="width:{width * 96:.0f}px" '
               f'width="{width * 96:.0f}" height="{height * 96:.0f}">')
    else:
        text = data.decode("utf-8")
        start = text.find("<svg")
        tag = text[start:]
    return Figure(tag, width)


def _fmt(v: float) -> str:
    if v is None or not np.isfinite(v):
        return "–"
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1e5 or a < 1e-3:
        return f"{v:.3g}"
    digits = int(np.clip(2 - math.floor(math.log10(a)), 0, 4))
    return f"{v:,.{digits}f}"


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _flag(res) -> str:
    """Where the data does not support a result (:func:`pdpx.core.support.support_summary`), as a flag line."""
    text = support_summary(res)
    return f'<p class="flag">Unsupported: {_e(text)}</p>\n' if text else ""


def not_finite(res) -> tuple[int, int, list[str], int]:
    """Where a result's PD is not a number (the model predicted NaN or infinity there): ``(grid points, of how
    many, the first five points as text, ICE curves holding any)``."""
    avg = np.asarray(res.average, dtype=float)
    grid_shape = avg.shape[1:]
    bad = ~np.isfinite(avg).reshape(avg.shape[0], -1).all(axis=0)
    curves = 0
    if res.individual is not None:
        ice = np.asarray(res.individual, dtype=float)
        curves = int((~np.isfinite(ice.reshape(ice.shape[0], ice.shape[1], -1))).any(axis=(0, 2)).sum())
    points = []
    for flat in np.flatnonzero(bad)[:5]:
        cell = np.unravel_index(flat, grid_shape)
        points.append(", ".join(f"{f} = {grid_label(res.grid_values[j][i])}"
                                for j, (f, i) in enumerate(zip(res.features, cell))))
    return int(bad.sum()), int(bad.size), points, curves


def _nan_flag(res) -> str:
    """A flag line saying where the result's PD (or ICE) is not a number, or ""."""
    n_bad, n, points, curves = not_finite(res)
    if not n_bad and not curves:
        return ""
    more = " …" if n_bad > len(points) else ""
    text = (f"Not a number: {n_bad} of {n} grid points of the partial dependence ({'; '.join(points)}{more})"
            if n_bad else "The partial dependence is a number everywhere")
    if curves:
        text += f"; {curves:,} of its ICE curves are not numbers at some grid points"
    text += (". The model predicted NaN (or infinity) at these inputs; the figure leaves those points out. "
             "Check the model's predictions there.")
    return f'<p class="flag nan">{_e(text)}</p>\n'


def safe_repr(obj, limit: int = 3000) -> str:
    """``repr(obj)`` cut at ``limit`` characters, or a stand-in naming the type when the object's repr raises."""
    try:
        text = repr(obj)
    except Exception as exc:  # noqa: BLE001 - a user's model: whatever its repr raises, the page is written
        text = f"<{type(obj).__module__}.{type(obj).__qualname__} object: its repr raised {type(exc).__name__}>"
    return text[:limit] + " ..." if len(text) > limit else text


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(s)).strip("-").lower() or "x"


def _grid_shape(res) -> str:
    """The grid's size: ``12``, or ``20 × 20`` for a pair."""
    return " × ".join(str(len(g)) for g in res.grid_values)


def _result_figure(res, fig, *, anchor: str, css_class: str, title: str, measure: str, grid: str) -> str:
    """A result's figure on the page: its title, the figure, a caption (``measure``, the method, ``grid``, the time)
    and the result's flags (:func:`_flag`, :func:`_nan_flag`)."""
    return (f'<figure id="{anchor}-{_slug(res.feature_set)}" class="{css_class}">\n<h3>{_e(title)}</h3>\n'
            f"{fig.html}\n<figcaption>{measure}; method <code>{_e(res.method)}</code>, {grid}, {res.elapsed:.2f} s."
            f"</figcaption>\n{_flag(res)}{_nan_flag(res)}</figure>")


CSS = """
:root { --ink:#1d1d1f; --muted:#666; --rule:#e3e3e3; --accent:#d55e00; --bar:#5b84b1; }
* { box-sizing: border-box; }
body { margin:0; font: 15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); background:#fafafa; }
main { max-width: 980px; margin: 0 auto; padding: 32px 28px 64px; background:#fff; }
h1 { font-size: 1.7em; margin: 0 0 4px; }
h2 { font-size: 1.3em; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 2px solid var(--rule); }
h3 { font-size: 1.05em; margin: 24px 0 6px; }
p.meta, .muted, figcaption { color: var(--muted); font-size: .9em; }
p.flag { color: var(--accent); font-size: .9em; margin: .2em 0 0; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: .92em; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
th { background: #f4f4f4; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv th { background: none; width: 11em; }
.bar { display:inline-block; height: 10px; background: var(--bar); border-radius: 2px; }
pre { background:#f6f6f6; padding: 8px 12px; overflow-x: auto; font-size: .85em; max-height: 14em; }
figure { margin: 12px 0 28px; }
figure img, figure svg { max-width: 100%; height: auto; display: block; }
nav ol { columns: 3; font-size: .92em; }
code { font-size: .92em; overflow-wrap: anywhere; }
td, th { overflow-wrap: anywhere; }
@media (max-width: 640px) {  /* phones: narrower margins, one TOC column, wide tables scroll in place */
  main { padding: 16px 12px 40px; }
  nav ol { columns: 1; }
  table { display: block; max-width: 100%; overflow-x: auto; }
  table.kv th { width: auto; }
}
"""


@dataclass
class Page:
    """Everything the report page shows; :meth:`render` writes it as one HTML document."""

    title: str
    model: Any
    frame: pd.DataFrame
    sampled_from: int | None
    seed: int
    results: list
    ranking: list
    skipped: dict
    figures: list
    pair_figures: list
    pairs_auto: bool
    n_candidates: int
    top_for_pairs: int
    options: dict
    n_ice: int
    elapsed: float
    importance: pd.DataFrame | None = None
    importance_figure: Any = None
    hstat: Any = None
    h_figures: list = field(default_factory=list)
    columns_html: str | None = None  # :func:`columns_table`, when computed ahead (else at render)
    sections: list = field(default_factory=list)  # more sections before "Method and time": .anchor, .toc, .render()
    rows_note: str = ""  # on which rows each part rests, when they differ (a Spark DataFrame's)

    def render(self) -> str:
        """The whole page as one HTML document."""
        stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
        body = [
            "<header>",
            f"<h1>{_e(self.title)}</h1>",
            f'<p class="meta">Written by pdpx {_e(__version__)} on {_e(stamp)} '
            f"in {self.elapsed:.1f} s.</p>",
            "</header>",
            self._toc(),
            self._summary(),
            self._ranking_section(),
            self._feature_section(),
            self._pairs_section(),
            *[s.render() for s in self.sections],
            self._method_section(),
        ]
        return (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_e(self.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(b for b in body if b)
            + "\n</main>\n</body>\n</html>\n"
        )

    # -------------------------------------------------------------- sections
    def _toc(self) -> str:
        items = [("summary", "Model and data"), ("ranking", "Features ranked"), ("features", "Features")]
        if self.pair_figures or self.hstat is not None:
            items.append(("interactions", "Interactions"))
        items += [(s.anchor, s.toc) for s in self.sections]
        items.append(("method", "Method and time"))
        li = "".join(f'<li><a href="#{a}">{_e(t)}</a></li>' for a, t in items)
        return f'<nav aria-label="contents"><ol>{li}</ol></nav>'

    def _summary(self) -> str:
        r0 = self.results[0]
        model_text = safe_repr(self.model)
        rows = len(self.frame)
        rows_text = f"{rows:,}"
        if self.sampled_from:
            rows_text += f" (a random sample of the {self.sampled_from:,} rows given, seed {self.seed})"
        outputs = ", ".join(map(str, r0.outputs))
        kv = [
            ("Model", f"<code>{_e(type(self.model).__module__)}.{_e(type(self.model).__name__)}</code>"),
            ("Response", f"{_e(r0.response_label)} (<code>{_e(r0.response)}</code>)"),
            ("Outputs shown", _e(outputs)),
            ("Rows averaged over", _e(rows_text)),
            ("Columns", f"{self.frame.shape[1]:,}"),
        ]
        table = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in kv)
        nan = [(r.feature_set, not_finite(r)) for r in self._all_results()]
        nan = [f"{name} ({b} of {n} grid points)" if b else f"{name} (ICE curves)"
               for name, (b, n, _, c) in nan if b or c]
        nan_html = (f'<p class="flag nan">The model predicted NaN (not a number) or infinity for some inputs, so '
                    f"these partial dependences are not numbers everywhere: {_e(', '.join(nan))}. Their figures "
                    "leave those points out and say where they are.</p>\n" if nan else "")
        return (
            '<section id="summary">\n<h2>Model and data</h2>\n'
            f'<table class="kv">{table}</table>\n{nan_html}'
            + (f'<p class="rows-note">{_e(self.rows_note)}</p>\n' if self.rows_note else "") +
            f"<pre>{_e(model_text)}</pre>\n"
            f"<h3>Columns</h3>\n{self.columns_html or columns_table(self.frame, self.results, self.skipped)}\n"
            "</section>"
        )

    def _all_results(self) -> list:
        """The 1-way results, then the 2-way ones."""
        return list(self.results) + [r for r, _, _ in self.pair_figures]

    def _ranking_section(self) -> str:
        top = max((s for _, s in self.ranking if np.isfinite(s)), default=0.0) or 1.0
        rows = []
        for i, (r, s) in enumerate(self.ranking, 1):
            avg = np.asarray(r.average, dtype=float).reshape(len(r.outputs), -1)
            with np.errstate(invalid="ignore"):
                spread = np.nanmax(avg, axis=1, initial=-np.inf) - np.nanmin(avg, axis=1, initial=np.inf)
            spread = spread[np.isfinite(spread)]
            rng = float(spread.max()) if spread.size else float("nan")
            width = max(1, round(160 * s / top)) if np.isfinite(s) else 0
            rows.append(
                f'<tr><td class="num">{i}</td><td><a href="#feature-{_slug(r.feature_set)}">{_e(r.feature_set)}'
                f"</a></td><td>{_kind(r.categorical[0], r.grid_values[0])}</td>"
                f'<td class="num">{_fmt(s)}</td><td class="num">{_fmt(rng)}</td>'
                f'<td><span class="bar" style="width:{width}px"></span></td></tr>'
            )
        skipped = ""
        if self.skipped:
            items = "".join(f"<li><code>{_e(k)}</code>: {_e(v)}</li>" for k, v in self.skipped.items())
            skipped = f"<p>Left out:</p><ul>{items}</ul>"
        return (
            '<section id="ranking">\n<h2>Features ranked by how much their partial dependence varies</h2>\n'
            + (f'<figure class="importance">{self.importance_figure.html}</figure>\n'
               if self.importance_figure is not None else "")
            + '<table class="ranking"><thead><tr><th>rank</th><th>feature</th><th>type</th><th>importance</th>'
            "<th>PD range</th><th></th></tr></thead>\n<tbody>" + "".join(rows) + "</tbody></table>\n"
            '<p class="muted">Importance (<code>pdpx.importance</code>): sample standard deviation of the PD curve '
            "over its grid (numeric features, the missing-value point left out) or its range divided by 4 "
            "(categorical), averaged over outputs (Greenwell et al. 2018). PD range: the "
            "largest max − min over outputs. Both are in the response's units. A flat PD does not prove a "
            "feature unused: its effect may cancel across rows (see the ICE curves) or act through "
            "interactions.</p>\n" + skipped + "</section>"
        )

    def _feature_section(self) -> str:
        parts = ['<section id="features">\n<h2>Features</h2>',
                 f'<p class="muted">Thick line or large points: partial dependence; thin lines: individual '
                 f"conditional expectation (ICE) curves of up to {self.n_ice} random rows; ticks on the x axis: "
                 "the data's values, to show where the grid is sparse.</p>"]
        for (r, fig), (_, s) in zip(self.figures, self.ranking):
            parts.append(_result_figure(r, fig, anchor="feature", css_class="feature", title=r.feature_set,
                                        measure=f"{_e(r.feature_set)}: importance {_fmt(s)}",
                                        grid=f"{len(r.grid_values[0])} grid points"))
        parts.append("</section>")
        return "\n".join(parts)

    def _pairs_section(self) -> str:
        if not self.pair_figures and self.hstat is None:
            return ""
        how = (f"The strongest of the {self.n_candidates} pairs among the top {self.top_for_pairs} features"
               if self.pairs_auto else "The pairs asked for")
        parts = ['<section id="interactions">\n<h2>Interactions</h2>',
                 f'<p class="muted">{_e(how)}, by Friedman\'s H (<code>pdpx.h_statistic</code>, Friedman and '
                 "Popescu 2008): with the partial dependence functions centered over the rows and evaluated at "
                 "them, the pairwise H² of a and b is the share of the variance of PD(a, b) that the sum "
                 "PD(a) + PD(b) does not explain; the overall H² of a feature is the share of the variance of the "
                 "model's output that is interaction of that feature with any other. 0: no interaction; 1: all "
                 "interaction. H compares PD functions, so it inherits their extrapolation on correlated "
                 "features.</p>"]
        if self.hstat is not None:
            h = self.hstat
            for i, fig in enumerate(self.h_figures):
                parts.append(f'<figure class="h-statistic" id="h-{"pairwise" if i == 0 else "overall"}">'
                             f"{fig.html}</figure>")
            rows = "".join(
                f"<tr><td>{_e(a)} × {_e(b)}</td><td>{_e(o)}</td><td class=\"num\">{v:.3f}</td>"
                f'<td class="num">{v2:.3f}</td></tr>'
                for a, b, o, v, v2 in zip(h.pairwise.feature_1, h.pairwise.feature_2, h.pairwise.output,
                                          h.pairwise.h, h.pairwise.h2))
            over = "".join(
                f'<tr><td>{_e(a)}</td><td>{_e(o)}</td><td class="num">{v:.3f}</td><td class="num">{v2:.3f}</td></tr>'
                for a, o, v, v2 in zip(h.overall.feature, h.overall.output, h.overall.h, h.overall.h2))
            parts.append(
                '<table class="hpairs"><thead><tr><th>pair</th><th>output</th><th>H</th><th>H²</th></tr></thead>'
                f"<tbody>{rows}</tbody></table>\n"
                '<table class="hoverall"><thead><tr><th>feature</th><th>output</th><th>overall H</th><th>H²</th>'
                f"</tr></thead><tbody>{over}</tbody></table>\n"
                f'<p class="muted">H on {h.n_rows:,} rows, method <code>{_e(h.method)}</code>, '
                f"{h.elapsed:.2f} s.</p>"
            )
        for r, s, fig in self.pair_figures:
            parts.append(_result_figure(r, fig, anchor="pair", css_class="interaction", title=" × ".join(r.features),
                                        measure=f"Friedman's H {_fmt(s)}", grid=f"grid {_grid_shape(r)}"))
        parts.append("</section>")
        return "\n".join(parts)

    def _method_section(self) -> str:
        rows = []
        all_results = [r for r in self.results] + [r for r, _, _ in self.pair_figures]
        for r in all_results:
            rows.append(
                f"<tr><td>{_e(r.feature_set)}</td><td><code>{_e(r.method)}</code></td>"
                f'<td class="num">{_grid_shape(r)}</td>'
                f'<td class="num">{r.n_rows:,}</td><td>{_e(r.kind)}</td><td class="num">{r.elapsed:.3f}</td></tr>'
            )
        compute = sum(r.elapsed for r in all_results)
        methods = sorted({r.method for r in all_results})
        notes = sorted({n for r in all_results for n in r.notes}
                       | ({f"Friedman's H: {n}" for n in self.hstat.notes} if self.hstat is not None else set()))
        notes_html = "".join(f"<li>{_e(n)}</li>" for n in notes)
        opts = {k: v for k, v in self.options.items() if k != "sample_weight"}
        if self.options.get("sample_weight") is not None:
            opts["sample_weight"] = "given"
        opts_text = ", ".join(f"{k}={safe_repr(v)}" for k, v in sorted(opts.items())) or "defaults"
        return (
            '<section id="method">\n<h2>Method and time</h2>\n'
            f"<p>Method{'s' if len(methods) > 1 else ''}: {', '.join(f'<code>{_e(m)}</code>' for m in methods)}. "
            f"Computing took {compute:.2f} s; the whole report {self.elapsed:.1f} s. "
            f"Options: <code>{_e(opts_text)}</code>.</p>\n"
            + (f"<ul>{notes_html}</ul>\n" if notes else "")
            + '<table class="timing"><thead><tr><th>feature set</th><th>method</th><th>grid</th><th>rows</th>'
            "<th>kind</th><th>seconds</th></tr></thead>\n<tbody>" + "".join(rows) + "</tbody></table>\n</section>"
        )


def columns_table(frame: pd.DataFrame, results: list, skipped: dict) -> str:
    """The page's table of the data's columns: dtype, how each was treated, missing share, a summary of values."""
    treated = {r.features[0]: r.categorical[0] for r in results}
    head = "<tr><th>column</th><th>dtype</th><th>treated as</th><th>missing</th><th>values</th></tr>"
    body = []
    for c in frame.columns:
        s = frame[c]
        cat = treated.get(str(c), is_categorical_dtype(s))
        missing = s.isna().mean()
        if cat:
            counts = s.value_counts(dropna=True)
            top = ", ".join(f"{_e(k)} ({v:,})" for k, v in counts.head(4).items())
            more = f", … {len(counts) - 4} more" if len(counts) > 4 else ""
            values = f"{len(counts)} levels: {top}{more}"
        elif is_date_type(s.dtype):
            lo, med, hi, distinct = _date_summary(s)
            values = f"min {_e(lo)} · median {_e(med)} · max {_e(hi)} · {distinct:,} distinct"
        else:
            lo, med, hi, distinct = _numeric_summary(s)
            values = f"min {_fmt(lo)} · median {_fmt(med)} · max {_fmt(hi)} · {distinct:,} distinct"
        note = "" if str(c) in treated else (" <span class=\"muted\">(skipped)</span>"
                                             if str(c) in skipped else "")
        body.append(
            f"<tr><td>{_e(c)}{note}</td><td><code>{_e(s.dtype)}</code></td>"
            f"<td>{_kind(cat, s.dtype)}</td><td class=\"num\">{missing:.1%}</td>"
            f"<td>{values}</td></tr>"
        )
    return f'<table class="columns"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def _kind(categorical: bool, dtype_or_grid) -> str:
    """How a column was treated (given its dtype, or a result's grid): ``categorical``, ``date`` or ``numeric``."""
    dtype = isinstance(dtype_or_grid, (np.dtype, pd.api.extensions.ExtensionDtype))
    dated = is_date_type(dtype_or_grid) if dtype else is_date_grid(dtype_or_grid)
    return "categorical" if categorical else "date" if dated else "numeric"


def _date_summary(column: pd.Series) -> tuple:
    """(first, median, last, distinct dates) of a date column as ISO text (the day alone when every value is at
    midnight), missing dates left out; the median is the lower middle date the column holds."""
    idx = pd.Index(column.array[~np.asarray(column.isna())]).sort_values()
    if not len(idx):
        return "–", "–", "–", 0
    n = len(idx)
    shown = date_labels(idx[[0, (n - 1) // 2, n - 1]], like=idx)
    return shown[0], shown[1], shown[2], int(idx.nunique())


def _numeric_summary(column: pd.Series) -> tuple:
    """(min, median, max, distinct values) of a column's numbers, missing values left out, from one sort."""
    v = pd.to_numeric(column, errors="coerce")
    plain = isinstance(v.dtype, np.dtype)  # numpy's own dtype (a nullable Int64 takes the float path)
    if plain and v.dtype.kind in "iu":
        arr = v.to_numpy()
    elif plain and v.dtype.kind == "b":
        arr = v.to_numpy().astype(np.int64)
    else:
        arr = v.to_numpy(dtype=np.float64, na_value=np.nan)
        arr = arr[~np.isnan(arr)]
    if not len(arr):
        return np.nan, np.nan, np.nan, 0
    arr = np.sort(arr)
    n = len(arr)
    median = (float(arr[(n - 1) // 2]) + float(arr[n // 2])) / 2
    return arr[0], median, arr[-1], 1 + int(np.count_nonzero(arr[1:] != arr[:-1]))
