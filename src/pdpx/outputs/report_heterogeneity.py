"""The report's section "Where the average misleads" (computed by :mod:`pdpx.reporting`): the features ranked by
the heterogeneity of their ICE curves (:func:`pdpx.heterogeneity`), the regions of the most heterogeneous ones
(:func:`pdpx.regions`) and the explained-variance ledger (:func:`pdpx.explained_variance`), as HTML.

A measure that failed leaves a note in the section in place of its part, and is listed in ``missing`` (which
:func:`pdpx.report` names in an :class:`~pdpx.core.errors.IncompleteReportWarning`); the rest of the report is written.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, replace
from typing import Any


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def number(v: float) -> str:
    """A measure's value as the section prints it (4 significant digits)."""
    return f"{float(v):.4g}"


def drawn_or_noted(fig, what: str, notes: list, missing: list):
    """A report section's figure ``fig`` (a future, or None) drawn; one that fails to draw gives None, with a note
    and an entry in ``missing`` (what failed, why): a figure of a section never loses the report."""
    if fig is None:
        return None
    try:
        return fig.result()
    except Exception as exc:  # noqa: BLE001 - whatever the figure raised, the page is written without it
        notes.append(f"the figure of {what} could not be drawn: {type(exc).__name__}: {exc}")
        missing.append((f"the figure of {what}", f"{type(exc).__name__}: {exc}"))
        return None


@dataclass
class HeterogeneitySection:
    """What the section shows: each part is None (with a note saying why) when its measure failed.

    ``heterogeneity``: a :class:`pdpx.HeterogeneityResult` and ``bars`` its bar figure; ``share``: each feature's
    heterogeneity as a share of the variance of the model's predictions (largest over outputs); ``regions``:
    ``[(RegionsResult, figure)]``; ``explained`` and ``ledger_figure``: a :class:`pdpx.ExplainedVariance`;
    ``rule``: how the features with regions were chosen, as text; ``notes``: what the page says of the parts that
    failed, and ``missing``: those parts, ``[(part, why)]``. Figures are :class:`~pdpx.outputs.report_page.
    Figure` objects, or futures of them until :meth:`resolved`.
    """

    anchor = "heterogeneity"
    toc = "Where the average misleads"

    rule: str
    heterogeneity: Any = None
    bars: Any = None
    share: dict = field(default_factory=dict)
    regions: list = field(default_factory=list)
    explained: Any = None
    ledger_figure: Any = None
    notes: list = field(default_factory=list)
    missing: list = field(default_factory=list)

    def resolved(self) -> HeterogeneitySection:
        """The section with its figures drawn (a figure that fails to draw is left out, with a note, and missing)."""
        notes, missing = list(self.notes), list(self.missing)

        def done(fig, what):
            return drawn_or_noted(fig, what, notes, missing)

        return replace(self, bars=done(self.bars, "heterogeneity"),
                       regions=[(r, done(f, f"the regions of {r.feature}")) for r, f in self.regions],
                       ledger_figure=done(self.ledger_figure, "the explained-variance ledger"), notes=notes,
                       missing=missing)

    def render(self) -> str:
        """The section as HTML."""
        parts = [f'<section id="{self.anchor}">\n<h2>Where the average misleads</h2>',
                 '<p class="muted">A partial dependence curve is an average of the rows\' ICE curves. The '
                 "<b>heterogeneity</b> of a feature (<code>pdpx.heterogeneity</code>) is how far those curves "
                 "disagree in shape: each row's curve is centered on its own mean over the grid, and the "
                 "variance across rows of the centered curves is averaged over the grid points (in squared "
                 "units of the response; <i>sd</i> is its square root). 0: every row's curve has the shape of "
                 "the average (the feature acts additively); large: the average hides rows whose curves go "
                 "their own way, through interactions.</p>"]
        parts += [f'<p class="flag">{_e(n)}</p>' for n in self.notes]
        if self.heterogeneity is not None:
            parts.append(self._ranking())
        for res, fig in self.regions:
            parts.append(_regions(res, fig))
        if self.explained is not None:
            parts.append(_ledger(self.explained, self.ledger_figure))
        parts.append("</section>")
        return "\n".join(parts)

    def _ranking(self) -> str:
        het = self.heterogeneity
        rows = "".join(
            f"<tr><td>{_e(f)}</td><td>{_e(o)}</td><td class=\"num\">{number(h)}</td>"
            f'<td class="num">{number(sd)}</td><td class="num">{self.share.get(f, float("nan")):.1%}</td></tr>'
            for f, o, h, sd in zip(het.table.feature, het.table.output, het.table.heterogeneity, het.table.sd))
        fig = f'<figure class="heterogeneity">{self.bars.html}</figure>\n' if self.bars is not None else ""
        return (f"{fig}"
                '<table class="heterogeneity"><thead><tr><th>feature</th><th>output</th><th>heterogeneity</th>'
                "<th>sd</th><th>share of the predictions' variance</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>\n"
                f'<p class="muted">Heterogeneity on {het.n_rows:,} rows, method <code>{_e(het.method)}</code>, '
                f"{het.elapsed:.2f} s. {_e(self.rule)}</p>")


def _regions(res, fig) -> str:
    """One feature's regions: their rules, rows and heterogeneity, and their curves side by side."""
    rows = "".join(
        f'<tr><td class="num">{r.region}</td><td>{_e(r.rule)}</td><td class="num">{r.n_rows:,}</td>'
        f'<td class="num">{number(r.heterogeneity.sum())}</td><td>{_e(r.stopped)}</td></tr>' for r in res.regions)
    shown = f"{fig.html}\n" if fig is not None else ""
    return (f'<figure class="regions" id="regions-{_e(res.feature)}">\n<h3>Regions of {_e(res.feature)}</h3>\n'
            '<table class="regions"><thead><tr><th>region</th><th>rule</th><th>rows</th><th>heterogeneity</th>'
            f"<th>why it was not split further</th></tr></thead><tbody>{rows}</tbody></table>\n{shown}"
            f"<figcaption>The rows split by the other features where {_e(res.feature)}'s ICE curves disagree "
            f"(<code>pdpx.regions</code>): the regions remove {res.removed:.1%} of its heterogeneity "
            f"({number(res.heterogeneity.sum())} over every row); method <code>{_e(res.method)}</code>, "
            f"{res.elapsed:.2f} s.</figcaption></figure>")


def _ledger(ev, fig) -> str:
    """The explained-variance ledger: each step's R² and what it bought."""
    led = ev.ledger
    rows = "".join(
        f'<tr><td class="num">{s}</td><td>{_e(w)}</td><td>{_e(a)}</td><td>{_e(o)}</td>'
        f'<td class="num">{number(r2)}</td><td class="num">{number(g)}</td></tr>'
        for s, w, a, o, r2, g in zip(led.step, led.what, led.added, led.output, led.r2, led.gain))
    notes = "".join(f"<li>{_e(n)}</li>" for n in ev.notes)
    shown = f'<figure class="explained">{fig.html}</figure>\n' if fig is not None else ""
    return ('<h3 id="explained">How much of the model the curves explain</h3>\n'
            '<p class="muted">The share of the variance of the model\'s predictions (R²) kept by the sum of the '
            "centered 1-way PD curves (the additive model they draw), then with the pairs that raise it most and "
            "with regional curves in place of a feature's global one (<code>pdpx.explained_variance</code>). "
            "What R² the ledger leaves is interaction that the curves shown do not draw.</p>\n"
            f'{shown}<table class="ledger"><thead><tr><th>step</th><th>what</th><th>added</th><th>output</th>'
            f"<th>R²</th><th>gain</th></tr></thead><tbody>{rows}</tbody></table>\n"
            f'<p class="muted">On {ev.n_rows:,} rows, method <code>{_e(ev.method)}</code>, {ev.elapsed:.2f} s.</p>\n'
            + (f'<ul class="muted">{notes}</ul>\n' if notes else ""))
