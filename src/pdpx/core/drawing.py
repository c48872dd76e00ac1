"""``res.plot()`` and ``res.save()`` of every result, written once: the figure backend draws.

Results live in the core and in :mod:`pdpx.explain`; figures are drawn above them, in
:mod:`pdpx.outputs`. No import goes up: :class:`Drawable` asks the plugin manager for the
figure backend (the ``pdpx_figure_backend`` hook, which :mod:`pdpx.outputs.draw`
implements) and hands it the result, whose :attr:`Drawable.figure` names the figure that
draws it.
"""

from __future__ import annotations

from pathlib import Path

from .errors import PdpxError
from .plugins import plugin_manager


def figure_backend():
    """The registered figure backend (the first ``pdpx_figure_backend`` hook that answers)."""
    backend = plugin_manager().hook.pdpx_figure_backend()
    if backend is None:  # pragma: no cover - pdpx.outputs.draw is built in
        raise PdpxError("no figure backend is registered; pdpx.outputs.draw is pdpx's own (plotnine)")
    return backend


class Drawable:
    """A result that draws itself: :meth:`plot` and :meth:`save` go to the figure backend.

    Subclasses set :attr:`figure`, the name of the figure :mod:`pdpx.outputs.draw` draws them with.
    """

    #: Which figure draws this result (a name the figure backend knows).
    figure: str = ""
    #: True for a result whose table (``to_frame()``, averages only) and figure stay small whatever the rows: a
    #: notebook shows both in full (heterogeneity, regions, the explained-variance ledger)
    small: bool = False

    def plot(self, **options):
        """An undrawn plotnine figure of this result (the options depend on the figure; see ``docs/plotting.md``)."""
        return figure_backend().draw(self, **options)

    def save(self, path, *, width=None, height=None, dpi=200, **plot_options) -> Path:
        """Draw :meth:`plot` (with ``plot_options``) and write it to PNG, SVG or PDF (by the extension).

        Returns the path written; see :func:`pdpx.outputs.plot.save` for the file and size.
        """
        return figure_backend().save(self, path, width=width, height=height, dpi=dpi, **plot_options)

    def _repr_html_(self) -> str | None:
        """Jupyter's display: the figure backend's page (a header, the table's first rows, the figure),
        or None (Jupyter shows the repr then) where the backend has none or it fails."""
        try:
            page = getattr(figure_backend(), "html", None)
            return None if page is None else page(self)
        except Exception:  # noqa: BLE001 - a display never raises
            return None
