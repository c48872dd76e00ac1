"""The figures floor: what pdpx makes from results for people (plotnine figures, the report's page).

* :mod:`.plot`: the public plotting functions, built on :mod:`.plot_style` (colours,
  theme, options, the frame a figure draws), :mod:`.plot_axis` (numeric axes' ticks and
  labels), :mod:`.plot_oneway` (1-way figures), :mod:`.plot_twoway` (2-way figures and
  compositions), :mod:`.plot_bands` and :mod:`.plot_overlay` (views),
  :mod:`.plot_ale`, :mod:`.plot_explain`, :mod:`.plot_heterogeneity` and :mod:`.plot_survival` (the figures of
  :mod:`pdpx.explain`),
  :mod:`.plot_steps` (step curves of ``grid="thresholds"``), :mod:`.plot_dates` (date
  axes) and :mod:`.plot_lines` (many curves of one style, ICE curves, drawn in one layer);
* :mod:`.draw`: the figure backend plugin behind every ``res.plot()`` / ``res.save()``
  (the ``pdpx_figure_backend`` hook: which function draws which result);
* :mod:`.report_page`: the HTML page of ``pdpx.report()``, from results computed by
  :mod:`pdpx.reporting`; :mod:`.report_heterogeneity`: its section "Where the average misleads";
  :mod:`.report_survival`: its section "Over time" (survival models);
* :mod:`.notebook`: how results show in Jupyter (their ``_repr_html_``, through the backend).
* :mod:`.report_uncertainty`: the report's section "How sure is this curve?" (a bagged forest's jackknife bands).

Outputs draw what they are given: they import the core and :mod:`pdpx.explain`, compute
nothing, and never import the top floor. plotnine is imported inside the functions only.
"""

#: The plugin modules of this package, registered by default by
#: :func:`pdpx.core.plugins.get_plugin_manager`.
BUILTINS = ("pdpx.outputs.draw",)
