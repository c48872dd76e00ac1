"""The demo (``make demo`` runs ``python -m pdpx.demo``) and the figure gallery of the docs.

* :mod:`pdpx.demo.__main__`: fits models on bundled data, prints PD tables next to
  scikit-learn's, writes figures and reports to ``demo-output/``;
* :mod:`.gallery`: every plot type on bundled data (``make gallery`` writes
  ``docs/gallery``), and the demo's figures;
* :mod:`.files`: ``pdpx demo files``, every file the command line's examples use.

It uses pdpx as a user does: the top of the import graph.
"""
