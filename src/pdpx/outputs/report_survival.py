"""The report's section "Over time", for survival models (computed by :mod:`pdpx.reporting`).

A :class:`~pdpx.explain.survival.SurvivalProfile` as HTML: the feature x time heat map of the effects, the table of
each feature's time-varying share and its effect at each time, and the PD lines coloured by time of the features
with the largest effects (``docs/survival.md``).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, replace
from typing import Any

from .report_heterogeneity import drawn_or_noted


def _e(x) -> str:
    return html.escape(str(x), quote=True)


@dataclass
class SurvivalSection:
    """What the section shows: ``profile`` (a :class:`~pdpx.explain.survival.SurvivalProfile`), ``heatmap`` and
    ``lines`` (``[(feature, figure)]``) its figures (:class:`~pdpx.outputs.report_page.Figure` objects, or futures
    of them until :meth:`resolved`), ``notes`` and ``missing`` as in the other sections."""

    anchor = "over-time"
    toc = "Over time"

    profile: Any
    heatmap: Any = None
    lines: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    missing: list = field(default_factory=list)

    def resolved(self) -> SurvivalSection:
        """The section with its figures drawn (one that fails is left out, with a note, and missing)."""
        notes, missing = list(self.notes), list(self.missing)

        def done(fig, what):
            return drawn_or_noted(fig, what, notes, missing)

        return replace(self, heatmap=done(self.heatmap, "the effects over time"),
                       lines=[(f, done(fig, f"{f} over time")) for f, fig in self.lines], notes=notes,
                       missing=missing)

    def render(self) -> str:
        """The section as HTML."""
        p = self.profile
        scale = "survival probability" if p.response == "survival" else "cumulative hazard"
        parts = [f'<section id="{self.anchor}">\n<h2>Over time</h2>',
                 f'<p class="muted">The model\'s {scale} at {len(p.times)} times '
                 f"({', '.join(f'{t:g}' for t in p.times)}): each feature's <b>effect</b> at a time is the range of "
                 "its partial dependence over its grid; its <b>time-varying share</b> is how much of its effect "
                 "changes shape over time rather than scaling one curve (0: the same curve at every time, scaled, "
                 "as a Cox model's cumulative hazard; towards 1: the effect turns with time; "
                 "<code>pdpx.survival_profile</code>).</p>"]
        parts += [f'<p class="flag">{_e(n)}</p>' for n in self.notes]
        if self.heatmap is not None:
            parts.append(f'<figure class="survival">{self.heatmap.html}</figure>')
        parts.append(self._table())
        for feature, fig in self.lines:
            if fig is not None:
                parts.append(f'<figure class="survival" id="over-time-{_e(feature)}">{fig.html}</figure>')
        parts.append("</section>")
        return "\n".join(parts)

    def _table(self) -> str:
        eff = self.profile.effects()
        shares = self.profile.shares
        head = "".join(f'<th>t = {t:g}</th>' for t in eff.columns)
        rows = "".join(
            f'<tr><td>{_e(f)}</td><td class="num">{shares[f]:.3f}</td>'
            + "".join(f'<td class="num">{v:.4g}</td>' for v in eff.loc[f]) + "</tr>"
            for f in shares.index)
        return (f'<table class="survival"><thead><tr><th>feature</th><th>time-varying share</th>{head}</tr></thead>'
                f"<tbody>{rows}</tbody></table>")
