"""``pdpx.report``: one self-contained HTML file a person can hand to a colleague.

The report holds the model and data summary, the features ranked by how much
their partial dependence varies, one figure per feature (PD with ICE), the
strongest 2-way interactions among the top features (or the pairs you name), and
the method and time used. Figures are embedded (base64 PNG or inline SVG): the
file has no external assets and opens offline.

Importance of a feature is the spread of its PD curve (Greenwell, Boehmke and
McCarthy 2018, "A simple and effective model-based variable importance
measure"): the standard deviation over the grid for numeric features, the range
divided by 4 for categorical ones, averaged over outputs. Interaction strength of
a pair is the standard deviation, over the 2-way grid, of what the 2-way PD
does not explain additively: ``pd(a, b) - row mean - column mean + grand mean``.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import itertools
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..core.errors import PdpxError

__all__ = ["report", "feature_importance", "interaction_strength"]

#: How many top-ranked features are paired when looking for interactions.
TOP_FOR_PAIRS = 4
#: Grid points per numeric feature of a 2-way PD in a report (unless given).
PAIR_GRID = 20


# ====================================================================== public
def report(
    model: Any,
    X,
    path: str | Path,
    *,
    features: Sequence | None = None,
    interactions: int | Sequence | str | None = "auto",
    title: str | None = None,
    n_ice: int = 100,
    seed: int = 0,
    max_rows: int | None = None,
    image_format: str = "png",
    dpi: int = 150,
    progress: bool = True,
    pair_grid_resolution: int = PAIR_GRID,
    **pd_options: Any,
) -> Path:
    """Write a self-contained HTML report of the model's partial dependence.

    Parameters
    ----------
    model : fitted model
        Anything :func:`pdpx.partial_dependence` accepts.
    X : DataFrame or ndarray of shape (n_rows, n_features)
        Background rows (and the data the summary describes).
    path : str or Path
        The HTML file to write (folders are created).
    features : list of str / int, optional
        Features to show, 1-way. Default: every column (constant columns are
        listed as skipped).
    interactions : "auto", int, list of pairs, or None, default "auto"
        ``"auto"``: the 3 strongest pairs among the 4 top-ranked features; an
        integer: that many strongest pairs; a list such as ``[("age", "bmi")]``:
        those pairs; ``None`` or ``0``: no 2-way section.
    title : str, optional
        Default: "Partial dependence of <model class>".
    n_ice : int, default 100
        ICE curves drawn per figure (a seeded subsample of the rows).
    seed : int, default 0
        Seed of the ICE subsample and of the row sample (``max_rows``).
    max_rows : int, optional
        Average over a random sample of this many rows when X has more.
    image_format : {"png", "svg"}, default "png"
        PNGs are embedded as base64, SVGs inline.
    dpi : int, default 150
        Resolution of embedded PNGs.
    progress : bool, default True
        Show a tqdm progress bar while computing and drawing.
    pair_grid_resolution : int, default 20
        Grid points per numeric feature of the 2-way results.
    **pd_options
        Options of :func:`pdpx.partial_dependence` (``method``, ``response``,
        ``grid_resolution``, ``categorical_features``, ``target``, ...).
        ``kind`` defaults to ``"both"``.

    Returns
    -------
    Path
        The file written.
    """
    import pdpx

    if image_format not in ("png", "svg"):
        raise PdpxError(f"image_format must be 'png' or 'svg', got {image_format!r}")
    pd_options.pop("progress", None)  # the report has its own bar
    pd_options.setdefault("kind", "both")
    t_start = time.perf_counter()

    frame = _as_frame(model, X)
    sampled_from = None
    if max_rows is not None and len(frame) > max_rows:
        sampled_from = len(frame)
        take = np.sort(np.random.default_rng(seed).choice(len(frame), int(max_rows), replace=False))
        frame = frame.iloc[take]
        if pd_options.get("sample_weight") is not None:
            pd_options["sample_weight"] = np.asarray(pd_options["sample_weight"])[take]

    auto_features = features is None
    wanted = [str(c) for c in frame.columns] if auto_features else list(features)
    pairs_given = _given_pairs(interactions)
    n_auto_pairs = _auto_pair_count(interactions)

    bar = _bar(progress, total=len(wanted) * 2 + (len(pairs_given) if pairs_given is not None else
                                                   math.comb(TOP_FOR_PAIRS, 2)) * 2)
    try:
        # ---------------------------------------------------------- 1-way
        results, skipped = [], {}
        for f in wanted:
            bar.set_postfix_str(f"PD {f}")
            try:
                results.append(pdpx.partial_dependence(model, frame, f, progress=False, **pd_options))
            except PdpxError as exc:
                if not auto_features:
                    raise
                skipped[str(f)] = str(exc)
            bar.update(1)
        if not results:
            raise PdpxError("no feature could be computed: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
        ranking = _rank(results)

        # ---------------------------------------------------------- 2-way
        if pairs_given is not None:
            candidates = pairs_given
        elif n_auto_pairs:
            top = [r.features[0] for r, _ in ranking[:TOP_FOR_PAIRS]]
            candidates = list(itertools.combinations(top, 2))
        else:
            candidates = []
        bar.total = len(wanted) * 2 + len(candidates) * 2
        bar.refresh()
        pair_opts = dict(pd_options, kind="average", grid_resolution=pair_grid_resolution)
        pair_results = []
        for a, b in candidates:
            bar.set_postfix_str(f"PD {a} x {b}")
            r2 = pdpx.partial_dependence(model, frame, [a, b], progress=False, **pair_opts)
            pair_results.append((r2, interaction_strength(r2)))
            bar.update(1)
        if pairs_given is None:
            pair_results.sort(key=lambda t: -t[1])
            pair_results = pair_results[:n_auto_pairs]
            bar.total = bar.n + len(results) + len(pair_results)
            bar.refresh()

        # ---------------------------------------------------------- figures
        figures = []
        for r, _ in ranking:
            bar.set_postfix_str(f"figure {r.feature_set}")
            figures.append((r, _embed(r.plot(n_ice=n_ice, seed=seed), image_format, dpi)))
            bar.update(1)
        pair_figures = []
        for r2, s in pair_results:
            bar.set_postfix_str(f"figure {r2.feature_set}")
            pair_figures.append((r2, s, _embed(r2.plot(seed=seed), image_format, dpi)))
            bar.update(1)
    finally:
        bar.close()

    page = _Page(
        title=title or f"Partial dependence of {results[0].model_name or type(model).__name__}",
        model=model, frame=frame, sampled_from=sampled_from, seed=seed, results=results, ranking=ranking,
        skipped=skipped, figures=figures, pair_figures=pair_figures, pairs_auto=pairs_given is None,
        n_candidates=len(candidates), options=pd_options, n_ice=n_ice,
        elapsed=time.perf_counter() - t_start,
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page.render(), encoding="utf-8")
    return path


def feature_importance(res) -> float:
    """Spread of a 1-way PD: standard deviation over the grid (numeric) or range / 4 (categorical).

    Averaged over the outputs. ``res`` is a 1-way :class:`PartialDependenceResult`.
    """
    avg = np.asarray(res.average, dtype=float).reshape(len(res.outputs), -1)
    if res.categorical[0]:
        per_output = (avg.max(axis=1) - avg.min(axis=1)) / 4
    else:
        per_output = avg.std(axis=1)
    return float(np.mean(per_output))


def interaction_strength(res) -> float:
    """How far a 2-way PD is from additive: sd over the grid of its interaction part.

    ``pd(a, b) - mean_b pd(a, .) - mean_a pd(., b) + mean pd``, averaged over
    outputs (grid points weighted equally). Zero for an additive model.
    """
    z = np.asarray(res.average, dtype=float)
    if z.ndim != 3:
        raise PdpxError("interaction_strength needs a 2-way result")
    r = z - z.mean(axis=2, keepdims=True) - z.mean(axis=1, keepdims=True) + z.mean(axis=(1, 2), keepdims=True)
    return float(np.mean(r.reshape(r.shape[0], -1).std(axis=1)))


# ==================================================================== helpers
def _as_frame(model, X) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    from ..core.compute import _as_frame as as_frame
    from ..core.plugins import adapt, plugin_manager

    return as_frame(X, adapt(model, plugin_manager()))


def _given_pairs(interactions) -> list[tuple] | None:
    if interactions is None or interactions is False or isinstance(interactions, (str, int, np.integer)):
        if isinstance(interactions, str) and interactions != "auto":
            raise PdpxError(f"interactions must be 'auto', a number of pairs, a list of pairs or None; "
                            f"got {interactions!r}")
        return None
    pairs = []
    for p in interactions:
        if isinstance(p, str) or len(p) != 2:
            raise PdpxError(f"each interaction must be a pair of features, e.g. ('age', 'bmi'); got {p!r}")
        pairs.append(tuple(p))
    return pairs


def _auto_pair_count(interactions) -> int:
    if interactions is None or interactions is False:
        return 0
    if isinstance(interactions, str):
        return 3
    if isinstance(interactions, (int, np.integer)):
        if interactions < 0:
            raise PdpxError(f"interactions must be >= 0, got {interactions}")
        return int(interactions)
    return 0


def _rank(results) -> list[tuple[Any, float]]:
    scored = [(r, feature_importance(r)) for r in results]
    return sorted(scored, key=lambda t: -t[1])


def _bar(progress: bool, total: int):
    from ..core.progress import progress_bar

    return progress_bar(total, progress=bool(progress), desc="pdpx report")


@dataclass
class _Figure:
    html: str
    width_in: float


def _embed(plot, image_format: str, dpi: int) -> _Figure:
    """Draw a plot into an ``<img>`` (base64 PNG) or an inline ``<svg>``."""
    import matplotlib.pyplot as plt

    width, height = plot.theme.getp("figure_size")
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
    return _Figure(tag, width)


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


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(s)).strip("-").lower() or "x"


# ======================================================================= page
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
code { font-size: .92em; }
"""


@dataclass
class _Page:
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
    options: dict
    n_ice: int
    elapsed: float

    def render(self) -> str:
        import pdpx

        stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
        body = [
            "<header>",
            f"<h1>{_e(self.title)}</h1>",
            f'<p class="meta">Written by pdpx {_e(pdpx.__version__)} on {_e(stamp)} '
            f"in {self.elapsed:.1f} s.</p>",
            "</header>",
            self._toc(),
            self._summary(),
            self._ranking_section(),
            self._feature_section(),
            self._pairs_section(),
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
        if self.pair_figures:
            items.append(("interactions", "Interactions"))
        items.append(("method", "Method and time"))
        li = "".join(f'<li><a href="#{a}">{_e(t)}</a></li>' for a, t in items)
        return f'<nav aria-label="contents"><ol>{li}</ol></nav>'

    def _summary(self) -> str:
        r0 = self.results[0]
        model_text = repr(self.model)
        if len(model_text) > 3000:
            model_text = model_text[:3000] + " ..."
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
        return (
            '<section id="summary">\n<h2>Model and data</h2>\n'
            f'<table class="kv">{table}</table>\n'
            f"<pre>{_e(model_text)}</pre>\n"
            f"<h3>Columns</h3>\n{self._columns_table()}\n</section>"
        )

    def _columns_table(self) -> str:
        from ..core.grid import is_categorical_dtype

        treated = {r.features[0]: r.categorical[0] for r in self.results}
        head = "<tr><th>column</th><th>dtype</th><th>treated as</th><th>missing</th><th>values</th></tr>"
        body = []
        for c in self.frame.columns:
            s = self.frame[c]
            cat = treated.get(str(c), is_categorical_dtype(s))
            missing = s.isna().mean()
            if cat:
                counts = s.value_counts(dropna=True)
                top = ", ".join(f"{_e(k)} ({v:,})" for k, v in counts.head(4).items())
                more = f", … {len(counts) - 4} more" if len(counts) > 4 else ""
                values = f"{len(counts)} levels: {top}{more}"
            else:
                v = pd.to_numeric(s, errors="coerce")
                values = (f"min {_fmt(v.min())} · median {_fmt(v.median())} · max {_fmt(v.max())} "
                          f"· {v.nunique():,} distinct")
            note = "" if str(c) in treated else (" <span class=\"muted\">(skipped)</span>"
                                                 if str(c) in self.skipped else "")
            body.append(
                f"<tr><td>{_e(c)}{note}</td><td><code>{_e(s.dtype)}</code></td>"
                f"<td>{'categorical' if cat else 'numeric'}</td><td class=\"num\">{missing:.1%}</td>"
                f"<td>{values}</td></tr>"
            )
        return f'<table class="columns"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'

    def _ranking_section(self) -> str:
        top = max((s for _, s in self.ranking), default=0.0) or 1.0
        rows = []
        for i, (r, s) in enumerate(self.ranking, 1):
            avg = np.asarray(r.average, dtype=float)
            rng = float(np.max(avg.max(axis=tuple(range(1, avg.ndim))) - avg.min(axis=tuple(range(1, avg.ndim)))))
            width = max(1, round(160 * s / top))
            rows.append(
                f'<tr><td class="num">{i}</td><td><a href="#feature-{_slug(r.feature_set)}">{_e(r.feature_set)}'
                f"</a></td><td>{'categorical' if r.categorical[0] else 'numeric'}</td>"
                f'<td class="num">{_fmt(s)}</td><td class="num">{_fmt(rng)}</td>'
                f'<td><span class="bar" style="width:{width}px"></span></td></tr>'
            )
        skipped = ""
        if self.skipped:
            items = "".join(f"<li><code>{_e(k)}</code>: {_e(v)}</li>" for k, v in self.skipped.items())
            skipped = f"<p>Left out:</p><ul>{items}</ul>"
        return (
            '<section id="ranking">\n<h2>Features ranked by how much their partial dependence varies</h2>\n'
            '<table class="ranking"><thead><tr><th>rank</th><th>feature</th><th>type</th><th>importance</th>'
            "<th>PD range</th><th></th></tr></thead>\n<tbody>" + "".join(rows) + "</tbody></table>\n"
            '<p class="muted">Importance: standard deviation of the PD curve over its grid (numeric features) or '
            "its range divided by 4 (categorical), averaged over outputs (Greenwell et al. 2018). PD range: the "
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
            parts.append(
                f'<figure id="feature-{_slug(r.feature_set)}" class="feature">\n<h3>{_e(r.feature_set)}</h3>\n'
                f"{fig.html}\n<figcaption>{_e(r.feature_set)}: importance {_fmt(s)}; method "
                f"<code>{_e(r.method)}</code>, {len(r.grid_values[0])} grid points, {r.elapsed:.2f} s."
                "</figcaption>\n</figure>"
            )
        parts.append("</section>")
        return "\n".join(parts)

    def _pairs_section(self) -> str:
        if not self.pair_figures:
            return ""
        how = (f"The strongest of the {self.n_candidates} pairs among the top {TOP_FOR_PAIRS} features"
               if self.pairs_auto else "The pairs asked for")
        parts = ['<section id="interactions">\n<h2>Interactions</h2>',
                 f'<p class="muted">{_e(how)}. Interaction strength: standard deviation over the 2-way grid '
                 "of pd(a, b) − mean over b − mean over a + overall mean, i.e. what the pair does beyond the sum "
                 "of its two 1-way effects (0 for an additive model), in the response's units.</p>"]
        for r, s, fig in self.pair_figures:
            parts.append(
                f'<figure id="pair-{_slug(r.feature_set)}" class="interaction">\n<h3>{_e(" × ".join(r.features))}'
                f"</h3>\n{fig.html}\n<figcaption>Interaction strength {_fmt(s)}; method <code>{_e(r.method)}</code>,"
                f" grid {' × '.join(str(len(g)) for g in r.grid_values)}, {r.elapsed:.2f} s.</figcaption>\n"
                "</figure>"
            )
        parts.append("</section>")
        return "\n".join(parts)

    def _method_section(self) -> str:
        rows = []
        all_results = [r for r in self.results] + [r for r, _, _ in self.pair_figures]
        for r in all_results:
            rows.append(
                f"<tr><td>{_e(r.feature_set)}</td><td><code>{_e(r.method)}</code></td>"
                f"<td class=\"num\">{' × '.join(str(len(g)) for g in r.grid_values)}</td>"
                f'<td class="num">{r.n_rows:,}</td><td>{_e(r.kind)}</td><td class="num">{r.elapsed:.3f}</td></tr>'
            )
        compute = sum(r.elapsed for r in all_results)
        methods = sorted({r.method for r in all_results})
        notes = sorted({n for r in all_results for n in r.notes})
        notes_html = "".join(f"<li>{_e(n)}</li>" for n in notes)
        opts = {k: v for k, v in self.options.items() if k != "sample_weight"}
        if self.options.get("sample_weight") is not None:
            opts["sample_weight"] = "given"
        opts_text = ", ".join(f"{k}={v!r}" for k, v in sorted(opts.items())) or "defaults"
        return (
            '<section id="method">\n<h2>Method and time</h2>\n'
            f"<p>Method{'s' if len(methods) > 1 else ''}: {', '.join(f'<code>{_e(m)}</code>' for m in methods)}. "
            f"Computing took {compute:.2f} s; the whole report {self.elapsed:.1f} s. "
            f"Options: <code>{_e(opts_text)}</code>.</p>\n"
            + (f"<ul>{notes_html}</ul>\n" if notes else "")
            + '<table class="timing"><thead><tr><th>feature set</th><th>method</th><th>grid</th><th>rows</th>'
            "<th>kind</th><th>seconds</th></tr></thead>\n<tbody>" + "".join(rows) + "</tbody></table>\n</section>"
        )
