"""``pdpx.report``: one self-contained HTML file a person can hand to a colleague.

The top floor (``docs/architecture.md``): this module computes what the report shows
(sessions, :func:`pdpx.importance`, :func:`pdpx.h_statistic`) and composes the figures of
:mod:`pdpx.outputs` into the page :mod:`pdpx.outputs.report_page` writes.

The report holds the model and data summary, the features ranked by
:func:`pdpx.importance` (the spread of their PD curves, Greenwell, Boehmke and
McCarthy 2018) with its bar chart, one figure per feature (PD with ICE), the
strongest 2-way interactions among the top features (or the pairs you name) by
Friedman's H (:func:`pdpx.h_statistic`, pairwise and overall) with their 2-way
PD figures, "where the average misleads" (the features ranked by the heterogeneity of their ICE
curves, :func:`pdpx.heterogeneity`, the regions of the most heterogeneous ones, :func:`pdpx.regions`, and the
explained-variance ledger, :func:`pdpx.explained_variance`), and the method and time used. Figures are
embedded (base64 PNG or inline SVG): the file has no external assets and opens offline.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .core.adapter import checked_predict
from .core.config import config_context, get_config
from .core.data import as_frame
from .core.deprecation import renamed_arguments
from .core.errors import ExtrapolationWarning, PdpxError
from .core.files import write_text_atomic
from .core.options import PDOptions
from .core.plugins import adapt
from .core.progress import progress_bar
from .core.rows import require
from .core.session import Session
from .core.stacked import stacked_partial_dependence
from .core.validation import (
    SEED,
    Boolean,
    InstanceOf,
    Integral,
    Options,
    PathLike,
    String,
    validate_params,
)
from .explain.explained import explained_variance
from .explain.ice_spread import heterogeneity as heterogeneity_of
from .explain.interaction import h_statistic_of
from .explain.pd_importance import importance_of, importance_table
from .explain.subgroups import regions as regions_of
from .outputs.plot_explain import plot_importance
from .outputs.plot_style import check_backend, windowless_backend
from .outputs.report_heterogeneity import HeterogeneitySection
from .outputs.report_page import Page, check_report_path, columns_table, embed
from .report_parts import SideThread, failed_features, grid_check, survival_section, warn_missing
from .report_rows import ledger, page_frame, rows_note, seeded_rows, spark_rows
from .report_sure import uncertainty_section
from .rows import place_of

__all__ = ["report"]

#: How many top-ranked features are paired when looking for interactions.
TOP_FOR_PAIRS = 4
#: Grid points per numeric feature of a 2-way PD in a report (unless given).
PAIR_GRID = 20
#: The bootstrap interval drawn around each 1-way PD (``interval=``), when every row's ICE fits the budget.
DEFAULT_INTERVAL = 0.95
#: "Where the average misleads": regions for at most this many features (``heterogeneity="auto"``), those whose
#: heterogeneity is at least HETEROGENEITY_SHARE of the variance of the model's predictions (on some output).
HETEROGENEITY_TOP = 3
HETEROGENEITY_SHARE = 0.05
#: The explained-variance ledger: the 1-way curves of this many top-ranked features, on at most this many rows.
LEDGER_FEATURES, LEDGER_SAMPLE = 8, 10_000
#: heterogeneity and regions read a seeded sample of at most this many rows (every row's ICE curve of every feature)
SECTION_ROWS = 50_000
#: Options of partial_dependence that :func:`pdpx.importance` and :func:`pdpx.h_statistic` receive from the report.
_IMPORTANCE_KEYS = ("method", "response", "target", "times", "grid_resolution", "percentiles", "custom_values",
                    "categorical_features", "sample_weight", "n_jobs", "memory_budget", "method_options")
_H_KEYS = ("method", "response", "target", "times", "categorical_features", "sample_weight", "n_jobs", "memory_budget",
           "method_options")
#: report()'s old argument names (deprecated): the new name, as partial_dependence and h_statistic spell it, and
#: what it accepts.
_RENAMED = {"n_ice": ("ice_sample", [Integral(low=1)]), "seed": ("random_state", SEED),
            "max_rows": ("sample", [Integral(low=1), None])}


@validate_params({
    "path": [PathLike()],
    "features": [InstanceOf(list, tuple, pd.Index, np.ndarray, what="a list of column names"), None],
    "interactions": [Options("auto"), Integral(low=0, what="a number of pairs (>= 0)"),
                     InstanceOf(list, tuple, what="a list of pairs of column names"), None],
    "title": [String("a title"), None],
    "ice_sample": _RENAMED["n_ice"][1],
    "random_state": _RENAMED["seed"][1],
    "sample": _RENAMED["max_rows"][1],
    "image_format": [Options("png", "svg")],
    "dpi": [Integral(low=1, high=2400)],
    "progress": [Boolean()],
    "pair_grid_resolution": [Integral(low=2)],
    "heterogeneity": [Options("auto"), Integral(low=0, what="a number of features (>= 0)"), None],
})
def report(
    model: Any,
    X,
    path: str | Path,
    *,
    features: Sequence | None = None,
    interactions: int | Sequence | str | None = "auto",
    title: str | None = None,
    ice_sample: int = 100,
    random_state: int = 0,
    sample: int | None = None,
    image_format: str = "png",
    dpi: int = 150,
    progress: bool = True,
    pair_grid_resolution: int = PAIR_GRID,
    heterogeneity: int | str | None = "auto",
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
        The HTML file to write, ending in ``.html`` or ``.htm`` (any other name is refused before any work;
        folders are created).
    features : list of str / int, optional
        Features to show, 1-way. Default: every column (constant columns are
        listed as skipped).
    interactions : "auto", int, list of pairs, or None, default "auto"
        ``"auto"``: the 3 strongest pairs by Friedman's H among the 4 top-ranked
        features; an integer: that many strongest pairs; a list such as
        ``[("age", "bmi")]``: those pairs; ``None`` or ``0``: no 2-way section.
    title : str, optional
        Default: "Partial dependence of <model class>".
    ice_sample : int, default 100
        ICE curves computed and drawn per figure (a seeded sample of the rows; the PD
        still averages every row), as ``ice_sample`` of :func:`pdpx.partial_dependence`.
        Its old name ``n_ice`` works, deprecated, until pdpx 0.2.0.
    random_state : int, default 0
        Seed of the ICE sample, of the row sample (``sample``) and of the bootstrap
        interval. Its old name ``seed`` works, deprecated, until pdpx 0.2.0.
    sample : int, optional
        Average over a random sample of this many rows when X has more, as ``sample`` of
        :func:`pdpx.h_statistic`. Its old name ``max_rows`` works, deprecated, until pdpx 0.2.0.
    image_format : {"png", "svg"}, default "png"
        PNGs are embedded as base64, SVGs inline.
    dpi : int, default 150
        Resolution of embedded PNGs.
    progress : bool, default True
        Show a tqdm progress bar while computing and drawing.
    pair_grid_resolution : int, default 20
        Grid points per numeric feature of the 2-way results.
    heterogeneity : "auto", int or None, default "auto"
        The section "Where the average misleads": ``"auto"``: the features ranked by the heterogeneity of their ICE
        curves, the regions of at most 3 of them (those whose heterogeneity is at least 5% of the variance of the
        model's predictions) and the explained-variance ledger of the 8 top-ranked features; an integer: regions for
        at most that many; ``None`` or ``0``: no section. Not for a dict of models. The ledger runs on a sample of
        10,000 rows when there are more (``sample`` of :func:`pdpx.explained_variance`).
    **pd_options
        Options of :func:`pdpx.partial_dependence` (``method``, ``response``,
        ``grid_resolution``, ``categorical_features``, ``target``, ...).
        ``kind`` defaults to ``"both"``; ``include_missing`` to ``"auto"`` (a
        missing-value point for features with missing values); ``interval`` to 0.95
        (a bootstrap ribbon around each PD) when every row's ICE fits a quarter of
        the memory budget.

    Returns
    -------
    Path
        The file written.

    Warns
    -----
    IncompleteReportWarning
        Before the page is written, when parts of it failed (a feature whose PD raised a ``PdpxError``, a measure or
        figure of "Where the average misleads"): each is named, with why, in its ``missing``; the page says so in
        their place. As an error (``warnings.simplefilter("error", pdpx.IncompleteReportWarning)``) it leaves a file
        already at ``path`` as it was. Any other failure of the model raises, and leaves that file as it was too.
    """
    new = renamed_arguments("report", pd_options, _RENAMED,
                            {"ice_sample": ice_sample, "random_state": random_state, "sample": sample},
                            {"ice_sample": 100, "random_state": 0, "sample": None})
    n_ice, seed, max_rows = new["ice_sample"], new["random_state"], new["sample"]
    options = PDOptions.checked("report", pd_options)
    path = check_report_path(path)
    check_backend("pdpx.report")
    # the report's budget is the budget of everything it does, on every thread (the figures are drawn on another)
    with _budget(options):
        if isinstance(model, dict):
            return _models_report(model, X, path, features=features, title=title, seed=seed, max_rows=max_rows,
                                  image_format=image_format, dpi=dpi, progress=progress, options=options)
        return _one_model_report(model, X, path, features=features, interactions=interactions, title=title,
                                 n_ice=n_ice, seed=seed, max_rows=max_rows, image_format=image_format, dpi=dpi,
                                 progress=progress, pair_grid_resolution=pair_grid_resolution, options=options,
                                 heterogeneity=heterogeneity)


def _budget(options: PDOptions):
    """``memory_budget=`` given to the report as the setting of its context (else nothing changes)."""
    if options.memory_budget is None:
        return contextlib.nullcontext()
    return config_context(memory_budget=options.memory_budget)


def _one_model_report(model, X, path: Path, *, features, interactions, title, n_ice, seed, max_rows, image_format,
                      dpi, progress, pair_grid_resolution, options: PDOptions, heterogeneity="auto") -> Path:
    """:func:`report` of one model (its options checked, the path writable)."""
    t_start = time.perf_counter()
    frame, sampled_from, options = _report_rows(model, X, options, n_ice=n_ice, seed=seed, max_rows=max_rows)
    # everything that can be checked is checked before the work starts
    session = Session(model, frame, options.but(progress=False))
    auto_features = features is None
    wanted = [[j] for j in range(len(session.names))] if auto_features else [
        session.resolve_features([f]) for f in features]
    pairs_given = _given_pairs(interactions)
    if pairs_given is not None:
        pairs_given = [tuple(session.names[j] for j in session.resolve_features(list(p))) for p in pairs_given]
    n_auto_pairs = _auto_pair_count(interactions)
    pair_session = Session(model, frame, options.but(
        rows=session.data,  # every session of the report reads these rows: one validated copy, hashed once
        kind="average", grid_resolution=pair_grid_resolution, include_missing=False, interval=None, ice_sample=None,
        progress=False))

    # each figure carries its own flag where the data does not support it (report_page._flag), so
    # the extrapolation warnings of the calls below would only repeat it on the console
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        # likewise the points a figure leaves out where the model predicted NaN (report_page flags them)
        warnings.filterwarnings("ignore", message=r".*Removed \d+ rows containing missing values")
        bar = _bar(progress, total=len(wanted) * 2 + (len(pairs_given) if pairs_given is not None else
                                                       math.comb(TOP_FOR_PAIRS, 2)) * 2)
        # figures are drawn (Python, holding the GIL) on a side thread as soon as what they show is computed,
        # while the main thread goes on computing (much of it in compiled kernels that leave the GIL free);
        # only with a backend that may draw off the main thread, else each is drawn when its turn comes
        try:
            with SideThread(_draws_off_main_thread()) as side:
                def drawn_plot(plot):
                    def draw():
                        out = embed(plot(), image_format, dpi)
                        bar.update(1)
                        return out
                    return side.submit(draw)

                # ------------------------------------------------------ 1-way
                # the pairs Friedman's H and the 2-way section may ask for later, on the same rows, are planned
                # too: a method that shares work among feature sets (exact's pattern counts, kept with the
                # model) then does it once for all of them
                session.plan(wanted + _later_pairs(wanted, pairs_given, n_auto_pairs, session))
                results, skipped, one_way_figures = _one_way_section(
                    session, wanted, skip_errors=auto_features, bar=bar,
                    drawn=lambda r: drawn_plot(lambda: r.plot(n_ice=n_ice, seed=seed)))
                columns_html = side.submit(lambda: columns_table(page_frame(frame, session), results, skipped))
                bar.set_postfix_str("importance")
                # the spread of the PD curves just computed (on the grids importance would use: the same options)
                imp = importance_table(results, "pd", options.sample_weight,
                                       {(k,): v for k, v in skipped.items()})
                ranking = _rank(results, imp)
                importance_figure = drawn_plot(lambda: plot_importance(imp, top=30))
                bar.update(1)

                # ------------------------------------------------------ 2-way
                candidates = _pair_candidates(pairs_given, n_auto_pairs, ranking)
                hstat, chosen = None, []
                if candidates:
                    bar.set_postfix_str("Friedman's H")
                    hstat = h_statistic_of(model, frame, _h_order(candidates, ranking), candidates, None, seed,
                                           _pick(options, _H_KEYS).but(rows=session.data))
                    chosen = _strongest(hstat, candidates, None if pairs_given is not None else n_auto_pairs)
                    bar.update(1)
                # every step: the 1-way PDs, importance, H, the pairs, then the figures (1-way, importance,
                # H's two, pairs), however many the side thread has drawn so far
                bar.total = (len(wanted) + 1 + (1 if candidates else 0) + len(chosen)
                             + len(results) + 1 + 2 * (hstat is not None) + len(chosen))
                bar.refresh()
                h_figures = []
                if hstat is not None:
                    h_figures = [drawn_plot(lambda which=which: hstat.plot(which, top=12))
                                 for which in ("pairwise", "overall")]
                pair_results = []
                pair_session.plan([pair_session.resolve_features([a, b]) for (a, b), _ in chosen])
                for (a, b), s in chosen:
                    bar.set_postfix_str(f"PD {a} x {b}")
                    r2 = pair_session.compute(pair_session.resolve_features([a, b]))
                    pair_results.append((r2, s, drawn_plot(lambda r2=r2: r2.plot(seed=seed))))
                    bar.update(1)
                sure = uncertainty_section(model, frame, session, ranking, options, bar=bar, drawn=drawn_plot)
                spread = _heterogeneity_section(model, frame, session, ranking, options, heterogeneity, seed=seed,
                                                bar=bar, drawn=drawn_plot)
                over_time, lost = survival_section(model, frame, session, results, options, drawn=drawn_plot)
                bar.set_postfix_str("figures")
                # ---------------------------------------------------------- figures, in the page's order
                figures = [(r, one_way_figures[id(r)].result()) for r, _ in ranking]
                importance_figure = importance_figure.result()
                sure = sure.resolved() if sure is not None else None
                h_figures = [f.result() for f in h_figures]
                pair_figures = [(r2, s, f.result()) for r2, s, f in pair_results]
                columns_html = columns_html.result()
                spread = spread.resolved() if spread is not None else None
                over_time = over_time.resolved() if over_time is not None else None
        finally:
            bar.close()

    page = Page(
        title=title or f"Partial dependence of {results[0].model_name or type(model).__name__}",
        model=model, frame=page_frame(frame, session), sampled_from=sampled_from, seed=seed, results=results,
        ranking=ranking, rows_note=rows_note(frame, session, n_ice, hstat, SECTION_ROWS if spread else 0),
        skipped=skipped, figures=figures, pair_figures=pair_figures, pairs_auto=pairs_given is None,
        n_candidates=len(candidates), top_for_pairs=TOP_FOR_PAIRS, options=_shown(options), n_ice=n_ice,
        elapsed=time.perf_counter() - t_start, importance=imp, importance_figure=importance_figure,
        hstat=hstat, h_figures=h_figures, columns_html=columns_html,
        sections=[s for s in (spread, over_time, sure) if s],
    )
    html = page.render()
    warn_missing(path, failed_features(skipped, grid_check(session)) + (spread.missing if spread else []) + lost
                 + (over_time.missing if over_time else []) + (sure.missing if sure else []))
    return write_text_atomic(path, html)


def _heterogeneity_section(model, frame, session, ranking, options: PDOptions, wanted, *, seed, bar, drawn):
    """The section "Where the average misleads" (:class:`~pdpx.outputs.report_heterogeneity.HeterogeneitySection`,
    its figures handed to ``drawn``), or None when ``wanted`` is None or 0. Each measure runs on the report's rows
    (heterogeneity and regions on a seeded sample of :data:`SECTION_ROWS` of them, the ledger of
    :data:`LEDGER_SAMPLE`, when there are more) with the report's options; one that fails leaves a note in its place
    (the rest of the report is written)."""
    if wanted is None or wanted is False or (not isinstance(wanted, str) and int(wanted) == 0):
        return None
    top = HETEROGENEITY_TOP if isinstance(wanted, str) else int(wanted)
    names = [r.features[0] for r, _ in ranking]
    kw = options.pick(_IMPORTANCE_KEYS)
    section = HeterogeneitySection(
        rule=f"Regions are shown for at most {top} feature(s), the most heterogeneous of those whose heterogeneity "
             f"is at least {HETEROGENEITY_SHARE:.0%} of the variance of the model's predictions (on some output).")
    bar.total += 4 + 2 * top  # each measure and its figure
    bar.set_postfix_str("heterogeneity")

    def attempt(what, fn):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - a measure of this section never loses the report
            section.notes.append(f"{what} could not be computed: {type(exc).__name__}: {exc}")
            section.missing.append((what, f"{type(exc).__name__}: {exc}"))
            return None
        finally:
            bar.update(1)

    rows = seeded_rows(frame, session, seed, SECTION_ROWS, kw)  # above SECTION_ROWS rows; kw: the sample's weights
    het = attempt("heterogeneity", lambda: heterogeneity_of(model, rows, names, **kw))
    if het is not None:
        pred = checked_predict(session.adapter, rows, session.response)[:, session.outputs]
        w = np.ones(len(rows)) if kw.get("sample_weight") is None else np.asarray(kw["sample_weight"], float)
        var = ((pred - (w @ pred) / w.sum()) ** 2).T @ w / w.sum()  # per output
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(var > 0, het.heterogeneity / var, 0.0).max(axis=1)
        section.share = dict(zip(het.features, map(float, share)))
        section.heterogeneity, section.bars = het, drawn(lambda: het.plot("bars", top=30))
        ranked = [f for f in het.table.feature.drop_duplicates() if section.share[f] >= HETEROGENEITY_SHARE]
        for f in ranked[:top]:
            bar.set_postfix_str(f"regions of {f}")
            found = attempt(f"the regions of {f}", lambda f=f: regions_of(model, rows, f, **kw))
            if found is not None:
                section.regions.append((found, drawn(lambda found=found: found.plot())))
    bar.set_postfix_str("explained variance")
    ev = attempt("the explained variance", lambda: ledger(explained_variance, model, frame, session,
                                                          names[:LEDGER_FEATURES], seed, LEDGER_SAMPLE,
                                                          options.pick(_H_KEYS)))
    if ev is not None:
        section.explained, section.ledger_figure = ev, drawn(lambda: ev.plot())
    return section


def _report_rows(model, X, options: PDOptions, *, n_ice: int, seed: int, max_rows: int | None):
    """The report's rows and options: ``kind="both"`` and a missing-value point unless given, only the ICE curves
    the figures draw (the PD still averages every row), a seeded sample of ``max_rows`` rows when X has more (their
    weights with them), a bootstrap interval when it fits the memory budget. Returns (rows, the number of rows
    sampled from or None, options)."""
    defaults = {"kind": "both", "include_missing": "auto"}
    options = options.but(**{k: v for k, v in defaults.items() if k not in options.given})
    if options.kind != "average" and options.ice_sample is None:
        options = options.but(ice_sample=n_ice, random_state=seed)
    place = place_of(X)  # where X's rows live, asked once, at the public entry point
    require(place, "report", "report")
    frame, sampled_from = (X if place == "spark" else _as_frame(model, X)), None
    if place == "spark":  # all its rows where they live, or the sample's rows brought here
        frame, sampled_from, options = spark_rows(model, frame, options, seed, max_rows)
    elif max_rows is not None and len(frame) > max_rows:
        sampled_from = len(frame)
        take = np.sort(np.random.default_rng(seed).choice(len(frame), int(max_rows), replace=False))
        frame = frame.iloc[take]
        if options.sample_weight is not None:
            options = options.but(sample_weight=np.asarray(options.sample_weight)[take])
    n_rows = frame.count() if place == "spark" and sampled_from is None else len(frame)
    if "interval" not in options.given and _interval_fits(n_rows, options):
        options = options.but(interval=DEFAULT_INTERVAL, random_state=options.random_state
                              if "random_state" in options.given else seed)
    return frame, sampled_from, options


def _one_way_section(session, wanted: list, *, skip_errors: bool, bar, drawn):
    """The 1-way results of ``wanted``, each handed to ``drawn`` for its figure; with ``skip_errors`` (the report
    chose the features) a feature that cannot be computed is left out with its reason, else its error is raised.
    Returns (results, {feature: reason}, {id(result): its figure to come})."""
    results, skipped, figures = [], {}, {}
    for f in wanted:
        name = session.names[f[0]]
        bar.set_postfix_str(f"PD {name}")
        try:
            r = session.compute(f)
        except PdpxError as exc:
            if not skip_errors:
                raise
            skipped[name] = str(exc)
        else:
            results.append(r)
            figures[id(r)] = drawn(r)
        bar.update(1)
    if not results:
        raise PdpxError("no feature could be computed: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    return results, skipped, figures


def _pair_candidates(pairs_given, n_auto_pairs: int, ranking) -> list:
    """The pairs Friedman's H is asked about: those given, else (when the report picks pairs) every pair among the
    ``TOP_FOR_PAIRS`` top-ranked features, else none."""
    if pairs_given is not None:
        return pairs_given
    if n_auto_pairs:
        return list(itertools.combinations([r.features[0] for r, _ in ranking[:TOP_FOR_PAIRS]], 2))
    return []


def _h_order(candidates, ranking) -> list:
    """The features of the candidate pairs, by rank (those not ranked last, by name)."""
    in_pairs = {f for p in candidates for f in p}
    order = [r.features[0] for r, _ in ranking if r.features[0] in in_pairs]
    return order + sorted(in_pairs - set(order))


def _draws_off_main_thread() -> bool:
    """Whether matplotlib may draw on another thread here: a backend without windows (Agg, SVG, PDF, the
    notebook's inline one). An interactive backend (Tk, Qt, macOS) draws on the main thread only."""
    return windowless_backend()


def _later_pairs(wanted: list, pairs_given, n_auto_pairs: int, session) -> list:
    """The pairs (positions) H and the 2-way section may compute: those given, else any pair of the 1-way
    features when pairs are chosen automatically (the strongest come from among them), else none."""
    if pairs_given is not None:
        return [session.resolve_features(list(p)) for p in pairs_given]
    if not n_auto_pairs:
        return []
    return [[a[0], b[0]] for a, b in itertools.combinations(wanted, 2)]


def _pick(options: PDOptions, keys) -> PDOptions:
    """The options among ``keys`` that were given (and are not None), the others at their defaults."""
    return PDOptions().but(**options.pick(keys))


def _shown(options: PDOptions) -> dict:
    """The options the report was computed with, as the page lists them (what was given or set)."""
    return {k: v for k, v in options.items().items() if k in options.given and k != "progress"}


def _strongest(hstat, candidates, keep: int | None) -> list:
    """``[((a, b), H)]`` for the candidate pairs, H averaged over outputs; the ``keep`` strongest when given."""
    mean_h = hstat.pairwise.groupby(["feature_1", "feature_2"], sort=False)["h"].mean()
    scored = [((a, b), float(mean_h.get((a, b), 0.0))) for a, b in candidates]
    if keep is None:
        return scored
    return sorted(scored, key=lambda t: _descending(t[1]))[:keep]


def _as_frame(model, X) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    return as_frame(X, adapt(model))


def _given_pairs(interactions) -> list[tuple] | None:
    if interactions is None or interactions is False or isinstance(interactions, (str, int, np.integer)):
        if isinstance(interactions, str) and interactions != "auto":
            raise PdpxError(f"interactions must be 'auto', a number of pairs, a list of pairs or None; "
                            f"got {interactions!r}")
        return None
    pairs = []
    for p in interactions:
        if not isinstance(p, (list, tuple)) or len(p) != 2:
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


def _rank(results, imp: pd.DataFrame) -> list[tuple[Any, float]]:
    """Results with their importance (averaged over outputs), most important first."""
    score = imp.groupby("feature")["importance"].mean()
    scored = [(r, float(score.get(r.features[0], 0.0))) for r in results]
    return sorted(scored, key=lambda t: _descending(t[1]))


def _descending(score: float) -> float:
    """Sort key: the largest score first, a score that is not a number (the model predicted NaN) last."""
    return -score if math.isfinite(score) else math.inf


def _models_report(models: dict, X, path, *, features, title, seed, max_rows, image_format, dpi, progress,
                   options: PDOptions) -> Path:
    """``report({"name": model, ...}, X, path)``: each feature's PD curves of every model, overlaid."""
    if not models:
        raise PdpxError("report(): the dict of models is empty; pass {'name': model, ...}")
    t_start = time.perf_counter()
    frame = _as_frame(next(iter(models.values())), X)
    sampled_from = None
    if max_rows is not None and len(frame) > max_rows:
        sampled_from = len(frame)
        frame = frame.iloc[np.sort(np.random.default_rng(seed).choice(len(frame), int(max_rows), replace=False))]
    options = options.but(kind="average", progress=None)
    if "include_missing" not in options.given:
        options = options.but(include_missing="auto")
    if "interval" not in options.given and _interval_fits(len(frame), options):
        options = options.but(interval=DEFAULT_INTERVAL, random_state=options.random_state
                              if "random_state" in options.given else seed)
    names = [str(c) for c in frame.columns] if features is None else list(features)
    stacks, skipped = [], {}
    with _bar(progress, total=2 * len(names)) as bar:
        for f in names:
            try:
                stacks.append(stacked_partial_dependence(models, frame, f, options))
            except PdpxError as exc:
                if features is not None:
                    raise
                skipped[str(f)] = str(exc)
            bar.update(1)
        if not stacks:
            raise PdpxError("no feature could be computed: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
        names_done = [st.results[0].features[0] for st in stacks]
        best: dict = {}
        for m in models.values():  # each feature ranked by its largest importance over the models
            score = importance_of(m, frame, names_done, "pd", _pick(options, _IMPORTANCE_KEYS))
            score = score.groupby("feature")["importance"].mean()
            for f in names_done:
                best[f] = max(best.get(f, 0.0), float(score.get(f, 0.0)))
        scored = sorted(((st, best[st.results[0].features[0]]) for st in stacks), key=lambda t: -t[1])
        figures = []
        for st, _ in scored:
            figures.append((st.results[0], embed(st.plot(), image_format, dpi)))
            bar.update(1)
    page = Page(
        title=title or "Partial dependence of " + ", ".join(map(str, models)), model=models, frame=frame,
        sampled_from=sampled_from, seed=seed, results=[r for st in stacks for r in st], skipped=skipped,
        ranking=[(st.results[0], s) for st, s in scored], figures=figures, pair_figures=[], pairs_auto=False,
        n_candidates=0, top_for_pairs=TOP_FOR_PAIRS, options=_shown(options), n_ice=0,
        elapsed=time.perf_counter() - t_start,
    )
    html = page.render()
    if skipped:  # a feature the first model has a grid for failed (the grids are the same for every model)
        has_grid = grid_check(Session(next(iter(models.values())), frame, options.but(interval=None)))
        warn_missing(path, failed_features(skipped, has_grid))
    return write_text_atomic(path, html)


def _interval_fits(n_rows: int, options: PDOptions) -> bool:
    """Whether every row's ICE curves (what the bootstrap resamples) of ``n_rows`` rows fit a quarter of the memory
    budget."""
    budget = get_config()["memory_budget"] if options.memory_budget is None else options.memory_budget
    need = n_rows * (options.grid_resolution + 1) * 8 * 4
    return need <= budget // 4


def _bar(progress: bool, total: int):
    return progress_bar(total, progress=bool(progress), desc="pdpx report")
