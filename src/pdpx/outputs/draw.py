"""The figure backend: which plotnine function draws which result (``res.plot()``, ``res.save()``).

Results do not import their figures (they sit on lower floors): :class:`pdpx.core.drawing.Drawable`
asks the ``pdpx_figure_backend`` hook for a backend, and this module, a built-in plugin
(``BUILTINS`` of :mod:`pdpx.outputs`), answers with :class:`PlotnineBackend`. A result's
``figure`` attribute names its figure:

========================  ==========================================  ==========================
``figure``                result                                      drawn by
========================  ==========================================  ==========================
``partial_dependence``    ``PartialDependenceResult``                 :func:`.plot.plot_result`
``collection``            ``PartialDependenceCollection``             :func:`.plot.plot_collection`
``stacked``               ``StackedResult`` (``by=``, dict of models)  :func:`.plot_overlay.overlay_plot`
``ale``                   ``ALEResult``                               :func:`.plot_ale.plot_ale`
``derivative``            ``DerivativeResult``                        :func:`.plot_ale.plot_derivative`
``comparison``            ``MethodComparison``                        :func:`.plot_ale.plot_comparison`
``h_statistic``           ``HStatistic``                              :func:`.plot_explain.plot_h_statistic`
``importance``            ``ImportanceResult``                        :func:`.plot_explain.plot_importance`
``heterogeneity``         ``HeterogeneityResult``                     :mod:`.plot_heterogeneity`
``regions``               ``RegionsResult``                           :mod:`.plot_heterogeneity`
``explained_variance``    ``ExplainedVariance``                       :mod:`.plot_heterogeneity`
``survival``              ``SurvivalProfile``                         :func:`.plot_survival.plot_survival`
========================  ==========================================  ==========================

The drawing modules (and plotnine) are imported when a figure is drawn, never when the
plugin is registered.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from ..core.errors import PdpxError
from ..core.hookspecs import hookimpl

#: figure name -> (module of pdpx.outputs, function)
FIGURES = {
    "partial_dependence": (".plot", "plot"),
    "collection": (".plot", "plot"),
    "stacked": (".plot_overlay", "overlay_plot"),
    "ale": (".plot_ale", "plot_ale"),
    "derivative": (".plot_ale", "plot_derivative"),
    "comparison": (".plot_ale", "plot_comparison"),
    "h_statistic": (".plot_explain", "plot_h_statistic"),
    "importance": (".plot_explain", "plot_importance"),
    "heterogeneity": (".plot_heterogeneity", "plot_heterogeneity"),
    "regions": (".plot_heterogeneity", "plot_regions"),
    "explained_variance": (".plot_heterogeneity", "plot_explained"),
    "survival": (".plot_survival", "plot_survival"),
}
#: Figures saved through :func:`pdpx.outputs.plot.save_result`, which checks every option before drawing.
CHECKED_FIRST = ("partial_dependence", "collection")


def drawer(result):
    """The function that draws ``result`` (by its ``figure`` attribute)."""
    name = getattr(result, "figure", "")
    if name not in FIGURES:
        raise PdpxError(f"pdpx has no figure for a {type(result).__name__} (figure {name!r}); "
                        f"it draws {sorted(FIGURES)}")
    module, function = FIGURES[name]
    return getattr(import_module(module, __package__), function)


class PlotnineBackend:
    """pdpx's figure backend: plotnine figures (:mod:`pdpx.outputs`)."""

    def draw(self, result, **options):
        """An undrawn plotnine figure of ``result`` (a date feature on a date axis: :mod:`.plot_dates`)."""
        from .plot_dates import draw_dated

        return draw_dated(drawer(result), result, **options)

    def save(self, result, path, *, width=None, height=None, dpi=200, **plot_options) -> Path:
        """Draw ``result`` and write the figure to PNG, SVG or PDF (by the extension of ``path``)."""
        from . import plot

        if getattr(result, "figure", "") in CHECKED_FIRST:
            return plot.save_result(result, path, width=width, height=height, dpi=dpi, **plot_options)
        return plot.save(self.draw(result, **plot_options), path, width=width, height=height, dpi=dpi)

    def html(self, result) -> str:
        """``result``'s page in a notebook (its ``_repr_html_``): see :mod:`.notebook`."""
        from .notebook import html

        return html(result)


@hookimpl
def pdpx_figure_backend():
    """The plotnine figure backend."""
    return PlotnineBackend()
