"""What pdpx makes from results for people: plotnine figures and the HTML report.

* :mod:`.plot`: the public plotting functions (``res.plot()`` calls them), built on
  :mod:`.plot_style` (colours, theme, options), :mod:`.plot_oneway` (1-way
  figures) and :mod:`.plot_twoway` (2-way figures and compositions);
* :mod:`.report`: ``pdpx.report()``, with its page in :mod:`.report_page`.

Outputs use the public core (results, ``partial_dependence``) and register no
hook. plotnine is imported inside the functions only.
"""
