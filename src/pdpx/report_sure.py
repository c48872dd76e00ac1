"""The report's section "How sure is this curve?", computed: for a bagged forest whose in-bag counts pdpx reads
(:func:`pdpx.core.jackknife.inbag_of`), the infinitesimal jackknife's band around the PD of the most important
features (``interval="jackknife"``), drawn by :mod:`pdpx.outputs.report_uncertainty`. Any other model has no
such section."""

from __future__ import annotations

from .core.errors import PdpxError
from .core.jackknife import jackknife_interval
from .core.options import PDOptions
from .outputs.report_uncertainty import UncertaintySection

#: The features (the most important first) whose jackknife band the section shows.
SURE_TOP = 3
#: The report's options the bands are computed with.
_KEYS = ("method", "response", "target", "grid_resolution", "percentiles", "custom_values", "categorical_features",
         "sample_weight", "n_jobs", "memory_budget", "include_missing", "centered")


def uncertainty_section(model, frame, session, ranking, options: PDOptions, *, bar, drawn):
    """The section (:class:`~pdpx.outputs.report_uncertainty.UncertaintySection`, its figures handed to ``drawn``),
    or None when the model has no in-bag counts pdpx reads. A feature whose band fails leaves a note."""
    read = getattr(session.adapter, "inbag_counts", None)
    if read is None:
        return None
    try:
        read()
    except PdpxError:  # not a bagged forest pdpx reads the bags of: no section
        return None
    section = UncertaintySection()
    opts = PDOptions().but(**options.pick(_KEYS)).but(interval="jackknife", rows=session.data)
    names = [r.features[0] for r, _ in ranking][:SURE_TOP]
    bar.total += 2 * len(names)
    for name in names:
        bar.set_postfix_str(f"jackknife band of {name}")
        try:
            res = jackknife_interval(model, frame, [name], opts)
        except Exception as exc:  # noqa: BLE001 - a part of this section never loses the report
            section.notes.append(f"the jackknife band of {name} could not be computed: {type(exc).__name__}: {exc}")
            section.missing.append((f"the jackknife band of {name}", f"{type(exc).__name__}: {exc}"))
            continue
        finally:
            bar.update(1)
        section.bands.append((res, drawn(lambda res=res: res.plot())))
    return section
