"""How :func:`pdpx.report` makes its parts and accounts for them.

Figures are drawn on a side thread (:class:`SideThread`) while the main thread computes. A
part that fails without losing the whole report (a feature whose PD raised, a measure or a
figure of "Where the average misleads") leaves a note on the page in its place and is named,
with why, in one :class:`~pdpx.core.errors.IncompleteReportWarning` raised before the page is
written (:func:`warn_missing`): a report never comes back short without saying so. A feature
without a grid (a constant column) is listed on the page as left out and is not missing.
"""

from __future__ import annotations

from .core.errors import IncompleteReportWarning, PdpxError, warn
from .core.threads import run_in_context

__all__ = ["Later", "SideThread", "failed_features", "grid_check", "survival_section", "warn_missing"]


def failed_features(skipped: dict, has_grid) -> list[tuple[str, str]]:
    """``[(part, why)]`` of the features left out of the report because their PD failed (``skipped``: ``{feature:
    reason}``); those without a grid (``has_grid(feature)`` false: constant, every value missing) are not parts that
    failed."""
    return [(f"the PD of {name}", why) for name, why in skipped.items() if has_grid(name)]


def grid_check(session):
    """``has_grid(name)`` for :func:`failed_features`: whether ``session`` builds a grid for the column ``name``."""
    def has_grid(name) -> bool:
        try:
            session.grid_for(session.resolve_features([name])[0])
        except PdpxError:
            return False
        return True
    return has_grid


def warn_missing(path, missing: list[tuple[str, str]]) -> None:
    """An :class:`~pdpx.core.errors.IncompleteReportWarning` naming each missing part and why, when there is one."""
    if not missing:
        return
    parts = "; ".join(f"{part} ({why})" for part, why in missing)
    warn(IncompleteReportWarning(
        f"the report {str(path)!r} is written without {len(missing)} part(s) that failed; the page says so in their "
        f"place: {parts}", missing=missing, path=path))


class SideThread:
    """A context with ``submit(fn)``: ``fn`` runs on a thread of its own when ``on`` (joined on exit, whatever
    happens), else on the calling thread when its result is asked for."""

    def __init__(self, on: bool):
        self.on = on

    def __enter__(self):
        if self.on:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pdpx-report")
        return self

    def submit(self, fn):
        """Draw ``fn()`` on the side thread (or later, when asked for); returns what has ``result()``."""
        if self.on:  # in a copy of the caller's context: its config_context settings (the budget) hold there too
            return self.pool.submit(run_in_context(fn))
        return Later(fn)

    def __exit__(self, *exc):
        if self.on:
            self.pool.shutdown(wait=True)
        return False


class Later:
    """A result computed when asked for (the side thread's stand-in on the calling thread)."""

    def __init__(self, fn):
        self.fn = fn

    def result(self):
        """``fn()``, computed now."""
        return self.fn()


def survival_section(model, frame, session, results, options, *, drawn):
    """The section "Over time" of a survival model (:class:`~pdpx.outputs.report_survival.SurvivalSection`) and
    ``[(part, why)]`` of what failed; ``(None, [])`` for a model without survival functions. Its profile is the
    report's own 1-way results when they are of a survival response, else the survival at the default times (or
    ``times=``) of the same features, on the same rows."""
    from .core.adapter import TIME_RESPONSES
    from .core.compute import compute_many
    from .core.result import PartialDependenceCollection
    from .explain.survival import SurvivalProfile
    from .outputs.report_survival import SurvivalSection

    inp = session.inputs
    if "survival" not in inp.adapter.responses():
        return None, []
    one_way = [r for r in results if len(r.features) == 1]
    try:
        if inp.response in TIME_RESPONSES:
            curves, response = PartialDependenceCollection(one_way), inp.response
        else:
            curves, response = compute_many(model, frame, [list(r.features) for r in one_way], options.but(
                response="survival", kind="average", interval=None, ice_sample=None, rows=session.data,
                progress=False)), "survival"
        profile = SurvivalProfile(curves=curves, times=curves[0].times, response=response)
        top = profile.effects().max(axis=1).sort_values(ascending=False, kind="stable").index[:3]
    except Exception as exc:  # noqa: BLE001 - the section never loses the report
        return None, [("the section Over time", f"{type(exc).__name__}: {exc}")]
    return SurvivalSection(profile, heatmap=drawn(lambda: profile.plot()),
                           lines=[(f, drawn(lambda f=f: profile.plot(kind="lines", feature=f))) for f in top]), []
