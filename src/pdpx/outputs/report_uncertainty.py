"""The report's section "How sure is this curve?" (computed by :mod:`pdpx.report_sure`): for a bagged forest whose
in-bag counts pdpx reads, the most important features' PD with the infinitesimal jackknife's band
(``interval="jackknife"``, :mod:`pdpx.core.jackknife`), as HTML.

A feature whose band failed leaves a note in its place, and is listed in ``missing`` (named in the report's
:class:`~pdpx.core.errors.IncompleteReportWarning`); the rest of the report is written.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, replace

import numpy as np

from .report_heterogeneity import drawn_or_noted


def _e(x) -> str:
    return html.escape(str(x), quote=True)


@dataclass
class UncertaintySection:
    """What the section shows: ``bands``, ``[(JackknifeResult, figure)]`` (figures are
    :class:`~pdpx.outputs.report_page.Figure` objects, or futures of them until :meth:`resolved`); ``notes``: what
    the page says of the parts that failed, and ``missing``: those parts, ``[(part, why)]``."""

    anchor = "how-sure"
    toc = "How sure is this curve?"

    bands: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    missing: list = field(default_factory=list)

    def resolved(self) -> UncertaintySection:
        """The section with its figures drawn (a figure that fails to draw is left out, with a note)."""
        notes, missing = list(self.notes), list(self.missing)
        bands = [(res, drawn_or_noted(fig, f"the jackknife band of {res.features[0]}", notes, missing))
                 for res, fig in self.bands]
        return replace(self, bands=bands, notes=notes, missing=missing)

    def render(self) -> str:
        """The section as HTML."""
        parts = [f'<section id="{self.anchor}">\n<h2>How sure is this curve?</h2>',
                 '<p class="muted">The curves above are this fitted model\'s. Another sample of the same size '
                 "would give another forest, and another curve: the shaded band is the <b>infinitesimal "
                 "jackknife</b> (Wager, Hastie &amp; Efron, 2014; <code>interval=\"jackknife\"</code>), the "
                 "learner's variance estimated from this one fit, from each tree's PD and the rows it drew. It "
                 "does not cover the model's bias nor the rows the PD averages over, and it is an estimate, "
                 "noisy with few trees: read it as the size of the learner's variance, not as a calibrated "
                 "confidence interval. <code>oob=True</code> on the training rows gives the PD through only the "
                 "trees that did not see each row.</p>"]
        parts += [f'<p class="flag">{_e(n)}</p>' for n in self.notes]
        if self.bands:
            parts.append(self._table())
        for res, fig in self.bands:
            if fig is not None:
                parts.append(f'<figure class="jackknife">{fig.html}\n<figcaption>{_e(res.features[0])}: '
                             f"{_e(res.band)}.</figcaption></figure>")
        parts.append("</section>")
        return "\n".join(parts)

    def _table(self) -> str:
        rows = []
        for res, _ in self.bands:
            for k, out in enumerate(res.outputs):
                avg, se = np.asarray(res.average[k], float), np.asarray(res.se[k], float)
                span = float(np.nanmax(avg) - np.nanmin(avg))
                rows.append(f"<tr><td>{_e(res.features[0])}</td><td>{_e(out)}</td>"
                            f'<td class="num">{span:.4g}</td><td class="num">{float(np.nanmean(se)):.4g}</td>'
                            f'<td class="num">{float(np.nanmax(se)):.4g}</td></tr>')
        first = self.bands[0][0]
        return ('<table class="jackknife"><thead><tr><th>feature</th><th>output</th><th>range of the PD</th>'
                "<th>mean se</th><th>largest se</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>\n"
                f'<p class="muted">{len(first.members)} trees, in-bag counts of {first.n_train:,} training rows; '
                "se: the standard error of the PD at a grid point (the band is the PD &plusmn; z &times; se).</p>")
